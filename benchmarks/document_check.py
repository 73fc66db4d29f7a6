"""``factscout check --document`` on a 1,000-word article, cold: each run a fresh process, process start,
model loading, sentence splitting, check-worthiness scoring and the checks of the top claims included
(issue 49's target: at most 60 s with the default models).

The article is real text: SciFact train claims (Wadden et al. 2020) in file order, each the first
sentence of a paragraph followed by the rationale sentences of the abstract it cites (the
sentences annotators marked as its evidence) and that abstract's first sentence, until 1,000
words; claims without rationale sentences are skipped. It is checked with the default models and
settings (``--top 5``) against the SciFact hybrid index at ``.factscout/scifact-index`` (``--index``).

The reference, in the same run, interleaved: ``factscout check --claims`` on the very claims the
document check checked (the sentences with the context they carried, one BEIR query a claim), each
run a fresh process too: the difference is what the document costs on top of checking as many
claims (reading and splitting it, loading the check-worthiness model, scoring every sentence). And
``factscout claims ARTICLE``, the scoring alone. One untimed run first warms the caches (int8 exports).

    python benchmarks/document_check.py [--index DIR] [--words 1000] [--repeat 3]
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
TARGET_S = 60.0


def article(folder: Path, words: int) -> tuple[Path, int, int]:
    """The article (paragraphs of SciFact claims and their rationale sentences) of ``words`` words or
    a little more: its path, words, paragraphs."""
    from factscout.datasets.base import data_root

    source = data_root() / "scifact"
    abstracts = {}
    with (source / "corpus.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            abstracts[str(row["doc_id"])] = row["abstract"]
    paragraphs, count = [], 0
    with (source / "claims_train.jsonl").open(encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            cited = [(doc, sets) for doc, sets in row["evidence"].items() if doc in abstracts]
            if not cited:
                continue
            doc, sets = cited[0]
            abstract = abstracts[doc]
            chosen = sorted({0, *(i for s in sets for i in s["sentences"] if i < len(abstract))})
            claim = row["claim"].strip()
            text = " ".join([claim if claim.endswith(".") else claim + ".", *(abstract[i].strip() for i in chosen)])
            paragraphs.append(text)
            count += len(text.split())
            if count >= words:
                out = folder / "article.txt"
                out.write_text("\n\n".join(paragraphs) + "\n", encoding="utf-8")
                return out, count, len(paragraphs)
    raise SystemExit(f"the SciFact train claims give only {count} words, fewer than {words}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--index", default=".factscout/scifact-index", help="the index (default: the SciFact hybrid one)"
    )
    parser.add_argument("--words", type=int, default=1_000, help="words of article (default 1,000)")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs of each command (default 3)")
    args = parser.parse_args()
    index = str(args.index)
    with tempfile.TemporaryDirectory() as work:
        folder = Path(work)
        text, words, paragraphs = article(folder, args.words)
        report_path, claims_path = folder / "report.json", folder / "claims.jsonl"
        document = [*FACTSCOUT, "-q", "check", "--document", str(text), "--index", index, "--output", str(report_path)]
        first = timed(document)  # the caches (int8 exports) warmed once; timed for the record
        report = json.loads(report_path.read_text(encoding="utf-8"))
        checked = report["claims"]
        claims_path.write_text(
            "".join(json.dumps({"_id": c["sentence_id"], "text": c["claim"]}) + "\n" for c in checked),
            encoding="utf-8",
        )
        commands = {
            "factscout check --document ARTICLE.txt -o REPORT.json": document,
            f"factscout check --claims CLAIMS.jsonl -o OUT.jsonl ({len(checked)} claims, the same texts)": [
                *FACTSCOUT, "-q", "check", "--claims", str(claims_path), "--index", index,
                "--output", str(folder / "out.jsonl"),
            ],
            "factscout claims ARTICLE.txt -o OUT.jsonl (scoring alone)": [
                *FACTSCOUT, "-q", "claims", str(text), "--output", str(folder / "ranked.jsonl")
            ],
        }  # fmt: skip
        times: dict[str, list[float]] = {name: [] for name in commands}
        for _ in range(args.repeat):  # interleaved: the machine's load falls on every command alike
            for name, command in commands.items():
                times[name].append(timed(command))
        final = json.loads(report_path.read_text(encoding="utf-8"))
    names = list(commands)
    table = [
        [name, f"{statistics.median(t):.2f}", f"{min(t):.2f}", f"{max(t):.2f}", len(t)] for name, t in times.items()
    ]
    full, reference = times[names[0]], times[names[1]]
    verdicts: dict[str, int] = {}
    for c in final["claims"]:
        label = c["report"]["verdict"]["label"]
        verdicts[label] = verdicts.get(label, 0) + 1
    listed = [
        [c["sentence_id"], f"{c['score']:.2f}", c["report"]["verdict"]["label"], c["sentence"][:110]]
        for c in final["claims"]
    ]
    text_md = (
        f"### `factscout check --document` on a {words:,}-word article, cold\n\n"
        f"{paragraphs} paragraphs of SciFact train claims, each followed by the rationale sentences of the abstract "
        f"it cites and that abstract's first sentence; {len(final['sentences'])} sentences "
        f"({final['checkworthy']} check-worthy at the shipped threshold {final['threshold']:g}), the top "
        f"{len(final['claims'])} checked against `{index}` with the default models and settings; each run a fresh "
        f"process; {machine()}. Target: at most {TARGET_S:g} s wall. The first run of this benchmark took "
        f"{first:.2f} s.\n\n"
        + markdown_table(["command", "median s", "min s", "max s", "runs"], table)
        + "\n\nThe sentences checked (most check-worthy first):\n\n"
        + markdown_table(["sentence", "check-worthiness", "verdict", "text"], listed)
    )
    headline = {
        "words": words,
        "sentences": len(final["sentences"]),
        "checked": len(final["claims"]),
        "document_cold_median_s": round(statistics.median(full), 2),
        "document_cold_max_s": round(max(full), 2),
        "same_claims_cold_median_s": round(statistics.median(reference), 2),
        "overhead_median_s": round(statistics.median(full) - statistics.median(reference), 2),
        "scoring_alone_median_s": round(statistics.median(times[names[2]]), 2),
        "verdicts": verdicts,
        "target_s": TARGET_S,
        "met": max(full) <= TARGET_S,
    }
    publish("document_check", text_md, headline)


if __name__ == "__main__":
    main()
