"""Metrics hand-checked on tiny inputs (trec_eval semantics)."""

import logging
import math

import pytest

from factscout.errors import InputError
from factscout.evaluate import Measure, compare, evaluate, parse_measures
from factscout.records import Ranking

QRELS = {"q1": {"d1": 1, "d2": 1}, "q2": {"d3": 2, "d4": 0}}
RUN = {"q1": {"d9": 0.9, "d1": 0.5, "d2": 0.1}, "q2": {"d3": 1.0}}


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("ndcg@10", "nDCG@10"),
        ("recall@100", "R@100"),
        ("mrr@10", "MRR@10"),
        ("map@5", "AP@5"),
        ("P@3", "P@3"),
        ("nDCG@10", "nDCG@10"),
        ("AP", "AP"),
    ],
)
def test_measures_round_trip(text, canonical):
    m = Measure.parse(text)
    assert str(m) == canonical
    assert Measure.parse(str(m)) == m


def test_unknown_measure_lists_known():
    with pytest.raises(InputError, match="unknown measure 'ndgc@10'; known: nDCG@k"):
        Measure.parse("ndgc@10")


def test_parse_measures_string():
    assert [str(m) for m in parse_measures("ndcg@10, recall@100 mrr@10")] == ["nDCG@10", "R@100", "MRR@10"]


def test_hand_computed_values():
    e = evaluate(QRELS, RUN, ["P@2", "R@2", "MRR@10", "AP@10", "nDCG@3"])
    q1 = e.per_query["q1"]
    assert q1[Measure.parse("P@2")] == pytest.approx(0.5)
    assert q1[Measure.parse("R@2")] == pytest.approx(0.5)
    assert q1[Measure.parse("MRR@10")] == pytest.approx(0.5)
    assert q1[Measure.parse("AP@10")] == pytest.approx((1 / 2 + 2 / 3) / 2)
    dcg = 1 / math.log2(3) + 1 / math.log2(4)
    assert q1[Measure.parse("nDCG@3")] == pytest.approx(dcg / (1 + 1 / math.log2(3)))
    assert e.per_query["q2"][Measure.parse("nDCG@3")] == pytest.approx(1.0)
    assert e.mean("MRR@10") == pytest.approx(0.75)


def test_unanswered_judged_query_counts_as_zero_and_says_so(caplog):
    with caplog.at_level(logging.WARNING, logger="factscout.evaluate.metrics"):
        e = evaluate(QRELS, {"q1": RUN["q1"], "q_unjudged": {"d1": 1.0}}, ["R@10"])
    assert set(e.per_query) == {"q1", "q2"}
    assert e.per_query["q2"][Measure.parse("R@10")] == 0.0
    assert e.mean("R@10") == pytest.approx(0.5)
    assert "1 of 2 judged queries have no ranking in the run" in caplog.text


def test_an_explicit_query_set_scores_exactly_those_queries(caplog):
    with caplog.at_level(logging.WARNING, logger="factscout.evaluate.metrics"):
        e = evaluate(QRELS, {"q1": RUN["q1"]}, ["R@10"], queries=["q1"])
    assert set(e.per_query) == {"q1"} and e.mean("R@10") == pytest.approx(1.0)
    assert not caplog.text, "nothing is missing from the explicit set"
    empty = evaluate(QRELS, {"q1": RUN["q1"]}, ["R@10"], queries=["q1", "q2"])
    assert empty.per_query["q2"][Measure.parse("R@10")] == 0.0, "a named query without a ranking scores 0"
    with pytest.raises(InputError, match="1 of the 2 queries to score have no relevant judgement: q_unjudged"):
        evaluate(QRELS, RUN, ["R@10"], queries=["q1", "q_unjudged"])


def test_ties_are_scored_in_factscout_order():
    # equal scores: the Ranking tie rule puts "a" first; trec_eval alone would put "b" first
    e = evaluate({"q": {"a": 1}}, [Ranking.from_scores("q", {"a": 1.0, "b": 1.0})], ["MRR@10"])
    assert e.mean("MRR@10") == 1.0


def test_no_relevant_judgements():
    with pytest.raises(InputError, match="no relevant"):
        evaluate({"q": {"d": 0}}, RUN, ["R@10"])


def test_paired_significance():
    qrels = {f"q{i}": {"rel": 1} for i in range(30)}
    good = {q: {"rel": 1.0, "x": 0.5} for q in qrels}
    bad = {q: ({"x": 1.0, "rel": 0.5} if i % 5 else {"rel": 1.0}) for i, q in enumerate(qrels)}
    c = compare(evaluate(qrels, bad, ["MRR@10"]), evaluate(qrels, good, ["MRR@10"]), "MRR@10")
    assert c.delta > 0 and c.t_test_p < 0.01 and c.randomization_p < 0.01
    same = compare(evaluate(qrels, good, ["MRR@10"]), evaluate(qrels, good, ["MRR@10"]), "MRR@10")
    assert same.t_test_p == 1.0 and same.randomization_p == 1.0
