"""Reciprocal Rank Fusion (Cormack, Clarke & Büttcher 2009)."""

from __future__ import annotations

from collections.abc import Sequence

from factscout.errors import InputError
from factscout.fuse.base import accumulate
from factscout.records import Ranking


def rrf(rankings: Sequence[Ranking], *, k: int = 60, query_id: str | None = None) -> Ranking:
    """Score each passage by ``sum(1 / (k + rank))`` over the rankings that contain it."""
    if k < 0:
        raise InputError(f"RRF k must be >= 0, got {k}")
    return accumulate(rankings, lambda r, hit: 1.0 / (k + hit.rank), query_id=query_id)
