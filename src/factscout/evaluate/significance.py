"""Paired significance tests between two runs over the same judged queries.

Both tests come from scipy: the paired t-test (``ttest_rel``) and a paired randomisation
(sign-flip permutation) test (``permutation_test`` with ``permutation_type="samples"``), the
test Smucker et al. (2007) recommend for IR.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from factscout.errors import InputError
from factscout.evaluate.measures import Measure
from factscout.evaluate.metrics import Evaluation


@dataclass(frozen=True, slots=True)
class Comparison:
    measure: Measure
    mean_a: float
    mean_b: float
    n_queries: int
    t_test_p: float
    randomization_p: float

    @property
    def delta(self) -> float:
        return self.mean_b - self.mean_a


def compare(
    a: Evaluation, b: Evaluation, measure: Measure | str, *, n_resamples: int = 10_000, seed: int = 0
) -> Comparison:
    """Compare run B against run A on ``measure`` (two-sided p-values)."""
    from scipy import stats

    m = Measure.parse(measure)
    if set(a.per_query) != set(b.per_query):
        raise InputError("the two evaluations cover different queries; evaluate both runs on the same qrels")
    x, y = np.array(a.column(m)), np.array(b.column(m))
    if len(x) < 2:
        raise InputError("a significance test needs at least two queries")
    diff = y - x
    if np.allclose(diff, 0):
        t_p = rand_p = 1.0
    else:
        t_p = float(stats.ttest_rel(y, x).pvalue)
        rand_p = float(
            stats.permutation_test(
                (y, x),
                lambda u, v: np.mean(u - v),
                permutation_type="samples",
                n_resamples=n_resamples,
                alternative="two-sided",
                random_state=seed,
            ).pvalue
        )
    return Comparison(m, float(x.mean()), float(y.mean()), len(x), t_p, rand_p)


def compare_measures(
    a: Evaluation, b: Evaluation, measures: Sequence[Measure | str], *, n_resamples: int = 10_000, seed: int = 0
) -> list[Comparison]:
    """Compare run B against run A on each of ``measures``, in order (see :func:`compare`)."""
    return [compare(a, b, m, n_resamples=n_resamples, seed=seed) for m in measures]
