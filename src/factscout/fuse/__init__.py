"""Rank fusion: combine the rankings of several queries (or retrievers) into one.

One file per method: TOP-1, CONCAT, CombSUM and CombMAX (each with or without min-max
normalisation), RRF, and learned weights; ``FUSIONS`` looks them up by name.
"""

from factscout.fuse.comb_max import comb_max
from factscout.fuse.comb_sum import comb_sum
from factscout.fuse.concat import concat
from factscout.fuse.learned import LearnedFusion
from factscout.fuse.normalize import NORMALISERS, Normaliser, min_max
from factscout.fuse.registry import FUSIONS, fuse_by_claim, fuse_queries, make_fusion, named_fusion
from factscout.fuse.rrf import rrf
from factscout.fuse.top1 import top1

__all__ = [
    "FUSIONS",
    "NORMALISERS",
    "LearnedFusion",
    "Normaliser",
    "comb_max",
    "comb_sum",
    "concat",
    "fuse_by_claim",
    "fuse_queries",
    "make_fusion",
    "min_max",
    "named_fusion",
    "rrf",
    "top1",
]
