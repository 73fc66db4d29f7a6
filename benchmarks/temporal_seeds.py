"""Seed spread of the time-aware evidence ranking benchmark: mean and spread of each method's
domain-averaged micro-F1 over training seeds, from the tables ``benchmarks/temporal.py`` wrote.

One seed of ``temporal.py`` moves the domain averages by several points (25 domains, many with
under 50 dev claims), so a single run cannot tell a +5% gain from noise. Run the seeds first:

    python benchmarks/temporal.py                                       # seed 0 -> temporal.md
    python benchmarks/temporal.py --encoders bilstm --seed 1 --name temporal_seed1
    python benchmarks/temporal.py --encoders bilstm --seed 2 --name temporal_seed2
    python benchmarks/temporal.py --encoders bilstm --seed 3 --name temporal_seed3
    python benchmarks/temporal_seeds.py [--encoder bilstm] [--files F ...]

``--same-seed`` instead checks that one seed gives one model: it runs ``temporal.py`` twice with
the same seed and arguments (``--args``, e.g. ``--args "--encoders bilstm --methods base
'claim-centered distance'"`` for the cheapest real configuration) and compares every claim's
predicted label and the headline figures of the two runs (timings aside):

    python benchmarks/temporal_seeds.py --same-seed --seed 13 --args "--encoders bilstm"
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import RESULTS, markdown_table, publish

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


def _differences(first: object, second: object, where: str = "") -> list[str]:
    """Paths (``encoder/method/split/claim``) where two predictions files disagree."""
    if isinstance(first, dict) and isinstance(second, dict):
        out = []
        for key in sorted(set(first) | set(second)):
            out += _differences(first.get(key), second.get(key), f"{where}/{key}")
        return out
    return [] if first == second else [where]


def same_seed(seed: int, extra: list[str], runs: int = 2) -> None:
    """Run ``temporal.py`` ``runs`` times with one seed; compare predictions and headlines."""
    predictions, headlines = [], []
    with tempfile.TemporaryDirectory() as tmp:
        for run in range(1, runs + 1):
            name = f"temporal_same_seed_run{run}"
            path = Path(tmp) / f"{name}.json"
            command = [sys.executable, str(BENCHMARK), *extra, "--seed", str(seed), "--name", name]
            done = subprocess.run([*command, "--predictions", str(path)], check=True, stdout=subprocess.PIPE, text=True)
            (RESULTS / f"{name}.md").unlink(missing_ok=True)  # the summary below is the result
            headlines.append(json.loads(done.stdout.strip().splitlines()[-1]))
            predictions.append(json.loads(path.read_text()))
    first = predictions[0]["predictions"]
    differing = sorted({d for other in predictions[1:] for d in _differences(first, other["predictions"])})
    n_predictions = sum(
        len(by_claim)
        for by_method in first.values()
        for by_split in by_method.values()
        for by_claim in by_split.values()
    )
    keys = [k for k in headlines[0] if k.endswith("micro_f1")]
    rows = [
        [k, *(str(h.get(k)) for h in headlines), "yes" if len({json.dumps(h.get(k)) for h in headlines}) == 1 else "NO"]
        for k in keys
    ]
    seconds = [h.get(f"{h.get('primary_encoder')}_train_seconds") for h in headlines]
    identical = not differing and all(r[-1] == "yes" for r in rows)
    text = "\n".join(
        [
            f"### Same seed, same model: `temporal.py` run {runs} times with seed {seed}",
            "",
            markdown_table(["headline figure", *(f"run {i}" for i in range(1, runs + 1)), "equal"], rows),
            "",
            f"Per-claim predictions (every encoder, method and split): {n_predictions} per run, "
            f"{len(differing)} differing between the runs"
            + (f" (first: {', '.join(differing[:5])})" if differing else "")
            + f". Training seconds per run: {', '.join(str(s) for s in seconds)}.",
            "",
            "Reproduce: `"
            + shlex.join(["python", "benchmarks/temporal_seeds.py", "--same-seed", "--seed", str(seed)])
            + (f" --args {shlex.quote(shlex.join(extra))}" if extra else "")
            + "`",
        ]
    )
    publish(
        "temporal_same_seed",
        text,
        {
            "benchmark": "temporal_same_seed",
            "seed": seed,
            "runs": runs,
            "identical": identical,
            "predictions": n_predictions,
            "differing_predictions": len(differing),
            "base_micro_f1": [h.get("base_micro_f1") for h in headlines],
        },
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--encoder", default="bilstm")
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2, 3], help="seeds besides temporal.md's seed 0")
    parser.add_argument("--run", action="store_true", help="train the seeds with temporal.py before aggregating")
    parser.add_argument(
        "--same-seed", action="store_true", help="run temporal.py twice with --seed and compare (nothing else)"
    )
    parser.add_argument("--seed", type=int, default=13, help="--same-seed: the seed both runs use")
    parser.add_argument("--args", default="", help="--same-seed: further temporal.py arguments, one shell string")
    args = parser.parse_args()
    if args.same_seed:
        same_seed(args.seed, shlex.split(args.args))
        return
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
