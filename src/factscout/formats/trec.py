"""TREC run files (``qid Q0 docid rank score tag``) and TREC qrels (``qid 0 docid rel``)."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from factscout.errors import InputError
from factscout.formats.beir import Qrels, relevance
from factscout.formats.beir import read_qrels as read_beir_qrels
from factscout.formats.jsonl import read_lines, write_atomic
from factscout.records import Hit, Ranking


def run_lines(rankings: Iterable[Ranking], tag: str = "factscout") -> Iterator[str]:
    """The lines of a TREC run for ``rankings`` (``qid Q0 docid rank score tag``, newline-ended):
    the one place the format is written."""
    return (f"{r.query_id} Q0 {h.passage_id} {h.rank} {h.score:.6f} {tag}\n" for r in rankings for h in r.hits)


def write_run(path: str | os.PathLike[str], rankings: Iterable[Ranking], tag: str = "factscout") -> None:
    write_atomic(path, run_lines(rankings, tag))


def read_run(path: str | os.PathLike[str]) -> list[Ranking]:
    """Read a TREC run; rankings come back in file order of their first appearance."""
    hits: dict[str, list[Hit]] = {}
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 6:
            raise InputError(f"{path}:{lineno}: expected 6 fields 'qid Q0 docid rank score tag', got {len(parts)}")
        try:
            hit = Hit(parts[2], float(parts[4]), int(parts[3]))
        except ValueError:
            raise InputError(f"{path}:{lineno}: rank/score not numeric in {line.strip()!r}") from None
        hits.setdefault(parts[0], []).append(hit)
    return [Ranking(qid, tuple(h)) for qid, h in hits.items()]


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read qrels in TREC (4 columns) or BEIR (3 columns, tab-separated) form."""
    lines = read_lines(path)
    first = next((line for _, line in lines if line.strip()), "")
    lines.close()
    if len(first.split()) != 4:
        return read_beir_qrels(path)
    qrels: Qrels = {}
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            raise InputError(f"{path}:{lineno}: expected 4 fields 'qid iter docid rel', got {len(parts)}")
        qrels.setdefault(parts[0], {})[parts[2]] = relevance(parts[3], path, lineno)
    return qrels


def write_qrels(path: str | os.PathLike[str], qrels: Qrels) -> None:
    write_atomic(path, (f"{q} 0 {d} {r}\n" for q in sorted(qrels) for d, r in sorted(qrels[q].items())))
