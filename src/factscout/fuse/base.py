"""Shared machinery of rank fusion: accumulate per-passage contributions, keep provenance."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from factscout.fuse.normalize import NORMALISERS
from factscout.records import Hit, Ranking


def _natural(query_id: str) -> list[object]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", query_id)]


def plan_order(rankings: Sequence[Ranking]) -> list[Ranking]:
    """Rankings in plan order: query ids compared naturally (``c1`` < ``c1#2`` < ``c1#10``)."""
    return sorted(rankings, key=lambda r: _natural(r.query_id))


def normalized(rankings: Sequence[Ranking], normalize: str | None) -> list[Ranking]:
    if normalize is None:
        return list(rankings)
    fn = NORMALISERS[normalize]  # an unknown name raises UnknownName listing the known ones
    return [fn(r) for r in rankings]


def accumulate(
    rankings: Sequence[Ranking],
    contribution: Callable[[Ranking, Hit], float],
    *,
    query_id: str | None = None,
) -> Ranking:
    """Sum ``contribution(ranking, hit)`` per passage; ``found_by`` unions every finder.

    The result does not depend on the order of ``rankings`` (sums are taken in a fixed order
    of the rankings' query ids, and provenance is sorted).
    """
    ordered = plan_order(rankings)
    scores: dict[str, float] = {}
    finders: dict[str, set[str]] = {}
    for ranking in ordered:
        for hit in ranking.hits:
            scores[hit.passage_id] = scores.get(hit.passage_id, 0.0) + contribution(ranking, hit)
            finders.setdefault(hit.passage_id, set()).update(hit.found_by or (ranking.query_id,))
    qid = query_id if query_id is not None else (ordered[0].query_id if ordered else "")
    return Ranking(qid, tuple(Hit(pid, s, 0, tuple(sorted(finders[pid]))) for pid, s in scores.items()))
