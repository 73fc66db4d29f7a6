"""The planner contract: ``plan(claim) -> list[Query]``, and the rules every plan obeys.

A plan is never empty and never repeats a query (compared case- and space-insensitively);
every query carries the claim's id and date and says which planner made it (``origin``).
Query ids are ``<claim_id>`` for the claim itself and ``<claim_id>#<n>`` for the others, so a
run of fused sub-query results is keyed by ``claim_id`` like the qrels. A planner that plans a
batch of claims at once says so by ``plan_many`` (:class:`BatchPlanner`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from factscout.errors import FactscoutError
from factscout.records import Claim, Query
from factscout.registry import Registry


@runtime_checkable
class Planner(Protocol):
    """Turns a claim into the search queries that should find its evidence."""

    name: str

    def plan(self, claim: Claim) -> list[Query]: ...


@runtime_checkable
class BatchPlanner(Planner, Protocol):
    """A planner that also plans several claims in one call (one model batch, one LLM request):
    ``plan_many(claims) -> [queries of each claim]``, in claim order; :func:`plan_all` uses it."""

    def plan_many(self, claims: Sequence[Claim]) -> list[list[Query]]: ...


log = logging.getLogger(__name__)

PLANNERS: Registry[Callable[..., Planner]] = Registry("planner")

_SPACE = re.compile(r"\s+")


def normalize_query(text: str) -> str:
    """Collapse whitespace and strip list markers, numbering and stray quotes."""
    text = _SPACE.sub(" ", text).strip()
    text = re.sub(r"^(?:[-*•]+|\(?\d{1,2}[.):]|Q\d+[.):]?)\s+", "", text).strip()
    return text.strip("\"'` ").strip()


def finalize(
    claim: Claim, texts: Iterable[str], origin: str, *, include_claim: bool = False, max_queries: int | None = None
) -> list[Query]:
    """Build the queries of a plan: normalised, deduplicated, never empty.

    ``include_claim`` puts the claim itself first. If nothing usable is left, the plan falls back
    to the claim alone (origin ``claim``), so retrieval always has something to run.
    """
    seen: set[str] = set()
    kept: list[tuple[str, str]] = []
    candidates: list[tuple[str, str]] = [(claim.text, "claim")] if include_claim else []
    candidates += [(t, origin) for t in texts]
    for text, source in candidates:
        clean = normalize_query(text) if isinstance(text, str) else ""
        key = clean.lower().rstrip("?.! ")
        if not key or key in seen:
            continue
        seen.add(key)
        kept.append((clean, source))
    if not kept:
        kept = [(normalize_query(claim.text) or claim.text, "claim")]
    if max_queries is not None:
        kept = kept[: max(1, max_queries)]
    queries: list[Query] = []
    n = 0
    for text, source in kept:
        if source == "claim" and not any(q.query_id == claim.claim_id for q in queries):
            qid = claim.claim_id
        else:
            n += 1
            qid = f"{claim.claim_id}#{n}"
        queries.append(Query(qid, claim.claim_id, text, source, claim.date))
    return queries


def make_planner(name: str, **options: Any) -> Planner:
    """Instantiate the planner registered as ``name`` (unknown names list the known ones)."""
    return PLANNERS[name](**options)


@dataclass(frozen=True, slots=True)
class PlanFailure:
    """A claim its planner could not plan; it was searched with the claim alone instead."""

    claim_id: str
    error: str


PLAN_BATCH = 256
"""Claims per call to a planner's ``plan_many`` (spaCy parses a batch much faster than one by one)."""


def plan_all(planner: Planner, claims: Sequence[Claim]) -> tuple[list[Query], list[PlanFailure]]:
    """Plan every claim (queries of one claim together, in claim order).

    A planner error on one claim (an LLM endpoint down, an unparsable answer) is recorded and
    that claim falls back to the claim-only query: one bad claim never sinks a batch. Planners
    with a ``plan_many`` method (:class:`BatchPlanner`) plan :data:`PLAN_BATCH` claims per call.
    """
    queries: list[Query] = []
    failures: list[PlanFailure] = []
    many = planner.plan_many if isinstance(planner, BatchPlanner) else None
    for start in range(0, len(claims), PLAN_BATCH):
        batch = claims[start : start + PLAN_BATCH]
        if many is not None:
            try:
                planned = [q for plan in many(batch) for q in plan]
            except FactscoutError:
                planned = None  # redo the batch claim by claim to find (and record) the bad ones
            if planned is not None:
                queries += planned
                continue
        for claim in batch:
            try:
                queries += planner.plan(claim)
            except FactscoutError as exc:
                log.warning("planner %s failed on claim %s: %s", planner.name, claim.claim_id, exc)
                failures.append(PlanFailure(claim.claim_id, str(exc)))
                queries += finalize(claim, [], "claim", include_claim=True)
    return queries, failures
