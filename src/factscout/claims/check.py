"""Check a document end to end: its sentences ranked by check-worthiness, the most check-worthy
checked with the context they need, one :class:`~factscout.claims.report.DocumentReport`.

The one core behind ``factscout check --document``, ``POST /v1/documents`` and the MCP tool
``check_document``, in two halves so a server can schedule the checks its own way:

1. :func:`plan_document`: every sentence scored (:func:`~factscout.claims.ranking.rank_document`)
   and the sentences to check chosen: the ``top`` most check-worthy whose score reaches the model's
   shipped threshold, or ``min_score`` when one is given (ranked by score, ties in document order);
2. the plan's claims (:meth:`DocumentPlan.claims`: each sentence with the sentences before it that
   it needs, :meth:`~factscout.claims.document.Document.claim`) go through ``check``, and
   :meth:`DocumentPlan.report` puts their reports back beside their sentences and spans.

:func:`check_document` does both with a :class:`~factscout.check.Checker` (``check_many``'s batches,
``chunk`` claims at a time, with a progress callback), as the CLI does; the HTTP API keeps the plan
in its job store and checks the claims as a job's claims; the MCP server submits them to the
service's queue beside other checks.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factscout.claims.document import Document
from factscout.claims.ranking import BATCH_SIZE, RankedSentence, rank_document
from factscout.claims.report import DocumentClaim, DocumentReport, SentenceScore
from factscout.errors import InputError
from factscout.records import Claim
from factscout.report import Report

if TYPE_CHECKING:
    from factscout.check import Checker
    from factscout.claims.checkworthy import CheckworthyModel

DEFAULT_TOP = 5
"""Sentences checked by default: the five most check-worthy."""
CHUNK = 16
"""Claims checked per ``check_many`` batch (a progress step)."""

Progress = Callable[[str, int, int], Any]
"""``progress(step, done, total)``: ``step`` is ``"scoring"`` (sentences) or ``"checking"`` (claims)."""


@dataclass(frozen=True, slots=True)
class DocumentPlan:
    """A document's sentences ranked by check-worthiness and the ones to check.

    ``ranked``: every sentence, most check-worthy first; ``chosen``: the ones to check, in that
    order; ``threshold``: the model's; ``top`` and ``min_score``: the cut; ``date``: the
    document's (evidence must predate it)."""

    document: Document
    ranked: tuple[RankedSentence, ...]
    chosen: tuple[RankedSentence, ...]
    threshold: float
    top: int
    min_score: float | None = None
    date: dt.date | None = None

    def claims(self, *, prefix: str = "") -> list[Claim]:
        """The claims to check, in :attr:`chosen` order: each sentence with its context
        (:meth:`Document.claim`), its id ``prefix`` + its sentence id, the document's date."""
        return [
            self.document.claim(r.sentence, claim_id=prefix + r.sentence.sentence_id, date=self.date)
            for r in self.chosen
        ]

    def report(self, reports: Sequence[Report | Mapping[str, Any] | None]) -> DocumentReport:
        """The document report with ``reports``, one per claim of :meth:`claims` in order (a
        :class:`Report`, its ``to_dict()`` form, or ``None`` for a check that failed)."""
        if len(reports) != len(self.chosen):
            raise InputError(f"{len(reports)} reports for the {len(self.chosen)} claims of the document")
        document = self.document
        checked = {r.sentence.sentence_id for r in self.chosen}
        by_id = {r.sentence.sentence_id: r for r in self.ranked}
        sentences = []
        for s in document.sentences:
            r = by_id[s.sentence_id]
            sentences.append(
                SentenceScore(
                    sentence_id=s.sentence_id,
                    text=s.text,
                    start=s.start,
                    end=s.end,
                    line=s.line,
                    speaker=s.speaker,
                    context=s.context,
                    rank=r.rank,
                    score=r.score.probability,
                    label=r.score.label,
                    checkworthy=r.checkworthy,
                    checked=s.sentence_id in checked,
                )
            )
        claims = [
            DocumentClaim(
                sentence_id=r.sentence.sentence_id,
                sentence=r.sentence.text,
                start=r.sentence.start,
                end=r.sentence.end,
                line=r.sentence.line,
                speaker=r.sentence.speaker,
                context_ids=r.sentence.context,
                claim=document.claim_text(r.sentence),
                rank=r.rank,
                score=r.score.probability,
                label=r.score.label,
                report=_report(report),
            )
            for r, report in zip(self.chosen, reports, strict=True)
        ]
        return DocumentReport(
            document_format=document.format,
            text=document.text,
            chars=len(document.text),
            date=self.date,
            threshold=self.threshold,
            min_score=self.min_score,
            top=self.top,
            checkworthy=sum(r.checkworthy for r in self.ranked),
            sentences=tuple(sentences),
            claims=tuple(claims),
        )


def _report(report: Report | Mapping[str, Any] | None) -> Report | None:
    if report is None or isinstance(report, Report):
        return report
    return Report.from_dict(report)


def plan_document(
    document: Document,
    model: CheckworthyModel,
    *,
    top: int = DEFAULT_TOP,
    min_score: float | None = None,
    date: dt.date | None = None,
    batch_size: int = BATCH_SIZE,
    progress: Progress | None = None,
) -> DocumentPlan:
    """Score every sentence of ``document`` with ``model`` and choose the ``top`` most
    check-worthy whose score reaches ``min_score`` (default: the model's threshold) to check."""
    if isinstance(top, bool) or not isinstance(top, int) or top < 1:
        raise InputError(f"top must be a positive number of sentences, got {top!r}")
    if min_score is not None and not 0.0 <= min_score <= 1.0:
        raise InputError(f"min score must be a probability between 0 and 1, got {min_score}")
    total, done = len(document.sentences), [0]

    def scored(n: int) -> None:
        done[0] += n
        if progress is not None:
            progress("scoring", done[0], total)

    ranked = rank_document(document, model, batch_size=batch_size, progress=scored)
    cut = model.threshold if min_score is None else min_score
    chosen = [r for r in ranked if r.score.probability >= cut][:top]
    return DocumentPlan(document, tuple(ranked), tuple(chosen), model.threshold, top, min_score, date)


def check_document(
    checker: Checker,
    document: Document,
    *,
    top: int = DEFAULT_TOP,
    min_score: float | None = None,
    date: dt.date | None = None,
    model: CheckworthyModel | None = None,
    progress: Progress | None = None,
    chunk: int = CHUNK,
) -> DocumentReport:
    """The document report of ``document``: its sentences scored by ``model`` (default: the
    shipped check-worthiness model), the ``top`` most check-worthy at or above the threshold (or
    ``min_score``) checked by ``checker`` with their context, ``chunk`` claims per batch, evidence
    published before ``date`` when given (and the checker's date filter is on)."""
    if chunk < 1:
        raise InputError(f"chunk must be a positive number of claims, got {chunk}")
    if model is None:
        from factscout.claims.checkworthy import load_checkworthy

        model = load_checkworthy()
    plan = plan_document(document, model, top=top, min_score=min_score, date=date, progress=progress)
    claims = plan.claims()
    reports: list[Report] = []
    if progress is not None:
        progress("checking", 0, len(claims))
    for report in checker.iter_check(claims, batch_size=chunk):
        reports.append(report)
        if progress is not None:
            progress("checking", len(reports), len(claims))
    return plan.report(reports)


__all__ = ["CHUNK", "DEFAULT_TOP", "DocumentPlan", "Progress", "check_document", "plan_document"]
