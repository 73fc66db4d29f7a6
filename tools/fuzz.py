"""Fuzzing factscout's parsers with Hypothesis at scale: no exception but a FactscoutError.

Usage::

    python tools/fuzz.py --examples 100000            # every target, 10^5 inputs each
    python tools/fuzz.py --examples 2000 --only dates --only readers

The targets and their input strategies are those of the test suite (``tests/fuzz/targets.py``,
which runs a few hundred inputs per target on every test run): date parsing, BM25 tokenising,
sentence splitting, the rewriting edit actions, and the JSONL / BEIR / TREC readers fed raw
bytes, gzip (whole and truncated) and lines built from each format's own pieces. A failure is
any other exception (or a broken invariant); each distinct one (type and message) is listed
with the first input that caused it. Hypothesis runs in generate-only mode (no shrinking, no
example database) so that every input counts once. Prints a table, writes
``benchmarks/results/fuzz.md`` with its run record (``benchmarks/_common.py``, as every benchmark);
the last line is one JSON object with the counts and failures.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load(name: str, path: Path) -> Any:
    """The module at ``path`` (a file of the repository, outside any package) as ``name``."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None  # a file that exists in the repository
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def load_targets() -> Any:
    """``tests/fuzz/targets.py`` (the test suite's targets and strategies) as a module."""
    return load("fuzz_targets", ROOT / "tests" / "fuzz" / "targets.py")


# the benchmarks' run records: the fuzzer publishes to benchmarks/results like a benchmark
_common = load("_common", ROOT / "benchmarks" / "_common.py")


class _Enough(Exception):
    """Every parser of the target has had its inputs (or the time is up)."""


def _where(exc: BaseException) -> str:
    """``file:line`` of the innermost frame in factscout (else the innermost one) that raised."""
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "factscout" in f.filename and "fuzz" not in f.filename] or frames
    frame = ours[-1]
    return f"{Path(frame.filename).name}:{frame.lineno}"


def fuzz(targets: Any, target: Any, examples: int, seed: int, max_seconds: float | None) -> dict[str, Any]:
    """Run ``target`` until each of its parsers has had ``examples`` inputs; counts and failures."""
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hypothesis_seed

    inputs: dict[str, int] = {}
    failures: dict[str, dict[str, Any]] = {}
    started = time.perf_counter()

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        phases=[Phase.generate],
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(target.strategy)
    def run(value: Any) -> None:
        for parser, call in target.calls(value):
            if inputs.get(parser, 0) >= examples:
                continue
            inputs[parser] = inputs.get(parser, 0) + 1
            exc = targets.outcome(call)
            if exc is not None:
                key = f"{parser}: {type(exc).__name__} at {_where(exc)}"
                entry = failures.setdefault(key, {"error": key, "count": 0, "message": str(exc)[:200]})
                entry.setdefault("input", repr(value)[:300])
                entry["count"] += 1
        if inputs and min(inputs.values()) >= examples:
            raise _Enough
        if max_seconds is not None and time.perf_counter() - started > max_seconds:
            raise _Enough

    with contextlib.suppress(_Enough):
        run()
    return {
        "target": target.name,
        "inputs": inputs,
        "failures": failures,
        "seconds": round(time.perf_counter() - started, 1),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--examples", type=int, default=100_000, help="inputs per target (default 10^5)")
    parser.add_argument("--only", action="append", help="run only this target (repeatable)")
    parser.add_argument("--seed", type=int, default=19, help="Hypothesis seed")
    parser.add_argument("--max-seconds", type=float, help="stop a target after this long (its inputs are reported)")
    args = parser.parse_args(argv)
    if args.examples < 1:
        parser.error("--examples must be >= 1")
    _common.quiet()
    module = load_targets()
    targets = module.TARGETS
    known = [t.name for t in targets]
    if args.only:
        unknown = [name for name in args.only if name not in known]
        if unknown:
            parser.error(f"no target {', '.join(unknown)}; known: {', '.join(known)}")
        targets = [t for t in targets if t.name in args.only]
    results, skipped = [], []
    for target in targets:
        if target.needs and importlib.util.find_spec(target.needs) is None:
            skipped.append(f"{target.name} (needs {target.needs})")
            continue
        result = fuzz(module, target, args.examples, args.seed, args.max_seconds)
        results.append(result)
        print(f"{target.name}: {result['inputs']}, {len(result['failures'])} distinct failures, "
              f"{result['seconds']} s", file=sys.stderr, flush=True)  # fmt: skip
    rows = []
    by_parser: dict[str, dict[str, int]] = {}
    for r in results:
        for parser, n in r["inputs"].items():
            failed = sum(f["count"] for f in r["failures"].values() if f["error"].startswith(parser + ":"))
            by_parser[parser] = {"inputs": n, "failures": failed}
            rows.append([parser, n, failed, r["target"], r["seconds"]])
    lines = [
        "# Fuzzing the parsers",
        "",
        f"`python tools/fuzz.py --examples {args.examples} --seed {args.seed}"
        + (f" --max-seconds {args.max_seconds:g}" if args.max_seconds else "")
        + f"` on {_common.machine()}. Inputs generated by Hypothesis (generate phase only, no shrinking); a failure "
        "is any exception other than a `FactscoutError`, or a broken invariant. The readers all read the "
        "same generated files (each file and a few of its prefixes); seconds are per target.",
        "",
        _common.markdown_table(["parser", "inputs", "failures", "target", "seconds"], rows),
    ]
    if skipped:
        lines += ["", "Skipped: " + ", ".join(skipped)]
    distinct = [f for r in results for f in r["failures"].values()]
    if distinct:
        lines += ["", "## Failures", ""]
        lines += [f"- `{f['error']}` x{f['count']}: {f['message']}; first input `{f['input']}`" for f in distinct]
    headline = {
        "examples_per_parser": args.examples,
        "parsers": len(by_parser),
        "inputs": sum(p["inputs"] for p in by_parser.values()),
        "failures": sum(p["failures"] for p in by_parser.values()),
        "by_parser": by_parser,
        "distinct_failures": [f["error"] for f in distinct],
        "skipped": skipped,
    }
    _common.publish("fuzz", "\n".join(lines), headline)


if __name__ == "__main__":
    main()
