"""The black-box search environment of query rewriting (Kazemi et al., AACL 2023, Section 3).

The rewriter never sees inside the search engine: it issues a query string and observes a
reward, the quality of the returned ranking against the claim's relevance judgements. Any
factscout :class:`~factscout.retrieve.base.Retriever` (BM25, dense, hybrid, a server backend)
plugs in unchanged.

Rewards are the paper's measures, given as factscout measure strings: ``AP@50`` (the default,
the paper's mAP@50), ``R@50`` (Recall@50) or ``RR`` (reciprocal rank, optionally ``RR@k``).
They follow trec_eval's definitions, as :func:`factscout.evaluate.evaluate` computes them
(AP@k divides by all relevant passages of the claim; passages judged 0 are not relevant); they
are computed here directly on the ranked ids because a BFS scores millions of candidates, and
tests/rewrite/test_environment.py checks them against :func:`~factscout.evaluate.evaluate`.

Search results are cached per query string (and date filter), so a query reached by two edit
paths, or shared by two claims, is searched once; :meth:`SearchEnvironment.rewards` scores a
batch of candidate queries with one ``retriever.search`` call for the ones not cached.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass

from factscout.errors import InputError, UnknownName
from factscout.evaluate.measures import Measure
from factscout.records import Claim, Query
from factscout.retrieve.base import Retriever

Qrels = Mapping[str, Mapping[str, int]]
RewardFn = Callable[[Sequence[str], Collection[str], int | None], float]

DEFAULT_REWARD = "AP@50"
DEFAULT_DEPTH = 100  # search depth when the measure has no cutoff (RR)


def average_precision(ranked: Sequence[str], relevant: Collection[str], cutoff: int | None) -> float:
    """AP@k as trec_eval's ``map_cut``: precision at each relevant hit in the top k, summed,
    divided by the number of relevant passages."""
    if not relevant:
        return 0.0
    found, total = 0, 0.0
    for rank, pid in enumerate(ranked[:cutoff] if cutoff else ranked, 1):
        if pid in relevant:
            found += 1
            total += found / rank
    return total / len(relevant)


def recall(ranked: Sequence[str], relevant: Collection[str], cutoff: int | None) -> float:
    """R@k: the share of relevant passages in the top k."""
    if not relevant:
        return 0.0
    return sum(1 for pid in (ranked[:cutoff] if cutoff else ranked) if pid in relevant) / len(relevant)


def reciprocal_rank(ranked: Sequence[str], relevant: Collection[str], cutoff: int | None) -> float:
    """RR(@k): one over the rank of the first relevant passage (0 when none in the top k)."""
    for rank, pid in enumerate(ranked[:cutoff] if cutoff else ranked, 1):
        if pid in relevant:
            return 1.0 / rank
    return 0.0


#: Reward functions by canonical measure name (``Measure.parse("RR").name == "MRR"``).
REWARDS: dict[str, RewardFn] = {"AP": average_precision, "R": recall, "MRR": reciprocal_rank}


def max_reward(measure: Measure, n_relevant: int) -> float:
    """The best reward any ranking can reach for a claim with ``n_relevant`` relevant passages
    (below 1 for AP@k and R@k when there are more relevant passages than k)."""
    if n_relevant <= 0:
        return 0.0
    if measure.name == "MRR" or measure.cutoff is None:
        return 1.0
    return min(measure.cutoff, n_relevant) / n_relevant


@dataclass(frozen=True, slots=True)
class CacheStats:
    """How many query strings were answered from the cache and how many searched."""

    hits: int
    misses: int
    searches: int  # retriever.search calls
    size: int


class SearchEnvironment:
    """Scores query strings for a claim with a black-box retriever and the claim's qrels.

    ``use_claim_dates`` searches with the claim's date as ``published_before`` (claims made on
    a date cannot be fact-checked by later passages). ``cache_size`` bounds the per-query cache
    (least recently used entries go first).
    """

    def __init__(
        self,
        retriever: Retriever,
        qrels: Qrels,
        reward: str | Measure = DEFAULT_REWARD,
        *,
        depth: int | None = None,
        use_claim_dates: bool = False,
        cache_size: int = 200_000,
    ) -> None:
        self.retriever = retriever
        self.measure = Measure.parse(reward)
        if self.measure.name not in REWARDS:
            raise UnknownName("reward", str(self.measure), ("AP@k", "R@k", "RR"))
        self._reward_fn = REWARDS[self.measure.name]
        self.depth = depth or self.measure.cutoff or DEFAULT_DEPTH
        if self.measure.cutoff and self.depth < self.measure.cutoff:
            raise InputError(f"search depth {self.depth} is below the reward cutoff of {self.measure}")
        self.relevant: dict[str, frozenset[str]] = {
            cid: frozenset(pid for pid, rel in docs.items() if rel > 0) for cid, docs in qrels.items()
        }
        self.use_claim_dates = use_claim_dates
        if cache_size < 1:
            raise InputError(f"cache_size must be >= 1, got {cache_size!r}")
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[str, dt.date | None], tuple[str, ...]] = OrderedDict()
        self._hits = self._misses = self._searches = 0

    # ---------------------------------------------------------------- rewards

    def relevant_of(self, claim: Claim | str) -> frozenset[str]:
        claim_id = claim if isinstance(claim, str) else claim.claim_id
        return self.relevant.get(claim_id, frozenset())

    def max_reward(self, claim: Claim | str) -> float:
        """The highest reward reachable for ``claim`` under this environment's measure."""
        return max_reward(self.measure, len(self.relevant_of(claim)))

    def reward(self, claim: Claim, query: str) -> float:
        """The reward of one query string for ``claim``."""
        return self.rewards(claim, [query])[0]

    def rewards(self, claim: Claim, queries: Sequence[str]) -> list[float]:
        """Rewards of candidate query strings for ``claim``: the uncached ones are searched in
        one batch (one ``retriever.search`` call)."""
        relevant = self.relevant_of(claim)
        cutoff = self.measure.cutoff
        return [self._reward_fn(ranked, relevant, cutoff) for ranked in self.search(claim, queries)]

    # ---------------------------------------------------------------- search + cache

    def search(self, claim: Claim, queries: Sequence[str]) -> list[tuple[str, ...]]:
        """Ranked passage ids (top ``depth``) for each query string, cached per string."""
        day = claim.date if self.use_claim_dates else None
        cache = self._cache
        out: list[tuple[str, ...] | None] = []
        todo: dict[str, list[int]] = {}
        for i, text in enumerate(queries):
            key = (text, day)
            ranked = cache.get(key)
            if ranked is None:
                todo.setdefault(text, []).append(i)
                out.append(None)
            else:
                cache.move_to_end(key)
                self._hits += 1
                out.append(ranked)
        if todo:
            texts = list(todo)
            batch = [Query(f"{claim.claim_id}#{n}", claim.claim_id, t, "rewrite") for n, t in enumerate(texts)]
            self._searches += 1
            rankings = self.retriever.search(batch, self.depth, published_before=day)
            for text, ranking in zip(texts, rankings, strict=True):
                ranked = tuple(ranking.passage_ids)
                self._misses += 1
                cache[(text, day)] = ranked
                for i in todo[text]:
                    out[i] = ranked
            while len(cache) > self.cache_size:
                cache.popitem(last=False)
        return [r if r is not None else () for r in out]

    @property
    def cache_stats(self) -> CacheStats:
        return CacheStats(self._hits, self._misses, self._searches, len(self._cache))

    def clear_cache(self) -> None:
        self._cache.clear()
        self._hits = self._misses = self._searches = 0
