"""Measures of a confidence: calibration and selective prediction.

* :func:`expected_calibration_error` (ECE; Naeini, Cooper & Hauskrecht 2015, as used by Guo et
  al. 2017): the calls are put in ``bins`` equal-width confidence bins over [0, 1] (a confidence
  of exactly 1 goes in the last bin) and ECE = sum over bins of (calls in bin / calls) x
  |accuracy in bin - mean confidence in bin|. :func:`reliability_bins` is the same binning, the
  data of a reliability diagram.
* :func:`risk_coverage` (El-Yaniv & Wiener 2010; Geifman & El-Yaniv 2017): keeping the calls with
  confidence >= t for every distinct t, the coverage (share of the items kept) against the risk
  (share of the kept calls that are wrong); tied confidences are kept or dropped together, as a
  threshold would.
* :func:`selective_scores` and :func:`threshold_for_precision`: the precision and coverage of
  definite calls at a threshold, and the smallest threshold on a grid whose precision reaches a
  target (how ``check``'s default ``--min-confidence`` is chosen on dev claims).

``confidence[i]`` is the confidence of call ``i`` and ``correct[i]`` whether it was right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factscout.errors import InputError

DEFAULT_BINS = 10
THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.01 * i, 2) for i in range(101))


def _arrays(confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray) -> tuple[np.ndarray, ...]:
    c = np.asarray(confidence, dtype=np.float64).reshape(-1)
    y = np.asarray(correct, dtype=np.float64).reshape(-1)
    if len(c) != len(y):
        raise InputError(f"{len(c)} confidences but {len(y)} correctness labels")
    if np.any(~np.isfinite(c)) or np.any((c < 0) | (c > 1)):
        raise InputError("confidences must be probabilities in [0, 1]")
    return c, y


@dataclass(frozen=True, slots=True)
class ReliabilityBin:
    """One bin of a reliability diagram: ``[lower, upper)`` (the last bin includes 1)."""

    lower: float
    upper: float
    count: int
    confidence: float | None  # mean confidence of the calls in the bin (None: empty)
    accuracy: float | None  # share of them that were right


def reliability_bins(
    confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, bins: int = DEFAULT_BINS
) -> list[ReliabilityBin]:
    """The calls in ``bins`` equal-width confidence bins: the data of a reliability diagram."""
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 1:
        raise InputError(f"bins must be a positive integer, got {bins!r}")
    c, y = _arrays(confidence, correct)
    index = np.minimum((c * bins).astype(int), bins - 1)
    out = []
    for b in range(bins):
        member = index == b
        n = int(member.sum())
        out.append(
            ReliabilityBin(
                b / bins,
                (b + 1) / bins,
                n,
                float(c[member].mean()) if n else None,
                float(y[member].mean()) if n else None,
            )
        )
    return out


def expected_calibration_error(
    confidence: Sequence[float] | np.ndarray, correct: Sequence[bool] | np.ndarray, bins: int = DEFAULT_BINS
) -> float:
    """ECE over ``bins`` equal-width bins (see the module docstring); 0 for no calls."""
    total = len(np.asarray(confidence).reshape(-1))
    if not total:
        _arrays(confidence, correct)
        return 0.0
    return float(
        sum(
            b.count / total * abs(b.accuracy - b.confidence)
            for b in reliability_bins(confidence, correct, bins)
            if b.count and b.accuracy is not None and b.confidence is not None
        )
    )


@dataclass(frozen=True, slots=True)
class RiskCoverage:
    """The risk-coverage curve: at ``thresholds[i]`` (keep confidence >= it), ``coverage[i]`` of
    the items are kept and ``risk[i]`` of the kept calls are wrong. Highest threshold first."""

    thresholds: np.ndarray
    coverage: np.ndarray
    risk: np.ndarray

    def area(self) -> float:
        """The area under the curve (AURC; lower is better), by the trapezoid rule from coverage 0."""
        x = np.concatenate([[0.0], self.coverage])
        r = np.concatenate([[self.risk[0] if len(self.risk) else 0.0], self.risk])
        return float(np.sum((x[1:] - x[:-1]) * (r[1:] + r[:-1]) / 2))


def risk_coverage(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    *,
    covered: Sequence[bool] | np.ndarray | None = None,
    of: int | None = None,
) -> RiskCoverage:
    """The risk-coverage curve of the calls. Coverage counts the kept calls with ``covered[i]``
    (default: all) over ``of`` items (default: the calls), e.g. the calls on claims whose gold
    label is definite over those claims, as :func:`selective_scores` does."""
    c, y = _arrays(confidence, correct)
    cov = _covered(covered, len(c))
    total = len(c) if of is None else of
    if total < int(cov.sum()) or total < 1:
        raise InputError(
            f"coverage is over at least the {int(cov.sum())} covered calls (and at least 1), got of={of!r}"
        )
    if not len(c):
        return RiskCoverage(np.array([]), np.array([]), np.array([]))
    order = np.argsort(-c, kind="stable")
    c, y, cov = c[order], y[order], cov[order]
    last = np.flatnonzero(np.append(c[1:] != c[:-1], True))  # the end of each run of tied confidences
    kept = last + 1
    return RiskCoverage(c[last], np.cumsum(cov)[last] / total, 1.0 - np.cumsum(y)[last] / kept)


def _covered(covered: Sequence[bool] | np.ndarray | None, n: int) -> np.ndarray:
    cov = np.ones(n, dtype=bool) if covered is None else np.asarray(covered, dtype=bool).reshape(-1)
    if len(cov) != n:
        raise InputError(f"{n} calls but {len(cov)} coverage flags")
    return cov


@dataclass(frozen=True, slots=True)
class SelectiveScore:
    """Definite calls kept at ``threshold``: how many, their precision (``None`` when none is
    kept) and the coverage (kept calls on the covered items / those items)."""

    threshold: float
    calls: int
    precision: float | None
    coverage: float


def selective_scores(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    threshold: float,
    *,
    covered: Sequence[bool] | np.ndarray | None = None,
    of: int | None = None,
) -> SelectiveScore:
    """Precision and coverage of the calls with confidence >= ``threshold``. ``covered[i]``: call
    ``i`` counts towards coverage (default: all; e.g. only calls on claims whose gold label is
    definite), over ``of`` items (default: the calls)."""
    c, y = _arrays(confidence, correct)
    cov = _covered(covered, len(c))
    total = len(c) if of is None else of
    kept = c >= threshold
    n = int(kept.sum())
    return SelectiveScore(
        float(threshold),
        n,
        float(y[kept].mean()) if n else None,
        float((kept & cov).sum() / total) if total else 0.0,
    )


def threshold_for_precision(
    confidence: Sequence[float] | np.ndarray,
    correct: Sequence[bool] | np.ndarray,
    target: float = 0.8,
    *,
    min_calls: int = 1,
    grid: Sequence[float] = THRESHOLD_GRID,
    covered: Sequence[bool] | np.ndarray | None = None,
    of: int | None = None,
) -> SelectiveScore | None:
    """The smallest threshold of ``grid`` at which at least ``min_calls`` calls are kept and
    their precision is >= ``target``, with its scores; ``None`` when no threshold reaches it."""
    if not 0.0 <= target <= 1.0:
        raise InputError(f"the target precision must be in [0, 1], got {target!r}")
    for t in sorted(grid):
        score = selective_scores(confidence, correct, t, covered=covered, of=of)
        if score.calls >= min_calls and score.precision is not None and score.precision >= target - 1e-12:
            return score
    return None


def definite_calls(
    gold: Sequence[str], predicted: Sequence[str], definite: Sequence[str] = ("supported", "refuted")
) -> SelectiveScore:
    """The precision and coverage of the definite verdicts among final labels (abstentions are
    not definite): precision = definite predictions equal to the gold label / definite
    predictions (``None`` when there are none); coverage = items with a definite gold label given a
    definite prediction / items with a definite gold label. ``threshold`` is reported as 0."""
    if len(gold) != len(predicted):
        raise InputError(f"{len(gold)} gold labels but {len(predicted)} predictions")
    made = [(g, p) for g, p in zip(gold, predicted, strict=True) if p in definite]
    n_gold = sum(g in definite for g in gold)
    return SelectiveScore(
        0.0,
        len(made),
        sum(g == p for g, p in made) / len(made) if made else None,
        sum(g in definite for g, _ in made) / n_gold if n_gold else 0.0,
    )


__all__ = [
    "DEFAULT_BINS",
    "ReliabilityBin",
    "RiskCoverage",
    "SelectiveScore",
    "definite_calls",
    "expected_calibration_error",
    "reliability_bins",
    "risk_coverage",
    "selective_scores",
    "threshold_for_precision",
]
