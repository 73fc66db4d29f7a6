"""Rewrite policies and the rewriting loop (Kazemi et al., "Query Rewriting for Effective
Misinformation Discovery", AACL 2023, Sections 3.3-3.4).

A policy picks the next edit (an action id of :mod:`.actions`) for the query rewritten so far;
:func:`rewrite` runs it on a claim and returns the edit trace as data (:class:`RewriteTrace`).

* :class:`DecisionTransformerPolicy` — the paper's offline-RL policy: Hugging Face's
  ``DecisionTransformerModel`` (Chen et al. 2021) over (return-to-go, state, action) triples,
  adapted to the discrete action space: actions go in one-hot (128 dims), the action head gives
  128 logits, invalid actions are masked to ``-inf`` before the softmax/argmax and training uses
  cross-entropy on the taken action. The state is the sentence embedding of the current query
  (the offline MiniLM encoder by default; it can be fine-tuned together with the transformer,
  ``finetune_encoder=True``, off by default because it is slow on a CPU). Returns-to-go come
  from *dense* rewards (each edit's gain in the reward measure) or *sparse* (delayed) ones (the
  whole gain at the last edit). At inference the return-to-go starts at the maximum reward
  (1.0 for AP/R/RR, or the environment's best reachable reward for the claim) and, with dense
  rewards, is lowered by the gain each edit achieved (a delayed reward pays nothing before the
  end, so it stays put). Defaults: 6 layers, 8 heads, 768 dimensions, as in the paper.
* :class:`OneActionClassifier` — the paper's one-action baseline: a 128-way classifier of the
  first edit of the best trajectory from the claim embedding (invalid actions masked).
* :class:`RandomEditPolicy` — a uniformly random valid edit per step (seeded per claim text).
* :class:`OriginalPolicy` — no edit: the claim as it is.

**Stopping.** Rewriting stops after ``max_steps`` edits (default 4, the BFS depth), when no
action is valid, when the policy declines (the classifier after its one edit, the original
policy at once) and — only when a :class:`~factscout.rewrite.environment.SearchEnvironment` is
given — when no valid edit of the current query improves its reward (one batched, cached
scoring of the candidates per step). The policy's own choice is the edit taken.

Policies are saved to a folder: ``policy.json`` (kind, configuration, training notes) and,
for the learned ones, ``weights.safetensors`` (the torch state dict in float16).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import random
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from factscout.errors import DataNotFound, FactscoutError, InputError, MissingDependency, UnknownName
from factscout.nn import require_torch
from factscout.records import Claim, Query
from factscout.registry import Registry
from factscout.rewrite.actions import N_ACTIONS, action_mask, apply_action, valid_edits
from factscout.rewrite.environment import SearchEnvironment

log = logging.getLogger(__name__)

RewardMode = Literal["dense", "sparse"]
REWARD_MODES: tuple[str, ...] = ("dense", "sparse")
DEFAULT_MAX_STEPS = 4
POLICY_FORMAT = "factscout-rewrite-policy"
POLICY_VERSION = 1
CONFIG_FILE = "policy.json"
WEIGHTS_FILE = "weights.safetensors"
SHIPPED_DIR = Path(__file__).parent / "models"  # trained policies that ship, one folder per <dataset>-<retriever>
_EPS = 1e-12
_TORCH_HINT = "learned rewrite policies need torch and transformers: pip install 'factscout[dense]'"


# ---------------------------------------------------------------- records


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


@dataclass(frozen=True, slots=True)
class Episode:
    """What a policy sees before choosing: the queries so far (the claim first, the current
    query last), the actions taken, one return-to-go per query and the current action mask."""

    queries: tuple[str, ...]
    actions: tuple[int, ...]
    returns_to_go: tuple[float, ...]
    mask: tuple[bool, ...]

    @property
    def step(self) -> int:
        return len(self.actions)


class RewritePolicy(Protocol):
    """Chooses the next edit of a query; None ends the rewrite."""

    @property
    def name(self) -> str: ...

    @property
    def reward(self) -> RewardMode: ...

    @property
    def target_return(self) -> float: ...

    def choose(self, episode: Episode) -> int | None: ...


# ---------------------------------------------------------------- state encoders


class StateEncoder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLmStateEncoder:
    """The offline MiniLM sentence encoder (:class:`factscout.retrieve.encoder.Encoder`)."""

    name = "minilm"
    dimension = 384

    def __init__(self) -> None:
        from factscout.retrieve.encoder import Encoder

        self.encoder = Encoder("minilm", max_seq_length=128)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(texts))


class HashingStateEncoder:
    """A model-free state: L2-normalised counts of lower-cased words hashed (blake2b, stable
    across processes) into 384 buckets. For smoke runs and tests on machines without the
    encoder; it sees word identity only, no meaning."""

    name = "hashing"
    dimension = 384

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest()
                out[i, int.from_bytes(digest, "little") % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


STATE_ENCODERS: Registry[type[MiniLmStateEncoder] | type[HashingStateEncoder]] = Registry("state encoder")
STATE_ENCODERS.register("minilm")(MiniLmStateEncoder)
STATE_ENCODERS.register("hashing")(HashingStateEncoder)
_ENCODERS: dict[str, StateEncoder] = {}
_LOCK = threading.Lock()


def state_encoder(name: str) -> StateEncoder:
    """The state encoder registered as ``name``, built once per process."""
    cls = STATE_ENCODERS[name]
    with _LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = cls()
        return _ENCODERS[name]


# ---------------------------------------------------------------- configurations


def _check_positive(owner: str, **values: int) -> None:
    for name, value in values.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise InputError(f"{owner}: {name} must be a positive integer, got {value!r}")


@dataclass(frozen=True, slots=True)
class DtConfig:
    """Decision transformer settings; the defaults are the paper's (6 layers, 8 heads, 768 dims)."""

    hidden_size: int = 768
    n_layer: int = 6
    n_head: int = 8
    dropout: float = 0.1
    max_steps: int = DEFAULT_MAX_STEPS
    reward: RewardMode = "dense"
    target_return: float = 1.0
    encoder: str = "minilm"
    finetune_encoder: bool = False

    def __post_init__(self) -> None:
        _check_positive("DtConfig", hidden_size=self.hidden_size, n_layer=self.n_layer, n_head=self.n_head)
        _check_positive("DtConfig", max_steps=self.max_steps)
        if self.hidden_size % self.n_head:
            raise InputError(f"hidden_size {self.hidden_size} is not divisible by n_head {self.n_head}")
        if self.reward not in REWARD_MODES:
            raise UnknownName("reward mode", str(self.reward), REWARD_MODES)
        if not 0.0 <= self.dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {self.dropout!r}")
        STATE_ENCODERS[self.encoder]
        if self.finetune_encoder and self.encoder != "minilm":
            raise InputError(f"only the minilm encoder can be fine-tuned, not {self.encoder!r}")


@dataclass(frozen=True, slots=True)
class ClassifierConfig:
    """One-action classifier settings: a hidden layer of ``hidden`` units (0: linear)."""

    hidden: int = 256
    dropout: float = 0.1
    encoder: str = "minilm"
    finetune_encoder: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.hidden, int) or self.hidden < 0:
            raise InputError(f"hidden must be a non-negative integer, got {self.hidden!r}")
        if not 0.0 <= self.dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {self.dropout!r}")
        STATE_ENCODERS[self.encoder]
        if self.finetune_encoder and self.encoder != "minilm":
            raise InputError(f"only the minilm encoder can be fine-tuned, not {self.encoder!r}")


# ---------------------------------------------------------------- networks


def _trainable_encoder() -> Any:
    """The MiniLM sentence-transformers module itself, for fine-tuning."""
    torch = require_torch("learned rewrite policies")
    from factscout.retrieve.encoder import Encoder

    class TrainableEncoder(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.st = Encoder("minilm", max_seq_length=128).model

        def forward(self, texts: list[str]) -> Any:
            prepare = getattr(self.st, "preprocess", None) or self.st.tokenize  # tokenize: sentence-transformers < 5.2
            features = prepare(texts)
            emb = self.st(features)["sentence_embedding"]
            return torch.nn.functional.normalize(emb, dim=-1)

    return TrainableEncoder()


def _build_net(config: DtConfig | ClassifierConfig) -> Any:
    """The torch module of a learned policy: ``head`` (the DT or the classifier) and, when the
    encoder is fine-tuned, ``encoder``."""
    torch = require_torch("learned rewrite policies")
    nn = torch.nn
    dim = STATE_ENCODERS[config.encoder].dimension

    class PolicyNet(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            if isinstance(config, DtConfig):
                from transformers import DecisionTransformerConfig, DecisionTransformerModel

                self.head = DecisionTransformerModel(
                    DecisionTransformerConfig(
                        state_dim=dim,
                        act_dim=N_ACTIONS,
                        hidden_size=config.hidden_size,
                        n_layer=config.n_layer,
                        n_head=config.n_head,
                        n_inner=4 * config.hidden_size,
                        max_ep_len=config.max_steps,
                        n_positions=3 * config.max_steps,
                        action_tanh=False,
                        resid_pdrop=config.dropout,
                        embd_pdrop=config.dropout,
                        attn_pdrop=config.dropout,
                        activation_function="gelu_new",
                        bos_token_id=None,
                        eos_token_id=None,
                    )
                )
            else:
                layers: list[Any] = []
                width = dim
                if config.hidden:
                    layers += [nn.Linear(dim, config.hidden), nn.ReLU(), nn.Dropout(config.dropout)]
                    width = config.hidden
                self.head = nn.Sequential(*layers, nn.Linear(width, N_ACTIONS))
            self.encoder = _trainable_encoder() if config.finetune_encoder else None

    return PolicyNet()


def masked_logits(logits: Any, mask: Any) -> Any:
    """Logits with invalid actions (``mask`` False) set to ``-inf``."""
    return logits.masked_fill(~mask, float("-inf"))


def one_hot_actions(actions: Any, valid: Any) -> Any:
    """(B, T) action ids -> (B, T, 128) one-hot, all zeros where ``valid`` is False."""
    torch = require_torch("learned rewrite policies")
    out = torch.nn.functional.one_hot(actions.clamp(min=0), N_ACTIONS).float()
    return out * valid.unsqueeze(-1).float()


def dt_logits(net: Any, states: Any, actions: Any, action_known: Any, rtg: Any, attention: Any, masks: Any) -> Any:
    """Masked action logits (B, T, 128) of the decision transformer: the action at step t is
    predicted from the state token of step t (actions fed one-hot; ``action_known`` False for
    padding and for the step being predicted)."""
    torch = require_torch("learned rewrite policies")
    batch, steps = states.shape[:2]
    timesteps = torch.arange(steps, dtype=torch.long).unsqueeze(0).expand(batch, steps)
    out = net.head(
        states=states,
        actions=one_hot_actions(actions, action_known),
        returns_to_go=rtg.unsqueeze(-1),
        timesteps=timesteps,
        attention_mask=attention.long(),
        return_dict=True,
    )
    return masked_logits(out.action_preds, masks)


# ---------------------------------------------------------------- policies


class _LearnedPolicy:
    """Shared parts of the two learned policies: the net, state embedding, masking."""

    kind = ""
    name: str
    reward: RewardMode = "dense"
    target_return: float = 1.0

    def __init__(self, config: DtConfig | ClassifierConfig, net: Any = None, training: dict | None = None) -> None:
        self.config = config
        self.net = net if net is not None else _build_net(config)
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


class DecisionTransformerPolicy(_LearnedPolicy):
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


class OneActionClassifier(_LearnedPolicy):
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


# ---------------------------------------------------------------- the rewriting loop


def rewrite(
    claim: Claim | str,
    policy: RewritePolicy,
    env: SearchEnvironment | None = None,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
) -> RewriteTrace:
    """Rewrite ``claim`` with ``policy`` (see the module doc for when it stops).

    ``env`` scores every query (its measure, the claim's qrels by ``claim_id``) and enables the
    no-improvement stop; without it the trace carries no rewards. A string claim gets the id
    ``claim``."""
    if isinstance(claim, str):
        if not claim.strip():
            raise InputError("cannot rewrite an empty claim")
        claim = Claim("claim", claim.strip())
    _check_positive("rewrite", max_steps=max_steps)
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
    max_steps: int = DEFAULT_MAX_STEPS,
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


# ---------------------------------------------------------------- save / load


POLICIES: dict[str, type[DecisionTransformerPolicy] | type[OneActionClassifier]] = {
    "dt": DecisionTransformerPolicy,
    "classifier": OneActionClassifier,
}
_CONFIGS: dict[str, type[DtConfig] | type[ClassifierConfig]] = {"dt": DtConfig, "classifier": ClassifierConfig}
BASELINES: dict[str, type[RandomEditPolicy] | type[OriginalPolicy]] = {
    "random": RandomEditPolicy,
    "original": OriginalPolicy,
}


def save_policy(policy: RewritePolicy, directory: str | os.PathLike[str]) -> Path:
    """Write ``policy`` to ``directory``: ``policy.json`` and, for a learned policy,
    ``weights.safetensors`` (float16). Returns the folder."""
    root = Path(directory)
    root.mkdir(parents=True, exist_ok=True)
    meta: dict[str, Any] = {"format": POLICY_FORMAT, "version": POLICY_VERSION}
    if isinstance(policy, _LearnedPolicy):
        from safetensors.torch import save_file

        state = {
            k: v.detach().to(require_torch("learned rewrite policies").float16).contiguous()
            for k, v in policy.net.state_dict().items()
        }
        save_file(state, str(root / WEIGHTS_FILE))
        meta |= {"policy": policy.kind, "config": asdict(policy.config), "weights": WEIGHTS_FILE}
        meta["training"] = policy.training
    elif isinstance(policy, RandomEditPolicy):
        meta |= {"policy": "random", "config": {"seed": policy.seed}}
    elif isinstance(policy, OriginalPolicy):
        meta |= {"policy": "original", "config": {}}
    else:
        raise InputError(f"cannot save a policy of type {type(policy).__name__}")
    (root / CONFIG_FILE).write_text(json.dumps(meta, indent=1) + "\n")
    return root


def load_policy(path: str | os.PathLike[str]) -> RewritePolicy:
    """Load a policy saved by :func:`save_policy` (the folder or its ``policy.json``).

    :class:`DataNotFound` when a file is missing, :class:`InputError` when one is corrupt."""
    root = Path(path)
    config_path = root if root.suffix == ".json" else root / CONFIG_FILE
    if not config_path.is_file():
        raise DataNotFound(f"no rewrite policy at {root}: {config_path} is missing")
    try:
        meta = json.loads(config_path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"rewrite policy config {config_path} is unreadable: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != POLICY_FORMAT:
        raise InputError(f"{config_path} is not a factscout rewrite policy (format {POLICY_FORMAT!r} expected)")
    if meta.get("version") != POLICY_VERSION:
        raise InputError(f"rewrite policy {config_path} has version {meta.get('version')}, expected {POLICY_VERSION}")
    kind = str(meta.get("policy"))
    settings = meta.get("config") or {}
    if kind in BASELINES:
        return RandomEditPolicy(**settings) if kind == "random" else OriginalPolicy()
    if kind not in POLICIES:
        raise UnknownName("rewrite policy", kind, [*POLICIES, *BASELINES])
    try:
        config = _CONFIGS[kind](**settings)
    except TypeError as exc:
        raise InputError(f"bad configuration in {config_path}: {exc}") from None
    weights = config_path.parent / str(meta.get("weights") or WEIGHTS_FILE)
    if not weights.is_file():
        raise DataNotFound(f"rewrite policy weights {weights} are missing")
    net = _build_net(config)
    try:
        from safetensors import SafetensorError
        from safetensors.torch import load_file
    except ImportError:
        raise MissingDependency(_TORCH_HINT) from None
    try:
        state = load_file(str(weights))
        net.load_state_dict({k: v.float() for k, v in state.items()})
    except (OSError, RuntimeError, ValueError, KeyError, SafetensorError) as exc:
        raise InputError(f"rewrite policy weights {weights} are corrupt or do not fit the config: {exc}") from None
    policy = POLICIES[kind](config, net, meta.get("training"))  # type: ignore[arg-type]
    return policy


def shipped_policies() -> tuple[str, ...]:
    """Names of the trained policies that ship with factscout (``<dataset>-<retriever>``)."""
    if not SHIPPED_DIR.is_dir():
        return ()
    return tuple(sorted(d.name for d in SHIPPED_DIR.iterdir() if (d / CONFIG_FILE).is_file()))


def make_policy(spec: str | os.PathLike[str], *, seed: int = 0) -> RewritePolicy:
    """A policy from a saved folder, a shipped policy by name (:func:`shipped_policies`), or a
    baseline by name (``original``, ``random``). A folder of that name in the working directory
    wins over a shipped name."""
    if isinstance(spec, str) and not Path(spec).exists():
        if spec in BASELINES:
            return RandomEditPolicy(seed) if spec == "random" else OriginalPolicy()
        if spec in shipped_policies():
            return load_policy(SHIPPED_DIR / spec)
        if os.sep not in spec and "." not in spec:
            raise UnknownName("rewrite policy", spec, [*shipped_policies(), *BASELINES])
    return load_policy(spec)


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


__all__ = [
    "BASELINES",
    "POLICIES",
    "REWARD_MODES",
    "STATE_ENCODERS",
    "ClassifierConfig",
    "DecisionTransformerPolicy",
    "DtConfig",
    "Episode",
    "HashingStateEncoder",
    "MiniLmStateEncoder",
    "OneActionClassifier",
    "OriginalPolicy",
    "RandomEditPolicy",
    "RewritePolicy",
    "RewriteStep",
    "RewriteTrace",
    "load_policy",
    "make_policy",
    "returns_to_go",
    "rewrite",
    "rewrite_all",
    "save_policy",
    "shipped_policies",
    "state_encoder",
]
