"""Time-aware re-ranking: a pipeline stage that mixes a temporal ranking into any ranking.

Any factscout ranking (a retriever's, a fusion's, a cross-encoder's) can be re-ranked with one
of the four temporal rankings of Allein et al. (2021) as a feature: each hit's score becomes

    (1 - weight) * minmax(score) + weight * temporal / max(temporal)

where ``temporal`` is the hit's score under the chosen method, computed over the hits of the
ranking from their Δt to the claim date (:mod:`factscout.temporal.rankings`). Undated hits, and
hits the method excludes (claim-based date ranking: published after the claim), get temporal
score 0, as in the paper. With ``weight=0`` the order is unchanged; with ``weight=1`` it is the
temporal ranking alone (ties keep the ranking type's tie rule).

Also :func:`leakage`: the share of dated hits published on or after the claim date, the audit
that every run report carries (``Report.to_dict()['leakage']``).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from factscout.errors import InputError
from factscout.records import Claim, Hit, Passage, Ranking
from factscout.temporal import mixture as _mixture  # noqa: F401 - registers the "learned mixture" ranking
from factscout.temporal.rankings import RANKINGS, temporal_scores
from factscout.temporal.timestamps import delta_days

Published = Mapping[str, dt.date | None] | Mapping[str, Passage] | Any  # or a retriever's passage store


def _published(published: Published, passage_id: str) -> dt.date | None:
    try:
        value = published[passage_id]
    except KeyError:
        return None
    return value.published if isinstance(value, Passage) else value


@dataclass(frozen=True, slots=True)
class TimeAwareReranker:
    """Re-rank with a temporal ranking as a feature (``method`` from ``rankings.METHODS``, or
    ``learned mixture``: the shipped mixture of the four, :mod:`factscout.temporal.mixture`)."""

    method: str = "claim-centered distance"
    weight: float = 0.3

    def __post_init__(self) -> None:
        RANKINGS[self.method]  # raises UnknownName listing the methods
        if not 0.0 <= self.weight <= 1.0:
            raise InputError(f"time-aware re-ranking weight must be in [0, 1], got {self.weight!r}")

    def rerank(self, claim: Claim, ranking: Ranking, published: Published) -> Ranking:
        """A new ranking of the same hits (the :class:`~factscout.rerank.base.Reranker` contract);
        ``published`` maps passage ids to dates or passages (a dict, or the retriever's passage
        store).

        Without a claim date no Δt is known and the ranking comes back unchanged."""
        claim_date = claim.date
        if claim_date is None or not len(ranking):
            return ranking
        ids = list(ranking.passage_ids)
        deltas = [delta_days(_published(published, pid), claim_date) for pid in ids]
        temporal = temporal_scores(self.method, deltas).scores
        top = max(temporal) or 1
        scores = ranking.scores()
        lo, hi = min(scores.values()), max(scores.values())
        span = hi - lo
        mixed = {
            pid: (1 - self.weight) * ((scores[pid] - lo) / span if span > 0 else 1.0) + self.weight * t / top
            for pid, t in zip(ids, temporal, strict=True)
        }
        finders = {h.passage_id: h.found_by for h in ranking.hits}
        hits = [Hit(pid, s, 0, finders[pid]) for pid, s in mixed.items()]
        return Ranking(ranking.query_id, hits, ranking.date_filter)


def leakage(ranking: Ranking, published: Published, claim_date: dt.date | None) -> float:
    """Share of the ranking's dated hits published on or after ``claim_date`` (the definition of
    :meth:`factscout.report.Report.leakage`; 0 when none is dated or the claim date is unknown)."""
    if claim_date is None:
        return 0.0
    deltas = [delta_days(_published(published, pid), claim_date) for pid in ranking.passage_ids]
    dated = [d for d in deltas if d is not None]
    return sum(d >= 0 for d in dated) / len(dated) if dated else 0.0
