"""Learned fusion: weighted CombSUM / CombMAX over min-max normalised sub-query scores.

Each sub-query ranking gets a weight from its place in the plan: the claim itself (query id
= claim id) gets ``claim_weight``; the n-th sub-query gets ``decay ** (n - 1)``, so planners
that put their best queries first can be trusted more. ``fit`` picks the combination, the
claim weight and the decay by grid search maximising a measure on training claims, the
simplest learner that can find "trust the claim more" or "later sub-queries are noise";
weights are saved as JSON.

The shipped ``learned_weights.json`` (what ``--fusion learned`` uses without ``--fusion-weights``)
was fitted for nDCG@10 on the ``decompose`` plans of the AVeriTeC train claims, BM25 over their
gold-answer pool (the settings are in the file; the cross-validated comparison is in
docs/results.md, Table B). Refit with ``benchmarks/query_planning.py --save-learned``.
"""

from __future__ import annotations

import itertools
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from factscout.errors import InputError
from factscout.fuse.comb_max import comb_max
from factscout.fuse.comb_sum import comb_sum
from factscout.records import Ranking

COMBINES = ("sum", "max")
DEFAULT_WEIGHTS = Path(__file__).with_name("learned_weights.json")
_POSITION = re.compile(r"#(\d+)$")


@dataclass(frozen=True, slots=True)
class LearnedFusion:
    combine: str = "sum"
    claim_weight: float = 1.0
    decay: float = 1.0
    normalize: str | None = "minmax"

    def __post_init__(self) -> None:
        if self.combine not in COMBINES:
            raise InputError(f"unknown combination {self.combine!r}; known: {', '.join(COMBINES)}")
        if self.claim_weight < 0 or not 0 < self.decay <= 1:
            raise InputError(f"learned fusion needs claim_weight >= 0 and 0 < decay <= 1, got {self}")

    def weight(self, ranking: Ranking, claim_id: str) -> float:
        if ranking.query_id == claim_id:
            return self.claim_weight
        m = _POSITION.search(ranking.query_id)
        return float(self.decay ** (int(m[1]) - 1)) if m else 1.0

    def __call__(self, rankings: Sequence[Ranking], *, query_id: str | None = None) -> Ranking:
        claim_id = query_id if query_id is not None else (rankings[0].query_id.split("#")[0] if rankings else "")
        weights = [self.weight(r, claim_id) for r in rankings]
        fuse = comb_sum if self.combine == "sum" else comb_max
        return fuse(rankings, normalize=self.normalize, weights=weights, query_id=claim_id)

    def save(self, path: str | os.PathLike[str]) -> None:
        Path(path).write_text(json.dumps(asdict(self), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str] = DEFAULT_WEIGHTS) -> LearnedFusion:
        try:
            return cls(**json.loads(Path(path).read_text()))
        except (OSError, ValueError, TypeError) as exc:
            raise InputError(f"cannot read fusion weights from {path}: {exc}") from None

    @classmethod
    def fit(
        cls,
        grouped: Mapping[str, Sequence[Ranking]],
        qrels: Mapping[str, Mapping[str, int]],
        *,
        measure: str = "nDCG@10",
        claim_weights: Sequence[float] = (0.5, 1.0, 1.5, 2.0, 3.0),
        decays: Sequence[float] = (1.0, 0.9, 0.8, 0.6),
        depth: int = 100,
    ) -> tuple[LearnedFusion, float]:
        """Grid-search the weights on ``grouped`` (claim id -> its sub-query rankings)."""
        from factscout.evaluate import evaluate

        if not grouped:
            raise InputError("no training rankings to fit fusion weights on")
        best: tuple[float, LearnedFusion] | None = None
        for combine, cw, decay in itertools.product(COMBINES, claim_weights, decays):
            candidate = cls(combine, cw, decay)
            fused = [candidate(rs, query_id=cid).top(depth) for cid, rs in grouped.items()]
            score = evaluate(qrels, fused, [measure]).mean(measure)
            if best is None or score > best[0] + 1e-12:
                best = (score, candidate)
        assert best is not None
        return best[1], best[0]
