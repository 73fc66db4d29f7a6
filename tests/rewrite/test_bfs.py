"""BFS trajectory generation on a tiny corpus where the best edits are known."""

import json

import pytest
from helpers import BFS_CLAIMS, BFS_QRELS, REWRITE_CLAIM, REWRITE_CORPUS, bfs_environment

from factscout.errors import InputError
from factscout.records import Claim
from factscout.rewrite.bfs import BfsConfig, improves, search_claim
from factscout.rewrite.generate import generate_trajectories
from factscout.rewrite.trajectories import finished_claims, manifest_path, read_trajectories

CORPUS = REWRITE_CORPUS
# BM25 ranks the claim d2, d1, rel (AP 1/3); removing "Committee" or "weather" gives 1/2, both 1.
CLAIM = REWRITE_CLAIM
QRELS = BFS_QRELS
CLAIMS = BFS_CLAIMS
NO_RANDOM = BfsConfig(random_prune=0.0)


make_env = bfs_environment


@pytest.fixture(scope="module")
def env():
    return make_env()


class TestSearchClaim:
    def test_finds_the_known_two_step_rewrite(self, env):
        result = search_claim(CLAIM, env, NO_RANDOM)
        assert result.status == "done" and result.reward == pytest.approx(1 / 3)
        best = result.trajectories[0]
        assert best.final_reward == 1.0 and len(best.steps) == 2
        sequences = {tuple(s.action_text for s in t.steps) for t in result.trajectories}
        assert ("remove 'Committee' at 0", "remove 'weather' at 3") in sequences
        first = next(t for t in result.trajectories if t.steps[0].action == 96)
        assert first.steps[0].next_query == "report on solar weather"
        assert (first.steps[0].reward, first.steps[0].next_reward) == pytest.approx((1 / 3, 1 / 2))
        assert first.steps[1].query == first.steps[0].next_query
        for t in result.trajectories:  # improvement only, ranked best first
            assert all(s.next_reward > s.reward for s in t.steps)
        finals = [t.final_reward for t in result.trajectories]
        assert finals == sorted(finals, reverse=True)

    def test_depth_limit(self, env):
        result = search_claim(CLAIM, env, BfsConfig(max_depth=1, random_prune=0.0))
        assert {len(t.steps) for t in result.trajectories} == {1}
        assert max(t.final_reward for t in result.trajectories) == pytest.approx(0.5)

    def test_small_gains_are_pruned(self, env):
        # 1/3 -> 1/2 is a 50% gain: pruned when at least 60% is required
        result = search_claim(CLAIM, env, BfsConfig(min_gain=0.6, random_prune=0.0))
        assert result.status == "no_improvement" and not result.trajectories

    def test_gain_rule(self):
        assert improves(0.5, 0.515, 0.03) and not improves(0.5, 0.514, 0.03)
        assert improves(0.0, 0.01, 0.03) and not improves(0.2, 0.2, 0.0)

    def test_top_n(self, env):
        assert len(search_claim(CLAIM, env, BfsConfig(top_n=1, random_prune=0.0)).trajectories) == 1

    def test_random_pruning_is_seeded(self, env):
        pruned = [search_claim(CLAIM, env, BfsConfig(random_prune=0.5, seed=s)) for s in (1, 1, 2, 3, 4)]
        assert pruned[0] == pruned[1]
        full = search_claim(CLAIM, env, NO_RANDOM)
        assert any(p.candidates < full.candidates for p in pruned)

    def test_skips(self, env):
        assert search_claim(Claim("c2", "sunlight"), env).status == "at_max"
        assert search_claim(Claim("c6", "solar"), env).status == "no_relevant"

    def test_negative_sequences_follow_and_are_marked(self, env, tmp_path):
        config = BfsConfig(random_prune=0.0, negatives=3, max_depth=2)
        plain = search_claim(CLAIM, env, BfsConfig(random_prune=0.0, max_depth=2))
        result = search_claim(CLAIM, env, config)
        n = len(plain.trajectories)
        assert result.trajectories[:n] == plain.trajectories  # the BFS part is unchanged
        negatives = result.trajectories[n:]
        assert len(negatives) == 3 and all(t.negative for t in negatives)
        assert not any(t.negative for t in plain.trajectories)
        for j, t in enumerate(negatives):
            assert {s.sequence for s in t.steps} == {n + j} and len(t.steps) == 2
            assert t.steps[0].query == CLAIM.text and t.steps[1].query == t.steps[0].next_query
            for s in t.steps:  # rewards are the environment's, whichever way they went
                assert s.next_reward == pytest.approx(env.reward(CLAIM, s.next_query))
        assert search_claim(CLAIM, env, config) == result  # seeded
        # a claim already at its best still gets negatives; one without judgements does not
        assert all(t.negative for t in search_claim(Claim("c2", "sunlight"), env, config).trajectories)
        assert search_claim(Claim("c6", "none"), env, config).trajectories == ()
        out = tmp_path / "t.jsonl"
        generate_trajectories([CLAIM], env, out, config)
        assert sum(t.negative for t in read_trajectories(out)) == 3

    def test_bad_config(self):
        with pytest.raises(InputError):
            BfsConfig(max_depth=0)
        with pytest.raises(InputError):
            BfsConfig(random_prune=1.0)


class TestGenerate:
    def test_rows_manifest_and_resume(self, env, tmp_path):
        out = tmp_path / "traj.jsonl"
        summary = generate_trajectories(CLAIMS[:2], env, out, NO_RANDOM)
        assert summary.statuses == {"done": 1, "at_max": 1} and summary.resumed == 0
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert set(rows[0]) == {
            "claim_id", "sequence", "step", "query", "action", "action_text", "next_query", "reward", "next_reward"
        }  # fmt: skip
        assert {r["claim_id"] for r in rows} == {"c1"}
        manifest = [json.loads(line) for line in manifest_path(out).read_text().splitlines()]
        assert [m["claim_id"] for m in manifest] == ["c1", "c2"]
        assert read_trajectories(out)[0].actions == tuple(r["action"] for r in rows[:2])
        before = out.read_text()
        again = generate_trajectories(CLAIMS[:3], env, out, NO_RANDOM)
        assert again.resumed == 2 and again.claims == 3
        assert out.read_text().startswith(before)
        assert [json.loads(line)["claim_id"] for line in manifest_path(out).read_text().splitlines()][-1] == "c3"

    def test_resume_after_a_crash_mid_claim(self, env, tmp_path):
        out = tmp_path / "traj.jsonl"
        generate_trajectories(CLAIMS[:1], env, out, NO_RANDOM)
        clean = out.read_text()
        # a crash after some rows of c3 were written but before its manifest line, mid-line
        with out.open("a") as f:
            f.write(clean.splitlines()[0].replace('"c1"', '"c3"') + "\n" + '{"claim_id": "c3", "seq')
        with manifest_path(out).open("a") as f:
            f.write('{"claim_id": "c3", "sta')
        assert finished_claims(out) == {"c1"}
        assert out.read_text() == clean
        generate_trajectories(CLAIMS[:3], env, out, NO_RANDOM)
        fresh = tmp_path / "fresh.jsonl"
        generate_trajectories(CLAIMS[:3], env, fresh, NO_RANDOM)
        assert out.read_text() == fresh.read_text()

    def test_same_output_with_one_and_two_workers(self, tmp_path):
        config = BfsConfig(seed=3)
        one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
        s1 = generate_trajectories(CLAIMS, make_env, one, config, workers=1)
        s2 = generate_trajectories(CLAIMS, make_env(), two, config, workers=2)
        assert one.read_text() == two.read_text() and one.read_text()
        assert manifest_path(one).read_text() == manifest_path(two).read_text()
        assert s1.statuses == s2.statuses and s1.candidates == s2.candidates
        assert s1.statuses == {"done": 2, "at_max": 2, "no_improvement": 1, "no_relevant": 1}

    def test_duplicate_claims_raise(self, env, tmp_path):
        with pytest.raises(InputError, match="twice"):
            generate_trajectories([CLAIM, CLAIM], env, tmp_path / "x.jsonl")


def test_progress_bar_and_callback(env, tmp_path):
    seen = []
    summary = generate_trajectories(
        CLAIMS[:2], env, tmp_path / "p.jsonl", NO_RANDOM, show_progress=True, on_claim=seen.append
    )
    assert [r.claim_id for r in seen] == ["c1", "c2"] and summary.sequences == len(seen[0].trajectories)
