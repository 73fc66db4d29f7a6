"""The rewriting loop: a policy (:mod:`.base`) applied to a claim, edit by edit, and the trace
of what it did as data (:class:`RewriteTrace`).

**Stopping.** Rewriting stops after ``max_steps`` edits (default: the policy's own
``step_limit`` when it has one, as the token-pointing, keyword and ranker policies do, whose
removal sequences on an AND endpoint run long; otherwise 4, the BFS depth), when no
action is valid, when the policy declines (the classifier after its one edit, the original
policy at once) and — only when a :class:`~factscout.rewrite.environment.SearchEnvironment` is
given — when no valid edit of the current query improves its reward (one batched, cached
scoring of the candidates per step). The policy's own choice is the edit taken.

**Returns-to-go.** At inference the return-to-go starts at the maximum reward (1.0 for AP/R/RR,
or the environment's best reachable reward for the claim) and, with dense rewards, is lowered by
the gain each edit achieved (a delayed reward pays nothing before the end, so it stays put).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from factscout.errors import FactscoutError, InputError
from factscout.records import Claim, Query
from factscout.rewrite.actions import action_mask, apply_action, valid_edits
from factscout.rewrite.base import DEFAULT_MAX_STEPS, Episode, LimitedPolicy, RewritePolicy, check_positive
from factscout.rewrite.environment import SearchEnvironment

log = logging.getLogger(__name__)

_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class RewriteStep:
    """One edit of a rewrite: its action id, the human-readable edit, the query after it and,
    when an environment scored it, the reward after it."""

    action: int
    text: str
    query: str
    reward: float | None = None

    @property
    def label(self) -> str:
        """The edit in short form: ``remove 'the' @3``."""
        return re.sub(r" at (\d+)$", r" @\1", self.text)


@dataclass(frozen=True, slots=True)
class RewriteTrace:
    """What a policy did to a claim: the original query, the edits, the final query.

    ``measure`` and the rewards are set only when an environment scored the queries."""

    claim_id: str
    original: str
    steps: tuple[RewriteStep, ...]
    final: str
    policy: str
    measure: str | None = None
    original_reward: float | None = None

    @property
    def final_reward(self) -> float | None:
        return self.steps[-1].reward if self.steps else self.original_reward

    @property
    def actions(self) -> tuple[int, ...]:
        return tuple(s.action for s in self.steps)

    def to_dict(self) -> dict[str, Any]:
        return {
            "claim_id": self.claim_id,
            "original": self.original,
            "steps": [asdict(s) for s in self.steps],
            "final": self.final,
            "policy": self.policy,
            "measure": self.measure,
            "original_reward": self.original_reward,
            "final_reward": self.final_reward,
        }


def step_limit(policy: RewritePolicy) -> int:
    """The edits ``policy`` may make by default: its ``step_limit`` when it has one (a positive
    integer), else :data:`~.base.DEFAULT_MAX_STEPS`."""
    limit = policy.step_limit if isinstance(policy, LimitedPolicy) else None
    return limit if isinstance(limit, int) and not isinstance(limit, bool) and limit > 0 else DEFAULT_MAX_STEPS


def rewrite(
    claim: Claim | str,
    policy: RewritePolicy,
    env: SearchEnvironment | None = None,
    *,
    max_steps: int | None = None,
) -> RewriteTrace:
    """Rewrite ``claim`` with ``policy`` (see the module doc for when it stops).

    ``env`` scores every query (its measure, the claim's qrels by ``claim_id``) and enables the
    no-improvement stop; without it the trace carries no rewards. A string claim gets the id
    ``claim``."""
    if isinstance(claim, str):
        if not claim.strip():
            raise InputError("cannot rewrite an empty claim")
        claim = Claim("claim", claim.strip())
    max_steps = step_limit(policy) if max_steps is None else max_steps
    check_positive("rewrite", max_steps=max_steps)
    current = claim.text
    start = env.max_reward(claim) if env is not None else 0.0
    rtg = start if env is not None and start > 0 else policy.target_return
    reward = env.reward(claim, current) if env is not None else None
    original_reward = reward
    queries, returns = [current], [rtg]
    actions: list[int] = []
    steps: list[RewriteStep] = []
    for _ in range(max_steps):
        mask = action_mask(current)
        if not any(mask):
            break
        if env is not None and reward is not None:
            candidates = [e.next_query for e in valid_edits(current)]
            if not any(r > reward + _EPS for r in env.rewards(claim, candidates)):
                break
        choice = policy.choose(Episode(tuple(queries), tuple(actions), tuple(returns), mask))
        if choice is None:
            break
        if not mask[choice]:
            raise InputError(f"policy {policy.name} chose the invalid action {choice} on {current!r}")
        edit = apply_action(current, choice)
        after = env.reward(claim, edit.next_query) if env is not None else None
        if after is not None and reward is not None and policy.reward == "dense":
            rtg -= after - reward
        steps.append(RewriteStep(choice, edit.description, edit.next_query, after))
        current, reward = edit.next_query, after
        queries.append(current)
        actions.append(choice)
        returns.append(rtg)
    return RewriteTrace(
        claim.claim_id,
        claim.text,
        tuple(steps),
        current,
        policy.name,
        str(env.measure) if env is not None else None,
        original_reward,
    )


def rewrite_all(
    claims: Sequence[Claim],
    policy: RewritePolicy,
    env: SearchEnvironment | None = None,
    *,
    max_steps: int | None = None,
    on_claim: Callable[[], None] | None = None,
) -> tuple[list[Query], list[str]]:
    """Rewrite every claim into one query in the ``factscout plan`` row format: id = claim id
    (so a run of these queries evaluates against the qrels directly), origin ``rewrite``, the
    claim's date. A claim the rewriter fails on (a factscout error) keeps its text as the query
    (origin ``claim``) and is listed as ``"<claim_id>: <error>"``; one bad claim never sinks a
    batch."""
    queries: list[Query] = []
    failures: list[str] = []
    for claim in claims:
        try:
            trace = rewrite(claim, policy, env, max_steps=max_steps)
            queries.append(Query(claim.claim_id, claim.claim_id, trace.final, "rewrite", claim.date))
        except FactscoutError as exc:
            log.warning("rewrite failed on claim %s: %s", claim.claim_id, exc)
            failures.append(f"{claim.claim_id}: {exc}")
            queries.append(Query(claim.claim_id, claim.claim_id, claim.text, "claim", claim.date))
        if on_claim is not None:
            on_claim()
    return queries, failures
