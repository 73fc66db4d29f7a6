"""Train the token-pointing rewrite policy (:mod:`factscout.rewrite.pointer`) by behaviour cloning.

    factscout train rewrite --trajectories bfs.jsonl --policy pointer --claims claims.jsonl --out DIR

**Examples.** Every state a near-best trajectory of a claim passes through (final reward within
``near_best`` of the claim's best, relative) is one example; the target is a *set* of actions:

* the action the trajectory took there; with ``commuting_removals``, when the rest of the
  trajectory only removes words, also the removal of *any* word it removes later (removals
  commute: every order reaches the same query). That is off by default: a policy free to pick
  any order reaches intermediate queries no trajectory passed through, where it was never
  taught (measured on SciFact bm25-and: see the rewriting benchmark's notes);
* **stop** at the trajectory's last query;
* **stop** at the claim itself for claims whose original query is already the best the search
  found (BFS status ``at_max`` or ``no_improvement``), so the policy learns when not to edit.

The same state reached by several trajectories gets the union of their targets. With
``config.history`` (the decision-transformer head) a state is the whole path to it
(:func:`history_examples`: the queries, edits and returns-to-go before it) and the claims best
left alone are conditioned on a return of 0. The loss is the
negative log of the probability mass on the target set (``-log sum_{a in T} p(a)``), with invalid
actions masked. Epochs are chosen by ``select`` (a callback scoring the policy, e.g. the mean
reward of rollouts on validation claims) when given, otherwise the last epoch is kept.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from factscout.errors import DataNotFound, InputError
from factscout.nn import require_torch
from factscout.records import Claim
from factscout.rewrite.actions import MAX_POSITIONS, N_ACTIONS, action_mask, parse
from factscout.rewrite.base import Episode, RewardMode
from factscout.rewrite.keepset import align_tokens
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.pointer import STOP, PointerConfig, PointerPolicy
from factscout.rewrite.policies import returns_to_go
from factscout.rewrite.trajectories import Trajectory, manifest_path
from factscout.training.loop import optimizer_step
from factscout.training.rewrite.trainer import TrainResult, TrainSettings

log = logging.getLogger(__name__)
_REMOVE = 3 * MAX_POSITIONS


@dataclass(frozen=True, slots=True)
class PointerExample:
    """One state: the query, the edits made before it, and the set of good next actions."""

    query: str
    step: int
    targets: frozenset[int]
    claim_id: str = ""


def _later_removals(trajectory: Trajectory, t: int) -> set[int]:
    """Remove actions, on the query before step t, of every word the trajectory removes from
    step t on (empty unless every step from t is a removal)."""
    steps = trajectory.steps[t:]
    if not all(_REMOVE <= s.action < N_ACTIONS for s in steps):
        return set()
    current, final = parse(steps[0].query), parse(steps[-1].next_query)
    kept = align_tokens(current, final)
    if kept is None:
        return set()
    return {_REMOVE + p for p in range(min(len(current.tokens), MAX_POSITIONS)) if p not in set(kept)}


def pointer_examples(
    trajectories: Sequence[Trajectory],
    stop_claims: Iterable[str] = (),
    *,
    near_best: float = 0.05,
    commuting_removals: bool = False,
) -> list[PointerExample]:
    """Behaviour-cloning examples (see the module docstring) from improving trajectories and
    the texts of claims best left as they are."""
    best: dict[str, float] = {}
    for tr in trajectories:
        if not tr.negative:
            best[tr.claim_id] = max(best.get(tr.claim_id, 0.0), tr.final_reward)
    targets: dict[tuple[str, str, int], set[int]] = {}
    for tr in trajectories:
        if tr.negative or tr.final_reward < (1 - near_best) * best[tr.claim_id]:
            continue
        for t, s in enumerate(tr.steps):
            mask = action_mask(s.query)
            if not 0 <= s.action < N_ACTIONS or not mask[s.action]:
                break  # made with another tagger or WordNet: keep the valid prefix
            good = {s.action}
            if commuting_removals:
                good |= {a for a in _later_removals(tr, t) if mask[a]}
            targets.setdefault((tr.claim_id, s.query, t), set()).update(good)
        else:
            last = tr.steps[-1]
            targets.setdefault((tr.claim_id, last.next_query, len(tr.steps)), set()).add(STOP)
    for text in stop_claims:
        targets.setdefault((f"stop:{text}", text, 0), set()).add(STOP)
    return [PointerExample(q, step, frozenset(a), cid) for (cid, q, step), a in targets.items()]


@dataclass(frozen=True, slots=True)
class HistoryExample:
    """A state with the path to it (the episode's queries, edits and returns-to-go; its last
    query is the state) and the set of good next actions."""

    episode: Episode
    targets: frozenset[int]
    claim_id: str = ""

    @property
    def query(self) -> str:
        return self.episode.queries[-1]


def history_examples(
    trajectories: Sequence[Trajectory], stop_claims: Iterable[str] = (), reward: RewardMode = "sparse",
    *, near_best: float = 0.05,
) -> list[HistoryExample]:  # fmt: skip
    """Behaviour-cloning examples for the decision-transformer head: every state of the
    near-best trajectories with its path (returns-to-go of ``reward`` mode; after the last edit
    0 for dense, the whole gain for sparse), stop after a complete trajectory, and stop at
    the claims best left alone, conditioned on a return of 0."""
    best: dict[str, float] = {}
    for tr in trajectories:
        if not tr.negative:
            best[tr.claim_id] = max(best.get(tr.claim_id, 0.0), tr.final_reward)
    targets: dict[tuple[str, tuple[str, ...], tuple[int, ...], tuple[float, ...]], set[int]] = {}
    for tr in trajectories:
        if tr.negative or tr.final_reward < (1 - near_best) * best[tr.claim_id]:
            continue
        steps = []
        for s in tr.steps:
            if not 0 <= s.action < N_ACTIONS or not action_mask(s.query)[s.action]:
                break
            steps.append(s)
        if not steps:
            continue
        complete = len(steps) == len(tr.steps)
        rtg = returns_to_go([s.reward for s in steps], [s.next_reward for s in steps], reward)
        queries = [s.query for s in steps] + [steps[-1].next_query]
        rtg = [round(r, 6) for r in [*rtg, 0.0 if reward == "dense" else rtg[0]]]
        actions = [s.action for s in steps]
        for t in range(len(steps) + complete):
            key = (tr.claim_id, tuple(queries[: t + 1]), tuple(actions[:t]), tuple(rtg[: t + 1]))
            targets.setdefault(key, set()).add(actions[t] if t < len(steps) else STOP)
    for text in stop_claims:
        targets.setdefault((f"stop:{text}", (text,), (), (0.0,)), set()).add(STOP)
    return [HistoryExample(Episode(q, a, r, ()), frozenset(t), cid) for (cid, q, a, r), t in targets.items()]


def pointer_stop_claims(trajectories_file: str | os.PathLike[str], claims: Iterable[Claim]) -> list[str]:
    """Texts of the claims best left as they are: those the trajectory file's manifest marks
    ``at_max`` or ``no_improvement`` with a reward above 0 (a claim that finds nothing relevant
    is no example of a good query)."""
    path = manifest_path(trajectories_file)
    if not path.is_file():
        raise DataNotFound(f"no manifest {path} next to {trajectories_file}")
    keep = set()
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            if row["status"] in ("at_max", "no_improvement") and float(row["reward"]) > 0:
                keep.add(str(row["claim_id"]))
        except (ValueError, KeyError, TypeError) as exc:
            raise InputError(f"{path}, line {n}: not a manifest row ({exc})") from None
    return [c.text for c in claims if c.claim_id in keep]


def step_limit(trajectories: Sequence[Trajectory], quantile: float = 0.95) -> int:
    """The rewrite step limit an endpoint needs: the ``quantile`` of the improving trajectories'
    lengths (4 on BM25, where the BFS depth bounds them; more on an AND endpoint, where keep-set
    trajectories remove most words), at least 1 and at most 32."""
    lengths = sorted(len(t.steps) for t in trajectories if not t.negative)
    if not lengths:
        return 1
    return max(1, min(MAX_POSITIONS, lengths[min(len(lengths) - 1, math.ceil(quantile * len(lengths)) - 1)]))


def _split(examples: Sequence[PointerExample | HistoryExample], fraction: float) -> tuple[list[int], list[int]]:
    """Example indices for fitting and for validation, by a stable hash of the claim."""
    fit: list[int] = []
    val: list[int] = []
    for i, e in enumerate(examples):
        bucket = int.from_bytes(hashlib.blake2b(e.claim_id.encode("utf-8"), digest_size=4).digest(), "little")
        (val if bucket % 1000 < fraction * 1000 else fit).append(i)
    return fit, val


def train_pointer(
    trajectories: Sequence[Trajectory],
    stop_claims: Iterable[str] = (),
    config: PointerConfig | None = None,
    settings: TrainSettings | None = None,
    *,
    select: Callable[[PointerPolicy], float] | None = None,
    validation: float = 0.1,
    commuting_removals: bool = False,
    idf: IdfTable | None = None,
) -> TrainResult:
    """Fit a :class:`PointerPolicy` (seeded). The epoch kept is the one ``select`` scores best
    when given (all examples are fitted); otherwise a ``validation`` share of the claims is held
    out and the epoch with the lowest loss on them is kept (0: the last epoch)."""
    torch = require_torch("learned rewrite policies")
    config, settings = config or PointerConfig(), settings or TrainSettings(epochs=20, lr=1e-3)
    start = time.perf_counter()
    torch.manual_seed(settings.seed)
    examples: Sequence[PointerExample | HistoryExample] = (
        history_examples(trajectories, stop_claims, config.reward)
        if config.history
        else pointer_examples(trajectories, stop_claims, commuting_removals=commuting_removals)
    )
    if not examples:
        raise InputError("no usable trajectories or stop claims to train on")
    policy = PointerPolicy(config, idf=idf)
    net = policy.net
    parsed = [parse(e.query) for e in examples]
    steps = torch.tensor([e.step if isinstance(e, PointerExample) else 0 for e in examples])
    masks = torch.tensor([[*action_mask(p), True] for p in parsed])
    target = torch.zeros(len(examples), N_ACTIONS + 1, dtype=torch.bool)
    for i, e in enumerate(examples):
        target[i, list(e.targets)] = True
    frozen = None if config.finetune_encoder or config.history else policy.inputs(parsed)
    fit, val = _split(examples, validation if select is None else 0.0)
    if not fit:
        fit, val = list(range(len(examples))), []
    fit_idx = torch.tensor(fit, dtype=torch.long)

    def batch_loss(idx: Any) -> Any:
        if config.history:
            episodes = [examples[i].episode for i in idx.tolist()]  # type: ignore[union-attr]
            logits = net.forward_history(*policy.history_inputs(episodes, grad=config.finetune_encoder))
            logp = torch.log_softmax(logits.masked_fill(~masks[idx], float("-inf")), dim=-1)
            return -torch.logsumexp(logp.masked_fill(~target[idx], float("-inf")), dim=-1).mean()
        if frozen is not None:
            vectors, features, valid = (x[idx] for x in frozen)
        else:
            vectors, features, valid = policy.inputs([parsed[i] for i in idx.tolist()], grad=True)
        logits = net(vectors, features, valid, steps[idx]).masked_fill(~masks[idx], float("-inf"))
        logp = torch.log_softmax(logits, dim=-1)
        return -torch.logsumexp(logp.masked_fill(~target[idx], float("-inf")), dim=-1).mean()

    head = [p for n, p in net.named_parameters() if not n.startswith("encoder.")]
    groups = [{"params": head, "lr": settings.lr}]
    if config.finetune_encoder:
        groups.append({"params": list(net.encoder.parameters()), "lr": settings.encoder_lr})
    optimizer = torch.optim.AdamW(groups, weight_decay=settings.weight_decay)
    generator = torch.Generator().manual_seed(settings.seed)
    losses: list[float] = []
    scores: list[float] = []
    best_score, best_state = float("-inf"), None
    trained = {k for k in net.state_dict() if config.finetune_encoder or not k.startswith("encoder.")}
    for _ in range(settings.epochs):
        net.train()
        order = fit_idx[torch.randperm(len(fit_idx), generator=generator)]
        total = 0.0
        for begin in range(0, len(order), settings.batch_size):
            idx = order[begin : begin + settings.batch_size]
            loss = batch_loss(idx)
            optimizer_step(loss, optimizer, clip=head)
            total += float(loss.item()) * len(idx)
        losses.append(total / len(order))
        net.eval()
        if config.finetune_encoder:
            policy._cache.clear()
        if select is None and not val:
            continue
        if select is not None:
            score = float(select(policy))
        else:
            with torch.no_grad():
                score = -float(batch_loss(torch.tensor(val, dtype=torch.long)).item())
        scores.append(score)
        if score > best_score:
            # the frozen MiniLM never changes: keep a copy of the trained weights only
            best_score, best_state = score, {k: v.detach().clone() for k, v in net.state_dict().items() if k in trained}
    if best_state is not None:
        net.load_state_dict(best_state, strict=False)
    net.eval()
    seconds = time.perf_counter() - start
    stops = sum(STOP in e.targets for e in examples)
    policy.training = {
        "settings": asdict(settings),
        "losses": [round(x, 6) for x in losses],
        "selection": [round(x, 6) for x in scores],
        "selected_by": "select" if select is not None else ("validation loss" if val else "last epoch"),
        "validation_examples": len(val),
        "chosen_epoch": (scores.index(best_score) + 1) if scores else len(losses),
        "examples": len(examples),
        "stop_examples": stops,
        "seconds": round(seconds, 2),
    }
    log.info("pointer policy: %d examples (%d stop), %.0f s", len(examples), stops, seconds)
    return TrainResult(policy, tuple(losses), len(examples), 0, seconds)  # type: ignore[arg-type]
