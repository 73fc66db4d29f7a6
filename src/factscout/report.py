"""The Report: everything ``factscout check`` found for one claim, and how it found it.

A :class:`Report` is the one result record of the check pipeline (plan -> retrieve -> fuse ->
re-rank -> select -> stance -> verdict). The CLI writes it as JSON lines, the HTTP API returns
it and the web page renders it, all from :meth:`Report.to_dict`, whose layout is a contract:

.. code-block:: text

    {
      "format": "factscout-report/1",
      "claim_id": str, "claim": str, "date": "YYYY-MM-DD" | null,
      "queries": [{"query_id", "text", "origin"}],          # the plan, claim first
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
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from factscout.errors import InputError
from factscout.records import STANCE_LABELS, VERDICT_LABELS, Claim, Query, StanceLabel, VerdictLabel

FORMAT = "factscout-report/1"
STANCES = STANCE_LABELS  # the names this module always exported
VERDICTS = VERDICT_LABELS


@dataclass(frozen=True, slots=True)
class EvidenceSentence:
    """A highlighted sentence of an evidence passage with its stance towards the claim."""

    index: int
    text: str
    score: float
    stance: StanceLabel
    probabilities: tuple[float, float, float]


@dataclass(frozen=True, slots=True)
class Evidence:
    """One retrieved passage shown as evidence, with where it came from and what it says."""

    passage_id: str
    doc_id: str
    title: str
    url: str | None
    published: dt.date | None
    rank: int
    score: float
    found_by: tuple[str, ...]
    stance: StanceLabel
    sentences: tuple[EvidenceSentence, ...] = ()
    days_from_claim: int | None = None

    def __post_init__(self) -> None:
        if self.stance not in STANCES:
            raise InputError(f"evidence stance {self.stance!r} is not one of {', '.join(STANCES)}")

    @property
    def after_claim(self) -> bool:
        """Published on or after the claim's date (possible leakage of the verdict)."""
        return self.days_from_claim is not None and self.days_from_claim >= 0


@dataclass(frozen=True, slots=True)
class VerdictSummary:
    """The verdict with the sentence counts behind it and the rule or model that gave it."""

    label: VerdictLabel
    method: str
    reason: str
    supporting: int
    refuting: int
    neutral: int
    confidence: float | None = None  # calibrated P(the definite call is right), kept when abstaining
    call: VerdictLabel | None = None  # the method's own verdict before abstaining (None given: label)
    abstention: str | None = None  # why the verdict is not definite (None for a definite one)

    def __post_init__(self) -> None:
        for label in (self.label, self.call):
            if label is not None and label not in VERDICTS:
                raise InputError(f"verdict label {label!r} is not one of {', '.join(VERDICTS)}")
        if self.call is None:
            object.__setattr__(self, "call", self.label)  # frozen: set once, here

    @property
    def abstained(self) -> bool:
        """Whether factscout withheld the method's definite call (its confidence was too low)."""
        return self.call is not None and self.call != self.label


@dataclass(frozen=True, slots=True)
class Report:
    """What ``check`` found for one claim; :meth:`to_dict` is the documented JSON layout."""

    claim: Claim
    queries: tuple[Query, ...]
    evidence: tuple[Evidence, ...]
    verdict: VerdictSummary
    provenance: Mapping[str, Any] = field(default_factory=dict)

    def grouped(self) -> dict[str, list[Evidence]]:
        """Evidence by stance, best first within each group."""
        out: dict[str, list[Evidence]] = {s: [] for s in STANCES}
        for e in self.evidence:
            out[e.stance].append(e)
        return out

    def timeline(self) -> list[Evidence]:
        """Dated evidence, oldest first (ties by rank)."""
        return sorted((e for e in self.evidence if e.published), key=lambda e: (e.published, e.rank))

    def leakage(self) -> float:
        """Share of dated evidence published on or after the claim date (0 when none is dated)."""
        dated = [e for e in self.evidence if e.days_from_claim is not None]
        return sum(e.after_claim for e in dated) / len(dated) if dated else 0.0

    def to_dict(self) -> dict[str, Any]:
        c = self.claim
        return {
            "format": FORMAT,
            "claim_id": c.claim_id,
            "claim": c.text,
            "date": _iso(c.date),
            "queries": [{"query_id": q.query_id, "text": q.text, "origin": q.origin} for q in self.queries],
            "evidence": [_evidence_dict(e) for e in self.evidence],
            "verdict": {
                "label": self.verdict.label,
                "method": self.verdict.method,
                "reason": self.verdict.reason,
                "counts": {
                    "supporting": self.verdict.supporting,
                    "refuting": self.verdict.refuting,
                    "neutral": self.verdict.neutral,
                },
                "confidence": self.verdict.confidence,
                "call": self.verdict.call,
                "abstention": self.verdict.abstention,
            },
            "timeline": [
                {
                    "passage_id": e.passage_id,
                    "published": _iso(e.published),
                    "days_from_claim": e.days_from_claim,
                    "after_claim": e.after_claim,
                }
                for e in self.timeline()
            ],
            "leakage": {
                "dated": sum(e.days_from_claim is not None for e in self.evidence),
                "after_claim": sum(e.after_claim for e in self.evidence),
                "share": self.leakage(),
            },
            "provenance": dict(self.provenance),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Report:
        """Read back :meth:`to_dict` output (a clear error when it is not a factscout report)."""
        if not isinstance(d, Mapping) or d.get("format") != FORMAT:
            got = d.get("format") if isinstance(d, Mapping) else type(d).__name__
            raise InputError(f"not a {FORMAT} record (format: {got!r})")
        try:
            claim = Claim(d["claim_id"], d["claim"], _day(d.get("date")))
            queries = tuple(
                Query(q["query_id"], claim.claim_id, q["text"], q["origin"], claim.date) for q in d["queries"]
            )
            evidence = tuple(
                Evidence(
                    passage_id=e["passage_id"],
                    doc_id=e["doc_id"],
                    title=e["title"],
                    url=e["url"],
                    published=_day(e["published"]),
                    rank=int(e["rank"]),
                    score=float(e["score"]),
                    found_by=tuple(e["found_by"]),
                    stance=e["stance"],
                    sentences=tuple(
                        EvidenceSentence(s["index"], s["text"], s["score"], s["stance"], tuple(s["probabilities"]))
                        for s in e["sentences"]
                    ),
                    days_from_claim=e["days_from_claim"],
                )
                for e in d["evidence"]
            )
            v, counts = d["verdict"], d["verdict"]["counts"]
            confidence = v.get("confidence")
            verdict = VerdictSummary(
                v["label"],
                v["method"],
                v["reason"],
                counts["supporting"],
                counts["refuting"],
                counts["neutral"],
                confidence=None if confidence is None else float(confidence),
                call=v.get("call"),
                abstention=v.get("abstention"),
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"malformed {FORMAT} record for claim {d.get('claim_id')!r}: {exc!r}") from exc
        return cls(claim, queries, evidence, verdict, dict(d.get("provenance", {})))


def _evidence_dict(e: Evidence) -> dict[str, Any]:
    return {
        "passage_id": e.passage_id,
        "doc_id": e.doc_id,
        "title": e.title,
        "url": e.url,
        "published": _iso(e.published),
        "days_from_claim": e.days_from_claim,
        "after_claim": e.after_claim,
        "rank": e.rank,
        "score": e.score,
        "found_by": list(e.found_by),
        "stance": e.stance,
        "sentences": [
            {
                "index": s.index,
                "text": s.text,
                "score": s.score,
                "stance": s.stance,
                "probabilities": list(s.probabilities),
            }
            for s in e.sentences
        ],
    }


def _iso(day: dt.date | None) -> str | None:
    return day.isoformat() if day else None


def _day(text: str | None) -> dt.date | None:
    return dt.date.fromisoformat(text) if text else None


def days_between(published: dt.date | None, claim_date: dt.date | None) -> int | None:
    """``published - claim_date`` in days, ``None`` when either is unknown."""
    return (published - claim_date).days if published and claim_date else None
