"""Train a rewrite policy offline from BFS trajectories (Kazemi et al., AACL 2023, Section 3.3).

    factscout train rewrite --trajectories bfs.jsonl --out DIR \\
        --policy dt|classifier [--reward dense|sparse] [--seed 0]

The input is the JSONL written by
:func:`factscout.rewrite.bfs.generate_trajectories`; the output folder holds ``policy.json``
and ``weights.safetensors`` (see :func:`factscout.rewrite.policy.save_policy`), with the
training losses and settings recorded under ``training`` in ``policy.json``.

* ``dt``: the decision transformer learns every step of every trajectory (cross-entropy on the
  taken action, invalid actions masked) conditioned on the returns-to-go of ``--reward``.
* ``classifier``: the one-action classifier learns the first edit of every trajectory from the
  claim (a claim with several top-N trajectories contributes each of their first edits).

Steps whose action is not valid on their query any more (trajectories made with another
tagger or WordNet) are dropped with their trajectory's rest and counted in ``skipped``.
States are embedded once up front unless the encoder is fine-tuned (``--finetune-encoder``:
MiniLM is then trained with the policy at ``--encoder-lr``; about 10x slower on a CPU).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from factscout.errors import InputError
from factscout.nn import require_torch
from factscout.rewrite.actions import N_ACTIONS, action_mask
from factscout.rewrite.policy import (
    STATE_ENCODERS,
    ClassifierConfig,
    DecisionTransformerPolicy,
    DtConfig,
    OneActionClassifier,
    dt_logits,
    masked_logits,
    returns_to_go,
)
from factscout.rewrite.trajectories import Trajectory
from factscout.training.loop import optimizer_step

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class TrainSettings:
    """Optimisation settings shared by both policies."""

    epochs: int = 30
    batch_size: int = 32
    lr: float = 1e-4
    encoder_lr: float = 2e-5
    weight_decay: float = 1e-4
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        if not (self.lr > 0 and self.encoder_lr > 0):
            raise InputError(f"learning rates must be positive, got {self.lr!r} and {self.encoder_lr!r}")


@dataclass(frozen=True, slots=True)
class TrainResult:
    """A trained policy with its per-epoch mean training loss."""

    policy: DecisionTransformerPolicy | OneActionClassifier
    losses: tuple[float, ...]
    examples: int
    skipped: int
    seconds: float


@dataclass(frozen=True, slots=True)
class _Sequence:
    queries: tuple[str, ...]
    actions: tuple[int, ...]
    rewards: tuple[float, ...]
    next_rewards: tuple[float, ...]
    masks: tuple[tuple[bool, ...], ...]


def _sequences(trajectories: Sequence[Trajectory], max_steps: int) -> tuple[list[_Sequence], int]:
    """Usable prefixes (at most ``max_steps`` steps, valid actions only) and how many
    trajectories lost steps."""
    out: list[_Sequence] = []
    skipped = 0
    for t in trajectories:
        steps, masks = [], []
        for s in t.steps[:max_steps]:
            mask = action_mask(s.query)
            if not 0 <= s.action < N_ACTIONS or not mask[s.action]:
                break
            steps.append(s)
            masks.append(mask)
        if len(steps) < min(len(t.steps), max_steps):
            skipped += 1
        if steps:
            out.append(
                _Sequence(
                    tuple(s.query for s in steps),
                    tuple(s.action for s in steps),
                    tuple(s.reward for s in steps),
                    tuple(s.next_reward for s in steps),
                    tuple(masks),
                )
            )
    if skipped:
        log.warning("%d trajectories had steps whose action is no longer valid; kept their valid prefix", skipped)
    return out, skipped


def _optimizer(net: Any, settings: TrainSettings) -> Any:
    torch = require_torch("learned rewrite policies")
    groups = [{"params": list(net.head.parameters()), "lr": settings.lr}]
    if net.encoder is not None:
        groups.append({"params": list(net.encoder.parameters()), "lr": settings.encoder_lr})
    return torch.optim.AdamW(groups, weight_decay=settings.weight_decay)


def train_decision_transformer(
    trajectories: Sequence[Trajectory], config: DtConfig | None = None, settings: TrainSettings | None = None
) -> TrainResult:
    """Fit a :class:`DecisionTransformerPolicy` on ``trajectories`` (seeded: the same inputs
    and settings give the same weights on the same machine)."""
    torch = require_torch("learned rewrite policies")
    config, settings = config or DtConfig(), settings or TrainSettings()
    start = time.perf_counter()
    torch.manual_seed(settings.seed)
    data, skipped = _sequences(trajectories, config.max_steps)
    if not data:
        raise InputError("no usable trajectories to train on")
    policy = DecisionTransformerPolicy(config)
    net = policy.net
    n, steps = len(data), config.max_steps
    texts = [list(d.queries) + [""] * (steps - len(d.queries)) for d in data]
    actions = torch.tensor([list(d.actions) + [0] * (steps - len(d.actions)) for d in data], dtype=torch.long)
    attention = torch.tensor([[i < len(d.actions) for i in range(steps)] for d in data])
    rtg = torch.tensor(
        [returns_to_go(d.rewards, d.next_rewards, config.reward) + [0.0] * (steps - len(d.actions)) for d in data],
        dtype=torch.float32,
    )
    masks = torch.ones(n, steps, N_ACTIONS, dtype=torch.bool)
    for i, d in enumerate(data):
        masks[i, : len(d.masks)] = torch.tensor(d.masks)
    frozen = None if net.encoder is not None else policy.embed([t for row in texts for t in row if t])
    if frozen is not None:
        states_all = torch.zeros(n, steps, frozen.shape[1])
        states_all[attention] = frozen
    optimizer = _optimizer(net, settings)
    generator = torch.Generator().manual_seed(settings.seed)
    losses: list[float] = []
    net.train()
    for _ in range(settings.epochs):
        order = torch.randperm(n, generator=generator)
        total, count = 0.0, 0
        for begin in range(0, n, settings.batch_size):
            idx = order[begin : begin + settings.batch_size]
            if frozen is not None:
                states = states_all[idx]
            else:
                flat = [t for i in idx.tolist() for t in texts[i] if t]
                states = torch.zeros(len(idx), steps, STATE_ENCODERS[config.encoder].dimension)
                states[attention[idx]] = policy.embed(flat)
            logits = dt_logits(net, states, actions[idx], attention[idx], rtg[idx], attention[idx], masks[idx])
            valid = attention[idx]
            loss = torch.nn.functional.cross_entropy(logits[valid], actions[idx][valid])
            optimizer_step(loss, optimizer, clip=net.parameters())
            total += float(loss.item()) * int(valid.sum())
            count += int(valid.sum())
        losses.append(total / count)
    net.eval()
    seconds = time.perf_counter() - start
    policy.training = _notes(settings, losses, n, skipped, seconds)
    return TrainResult(policy, tuple(losses), n, skipped, seconds)


def train_classifier(
    trajectories: Sequence[Trajectory], config: ClassifierConfig | None = None, settings: TrainSettings | None = None
) -> TrainResult:
    """Fit a :class:`OneActionClassifier` on the first edit of every improving trajectory
    (random-edit "negative" sequences are left out: they would teach it edits that hurt)."""
    torch = require_torch("learned rewrite policies")
    config, settings = config or ClassifierConfig(), settings or TrainSettings(lr=1e-3)
    start = time.perf_counter()
    torch.manual_seed(settings.seed)
    data, skipped = _sequences([t for t in trajectories if not t.negative], 1)
    if not data:
        raise InputError("no usable trajectories to train on")
    policy = OneActionClassifier(config)
    net = policy.net
    claims = [d.queries[0] for d in data]
    targets = torch.tensor([d.actions[0] for d in data], dtype=torch.long)
    masks = torch.tensor([d.masks[0] for d in data])
    frozen = None if net.encoder is not None else policy.embed(claims)
    optimizer = _optimizer(net, settings)
    generator = torch.Generator().manual_seed(settings.seed)
    losses: list[float] = []
    net.train()
    for _ in range(settings.epochs):
        order = torch.randperm(len(data), generator=generator)
        total = 0.0
        for begin in range(0, len(data), settings.batch_size):
            idx = order[begin : begin + settings.batch_size]
            states = frozen[idx] if frozen is not None else policy.embed([claims[i] for i in idx.tolist()])
            logits = masked_logits(net.head(states), masks[idx])
            loss = torch.nn.functional.cross_entropy(logits, targets[idx])
            optimizer_step(loss, optimizer)
            total += float(loss.item()) * len(idx)
        losses.append(total / len(data))
    net.eval()
    seconds = time.perf_counter() - start
    policy.training = _notes(settings, losses, len(data), skipped, seconds)
    return TrainResult(policy, tuple(losses), len(data), skipped, seconds)


def _notes(settings: TrainSettings, losses: list[float], examples: int, skipped: int, seconds: float) -> dict:
    return {
        "settings": asdict(settings),
        "losses": [round(x, 6) for x in losses],
        "examples": examples,
        "skipped": skipped,
        "seconds": round(seconds, 2),
    }


POLICY_TRAINERS = {"dt": train_decision_transformer, "classifier": train_classifier}
