"""The one home of classification measures: hand-computed values, scikit-learn's figures, and
the bootstrap intervals the benchmarks used to compute on their own."""

from __future__ import annotations

import numpy as np
import pytest

from factscout.errors import InputError
from factscout.evaluate.classification import (
    accuracy,
    bootstrap_interval,
    class_scores,
    macro_f1,
    macro_f1_interval,
    mean_interval,
)


def test_macro_f1_and_accuracy_by_hand():
    gold = ["a", "a", "b", "c"]
    pred = ["a", "b", "b", "b"]
    # F1(a) = 2*1/(1+2) = 2/3, F1(b) = 2*1/(3+1) = 1/2, F1(c) = 0
    assert macro_f1(gold, pred) == pytest.approx((2 / 3 + 1 / 2 + 0) / 3)
    assert accuracy(gold, pred) == 0.5
    assert macro_f1(["a"], ["a"], ["a", "z"]) == 0.5, "a listed class never seen scores 0 and counts"
    with pytest.raises(InputError, match="2 gold labels but 1 predictions"):
        macro_f1(["a", "b"], ["a"])


def test_class_scores_match_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(3)
    labels = ["supported", "refuted", "not enough evidence", "conflicting"]
    gold = list(rng.choice(labels[:3], 200))  # one listed class is never gold
    pred = list(rng.choice(labels, 200))
    ours = class_scores(gold, pred, labels)
    assert ours["n"] == 200 and ours["accuracy"] == pytest.approx(metrics.accuracy_score(gold, pred))
    for average, key in (("macro", "macro-F1"), ("weighted", "weighted-F1")):
        theirs = metrics.f1_score(gold, pred, labels=labels, average=average, zero_division=0)
        assert ours[key] == pytest.approx(theirs)
    per = metrics.f1_score(gold, pred, labels=labels, average=None, zero_division=0)
    assert [ours[f"F1 {label}"] for label in labels] == pytest.approx(list(per))
    assert class_scores([], [], labels) == {}


def test_the_macro_f1_interval_is_the_percentile_bootstrap_of_scikit_learns_macro_f1():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(5)
    labels = ["a", "b", "c"]
    gold, pred = rng.choice(labels, 120), rng.choice(labels, 120)
    sampler = np.random.default_rng(0)  # the old benchmark code, seed 0, 1,000 resamples
    values = [
        metrics.f1_score(gold[i], pred[i], labels=labels, average="macro", zero_division=0)
        for i in (sampler.integers(0, 120, 120) for _ in range(1000))
    ]
    assert macro_f1_interval(list(gold), list(pred), labels) == pytest.approx(tuple(np.percentile(values, [2.5, 97.5])))
    lo, hi = macro_f1_interval(list(gold), list(pred), labels)
    assert lo < macro_f1(list(gold), list(pred), labels) < hi


def test_mean_and_generic_intervals():
    diff = np.r_[np.full(50, 0.1), np.full(50, -0.1)]
    lo, hi = mean_interval(diff)
    assert lo < 0 < hi and hi - lo < 0.1
    assert bootstrap_interval(lambda idx: 1.0, 10) == (1.0, 1.0)
    with pytest.raises(InputError, match="at least one item"):
        bootstrap_interval(lambda idx: 0.0, 0)


def test_grouped_intervals_resample_whole_groups():
    from factscout.evaluate.classification import grouped_macro_f1_intervals, macro_f1

    rng = np.random.default_rng(1)
    groups = [f"c{i // 5}" for i in range(200)]  # 40 claims of 5 items each
    gold = list(rng.integers(0, 3, 200))
    good = [g if rng.random() < 0.8 else (g + 1) % 3 for g in gold]
    bad = [g if rng.random() < 0.5 else (g + 1) % 3 for g in gold]
    ci = grouped_macro_f1_intervals(groups, gold, {"good": good, "bad": bad, "same": good}, range(3), n=500)
    assert ci["good"][0] <= macro_f1(gold, good, range(3)) <= ci["good"][1]
    assert ci["good - bad"][0] > 0  # a clear gap stays clear
    assert ci["good - same"] == [0.0, 0.0]
    # items of one group move together: one group per item gives a narrower interval than 40 groups of 5
    per_item = grouped_macro_f1_intervals([str(i) for i in range(200)], gold, {"good": good}, range(3), n=500)
    assert per_item["good"][1] - per_item["good"][0] <= ci["good"][1] - ci["good"][0] + 0.02
