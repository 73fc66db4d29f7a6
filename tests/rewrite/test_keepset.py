"""Keep-set search on a conjunctive endpoint (bm25-and), where single edits find nothing."""

import pytest
from helpers import REWRITE_CORPUS

from factscout.records import Claim
from factscout.retrieve import build_retriever
from factscout.rewrite.actions import parse
from factscout.rewrite.bfs import BfsConfig, search_claim
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.keepset import align_tokens, kept_text, removal_trajectory, search_keep_set

CLAIM = Claim("c1", "Committee report on solar weather")  # only "solar" alone finds "rel"
PAIR = Claim("c5", "Trains rivers sea cats")  # no single word ranks t1 first; "Trains rivers" does
QRELS = {"c1": {"rel": 1}, "c5": {"t1": 1}}


@pytest.fixture(scope="module")
def and_env():
    return SearchEnvironment(build_retriever(REWRITE_CORPUS, "bm25-and"), QRELS)


def test_the_whole_claim_finds_nothing_on_an_and_endpoint(and_env):
    assert and_env.search(CLAIM, [CLAIM.text]) == [()]
    # and so does every single edit: improvement-only BFS cannot start
    assert search_claim(CLAIM, and_env, BfsConfig(random_prune=0.0)).status == "no_improvement"


def test_keep_set_finds_the_word_that_matters(and_env):
    found = search_keep_set(CLAIM, and_env)
    assert found.query == "solar" and found.reward == 1.0
    assert [parse(CLAIM.text).tokens[i].text for i in found.keep] == ["solar"]


def test_pairs_cross_the_plateau_when_no_single_word_scores():
    env = SearchEnvironment(build_retriever(REWRITE_CORPUS, "bm25-and"), QRELS, "RR@1")
    singles = env.rewards(PAIR, ["Trains", "rivers", "sea", "cats"])
    assert singles == [0.0, 0.0, 0.0, 0.0]
    found = search_keep_set(PAIR, env)
    assert found.reward == 1.0 and len(found.keep) == 2
    assert found.candidates > 4  # the single words, then the pairs


def test_removal_trajectory_is_valid_edits_to_the_kept_words(and_env):
    traj = removal_trajectory(CLAIM, search_keep_set(CLAIM, and_env).keep, and_env)
    assert [s.action_text for s in traj.steps] == [
        "remove 'Committee' at 0",
        "remove 'report' at 0",
        "remove 'on' at 0",
        "remove 'weather' at 1",
    ]
    assert traj.steps[-1].next_query == "solar" and traj.final_reward == 1.0
    assert all(a.next_query == b.query for a, b in zip(traj.steps, traj.steps[1:], strict=False))


def test_bfs_with_keep_set_returns_the_long_sequence(and_env):
    result = search_claim(CLAIM, and_env, BfsConfig(random_prune=0.0, keep_set=True))
    assert result.status == "done" and result.trajectories[0].final_reward == 1.0
    assert len(result.trajectories[0].steps) == 4  # beyond nothing: BFS alone found no sequence
    assert [s.sequence for s in result.trajectories[0].steps] == [0, 0, 0, 0]


def test_bfs_without_keep_set_is_unchanged_on_bm25():
    env = SearchEnvironment(build_retriever(REWRITE_CORPUS, "bm25"), QRELS)
    plain = search_claim(CLAIM, env, BfsConfig(random_prune=0.0))
    both = search_claim(CLAIM, env, BfsConfig(random_prune=0.0, keep_set=True))
    assert both.trajectories[0].final_reward >= plain.trajectories[0].final_reward
    assert both.candidates > plain.candidates


def test_kept_text_and_alignment():
    parsed = parse("Vitamin D reduces falls in elderly people.")
    assert kept_text(parsed.tokens, [0, 1, 3]) == "Vitamin D falls"
    assert align_tokens(parsed, parse("Vitamin falls elderly")) == [0, 3, 5]
    assert align_tokens(parsed, parse("Vitamin cats")) is None
