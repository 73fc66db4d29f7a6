"""The rewrite policies (Kazemi et al., "Query Rewriting for Effective Misinformation
Discovery", AACL 2023, Sections 3.3-3.4), registered in :data:`~.base.REWRITE_POLICIES`.

* :class:`DecisionTransformerPolicy` (``dt``) — the paper's offline-RL policy over
  (return-to-go, state, action) triples (:mod:`.networks`); the state is the embedding of the
  current query (:mod:`.state`). Returns-to-go come from *dense* rewards (each edit's gain in the
  reward measure) or *sparse* (delayed) ones (the whole gain at the last edit),
  :func:`returns_to_go`.
* :class:`OneActionClassifier` (``classifier``) — the paper's one-action baseline: a 128-way
  classifier of the first edit of the best trajectory from the claim embedding.
* :class:`RandomEditPolicy` (``random``) — a uniformly random valid edit per step (seeded).
* :class:`OriginalPolicy` (``original``) — no edit: the claim as it is.

Invalid actions are masked before the argmax, so a policy never picks one.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factscout.errors import UnknownName
from factscout.nn import require_torch
from factscout.rewrite.actions import N_ACTIONS
from factscout.rewrite.base import REWARD_MODES, REWRITE_POLICIES, Episode, RewardMode
from factscout.rewrite.networks import ClassifierConfig, DtConfig, build_net, dt_logits, masked_logits
from factscout.rewrite.state import state_encoder


class LearnedPolicy:
    """Shared parts of the two learned policies: the net, state embedding, masking."""

    kind = ""
    name: str
    reward: RewardMode = "dense"
    target_return: float = 1.0

    def __init__(self, config: DtConfig | ClassifierConfig, net: Any = None, training: dict | None = None) -> None:
        self.config = config
        self.net = net if net is not None else build_net(config)
        self.net.eval()
        self.training: dict[str, Any] = dict(training or {})
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> Any:
        """States (len(texts), dim) as a float32 tensor; with a fine-tuned encoder, through the
        net's encoder (with gradients when the net is training)."""
        torch = require_torch("learned rewrite policies")
        if self.net.encoder is not None:
            return self.net.encoder(list(texts))
        todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if todo:
            for text, vec in zip(todo, state_encoder(self.config.encoder).encode(todo), strict=True):
                self._cache[text] = vec
        return torch.from_numpy(np.stack([self._cache[t] for t in texts]))

    @staticmethod
    def _argmax(logits: Any, mask: tuple[bool, ...]) -> int | None:
        torch = require_torch("learned rewrite policies")
        if not any(mask):
            return None
        masked = masked_logits(logits, torch.tensor(mask, dtype=torch.bool))
        return int(torch.argmax(masked).item())


class DecisionTransformerPolicy(LearnedPolicy):
    """The decision transformer over (return-to-go, query embedding, one-hot action)."""

    kind = "dt"
    config: DtConfig

    def __init__(self, config: DtConfig | None = None, net: Any = None, training: dict | None = None) -> None:
        super().__init__(config or DtConfig(), net, training)
        self.reward = self.config.reward
        self.target_return = self.config.target_return
        self.name = f"dt-{self.reward}"

    def choose(self, episode: Episode) -> int | None:
        torch = require_torch("learned rewrite policies")
        steps = min(len(episode.queries), self.config.max_steps)
        queries = episode.queries[-steps:]
        taken = episode.actions[len(episode.actions) - (steps - 1) :] if steps > 1 else ()
        with torch.no_grad():
            states = self.embed(queries).unsqueeze(0)
            actions = torch.tensor([[*taken, 0]], dtype=torch.long)
            known = torch.tensor([[True] * (steps - 1) + [False]])
            rtg = torch.tensor([episode.returns_to_go[-steps:]], dtype=torch.float32)
            attention = torch.ones(1, steps, dtype=torch.bool)
            masks = torch.ones(1, steps, N_ACTIONS, dtype=torch.bool)
            logits = dt_logits(self.net, states, actions, known, rtg, attention, masks)[0, -1]
        return self._argmax(logits, episode.mask)


class OneActionClassifier(LearnedPolicy):
    """A 128-way classifier of the first edit from the claim embedding; one edit at most."""

    kind = "classifier"
    name = "classifier"
    config: ClassifierConfig

    def __init__(self, config: ClassifierConfig | None = None, net: Any = None, training: dict | None = None) -> None:
        super().__init__(config or ClassifierConfig(), net, training)

    def logits(self, texts: Sequence[str]) -> Any:
        return self.net.head(self.embed(texts))

    def choose(self, episode: Episode) -> int | None:
        if episode.step > 0:
            return None
        torch = require_torch("learned rewrite policies")
        with torch.no_grad():
            logits = self.logits([episode.queries[0]])[0]
        return self._argmax(logits, episode.mask)


@dataclass(frozen=True, slots=True)
class RandomEditPolicy:
    """A uniformly random valid edit per step; the generator is seeded with (seed, claim text,
    step), so a claim's rewrite does not depend on the other claims or their order."""

    seed: int = 0
    name: str = field(default="random", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)

    def choose(self, episode: Episode) -> int | None:
        valid = [i for i, ok in enumerate(episode.mask) if ok]
        if not valid:
            return None
        return random.Random(f"{self.seed}:{episode.queries[0]}:{episode.step}").choice(valid)


@dataclass(frozen=True, slots=True)
class OriginalPolicy:
    """No edit: the original claim is the query (the paper's "original" baseline)."""

    name: str = field(default="original", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)

    def choose(self, episode: Episode) -> int | None:
        return None


REWRITE_POLICIES.register("dt")(DecisionTransformerPolicy)
REWRITE_POLICIES.register("classifier")(OneActionClassifier)
REWRITE_POLICIES.register("random")(RandomEditPolicy)
REWRITE_POLICIES.register("original")(OriginalPolicy)


def returns_to_go(rewards: Sequence[float], next_rewards: Sequence[float], mode: RewardMode) -> list[float]:
    """Returns-to-go of one trajectory from its per-step rewards before/after each edit.

    Dense: each edit earns its gain, so step t's return-to-go is the gain still to come
    (final reward - reward before step t). Sparse (delayed): the whole gain is paid at the last
    edit, so every step's return-to-go is the total gain."""
    if mode not in REWARD_MODES:
        raise UnknownName("reward mode", str(mode), REWARD_MODES)
    if not rewards:
        return []
    final = next_rewards[-1]
    if mode == "dense":
        return [final - r for r in rewards]
    total = final - rewards[0]
    return [total for _ in rewards]
