"""Typed, frozen records that flow between the pipeline stages.

``Claim -> Query -> Ranking(Hit...)``; later stages add evidence, stance and verdict records.
Ids are explicit strings given by the data, never derived from mutable fields.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from factscout.errors import InputError


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


@dataclass(frozen=True, slots=True)
class DateFilterStats:
    """What a ``published_before`` filter did to the candidate pool of one query."""

    published_before: dt.date
    undated_policy: str
    allowed: int
    excluded_late: int
    undated_kept: int
    undated_dropped: int


@dataclass(frozen=True, slots=True)
class Ranking:
    """The hits for one query, always sorted by ``(-score, passage_id)`` with ranks 1..n.

    The order is fixed here, inside the type, so every metric and every fusion sees the same
    tie order.
    """

    query_id: str
    hits: tuple[Hit, ...] = ()
    date_filter: DateFilterStats | None = None

    def __post_init__(self) -> None:
        ordered = sorted(self.hits, key=lambda h: (-h.score, h.passage_id))
        seen: set[str] = set()
        ranked = []
        for rank, hit in enumerate(ordered, start=1):
            if hit.passage_id in seen:
                raise InputError(f"ranking {self.query_id!r} lists passage {hit.passage_id!r} twice")
            seen.add(hit.passage_id)
            ranked.append(hit if hit.rank == rank else Hit(hit.passage_id, hit.score, rank, hit.found_by))
        object.__setattr__(self, "hits", tuple(ranked))

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
        hits = sorted((Hit(pid, float(s), 0, by) for pid, s in items), key=lambda h: (-h.score, h.passage_id))
        return cls(query_id, tuple(hits[:k] if k is not None else hits), date_filter)

    def __len__(self) -> int:
        return len(self.hits)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.hits)

    def scores(self) -> dict[str, float]:
        return {h.passage_id: h.score for h in self.hits}

    def top(self, k: int) -> Ranking:
        return Ranking(self.query_id, self.hits[:k], self.date_filter)
