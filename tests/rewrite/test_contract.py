"""The rewrite-policy contract: every policy registered in ``REWRITE_POLICIES`` passes the same
behavioural tests (untrained learned policies included: their choices are arbitrary, the
contract is not). States use the model-free hashing encoder so the tests stay fast."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import REWRITE_CORPUS

from factscout.records import Claim
from factscout.retrieve import build_retriever
from factscout.rewrite.actions import N_ACTIONS, action_mask
from factscout.rewrite.base import REWRITE_POLICIES, Episode
from factscout.rewrite.io import load_policy, save_policy
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.networks import ClassifierConfig, DtConfig
from factscout.rewrite.ranker import N_WORD_FEATURES, RankerConfig, TokenModel, Trees, endpoint_search
from factscout.rewrite.rewriter import rewrite

torch = pytest.importorskip("torch")

# Small settings for the learned policies; a policy registered without an entry here is built
# with no arguments.
SMALL = {
    "dt": (DtConfig(hidden_size=32, n_layer=1, n_head=2, dropout=0.0, encoder="hashing"),),
    "classifier": (ClassifierConfig(hidden=16, dropout=0.0, encoder="hashing"),),
}
# the ranker searches an endpoint: a bm25-and index of the rewrite corpus, and trees that prefer
# one-word candidates (feature 0 is the candidate's size)
ENDPOINT = build_retriever(REWRITE_CORPUS, "bm25-and", show_progress=False)
_NODES = (np.array([0, -1, -1], np.int32), np.array([1.5, 0.0, 0.0]), np.array([1, -1, -1], np.int32),
          np.array([2, -1, -1], np.int32), np.array([0.0, 1.0, 0.0]), np.array([0], np.int32), 0.0, 1.0)  # fmt: skip
SMALL["ranker"] = (
    RankerConfig(),
    TokenModel(np.zeros(N_WORD_FEATURES), np.ones(N_WORD_FEATURES), np.zeros(N_WORD_FEATURES), 0.0),
    Trees(*_NODES),
    IdfTable.from_passages(REWRITE_CORPUS),
    endpoint_search(ENDPOINT, 1000),
)
TEXTS = ["Committee report on solar weather", "The senator voted against the new budget.", "Prices rose in 2020"]


def make(name: str):
    torch.manual_seed(0)
    return REWRITE_POLICIES[name](*SMALL.get(name, ()))


@pytest.fixture(params=REWRITE_POLICIES.names())
def policy(request):
    return make(request.param)


def test_the_shipped_policies_are_registered():
    assert {"classifier", "dt", "original", "random"} <= set(REWRITE_POLICIES.names())


class TestRewritePolicyContract:
    def test_describes_itself(self, policy):
        assert isinstance(policy.name, str) and policy.name
        assert policy.reward in ("dense", "sparse")
        assert isinstance(policy.target_return, float)

    def test_chooses_a_valid_action_or_stops(self, policy):
        for text in TEXTS:
            mask = action_mask(text)
            choice = policy.choose(Episode((text,), (), (1.0,), mask))
            assert choice is None or (isinstance(choice, int) and mask[choice])

    def test_stops_when_no_action_is_valid(self, policy):
        assert policy.choose(Episode((TEXTS[0],), (), (1.0,), (False,) * N_ACTIONS)) is None

    def test_the_same_episode_gets_the_same_choice(self, policy):
        episode = Episode((TEXTS[1],), (), (1.0,), action_mask(TEXTS[1]))
        assert policy.choose(episode) == policy.choose(episode)

    def test_rewrite_traces_valid_edits_within_max_steps(self, policy):
        for text in TEXTS:
            trace = rewrite(Claim("c", text), policy, max_steps=3)
            assert trace.claim_id == "c" and trace.original == text and trace.policy == policy.name
            assert len(trace.steps) <= 3
            before = text
            for step in trace.steps:
                assert action_mask(before)[step.action]
                before = step.query
            assert trace.final == before

    def test_saved_and_loaded_it_rewrites_alike(self, policy, tmp_path):
        loaded = load_policy(save_policy(policy, tmp_path / "policy"))
        if getattr(policy, "search", None) is not None:  # a policy that searches is bound to its endpoint again
            loaded = loaded.bind(ENDPOINT)
        assert type(loaded) is type(policy) and loaded.name == policy.name
        for text in TEXTS:
            assert rewrite(text, loaded).final == rewrite(text, policy).final
