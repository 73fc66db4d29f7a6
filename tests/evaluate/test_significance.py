"""compare_measures: one paired comparison per measure, in the order asked."""

import pytest

from factscout.errors import InputError
from factscout.evaluate import Measure, compare, compare_measures, evaluate

QRELS = {f"q{i}": {"rel": 1} for i in range(20)}
GOOD = {q: {"rel": 1.0, "x": 0.5} for q in QRELS}
BAD = {q: ({"x": 1.0, "rel": 0.5} if i % 4 else {"rel": 1.0}) for i, q in enumerate(QRELS)}
MEASURES = ["MRR@10", "nDCG@10", "P@1"]


def test_one_comparison_per_measure_equal_to_compare():
    a, b = evaluate(QRELS, BAD, MEASURES), evaluate(QRELS, GOOD, MEASURES)
    tests = compare_measures(a, b, MEASURES, n_resamples=2000)
    assert [c.measure for c in tests] == [Measure.parse(m) for m in MEASURES]
    assert tests == [compare(a, b, m, n_resamples=2000) for m in MEASURES]
    assert all(c.delta > 0 and c.t_test_p < 0.01 for c in tests)


def test_runs_over_different_queries_are_refused():
    a = evaluate(QRELS, GOOD, MEASURES)
    b = evaluate({q: QRELS[q] for q in list(QRELS)[:5]}, GOOD, MEASURES)
    with pytest.raises(InputError, match="different queries"):
        compare_measures(a, b, MEASURES)
