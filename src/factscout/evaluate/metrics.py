"""Ranking evaluation through ir_measures (MacAvaney et al. 2022) on trec_eval's code.

Two rules make the numbers unambiguous:

* the run is scored in factscout's own order, ``(-score, passage_id)`` (the :class:`Ranking`
  tie rule), not trec_eval's tie order: each hit is handed over with a score that encodes its
  rank;
* the queries scored are exactly ``queries`` when given (each must be judged); otherwise every
  judged query, and one the run does not answer scores 0 on every measure and counts in the mean
  (trec_eval ``-c``), with a warning naming how many (scoring a run of 202 claims against the
  qrels of 809 once reported nDCG@10 0.18 for 0.74); run queries without judgements are ignored;
  passages judged 0 are not relevant.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from factscout.errors import InputError
from factscout.evaluate.measures import Measure, parse_measures
from factscout.records import Ranking

log = logging.getLogger(__name__)

Qrels = Mapping[str, Mapping[str, int]]
RunDict = Mapping[str, Mapping[str, float]]


@dataclass(frozen=True, slots=True)
class Evaluation:
    """Per-query scores and their means for a set of measures."""

    measures: tuple[Measure, ...]
    per_query: Mapping[str, Mapping[Measure, float]]

    def mean(self, measure: Measure | str) -> float:
        m = Measure.parse(measure)
        if not self.per_query:
            return 0.0
        return sum(scores[m] for scores in self.per_query.values()) / len(self.per_query)

    def means(self) -> dict[str, float]:
        return {str(m): self.mean(m) for m in self.measures}

    def column(self, measure: Measure | str) -> list[float]:
        """Per-query values in sorted query-id order (aligned across evaluations of one qrels)."""
        m = Measure.parse(measure)
        return [self.per_query[q][m] for q in sorted(self.per_query)]


def as_rankings(run: RunDict | Iterable[Ranking]) -> list[Ranking]:
    if isinstance(run, Mapping):
        return [Ranking.from_scores(q, docs) for q, docs in run.items()]
    return list(run)


def evaluate(
    qrels: Qrels,
    run: RunDict | Sequence[Ranking],
    measures: Sequence[str | Measure] | str,
    *,
    queries: Collection[str] | None = None,
) -> Evaluation:
    """Score ``run`` against ``qrels`` on ``measures`` (``["nDCG@10", "R@100"]``): over exactly
    ``queries`` when given (each must have a relevant judgement), else over every judged query
    (module docstring)."""
    import ir_measures

    parsed = parse_measures(measures) if isinstance(measures, str) else [Measure.parse(m) for m in measures]
    judged = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items() if any(r > 0 for r in docs.values())}
    if not judged:
        raise InputError("the qrels hold no relevant judgement")
    if queries is not None:
        unjudged = sorted(set(queries) - set(judged))
        if unjudged:
            raise InputError(
                f"{len(unjudged)} of the {len(set(queries))} queries to score have no relevant judgement: "
                + ", ".join(unjudged[:5])
                + (" ..." if len(unjudged) > 5 else "")
            )
        judged = {q: judged[q] for q in queries}
    rankings = as_rankings(run)
    if queries is None:
        answered = {r.query_id for r in rankings if r.hits}
        missing = len(set(judged) - answered)
        if missing:
            log.warning(
                "%d of %d judged queries have no ranking in the run: each scores 0 (trec_eval -c); pass"
                " queries= to score only some",
                missing,
                len(judged),
            )
    ranked = {
        r.query_id: {h.passage_id: float(len(r.hits) - h.rank + 1) for h in r.hits}
        for r in rankings
        if r.query_id in judged and r.hits
    }
    per_query: dict[str, dict[Measure, float]] = {q: dict.fromkeys(parsed, 0.0) for q in judged}
    by_name = {ir_measures.parse_measure(m.ir_measures_name): m for m in parsed}
    if ranked:
        for metric in ir_measures.iter_calc(list(by_name), judged, ranked):
            per_query[metric.query_id][by_name[metric.measure]] = float(metric.value)
    return Evaluation(tuple(parsed), {q: per_query[q] for q in sorted(per_query)})
