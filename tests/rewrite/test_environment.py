"""The black-box search environment: hand-checked rewards on a tiny corpus, trec_eval agreement,
the per-query cache and batching."""

import datetime as dt
import random
from dataclasses import replace

import pytest
from helpers import REWRITE_CLAIM, REWRITE_CORPUS

from factscout.errors import InputError, UnknownName
from factscout.evaluate import evaluate
from factscout.evaluate.measures import Measure
from factscout.records import Claim, Ranking
from factscout.retrieve import build_retriever
from factscout.rewrite.environment import (
    SearchEnvironment,
    average_precision,
    max_reward,
    recall,
    reciprocal_rank,
)

# the rewrite corpus without t1, its relevant passage dated
CORPUS = [replace(REWRITE_CORPUS[0], published=dt.date(2020, 1, 1)), *REWRITE_CORPUS[1:8]]
CLAIM = REWRITE_CLAIM
QUERY = CLAIM.text  # BM25 ranks it d2, d1, rel, d3


class SpyRetriever:
    """Counts the search calls of a wrapped retriever."""

    def __init__(self, inner):
        self.inner, self.name, self.store = inner, inner.name, inner.store
        self.calls: list[tuple[list[str], int, dt.date | None]] = []

    def search(self, queries, k, *, published_before=None):
        self.calls.append(([q.text for q in queries], k, published_before))
        return self.inner.search(queries, k, published_before=published_before)


@pytest.fixture(scope="module")
def bm25():
    return build_retriever(CORPUS, "bm25")


def env_for(bm25, qrels=None, reward="AP@50", **kw):
    spy = SpyRetriever(bm25)
    return SearchEnvironment(spy, qrels or {"c1": {"rel": 1}}, reward, **kw), spy


class TestRewards:
    def test_ranking_of_the_claim(self, bm25):
        env, _ = env_for(bm25)
        assert env.search(CLAIM, [QUERY]) == [("d2", "d1", "rel", "d3")]

    @pytest.mark.parametrize(
        ("reward", "expected"),
        [("AP@50", 1 / 3), ("R@50", 1.0), ("RR", 1 / 3), ("AP@2", 0.0), ("R@2", 0.0), ("RR@3", 1 / 3)],
    )
    def test_hand_checked_one_relevant(self, bm25, reward, expected):
        env, _ = env_for(bm25, reward=reward)
        assert env.reward(CLAIM, QUERY) == pytest.approx(expected)

    def test_hand_checked_two_relevant(self, bm25):
        qrels = {"c1": {"rel": 1, "d3": 2, "f1": 0}}  # f1 judged not relevant
        env, _ = env_for(bm25, qrels)
        assert env.reward(CLAIM, QUERY) == pytest.approx((1 / 3 + 2 / 4) / 2)
        env_r, _ = env_for(bm25, qrels, "R@3")
        assert env_r.reward(CLAIM, QUERY) == pytest.approx(1 / 2)

    def test_removing_a_distractor_word_helps(self, bm25):
        env, _ = env_for(bm25)
        assert env.rewards(CLAIM, ["report on solar weather", "solar"]) == pytest.approx([0.5, 1.0])

    def test_claim_without_qrels_scores_zero(self, bm25):
        env, _ = env_for(bm25)
        other = Claim("c9", "solar")
        assert env.reward(other, "solar") == 0.0
        assert env.max_reward(other) == 0.0

    def test_max_reward(self):
        assert max_reward(Measure.parse("AP@2"), 3) == pytest.approx(2 / 3)
        assert max_reward(Measure.parse("R@50"), 3) == 1.0
        assert max_reward(Measure.parse("RR"), 3) == 1.0
        assert max_reward(Measure.parse("AP@50"), 0) == 0.0

    def test_unknown_reward_lists_the_known(self, bm25):
        with pytest.raises(UnknownName, match="known: AP@k, R@k, RR"):
            SearchEnvironment(bm25, {}, "nDCG@10")

    def test_depth_below_cutoff_raises(self, bm25):
        with pytest.raises(InputError):
            SearchEnvironment(bm25, {}, "AP@50", depth=10)

    def test_agrees_with_trec_eval_through_factscout_evaluate(self):
        rng = random.Random(7)
        pool = [f"p{i:02d}" for i in range(30)]
        for trial in range(20):
            ranked = rng.sample(pool, rng.randint(1, 30))
            relevant = set(rng.sample(pool, rng.randint(1, 6)))
            run = [Ranking.from_scores("q", {pid: 100.0 - i for i, pid in enumerate(ranked)})]
            qrels = {"q": dict.fromkeys(relevant, 1)}
            ev = evaluate(qrels, run, ["AP@10", "R@10", "RR", "AP@50"])
            assert average_precision(ranked, relevant, 10) == pytest.approx(ev.mean("AP@10")), trial
            assert average_precision(ranked, relevant, 50) == pytest.approx(ev.mean("AP@50")), trial
            assert recall(ranked, relevant, 10) == pytest.approx(ev.mean("R@10")), trial
            assert reciprocal_rank(ranked, relevant, None) == pytest.approx(ev.mean("RR")), trial


class TestCacheAndBatches:
    def test_one_search_per_batch_and_cache_hits(self, bm25):
        env, spy = env_for(bm25)
        first = env.rewards(CLAIM, [QUERY, "solar", QUERY])
        assert len(spy.calls) == 1 and spy.calls[0][0] == [QUERY, "solar"] and spy.calls[0][1] == 50
        assert first == pytest.approx([1 / 3, 1.0, 1 / 3])
        stats = env.cache_stats
        assert (stats.hits, stats.misses, stats.searches, stats.size) == (0, 2, 1, 2)
        second = env.rewards(CLAIM, ["solar", "report on solar weather"])
        assert spy.calls[1][0] == ["report on solar weather"]
        assert second == pytest.approx([1.0, 0.5])
        assert (env.cache_stats.hits, env.cache_stats.misses, env.cache_stats.searches) == (1, 3, 2)
        env.rewards(CLAIM, [QUERY, "solar"])  # all cached: no search at all
        assert len(spy.calls) == 2

    def test_cache_is_shared_across_claims_with_their_own_qrels(self, bm25):
        env, spy = env_for(bm25, {"c1": {"rel": 1}, "c2": {"d2": 1}})
        assert env.reward(CLAIM, QUERY) == pytest.approx(1 / 3)
        assert env.reward(Claim("c2", "x"), QUERY) == 1.0
        assert len(spy.calls) == 1

    def test_cache_is_bounded(self, bm25):
        env, spy = env_for(bm25, cache_size=2)
        env.rewards(CLAIM, ["solar", "report", "weather"])
        assert env.cache_stats.size == 2
        env.reward(CLAIM, "solar")  # the oldest entry went first
        assert len(spy.calls) == 2

    def test_claim_dates_filter_the_search(self, bm25):
        env, spy = env_for(bm25, use_claim_dates=True)
        dated = Claim("c1", CLAIM.text, dt.date(2019, 6, 1))  # before the relevant passage
        assert env.reward(dated, "solar") == 0.0
        assert spy.calls[0][2] == dt.date(2019, 6, 1)
        assert env.reward(CLAIM, "solar") == 1.0  # undated claim: a separate cache entry
