"""The QuanTemp++ query filter: keep sub-queries that are relevant to the claim and not redundant.

score(q) = alpha * MMR(q, claim, lambda) + (1 - alpha) * MMR(q, justification, lambda);
q is kept when score(q) > gamma (defaults alpha=0.8, lambda=0.4, gamma=0.4).

MMR (Carbonell & Goldstein 1998) is computed greedily: queries are selected in order of their
score, and each one's redundancy is its highest cosine similarity to the queries selected
before it. ``lambda`` weighs redundancy: MMR(q, ref) = (1 - lambda) * sim(q, ref) -
lambda * max sim(q, selected). (Read the other way round, with lambda weighing relevance, no
score could exceed lambda = 0.4 and the default threshold gamma = 0.4 would reject every
query.) Without a justification, alpha is taken as 1. The best query is always kept, and the
claim query itself (when the plan includes it) is never filtered. ``filter_plans`` applies the
filter to the plans of many claims at once (what ``factscout plan --mmr`` does).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

import numpy as np

from factscout.errors import InputError
from factscout.records import Claim, Query

Embed = Callable[[Sequence[str]], np.ndarray]


def _default_embed() -> Embed:
    from factscout.text.encoder import Encoder

    encoder = Encoder()
    return encoder.encode


class MmrFilter:
    def __init__(self, alpha: float = 0.8, lam: float = 0.4, gamma: float = 0.4, embed: Embed | None = None) -> None:
        if not (0 <= alpha <= 1 and 0 <= lam <= 1):
            raise InputError(f"MMR filter needs 0 <= alpha, lambda <= 1, got alpha={alpha}, lambda={lam}")
        self.alpha, self.lam, self.gamma = alpha, lam, gamma
        self._embed = embed

    @property
    def embed(self) -> Embed:
        if self._embed is None:
            self._embed = _default_embed()
        return self._embed

    def scores(self, claim: Claim, queries: Sequence[Query], justification: str | None = None) -> dict[str, float]:
        """Greedy MMR score of each sub-query (the claim query itself is not scored)."""
        subs = [q for q in queries if q.query_id != claim.claim_id]
        if not subs:
            return {}
        refs = [claim.text] + ([justification] if justification else [])
        vecs = self.embed([*refs, *[q.text for q in subs]])
        ref_vecs, q_vecs = vecs[: len(refs)], vecs[len(refs) :]
        rel = q_vecs @ ref_vecs.T  # (n_queries, 1 or 2)
        alpha = self.alpha if justification else 1.0
        selected: list[int] = []
        scores: dict[str, float] = {}
        remaining = list(range(len(subs)))
        while remaining:
            red = (q_vecs[remaining] @ q_vecs[selected].T).max(axis=1) if selected else np.zeros(len(remaining))
            mmr = (1 - self.lam) * rel[remaining] - self.lam * red[:, None]
            combined = alpha * mmr[:, 0] + ((1 - alpha) * mmr[:, 1] if mmr.shape[1] > 1 else 0.0)
            pick = int(np.argmax(combined))
            idx = remaining.pop(pick)
            scores[subs[idx].query_id] = float(combined[pick])
            selected.append(idx)
        return scores

    def filter(self, claim: Claim, queries: Sequence[Query], justification: str | None = None) -> list[Query]:
        scores = self.scores(claim, queries, justification)
        if not scores:
            return list(queries)
        best = max(scores, key=lambda qid: scores[qid])
        return [q for q in queries if q.query_id not in scores or scores[q.query_id] > self.gamma or q.query_id == best]

    def filter_plans(
        self, claims: Iterable[Claim], queries: Sequence[Query], *, justification: bool = False
    ) -> list[Query]:
        """Filter each claim's queries; ``justification`` also scores against ``meta["justification"]``.

        ``queries`` are grouped by ``claim_id``; claims come out in the order their first query appears.
        """
        by_claim = {c.claim_id: c for c in claims}
        grouped: dict[str, list[Query]] = {}
        for q in queries:
            grouped.setdefault(q.claim_id, []).append(q)
        return [
            q
            for cid, qs in grouped.items()
            for q in self.filter(by_claim[cid], qs, by_claim[cid].meta.get("justification") if justification else None)
        ]
