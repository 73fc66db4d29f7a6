"""TOP-1: the best hit of each sub-query (QuanTemp++).

Each sub-query contributes its top ``depth`` hits (1 in the paper); they are ranked by their
min-max normalised score, then by raw score. The fused ranking is as long as the number of
sub-queries (times ``depth``), which is the point of the method: one strong piece of evidence
per aspect of the claim.
"""

from __future__ import annotations

from collections.abc import Sequence

from factscout.errors import InputError
from factscout.fuse.base import plan_order
from factscout.fuse.normalize import min_max
from factscout.records import Hit, Ranking


def top1(rankings: Sequence[Ranking], *, depth: int = 1, query_id: str | None = None) -> Ranking:
    if depth < 1:
        raise InputError(f"TOP-1 depth must be >= 1, got {depth}")
    best: dict[str, tuple[float, float]] = {}
    finders: dict[str, set[str]] = {}
    runs = plan_order(rankings)
    for ranking in runs:
        for norm, raw in zip(min_max(ranking).hits[:depth], ranking.hits[:depth], strict=True):
            key = (norm.score, raw.score)
            if raw.passage_id not in best or key > best[raw.passage_id]:
                best[raw.passage_id] = key
            finders.setdefault(raw.passage_id, set()).update(raw.found_by or (ranking.query_id,))
    ordered = sorted(best.items(), key=lambda item: (-item[1][0], -item[1][1], item[0]))
    n = len(ordered)
    qid = query_id if query_id is not None else (runs[0].query_id if runs else "")
    return Ranking(
        qid, tuple(Hit(pid, float(n - i), 0, tuple(sorted(finders[pid]))) for i, (pid, _) in enumerate(ordered))
    )
