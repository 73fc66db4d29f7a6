"""A rewrite policy whose actions point at tokens, with a learned stop.

The paper's policies (:mod:`.policies`) see one pooled sentence embedding of the query and must
output "remove at position 7": nothing in a pooled vector says which word sits at position 7.
Here the state keeps one vector per token of the query, and an action's score is the product of
the vector of the token it acts on with an embedding of its edit kind:

    score(edit k, position p) = h_p . e_k + b_k        (k = the paper's four edits, p < 32)

so action id ``k * 32 + p`` keeps the linear order of the paper's Table 1 exactly, and the head
generalises across positions: "remove" scores any token the way it scored similar tokens
elsewhere. ``h_p`` comes from MiniLM's contextual token vectors (the word pieces of spaCy token p
averaged, so positions are the action space's), concatenated with cheap tags of the token (its
part of speech, stop word, digits, capitalisation, relative position, which edits it allows),
and, with ``idf``, the word's idf in the searched corpus: the statistic the top-k-IDF keyword
baseline ranks by, which the policy then weighs with everything else; it is saved with the policy),
projected and passed through a small transformer encoder over the query's tokens. A 129th output
is **stop**, scored from the pooled token states and the number of edits made so far: the policy
ends its own rewrite (never by reading qrels), so it can make no edit where the claim is already
the best query and many where an endpoint needs them (``max_steps`` follows the endpoint). An edit
is taken only when its logit beats stop's by more than ``stop_margin`` (0: plain argmax), a
knob chosen on validation claims that makes the policy as cautious as the endpoint requires.

With ``history`` > 0 the pointer becomes the **decision transformer's action head** (the paper's
offline-RL policy with actions that point at tokens): Hugging Face's ``DecisionTransformerModel``
reads the last ``history`` (return-to-go, state, action) triples, the state being the pooled token
states of that step's query, and its output at the current state shifts each edit kind's query
vector (``e_k + W_k o_t``), which then attends over the current query's token states as above;
stop adds a term from ``o_t``. Returns-to-go are the trajectories' (``reward``: ``sparse``, the
whole gain at every step, or ``dense``, the gain still to come); at inference, without qrels, the
policy is conditioned on ``target_return``.

Training (behaviour cloning on BFS and keep-set trajectories, with stop examples) is in
:mod:`factscout.training.rewrite.pointer`. The MiniLM encoder is frozen by default (token vectors
cached per query); ``finetune_encoder`` trains it with the head.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from factscout.errors import InputError, UnknownName
from factscout.nn import require_torch
from factscout.rewrite.actions import EDIT_KINDS, MAX_POSITIONS, N_ACTIONS, ParsedQuery, parse
from factscout.rewrite.base import REWARD_MODES, REWRITE_POLICIES, Episode, RewardMode, check_positive
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.networks import decision_transformer

STOP = N_ACTIONS  # the 129th output: end the rewrite
CACHE_SIZE = 20_000  # token-vector matrices kept per policy (24 KB each, oldest dropped first)
TOKEN_ENCODERS = ("minilm", "hashing")
_UPOS = (
    "ADJ", "ADP", "ADV", "AUX", "CCONJ", "DET", "INTJ", "NOUN", "NUM", "PART",
    "PRON", "PROPN", "PUNCT", "SCONJ", "SYM", "VERB", "X",
)  # fmt: skip
N_FEATURES = len(_UPOS) + 5 + len(EDIT_KINDS) + 2  # the last two: idf of the word, and whether it is known


@dataclass(frozen=True, slots=True)
class PointerConfig:
    """Token-pointing policy settings: the head's width, depth and heads, the step limit."""

    hidden: int = 128
    layers: int = 1
    heads: int = 4
    dropout: float = 0.1
    max_steps: int = 4
    encoder: str = "minilm"
    finetune_encoder: bool = False
    idf: bool = False  # token features include the idf of the searched corpus (saved with the policy)
    stop_margin: float = 0.0  # edit only when the best edit's logit beats stop's by more than this
    history: int = 0  # > 0: a decision transformer over this many last steps drives the head
    dt_layers: int = 2
    reward: RewardMode = "sparse"  # the decision transformer's returns-to-go
    target_return: float = 0.5  # the return it is conditioned on at inference

    def __post_init__(self) -> None:
        check_positive("PointerConfig", hidden=self.hidden, layers=self.layers, heads=self.heads)
        check_positive("PointerConfig", max_steps=self.max_steps, dt_layers=self.dt_layers)
        if not isinstance(self.history, int) or isinstance(self.history, bool) or not 0 <= self.history <= 16:
            raise InputError(f"PointerConfig: history must be an integer from 0 to 16, got {self.history!r}")
        if self.reward not in REWARD_MODES:
            raise UnknownName("reward mode", str(self.reward), REWARD_MODES)
        if self.hidden % self.heads:
            raise InputError(f"hidden {self.hidden} is not divisible by heads {self.heads}")
        if not 0.0 <= self.dropout < 1.0:
            raise InputError(f"dropout must be in [0, 1), got {self.dropout!r}")
        if not self.stop_margin >= 0.0:
            raise InputError(f"stop_margin must be >= 0, got {self.stop_margin!r}")
        if self.encoder not in TOKEN_ENCODERS:
            raise UnknownName("token encoder", self.encoder, TOKEN_ENCODERS)
        if self.finetune_encoder and self.encoder != "minilm":
            raise InputError(f"only the minilm encoder can be fine-tuned, not {self.encoder!r}")


def token_spans(parsed: ParsedQuery) -> list[tuple[int, int]]:
    """Character spans of the parsed tokens in ``parsed.text`` (the first 32)."""
    spans, cursor = [], 0
    for tok in parsed.tokens[:MAX_POSITIONS]:
        start = parsed.text.find(tok.text, cursor)
        if start < 0:  # cannot happen for spaCy tokens; keep the spans monotone anyway
            start = cursor
        spans.append((start, start + len(tok.text)))
        cursor = start + len(tok.text)
    return spans


def token_features(parsed: ParsedQuery, idf: IdfTable | None = None) -> np.ndarray:
    """(tokens, N_FEATURES) tags of the first 32 tokens: one-hot part of speech, stop word, no
    letter or digit, has a digit, capitalised, relative position, the edits allowed and, with an
    ``idf`` table of the searched corpus, the word's idf (scaled by the largest possible) and
    whether the corpus has it (both 0 without a table)."""
    tokens = parsed.tokens[:MAX_POSITIONS]
    out = np.zeros((len(tokens), N_FEATURES), dtype=np.float32)
    base = len(_UPOS)
    for i, tok in enumerate(tokens):
        if tok.pos in _UPOS:
            out[i, _UPOS.index(tok.pos)] = 1.0
        out[i, base] = float(tok.is_stop)
        out[i, base + 1] = float(not any(ch.isalnum() for ch in tok.text))
        out[i, base + 2] = float(any(ch.isdigit() for ch in tok.text))
        out[i, base + 3] = float(tok.text[:1].isupper())
        out[i, base + 4] = i / max(len(tokens) - 1, 1)
        for k, kind in enumerate(EDIT_KINDS):
            out[i, base + 5 + k] = float(kind in tok.allowed)
        if idf is not None:
            value = idf.word_idf(tok.text)
            out[i, -2] = value / math.log(1 + (idf.n_docs + 0.5) / 1.5)
            out[i, -1] = float(value > 0)
    return out


def _hashed(word: str, dim: int) -> int:
    return int.from_bytes(hashlib.blake2b(word.lower().encode("utf-8"), digest_size=4).digest(), "little") % dim


def build_pointer_net(config: PointerConfig) -> Any:
    """The torch module: ``encoder`` (token vectors), ``proj``/``context`` (the token states),
    ``edits``/``edit_bias`` (the pointer head) and ``stop``."""
    torch = require_torch("learned rewrite policies")
    nn = torch.nn

    class TokenEncoder(nn.Module):  # type: ignore[misc,name-defined]
        """Per-token vectors of queries: MiniLM word pieces averaged per spaCy token, or (for
        tests and smoke runs) hashed one-hot words."""

        def __init__(self) -> None:
            super().__init__()
            self.kind = config.encoder
            if self.kind == "minilm":
                from factscout.text.encoder import Encoder

                st = Encoder("minilm", max_seq_length=128).model
                self.tokenizer = st.tokenizer
                self.model = st[0].auto_model
                self.dimension = int(self.model.config.hidden_size)
            else:
                self.dimension = 384

        def forward(self, parsed: Sequence[ParsedQuery]) -> Any:
            out = torch.zeros(len(parsed), MAX_POSITIONS, self.dimension)
            if self.kind != "minilm":
                for b, p in enumerate(parsed):
                    for i, tok in enumerate(p.tokens[:MAX_POSITIONS]):
                        out[b, i, _hashed(re.sub(r"\W", "", tok.text) or tok.text, self.dimension)] = 1.0
                return out
            batch = self.tokenizer(
                [p.text for p in parsed],
                padding=True,
                truncation=True,
                max_length=128,
                return_offsets_mapping=True,
                return_tensors="pt",
            )
            offsets = batch.pop("offset_mapping")
            hidden = self.model(**batch).last_hidden_state  # (B, L, dim)
            rows = []
            for b, p in enumerate(parsed):
                starts, ends = offsets[b, :, 0], offsets[b, :, 1]
                pieces = (ends > starts) & batch["attention_mask"][b].bool()
                weights = torch.zeros(MAX_POSITIONS, hidden.shape[1])
                for i, (a, z) in enumerate(token_spans(p)):
                    hit = pieces & (starts < z) & (ends > a)
                    if hit.any():
                        weights[i, hit] = 1.0 / float(hit.sum())
                rows.append(weights @ hidden[b])
            return torch.stack(rows)

    class PointerNet(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.encoder = TokenEncoder()
            h = config.hidden
            self.proj = nn.Linear(self.encoder.dimension + N_FEATURES, h)
            self.position = nn.Embedding(MAX_POSITIONS, h)
            layer = nn.TransformerEncoderLayer(h, config.heads, 2 * h, config.dropout, batch_first=True)
            self.context = nn.TransformerEncoder(layer, config.layers, enable_nested_tensor=False)
            self.edits = nn.Parameter(torch.randn(len(EDIT_KINDS), h) * h**-0.5)
            self.edit_bias = nn.Parameter(torch.zeros(len(EDIT_KINDS)))
            self.stop = nn.Sequential(nn.Linear(h + 1, h), nn.ReLU(), nn.Linear(h, 1))
            if config.history:
                self.dt = decision_transformer(
                    config.hidden, config.hidden, config.dt_layers, config.heads, config.dropout,
                    episode_steps=MAX_POSITIONS + 1, context=config.history,
                )  # fmt: skip
                self.query = nn.Linear(h, len(EDIT_KINDS) * h)
                self.dt_stop = nn.Linear(h, 1)

        def token_states(self, vectors: Any, features: Any, valid: Any) -> tuple[Any, Any]:
            """Token states (B, 32, h), zero at invalid tokens, and their mean (B, h)."""
            x = self.proj(torch.cat([vectors, features], dim=-1)) + self.position.weight
            safe = valid.clone()
            safe[:, 0] |= ~valid.any(dim=1)  # a padding step: no row may be all masked
            h = self.context(x, src_key_padding_mask=~safe) * valid.unsqueeze(-1)
            return h, h.sum(1) / valid.sum(1, keepdim=True).clamp(min=1)

        def head(self, h: Any, pooled: Any, steps: Any, shift: Any = None) -> Any:
            """Logits (B, 129): edit kind k at token p scores h_p . (e_k + shift_k) + b_k."""
            edits = self.edits if shift is None else self.edits + shift
            scores = torch.einsum("btd,bkd->bkt", h, edits.expand(len(h), -1, -1)) + self.edit_bias[None, :, None]
            stop = self.stop(torch.cat([pooled, steps.unsqueeze(-1).float() / MAX_POSITIONS], dim=-1))
            return torch.cat([scores.reshape(len(h), N_ACTIONS), stop], dim=-1)

        def forward(self, vectors: Any, features: Any, valid: Any, steps: Any) -> Any:
            """Logits (B, 129) from token vectors (B, 32, dim), tags (B, 32, F), the valid-token
            mask (B, 32) and the edits made so far (B,)."""
            return self.head(*self.token_states(vectors, features, valid), steps)

        def forward_history(
            self, vectors: Any, features: Any, valid: Any, actions: Any, rtg: Any, attention: Any, steps: Any
        ) -> Any:
            """Logits (B, 129) at the last of K steps (left-padded; ``attention`` (B, K) False
            at padding): token inputs (B, K, 32, ...), the action taken at each step (B, K; the
            last is unknown), returns-to-go (B, K) and the edits made before each step (B, K)."""
            b, k = attention.shape
            h, pooled = self.token_states(vectors.flatten(0, 1), features.flatten(0, 1), valid.flatten(0, 1))
            known = attention.clone()
            known[:, -1] = False
            one_hot = torch.nn.functional.one_hot(actions.clamp(min=0, max=N_ACTIONS - 1), N_ACTIONS).float()
            out = self.dt(
                states=pooled.view(b, k, -1),
                actions=one_hot * known.unsqueeze(-1).float(),
                returns_to_go=rtg.unsqueeze(-1),
                timesteps=steps.clamp(max=MAX_POSITIONS),
                attention_mask=attention.long(),
                return_dict=True,
            )
            o = out.last_hidden_state.reshape(b, k, 3, -1)[:, -1, 1]  # the current state's output
            logits = self.head(h.view(b, k, MAX_POSITIONS, -1)[:, -1], pooled.view(b, k, -1)[:, -1], steps[:, -1],
                               self.query(o).view(b, len(EDIT_KINDS), -1))  # fmt: skip
            return torch.cat([logits[:, :N_ACTIONS], logits[:, N_ACTIONS:] + self.dt_stop(o)], dim=-1)

    net = PointerNet()
    if not config.finetune_encoder:
        net.encoder.requires_grad_(False)
    return net


@dataclass(slots=True)
class PointerPolicy:
    """The token-pointing policy (``pointer``): at each step the best valid edit, or stop."""

    config: PointerConfig = field(default_factory=PointerConfig)
    net: Any = None
    training: dict[str, Any] = field(default_factory=dict)
    idf: IdfTable | None = None
    kind: str = field(default="pointer", init=False)
    name: str = field(default="pointer", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)
    _cache: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.config.idf and self.idf is None:
            raise InputError("this pointer policy uses idf features: give it the searched corpus's IdfTable")
        if self.net is None:
            self.net = build_pointer_net(self.config)
        self.net.eval()
        self.configure()

    def configure(self, **changes: Any) -> None:
        """Replace fields of ``config`` (e.g. ``stop_margin``, ``target_return``), keeping the
        name, reward mode and return the rewriter reads in step with it."""
        self.config = replace(self.config, **changes)
        if self.config.history:
            self.name, self.reward, self.target_return = "pointer-dt", self.config.reward, self.config.target_return

    @property
    def step_limit(self) -> int:
        """The edits a rewrite makes at most by default (``config.max_steps``)."""
        return self.config.max_steps

    def vectors(self, parsed: Sequence[ParsedQuery], *, grad: bool = False) -> Any:
        """Token vectors (B, 32, dim); cached per query text unless gradients are wanted."""
        torch = require_torch("learned rewrite policies")
        if grad:
            return self.net.encoder(parsed)
        todo = [p for p in {p.text: p for p in parsed}.values() if p.text not in self._cache]
        for begin in range(0, len(todo), 64):
            chunk = todo[begin : begin + 64]
            with torch.no_grad():
                out = self.net.encoder(chunk).numpy()
            for p, row in zip(chunk, out, strict=True):
                self._cache[p.text] = row.astype(np.float16)
        out = torch.from_numpy(np.stack([self._cache[p.text] for p in parsed]).astype(np.float32))
        while len(self._cache) > CACHE_SIZE:  # a long-running service sees ever new queries
            del self._cache[next(iter(self._cache))]
        return out

    def inputs(self, parsed: Sequence[ParsedQuery], *, grad: bool = False) -> tuple[Any, Any, Any]:
        """(vectors, features, valid) of a batch of parsed queries."""
        torch = require_torch("learned rewrite policies")
        features = torch.zeros(len(parsed), MAX_POSITIONS, N_FEATURES)
        valid = torch.zeros(len(parsed), MAX_POSITIONS, dtype=torch.bool)
        for b, p in enumerate(parsed):
            f = token_features(p, self.idf if self.config.idf else None)
            features[b, : len(f)] = torch.from_numpy(f)
            valid[b, : len(f)] = True
        return self.vectors(parsed, grad=grad), features, valid

    def logits(self, queries: Sequence[str], steps: Sequence[int]) -> Any:
        """Unmasked logits (B, 129) of queries after ``steps`` edits."""
        torch = require_torch("learned rewrite policies")
        parsed = [parse(q) for q in queries]
        with torch.no_grad():
            return self.net(*self.inputs(parsed), torch.tensor(list(steps)))

    def history_inputs(self, windows: Sequence[Episode], *, grad: bool = False) -> tuple[Any, ...]:
        """The decision transformer's inputs for the last ``config.history`` steps of each
        episode, left-padded: (vectors, features, valid) (B, K, 32, ...), then the actions taken
        at each step, the returns-to-go, the attention mask and the edits made before each step
        (B, K). An episode's last query is its current state (its action is unknown)."""
        torch = require_torch("learned rewrite policies")
        k = self.config.history
        texts: list[str] = []
        slots: list[tuple[int, int, int]] = []  # (row, column, index into texts)
        actions = torch.zeros(len(windows), k, dtype=torch.long)
        rtg = torch.zeros(len(windows), k)
        attention = torch.zeros(len(windows), k, dtype=torch.bool)
        steps = torch.zeros(len(windows), k, dtype=torch.long)
        for b, e in enumerate(windows):
            n = len(e.queries)
            for j, t in enumerate(range(max(0, n - k), n)):
                col = k - min(n, k) + j
                slots.append((b, col, len(texts)))
                texts.append(e.queries[t])
                actions[b, col] = e.actions[t] if t < len(e.actions) else 0
                rtg[b, col] = e.returns_to_go[t]
                attention[b, col] = True
                steps[b, col] = t
        vectors, features, valid = self.inputs([parse(q) for q in texts], grad=grad)
        rows, cols, idx = (torch.tensor(x, dtype=torch.long) for x in zip(*slots, strict=True))
        out = [torch.zeros(len(windows), k, *x.shape[1:], dtype=x.dtype) for x in (vectors, features, valid)]
        for full, part in zip(out, (vectors, features, valid), strict=True):
            full[rows, cols] = part[idx]
        return (*out, actions, rtg, attention, steps)

    def choose(self, episode: Episode) -> int | None:
        if episode.step >= self.config.max_steps or not any(episode.mask):
            return None
        torch = require_torch("learned rewrite policies")
        if self.config.history:
            with torch.no_grad():
                logits = self.net.forward_history(*self.history_inputs([episode]))[0]
        else:
            logits = self.logits([episode.queries[-1]], [episode.step])[0]
        edits = logits[:STOP].masked_fill(~torch.tensor(episode.mask), float("-inf"))
        choice = int(torch.argmax(edits).item())
        return choice if float(edits[choice] - logits[STOP]) > self.config.stop_margin else None


REWRITE_POLICIES.register("pointer")(PointerPolicy)
