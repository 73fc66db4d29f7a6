"""ClaimDecomp: PolitiFact claims decomposed into yes/no sub-questions by two annotators.

Chen, Sriram, Choi & Durrett, 2022, "Generating Literal and Implied Subquestions to Fact-check
Complex Claims", EMNLP (https://aclanthology.org/2022.emnlp-main.229). Annotators wrote
sub-questions from the claim itself (*literal*) and from the fact-checkers' justification
(*implied*); each carries the yes/no/n-a answer the fact-check gives.

Claim ids are the data's ``example_id``; ``Claim.date`` is the date in the PolitiFact venue line
("stated on April 7, 2020 in a press briefing:"). Metadata: ``label`` (PolitiFact's six-way
rating), ``person``, ``venue``, ``url``, ``justification`` and ``full_article`` (lists of
paragraphs), ``subquestions`` (one list per annotator of
``{"question", "answer", "kind": "literal" | "implied", "statement", "statement_negated"}``) and
``questions`` (every annotator's questions, de-duplicated, in order). No corpus.
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from pathlib import Path
from typing import Any

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch_all,
    github_raw,
    meta_dict,
    register_loader,
    require_file,
)
from factscout.dates import parse_date
from factscout.errors import InputError
from factscout.formats.jsonl import read_jsonl
from factscout.records import Claim

log = logging.getLogger(__name__)

_REPO, _COMMIT = "Jaswar/nlp-project", "3d9a871b8e2d15244113ed48ea055090161c3e87"
SOURCE = DatasetSource(
    name="ClaimDecomp",
    url=github_raw(_REPO, _COMMIT, "ClaimDecomp/dev.jsonl"),
    license="none stated (claims and articles from PolitiFact)",
    citation="Chen, Sriram, Choi, Durrett. Generating Literal and Implied Subquestions to Fact-check Complex "
    "Claims. EMNLP 2022.",
)
FOLDER = "claimdecomp"
# question_source in the data -> the paper's names
KINDS = {"claim": "literal", "reasoning": "implied"}
_VENUE_DATE = re.compile(r"([A-Z][a-z]+\.? \d{1,2}, \d{4})")


def venue_date(venue: str | None) -> dt.date | None:
    """The date in a PolitiFact venue line ("stated on April 7, 2020 in ..."), or None."""
    m = _VENUE_DATE.search(venue or "")
    if m is None:
        return None
    try:
        return parse_date(m.group(1).replace(".", ""))
    except InputError:
        return None


def _subquestions(where: str, annotation: dict[str, Any]) -> list[dict[str, str]]:
    questions = annotation.get("questions") or []
    n = len(questions)
    columns = {k: annotation.get(k) or [""] * n for k in ("answers", "question_source", "statements")}
    columns["statements_negate"] = annotation.get("statements_negate") or [""] * n
    if any(len(v) != n for v in columns.values()):
        raise InputError(f"{where}: annotation lists differ in length")
    out = []
    for q, a, src, st, neg in zip(questions, *columns.values(), strict=True):
        source = str(src).strip().lower()
        kind = KINDS.get(source)
        if kind is None:
            log.warning("%s: unknown question_source %r kept as is", where, src)
            kind = source
        out.append(
            {
                "question": str(q).strip(),
                "answer": str(a).strip().lower(),
                "kind": kind,
                "statement": str(st).strip(),
                "statement_negated": str(neg).strip(),
            }
        )
    return out


@register_loader("claimdecomp", ("dev", "test"))
def load(split: str, root: Path) -> Dataset:
    """ClaimDecomp ``dev`` (200 claims); ``test`` where downloaded."""
    path = require_file(root / FOLDER / f"{split}.jsonl", "claimdecomp")
    claims = []
    for lineno, row in read_jsonl(path):
        where = f"{path}:{lineno}"
        if row.get("example_id") is None or not isinstance(row.get("claim"), str):
            raise InputError(f"{where}: expected 'example_id' and 'claim'")
        annotations = row.get("annotations") or []
        subquestions = [_subquestions(where, a) for a in annotations if isinstance(a, dict)]
        questions = list(dict.fromkeys(q["question"] for sub in subquestions for q in sub if q["question"]))
        meta = meta_dict(
            label=row.get("label"),
            person=row.get("person"),
            venue=row.get("venue"),
            url=row.get("url"),
            justification=row.get("justification"),
            full_article=row.get("full_article"),
            subquestions=subquestions,
            questions=questions,
        )
        claims.append(Claim(str(row["example_id"]), row["claim"], venue_date(row.get("venue")), meta))
    return Dataset("claimdecomp", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the reconstructed ClaimDecomp dev and test files into ``dest/claimdecomp``."""
    urls = {f"{s}.jsonl": github_raw(_REPO, _COMMIT, f"ClaimDecomp/{s}.jsonl") for s in ("dev", "test")}
    return fetch_all(urls, Path(dest) / FOLDER)
