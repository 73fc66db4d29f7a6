"""Score normalisation applied to each ranking before score-based fusion.

A :class:`Normaliser` maps a ranking to one with the same hits and rescaled scores; the fusions
look them up by name in :data:`NORMALISERS` (``combsum-norm`` is CombSUM over ``minmax``).
"""

from __future__ import annotations

from typing import Protocol

from factscout.records import Hit, Ranking
from factscout.registry import Registry


class Normaliser(Protocol):
    """Rescales the scores of one ranking, keeping its hits, finders and date-filter record."""

    def __call__(self, ranking: Ranking) -> Ranking: ...


NORMALISERS: Registry[Normaliser] = Registry("normalisation")


@NORMALISERS.register("minmax")
def min_max(ranking: Ranking) -> Ranking:
    """Min-max normalise scores into [0, 1] (Lee 1997).

    A ranking with one hit, or with all scores equal, gives every hit 1.0: each is the best the
    query found, and no division by zero happens.
    """
    if not ranking.hits:
        return ranking
    scores = [h.score for h in ranking.hits]
    lo, hi = min(scores), max(scores)
    span = hi - lo
    return Ranking(
        ranking.query_id,
        tuple(Hit(h.passage_id, (h.score - lo) / span if span > 0 else 1.0, h.rank, h.found_by) for h in ranking.hits),
        ranking.date_filter,
    )
