"""Rank fusion: combine the rankings of several queries (or retrievers) into one."""

from factscout.fuse.comb_sum import comb_sum
from factscout.fuse.normalize import min_max
from factscout.fuse.rrf import rrf

__all__ = ["comb_sum", "min_max", "rrf"]
