import datetime as dt

import numpy as np
import pytest

from factscout.errors import InputError, UnknownName
from factscout.plan import PLANNERS, finalize, make_planner, plan_all
from factscout.plan.mmr import MmrFilter
from factscout.records import Claim, Query

CLAIM = Claim(
    "c1", "The tax cut was the largest in history.", dt.date(2020, 8, 25), {"questions": ["Q one?", "q ONE? ", ""]}
)


def test_finalize_normalises_dedups_and_never_returns_empty():
    qs = finalize(CLAIM, ["1. Was it large?", "- was it large", "  ", "Who passed it?"], "test", include_claim=True)
    assert [q.text for q in qs] == ["The tax cut was the largest in history.", "Was it large?", "Who passed it?"]
    assert [q.query_id for q in qs] == ["c1", "c1#1", "c1#2"]
    assert all(q.claim_id == "c1" and q.date == CLAIM.date for q in qs)
    assert [q.origin for q in qs] == ["claim", "test", "test"]
    fallback = finalize(CLAIM, ["", "   "], "test")
    assert [(q.query_id, q.text, q.origin) for q in fallback] == [("c1", CLAIM.text, "claim")]


def test_claim_and_oracle_planners():
    assert [q.text for q in make_planner("claim").plan(CLAIM)] == [CLAIM.text]
    oracle = make_planner("oracle").plan(CLAIM)
    assert [(q.query_id, q.text) for q in oracle] == [("c1#1", "Q one?")]


def test_oracle_without_questions_is_a_clear_error_and_a_batch_survives_it():
    bare = Claim("c2", "No questions here.")
    with pytest.raises(InputError, match="no gold sub-questions"):
        make_planner("oracle").plan(bare)
    queries, failures = plan_all(make_planner("oracle"), [CLAIM, bare])
    assert [q.query_id for q in queries] == ["c1#1", "c2"]
    assert [f.claim_id for f in failures] == ["c2"]


class BatchPlanner:
    """Plans in batches; one claim in a batch fails, so the whole batch call fails."""

    name = "batch"

    def __init__(self):
        self.batches = []

    def plan(self, claim):
        if claim.claim_id == "bad":
            raise InputError("cannot plan this one")
        return finalize(claim, [claim.text.upper()], self.name)

    def plan_many(self, claims):
        self.batches.append([c.claim_id for c in claims])
        return [self.plan(c) for c in claims]


def test_plan_all_uses_batches_and_falls_back_claim_by_claim(monkeypatch):
    from factscout.plan import base

    monkeypatch.setattr(base, "PLAN_BATCH", 2)
    claims = [Claim("a", "one two"), Claim("b", "three four"), Claim("bad", "five six"), Claim("d", "seven eight")]
    planner = BatchPlanner()
    queries, failures = plan_all(planner, claims)
    assert planner.batches == [["a", "b"], ["bad", "d"]]
    assert [f.claim_id for f in failures] == ["bad"]
    # the failed batch is redone claim by claim: no query is lost or doubled, claim order is kept
    assert [q.query_id for q in queries] == ["a#1", "b#1", "bad", "d#1"]


def test_unknown_planner_lists_names():
    with pytest.raises(UnknownName, match=r"no planner 'llm'; known: .*claim.*oracle"):
        make_planner("llm")
    assert {"claim", "oracle"} <= set(PLANNERS.names())


def fake_embed(texts):
    """Deterministic 3-d embeddings keyed on words, normalised."""
    table = {"tax": [1, 0, 0], "cut": [1, 0.2, 0], "history": [0.6, 0.8, 0], "weather": [0, 0, 1]}
    vecs = []
    for t in texts:
        v = np.zeros(3)
        for w in t.lower().replace("?", "").replace(".", "").split():
            v += np.array(table.get(w, [0, 0, 0.05]))
        vecs.append(v / (np.linalg.norm(v) or 1))
    return np.array(vecs)


def test_mmr_filter_drops_off_topic_and_redundant_queries():
    claim = Claim("c", "tax cut history")
    queries = [
        Query("c", "c", "tax cut history"),
        Query("c#1", "c", "tax cut"),
        Query("c#2", "c", "tax cut tax cut"),  # same direction as #1: redundant once #1 is in
        Query("c#3", "c", "weather"),  # off topic
    ]
    mmr = MmrFilter(embed=fake_embed)
    scores = mmr.scores(claim, queries)
    assert set(scores) == {"c#1", "c#2", "c#3"}
    kept = [q.query_id for q in mmr.filter(claim, queries)]
    assert kept[0] == "c" and "c#3" not in kept and not {"c#1", "c#2"} <= set(kept)
    assert len(mmr.filter(claim, queries[:1])) == 1


def test_mmr_keeps_at_least_the_best_sub_query():
    claim = Claim("c", "tax cut history")
    queries = [Query("c#1", "c", "weather"), Query("c#2", "c", "weather weather")]
    assert len(MmrFilter(embed=fake_embed, gamma=0.99).filter(claim, queries)) == 1


def test_mmr_bad_parameters():
    with pytest.raises(InputError):
        MmrFilter(alpha=1.5)
