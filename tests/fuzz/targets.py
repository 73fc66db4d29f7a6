"""What the fuzz tests and ``tools/fuzz.py`` feed to factscout's parsers (issue 19).

Each :class:`Target` pairs a Hypothesis strategy with a function that runs one parser on one
generated input. The rule is the same for all of them: a parser may refuse its input only with
a :class:`~factscout.errors.FactscoutError` (the message names the problem); any other exception
is a bug. A few targets also check an invariant of a successful parse (a date parser returns a
date or None; the sentence splitter only ever drops whitespace).

Strategies mix three sources so that the parsers' interesting paths are reached, not only their
first ``if``: arbitrary Unicode (lone surrogates, control and invisible characters included),
text built from the format's own pieces (digits, month names, separators, field names, JSON
values, numbers such as ``inf``, ``nan``, ``1e400``), and raw bytes for the file readers
(invalid UTF-8, truncated gzip).
"""

from __future__ import annotations

import atexit
import functools
import gzip
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from factscout.errors import FactscoutError

# Every code point, lone surrogates included (Hypothesis leaves those out by default).
ANY_CHAR = st.characters(codec=None, exclude_categories=())
ANY_TEXT = st.text(ANY_CHAR, max_size=60)
ODD = ["\ud800", "\udfff", "\x00", "\x1b", "\x85", "\u200b", "\ufeff", "\u2028", "\u0301", "\uffff", "\U0010ffff"]


def _pieces(*parts: str) -> st.SearchStrategy[str]:
    """Text glued together from ``parts`` and a few odd characters."""
    return st.lists(st.sampled_from([*parts, *ODD]) | st.text(ANY_CHAR, max_size=3), max_size=12).map("".join)


# ---------------------------------------------------------------------- dates

DATE_TEXT = (
    ANY_TEXT
    | _pieces(*"0123456789", "-", "/", ".", " ", ",", "T", "Z", ":", "2020", "1999", "0000", "9999", "31", "29", "02")
    | _pieces("May", "Aug", "September", "jan", "26 ", "2015", ", ", " ", "-", "٣", "１", "none", "NaN", "19")
    | st.dates().map(lambda d: d.strftime("%d %B %Y"))
    | st.dates().map(lambda d: f"{d.day}-{d.month}-{d.year}")
)
DATE_VALUE = DATE_TEXT | st.none() | st.integers() | st.floats() | st.booleans() | st.dates() | st.datetimes()
URL_TEXT = ANY_TEXT | _pieces("https://", "web.archive.org/web/2020id_/", "/", "2020", "1999", "aug", "13", "-", "_")


def parse_date(value: Any) -> None:
    import datetime as dt

    from factscout.dates import parse_date as parse

    out = parse(value)
    if out is not None and (not isinstance(out, dt.date) or isinstance(out, dt.datetime)):
        raise AssertionError(f"parse_date({value!r}) returned {out!r}")


def date_from_url(value: str) -> None:
    from factscout.dates import date_from_url as parse

    parse(value)


# ---------------------------------------------------------------------- tokenising and sentences

WORDS = _pieces("Vitamin", " D", " prevents", " falls", ".", "!", "?", " ", "\n", "Dr.", "U.S.", "e.g.", '"', "(")
TEXT = ANY_TEXT | WORDS


def tokenize(texts: list[str]) -> None:
    from factscout.retrieve.bm25 import Bm25Config
    from factscout.retrieve.bm25 import tokenize as bm25_tokenize

    tokens = bm25_tokenize(texts, Bm25Config())
    if len(tokens) != len(texts):
        raise AssertionError(f"{len(texts)} texts gave {len(tokens)} token lists")


def sentences(text: str) -> None:
    from factscout.text.sentences import sentences_of

    out = sentences_of(text)
    if "".join("".join(out).split()) != "".join(text.split()):
        raise AssertionError(f"sentences_of({text!r}) lost characters: {out!r}")


# ---------------------------------------------------------------------- edit actions

QUERY = WORDS | ANY_TEXT | _pieces("The", " new", " budget", " was", " passed", " by", " Congress", " in", " 2019")
ACTION = st.integers(min_value=-2, max_value=130)


def edit_actions(args: tuple[str, int]) -> None:
    from factscout.rewrite.actions import apply_action, valid_edits

    query, action = args
    edits = valid_edits(query)
    if edits:  # an edit's result is itself a query the editor may edit again
        valid_edits(edits[action % len(edits)].next_query)
    apply_action(query, action)


# ---------------------------------------------------------------------- file readers

JSON_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(ANY_CHAR, max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)
FIELDS = ["_id", "text", "title", "date", "published", "url", "doc_id", "claim_id", "origin", "metadata", "claim_date"]
ROW = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=4), JSON_VALUE | DATE_TEXT, max_size=7)
JSON_LINE = ROW.map(lambda r: json.dumps(r, ensure_ascii=False)) | ROW.map(json.dumps) | JSON_VALUE.map(json.dumps)
SUFFIXES = [".jsonl", ".tsv", ".txt", ".gz"]
FIELD = st.sampled_from(["q1", "d1", "Q0", "0", "1", "2", "-1", "1.5", "inf", "-inf", "nan", "1e400", "query-id"])
# qrels and run lines: 3, 4 or 6 fields of ids and numbers (inf, nan, 1e400...), or anything
TREC_LINE = st.tuples(
    st.lists(FIELD, min_size=3, max_size=6) | st.lists(FIELD | st.text(ANY_CHAR, max_size=4), max_size=7),
    st.sampled_from([" ", "\t", "  "]),
).map(lambda parts_sep: parts_sep[1].join(parts_sep[0]))
LINES = st.lists(JSON_LINE | TREC_LINE | st.text(ANY_CHAR, max_size=20), max_size=6).map("\n".join)


def _table(fields: int, sep: str) -> st.SearchStrategy[str]:
    line = st.lists(FIELD, min_size=fields, max_size=fields).map(sep.join)
    return st.lists(line, min_size=1, max_size=4).map("\n".join)


# files of one well-formed-looking format, so the readers get past their first line
FORMATTED = st.one_of(
    _table(3, "\t"),  # BEIR qrels
    _table(4, " "),  # TREC qrels
    _table(6, " "),  # TREC run
    st.lists(ROW.map(json.dumps), min_size=1, max_size=4).map("\n".join),  # BEIR JSONL
)
TEXT_FILE = (LINES | FORMATTED).map(lambda t: t.encode("utf-8", "surrogatepass"))  # a lone surrogate: not UTF-8
CONTENT = st.one_of(TEXT_FILE, TEXT_FILE.map(gzip.compress), st.binary(max_size=80))
# A file's bytes, a few cut points (each prefix is one more input: a truncated line, half a
# UTF-8 sequence, a gzip stream without its end) and the file name's suffix (.gz is gunzipped).
FILE = st.tuples(CONTENT, st.lists(st.integers(min_value=0, max_value=400), max_size=4), st.sampled_from(SUFFIXES))

_SCRATCH = Path(tempfile.mkdtemp(prefix="factscout-fuzz-"))
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)


def _read_corpus(path: Path) -> Any:
    from factscout.formats.beir import read_corpus

    return list(read_corpus(path))


def _read_queries(path: Path) -> Any:
    from factscout.formats.beir import read_queries

    return list(read_queries(path))


def _read_claims(path: Path) -> Any:
    from factscout.formats.beir import read_claims

    return list(read_claims(path, skipped=[]))


def _read_jsonl(path: Path) -> Any:
    from factscout.formats.jsonl import read_jsonl

    return list(read_jsonl(path))


def _read_beir_qrels(path: Path) -> Any:
    from factscout.formats.beir import read_qrels

    return read_qrels(path)


def _read_run(path: Path) -> Any:
    from factscout.formats.trec import read_run

    return read_run(path)


def _read_trec_qrels(path: Path) -> Any:
    from factscout.formats.trec import read_qrels

    return read_qrels(path)


READERS: dict[str, Callable[[Path], Any]] = {
    "read_jsonl": _read_jsonl,
    "read_corpus (BEIR)": _read_corpus,
    "read_queries (BEIR)": _read_queries,
    "read_claims (BEIR)": _read_claims,
    "read_qrels (BEIR)": _read_beir_qrels,
    "read_run (TREC)": _read_run,
    "read_qrels (TREC)": _read_trec_qrels,
}


def file_calls(value: tuple[bytes, list[int], str]) -> list[tuple[str, Callable[[], Any]]]:
    """Every reader on the file and on each of its prefixes (one file on disk per variant)."""
    content, cuts, suffix = value
    calls: list[tuple[str, Callable[[], Any]]] = []
    for i, data in enumerate([content, *(content[:cut] for cut in cuts)]):
        path = _SCRATCH / f"input{i}{suffix}"

        def read(reader: Callable[[Path], Any], path: Path = path, data: bytes = data) -> Any:
            path.write_bytes(data)
            return reader(path)

        calls += [(name, functools.partial(read, reader)) for name, reader in READERS.items()]
    return calls


# ---------------------------------------------------------------------- the targets


Call = tuple[str, Callable[[], Any]]


@dataclass(frozen=True)
class Target:
    """``strategy`` draws one example; ``calls(example)`` the parser calls it makes, each named by
    the parser it runs (an example may hold several inputs, or feed one file to every reader)."""

    name: str
    strategy: st.SearchStrategy[Any]
    calls: Callable[[Any], list[Call]]
    needs: str | None = None  # a module the target needs (skipped without it)


def outcome(call: Callable[[], Any]) -> BaseException | None:
    """None when ``call()`` finished or refused with a FactscoutError, else the exception."""
    try:
        call()
    except FactscoutError:
        return None
    except Exception as exc:
        return exc
    return None


def each(name: str, fn: Callable[[Any], Any]) -> Callable[[list[Any]], list[Call]]:
    """``fn`` on every input of a drawn list (drawing a few inputs at once is cheaper)."""
    return lambda values: [(name, functools.partial(fn, v)) for v in values]


def _batch(strategy: st.SearchStrategy[Any]) -> st.SearchStrategy[list[Any]]:
    return st.lists(strategy, min_size=1, max_size=8)


TARGETS = [
    Target("dates", _batch(DATE_VALUE), each("parse_date", parse_date)),
    Target("urls", _batch(URL_TEXT), each("date_from_url", date_from_url)),
    Target("tokenize", _batch(st.lists(TEXT, min_size=1, max_size=3)), each("tokenize (bm25)", tokenize), "bm25s"),
    Target("sentences", _batch(TEXT), each("sentences_of", sentences)),
    Target(
        "edit actions",
        st.tuples(QUERY, ACTION),
        lambda v: [("edit actions", functools.partial(edit_actions, v))],
        "spacy",
    ),
    Target("readers", FILE, file_calls),
]
PARSERS = ["parse_date", "date_from_url", "tokenize (bm25)", "sentences_of", "edit actions", *READERS]
