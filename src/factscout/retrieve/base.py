"""The retriever contract, the passage store behind every index, and the date filter.

Every backend implements ``search(queries, k, *, published_before=None) -> list[Ranking]``:
a batch of queries in, one :class:`Ranking` per query out, in the same order.

``published_before`` keeps passages published strictly before that day (a passage from the
claim's own day could already be its fact-check). It is applied inside the search, as a mask
over the candidate pool, so a query still gets ``k`` hits when ``k`` allowed passages match.
Undated passages follow an explicit policy: ``keep`` (the default: most corpora have some
undated passages, and dropping them silently empties SciFact-like corpora) or ``drop``. Each
filtered ranking carries :class:`DateFilterStats` with the counts.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from typing import Literal, Protocol, runtime_checkable

import numpy as np

from factscout.errors import InputError
from factscout.records import DateFilterStats, Passage, Query, Ranking

UndatedPolicy = Literal["keep", "drop"]
UNDATED_POLICIES: tuple[str, ...] = ("keep", "drop")
_NO_DATE = np.iinfo(np.int32).min


@runtime_checkable
class Searcher(Protocol):
    """The search half of :class:`Retriever`: what a step that only sends queries needs."""

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]: ...


@runtime_checkable
class HasStore(Protocol):
    """The passage half of :class:`Retriever`: what a step that reads the returned passages
    needs (a search endpoint given in a retriever's place may have no store)."""

    store: PassageStore


@runtime_checkable
class Retriever(Searcher, HasStore, Protocol):
    """One narrow protocol for every retrieval backend: its ``name``, ``search`` and the
    passage ``store`` it searches (:class:`Searcher` and :class:`HasStore` are its halves)."""

    name: str


def check_k(k: int) -> int:
    if not isinstance(k, int) or isinstance(k, bool) or k < 1:
        raise InputError(f"k must be a positive integer, got {k!r}")
    return k


def check_undated(policy: str) -> str:
    if policy not in UNDATED_POLICIES:
        raise InputError(f"undated policy must be one of {', '.join(UNDATED_POLICIES)}, got {policy!r}")
    return policy


class PassageStore:
    """The passages of an index in index order, with their publication days as an array."""

    def __init__(self, passages: Iterable[Passage]) -> None:
        self.passages: list[Passage] = list(passages)
        self.ids: list[str] = [p.passage_id for p in self.passages]
        self.position: dict[str, int] = {}
        for i, pid in enumerate(self.ids):
            if pid in self.position:
                raise InputError(f"passage id {pid!r} occurs twice in the corpus")
            self.position[pid] = i
        self.days = np.array(
            [p.published.toordinal() if p.published else _NO_DATE for p in self.passages], dtype=np.int32
        )
        self.id_array = np.array(self.ids, dtype=object)
        # position of each passage id in sorted id order: breaks score ties by passage_id in numpy
        self.id_order = np.argsort(np.argsort(self.id_array, kind="stable"), kind="stable").astype(np.int64)

    def __len__(self) -> int:
        return len(self.passages)

    def __contains__(self, passage_id: object) -> bool:
        return passage_id in self.position

    def __getitem__(self, passage_id: str) -> Passage:
        return self.passages[self.position[passage_id]]

    @property
    def n_dated(self) -> int:
        return int((self.days != _NO_DATE).sum())

    def date_mask(self, published_before: dt.date, undated: str) -> tuple[np.ndarray, DateFilterStats]:
        """Boolean mask of passages allowed under ``published_before`` and the undated policy."""
        check_undated(undated)
        dated = self.days != _NO_DATE
        early = dated & (self.days < published_before.toordinal())
        n_undated = int((~dated).sum())
        mask = early | ~dated if undated == "keep" else early
        stats = DateFilterStats(
            published_before=published_before,
            undated_policy=undated,
            allowed=int(mask.sum()),
            excluded_late=int((dated & ~early).sum()),
            undated_kept=n_undated if undated == "keep" else 0,
            undated_dropped=0 if undated == "keep" else n_undated,
        )
        return mask, stats


def rankings_from_arrays(
    queries: Sequence[Query],
    positions: np.ndarray,
    scores: np.ndarray,
    valid: np.ndarray,
    store: PassageStore,
    stats: DateFilterStats | None,
) -> list[Ranking]:
    """Turn an engine's batch output (queries x depth passage positions and scores) into rankings.

    Entries where ``valid`` is false are dropped (no match, or padding). Rows are re-sorted by
    ``(-score, passage_id)`` with one vectorised lexsort, so engines' own tie orders never leak.
    """
    scores = np.where(valid, scores, -np.inf)
    positions = np.where(valid, positions, 0)
    # engines return rows best-first; only rows with tied scores need re-sorting
    with np.errstate(invalid="ignore"):  # -inf - -inf between two dropped entries is not a tie
        tied: np.ndarray | list[int] = (
            np.flatnonzero((np.diff(scores, axis=1) >= 0).any(axis=1)) if scores.shape[1] > 1 else []
        )
    if len(tied):
        sub_pos, sub_scores = positions[tied], scores[tied]
        order = np.lexsort((store.id_order[sub_pos], -sub_scores), axis=-1)
        positions[tied] = np.take_along_axis(sub_pos, order, axis=-1)
        scores[tied] = np.take_along_axis(sub_scores, order, axis=-1)
    counts = valid.sum(axis=1)
    ids = store.id_array[positions]
    return [
        Ranking.from_sorted(
            q.query_id, ids[i, : counts[i]].tolist(), scores[i, : counts[i]].tolist(), (q.query_id,), stats
        )
        for i, q in enumerate(queries)
    ]


def by_date(queries: Sequence[Query]) -> dict[dt.date | None, list[int]]:
    """Group query positions by their date, so each group is one ``published_before`` call."""
    groups: dict[dt.date | None, list[int]] = {}
    for i, q in enumerate(queries):
        groups.setdefault(q.date, []).append(i)
    return groups


def search_with_query_dates(retriever: Retriever, queries: Sequence[Query], k: int) -> list[Ranking]:
    """Search with each query's own ``date`` as its ``published_before`` (undated: no filter)."""
    out: list[Ranking | None] = [None] * len(queries)
    for day, positions in by_date(queries).items():
        batch = [queries[i] for i in positions]
        for i, ranking in zip(positions, retriever.search(batch, k, published_before=day), strict=True):
            out[i] = ranking
    return [r for r in out if r is not None]
