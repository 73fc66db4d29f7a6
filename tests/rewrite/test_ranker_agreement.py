"""The candidate ranker's agreement features (``rewrite/agreement.py``): how close the passages an
endpoint returns are to the claim, the passage vectors' cache, and a ranker trained with them
(``RankerConfig.semantic``): width checks, binding, saving and loading."""

import hashlib

import numpy as np
import pytest
from helpers import ranker_cli_round_trip
from helpers import ranker_world as world

from factscout.errors import InputError
from factscout.records import Passage
from factscout.retrieve import build_retriever
from factscout.rewrite.agreement import AGREEMENT_FEATURES, DEPTH, PassageVectors, agreement_features
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.policy import load_policy, make_policy, rewrite, save_policy
from factscout.rewrite.ranker import CANDIDATE_FEATURES, RankerConfig, RankerPolicy
from factscout.training.rewrite.ranker import RankerSettings, train_ranker

SEMANTIC_WIDTH = len(CANDIDATE_FEATURES) + len(AGREEMENT_FEATURES)  # a ranker that reads the passages


class WordsEncoder:
    """Unit bag-of-words vectors (each word hashed to one of 64 dimensions); counts what it encodes."""

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts):
        self.encoded.extend(texts)
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for r, text in enumerate(texts):
            for w in text.lower().replace(".", " ").split():
                out[r, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
        return out / np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)


def store(*texts: str) -> dict[str, Passage]:
    return {f"p{i}": Passage(f"p{i}", f"p{i}", "", t) for i, t in enumerate(texts)}


def test_features_are_cosines_to_the_claim_and_their_gain_over_the_claims():
    enc = WordsEncoder()
    passages = store("solar panels power homes", "the weather report", "solar panels", "cats and dogs")
    vectors = PassageVectors(passages, enc)
    claim = vectors.embed("solar panels power homes")
    out = agreement_features(claim, [["p1", "p3"], ["p0", "p2"], []], vectors)
    assert out.shape == (3, len(AGREEMENT_FEATURES))
    cos = [float(vectors(["p0"])[0] @ claim), float(vectors(["p2"])[0] @ claim)]
    assert cos[0] == pytest.approx(1.0)
    assert out[1, :5] == pytest.approx(
        [cos[0], np.mean(cos), np.mean(cos), cos[0], (cos[0] + cos[1] / np.log2(3)) / (1 + 1 / np.log2(3))]
    )
    assert out[0, 0] == pytest.approx(0.0)  # "the weather report" shares no word with the claim
    assert out[2, :5] == pytest.approx(np.zeros(5))  # found nothing
    assert out[:, 5:] == pytest.approx(out[:, :5] - out[0, :5])  # minus the claim's (the first candidate)
    assert (out[1, 5:] > 0).all()  # the rewrite finds passages closer to the claim than the claim does


def test_only_the_first_depth_results_are_read_and_each_passage_is_encoded_once():
    enc = WordsEncoder()
    passages = store(*(f"passage number {i}" for i in range(DEPTH + 5)))
    vectors = PassageVectors(passages, enc)
    ids = list(passages)
    agreement_features(vectors.embed("number"), [ids, ids[:3]], vectors)
    assert sorted(enc.encoded[1:]) == sorted(passages[i].contents for i in ids[:DEPTH])
    vectors.prime(list(passages.values()))  # only the 5 not read yet
    assert len(enc.encoded) == 1 + DEPTH + 5


def test_a_passage_the_store_lacks_is_a_clear_error():
    vectors = PassageVectors(store("a"), WordsEncoder())
    with pytest.raises(InputError, match="p9"):
        vectors(["p9"])
    with pytest.raises(InputError, match="encode"):
        PassageVectors(store("a"), object())


@pytest.fixture(scope="module")
def semantic():
    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    lookup = {p.passage_id: p for p in passages}
    vectors = PassageVectors(lookup, WordsEncoder())
    config = RankerConfig(retriever="bm25-and", semantic="words")
    policy = train_ranker(claims[:30], qrels, lookup, retriever, config, RankerSettings(trees=30), vectors=vectors)
    return policy, retriever, claims, qrels, lookup


def test_a_semantic_ranker_reads_the_agreement_features(semantic):
    policy, retriever, claims, qrels, _ = semantic
    assert policy.config.n_features == SEMANTIC_WIDTH
    assert policy.training["features"] == SEMANTIC_WIDTH
    env = SearchEnvironment(retriever, qrels, "AP@50")
    finals = [rewrite(c, policy, max_steps=32).final for c in claims[30:]]
    assert np.mean([env.reward(c, q) for c, q in zip(claims[30:], finals, strict=True)]) >= 0.9


def test_a_reward_model_wider_than_its_config_is_refused(semantic):
    policy = semantic[0]
    if not (policy.trees.feature >= len(CANDIDATE_FEATURES)).any():
        pytest.skip("the trees happened to use no agreement feature")
    with pytest.raises(InputError, match="semantic"):
        RankerPolicy(RankerConfig(), policy.tokens, policy.trees, policy.idf)


def test_a_saved_semantic_ranker_binds_its_encoder_by_name(semantic, tmp_path, monkeypatch):
    policy, retriever, claims, _, _ = semantic
    folder = save_policy(policy, tmp_path / "ranker")
    assert load_policy(folder).config.semantic == "words"
    made = []

    def make_encoder(name):
        made.append(name)
        return WordsEncoder()

    monkeypatch.setattr("factscout.retrieve.adapter.make_encoder", make_encoder)
    bound = make_policy(str(folder), retriever=retriever)
    assert made == ["words"]
    claim = claims[32].text
    assert [s for _, s in bound.scored(claim)] == pytest.approx([s for _, s in policy.scored(claim)], abs=1e-5)
    with pytest.raises(InputError, match="no passage store"):
        load_policy(folder).bind(type("Box", (), {"search": lambda self, q, k: []})())


def test_train_a_semantic_ranker_and_rewrite_with_it_from_the_cli(tmp_path):
    import json

    folder, final, claims = ranker_cli_round_trip(tmp_path, "--semantic", "minilm", "--booster", "hist")
    meta = json.loads((folder / "policy.json").read_text())
    assert meta["config"]["semantic"] == "minilm" and meta["training"]["settings"]["booster"] == "hist"
    assert meta["training"]["features"] == SEMANTIC_WIDTH
    assert final != claims[33].text


def test_the_shipped_averitec_bm25_plain_ranker_reads_the_passages_and_is_picked_for_its_index():
    from factscout.rewrite.io import SHIPPED_DIR, policy_for_index

    policy = load_policy(SHIPPED_DIR / "averitec-bm25-plain")
    assert isinstance(policy, RankerPolicy)
    assert policy.config.semantic == "minilm" and policy.config.retriever == "bm25-plain"
    assert int(policy.trees.feature.max()) >= len(CANDIDATE_FEATURES)  # it does use the agreement features
    assert policy_for_index("bm25-plain", "../shared/data/averitec/beir/corpus.jsonl") == "averitec-bm25-plain"
    passages = list(store("Drinking water prices rose in Lagos in 2020.", "Election results in Ghana.").values())
    retriever = build_retriever(passages, "bm25-plain", show_progress=False)
    bound = policy.bind(retriever, vectors=PassageVectors({p.passage_id: p for p in passages}, WordsEncoder()))
    scored = bound.scored("The price of drinking water in Lagos doubled in 2020, says the governor.")
    assert scored[0][0].text and {c.kind for c, _ in scored} >= {"claim", "content", "subset"}


def test_the_shipped_tuned_bm25_ranker_loads_by_name_and_is_picked_for_its_index():
    from factscout.rewrite.io import policy_for_index

    assert policy_for_index("bm25", "../shared/data/averitec/beir/corpus.jsonl") == "averitec-bm25"
    policy = make_policy("averitec-bm25")  # unbound: it refuses to rewrite until bound to an index
    assert isinstance(policy, RankerPolicy) and policy.config.semantic == "minilm" and policy.config.retriever == "bm25"


def test_the_lexical_judge_scores_shared_words_and_ignores_stop_words():
    from factscout.rewrite.agreement import LexicalEncoder, agreement_encoder

    enc = agreement_encoder("lexical")
    assert isinstance(enc, LexicalEncoder)
    v = enc.encode(
        [
            "Vitamin D supplementation reduces falls in the elderly.",
            "Falls in elderly people fell with vitamin D.",
            "The committee approved the new parking rules.",
            "the of and it is",
        ]
    )
    assert v.shape == (4, enc.dim) and v.dtype == np.float32
    assert np.allclose(np.linalg.norm(v[:3], axis=1), 1.0) and not v[3].any()  # stop words only: no words
    assert v[0] @ v[1] > 0.4 and v[0] @ v[2] == 0.0


def test_a_lexical_ranker_trains_and_binds_without_a_sentence_encoder(tmp_path, monkeypatch):
    def no_encoder(name):
        raise AssertionError(f"a lexical ranker loaded the encoder {name!r}")

    monkeypatch.setattr("factscout.retrieve.adapter.make_encoder", no_encoder)
    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    lookup = {p.passage_id: p for p in passages}
    config = RankerConfig(retriever="bm25-and", semantic="lexical")
    policy = train_ranker(claims[:30], qrels, lookup, retriever, config, RankerSettings(trees=30))
    assert policy.training["features"] == SEMANTIC_WIDTH
    bound = make_policy(str(save_policy(policy, tmp_path / "lexical")), retriever=retriever)
    claim = claims[32].text
    assert [s for _, s in bound.scored(claim)] == pytest.approx([s for _, s in policy.scored(claim)], abs=1e-5)


def test_the_idf_lexical_judge_weighs_a_shared_rare_word_over_a_shared_common_one():
    from factscout.errors import InputError
    from factscout.rewrite.agreement import IdfLexicalEncoder, agreement_encoder
    from factscout.rewrite.keywords import IdfTable

    corpus = ["pioglitazone and cancer risk", "cancer screening", "cancer in the elderly", "cancer deaths", "diet"]
    enc = agreement_encoder("lexical-idf", IdfTable.from_texts(corpus))
    assert isinstance(enc, IdfLexicalEncoder)
    claim, rare, common, nothing = enc.encode(
        ["Pioglitazone raises cancer risk.", "Pioglitazone was approved.", "Cancer was approved.", "the of and"]
    )
    assert np.isclose(np.linalg.norm(claim), 1.0) and not nothing.any()
    assert claim @ rare > claim @ common > 0.0  # pioglitazone is in one document, cancer in four
    with pytest.raises(InputError, match="idf table"):
        agreement_encoder("lexical-idf")


def test_an_idf_lexical_ranker_round_trips_through_save_and_bind(tmp_path):
    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    lookup = {p.passage_id: p for p in passages}
    config = RankerConfig(retriever="bm25-and", semantic="lexical-idf")
    policy = train_ranker(claims[:30], qrels, lookup, retriever, config, RankerSettings(trees=30))
    bound = make_policy(str(save_policy(policy, tmp_path / "lexical-idf")), retriever=retriever)
    claim = claims[32].text
    assert [s for _, s in bound.scored(claim)] == pytest.approx([s for _, s in policy.scored(claim)], abs=1e-5)


@pytest.mark.parametrize("retriever", ["bm25-plain", "bm25"])
def test_the_shipped_scifact_rankers_are_picked_for_a_scifact_index(retriever):
    from factscout.rewrite.io import policy_for_index

    name = policy_for_index(retriever, "../shared/data/scifact/beir/corpus.jsonl")
    assert name == f"scifact-{retriever}"
    assert policy_for_index(retriever, "../shared/data/covidfact/beir/corpus.jsonl") == f"averitec-{retriever}"
    policy = make_policy(name)
    assert isinstance(policy, RankerPolicy) and policy.config.semantic == "minilm"
    assert policy.config.retriever == retriever and policy.training["claims"] == 607


def test_consensus_features_favour_the_candidate_whose_results_the_others_also_find():
    from factscout.rewrite.agreement import CONSENSUS_FEATURES, consensus_features

    shared = [f"s{i}" for i in range(10)]  # what most rewrites find
    claim = ["x0", "x1", "x2", "x3", *shared[:6]]  # the claim finds four passages no rewrite finds first
    x = consensus_features([claim, shared, shared[::-1], shared[3:] + shared[:3], []])
    assert x.shape == (5, len(CONSENSUS_FEATURES)) and x.dtype == np.float32
    top1, top10, discounted, found = range(4)
    assert x[1, top1] > x[0, top1] and x[1, top10] > x[0, top10] and x[1, discounted] > x[0, discounted]
    assert x[1, found] == pytest.approx(1.0) and x[0, found] == pytest.approx(0.6)  # the fused top 10: s0 ... s9
    assert x.max() <= 1.0 + 1e-6 and x[:4, :4].max() == pytest.approx(1.0)  # scaled by the best fused passage
    assert not x[4, :4].any()  # found nothing: zeros
    assert np.allclose(x[:, 4:], x[:, :4] - x[0, :4])  # minus the claim's
    assert consensus_features([]).shape == (0, len(CONSENSUS_FEATURES))


def test_a_consensus_ranker_trains_saves_and_binds_and_old_configs_load_without_it(tmp_path):
    from factscout.rewrite.agreement import CONSENSUS_FEATURES

    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    lookup = {p.passage_id: p for p in passages}
    config = RankerConfig(retriever="bm25-and", consensus=True)
    assert config.n_features == RankerConfig().n_features + len(CONSENSUS_FEATURES)
    policy = train_ranker(claims[:30], qrels, lookup, retriever, config, RankerSettings(trees=30))
    assert policy.training["features"] == config.n_features
    bound = make_policy(str(save_policy(policy, tmp_path / "consensus")), retriever=retriever)
    assert bound.config.consensus
    claim = claims[32].text
    assert [s for _, s in bound.scored(claim)] == pytest.approx([s for _, s in policy.scored(claim)], abs=1e-5)
    assert not make_policy("averitec-bm25-and").config.consensus  # a file from before the option
    with pytest.raises(InputError, match="consensus"):
        RankerConfig(consensus="yes")


def test_the_shipped_scifact_dense_ranker_judges_by_idf_weighted_words_and_runs_once_bound():
    from factscout.rewrite.agreement import IdfLexicalEncoder
    from factscout.rewrite.io import policy_for_index

    assert policy_for_index("dense", "../shared/data/scifact/beir/corpus.jsonl") == "scifact-dense"
    assert policy_for_index("dense", "../shared/data/averitec/beir/corpus.jsonl") == "averitec-dense"
    assert make_policy("averitec-dense").config.semantic == "lexical-idf"
    policy = make_policy("scifact-dense")
    assert isinstance(policy, RankerPolicy) and policy.config.semantic == "lexical-idf"
    assert not policy.config.consensus and policy.training["features"] == SEMANTIC_WIDTH
    passages, claims, _ = world()
    bound = policy.bind(build_retriever(passages, "bm25", show_progress=False))  # any endpoint with a store
    assert isinstance(bound.vectors.encoder, IdfLexicalEncoder)
    scored = bound.scored(claims[0].text)
    assert scored and sum(c.kind == "claim" for c, _ in scored) == 1
