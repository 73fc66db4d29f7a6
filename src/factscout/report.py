"""The Report: everything ``factscout check`` found for one claim, and how it found it.

A :class:`Report` is the one result record of the check pipeline (plan -> retrieve -> fuse ->
re-rank -> select -> stance -> verdict). The CLI writes it as JSON lines, the HTTP API returns
it and the web page renders it, all from :meth:`Report.to_dict`, whose layout is a contract:

.. code-block:: text

    {
      "format": "factscout-report/1",
      "claim_id": str, "claim": str, "date": "YYYY-MM-DD" | null,
      "queries": [{"query_id", "text", "origin"}],          # the plan, claim first
      "checked_before": null | {                              # published fact-checks (factscout factchecks)
          "matches": [{"fact_check_id", "claim", "publisher", "verdict", "normalised_verdict", "url",
                       "date", "title", "score", "sources"}],  # best first, at or above the threshold
          "threshold": float, "published_before": "YYYY-MM-DD" | null, "memory": str,
          "note": str},                                       # the verdict below does not use them
      "evidence": [{                                          # best first
          "passage_id", "doc_id", "title", "url", "published": "YYYY-MM-DD" | null,
          "days_from_claim": int | null,                      # published - claim date
          "after_claim": bool,                                # published on/after the claim date
          "rank": int, "score": float,                        # after fusion (and re-ranking)
          "found_by": [query_id, ...],                        # which planned queries found it
          "stance": "supports" | "refutes" | "not enough info",
          "sentences": [{"index", "text", "score", "stance", "probabilities": [s, r, n]}]
      }],
      "verdict": {"label": "supported" | "refuted" | "not enough evidence" | "conflicting",
                  "method": str, "reason": str,
                  "counts": {"supporting": int, "refuting": int, "neutral": int},
                  "confidence": float | null,                 # calibrated P(the definite call is right)
                  "call": <label>,                            # the method's verdict before abstaining
                  "abstention": str | null},                  # why the verdict is not a definite call
      "timeline": [{"passage_id", "published", "days_from_claim", "after_claim"}],  # by date
      "leakage": {"dated": int, "after_claim": int, "share": float},  # dated evidence on/after the claim date
      "provenance": {...}                                     # components and model hashes
    }

The types below are that layout: pydantic models whose fields are the JSON fields (``timeline``
and ``leakage`` are computed from the evidence), so the library, the JSON lines the CLI writes and
the HTTP API's OpenAPI schema (``/v1/check``, ``/v1/checks``) are one contract, written once.

``sentences`` are the highlighted sentences (the ones the selector kept); a passage's
``stance`` is the side of its most confident counted sentence, ``not enough info`` when none
was counted. ``counts`` count sentences, as the Quin+ rule does.

``confidence`` is given for a definite call (``supported`` / ``refuted``) when a confidence model
is loaded (:mod:`factscout.verify.confidence`), also when the call was then withheld; ``call`` is
the call the verdict method made, which differs from ``label`` only when factscout abstained;
``abstention`` says why a ``not enough evidence`` verdict is not definite: "low confidence 0.41
(< 0.55): would have been supported" is not "no evidence found" nor "evidence did not reach the
rule's thresholds". Reports written before these three fields read back with ``null``, ``label``
and ``null``.

:func:`assemble` builds a report from what the pipeline found (the claim, its plan, the read passages
with their selected sentences and stances, and the verdict method's :class:`~factscout.records.Verdict`).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, computed_field, model_serializer, model_validator

from factscout.errors import InputError
from factscout.records import (
    NOT_ENOUGH_INFO,
    REFUTES,
    STANCE_LABELS,
    SUPPORTS,
    VERDICT_LABELS,
    Claim,
    StanceLabel,
    VerdictLabel,
)

if TYPE_CHECKING:
    from factscout.records import Hit, Passage, Query, Sentence, Stance, Verdict

FORMAT: Literal["factscout-report/1"] = "factscout-report/1"
STANCES = STANCE_LABELS  # the names this module always exported
VERDICTS = VERDICT_LABELS


class _Part(BaseModel):
    """A frozen piece of the report; fields a reader does not know (a newer writer's) are ignored.
    A part with computed fields lists its JSON keys in ``_KEYS``: the documented order, kept stable."""

    _KEYS: ClassVar[tuple[str, ...]] = ()

    # read leniently, described strictly: the schema (what factscout writes) allows no other field
    model_config = ConfigDict(frozen=True, extra="ignore", json_schema_extra={"additionalProperties": False})

    @model_serializer(mode="wrap")
    def _in_order(self, handler):  # type: ignore[no-untyped-def]  # unannotated: the schema stays the model's
        data = handler(self)
        return {key: data[key] for key in self._KEYS} if self._KEYS and isinstance(data, dict) else data


class PlannedQuery(_Part):
    """One query of the claim's plan (the claim itself first)."""

    query_id: str
    text: str
    origin: str = Field(description="which planner step made it (``claim`` for the claim itself)")


class EvidenceSentence(_Part):
    """A highlighted sentence of an evidence passage: the side the verdict rule counted it for and
    the stance model's probabilities (whose most probable class, ``model_label``, is what
    ``factscout stance`` writes for the pair; the two differ when the model's lean is below the
    rule's ``--min-stance-confidence``)."""

    _KEYS = ("index", "text", "score", "stance", "counted", "model_label", "probabilities")

    index: int = Field(description="the sentence's position in its passage")
    text: str
    score: float
    stance: StanceLabel = Field(
        description="the side the verdict rule counted it for; 'not enough info' when the rule did not count it"
    )
    probabilities: tuple[float, float, float] = Field(description="supports, refutes, not enough info")

    @computed_field(description="whether the verdict rule counted it (for `stance`)")  # type: ignore[prop-decorator]
    @property
    def counted(self) -> bool:
        return self.stance != NOT_ENOUGH_INFO

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented form
        description="the stance model's own label: its most probable class (what `factscout stance` writes)"
    )
    @property
    def model_label(self) -> StanceLabel:
        return STANCE_LABELS[max(range(len(STANCE_LABELS)), key=self.probabilities.__getitem__)]


class Evidence(_Part):
    """One retrieved passage shown as evidence, with where it came from and what it says."""

    _KEYS = ("passage_id", "doc_id", "title", "url", "published", "days_from_claim", "after_claim", "rank", "score",
             "found_by", "stance", "sentences")  # fmt: skip

    passage_id: str
    doc_id: str
    title: str
    url: str | None
    published: dt.date | None
    days_from_claim: int | None = Field(default=None, description="published minus the claim date, in days")
    rank: int
    score: float
    found_by: tuple[str, ...] = Field(description="the planned queries (query_id) that found it")
    stance: StanceLabel = Field(description="the side of its most confident counted sentence")
    sentences: tuple[EvidenceSentence, ...] = Field(default=(), description="the highlighted sentences")

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented form
        description="published on or after the claim's date (possible leakage of the verdict)"
    )
    @property
    def after_claim(self) -> bool:
        return self.days_from_claim is not None and self.days_from_claim >= 0


class VerdictCounts(_Part):
    """Sentences counted for each side, and the rest (as the Quin+ rule counts)."""

    supporting: int
    refuting: int
    neutral: int


class VerdictSummary(_Part):
    """The verdict as published: label, the rule or model that gave it, its sentence counts (the
    count rule's, whichever method gave the label), its confidence and, when factscout abstained,
    the call it withheld and why."""

    label: VerdictLabel
    method: str
    reason: str
    counts: VerdictCounts
    confidence: float | None = Field(
        default=None,
        description="the confidence model's probability that the definite call (`call`) is right (calibrated when "
        "provenance.verdict_confidence.calibrated is true); null without a definite call or a confidence model",
    )
    call: VerdictLabel = Field(description="the verdict method's call; differs from `label` when factscout abstained")
    abstention: str | None = Field(
        default=None,
        description="why the verdict is not definite: 'low confidence 0.41 (< 0.55): would have been supported', "
        "'no evidence found', 'evidence did not reach the rule's thresholds'...; null for a definite verdict",
    )

    @model_validator(mode="before")
    @classmethod
    def _call_defaults_to_label(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and data.get("call") is None:
            return {**data, "call": data.get("label")}  # reports written before `call` existed
        return data

    @classmethod
    def of(cls, verdict: Verdict) -> VerdictSummary:
        """The published form of a verdict method's :class:`~factscout.records.Verdict`."""
        counts = VerdictCounts(
            supporting=len(verdict.supporting), refuting=len(verdict.refuting), neutral=len(verdict.neutral)
        )
        return cls(
            label=verdict.label,
            method=verdict.method,
            reason=verdict.reason,
            counts=counts,
            confidence=verdict.confidence,
            call=verdict.call or verdict.label,
            abstention=verdict.abstention,
        )

    @property
    def supporting(self) -> int:
        return self.counts.supporting

    @property
    def refuting(self) -> int:
        return self.counts.refuting

    @property
    def neutral(self) -> int:
        return self.counts.neutral

    @property
    def abstained(self) -> bool:
        """Whether factscout withheld the method's definite call (its confidence was too low)."""
        return self.call != self.label


INDEPENDENT = "factscout's verdict is computed from the evidence alone; these published fact-checks are shown, not used"


class PriorCheck(_Part):
    """A published fact-check matched to the claim in a fact-check memory (``factscout factchecks``)."""

    fact_check_id: str
    claim: str = Field(description="the claim as the fact-checker worded it")
    publisher: str
    verdict: str = Field(description="the rating as published ('' when the source has none)")
    normalised_verdict: str = Field(description="supported | refuted | mixed | unverifiable | other | unknown")
    url: str | None
    date: dt.date | None = Field(description="when the fact-check was published")
    title: str = ""
    score: float = Field(description="the match score (shown only at or above the memory's threshold)")
    sources: tuple[str, ...] = Field(default=(), description="the datasets that hold it")


def prior_check(record: Any, score: float) -> PriorCheck:
    """The report's form of a matched :class:`~factscout.factchecks.FactCheck` and its match score."""
    return PriorCheck(
        fact_check_id=record.fact_check_id,
        claim=record.claim,
        publisher=record.publisher,
        verdict=record.verdict,
        normalised_verdict=record.normalised_verdict,
        url=record.url,
        date=record.date,
        title=record.title,
        score=round(float(score), 6),
        sources=tuple(record.sources),
    )


class CheckedBefore(_Part):
    """The "Checked before" section: published fact-checks of the claim, kept apart from the evidence."""

    matches: tuple[PriorCheck, ...] = Field(description="best match first; empty when none reaches the threshold")
    threshold: float = Field(description="the match score a fact-check needs to be shown")
    published_before: dt.date | None = Field(description="only fact-checks published before this day (the claim's)")
    memory: str = Field(description="the fact-check memory searched")
    note: str = INDEPENDENT


class TimelineEntry(_Part):
    passage_id: str
    published: dt.date | None
    days_from_claim: int | None
    after_claim: bool


class Leakage(_Part):
    dated: int
    after_claim: int
    share: float = Field(description="dated evidence published on or after the claim date")


class Report(_Part):
    """What ``check`` found for one claim, in the documented ``factscout-report/1`` layout."""

    _KEYS = ("format", "claim_id", "claim", "date", "queries", "checked_before", "evidence", "verdict", "timeline",
             "leakage", "provenance")  # fmt: skip

    format: Literal["factscout-report/1"] = FORMAT
    claim_id: str
    claim: str
    date: dt.date | None
    queries: tuple[PlannedQuery, ...]
    checked_before: CheckedBefore | None = Field(
        default=None, description="published fact-checks of the claim (null: no fact-check memory was searched)"
    )
    evidence: tuple[Evidence, ...] = Field(description="best first")
    verdict: VerdictSummary
    provenance: dict[str, Any] = Field(
        default_factory=dict, description="the settings, components and model hashes used"
    )

    @property
    def claim_record(self) -> Claim:
        """The checked claim as a :class:`~factscout.records.Claim`."""
        return Claim(self.claim_id, self.claim, self.date)

    def grouped(self) -> dict[str, list[Evidence]]:
        """Evidence by stance, best first within each group."""
        out: dict[str, list[Evidence]] = {s: [] for s in STANCES}
        for e in self.evidence:
            out[e.stance].append(e)
        return out

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented form
        description="dated evidence, oldest first (ties by rank)"
    )
    @property
    def timeline(self) -> list[TimelineEntry]:
        dated = sorted((e for e in self.evidence if e.published), key=lambda e: (e.published, e.rank))
        return [TimelineEntry(passage_id=e.passage_id, published=e.published, days_from_claim=e.days_from_claim,
                              after_claim=e.after_claim) for e in dated]  # fmt: skip

    @computed_field(  # type: ignore[prop-decorator]  # pydantic's documented form
        description="how much dated evidence was published on or after the claim date"
    )
    @property
    def leakage(self) -> Leakage:
        dated = [e for e in self.evidence if e.days_from_claim is not None]
        late = sum(e.after_claim for e in dated)
        return Leakage(dated=len(dated), after_claim=late, share=late / len(dated) if dated else 0.0)

    def to_dict(self) -> dict[str, Any]:
        """The JSON layout (dates as ``YYYY-MM-DD``)."""
        return self.model_dump(mode="json")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Report:
        """Read back :meth:`to_dict` output (a clear error when it is not a factscout report)."""
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            got = d.get("format") if isinstance(d, Mapping) else type(d).__name__
            raise InputError(f"not a {FORMAT} record (format: {got!r})")
        try:
            return cls.model_validate(d)
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()[:5])
            raise InputError(f"malformed {FORMAT} record for claim {d.get('claim_id')!r}: {problems}") from exc


def assemble(
    claim: Claim,
    queries: Sequence[Query],
    hits: Sequence[Hit],
    passages: Sequence[Passage],
    selected: Sequence[Sequence[Sentence]],
    stances: Sequence[Stance],
    verdict: Verdict,
    provenance: Mapping[str, Any],
    checked_before: CheckedBefore | None = None,
) -> Report:
    """The report of ``claim``: each read passage (``hits[i]`` read as ``passages[i]``) with its
    ``selected`` sentences, each marked with the side the verdict counted it for and its stance
    probabilities (``stances``, one per selected sentence)."""
    counted = {(x.passage_id, x.sentence_index): side for side, xs in (
        (SUPPORTS, verdict.supporting), (REFUTES, verdict.refuting)) for x in xs}  # fmt: skip
    stance_of = {(x.passage_id, x.sentence_index): x for x in stances}
    evidence = []
    for hit, passage, sents in zip(hits, passages, selected, strict=True):
        marked = [
            EvidenceSentence(
                index=s.index,
                text=s.text,
                score=round(s.score, 6),
                stance=counted.get((s.passage_id, s.index), NOT_ENOUGH_INFO),
                probabilities=stance_of[(s.passage_id, s.index)].probabilities,
            )
            for s in sents
        ]
        evidence.append(
            Evidence(
                passage_id=passage.passage_id,
                doc_id=passage.doc_id,
                title=passage.title,
                url=passage.url,
                published=passage.published,
                days_from_claim=days_between(passage.published, claim.date),
                rank=hit.rank,
                score=float(hit.score),
                found_by=hit.found_by,
                stance=_passage_stance(marked),
                sentences=tuple(marked),
            )
        )
    return Report(
        claim_id=claim.claim_id,
        claim=claim.text,
        date=claim.date,
        queries=tuple(PlannedQuery(query_id=q.query_id, text=q.text, origin=q.origin) for q in queries),
        checked_before=checked_before,
        evidence=tuple(evidence),
        verdict=VerdictSummary.of(verdict),
        provenance=dict(provenance),
    )


def _passage_stance(sentences: Sequence[EvidenceSentence]) -> StanceLabel:
    """The side of the passage's most confident counted sentence (``not enough info`` if none)."""
    best, label = -1.0, NOT_ENOUGH_INFO
    for s in sentences:
        if s.stance == NOT_ENOUGH_INFO:
            continue
        p = s.probabilities[STANCE_LABELS.index(s.stance)]
        if p > best:
            best, label = p, s.stance
    return label


def days_between(published: dt.date | None, claim_date: dt.date | None) -> int | None:
    """``published - claim_date`` in days, ``None`` when either is unknown."""
    return (published - claim_date).days if published and claim_date else None
