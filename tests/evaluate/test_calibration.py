"""Calibration and selective-prediction measures on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.errors import InputError
from factscout.evaluate.calibration import (
    definite_calls,
    expected_calibration_error,
    reliability_bins,
    risk_coverage,
    selective_scores,
    threshold_for_precision,
)

CONF = [0.05, 0.15, 0.15, 0.95, 1.0]
RIGHT = [False, True, False, True, True]


def test_ece_by_hand():
    # bin 0: one call, accuracy 0, confidence 0.05; bin 1: two, accuracy 0.5, confidence 0.15;
    # bin 9 (1.0 included): two, accuracy 1, confidence 0.975
    expected = 1 / 5 * 0.05 + 2 / 5 * 0.35 + 2 / 5 * 0.025
    assert expected_calibration_error(CONF, RIGHT) == pytest.approx(expected) == pytest.approx(0.16)
    bins = reliability_bins(CONF, RIGHT)
    assert [b.count for b in bins] == [1, 1 + 1, 0, 0, 0, 0, 0, 0, 0, 2]
    assert (bins[1].confidence, bins[1].accuracy) == (pytest.approx(0.15), 0.5)
    assert bins[2].confidence is None and bins[2].accuracy is None
    assert (bins[9].lower, bins[9].upper) == (0.9, 1.0)


def test_a_perfectly_calibrated_confidence_has_zero_ece():
    assert expected_calibration_error([0.25] * 4, [True, False, False, False]) == pytest.approx(0.0)
    assert expected_calibration_error([], []) == 0.0


@given(st.lists(st.tuples(st.floats(0, 1), st.booleans()), min_size=1, max_size=50))
def test_ece_is_between_zero_and_one(calls):
    ece = expected_calibration_error([c for c, _ in calls], [r for _, r in calls])
    assert 0.0 <= ece <= 1.0


def test_bad_input_is_refused():
    with pytest.raises(InputError, match="probabilities"):
        expected_calibration_error([1.2], [True])
    with pytest.raises(InputError, match="2 confidences but 1"):
        expected_calibration_error([0.2, 0.3], [True])
    with pytest.raises(InputError, match="bins"):
        reliability_bins([0.2], [True], bins=0)


def test_risk_coverage_by_hand_keeps_ties_together():
    curve = risk_coverage([0.9, 0.8, 0.8, 0.3], [True, True, False, False])
    assert curve.thresholds.tolist() == [0.9, 0.8, 0.3]
    assert curve.coverage.tolist() == [0.25, 0.75, 1.0]
    assert curve.risk == pytest.approx([0.0, 1 / 3, 0.5])
    # coverage counted on the covered calls only (e.g. gold definite), over 4 items
    covered = risk_coverage([0.9, 0.8, 0.8, 0.3], [True, True, False, False], covered=[True, True, False, True], of=4)
    assert covered.coverage.tolist() == [0.25, 0.5, 0.75]
    assert curve.area() == pytest.approx(0.25 * 0 + 0.5 * (0 + 1 / 3) / 2 + 0.25 * (1 / 3 + 0.5) / 2)


def test_the_threshold_is_the_smallest_reaching_the_precision():
    conf, right = [0.9, 0.8, 0.8, 0.3], [True, True, False, False]
    assert selective_scores(conf, right, 0.0).precision == 0.5
    assert selective_scores(conf, right, 0.5).precision == pytest.approx(2 / 3)
    chosen = threshold_for_precision(conf, right, 0.8)
    assert chosen is not None and chosen.threshold == 0.81 and chosen.calls == 1 and chosen.precision == 1.0
    assert chosen.coverage == 0.25
    loose = threshold_for_precision(conf, right, 0.6)
    assert loose is not None and loose.threshold == 0.31 and loose.calls == 3
    assert threshold_for_precision(conf, right, 0.8, min_calls=2) is None
    kept = selective_scores(conf, right, loose.threshold)
    assert np.all(np.asarray(conf)[np.asarray(conf) >= loose.threshold] >= loose.threshold) and kept.calls == 3


def test_definite_calls_by_hand():
    gold = ["supported", "refuted", "not enough evidence", "supported"]
    predicted = ["supported", "supported", "refuted", "not enough evidence"]
    score = definite_calls(gold, predicted)
    assert score.calls == 3 and score.precision == pytest.approx(1 / 3) and score.coverage == pytest.approx(2 / 3)
    none = definite_calls(gold, ["not enough evidence"] * 4)
    assert (none.calls, none.precision, none.coverage) == (0, None, 0.0)
