"""The offline default planner on real claims: never empty, no duplicates, claim first, deterministic."""

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.plan import make_planner
from factscout.records import Claim

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def planner():
    return make_planner("decompose")


CLAIMS = [
    "Donald Trump delivered the largest tax cuts in American history.",
    "The governor raised taxes and cut school spending in 2019.",
    "Unemployment fell from 8% in 2010 to 4% in 2015.",
    "35% of revenue goes to states.",
]


@pytest.mark.parametrize("text", CLAIMS)
def test_plans_are_well_formed(planner, text):
    claim = Claim("c", text, dt.date(2020, 1, 1))
    queries = planner.plan(claim)
    assert queries[0].query_id == "c" and queries[0].text == text
    assert len(queries) >= 2, "a multi-aspect claim gets sub-queries"
    keys = [q.text.lower().rstrip("?.! ") for q in queries]
    assert len(keys) == len(set(keys))
    assert all(q.claim_id == "c" and q.date == dt.date(2020, 1, 1) for q in queries)
    assert [q.text for q in planner.plan(claim)] == [q.text for q in queries]


def test_coordinated_predicates_are_split(planner):
    texts = [q.text.lower() for q in planner.plan(Claim("c", CLAIMS[1]))[1:]]
    assert any("raised taxes" in t and "cut" not in t for t in texts)
    assert any("cut school spending" in t for t in texts)


def test_quantities_get_their_own_query(planner):
    texts = [q.text for q in planner.plan(Claim("c", CLAIMS[3]))[1:]]
    assert any("35" in t for t in texts)


@settings(max_examples=25, deadline=None)
@given(st.text(min_size=1, max_size=120).filter(lambda s: s.strip()))
def test_never_crashes_never_empty(planner, text):
    queries = planner.plan(Claim("c", text))
    assert queries and len({q.query_id for q in queries}) == len(queries)
