"""CombSUM (Fox & Shaw 1994), optionally over min-max normalised, weighted scores."""

from __future__ import annotations

from collections.abc import Sequence

from factscout.errors import InputError
from factscout.fuse.base import accumulate, normalized
from factscout.records import Ranking


def comb_sum(
    rankings: Sequence[Ranking],
    *,
    normalize: str | None = "minmax",
    weights: Sequence[float] | None = None,
    query_id: str | None = None,
) -> Ranking:
    """Sum each passage's (normalised, weighted) scores over the rankings that contain it.

    With two rankings, ``normalize="minmax"`` and ``weights=(alpha, 1 - alpha)`` this is the
    normalised linear combination used for hybrid sparse + dense retrieval.
    """
    if weights is not None and len(weights) != len(rankings):
        raise InputError(f"{len(weights)} weights given for {len(rankings)} rankings")
    w = list(weights) if weights is not None else [1.0] * len(rankings)
    runs = normalized(rankings, normalize)
    weight_of = {id(r): w[i] for i, r in enumerate(runs)}
    return accumulate(runs, lambda r, hit: weight_of[id(r)] * hit.score, query_id=query_id)
