"""CombMAX (Fox & Shaw 1994), optionally over min-max normalised scores.

QuanTemp++ (Prabhu 2025) finds CombMAX over min-max normalised sub-query scores the best way
to aggregate the results of a numerical claim's sub-queries.
"""

from __future__ import annotations

from collections.abc import Sequence

from factscout.errors import InputError
from factscout.fuse.base import normalized, plan_order
from factscout.records import Hit, Ranking


def comb_max(
    rankings: Sequence[Ranking],
    *,
    normalize: str | None = "minmax",
    weights: Sequence[float] | None = None,
    query_id: str | None = None,
) -> Ranking:
    """Score each passage by its best (normalised, weighted) score over the rankings containing it.

    ``weights`` align with ``rankings`` as given.
    """
    if weights is not None and len(weights) != len(rankings):
        raise InputError(f"{len(weights)} weights given for {len(rankings)} rankings")
    weight_of = {id(r): w for r, w in zip(rankings, weights or [1.0] * len(rankings), strict=True)}
    ordered = plan_order(rankings)
    runs = normalized(ordered, normalize)
    best: dict[str, float] = {}
    finders: dict[str, set[str]] = {}
    for original, ranking in zip(ordered, runs, strict=True):
        w = weight_of[id(original)]
        for hit in ranking.hits:
            score = w * hit.score
            if hit.passage_id not in best or score > best[hit.passage_id]:
                best[hit.passage_id] = score
            finders.setdefault(hit.passage_id, set()).update(hit.found_by or (ranking.query_id,))
    qid = query_id if query_id is not None else (runs[0].query_id if runs else "")
    return Ranking(qid, tuple(Hit(pid, s, 0, tuple(sorted(finders[pid]))) for pid, s in best.items()))
