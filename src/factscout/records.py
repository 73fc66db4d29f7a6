"""Typed, frozen records that flow between the pipeline stages, and the label vocabularies.

``Claim -> Query -> Ranking(Hit...) -> Sentence -> Stance -> Verdict``; the report
(:mod:`factscout.report`) groups them per claim. Ids are explicit strings given by the data,
never derived from mutable fields. The stance and verdict labels are ``Literal`` types defined
here once; every step, the report and the models' files use these strings.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from factscout.errors import InputError

StanceLabel = Literal["supports", "refutes", "not enough info"]
"""The stance of an evidence sentence towards a claim."""
SUPPORTS: StanceLabel = "supports"
REFUTES: StanceLabel = "refutes"
NOT_ENOUGH_INFO: StanceLabel = "not enough info"
STANCE_LABELS: tuple[StanceLabel, StanceLabel, StanceLabel] = (SUPPORTS, REFUTES, NOT_ENOUGH_INFO)
"""The stance classes, in the order of :attr:`Stance.probabilities`."""

VerdictLabel = Literal["supported", "refuted", "not enough evidence", "conflicting"]
"""The verdict on a claim."""
SUPPORTED: VerdictLabel = "supported"
REFUTED: VerdictLabel = "refuted"
NOT_ENOUGH_EVIDENCE: VerdictLabel = "not enough evidence"
CONFLICTING: VerdictLabel = "conflicting"
VERDICT_LABELS: tuple[VerdictLabel, ...] = (SUPPORTED, REFUTED, NOT_ENOUGH_EVIDENCE, CONFLICTING)
"""Every verdict a report can carry (the count rule gives the first three, the classifier all four)."""
RULE_VERDICT_LABELS: tuple[VerdictLabel, VerdictLabel, VerdictLabel] = (SUPPORTED, REFUTED, NOT_ENOUGH_EVIDENCE)
"""The verdicts of the Quin+ count rule (and of SciFact's gold labels), over which it is scored."""


def _require_id(kind: str, value: object) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(f"{kind} must be a non-empty string, got {value!r}")
    return value


def _require_date(kind: str, value: object) -> None:
    if value is not None and not (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        raise InputError(f"{kind} must be a datetime.date or None, got {value!r}")


@dataclass(frozen=True, slots=True)
class Claim:
    """A claim to check, with the date it was made when known."""

    claim_id: str
    text: str
    date: dt.date | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def __post_init__(self) -> None:
        _require_id("claim_id", self.claim_id)
        if not isinstance(self.text, str) or not self.text.strip():
            raise InputError(f"claim {self.claim_id!r} has empty text")
        _require_date(f"claim {self.claim_id!r} date", self.date)


@dataclass(frozen=True, slots=True)
class Passage:
    """A retrievable unit of text: a whole document or a window of its sentences."""

    passage_id: str
    doc_id: str
    title: str
    text: str
    published: dt.date | None = None
    url: str | None = None

    def __post_init__(self) -> None:
        _require_id("passage_id", self.passage_id)
        _require_id(f"passage {self.passage_id!r} doc_id", self.doc_id)
        _require_date(f"passage {self.passage_id!r} published", self.published)

    @property
    def contents(self) -> str:
        """Title and text as one string, the way retrievers index a passage."""
        return f"{self.title}\n{self.text}" if self.title else self.text


@dataclass(frozen=True, slots=True)
class Query:
    """A search query issued for a claim; ``origin`` says which planner or edit produced it."""

    query_id: str
    claim_id: str
    text: str
    origin: str = "claim"
    date: dt.date | None = None

    def __post_init__(self) -> None:
        _require_id("query_id", self.query_id)
        _require_id(f"query {self.query_id!r} claim_id", self.claim_id)
        if not isinstance(self.text, str) or not self.text.strip():
            raise InputError(f"query {self.query_id!r} has empty text")
        _require_date(f"query {self.query_id!r} date", self.date)

    @classmethod
    def for_claim(cls, claim: Claim) -> Query:
        """The claim itself as its only query (the 'claim-only' plan)."""
        return cls(claim.claim_id, claim.claim_id, claim.text, "claim", claim.date)


@dataclass(frozen=True, slots=True)
class Hit:
    """One retrieved passage: its score, 1-based rank and the query ids that found it."""

    passage_id: str
    score: float
    rank: int = 0
    found_by: tuple[str, ...] = ()


class PassageLookup(Protocol):
    """Passages by id: a ``dict`` or a retriever's passage store (``store[passage_id]``)."""

    def __getitem__(self, passage_id: str, /) -> Passage: ...

    def __contains__(self, passage_id: object, /) -> bool: ...


@dataclass(frozen=True, slots=True)
class DateFilterStats:
    """What a ``published_before`` filter did to the candidate pool of one query."""

    published_before: dt.date
    undated_policy: str
    allowed: int
    excluded_late: int
    undated_kept: int
    undated_dropped: int


class Ranking:
    """The hits for one query, always sorted by ``(-score, passage_id)`` with ranks 1..n.

    The order is fixed here, inside the type, so every metric and every fusion sees the same
    tie order. A ranking is immutable. It keeps passage ids, scores and finders as parallel
    sequences and builds :class:`Hit` records only when ``hits`` is read: a search engine
    returns thousands of rankings of 100 hits, and creating 100 objects per query would cost
    more than the search itself (benchmarks/retrieval_speed.py).

    ``missing_shards`` names the shards of a sharded index that could not answer (after their
    actors were restarted and the query retried): such a ranking is ``partial``, never silently
    shorter. It is empty for every other retriever.
    """

    __slots__ = ("_finders", "_hits", "_ids", "_scores", "date_filter", "missing_shards", "query_id")
    query_id: str
    date_filter: DateFilterStats | None
    _ids: tuple[str, ...]
    _scores: Sequence[float]
    _finders: tuple[str, ...] | Sequence[tuple[str, ...]]
    _hits: tuple[Hit, ...] | None
    missing_shards: tuple[str, ...]

    def __init__(
        self,
        query_id: str,
        hits: Iterable[Hit] = (),
        date_filter: DateFilterStats | None = None,
        *,
        missing_shards: Sequence[str] = (),
    ) -> None:
        ordered = sorted(hits, key=lambda h: (-h.score, h.passage_id))
        ids = tuple(h.passage_id for h in ordered)
        if len(set(ids)) != len(ids):
            dup = next(pid for i, pid in enumerate(ids) if pid in ids[:i])
            raise InputError(f"ranking {query_id!r} lists passage {dup!r} twice")
        self._init(
            query_id,
            ids,
            tuple(float(h.score) for h in ordered),
            tuple(h.found_by for h in ordered),
            date_filter,
            tuple(missing_shards),
        )

    def _init(
        self,
        query_id: str,
        ids: Sequence[str],
        scores: Sequence[float],
        finders: tuple[str, ...] | Sequence[tuple[str, ...]],
        date_filter: DateFilterStats | None,
        missing_shards: tuple[str, ...] = (),
    ) -> None:
        for name, value in (
            ("query_id", query_id),
            ("_ids", ids if isinstance(ids, tuple) else tuple(ids)),
            ("_scores", scores),
            ("_finders", finders),
            ("date_filter", date_filter),
            ("missing_shards", missing_shards),
            ("_hits", None),
        ):
            object.__setattr__(self, name, value)

    @classmethod
    def from_sorted(
        cls,
        query_id: str,
        passage_ids: Sequence[str],
        scores: Sequence[float],
        found_by: tuple[str, ...],
        date_filter: DateFilterStats | None = None,
        *,
        missing_shards: Sequence[str] = (),
    ) -> Ranking:
        """Trusted fast path for engines: ids unique and already in ``(-score, passage_id)`` order,
        every hit found by ``found_by``."""
        ranking = cls.__new__(cls)
        ranking._init(query_id, passage_ids, scores, found_by, date_filter, tuple(missing_shards))
        return ranking

    @classmethod
    def from_scores(
        cls,
        query_id: str,
        scores: Mapping[str, float] | Iterable[tuple[str, float]],
        *,
        found_by: tuple[str, ...] | None = None,
        k: int | None = None,
        date_filter: DateFilterStats | None = None,
    ) -> Ranking:
        """Build a ranking from passage scores, keeping the top ``k`` under the tie rule."""
        items = scores.items() if isinstance(scores, Mapping) else scores
        by = (query_id,) if found_by is None else found_by
        pairs = sorted(((float(s), pid) for pid, s in items), key=lambda t: (-t[0], t[1]))
        if k is not None:
            pairs = pairs[:k]
        ids = [pid for _, pid in pairs]
        if len(set(ids)) != len(ids):
            raise InputError(f"ranking {query_id!r} lists a passage twice")
        return cls.from_sorted(query_id, ids, [s for s, _ in pairs], by, date_filter)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Ranking is immutable; cannot set {name!r}")

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        """Pickle support (rankings travel between processes, e.g. from Ray shard actors)."""
        return _restore_ranking, (
            self.query_id,
            tuple(self._ids),
            tuple(self._scores),
            self._finders,
            self.date_filter,
            self.missing_shards,
        )

    @property
    def hits(self) -> tuple[Hit, ...]:
        if self._hits is None:
            finders = self._finders
            shared = not finders or isinstance(finders[0], str)
            per_hit = [finders] * len(self._ids) if shared else finders
            hits = tuple(
                Hit(pid, float(s), i, f)  # type: ignore[arg-type]
                for i, (pid, s, f) in enumerate(zip(self._ids, self._scores, per_hit, strict=True), 1)
            )
            object.__setattr__(self, "_hits", hits)
            return hits
        return self._hits

    @property
    def passage_ids(self) -> tuple[str, ...]:
        """The passage ids, best first (an immutable tuple)."""
        return self._ids

    def scores_in_order(self) -> tuple[float, ...]:
        """The scores, best first, parallel to :attr:`passage_ids` (an immutable tuple)."""
        return tuple(self._scores)

    def score_of(self, passage_id: str) -> float:
        """The score of ``passage_id`` (an :class:`InputError` if it is not in the ranking)."""
        try:
            return float(self._scores[self._ids.index(passage_id)])
        except ValueError:
            raise InputError(f"passage {passage_id!r} is not in ranking {self.query_id!r}") from None

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ranking):
            return NotImplemented
        return (self.query_id, self.hits, self.date_filter, self.missing_shards) == (
            other.query_id,
            other.hits,
            other.date_filter,
            other.missing_shards,
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        head = ", ".join(f"{pid}:{s:.3g}" for pid, s in zip(self._ids[:3], self._scores[:3], strict=True))
        missing = f", partial: shards {', '.join(self.missing_shards)} missing" if self.missing_shards else ""
        return f"Ranking({self.query_id!r}, {len(self)} hits: {head}{', ...' if len(self) > 3 else ''}{missing})"

    @property
    def partial(self) -> bool:
        """True when some shards of a sharded index did not answer (``missing_shards``)."""
        return bool(self.missing_shards)

    def scores(self) -> dict[str, float]:
        return {pid: float(s) for pid, s in zip(self._ids, self._scores, strict=True)}

    def top(self, k: int) -> Ranking:
        finders = self._finders if not self._finders or isinstance(self._finders[0], str) else self._finders[:k]
        return Ranking.from_sorted(
            self.query_id,
            self._ids[:k],
            self._scores[:k],
            finders,  # type: ignore[arg-type]
            self.date_filter,
            missing_shards=self.missing_shards,
        )


def _restore_ranking(
    query_id: str,
    ids: Sequence[str],
    scores: Sequence[float],
    finders: tuple[str, ...] | Sequence[tuple[str, ...]],
    date_filter: DateFilterStats | None,
    missing_shards: tuple[str, ...],
) -> Ranking:
    ranking = Ranking.__new__(Ranking)
    ranking._init(query_id, ids, scores, finders, date_filter, missing_shards)
    return ranking


# --- evidence, stance and verdict ------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sentence:
    """A sentence selected from a passage as candidate evidence for a claim.

    ``index`` is the sentence's 0-based position in its passage; ``score`` is the selector's
    score (cosine similarity to the claim for :class:`~factscout.select.threshold.ThresholdSelector`).
    """

    passage_id: str
    index: int
    text: str
    score: float = 0.0

    def __post_init__(self) -> None:
        if not isinstance(self.passage_id, str):
            raise InputError(f"sentence passage_id must be a string, got {self.passage_id!r}")
        if not isinstance(self.index, int) or self.index < 0:
            raise InputError(f"sentence index must be a non-negative int, got {self.index!r}")
        if not isinstance(self.text, str):
            raise InputError(f"sentence text must be a string, got {self.text!r}")


@dataclass(frozen=True, slots=True)
class Stance:
    """The stance of one evidence sentence towards a claim, with the three class probabilities
    in :data:`STANCE_LABELS` order (supports, refutes, not enough info)."""

    passage_id: str
    sentence_index: int
    label: StanceLabel
    probabilities: tuple[float, float, float]

    def __post_init__(self) -> None:
        if self.label not in STANCE_LABELS:
            raise InputError(f"stance label {self.label!r} is not one of {', '.join(STANCE_LABELS)}")
        if len(self.probabilities) != 3:
            raise InputError(f"a stance needs 3 probabilities, got {self.probabilities!r}")

    @property
    def confidence(self) -> float:
        """The probability of the predicted label."""
        return float(self.probabilities[STANCE_LABELS.index(self.label)])


@dataclass(frozen=True, slots=True)
class Verdict:
    """A claim's verdict with the stances behind it, grouped by side, and a readable reason.

    ``supporting``/``refuting`` hold the confident stances that were counted; ``neutral`` the
    rest (not-enough-info stances and stances below the confidence threshold). ``method`` names
    the verdict method that gave ``label`` (the report shows it).

    Set by the check pipeline's abstention step (:mod:`factscout.verify.confidence`):
    ``confidence``, the calibrated probability that the definite call (``call``) is right (``None``
    when there was no definite call or no confidence model); ``call``, the method's own verdict
    before abstaining (``None``: not recorded, read as ``label``); ``abstention``, why the verdict
    is not a definite call ("low confidence 0.41 (< 0.55): would have been supported", "no
    evidence found"...), ``None`` for a definite one.
    """

    label: VerdictLabel
    supporting: tuple[Stance, ...]
    refuting: tuple[Stance, ...]
    neutral: tuple[Stance, ...]
    reason: str
    method: str = ""
    confidence: float | None = None
    call: VerdictLabel | None = None
    abstention: str | None = None

    def __post_init__(self) -> None:
        for label in (self.label, self.call):
            if label is not None and label not in VERDICT_LABELS:
                raise InputError(f"verdict label {label!r} is not one of {', '.join(VERDICT_LABELS)}")
        if self.confidence is not None and not 0.0 <= self.confidence <= 1.0:
            raise InputError(f"a verdict confidence is a probability in [0, 1], got {self.confidence!r}")
