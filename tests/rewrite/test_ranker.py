"""The candidate-ranking rewrite policy (``ranker``): candidates, the two models as arrays,
training on an endpoint's rewards, saving and loading, binding to the searched index, the CLI."""

import json
import time

import numpy as np
import pytest
from helpers import NOUNS, ranker_cli_round_trip
from helpers import ranker_world as world

from factscout.errors import DataNotFound, InputError
from factscout.records import Claim
from factscout.retrieve import build_retriever
from factscout.rewrite.actions import parse
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.policy import load_policy, make_policy, rewrite, save_policy
from factscout.rewrite.ranker import (
    CANDIDATE_FEATURES,
    N_WORD_FEATURES,
    RankerConfig,
    RankerPolicy,
    TokenModel,
    Trees,
    candidates,
    content_words,
    word_features,
)
from factscout.training.rewrite.ranker import RankerSettings, fit_trees, train_ranker


@pytest.fixture(scope="module")
def trained():
    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    policy = train_ranker(
        claims[:30], qrels, {p.passage_id: p for p in passages}, retriever, settings=RankerSettings(trees=30)
    )
    return policy, retriever, claims, qrels, passages


def test_candidates_are_the_claim_then_keyword_sets_each_once():
    idf = IdfTable.from_texts(["solar panels", "report on weather", "the report", "solar report weather"])
    parsed = parse("Committee report on solar weather")
    words = content_words(parsed, idf)
    assert [w.text for w in words] == ["committee", "report", "solar", "weather"]
    cands = candidates(parsed, words, RankerConfig(top_n=3, max_size=2))
    assert cands[0].kind == "claim" and cands[0].keep is None and cands[0].text == parsed.text
    assert cands[1].kind == "content" and cands[1].text == "Committee report solar weather"
    keys = [c.words for c in cands[1:]]
    assert len(keys) == len(set(keys))  # no set twice
    assert all(len(c.words) <= 2 for c in cands if c.kind == "subset")
    subsets = {c.text for c in cands if c.kind == "subset"}
    assert {c.text for c in cands} >= {"report solar", "solar weather", "report", "weather"}
    assert not any("Committee" in t for t in subsets)  # absent from the corpus: idf 0, not in the top 3
    for cand in cands[1:]:  # the text is the kept words in the claim's order
        assert cand.text == " ".join(parsed.tokens[p].text for p in sorted(cand.keep))


def test_word_features_rank_words_by_idf():
    idf = IdfTable.from_texts(["solar panels", "report on weather", "the report", "solar report"])
    parsed = parse("solar report on weather")
    words = content_words(parsed, idf)
    f = word_features(parsed, words, idf)
    assert f.shape == (3, N_WORD_FEATURES)
    rank = f[:, -4]
    assert rank[[w.text for w in words].index("weather")] == 0  # the rarest word
    assert rank[[w.text for w in words].index("report")] == 2
    assert word_features(parsed, [], idf).shape == (0, N_WORD_FEATURES)


def test_trees_predict_exactly_what_scikit_learn_predicts():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, len(CANDIDATE_FEATURES))).astype(np.float32)
    y = np.sin(x[:, 0]) + 0.5 * (x[:, 3] > 0.2) - x[:, 6] ** 2
    trees = fit_trees(x, y, RankerSettings(trees=20, depth=3))
    from sklearn.ensemble import GradientBoostingRegressor

    reference = GradientBoostingRegressor(
        n_estimators=20, max_depth=3, learning_rate=0.05, subsample=0.8, random_state=0
    )
    np.testing.assert_allclose(trees.predict(x), reference.fit(x, y).predict(x), rtol=1e-9, atol=1e-9)


def test_histogram_trees_predict_what_scikit_learn_predicts():
    rng = np.random.default_rng(1)
    x = rng.normal(size=(2000, len(CANDIDATE_FEATURES))).astype(np.float32)
    y = np.sin(x[:, 0]) + 0.5 * (x[:, 3] > 0.2) - x[:, 6] ** 2
    trees = fit_trees(x, y, RankerSettings(trees=30, depth=3, booster="hist"))
    from sklearn.ensemble import HistGradientBoostingRegressor

    reference = HistGradientBoostingRegressor(
        max_iter=30, max_depth=3, max_leaf_nodes=8, learning_rate=0.05, early_stopping=False, random_state=0
    ).fit(x, y)
    unseen = rng.normal(size=(500, len(CANDIDATE_FEATURES))).astype(np.float32)
    for rows in (x, unseen):
        np.testing.assert_allclose(trees.predict(rows), reference.predict(rows), rtol=1e-9, atol=1e-9)
    assert trees.rate == 1.0 and (trees.left >= 0).sum() > 30  # real splits, not stumps
    with pytest.raises(InputError, match="booster"):
        RankerSettings(booster="xgb")


def test_malformed_arrays_are_refused():
    with pytest.raises(InputError, match="shape"):
        TokenModel(np.zeros(3), np.ones(3), np.zeros(3), 0.0)
    one = np.array([0], dtype=np.int32)
    with pytest.raises(InputError, match="point outside"):
        Trees(one, np.zeros(1), np.array([5], dtype=np.int32), one, np.zeros(1), one, 0.0, 0.1)
    with pytest.raises(InputError, match="margin"):
        RankerConfig(margin=-1.0)


def test_token_model_gives_log_probabilities():
    model = TokenModel(np.zeros(N_WORD_FEATURES), np.ones(N_WORD_FEATURES), np.full(N_WORD_FEATURES, 100.0), 0.0)
    out = model.log_p(np.stack([np.ones(N_WORD_FEATURES), -np.ones(N_WORD_FEATURES)]))
    assert out[0] == pytest.approx(0.0) and out[1] == pytest.approx(np.log(1e-4))


def test_trained_ranker_beats_the_claim_on_unseen_claims(trained):
    policy, retriever, claims, qrels, _ = trained
    env = SearchEnvironment(retriever, qrels, "AP@50")
    unseen = claims[30:]
    assert all(env.reward(c, c.text) == 0.0 for c in unseen)  # the whole claim matches nothing
    finals = [rewrite(c, policy, max_steps=32).final for c in unseen]
    assert np.mean([env.reward(c, q) for c, q in zip(unseen, finals, strict=True)]) >= 0.9
    t = policy.training
    assert t["claims"] == 30 and t["cross-validated AP@50"] > t["claim AP@50"]
    assert t["oracle AP@50 over the candidates"] >= t["cross-validated AP@50"]
    assert t["target"] in ("raw", "gain") and t["margin"] in RankerSettings().margins


def test_the_rewrite_is_remove_edits(trained):
    policy, _, claims, _, _ = trained
    trace = rewrite(claims[31], policy, max_steps=32)
    assert trace.steps and all(s.label.startswith("remove") for s in trace.steps)
    assert NOUNS[31] in trace.final


def test_the_step_limit_follows_the_policy(trained):
    from factscout.rewrite.policy import RandomEditPolicy
    from factscout.rewrite.rewriter import step_limit

    policy = trained[0]
    assert step_limit(policy) == 32 and step_limit(RandomEditPolicy()) == 4
    long_claim = Claim("x", f"The new {NOUNS[33]} report proves a severe and sudden national {NOUNS[1]} shortage.")
    trace = rewrite(long_claim, policy)  # no max_steps: the ranker's own limit, not the BFS depth of 4
    assert len(trace.steps) > 4 and NOUNS[33] in trace.final


def test_a_large_margin_keeps_the_claim(trained):
    policy, retriever, claims, _, _ = trained
    cautious = RankerPolicy(
        RankerConfig(margin=1e9), policy.tokens, policy.trees, policy.idf, training=policy.training
    ).bind(retriever)
    assert rewrite(claims[31], cautious, max_steps=32).final == claims[31].text


def test_save_load_round_trip(trained, tmp_path):
    policy, retriever, claims, _, _ = trained
    folder = save_policy(policy, tmp_path / "ranker")
    assert {p.name for p in folder.iterdir()} == {"policy.json", "ranker.npz", "idf.json.gz"}
    loaded = load_policy(folder)
    assert isinstance(loaded, RankerPolicy) and loaded.config == policy.config
    with pytest.raises(InputError, match="bind it"):
        rewrite(claims[32], loaded, max_steps=32)
    bound = make_policy(str(folder), retriever=retriever)
    assert [s for _, s in bound.scored(claims[32].text)] == pytest.approx(
        [s for _, s in policy.scored(claims[32].text)]
    )
    assert rewrite(claims[32], bound, max_steps=32).final == rewrite(claims[32], policy, max_steps=32).final


def test_saved_files_are_byte_stable(trained, tmp_path):
    """Saving the same policy again (seconds later) writes the same idf.json.gz and ranker.npz bytes."""
    policy = trained[0]
    a = save_policy(policy, tmp_path / "a")
    assert (a / "idf.json.gz").read_bytes()[4:8] == b"\0\0\0\0"  # gzip header mtime
    time.sleep(2.1)  # zip member times have a resolution of 2 s
    b = save_policy(policy, tmp_path / "b")
    for name in ("idf.json.gz", "ranker.npz"):
        assert (b / name).read_bytes() == (a / name).read_bytes(), name


def test_broken_files_are_clear_errors(trained, tmp_path):
    policy = trained[0]
    folder = save_policy(policy, tmp_path / "ranker")
    (folder / "ranker.npz").write_bytes(b"not a zip")
    with pytest.raises(InputError, match="corrupt"):
        load_policy(folder)
    (folder / "ranker.npz").unlink()
    with pytest.raises(DataNotFound, match="missing"):
        load_policy(folder)
    save_policy(policy, folder)
    meta = json.loads((folder / "policy.json").read_text())
    meta["config"]["top_n"] = 0
    (folder / "policy.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="top_n"):
        load_policy(folder)


def test_too_few_claims_is_an_input_error():
    passages, claims, qrels = world()
    retriever = build_retriever(passages, "bm25-and", show_progress=False)
    with pytest.raises(InputError, match="at least 5 training claims"):
        train_ranker(claims[:3], qrels, {p.passage_id: p for p in passages}, retriever)


def test_bind_needs_a_retriever(trained):
    with pytest.raises(InputError, match="search"):
        trained[0].bind(object())


def test_train_and_rewrite_cli(tmp_path):
    _, final, claims = ranker_cli_round_trip(tmp_path)
    assert NOUNS[33] in final and final != claims[33].text
