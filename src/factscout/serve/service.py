"""The service's calls into the core: check, search, plan and the query editor's rewrite step.

Everything here is synchronous and runs on the :class:`~factscout.serve.runner.CoreRunner`'s
one worker thread; nothing here re-implements the pipeline. A :class:`Service` holds the one
loaded index and the one set of models; checkers for other planners or without the date filter
share them (the encoder, selector, stance model and re-ranker are loaded once).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from factscout.check import Checker
from factscout.errors import FactscoutError, InputError
from factscout.records import Claim, Query, Ranking

if TYPE_CHECKING:
    from factscout.claims import CheckworthyModel

DEFAULT_POLICY = "auto"  # the shipped policy made for the index's retriever (no suggestions when none)


class NoMemory(FactscoutError):
    """The server was started without a fact-check memory (``--factchecks``)."""


@dataclass(frozen=True, slots=True)
class CheckJob:
    claim: Claim
    planner: str
    date_filter: bool


@dataclass(frozen=True, slots=True)
class SearchJob:
    query: str
    k: int
    date: dt.date | None


@dataclass(frozen=True, slots=True)
class RewriteJob:
    query: str
    action: int | None
    claim_id: str | None
    k: int
    suggest: bool


class Service:
    """One index, one set of models, shared by every request."""

    def __init__(
        self,
        checker: Checker,
        *,
        policy: Any = DEFAULT_POLICY,
        qrels: Mapping[str, Mapping[str, int]] | None = None,
        reward: str = "AP@50",
        max_rewrite_steps: int | None = None,  # None: the policy's own step limit
    ) -> None:
        from factscout.rewrite.policy import make_policy

        self.checker = checker
        self.retriever = checker.retriever
        self.store = checker.store
        self.settings = checker.settings
        self._checkers: dict[tuple[str, bool], Checker] = {
            (checker.settings.planner, checker.settings.date_filter): checker
        }
        self._planners: dict[str, Any] = {checker.settings.planner: checker.planner}
        if policy == "auto":
            from factscout.rewrite.io import policy_for_index

            info = checker.provenance
            policy = policy_for_index(info.get("retriever") or self.retriever.name, info.get("source"))
        # None: no shipped policy fits the index, and the editor suggests nothing
        self.policy = make_policy(policy, retriever=self.retriever) if isinstance(policy, str | os.PathLike) else policy
        self.max_rewrite_steps = max_rewrite_steps
        self._checkworthy: CheckworthyModel | None = None
        self.env = None
        if qrels:
            from factscout.rewrite.environment import SearchEnvironment

            self.env = SearchEnvironment(self.retriever, qrels, reward)

    # ---------------------------------------------------------------- components

    def checker_for(self, planner: str, date_filter: bool) -> Checker:
        """The checker for ``planner`` with or without the date filter, sharing the loaded models."""
        key = (planner, date_filter)
        if key not in self._checkers:
            base = self.checker
            settings = dataclasses.replace(base.settings, planner=planner, date_filter=date_filter)
            memory = base.factchecks  # loaded once (its provenance with it), shared by every variant
            info = {k: v for k, v in base.provenance.items() if k not in ("settings", "rule")}
            self._checkers[key] = Checker(
                self.retriever,
                settings,
                planner=self.planner(planner),
                selector=base.selector,
                stance=base.stance,
                rule=base.rule,
                reranker=base.reranker,
                encoder=base.encoder,
                confidence=base.confidence,
                factchecks=memory,
                provenance=info,
            )
            # the index's stored sentence vectors: without them every request embedded the
            # sentences of the passages it read (90% of a request's time, 1.1 checks/s)
            self._checkers[key].sentences = base.sentences
        return self._checkers[key]

    @property
    def checkworthy(self) -> CheckworthyModel:
        """The shipped check-worthiness model (documents), loaded on first use, on the core thread."""
        if self._checkworthy is None:
            from factscout.claims import load_checkworthy

            self._checkworthy = load_checkworthy()
        return self._checkworthy

    def planner(self, name: str) -> Any:
        from factscout.plan import make_planner

        if name not in self._planners:
            options = {"max_queries": self.settings.max_queries} if self.settings.max_queries else {}
            self._planners[name] = make_planner(name, **options)
        return self._planners[name]

    def warm_up(self) -> None:
        """Load every model once (the first real request then pays nothing)."""
        self.checker.check(Claim("warm-up", "Vitamin D prevents falls in the elderly.", None))

    # ---------------------------------------------------------------- batched jobs

    def check_batch(self, jobs: Sequence[CheckJob]) -> list[dict[str, Any]]:
        """One ``check_many`` call for jobs that share a planner and date-filter setting."""
        if len({(j.planner, j.date_filter) for j in jobs}) != 1:
            raise InputError("a check batch must share one planner and date-filter setting")
        checker = self.checker_for(jobs[0].planner, jobs[0].date_filter)
        return [r.to_dict() for r in checker.check_many([j.claim for j in jobs])]

    def search_batch(self, jobs: Sequence[SearchJob]) -> list[dict[str, Any]]:
        """One ``retriever.search`` call for jobs that share k and date."""
        if len({(j.k, j.date) for j in jobs}) != 1:
            raise InputError("a search batch must share one k and date")
        k, day = jobs[0].k, jobs[0].date
        queries = [Query(f"q{i}", f"q{i}", j.query, "api", day) for i, j in enumerate(jobs)]
        rankings = self.retriever.search(queries, k, published_before=day)
        return [self._search_result(j, r) for j, r in zip(jobs, rankings, strict=True)]

    def _search_result(self, job: SearchJob, ranking: Ranking) -> dict[str, Any]:
        out: dict[str, Any] = {
            "query": job.query,
            "k": job.k,
            "date": job.date.isoformat() if job.date else None,
            "hits": [self.hit_dict(h.passage_id, h.rank, h.score) for h in ranking.hits],
        }
        if ranking.date_filter is not None:
            out["date_filter"] = dataclasses.asdict(ranking.date_filter)
            out["date_filter"]["published_before"] = job.date.isoformat() if job.date else None
        return out

    def hit_dict(self, passage_id: str, rank: int, score: float, *, text: bool = True) -> dict[str, Any]:
        p = self.store[passage_id]
        hit = {
            "rank": rank,
            "passage_id": p.passage_id,
            "doc_id": p.doc_id,
            "title": p.title,
            "score": float(score),
            "published": p.published.isoformat() if p.published else None,
            "url": p.url,
        }
        if text:
            hit["text"] = p.text
        return hit

    # ---------------------------------------------------------------- single jobs

    def factchecks(self, text: str, k: int, before: dt.date | None) -> dict[str, Any]:
        """The top ``k`` fact-checks of the checker's memory for ``text`` (published before
        ``before`` when given), each marked ``shown`` when it reaches the memory's threshold."""
        from factscout.report import prior_check

        memory = self.checker.factchecks
        if memory is None:
            raise NoMemory("no fact-check memory is loaded: start factscout serve with --factchecks DIR")
        found = memory.search(text, k, published_before=before)
        matches = [
            prior_check(m.record, m.score).model_dump(mode="json") | {"shown": m.score >= memory.threshold}
            for m in found
        ]
        return {
            "query": text,
            "k": k,
            "before": before.isoformat() if before else None,
            "threshold": memory.threshold,
            "memory": str(self.settings.factchecks),
            "matches": matches,
        }

    def plan(self, claim: Claim, planner: str) -> dict[str, Any]:
        from factscout.plan import plan_all

        queries, failures = plan_all(self.planner(planner), [claim])
        return {
            "claim_id": claim.claim_id,
            "claim": claim.text,
            "date": claim.date.isoformat() if claim.date else None,
            "planner": planner,
            "queries": [{"query_id": q.query_id, "text": q.text, "origin": q.origin} for q in queries],
            "planner_error": failures[0].error if failures else None,
        }

    def rewrite(self, job: RewriteJob) -> dict[str, Any]:
        """Apply ``job.action`` (if any) to the query with the rewriting edit actions (one the query
        does not allow leaves it unchanged: ``edit["applied"]`` is false and ``edit["description"]``
        says why), search the result, score it against the qrels when the claim has some, and list
        every valid edit of the resulting query by token; with ``suggest``, the policy's edit trace
        from there."""
        from factscout.rewrite.actions import Action, apply_action, parse, valid_edits
        from factscout.rewrite.policy import rewrite

        edit = None
        query = job.query
        if job.action is not None:
            action = Action.from_id(job.action)  # an id out of range is an InputError
            try:
                applied = apply_action(query, action)
            except InputError as exc:  # an action the query does not allow: the query stays as it is
                edit = {"action": action.action_id, "label": action.label, "description": str(exc), "applied": False}
            else:
                edit = {
                    "action": applied.action_id,
                    "label": applied.action.label,
                    "description": applied.description,
                    "applied": True,
                }
                query = applied.next_query
        parsed = parse(query)
        by_position: dict[int, list[dict[str, Any]]] = {}
        for e in valid_edits(parsed):
            by_position.setdefault(e.action.position, []).append(
                {"action": e.action_id, "kind": e.action.kind, "label": e.action.label, "description": e.description}
            )
        tokens = [
            {"position": i, "text": t.text, "pos": t.pos, "edits": by_position.get(i, [])}
            for i, t in enumerate(parsed.tokens)
        ]
        ranking = self.retriever.search([Query("editor", "editor", query, "editor")], max(job.k, 1))[0]
        claim = Claim(job.claim_id or "claim", query)
        env = self.env if self.env is not None and job.claim_id and self.env.relevant_of(job.claim_id) else None
        metric = None
        if env is not None:
            relevant = env.relevant_of(claim)
            metric = {"measure": str(env.measure), "value": env.reward(claim, query), "claim_id": job.claim_id}
        hits = [self.hit_dict(h.passage_id, h.rank, h.score, text=False) for h in ranking.hits]
        if env is not None:
            for hit in hits:
                hit["relevant"] = hit["passage_id"] in relevant
        suggestion = None
        if job.suggest and self.policy is not None:
            trace = rewrite(claim, self.policy, env, max_steps=self.max_rewrite_steps)
            suggestion = trace.to_dict()
            suggestion["steps"] = [
                {**s, "label": st.label} for s, st in zip(suggestion["steps"], trace.steps, strict=True)
            ]
        return {
            "query": query,
            "edit": edit,
            "tokens": tokens,
            "hits": hits,
            "metric": metric,
            "policy": self.policy_name,
            "suggestion": suggestion,
        }

    @property
    def policy_name(self) -> str | None:
        """The query editor's rewrite policy, ``None`` when no shipped policy fits the index."""
        return None if self.policy is None else str(self.policy.name)

    def info(self) -> dict[str, Any]:
        return {
            "passages": len(self.store),
            "retriever": getattr(self.retriever, "name", type(self.retriever).__name__),
            "index": self.checker.provenance.get("index"),
            "planner": self.settings.planner,
            "policy": self.policy_name,
            "qrels": len(self.env.relevant) if self.env is not None else 0,
        }
