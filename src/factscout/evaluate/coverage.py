"""Sub-question coverage@k: the share of a claim's oracle sub-questions with at least one
relevant passage in the claim's fused top-k.

Recall counts passages; coverage counts aspects. A claim with three gold sub-questions whose
top-10 holds five answers to the first question and none to the other two has high recall of
that aspect but coverage 1/3. Claims with no judged sub-question are left out of the mean.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from factscout.records import Ranking

SubQrels = Mapping[str, Mapping[str, set[str] | frozenset[str]]]  # claim -> sub-question -> relevant ids


def coverage_at_k(rankings: Iterable[Ranking], subqrels: SubQrels, k: int) -> dict[str, float]:
    """Per-claim coverage@k (claims without a ranking score 0)."""
    top = {r.query_id: set(r.passage_ids[:k]) for r in rankings}
    out: dict[str, float] = {}
    for claim_id, questions in subqrels.items():
        judged = [rel for rel in questions.values() if rel]
        if not judged:
            continue
        found = top.get(claim_id, set())
        out[claim_id] = sum(1 for rel in judged if found & set(rel)) / len(judged)
    return out


def mean_coverage(rankings: Iterable[Ranking], subqrels: SubQrels, k: int) -> float:
    per_claim = coverage_at_k(rankings, subqrels, k)
    return sum(per_claim.values()) / len(per_claim) if per_claim else 0.0
