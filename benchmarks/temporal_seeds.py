"""Seed spread of the time-aware evidence ranking benchmark: mean and spread of each method's
domain-averaged micro-F1 over training seeds, from the tables ``benchmarks/temporal.py`` wrote.

One seed of ``temporal.py`` moves the domain averages by several points (25 domains, many with
under 50 dev claims), so a single run cannot tell a +5% gain from noise. Run the seeds first:

    python benchmarks/temporal.py                                       # seed 0 -> temporal.md
    python benchmarks/temporal.py --encoders bilstm --seed 1 --name temporal_seed1
    python benchmarks/temporal.py --encoders bilstm --seed 2 --name temporal_seed2
    python benchmarks/temporal.py --encoders bilstm --seed 3 --name temporal_seed3
    python benchmarks/temporal_seeds.py [--encoder bilstm] [--files F ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
from pathlib import Path

from _common import markdown_table, publish

RESULTS = Path(__file__).resolve().parent / "results"
BENCHMARK = Path(__file__).resolve().parent / "temporal.py"
TIME_AWARE = "time-aware (best temporal ranking per domain, chosen on dev)"


def micro_f1_rows(path: Path, encoder: str) -> dict[str, float]:
    """{method: domain-averaged micro-F1} from the first table of a temporal.py results file."""
    rows: dict[str, float] = {}
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] == encoder and cells[1] not in rows:
            rows[cells[1]] = float(cells[2])
    if "base" not in rows:
        raise SystemExit(f"{path} has no {encoder} base row: is it a temporal.py results file?")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default="bilstm")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3], help="seeds besides temporal.md's seed 0")
    parser.add_argument("--run", action="store_true", help="train the seeds with temporal.py before aggregating")
    args = parser.parse_args()
    if args.run:
        for seed in args.seeds:
            command = [sys.executable, str(BENCHMARK), "--encoders", "bilstm", "--seed", str(seed)]
            subprocess.run([*command, "--name", f"temporal_seed{seed}"], check=True)
    args.files = ["temporal.md", *(f"temporal_seed{seed}.md" for seed in args.seeds)]
    runs = [micro_f1_rows(RESULTS / name, args.encoder) for name in args.files]
    methods = [m for m in runs[0] if all(m in r for r in runs)]
    rows = []
    for method in methods:
        values = [r[method] for r in runs]
        gains = [r[method] / r["base"] - 1 for r in runs]
        rows.append(
            [
                method,
                statistics.mean(values),
                statistics.stdev(values) if len(values) > 1 else 0.0,
                f"{statistics.mean(gains):+.1%}",
                f"{min(gains):+.1%} .. {max(gains):+.1%}",
            ]
        )
    by_method = {row[0]: row for row in rows}
    text = "\n".join(
        [
            f"### Time-aware ranking over {len(runs)} training seeds ({args.encoder}, MultiFC dev, domain-averaged micro-F1)",
            "",
            markdown_table(["method", "mean micro-F1", "sd", "mean gain vs base", "gain range over seeds"], rows),
            "",
            "The time-aware row picks the best of the four temporal rankings per domain on the dev claims it is "
            "scored on (the paper's protocol); `random` weights the evidence at random (no ranking module).",
            "",
            f"Files: {', '.join(args.files)}. Reproduce: `python benchmarks/temporal.py` (seed 0), then "
            f"`python benchmarks/temporal_seeds.py --run --seeds {' '.join(map(str, args.seeds))}`.",
        ]
    )
    headline = {
        "benchmark": "temporal_seeds",
        "seeds": len(runs),
        "base_micro_f1": round(float(by_method["base"][1]), 4),
        "time_aware_micro_f1": round(float(by_method[TIME_AWARE][1]), 4) if TIME_AWARE in by_method else None,
        "random_micro_f1": round(float(by_method["random"][1]), 4) if "random" in by_method else None,
    }
    publish("temporal_seeds", text, headline)


if __name__ == "__main__":
    main()
