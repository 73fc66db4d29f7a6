"""CONCAT: the sub-queries' result lists one after another, in plan order (QuanTemp++).

The first query's hits come first (in their order), then the new hits of the second query,
and so on; a passage found again later keeps its first place. Plan order is the order of the
query ids (``c1``, ``c1#1``, ``c1#2``, ... compared naturally), so the result does not depend
on the order the rankings are handed over in. Fused scores are descending rank positions.
"""

from __future__ import annotations

from collections.abc import Sequence

from factscout.fuse.base import plan_order
from factscout.records import Hit, Ranking


def concat(rankings: Sequence[Ranking], *, query_id: str | None = None) -> Ranking:
    order: list[str] = []
    finders: dict[str, set[str]] = {}
    runs = plan_order(rankings)
    for ranking in runs:
        for hit in ranking.hits:
            if hit.passage_id not in finders:
                order.append(hit.passage_id)
                finders[hit.passage_id] = set()
            finders[hit.passage_id].update(hit.found_by or (ranking.query_id,))
    n = len(order)
    qid = query_id if query_id is not None else (runs[0].query_id if runs else "")
    return Ranking(qid, tuple(Hit(pid, float(n - i), 0, tuple(sorted(finders[pid]))) for i, pid in enumerate(order)))
