"""Breadth-first generation of edit trajectories for offline RL (Kazemi et al., "Query Rewriting
for Effective Misinformation Discovery", AACL 2023, Section 3.2).

For each claim, starting from the claim text, every valid edit (:mod:`.actions`) is applied and
scored against the black-box search environment (:mod:`.environment`); only edits that
improve the reward are expanded further, level by level, up to ``max_depth`` edits (default 4,
as in the paper). As in the paper, expansions that gain less than 3% (relative to the current
reward) are pruned, and so is a random 5% of the remaining ones, which diversifies the
sequences and keeps the search cheap; the randomness comes from a generator seeded with
``(seed, claim_id)``, so a claim's trajectories do not depend on which worker handled it or
in which order. A query reached twice (by different edit orders) is expanded once, and at most
``max_frontier`` states (best reward first) are kept per level, which bounds the cost on
claims where almost every edit helps.

A trajectory ends where no edit improves the query any more or at the depth limit; the
``top_n`` best (by final reward, then fewer edits, then action ids) are written per claim.
Claims whose original query already reaches the best reward reachable are skipped, as are
claims without relevant passages.

The trajectory records and their resumable JSONL files (one row per edit step, plus a manifest
of finished claims) are in :mod:`.trajectories`; the driver over many claims, in processes or on
Ray actors with the same output as one worker, is in :mod:`.generate`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace

from factscout.errors import InputError
from factscout.records import Claim
from factscout.rewrite.actions import Edit, valid_edits
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.keepset import removal_trajectory, search_keep_set
from factscout.rewrite.trajectories import ClaimResult, Step, Trajectory

_EPS = 1e-12


@dataclass(frozen=True, slots=True)
class BfsConfig:
    """Search settings; the defaults follow the paper where it gives a value."""

    max_depth: int = 4
    min_gain: float = 0.03  # relative to the current reward
    random_prune: float = 0.05
    top_n: int = 5
    max_frontier: int = 32
    seed: int = 0
    negatives: int = 0  # random-edit sequences per claim, kept whatever their rewards (for the DT)
    keep_set: bool = False  # also run keep-set search (:mod:`.keepset`): long removal sequences

    def __post_init__(self) -> None:
        for name in ("max_depth", "top_n", "max_frontier"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        if not isinstance(self.negatives, int) or isinstance(self.negatives, bool) or self.negatives < 0:
            raise InputError(f"negatives must be a non-negative integer, got {self.negatives!r}")
        if not self.min_gain >= 0.0:
            raise InputError(f"min_gain must be >= 0, got {self.min_gain!r}")
        if not 0.0 <= self.random_prune < 1.0:
            raise InputError(f"random_prune must be in [0, 1), got {self.random_prune!r}")


@dataclass(frozen=True, slots=True)
class _Node:
    text: str
    reward: float
    path: tuple[tuple[Edit, float, float], ...]  # (edit, reward before, reward after)

    def sort_key(self) -> tuple[float, int, tuple[int, ...]]:
        return (-self.reward, len(self.path), tuple(e.action_id for e, _, _ in self.path))


def improves(before: float, after: float, min_gain: float) -> bool:
    """True when ``after`` beats ``before`` by at least ``min_gain`` relative to ``before``
    (any gain from a reward of 0)."""
    if after <= before + _EPS:
        return False
    return before <= _EPS or (after - before) / before >= min_gain - _EPS


def _reached(text: str, visited: dict[str, float]) -> list[tuple[Edit, float]]:
    return [(e, visited[e.next_query]) for e in valid_edits(text) if e.next_query in visited]


def search_claim(claim: Claim, environment: SearchEnvironment, config: BfsConfig | None = None) -> ClaimResult:
    """Depth-limited, improvement-only BFS over edit sequences for one claim (pure given a
    deterministic retriever: the output depends only on the claim, the retriever and ``config``).

    With ``config.negatives`` > 0, that many random-edit sequences of up to ``max_depth`` edits
    follow the BFS sequences (``Step.negative``; sequence numbers after the BFS ones), for claims
    with relevant passages whatever the BFS found: the decision transformer then also sees what
    low returns look like (the "negative training sequences" of Kazemi et al.).
    """
    config = config or BfsConfig()
    result = _bfs(claim, environment, config)
    if config.keep_set and result.status in ("done", "no_improvement"):
        result = _with_keep_set(claim, environment, config, result)
    if not config.negatives or result.status == "no_relevant":
        return result
    rng = random.Random(f"{config.seed}:negatives:{claim.claim_id}")
    extra: list[Trajectory] = []
    candidates = result.candidates
    for j in range(config.negatives):
        text, reward, steps = claim.text, result.reward, []
        for i in range(config.max_depth):
            edits = valid_edits(text)
            if not edits:
                break
            edit = edits[rng.randrange(len(edits))]
            after = environment.reward(claim, edit.next_query)
            candidates += 1
            seq = len(result.trajectories) + j
            steps.append(
                Step(
                    claim.claim_id, seq, i, text, edit.action_id, edit.description, edit.next_query, reward, after, True
                )
            )
            text, reward = edit.next_query, after
        if steps:
            extra.append(Trajectory(claim.claim_id, tuple(steps)))
    return replace(result, trajectories=(*result.trajectories, *extra), candidates=candidates)


def _with_keep_set(claim: Claim, environment: SearchEnvironment, config: BfsConfig, result: ClaimResult) -> ClaimResult:
    """``result`` with the keep-set trajectory ranked among the BFS ones (by final reward, then
    fewer edits) when it improves on the original claim."""
    found = search_keep_set(claim, environment, min_gain=config.min_gain)
    candidates = result.candidates + found.candidates
    if not improves(result.reward, found.reward, config.min_gain):
        return replace(result, candidates=candidates)
    extra = removal_trajectory(claim, found.keep, environment)
    if extra is None or not improves(result.reward, extra.final_reward, config.min_gain):
        return replace(result, candidates=candidates)
    ranked = sorted((*result.trajectories, extra), key=lambda t: (-t.final_reward, len(t.steps)))[: config.top_n]
    renumbered = tuple(
        Trajectory(t.claim_id, tuple(replace(s, sequence=rank) for s in t.steps)) for rank, t in enumerate(ranked)
    )
    return replace(result, status="done", trajectories=renumbered, candidates=candidates + len(extra.steps) + 1)


def _bfs(claim: Claim, environment: SearchEnvironment, config: BfsConfig) -> ClaimResult:
    best = environment.max_reward(claim)
    if best <= 0.0:
        return ClaimResult(claim.claim_id, "no_relevant", 0.0, 0.0)
    root_reward = environment.reward(claim, claim.text)
    if root_reward >= best - _EPS:
        return ClaimResult(claim.claim_id, "at_max", root_reward, best, candidates=1)
    rng = random.Random(f"{config.seed}:{claim.claim_id}")
    frontier = [_Node(claim.text, root_reward, ())]
    visited = {claim.text: root_reward}  # query -> reward: each query is expanded once
    terminals: list[_Node] = []
    candidates = 1
    for _ in range(config.max_depth):
        children: list[_Node] = []
        for node in frontier:
            if node.reward >= best - _EPS:  # nothing left to improve
                terminals.append(node)
                continue
            edits = [e for e in valid_edits(node.text) if e.next_query not in visited]
            rewards = environment.rewards(claim, [e.next_query for e in edits]) if edits else []
            candidates += len(edits)
            # an improving edit to a query already reached by another path still makes this node
            # a prefix of a longer sequence, not the end of one
            kept = any(improves(node.reward, r, config.min_gain) for e, r in _reached(node.text, visited))
            for edit, reward in zip(edits, rewards, strict=True):
                if edit.next_query in visited or not improves(node.reward, reward, config.min_gain):
                    continue
                if rng.random() < config.random_prune:
                    continue
                visited[edit.next_query] = reward
                children.append(_Node(edit.next_query, reward, (*node.path, (edit, node.reward, reward))))
                kept = True
            if not kept and node.path:
                terminals.append(node)
        children.sort(key=_Node.sort_key)
        frontier = children[: config.max_frontier]
        if not frontier:
            break
    terminals.extend(frontier)
    if not terminals:
        return ClaimResult(claim.claim_id, "no_improvement", root_reward, best, candidates=candidates)
    terminals.sort(key=_Node.sort_key)
    trajectories = tuple(
        Trajectory(
            claim.claim_id,
            tuple(
                Step(claim.claim_id, rank, i, e.query, e.action_id, e.description, e.next_query, before, after)
                for i, (e, before, after) in enumerate(node.path)
            ),
        )
        for rank, node in enumerate(terminals[: config.top_n])
    )
    return ClaimResult(claim.claim_id, "done", root_reward, best, trajectories, candidates)
