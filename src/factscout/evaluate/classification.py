"""Classification measures: accuracy, per-class and macro/weighted F1, and bootstrap intervals.

The one home of these numbers (stance, verdicts, the verdict classifier, check-worthiness): every
benchmark, trainer and report computes them here, so a macro-F1 means the same everywhere. The
label set is explicit where it matters: a class listed in ``labels`` that is never gold and never
predicted scores F1 = 0 and counts in the mean (scikit-learn's ``zero_division=0``); with
``labels=None`` the classes are the gold labels seen.

Written out rather than taken from scikit-learn because the core needs it without the ``dense``
extra, and the bootstrap needs it thousands of times on small arrays (counts, not objects).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from factscout.errors import InputError

BOOTSTRAP_SEED = 0
BOOTSTRAP_SAMPLES = 1000


def _checked(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> None:
    if len(gold) != len(predicted):
        raise InputError(f"{len(gold)} gold labels but {len(predicted)} predictions")


def accuracy(gold: Sequence[Hashable], predicted: Sequence[Hashable]) -> float:
    """The share of predictions equal to the gold label."""
    _checked(gold, predicted)
    if not gold:
        raise InputError("accuracy of an empty set is undefined")
    return float(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold))


def per_class_f1(
    gold: Sequence[Hashable], predicted: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> dict[Hashable, float]:
    """F1 of each class in ``labels`` (default: the gold labels seen, in sorted order)."""
    _checked(gold, predicted)
    classes = list(labels) if labels is not None else sorted(set(gold), key=str)
    if not classes:
        raise InputError("F1 needs at least one class")
    out = {}
    for c in classes:
        tp = sum(g == c and p == c for g, p in zip(gold, predicted, strict=True))
        n_pred = sum(p == c for p in predicted)
        n_gold = sum(g == c for g in gold)
        out[c] = 2 * tp / (n_pred + n_gold) if n_pred + n_gold else 0.0
    return out


def macro_f1(
    gold: Sequence[Hashable], predicted: Sequence[Hashable], labels: Sequence[Hashable] | None = None
) -> float:
    """Unweighted mean of per-class F1 over ``labels`` (default: the gold labels seen).

    A class never predicted and never gold scores F1 = 0 only if listed in ``labels``.
    """
    f1s = per_class_f1(gold, predicted, labels)
    return float(sum(f1s.values()) / len(f1s))


def class_scores(
    gold: Sequence[Hashable], predicted: Sequence[Hashable], labels: Sequence[Hashable]
) -> dict[str, float]:
    """``n``, accuracy, macro- and weighted (by gold support) F1, and ``F1 <label>`` for each of
    ``labels`` (empty for no claims)."""
    if not gold:
        return {}
    per = per_class_f1(gold, predicted, labels)
    support = {c: sum(g == c for g in gold) for c in labels}
    out = {
        "n": float(len(gold)),
        "accuracy": accuracy(gold, predicted),
        "macro-F1": float(sum(per.values()) / len(per)),
        "weighted-F1": float(sum(per[c] * support[c] for c in labels) / len(gold)),
    }
    out.update({f"F1 {label}": float(per[label]) for label in labels})
    return out


def bootstrap_interval(
    statistic: Callable[[np.ndarray], float],
    n_items: int,
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
    level: float = 0.95,
) -> tuple[float, float]:
    """The percentile interval of ``statistic(indices)`` over ``samples`` resamples (with
    replacement) of ``n_items`` items: ``statistic`` reads its items at the given indices."""
    if n_items < 1:
        raise InputError("a bootstrap interval needs at least one item")
    rng = np.random.default_rng(seed)
    values = [statistic(rng.integers(0, n_items, n_items)) for _ in range(samples)]
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return float(lo), float(hi)


def macro_f1_interval(
    gold: Sequence[Hashable],
    predicted: Sequence[Hashable],
    labels: Sequence[Hashable],
    *,
    samples: int = BOOTSTRAP_SAMPLES,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float]:
    """95% bootstrap interval of the macro-F1 over ``labels``, items resampled with replacement."""
    _checked(gold, predicted)
    index = {label: i for i, label in enumerate(labels)}
    g = np.array([index.get(x, -1) for x in gold])
    p = np.array([index.get(x, -1) for x in predicted])
    k = len(labels)

    def f1(idx: np.ndarray) -> float:
        gs, ps = g[idx], p[idx]
        tp = np.bincount(gs[(gs == ps) & (gs >= 0)], minlength=k)
        n_gold = np.bincount(gs[gs >= 0], minlength=k)
        n_pred = np.bincount(ps[ps >= 0], minlength=k)
        denom = n_gold + n_pred
        return float(np.where(denom > 0, 2 * tp / np.maximum(denom, 1), 0.0).mean())

    return bootstrap_interval(f1, len(g), samples=samples, seed=seed)


def grouped_macro_f1_intervals(
    groups: Sequence[str],
    gold: Sequence[Any],
    predictions: Mapping[str, Sequence[Any]],
    labels: Sequence[Any],
    *,
    n: int = 2000,
    seed: int = 0,
) -> dict[str, list[float]]:
    """95 % percentile intervals of macro-F1 for each prediction set, and of the first set minus
    each other one (``"<first> - <name>"``), resampling whole groups (``groups``: the claim of each
    item, so a claim's sentences or pairs are drawn together) with replacement; ``n`` resamples,
    each a multinomial weight per group over per-group label counts (no copies of the items)."""
    ids = sorted(set(groups))
    row = {g: i for i, g in enumerate(ids)}
    k = len(labels)
    g_idx = np.array([row[g] for g in groups])
    lab = {label: j for j, label in enumerate(labels)}
    gold_counts = np.zeros((len(ids), k))
    np.add.at(gold_counts, (g_idx, np.array([lab[x] for x in gold])), 1)
    counts = {}
    for name, pred in predictions.items():
        tp, pc = np.zeros((len(ids), k)), np.zeros((len(ids), k))
        pj = np.array([lab[x] for x in pred])
        np.add.at(pc, (g_idx, pj), 1)
        hit = pj == np.array([lab[x] for x in gold])
        np.add.at(tp, (g_idx[hit], pj[hit]), 1)
        counts[name] = (tp, pc)
    rng = np.random.default_rng(seed)
    w = rng.multinomial(len(ids), np.full(len(ids), 1 / len(ids)), size=n).astype(np.float64)  # (n, claims)
    gsum = w @ gold_counts
    scores = {}
    for name, (tp, pc) in counts.items():
        t, pr = w @ tp, w @ pc
        denom = pr + gsum
        f1 = np.divide(2 * t, denom, out=np.zeros_like(t), where=denom > 0)
        scores[name] = f1.mean(axis=1)
    first = next(iter(predictions))
    out = {name: _percentiles(v) for name, v in scores.items()}
    out.update({f"{first} - {name}": _percentiles(scores[first] - v) for name, v in scores.items() if name != first})
    return out


def _percentiles(values: np.ndarray) -> list[float]:
    return [round(float(np.percentile(values, 2.5)), 4), round(float(np.percentile(values, 97.5)), 4)]


def mean_interval(values: Sequence[float] | np.ndarray, *, samples: int = 10_000, seed: int = 0) -> tuple[float, float]:
    """95% bootstrap interval of the mean of ``values`` (e.g. per-query differences of two runs)."""
    v = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = v[rng.integers(0, len(v), size=(samples, len(v)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


__all__ = [
    "accuracy",
    "bootstrap_interval",
    "class_scores",
    "grouped_macro_f1_intervals",
    "macro_f1",
    "macro_f1_interval",
    "mean_interval",
    "per_class_f1",
]
