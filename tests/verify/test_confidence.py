"""The verdict confidence and abstention (issue 38, item 3), on hand-made probabilities."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.records import Stance, Verdict
from factscout.verify.confidence import (
    BALANCED,
    BELOW_THRESHOLDS,
    FEATURE_NAMES,
    METHOD_SAID_NO,
    NO_EVIDENCE,
    VerdictConfidence,
    call_features,
    check_min_confidence,
    fit_verdict_confidence,
    isotonic_knots,
    selective_verdict,
    shipped,
)
from factscout.verify.verdict import CountRule

MAX_CALL = [1.0] + [0.0] * (len(FEATURE_NAMES) - 1)


def identity_model(threshold: float | None = None) -> VerdictConfidence:
    """A hand-made model whose confidence is the strongest sentence's probability for the call."""
    n = len(FEATURE_NAMES)
    return VerdictConfidence(
        MAX_CALL, 0.0, [0.0] * n, [1.0] * n, method="isotonic", iso_x=[0.0, 1.0], iso_y=[0.0, 1.0],
        threshold=threshold, fitted_with={"stance": "cross", "verdict": "rule"},
    )  # fmt: skip


def stance(i: int, sup: float, ref: float) -> Stance:
    p = (sup, ref, round(1.0 - sup - ref, 6))
    label = ("supports", "refutes", "not enough info")[int(np.argmax(p))]
    return Stance("p", i, label, p)  # type: ignore[arg-type]


# -- features ---------------------------------------------------------------------------------


def test_call_features_turn_the_probabilities_towards_the_call():
    probs = [(0.9, 0.05, 0.05), (0.2, 0.7, 0.1), (0.1, 0.1, 0.8)]
    sup = dict(zip(FEATURE_NAMES, call_features("supported", probs), strict=True))
    assert sup["max_call"] == 0.9 and sup["max_other"] == 0.7
    assert sup["margin"] == pytest.approx(0.2)
    assert sup["log1p_sum_call"] == pytest.approx(math.log1p(1.2))
    assert sup["log1p_sum_other"] == pytest.approx(math.log1p(0.85))
    assert sup["log1p_n_call"] == sup["log1p_n_other"] == pytest.approx(math.log1p(1))
    assert sup["log1p_sentences"] == pytest.approx(math.log1p(3))
    ref = dict(zip(FEATURE_NAMES, call_features("refuted", probs), strict=True))
    assert (ref["max_call"], ref["max_other"], ref["margin"]) == (0.7, 0.9, pytest.approx(-0.2))


def test_no_sentences_give_zero_features_and_only_definite_calls_have_any():
    assert call_features("refuted", []).tolist() == [0.0] * len(FEATURE_NAMES)
    with pytest.raises(InputError, match="definite call"):
        call_features("not enough evidence", [(0.3, 0.3, 0.4)])
    with pytest.raises(InputError, match="3 finite"):
        call_features("supported", [(0.3, 0.7)])


# -- calibration ------------------------------------------------------------------------------


def test_isotonic_knots_pool_adjacent_violators_by_hand():
    x, y = isotonic_knots(np.array([1.0, 2.0, 3.0, 4.0]), np.array([1.0, 0.0, 1.0, 1.0]))
    assert x.tolist() == [1.0, 2.0, 3.0, 4.0] and y.tolist() == [0.5, 0.5, 1.0, 1.0]
    x, y = isotonic_knots(np.array([2.0, 1.0, 2.0]), np.array([0.0, 1.0, 1.0]))  # ties share one value
    assert x.tolist() == [1.0, 2.0] and y == pytest.approx([2 / 3, 2 / 3])


@given(st.lists(st.tuples(st.floats(-5, 5), st.booleans()), min_size=1, max_size=40))
def test_isotonic_knots_are_monotone_probabilities(points):
    x, y = isotonic_knots(np.array([p[0] for p in points]), np.array([float(p[1]) for p in points]))
    assert np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)
    assert np.all((y >= 0) & (y <= 1))


@pytest.mark.parametrize("method", ["isotonic", "platt"])
def test_the_fitted_confidence_is_monotone_in_the_evidence_for_the_call(method):
    rng = np.random.default_rng(0)
    strength = rng.uniform(0.34, 1.0, 300)
    right = rng.uniform(0, 1, 300) < strength  # a stronger sentence is right more often
    rows = np.array([call_features("supported", [(s, (1 - s) / 2, (1 - s) / 2)]) for s in strength])
    model = fit_verdict_confidence(rows, right, method=method)
    grid = np.linspace(0.34, 1.0, 50)
    conf = model.predict_features(np.array([call_features("supported", [(s, (1 - s) / 2, (1 - s) / 2)]) for s in grid]))
    assert np.all(np.diff(conf) >= -1e-12) and conf[-1] > conf[0]
    assert np.all((conf >= 0) & (conf <= 1))
    assert abs(float(model.predict_features(rows).mean()) - float(right.mean())) < 0.05  # calibrated in the large


def test_all_calls_right_gives_the_smoothed_base_rate():
    model = fit_verdict_confidence(np.ones((3, len(FEATURE_NAMES))), [True] * 3, method="platt")
    assert model.predict("supported", [(0.9, 0.05, 0.05)]) == pytest.approx(3.5 / 4)


def test_fitting_input_is_checked():
    with pytest.raises(InputError, match="one 8-feature row per call"):
        fit_verdict_confidence(np.zeros((2, 3)), [True, False])
    with pytest.raises(InputError, match="unknown calibration method"):
        fit_verdict_confidence(np.zeros((2, len(FEATURE_NAMES))), [True, False], method="beta")  # type: ignore[arg-type]


def test_the_model_round_trips_as_json_and_refuses_other_files(tmp_path):
    model = fit_verdict_confidence(
        np.random.default_rng(1).uniform(0, 1, (20, len(FEATURE_NAMES))), [True, False] * 10,
        threshold=0.55, fitted_with={"stance": "cross", "verdict": "rule"}, info={"fitted_on": {"dev": 20}},
    )  # fmt: skip
    path = model.save(tmp_path / "c.json")
    again = VerdictConfidence.load(path)
    probs = [(0.6, 0.3, 0.1)]
    assert again.predict("supported", probs) == model.predict("supported", probs)
    assert (again.threshold, again.fitted_with, again.info) == (0.55, model.fitted_with, model.info)
    assert again.matches("cross", "rule") and not again.matches("head", "rule")
    assert shipped(tmp_path / "absent.json") is None
    with pytest.raises(ModelNotFound):
        VerdictConfidence.load(tmp_path / "absent.json")
    (tmp_path / "bad.json").write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(BadModel, match="not a factscout verdict confidence model"):
        VerdictConfidence.load(tmp_path / "bad.json")


# -- abstention -------------------------------------------------------------------------------


def test_a_call_below_the_threshold_becomes_not_enough_evidence_and_says_why():
    stances = [stance(0, 0.41, 0.2), stance(1, 0.2, 0.1)]
    verdict = CountRule(1, 0.4)(stances)
    assert verdict.label == "supported"
    out = selective_verdict(verdict, stances, identity_model(), 0.55)
    assert out.label == "not enough evidence" and out.call == "supported"
    assert out.confidence == pytest.approx(0.41)
    assert out.abstention == "low confidence 0.41 (< 0.55): would have been supported"
    assert out.reason.startswith(out.abstention + "; more supporting than refuting")
    assert out.supporting == verdict.supporting  # the counted sentences are still shown


def test_a_call_at_or_above_the_threshold_stands_with_its_confidence():
    for p in (0.55, 0.9):
        stances = [stance(0, 0.1, p)]
        out = selective_verdict(CountRule(1, 0.4)(stances), stances, identity_model(), 0.55)
        assert (out.label, out.call, out.abstention) == ("refuted", "refuted", None)
        assert out.confidence == pytest.approx(p)


def test_a_confidence_just_under_the_threshold_never_prints_as_the_threshold():
    stances = [stance(0, 0.5499, 0.1)]
    out = selective_verdict(CountRule(1, 0.4)(stances), stances, identity_model(), 0.55)
    assert out.abstention == "low confidence 0.54 (< 0.55): would have been supported"


def test_a_verdict_with_no_call_to_make_keeps_a_distinct_reason():
    rule = CountRule(1, 0.6)
    assert selective_verdict(rule([]), [], identity_model(), 0.5).abstention == NO_EVIDENCE
    weak = [stance(0, 0.5, 0.1)]
    assert selective_verdict(rule(weak), weak, identity_model(), 0.5).abstention == BELOW_THRESHOLDS
    tie = [stance(0, 0.9, 0.05), stance(1, 0.05, 0.9)]
    out = selective_verdict(rule(tie), tie, identity_model(), 0.5)
    assert (out.abstention, out.confidence, out.call) == (BALANCED, None, "not enough evidence")
    other = Verdict("not enough evidence", (), (), tuple(weak), "classifier said so", "quantemp++ classifier")
    assert selective_verdict(other, weak, None).abstention == METHOD_SAID_NO


def test_without_a_model_or_with_threshold_zero_nothing_is_withheld():
    stances = [stance(0, 0.45, 0.1)]
    verdict = CountRule(1, 0.34)(stances)
    alone = selective_verdict(verdict, stances, None, 0.9)
    assert (alone.label, alone.confidence, alone.abstention) == ("supported", None, None)
    assert selective_verdict(verdict, stances, identity_model(), 0.0).label == "supported"


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.5", True, float("nan")])
def test_the_threshold_is_a_probability(bad):
    with pytest.raises(InputError, match="must be a number from 0 to 1"):
        check_min_confidence(bad)
