"""The document report: what ``factscout check --document`` found in one document, one record for
the library, the JSON the CLI writes, the HTTP API (``/v1/documents``) and the MCP tool
``check_document``. The layout (``DocumentReport.to_dict()``) is a contract:

.. code-block:: text

    {
      "format": "factscout-document-report/1",
      "document_format": "text" | "markdown" | "html" | "transcript",
      "text": str,               # what the spans index: the document (HTML: its extracted main text)
      "chars": int,              # len(text), in Python characters (code points)
      "date": "YYYY-MM-DD" | null,                    # evidence had to be published before it
      "threshold": float,        # the check-worthiness model's shipped threshold
      "min_score": float | null, # the cut used instead of the threshold, when one was given
      "top": int,                # at most this many sentences were checked
      "checkworthy": int,        # sentences at or above the threshold
      "sentences": [{            # every sentence, in document order
          "sentence_id": "s1", "text": str, "start": int, "end": int, "line": int,
          "speaker": str | null, "context": [sentence_id, ...],
          "rank": int,           # 1: the most check-worthy (ties in document order)
          "score": float,        # the probability that it is check-worthy
          "label": str,          # the model's label at its threshold
          "checkworthy": bool,   # score >= threshold
          "checked": bool}],     # among "claims" below
      "claims": [{               # the checked sentences, most check-worthy first
          "sentence_id", "sentence", "start", "end", "line", "speaker",
          "context_ids": [sentence_id, ...],          # the sentences before it that it needs
          "claim": str,          # the text checked: those sentences, then it
          "rank", "score", "label",
          "report": {factscout-report/1} | null}]     # null only for a server job's failed check
    }

Spans are ``[start, end)`` into ``text`` (:mod:`factscout.claims.document`): for plain text, HTML
and transcripts ``text[start:end]`` is the sentence; for Markdown the span runs from the
sentence's first to its last visible character, the markup between them included. Each claim's
``report`` is the :class:`~factscout.report.Report` of its check (its verdict, evidence, "checked
before" matches, timeline and provenance), the same record ``factscout check`` writes for a claim.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from factscout.claims.document import DocumentFormat
from factscout.errors import InputError
from factscout.report import Report

FORMAT: Literal["factscout-document-report/1"] = "factscout-document-report/1"


class _Part(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class SentenceScore(_Part):
    """A sentence of the document, where it is, and its check-worthiness."""

    sentence_id: str = Field(description="s1, s2, ... in document order")
    text: str = Field(description="the sentence (a wrapped line's break read as a space)")
    start: int = Field(ge=0, description="its span [start, end) in the report's text, in characters")
    end: int = Field(ge=0)
    line: int = Field(description="the transcript's line number, else the line of the text it starts on")
    speaker: str | None = Field(default=None, description="the speaker of a transcript's line")
    context: tuple[str, ...] = Field(default=(), description="the ids of the sentences before it that it needs")
    rank: int = Field(ge=1, description="its check-worthiness rank in the document (1: the most check-worthy)")
    score: float = Field(description="the probability that it is check-worthy")
    label: str = Field(description="the check-worthiness model's label")
    checkworthy: bool = Field(description="score at or above the model's threshold")
    checked: bool = Field(description="checked: one of the report's claims")


class DocumentClaim(_Part):
    """A checked sentence, where it is, and the report of its check."""

    sentence_id: str = Field(description="s1, s2, ... in document order")
    sentence: str
    start: int = Field(ge=0, description="the sentence's span [start, end) in the report's text, in characters")
    end: int = Field(ge=0)
    line: int
    speaker: str | None = Field(default=None, description="the speaker of a transcript's line")
    context_ids: tuple[str, ...] = Field(
        default=(), description="the sentences before it that it needs, carried into the check"
    )
    claim: str = Field(description="the text checked: the sentence with that context before it")
    rank: int = Field(ge=1, description="its check-worthiness rank in the document (1: the most check-worthy)")
    score: float = Field(description="the probability that it is check-worthy")
    label: str = Field(description="the check-worthiness model's label")
    report: Report | None = Field(
        description="the factscout-report/1 report of its check (null only when a server job could not check it)"
    )


class DocumentReport(_Part):
    """A document's sentences scored for check-worthiness and its most check-worthy ones checked."""

    format: Literal["factscout-document-report/1"] = FORMAT
    document_format: DocumentFormat = Field(description="how the document was read")
    text: str = Field(description="the text the spans index: the document, or an HTML page's extracted main text")
    chars: int = Field(ge=0, description="characters in text")
    date: dt.date | None = Field(default=None, description="the document's date: evidence had to predate it")
    threshold: float = Field(description="the check-worthiness model's shipped threshold")
    min_score: float | None = Field(
        default=None, description="the score a sentence needed to be checked, if not the threshold"
    )
    top: int = Field(ge=1, description="at most this many sentences were checked")
    checkworthy: int = Field(ge=0, description="sentences at or above the threshold")
    sentences: tuple[SentenceScore, ...] = Field(description="every sentence, in document order")
    claims: tuple[DocumentClaim, ...] = Field(description="the checked sentences, most check-worthy first")

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout (dates as ``YYYY-MM-DD``; each claim's report as ``Report.to_dict()``)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DocumentReport:
        """Read the JSON layout back (an :class:`~factscout.errors.InputError` when it is not one)."""
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            got = d.get("format") if isinstance(d, Mapping) else type(d).__name__
            raise InputError(f"not a {FORMAT} record (format: {got!r})")
        try:
            return cls.model_validate(dict(d))
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:3])
            raise InputError(f"malformed {FORMAT} record: {problems}") from exc

    def sentence(self, sentence_id: str) -> SentenceScore:
        """The sentence with this id (``s<n>`` is the n-th, as in :meth:`Document.sentence`)."""
        n = int(sentence_id[1:]) if sentence_id[:1] == "s" and sentence_id[1:].isdigit() else 0
        if 0 < n <= len(self.sentences) and self.sentences[n - 1].sentence_id == sentence_id:
            return self.sentences[n - 1]
        for s in self.sentences:
            if s.sentence_id == sentence_id:
                return s
        raise InputError(f"no sentence {sentence_id!r} in this document report")


__all__ = ["FORMAT", "DocumentClaim", "DocumentReport", "SentenceScore"]
