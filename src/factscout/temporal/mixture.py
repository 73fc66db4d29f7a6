"""The evidence-date signal given to the joint model directly, and a mixture of the four temporal
rankings (an extension of Allein et al. 2021, who pick one ranking per domain).

* :func:`delta_features` — Δt buckets per evidence item: undated, same day, published before /
  after the claim, the log-scaled distance in one of :data:`DISTANCE_BUCKETS`, and a signed
  ``log1p(|Δt|)`` scaled to about [-1, 1]. The joint model concatenates them to every evidence
  item's representation (:class:`~factscout.temporal.joint.JointModel` ``time_dim``).
* :func:`normalized_scores` — each of the four rankings' scores divided by that ranking's
  maximum over the list (so in [0, 1]; 0 for undated or excluded evidence).
* :func:`mixture_scores` — ``Σ_k π_k · normalized_k`` for mixture weights ``π`` over
  :data:`~factscout.temporal.rankings.METHODS`; with one-hot weights it orders the evidence
  exactly as that single ranking does. :func:`mixture_ranking` turns it into a
  :class:`~factscout.temporal.rankings.TemporalScores` (dense ranks), and the ``learned mixture``
  temporal ranking applies the weights shipped in ``temporal/models/temporal_mixture.json``
  (learned on MultiFC train, see the model card there), so ``CheckSettings(temporal="learned
  mixture")`` re-ranks with them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import resources

from factscout.errors import InputError
from factscout.temporal.rankings import METHODS, RANKINGS, TemporalScores, temporal_scores

# upper ends (days, inclusive) of the distance buckets for dated evidence not from the claim's day
DISTANCE_BUCKETS = (7, 30, 182, 365, 1095, 3650)
DELTA_FEATURES = (
    "undated",
    "same day",
    "before claim",
    "after claim",
    *(f"|Δt| <= {b} d" for b in DISTANCE_BUCKETS),
    f"|Δt| > {DISTANCE_BUCKETS[-1]} d",
    "signed log1p(|Δt|) / 10",
)
MIXTURE_FILE = "temporal_mixture.json"


def delta_features(deltas: Sequence[int | None]) -> list[list[float]]:
    """One row of ``len(DELTA_FEATURES)`` values per Δt (days; ``None`` = undated)."""
    rows = []
    for d in deltas:
        row = [0.0] * len(DELTA_FEATURES)
        if d is None:
            row[0] = 1.0
        elif isinstance(d, bool) or not isinstance(d, int):
            raise InputError(f"Δt must be whole days (int) or None, got {d!r}")
        elif d == 0:
            row[1] = 1.0
        else:
            row[2 if d < 0 else 3] = 1.0
            distance = abs(d)
            bucket = next((i for i, b in enumerate(DISTANCE_BUCKETS) if distance <= b), len(DISTANCE_BUCKETS))
            row[4 + bucket] = 1.0
            row[-1] = math.copysign(math.log1p(distance), d) / 10
        rows.append(row)
    return rows


def normalized_scores(deltas: Sequence[int | None]) -> list[list[float]]:
    """``[item][k]``: ranking ``METHODS[k]``'s score of each item over its maximum in the list."""
    columns = []
    for method in METHODS:
        scores = temporal_scores(method, deltas).scores
        top = max(scores, default=0) or 1
        columns.append([s / top for s in scores])
    return [list(row) for row in zip(*columns, strict=True)] if deltas else []


def check_weights(weights: Mapping[str, float]) -> dict[str, float]:
    """The mixture weights over all four rankings (missing ones 0), non-negative, summing to 1
    (within 1e-4: the shipped file stores them rounded to 6 decimals)."""
    unknown = sorted(set(weights) - set(METHODS))
    if unknown:
        raise InputError(f"no temporal ranking {unknown[0]!r} in mixture weights; known: {', '.join(METHODS)}")
    out = {m: float(weights.get(m, 0.0)) for m in METHODS}
    if any(not math.isfinite(w) or w < 0 for w in out.values()) or not math.isclose(
        sum(out.values()), 1.0, abs_tol=1e-4
    ):
        raise InputError(f"mixture weights must be non-negative and sum to 1, got {dict(weights)}")
    return out


def mixture_scores(deltas: Sequence[int | None], weights: Mapping[str, float]) -> list[float]:
    """``Σ_k π_k · normalized_k`` per evidence item (0 for items no weighted ranking covers)."""
    pi = check_weights(weights)
    return [sum(pi[m] * s for m, s in zip(METHODS, row, strict=True)) for row in normalized_scores(deltas)]


def mixture_ranking(deltas: Sequence[int | None], weights: Mapping[str, float]) -> TemporalScores:
    """The mixture as a temporal ranking: dense ranks of :func:`mixture_scores` over the items that
    a ranking with positive weight covers (the others score 0 and are masked)."""
    pi = check_weights(weights)
    mixed = mixture_scores(deltas, pi)
    covered = [False] * len(deltas)
    for m in METHODS:
        if pi[m] > 0:
            covered = [c or k for c, k in zip(covered, temporal_scores(m, deltas).mask, strict=True)]
    order = {v: i for i, v in enumerate(sorted({v for v, c in zip(mixed, covered, strict=True) if c}), 1)}
    scores = tuple(order[v] if c else 0 for v, c in zip(mixed, covered, strict=True))
    return TemporalScores("learned mixture", scores, tuple(covered))


@lru_cache(maxsize=1)
def shipped_mixture() -> dict[str, object]:
    """The shipped file: ``{"default": {method: weight}, "domains": {domain: {...}}, ...}``."""
    path = resources.files("factscout.temporal") / "models" / MIXTURE_FILE
    try:
        payload: dict[str, object] = json.loads(path.read_text())
    except FileNotFoundError:
        raise InputError(
            f"the learned temporal mixture file {MIXTURE_FILE} is missing from factscout/temporal/models;"
            " retrain it with python benchmarks/temporal.py --save-mixture"
        ) from None
    return payload


def shipped_weights(domain: str | None = None) -> dict[str, float]:
    """The shipped mixture weights of ``domain`` (MultiFC site code), else the default ones."""
    payload = shipped_mixture()
    domains = payload.get("domains") or {}
    chosen = domains.get(domain) if isinstance(domains, dict) and domain is not None else None
    weights = chosen if isinstance(chosen, dict) else payload["default"]
    if not isinstance(weights, dict):
        raise InputError(f"malformed {MIXTURE_FILE}: 'default' must map rankings to weights")
    return check_weights(weights)


@RANKINGS.register("learned mixture")
def learned_mixture_ranking(deltas: Sequence[int | None]) -> TemporalScores:
    """The shipped learned mixture of the four temporal rankings (default weights)."""
    return mixture_ranking(deltas, shipped_weights())
