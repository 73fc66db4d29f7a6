"""``factscout claims`` on a 5,000-word debate transcript, cold: each run a fresh process, process
start and model loading included (issue 49's target: at most 10 s on 2 cores).

The transcript is real: the CheckThat! 2021 task 1B English test debates (Shaar et al. 2021), their
lines in file order until 5,000 words, written as a ``line<TAB>speaker<TAB>text`` TSV. Timed in
the same run, interleaved, ``--repeat`` times each: ``factscout --help`` (process start and the CLI's
imports), the segmentation alone (``read_document`` in a fresh interpreter), the whole command, and
the ``--sentences`` form over the same sentences. One untimed run first makes sure the int8 encoder
export is in the cache (a first run ever builds it once).

    python benchmarks/claims_speed.py [--words 5000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

from _common import machine, markdown_table, publish, timed

FACTSCOUT = [sys.executable, "-c", "from factscout.cli.main import app; app()"]
SEGMENT = (
    "import sys; from factscout.claims.document import read_document; print(len(read_document(sys.argv[1]).sentences))"
)
TARGET_S = 10.0


def transcript(folder: Path, words: int) -> tuple[Path, int, int]:
    """A TSV of the first ``words`` words of the CheckThat! 2021 1B test debates; its path, words, lines."""
    from factscout.datasets.base import data_root

    source = data_root() / "checkworthy" / "ct21_1b_en_debates" / "test"
    rows, count = [], 0
    for path in sorted(source.glob("*.tsv")):
        for line in path.read_text(encoding="utf-8").splitlines():
            fields = line.split("\t")
            if len(fields) < 3 or not fields[2].strip():
                continue
            rows.append(f"{len(rows) + 1}\t{fields[1]}\t{fields[2]}")
            count += len(fields[2].split())
            if count >= words:
                out = folder / "transcript.tsv"
                out.write_text("\n".join(rows) + "\n", encoding="utf-8")
                return out, count, len(rows)
    raise SystemExit(f"the test debates in {source} hold only {count} words, fewer than {words}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=5_000, help="words of transcript (default 5,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each command (default 3)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        tsv, words, lines = transcript(folder, args.words)
        ranked, scored = folder / "claims.jsonl", folder / "scores.jsonl"
        first = timed([*FACTSCOUT, "-q", "claims", str(tsv), "--output", str(ranked)])  # the int8 export, once ever
        rows = [json.loads(line) for line in ranked.read_text(encoding="utf-8").splitlines()]
        split = folder / "sentences.jsonl"
        split.write_text("".join(json.dumps({"id": r["id"], "text": r["text"]}) + "\n" for r in rows), encoding="utf-8")
        commands = {
            "factscout --help (process start)": [*FACTSCOUT, "--help"],
            "segmentation alone (read_document, fresh process)": [sys.executable, "-c", SEGMENT, str(tsv)],
            "factscout claims TRANSCRIPT.tsv -o OUT.jsonl": [*FACTSCOUT, "-q", "claims", str(tsv), "-o", str(ranked)],
            "factscout claims --sentences IN.jsonl -o OUT.jsonl": [
                *FACTSCOUT, "-q", "claims", "--sentences", str(split), "--output", str(scored)
            ],
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # interleaved: the machine's load falls on every command alike
            for name, command in commands.items():
                times[name].append(timed(command))
    table = [
        [name, f"{statistics.median(t):.2f}", f"{min(t):.2f}", f"{max(t):.2f}", len(t)] for name, t in times.items()
    ]
    full = times["factscout claims TRANSCRIPT.tsv -o OUT.jsonl"]
    worthy = sum(r["checkworthy"] for r in rows)
    text = (
        f"### `factscout claims` on a {words:,}-word transcript, cold\n\n"
        f"{lines:,} transcript lines of the CheckThat! 2021 1B test debates, {len(rows):,} sentences "
        f"({worthy} check-worthy at the shipped threshold); each run a fresh process; {machine()}. "
        f"Target: at most {TARGET_S:g} s wall. The first run of this benchmark took {first:.2f} s.\n\n"
        + markdown_table(["command", "median s", "min s", "max s", "runs"], table)
    )
    headline = {
        "words": words,
        "sentences": len(rows),
        "claims_cold_median_s": round(statistics.median(full), 2),
        "claims_cold_max_s": round(max(full), 2),
        "sentences_form_median_s": round(
            statistics.median(times["factscout claims --sentences IN.jsonl -o OUT.jsonl"]), 2
        ),
        "segmentation_median_s": round(
            statistics.median(times["segmentation alone (read_document, fresh process)"]), 2
        ),
        "help_median_s": round(statistics.median(times["factscout --help (process start)"]), 2),
        "target_s": TARGET_S,
        "met": max(full) <= TARGET_S,
    }
    publish("claims_speed", text, headline)


if __name__ == "__main__":
    main()
