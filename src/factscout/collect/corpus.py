"""The collected corpus: web documents, which claim each is relevant to, and why each result
was kept or dropped.

Output folder (everything ``factscout index`` / ``search`` / ``evaluate`` read, plus provenance):

``corpus.jsonl``
    BEIR corpus, one row per web page: ``_id`` (``web-`` + the first 16 hex digits of the
    sha256 of the page's URL, so a page keeps its id across runs), ``title``, ``text`` (the
    page's main text), ``published`` (ISO day, when known), ``url``.
``qrels.tsv``
    BEIR qrels: ``claim_id  doc_id  1`` for each page a sub-query found relevant. Distractors
    have no judgement.
``subqrels.tsv``
    the same judgements per sub-query (``query_id  doc_id  1``: which sub-query found the page
    relevant), for evaluating sub-query runs.
``queries.jsonl``
    the claims as BEIR queries (``_id`` = claim id, ``text``, ``date``), for
    ``factscout search --queries queries.jsonl --date-filter``.
``subqueries.jsonl``
    the planned sub-queries (the rows ``factscout plan`` writes), for ``--fusion``.
``records.jsonl``
    every search result seen: claim, query, rank, URL, snippet, result date, relevance score and
    the decision (``relevant``, ``distractor``, or why it was dropped: ``not relevant``,
    ``fact-check site``, ``published on or after the claim date``, ``page skipped: ...``), and
    every failed search.
``snapshot/``
    the frozen responses and their manifest (:mod:`factscout.collect.snapshot`).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factscout.formats.beir import Qrels, write_corpus, write_qrels, write_queries
from factscout.formats.jsonl import write_jsonl
from factscout.records import Claim, Passage, Query

RELEVANT = "relevant"
DISTRACTOR = "distractor"


def page_url(url: str) -> str:
    """``url`` without its fragment (``#section`` names a place in a page, not another page)."""
    return url.split("#", 1)[0]


def doc_id_for(url: str) -> str:
    """The stable id of the page at ``url``: ``web-`` + 16 hex digits of the sha256 of its
    fragment-less URL."""
    return "web-" + hashlib.sha256(page_url(url).encode("utf-8")).hexdigest()[:16]


@dataclass
class CorpusBuilder:
    """Collects documents, judgements and the record of every decision, in the order seen."""

    documents: dict[str, Passage] = field(default_factory=dict)
    qrels: Qrels = field(default_factory=dict)
    subqrels: Qrels = field(default_factory=dict)
    records: list[dict[str, Any]] = field(default_factory=list)
    decisions: Counter[str] = field(default_factory=Counter)

    def add_document(self, url: str, title: str, text: str, published: dt.date | None) -> str:
        doc_id = doc_id_for(url)
        if doc_id not in self.documents:
            self.documents[doc_id] = Passage(doc_id, doc_id, title, text, published, page_url(url))
        return doc_id

    def judge(self, claim_id: str, query_id: str, doc_id: str) -> None:
        self.qrels.setdefault(claim_id, {})[doc_id] = 1
        self.subqrels.setdefault(query_id, {})[doc_id] = 1

    def record(self, row: dict[str, Any]) -> None:
        decision = str(row.get("decision") or ("search failed" if row.get("error") else ""))
        self.decisions[decision.split(":")[0]] += 1
        self.records.append(row)

    @property
    def distractor_ids(self) -> set[str]:
        judged = {d for docs in self.qrels.values() for d in docs}
        return {r["doc_id"] for r in self.records if r.get("decision") == DISTRACTOR and r["doc_id"] not in judged}

    def write(self, out: Path, claims: Sequence[Claim], queries: Iterable[Query]) -> None:
        out.mkdir(parents=True, exist_ok=True)
        write_corpus(out / "corpus.jsonl", self.documents.values())
        write_qrels(out / "qrels.tsv", self.qrels)
        write_qrels(out / "subqrels.tsv", self.subqrels)
        write_queries(out / "queries.jsonl", [Query.for_claim(c) for c in claims])
        write_queries(out / "subqueries.jsonl", queries)
        write_jsonl(out / "records.jsonl", self.records)
