"""Same seed, same model: run ``benchmarks/temporal.py`` twice with one seed and compare every
claim's predicted label and the headline figures of the two runs (timings aside).

The seed spread itself is part of ``temporal.py`` now (``--seeds``, mean, sd and a paired test per
method), so this script only checks reproducibility, e.g. for the cheapest real configuration:

    python benchmarks/temporal_seeds.py --seed 13 --args "--methods base --no-leakage"
"""

from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from _common import RESULTS, markdown_table, publish

BENCHMARK = Path(__file__).resolve().parent / "temporal.py"


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
            command = [sys.executable, str(BENCHMARK), *extra, "--seeds", str(seed), "--name", name]
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
    keys = [k for k in headlines[0] if k.endswith("micro_f1") and isinstance(headlines[0][k], float)]
    rows = [
        [k, *(str(h.get(k)) for h in headlines), "yes" if len({json.dumps(h.get(k)) for h in headlines}) == 1 else "NO"]
        for k in keys
    ]
    seconds = [h.get("train_seconds") for h in headlines]
    identical = not differing and all(r[-1] == "yes" for r in rows)
    text = "\n".join(
        [
            f"### Same seed, same model: `temporal.py` run {runs} times with seed {seed}",
            "",
            markdown_table(["headline figure", *(f"run {i}" for i in range(1, runs + 1)), "equal"], rows),
            "",
            f"Per-claim predictions (every method and split): {n_predictions} per run, "
            f"{len(differing)} differing between the runs"
            + (f" (first: {', '.join(differing[:5])})" if differing else "")
            + f". Training seconds per run: {', '.join(str(s) for s in seconds)}.",
            "",
            "Reproduce: `"
            + shlex.join(["python", "benchmarks/temporal_seeds.py", "--seed", str(seed)])
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
    parser.add_argument("--seed", type=int, default=13, help="the seed both runs use")
    parser.add_argument("--args", default="", help="further temporal.py arguments, one shell string")
    parser.add_argument("--same-seed", action="store_true", help="accepted for compatibility (the only mode)")
    args = parser.parse_args()
    same_seed(args.seed, shlex.split(args.args))


if __name__ == "__main__":
    main()
