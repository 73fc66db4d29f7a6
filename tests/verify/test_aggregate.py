"""The learned verdict aggregator: its features on hand-made stance sets, verdicts of models trained
here on small synthetic claims (3-way and 4-way with ``conflicting``), persistence and bad files."""

import json
import math
import re

import numpy as np
import pytest

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.records import STANCE_LABELS, Claim, Hit, Ranking, Stance
from factscout.training.verdict.aggregator import fit_aggregator
from factscout.verify import VERDICT_METHODS, CountRule, make_verdict_method
from factscout.verify.aggregate import (
    CONFIDENCE_LEVELS,
    LearnedVerdict,
    VerdictAggregator,
    claim_features,
    feature_names,
)

RULE = CountRule(1, 0.4)
CLAIM = Claim("c1", "Vitamin D reduces fractures.")
RANKING = Ranking("c1", [Hit(f"p{i}", 10.0 - i) for i in range(10)])  # p0 best ... p9 last (relevance 0)


def stance(pid: str, index: int, label: str, p: float) -> Stance:
    rest = (1.0 - p) / 2
    probs = [rest, rest, rest]
    probs[STANCE_LABELS.index(label)] = p
    return Stance(pid, index, label, (probs[0], probs[1], probs[2]))  # type: ignore[arg-type]


def synthetic_claim(rng: np.random.Generator, kind: str) -> list[Stance]:
    """Stances of a synthetic claim: ``supported`` / ``refuted`` have 2-5 confident sentences of
    their side, ``conflicting`` 2-3 of each side, ``nei`` none or only not-enough-info ones; every
    claim also gets 0-4 not-enough-info sentences, all spread over the ten passages."""
    out = []
    strong = {"supported": [("supports", rng.integers(2, 6))], "refuted": [("refutes", rng.integers(2, 6))],
              "conflicting": [("supports", rng.integers(2, 4)), ("refutes", rng.integers(2, 4))], "nei": []}  # fmt: skip
    for label, n in strong[kind]:
        out += [(label, rng.uniform(0.65, 0.97)) for _ in range(n)]
    out += [("not enough info", rng.uniform(0.5, 0.95)) for _ in range(rng.integers(0 if kind != "nei" else 1, 5))]
    rng.shuffle(out)
    return [stance(f"p{rng.integers(0, 6)}", i, label, float(p)) for i, (label, p) in enumerate(out)]


GOLD = {"supported": "supported", "refuted": "refuted", "nei": "not enough evidence", "conflicting": "conflicting"}


def train(kinds, n=40, k=10, seed=0):
    rng = np.random.default_rng(seed)
    claims = [(kind, synthetic_claim(rng, kind)) for kind in kinds for _ in range(n)]
    if "nei" in kinds:
        claims.append(("nei", []))  # no evidence at all is a not-enough-evidence claim too
    x = np.stack([claim_features(s, RANKING, RULE, k) for _, s in claims])
    labels = [GOLD[kind] for kind in kinds]
    return fit_aggregator(x, [GOLD[kind] for kind, _ in claims], labels, k=k, rule=RULE, c=1.0)


@pytest.fixture(scope="module")
def three_way():
    return train(["supported", "refuted", "nei"])


@pytest.fixture(scope="module")
def four_way():
    return train(["supported", "refuted", "nei", "conflicting"])


ALL_REFUTING = [stance("p0", 1, "refutes", 0.9), stance("p1", 3, "refutes", 0.85), stance("p2", 0, "refutes", 0.8)]
ALL_SUPPORTING = [
    stance("p0", 2, "supports", 0.92),
    stance("p1", 0, "supports", 0.8),
    stance("p3", 1, "supports", 0.75),
]
NOTHING_RELEVANT = [stance("p0", 0, "not enough info", 0.9), stance("p2", 4, "not enough info", 0.8)]
MIXED_STRONG = [stance("p0", 0, "supports", 0.93), stance("p0", 1, "refutes", 0.92), stance("p1", 0, "supports", 0.9),
                stance("p1", 2, "refutes", 0.9), stance("p2", 0, "refutes", 0.88), stance("p3", 0, "supports", 0.87)]  # fmt: skip


# -- features --------------------------------------------------------------------------------------


def test_feature_vector_of_one_supporting_sentence_in_the_best_passage():
    k = 3
    x = dict(zip(feature_names(k), claim_features([stance("p0", 4, "supports", 0.8)], RANKING, RULE, k), strict=True))
    assert [x[f"slot0_{n}"] for n in ("present", "p_sup", "p_ref", "p_nei", "relevance")] == pytest.approx(
        [1.0, 0.8, 0.1, 0.1, 1.0]
    )
    assert all(x[f"slot{j}_{n}"] == 0.0 for j in (1, 2) for n in ("present", "p_sup", "relevance"))  # padding
    assert x["max_p_sup"] == x["mean_p_sup"] == x["sum_rel_p_sup"] == pytest.approx(0.8)
    assert x["log1p_n_sup>=0.5"] == x["log1p_n_sup>=0.7"] == pytest.approx(math.log(2))
    assert x["log1p_n_sup>=0.9"] == 0.0 and x["log1p_n_ref>=0.5"] == 0.0
    assert x["log1p_sentences"] == x["log1p_passages_with_evidence"] == pytest.approx(math.log(2))
    assert x["has_hits"] == 1.0 and x["log1p_top_score"] == pytest.approx(math.log(11.0))
    assert x["mean_rel_top5"] == pytest.approx(np.mean([1, 8 / 9, 7 / 9, 6 / 9, 5 / 9]))
    assert x["gap_rel_1_2"] == pytest.approx(1 / 9) and x["mean_rel_evidence_passages"] == 1.0
    assert (x["rule_supported"], x["rule_refuted"], x["rule_not_enough_evidence"]) == (1.0, 0.0, 0.0)
    assert x["rule_balance"] == pytest.approx(1 / 2)


def test_stances_are_read_in_passage_rank_order_most_decisive_first_and_cut_at_k():
    stances = [
        stance("p5", 0, "refutes", 0.6),
        stance("p1", 7, "not enough info", 0.9),
        stance("p1", 2, "supports", 0.7),
    ]
    x = claim_features(stances, RANKING, RULE, 2)
    names = feature_names(2)
    slot = {n: x[names.index(n)] for n in names if n.startswith("slot")}
    assert slot["slot0_p_sup"] == pytest.approx(0.7) and slot["slot1_p_nei"] == pytest.approx(0.9)
    assert slot["slot0_relevance"] == slot["slot1_relevance"] == pytest.approx(8 / 9)
    # the refuting sentence of p5 is beyond k for the slots but still counted
    assert x[names.index("log1p_n_ref>=0.5")] == pytest.approx(math.log(2))
    assert x[names.index("max_p_ref")] == pytest.approx(0.15)


def test_no_evidence_gives_zeros_and_the_rules_not_enough_evidence():
    x = dict(zip(feature_names(), claim_features([], Ranking("c1"), RULE), strict=True))
    assert x["rule_not_enough_evidence"] == 1.0
    assert all(v == 0.0 for n, v in x.items() if n != "rule_not_enough_evidence")


def test_a_stance_on_a_passage_outside_the_ranking_has_no_relevance():
    x = dict(zip(feature_names(1), claim_features([stance("zz", 0, "supports", 0.9)], RANKING, RULE, 1), strict=True))
    assert x["slot0_present"] == 1.0 and x["slot0_relevance"] == 0.0 and x["mean_rel_evidence_passages"] == 0.0


def test_feature_names_and_bad_k():
    assert len(feature_names(10)) == 5 * 10 + 12 + 2 * len(CONFIDENCE_LEVELS) + 2 + 5 + 4
    assert len(set(feature_names(10))) == len(feature_names(10))
    for bad in (0, -1, 2.5, True):
        with pytest.raises(InputError, match="positive integer"):
            claim_features([], RANKING, RULE, bad)


# -- verdicts of trained models -------------------------------------------------------------------


def judge(model, stances):
    return LearnedVerdict(RULE, model).judge(CLAIM, stances, RANKING, {})


def test_three_way_verdicts_on_hand_made_stance_sets(three_way):
    assert three_way.labels == ("supported", "refuted", "not enough evidence")
    assert judge(three_way, ALL_REFUTING).label == "refuted"
    assert judge(three_way, ALL_SUPPORTING).label == "supported"
    assert judge(three_way, NOTHING_RELEVANT).label == "not enough evidence"
    assert LearnedVerdict(RULE, three_way).judge(CLAIM, [], Ranking("c1"), {}).label == "not enough evidence"


def test_four_way_model_calls_mixed_strong_evidence_conflicting(four_way):
    assert four_way.labels == ("supported", "refuted", "not enough evidence", "conflicting")
    assert judge(four_way, MIXED_STRONG).label == "conflicting"
    assert judge(four_way, ALL_SUPPORTING).label == "supported"
    assert judge(four_way, ALL_REFUTING).label == "refuted"
    assert judge(four_way, NOTHING_RELEVANT).label == "not enough evidence"


def test_the_verdict_names_its_method_and_reports_the_rules_counted_sentences(three_way):
    stances = [*ALL_SUPPORTING, stance("p4", 0, "refutes", 0.3), *NOTHING_RELEVANT]
    verdict = judge(three_way, stances)
    counted = RULE(stances)
    assert (verdict.supporting, verdict.refuting, verdict.neutral) == (
        counted.supporting, counted.refuting, counted.neutral,
    )  # fmt: skip
    assert verdict.method.startswith("learned aggregator") and "top-10" in verdict.method
    assert verdict.reason.startswith("aggregator probabilities: supported ")
    assert "count rule alone: supported" in verdict.reason


def test_probabilities_are_a_distribution_and_the_label_the_most_probable(four_way):
    label, probs = four_way.predict(MIXED_STRONG, RANKING)
    assert sum(probs) == pytest.approx(1.0) and label == four_way.labels[int(np.argmax(probs))]


def test_temperature_changes_confidence_not_the_label(three_way):
    x = claim_features(ALL_REFUTING, RANKING, RULE)[None]
    sharp = three_way.predict_features(x)[0]
    three_way.temperature = 3.0
    try:
        soft = three_way.predict_features(x)[0]
    finally:
        three_way.temperature = 1.0
    assert np.argmax(soft) == np.argmax(sharp) and soft.max() < sharp.max()


def test_aggregator_loaded_on_first_use_and_the_registry_factory():
    calls = []

    def load():
        calls.append(1)
        return train(["supported", "refuted", "nei"], n=10)

    method = make_verdict_method("learned", rule=RULE, aggregator=load, classifier=object())
    assert isinstance(method, LearnedVerdict) and "learned" in VERDICT_METHODS.names() and not calls
    method.judge(CLAIM, ALL_SUPPORTING, RANKING, {})
    method.judge(CLAIM, ALL_SUPPORTING, RANKING, {})
    assert calls == [1]


def test_training_needs_every_label_and_one_row_per_label():
    x = np.zeros((2, len(feature_names(10))))
    with pytest.raises(InputError, match="no \\['refuted'\\] examples"):
        fit_aggregator(x, ["supported", "not enough evidence"], ("supported", "refuted", "not enough evidence"))
    with pytest.raises(InputError, match="one row"):
        fit_aggregator(x[:1], ["supported", "refuted"], ("supported", "refuted"))
    with pytest.raises(InputError, match="not in the label set"):
        fit_aggregator(x, ["supported", "true"], ("supported", "refuted"))


def test_a_two_label_model_gives_two_probabilities():
    model = train(["supported", "refuted"], n=15)
    label, probs = model.predict(ALL_REFUTING, RANKING)
    assert label == "refuted" and len(probs) == 2


# -- persistence ----------------------------------------------------------------------------------


def test_save_load_round_trip(tmp_path, four_way):
    four_way.info = {"stance": "head", "trained": "2026-11-25"}
    four_way.temperature = 1.7
    try:
        path = four_way.save(tmp_path / "agg.json")
        again = VerdictAggregator.load(path)
    finally:
        four_way.temperature = 1.0
    assert again.labels == four_way.labels and again.k == four_way.k and again.temperature == 1.7
    assert (again.rule.min_evidence, again.rule.min_confidence) == (1, 0.4)
    assert again.info == {"stance": "head", "trained": "2026-11-25"}
    x = np.stack([claim_features(s, RANKING, RULE) for s in (ALL_REFUTING, MIXED_STRONG, [])])
    four_way.temperature = 1.7
    try:
        assert np.allclose(again.predict_features(x), four_way.predict_features(x))
    finally:
        four_way.temperature = 1.0
    assert json.loads(path.read_text())["feature_names"] == feature_names(10)


def test_bad_model_files(tmp_path, three_way):
    good = three_way.to_json()
    with pytest.raises(ModelNotFound, match="no verdict aggregator"):
        VerdictAggregator.load(tmp_path / "missing.json")
    cases = {
        "not json": "{ nope",
        "a list": "[1, 2]",
        "other format": json.dumps({**good, "format": "factscout-stance-head/1"}),
        "other features": json.dumps({**good, "features": "v0"}),
        "short weights": json.dumps({**good, "weight": good["weight"][:-1]}),
        "unknown label": json.dumps({**good, "labels": ["supported", "refuted", "maybe"]}),
        "renamed feature": json.dumps({**good, "feature_names": ["x", *good["feature_names"][1:]]}),
        "no rule": json.dumps({k: v for k, v in good.items() if k != "rule"}),
        "zero scale": json.dumps({**good, "scale": [0.0] * len(good["scale"])}),
        "bad temperature": json.dumps({**good, "temperature": -1}),
    }
    for name, text in cases.items():
        path = tmp_path / f"{name.replace(' ', '_')}.json"
        path.write_text(text)
        with pytest.raises(BadModel, match=re.escape(str(path))):
            VerdictAggregator.load(path)


def test_wrong_feature_width_is_an_input_error(three_way):
    with pytest.raises(InputError, match="features per claim"):
        three_way.predict_features(np.zeros((1, 7)))


# -- in the pipeline, with the shipped model ------------------------------------------------------


def test_the_shipped_model_loads_and_check_reports_which_method_ran(tiny_corpus):
    from factscout.check import Checker, CheckSettings
    from factscout.records import Sentence
    from factscout.report import Report
    from factscout.retrieve import build_retriever
    from factscout.text.sentences import sentences_of

    shipped = VerdictAggregator.load()
    assert shipped.labels == ("supported", "refuted", "not enough evidence") and shipped.info["stance"]

    class EverySentence:
        encoder = object()  # brings its own: the checker embeds nothing

        def select_passage(self, claim, passage):
            return [Sentence(passage.passage_id, i, t, 1.0) for i, t in enumerate(sentences_of(passage.text))]

    class VaccineSupports:
        def predict(self, claim, sentences):
            return [stance(s.passage_id, s.index, "supports" if "accine" in s.text else "not enough info", 0.9)
                    for s in sentences]  # fmt: skip

    settings = CheckSettings(planner="claim", passages=3, verdict="learned")
    checker = Checker(
        build_retriever(tiny_corpus, "bm25"), settings, selector=EverySentence(), stance=VaccineSupports()
    )
    report = checker.check(Claim("v", "vaccine trial efficacy report"))
    assert report.verdict.method.startswith("learned aggregator")
    assert report.verdict.reason.startswith("aggregator probabilities:")
    assert report.verdict.supporting == sum(s.stance == "supports" for e in report.evidence for s in e.sentences) > 0
    assert report.provenance["settings"]["verdict"] == "learned"
    assert Report.from_dict(report.to_dict()).verdict == report.verdict


def test_check_warns_when_the_aggregator_was_trained_on_another_stance_model(caplog, tiny_corpus):
    from factscout.check import Checker, CheckSettings
    from factscout.retrieve import build_retriever
    from factscout.verify.aggregate import LearnedVerdict

    trained_with = LearnedVerdict().trained_with
    assert trained_with is not None
    other = "cross" if trained_with != "cross" else "head"
    with caplog.at_level("WARNING", logger="factscout.check"):
        checker = Checker(build_retriever(tiny_corpus, "bm25"), CheckSettings(verdict="learned", stance=other))
    assert any(trained_with in w and other in w for w in checker.provenance["warnings"])
    assert trained_with in checker.verdict_method.method
    quiet = Checker(build_retriever(tiny_corpus, "bm25"), CheckSettings(verdict="learned", stance=trained_with))
    assert "warnings" not in quiet.provenance
