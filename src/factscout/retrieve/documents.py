"""From passage rankings to document rankings: MaxP (Dai & Callan 2019).

When long documents are indexed as sentence windows, qrels are usually per document. A
document's score is the best score of its passages; ``found_by`` is kept.
"""

from __future__ import annotations

from factscout.records import Hit, Ranking
from factscout.retrieve.base import PassageStore


def max_passage(ranking: Ranking, store: PassageStore, k: int | None = None) -> Ranking:
    best: dict[str, Hit] = {}
    for hit in ranking.hits:  # hits are in rank order, so the first passage seen is the best
        doc = store[hit.passage_id].doc_id
        if doc not in best:
            best[doc] = Hit(doc, hit.score, 0, hit.found_by)
    ranked = Ranking(ranking.query_id, tuple(best.values()), ranking.date_filter)
    return ranked.top(k) if k is not None else ranked
