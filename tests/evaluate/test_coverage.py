import pytest

from factscout.evaluate.coverage import coverage_at_k, mean_coverage
from factscout.records import Ranking


def test_coverage_counts_aspects_not_passages():
    subq = {"c1": {"q0": {"a", "b"}, "q1": {"c"}, "q2": {"d"}}, "c2": {"q0": {"x"}}, "c3": {"q0": set()}}
    runs = [Ranking.from_scores("c1", {"a": 3.0, "b": 2.0, "d": 1.0, "c": 0.5}), Ranking.from_scores("c2", {"y": 1.0})]
    assert coverage_at_k(runs, subq, 2) == pytest.approx({"c1": 1 / 3, "c2": 0.0})
    assert coverage_at_k(runs, subq, 3)["c1"] == pytest.approx(2 / 3)
    assert mean_coverage(runs, subq, 4) == pytest.approx(0.5)  # c3 has no judged sub-question: left out
