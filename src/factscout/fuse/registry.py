"""Fusion methods by name, as the CLI and configs spell them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from factscout.fuse.comb_max import comb_max
from factscout.fuse.comb_sum import comb_sum
from factscout.fuse.concat import concat
from factscout.fuse.learned import DEFAULT_WEIGHTS, LearnedFusion
from factscout.fuse.rrf import rrf
from factscout.fuse.top1 import top1
from factscout.records import Query, Ranking
from factscout.registry import Registry

Fusion = Callable[[Sequence[Ranking], str], Ranking]
FUSIONS: Registry[Callable[..., Fusion]] = Registry("fusion")


def _plain(fn: Callable[..., Ranking], **options: object) -> Callable[..., Fusion]:
    def make() -> Fusion:
        return lambda rankings, query_id: fn(rankings, query_id=query_id, **options)

    return make


FUSIONS.register("top1")(_plain(top1))
FUSIONS.register("concat")(_plain(concat))
FUSIONS.register("combsum")(_plain(comb_sum, normalize=None))
FUSIONS.register("combmax")(_plain(comb_max, normalize=None))
FUSIONS.register("combsum-norm")(_plain(comb_sum, normalize="minmax"))
FUSIONS.register("combmax-norm")(_plain(comb_max, normalize="minmax"))
FUSIONS.register("rrf")(_plain(rrf))


@FUSIONS.register("learned")
def _learned(weights: str | Path | None = None) -> Fusion:
    model = (
        LearnedFusion.load(weights or DEFAULT_WEIGHTS) if (weights or DEFAULT_WEIGHTS.is_file()) else LearnedFusion()
    )
    return lambda rankings, query_id: model(rankings, query_id=query_id)


def make_fusion(name: str, **options: object) -> Fusion:
    """The fusion called ``name`` as ``fuse(rankings, query_id) -> Ranking``."""
    return FUSIONS[name](**options)


def named_fusion(name: str, weights: str | Path | None = None) -> Fusion:
    """The fusion called ``name``; ``weights`` is the weights file of ``learned`` (ignored by the others)."""
    return make_fusion(name, weights=weights) if name == "learned" else make_fusion(name)


def fuse_by_claim(rankings: Sequence[Ranking], claim_of: dict[str, str], fusion: Fusion, k: int) -> list[Ranking]:
    """Group sub-query rankings by claim and fuse each group into one ranking keyed by claim id.

    Claims come out in the order their first query appears.
    """
    groups: dict[str, list[Ranking]] = {}
    for r in rankings:
        groups.setdefault(claim_of[r.query_id], []).append(r)
    return [fusion(group, claim_id).top(k) for claim_id, group in groups.items()]


def fuse_queries(
    rankings: Sequence[Ranking],
    queries: Sequence[Query],
    fusion: str | Fusion,
    k: int,
    *,
    weights: str | Path | None = None,
) -> list[Ranking]:
    """Fuse the rankings of each claim's sub-queries into one ranking per claim, keyed by claim id.

    ``queries`` name each ranking's claim (``query_id`` -> ``claim_id``); ``fusion`` is a fusion or
    its registered name (``weights``: the weights file of ``learned``).
    """
    fuse = named_fusion(fusion, weights) if isinstance(fusion, str) else fusion
    return fuse_by_claim(rankings, {q.query_id: q.claim_id for q in queries}, fuse, k)
