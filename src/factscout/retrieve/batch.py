"""Searching many queries at once: batches, each query's own date, and document-level runs.

``search_all`` is what ``factscout search --queries FILE`` runs: the queries go to the
retriever in batches (so a progress bar can advance and memory stays bounded), each query's
``date`` becomes its ``published_before`` when ``date_filter`` is on, and with ``by_doc`` the
passage rankings are pooled into document rankings by MaxP (``retrieve/documents.py``) from
``4 * k`` passages per query.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from factscout.errors import InputError
from factscout.records import Query, Ranking
from factscout.retrieve.base import Retriever, search_with_query_dates
from factscout.retrieve.documents import max_passage


def search_all(
    retriever: Retriever,
    queries: Sequence[Query],
    k: int,
    *,
    date_filter: bool = True,
    by_doc: bool = False,
    batch_size: int = 256,
    on_batch: Callable[[int], object] | None = None,
) -> list[Ranking]:
    """One ranking per query, in query order.

    ``date_filter=False`` ignores the queries' dates; ``by_doc`` ranks documents by their best
    passage (MaxP); ``on_batch(n)`` is called after each batch of ``n`` queries.
    """
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise InputError(f"batch size must be a positive integer, got {batch_size!r}")
    items = list(queries) if date_filter else [replace(q, date=None) for q in queries]
    rankings: list[Ranking] = []
    for start in range(0, len(items), batch_size):
        batch = items[start : start + batch_size]
        found = search_with_query_dates(retriever, batch, k * 4 if by_doc else k)
        rankings += [max_passage(r, retriever.store, k) for r in found] if by_doc else found
        if on_batch is not None:
            on_batch(len(batch))
    return rankings
