"""BEIR JSONL corpus and queries, BEIR qrels TSV.

Corpus rows: ``{"_id", "title", "text", "published"?, "url"?}``; ``doc_id`` defaults to ``_id``.
Query rows: ``{"_id", "text", "date"?, "claim_id"?, "origin"?}``; the optional fields let one
file carry several planned queries per claim.
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from factscout.dates import parse_date
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl, read_lines, write_atomic, write_jsonl
from factscout.records import Claim, Passage, Query

Qrels = dict[str, dict[str, int]]


def _field(path: object, lineno: int, row: dict, name: str) -> str:
    value = row.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        raise InputError(f"{path}:{lineno}: missing required field {name!r}")
    return str(value)


def read_corpus(path: str | os.PathLike[str]) -> Iterator[Passage]:
    """Read a BEIR corpus; each row becomes one :class:`Passage`."""
    for lineno, row in read_jsonl(path):
        pid = _field(path, lineno, row, "_id")
        text = row.get("text")
        if not isinstance(text, str):
            raise InputError(f"{path}:{lineno}: missing required field 'text'")
        published = parse_date(row.get("published"), field=f"{path}:{lineno}: published")
        yield Passage(
            passage_id=pid,
            doc_id=str(row.get("doc_id") or pid),
            title=str(row.get("title") or ""),
            text=text,
            published=published,
            url=row.get("url") or None,
        )


def write_corpus(path: str | os.PathLike[str], passages: Iterable[Passage]) -> None:
    def rows() -> Iterator[dict]:
        for p in passages:
            row: dict = {"_id": p.passage_id, "title": p.title, "text": p.text}
            if p.doc_id != p.passage_id:
                row["doc_id"] = p.doc_id
            if p.published:
                row["published"] = p.published.isoformat()
            if p.url:
                row["url"] = p.url
            yield row

    write_jsonl(path, rows())


def read_queries(path: str | os.PathLike[str], *, strict: bool = False) -> Iterator[Query]:
    """Read BEIR queries (one per claim) or planned queries (several rows per ``claim_id``);
    ``strict``: a user's file, read by the rules of :func:`user_text` and :func:`user_date`."""
    seen: set[str] = set()
    text_of, date_of = (user_text, user_date) if strict else (_field, _any_date)
    for lineno, row in read_jsonl(path):
        qid = _field(path, lineno, row, "_id")
        if qid in seen:
            raise InputError(f"{path}:{lineno}: duplicate query id {qid!r}")
        seen.add(qid)
        yield Query(
            query_id=qid,
            claim_id=str(row.get("claim_id") or qid),
            text=text_of(path, lineno, row, "text"),
            origin=str(row.get("origin") or "claim"),
            date=date_of(path, lineno, row.get("date")),
        )


def user_text(path: object, lineno: int, row: dict, name: str) -> str:
    """A claim or query text of a user's file, by the API's rules (:func:`factscout.inputs.clean_claim`:
    1 to 2,000 visible characters, no control characters), or an InputError naming file and line."""
    from factscout.inputs import clean_claim

    if row.get(name) is None:
        raise InputError(f"{path}:{lineno}: missing required field {name!r}")
    try:
        return clean_claim(row[name])
    except ValueError as exc:
        raise InputError(f"{path}:{lineno}: {name!r} {exc}") from None


def user_date(path: object, lineno: int, value: object) -> dt.date | None:
    """A date of a user's file: strict ISO 8601 (:func:`factscout.inputs.parse_iso_date_or_time`)."""
    from factscout.inputs import parse_iso_date_or_time

    try:
        return parse_iso_date_or_time(value)
    except ValueError as exc:
        raise InputError(f"{path}:{lineno}: date {exc}") from None


def _any_date(path: object, lineno: int, value: object) -> dt.date | None:
    return parse_date(value, field=f"{path}:{lineno}: date")


def read_claims(
    path: str | os.PathLike[str], *, skipped: list[str] | None = None, strict: bool = False
) -> Iterator[Claim]:
    """Read claims in BEIR query form: ``{"_id", "text", "date"?, "metadata"?: {...}, ...}``.

    Everything besides ``_id``, ``text`` and ``date`` is kept in ``Claim.meta`` (the contents of
    ``metadata`` merged in), so gold sub-questions, labels and justifications travel along.
    A bad row raises InputError naming its line, unless a ``skipped`` list is given: then the
    row is recorded there (``"file:line: reason"``) and reading goes on. Malformed JSON always
    stops reading, since the rest of the file cannot be trusted. ``strict``: a user's file (the
    CLI's ``check``/``plan``): texts and dates by the API's rules (:func:`user_text`, :func:`user_date`).
    """
    seen: set[str] = set()
    text_of, date_of = (user_text, user_date) if strict else (_field, _any_date)
    for lineno, row in read_jsonl(path):
        try:
            cid = _field(path, lineno, row, "_id")
            if cid in seen:
                raise InputError(f"{path}:{lineno}: duplicate claim id {cid!r}")
            meta = {k: v for k, v in row.items() if k not in {"_id", "text", "date", "metadata"}}
            if isinstance(row.get("metadata"), dict):
                meta.update(row["metadata"])
            day = row.get("date") if row.get("date") is not None else meta.get("claim_date")
            claim = Claim(cid, text_of(path, lineno, row, "text"), date_of(path, lineno, day), meta)
        except InputError as exc:
            if skipped is None:
                raise
            skipped.append(str(exc))
            continue
        seen.add(cid)
        yield claim


def _plain(value: Any) -> Any:
    """``value`` with its dates as ISO strings and its tuples and sets as lists: what JSON can
    hold (a dataset's claim metadata may carry the dates it parsed)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def write_claims(path: str | os.PathLike[str], claims: Iterable[Claim]) -> None:
    def rows() -> Iterator[dict]:
        for c in claims:
            row: dict = {"_id": c.claim_id, "text": c.text}
            if c.date:
                row["date"] = c.date.isoformat()
            if c.meta:
                row["metadata"] = _plain(dict(c.meta))
            yield row

    write_jsonl(path, rows())


def write_queries(path: str | os.PathLike[str], queries: Iterable[Query]) -> None:
    def rows() -> Iterator[dict]:
        for q in queries:
            row: dict = {"_id": q.query_id, "claim_id": q.claim_id, "text": q.text, "origin": q.origin}
            if q.date:
                row["date"] = q.date.isoformat()
            yield row

    write_jsonl(path, rows())


def read_qrels(path: str | os.PathLike[str]) -> Qrels:
    """Read a BEIR qrels TSV (``query-id corpus-id score`` with a header line)."""
    qrels: Qrels = {}
    for lineno, line in read_lines(path):
        parts = line.rstrip("\n").split("\t")
        if not line.strip() or (lineno == 1 and parts[0] == "query-id"):
            continue
        if len(parts) != 3:
            raise InputError(f"{path}:{lineno}: expected 3 tab-separated fields, got {len(parts)}")
        qrels.setdefault(parts[0], {})[parts[1]] = relevance(parts[2], path, lineno)
    return qrels


def relevance(text: str, path: object, lineno: int) -> int:
    """A qrels relevance grade: a finite number, kept as an int (``1.0`` -> 1)."""
    try:
        return int(float(text))
    except (ValueError, OverflowError):  # "x", "nan"; "inf", "1e400"
        raise InputError(f"{path}:{lineno}: relevance {text!r} is not a finite number") from None


def write_qrels(path: str | os.PathLike[str], qrels: Qrels) -> None:
    lines = ["query-id\tcorpus-id\tscore\n"]
    lines += [f"{q}\t{d}\t{r}\n" for q in sorted(qrels) for d, r in sorted(qrels[q].items())]
    write_atomic(Path(path), lines)
