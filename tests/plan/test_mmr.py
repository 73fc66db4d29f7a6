"""MmrFilter.filter_plans: the MMR filter over many claims' plans at once."""

import numpy as np

from factscout.plan.mmr import MmrFilter
from factscout.records import Claim, Query

WORDS = {"tax": [1, 0, 0], "cut": [1, 0.2, 0], "history": [0.6, 0.8, 0], "weather": [0, 0, 1], "rain": [0, 0.1, 1]}


def embed(texts):
    """Deterministic 3-d embeddings keyed on words, normalised."""
    vecs = []
    for t in texts:
        v = sum((np.array(WORDS.get(w, [0, 0, 0.05]), dtype=float) for w in t.lower().split()), np.zeros(3))
        vecs.append(v / (np.linalg.norm(v) or 1))
    return np.array(vecs)


CLAIMS = [Claim("t", "tax cut history"), Claim("w", "weather rain", meta={"justification": "tax history"})]
QUERIES = [
    Query("t", "t", "tax cut history"),
    Query("w#1", "w", "rain"),
    Query("t#1", "t", "tax cut"),
    Query("t#2", "t", "tax cut tax cut"),
    Query("w#2", "w", "tax history"),
    Query("t#3", "t", "weather"),
]


def test_each_claim_is_filtered_on_its_own_queries_in_first_appearance_order():
    mmr = MmrFilter(embed=embed)
    kept = mmr.filter_plans(CLAIMS, QUERIES)
    by_hand = mmr.filter(CLAIMS[0], [q for q in QUERIES if q.claim_id == "t"]) + mmr.filter(
        CLAIMS[1], [q for q in QUERIES if q.claim_id == "w"]
    )
    assert kept == by_hand
    assert kept[0].query_id == "t" and "t#3" not in {q.query_id for q in kept}


def test_justification_is_read_from_the_claim_meta_only_when_asked():
    mmr = MmrFilter(gamma=0.1, embed=embed)
    plans = [q for q in QUERIES if q.claim_id == "w"]
    without = mmr.filter_plans(CLAIMS, plans)
    assert without == mmr.filter(CLAIMS[1], plans) and [q.query_id for q in without] == ["w#1"]
    with_justification = mmr.filter_plans(CLAIMS, plans, justification=True)
    assert with_justification == mmr.filter(CLAIMS[1], plans, "tax history")
    assert [q.query_id for q in with_justification] == ["w#1", "w#2"]  # "tax history" is now on topic


def test_no_queries_no_plans():
    assert MmrFilter(embed=embed).filter_plans(CLAIMS, []) == []
