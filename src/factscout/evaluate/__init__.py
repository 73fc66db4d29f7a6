"""Evaluation: measures as values, trec_eval-backed metrics, paired significance tests."""

from factscout.evaluate.measures import Measure, parse_measures
from factscout.evaluate.metrics import Evaluation, evaluate
from factscout.evaluate.significance import Comparison, compare, compare_measures

__all__ = ["Comparison", "Evaluation", "Measure", "compare", "compare_measures", "evaluate", "parse_measures"]
