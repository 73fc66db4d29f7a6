"""The four temporal evidence rankings of Allein et al. (2021).

Allein, Augenstein, Moens. "Time-aware evidence ranking for fact-checking". Journal of Web
Semantics 71 (2021). Each method turns the evidence's Δt (publication date minus claim date, in
days; see :func:`~factscout.temporal.timestamps.delta_days`) into a relevance score, higher =
ranked higher, which then serves as the target permutation of a ListMLE ranking loss:

* **evidence-based date ranking** — the more recent the evidence, the higher: scores are the
  dense rank of Δt ascending (oldest 1).
* **claim-based date ranking** — the same over the evidence published on or before the claim
  date; evidence with Δt > 0 is excluded (score 0).
* **claim-centered distance ranking** — the closer to the claim date, the higher: dense rank of
  |Δt| descending (farthest 1).
* **evidence-centered distance ranking** — the closer to the evidence medoid, the higher: the
  medoid is the evidence with the smallest summed |Δt_i - Δt_j| over the other evidence (the
  first one on ties), and scores are the dense rank of the distance to it, descending.

Equal Δt give equal scores (dense ranks). Undated evidence (Δt ``None``) gets score 0 and is
masked out of the ranking loss, like excluded evidence. The paper's worked example,
Δt = (-3, 0, -8791, 95), gives (2, 3, 1, 4), (2, 3, 1, 0), (3, 4, 1, 2) and (4, 3, 1, 2).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from factscout.errors import InputError
from factscout.registry import Registry


@dataclass(frozen=True, slots=True)
class TemporalScores:
    """Scores of one evidence list under a temporal ranking, and which items the ranking covers.

    ``mask[i]`` is False for undated evidence and for evidence the method excludes; their
    ``scores[i]`` is 0."""

    method: str
    scores: tuple[int, ...]
    mask: tuple[bool, ...]


TemporalRanking = Callable[[Sequence[int | None]], TemporalScores]
RANKINGS: Registry[TemporalRanking] = Registry("temporal ranking")


def _dense_rank(keys: Sequence[float]) -> list[int]:
    """1 for the smallest key, equal keys share a rank, no gaps."""
    order = {k: i for i, k in enumerate(sorted(set(keys)), 1)}
    return [order[k] for k in keys]


def _scored(
    method: str, deltas: Sequence[int | None], keep: Sequence[bool], key: Callable[[int], float]
) -> TemporalScores:
    idx = [i for i, d in enumerate(deltas) if d is not None and keep[i]]
    ranks = _dense_rank([key(deltas[i]) for i in idx])  # type: ignore[arg-type]
    scores = [0] * len(deltas)
    for i, r in zip(idx, ranks, strict=True):
        scores[i] = r
    chosen = set(idx)
    return TemporalScores(method, tuple(scores), tuple(i in chosen for i in range(len(deltas))))


def _check(deltas: Sequence[int | None]) -> None:
    for d in deltas:
        if d is not None and (isinstance(d, bool) or not isinstance(d, int)):
            raise InputError(f"Δt must be whole days (int) or None, got {d!r}")


@RANKINGS.register("evidence-based date")
def evidence_date_ranking(deltas: Sequence[int | None]) -> TemporalScores:
    """Evidence-based date ranking: the most recently published evidence first."""
    _check(deltas)
    return _scored("evidence-based date", deltas, [True] * len(deltas), lambda d: d)


@RANKINGS.register("claim-based date")
def claim_date_ranking(deltas: Sequence[int | None]) -> TemporalScores:
    """Claim-based date ranking: the most recent evidence published no later than the claim
    first; evidence with Δt > 0 is excluded (score 0, masked)."""
    _check(deltas)
    return _scored("claim-based date", deltas, [d is not None and d <= 0 for d in deltas], lambda d: d)


@RANKINGS.register("claim-centered distance")
def claim_distance_ranking(deltas: Sequence[int | None]) -> TemporalScores:
    """Claim-centered distance ranking: the evidence closest in time to the claim first."""
    _check(deltas)
    return _scored("claim-centered distance", deltas, [True] * len(deltas), lambda d: -abs(d))


def medoid(values: Sequence[int]) -> int:
    """Index of the value with the smallest summed absolute distance to the others (first on ties)."""
    if not values:
        raise InputError("the medoid of an empty list is undefined")
    totals = [sum(abs(v - w) for w in values) for v in values]
    return totals.index(min(totals))


@RANKINGS.register("evidence-centered distance")
def evidence_distance_ranking(deltas: Sequence[int | None]) -> TemporalScores:
    """Evidence-centered distance ranking: the evidence closest in time to the dated evidence's
    medoid (by summed pairwise distance; the first on ties) first."""
    _check(deltas)
    dated = [d for d in deltas if d is not None]
    if not dated:
        return TemporalScores("evidence-centered distance", (0,) * len(deltas), (False,) * len(deltas))
    centre = dated[medoid(dated)]
    return _scored("evidence-centered distance", deltas, [True] * len(deltas), lambda d: -abs(d - centre))


def temporal_scores(method: str, deltas: Sequence[int | None]) -> TemporalScores:
    """Score ``deltas`` with the named method (``UnknownName`` lists the valid names)."""
    return RANKINGS[method](deltas)


METHODS = ("evidence-based date", "claim-based date", "claim-centered distance", "evidence-centered distance")
