"""Shared plumbing for the benchmark scripts: tables, result files, the final JSON line."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def quiet() -> None:
    """Benchmarks own the terminal like the CLI does: the same third-party silencing."""
    from factscout.cli.common import quiet_libraries

    quiet_libraries()


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(v: object) -> str:
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def publish(name: str, text: str, headline: dict) -> None:
    """Print the tables, write them to benchmarks/results/<name>.md, end with one JSON line."""
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text + "\n")
    sys.stdout.write(json.dumps(headline) + "\n")


def add_data_flags(parser) -> None:  # type: ignore[no-untyped-def]
    """``--claims/--corpus/--qrels``: another split in BEIR form (read by :func:`claims_corpus_qrels`)."""
    parser.add_argument("--claims", help="claims JSONL (BEIR queries; default: SciFact train)")
    parser.add_argument("--corpus", help="BEIR corpus JSONL (default: the SciFact corpus)")
    parser.add_argument("--qrels", help="qrels TSV of those claims (default: SciFact train qrels)")


def claims_corpus_qrels(parser, args) -> tuple[list, list, dict, str]:  # type: ignore[no-untyped-def]
    """``--claims/--corpus/--qrels`` when given (all three), else SciFact train; only the claims
    with a relevant passage. Returns (claims, corpus, qrels, source name)."""
    from factscout.datasets import load_dataset
    from factscout.formats.beir import read_claims, read_corpus, read_qrels

    if args.claims or args.corpus or args.qrels:
        if not (args.claims and args.corpus and args.qrels):
            parser.error("--claims, --corpus and --qrels go together")
        claims, corpus = list(read_claims(args.claims)), list(read_corpus(args.corpus))
        qrels, source = read_qrels(args.qrels), Path(args.claims).name
    else:
        ds = load_dataset("scifact", "train")
        claims, corpus, qrels, source = list(ds.claims), list(ds.corpus), ds.qrels, "SciFact train"
    claims = [c for c in claims if any(r > 0 for r in qrels.get(c.claim_id, {}).values())]
    return claims, corpus, qrels, source
