"""Stance of an evidence sentence towards a claim: supports, refutes or not enough info.

The model is the SBERT classification objective (Reimers & Gurevych 2019, "Sentence-BERT",
EMNLP, section 3): a frozen sentence encoder embeds the claim ``u`` and the evidence sentence
``v`` separately, and a small head classifies the feature vector ``[u, v, |u-v|, u*v, cos(u,v)]``
into three classes. This is the stance step of Quin+ (Samarinas, Hsu & Lee 2021, "Improving
Evidence Retrieval for Automated Explainable Fact-Checking", NAACL demos), which runs an NLI
model over each selected sentence and then counts stances (see :mod:`factscout.verify.verdict`).

No NLI model loads offline here, so factscout trains its own head on CPU over the
all-MiniLM-L6-v2 embeddings (``factscout train stance --out DIR``) and ships
only the head (``models/stance_minilm.npz``, fp16; ``models/MODEL_CARD.md`` has the data,
licences and held-out figures). Inference is plain numpy; only the encoder needs torch.

Its records, :class:`~factscout.records.Sentence` (a selected evidence sentence) and
:class:`~factscout.records.Stance` (its predicted stance), live in :mod:`factscout.records` and
are re-exported here.
"""

from __future__ import annotations

import zipfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.formats.npz import save_npz
from factscout.nn.activations import softmax
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, Sentence, Stance
from factscout.text.encoder import embed_fn
from factscout.verify.base import STANCE_MODELS, stance_inputs

if TYPE_CHECKING:
    from factscout.records import Claim

MODEL_DIR = Path(__file__).parent / "models"
MODEL_FILE = MODEL_DIR / "stance_minilm.npz"
FEATURES = "u,v,|u-v|,u*v,cos"


# --- features and head ---------------------------------------------------------------------


def nli_features(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """SBERT-NLI pair features ``[u, v, |u-v|, u*v, cos(u, v)]`` for paired rows of ``u`` and ``v``.

    Reimers & Gurevych (2019) classify ``(u, v, |u-v|)``; the element-wise product and the
    cosine are the usual InferSent-style additions. Rows must be L2-normalised embeddings, so
    the cosine is the row-wise dot product. Returns float32 ``(n, 4d + 1)``.
    """
    u = np.asarray(u, dtype=np.float32)
    v = np.asarray(v, dtype=np.float32)
    if u.ndim != 2 or u.shape != v.shape:
        raise InputError(f"claim and sentence embeddings must be paired 2-d arrays, got {u.shape} and {v.shape}")
    cos = np.sum(u * v, axis=1, keepdims=True)
    return np.concatenate([u, v, np.abs(u - v), u * v, cos], axis=1)


def _default_encoder() -> Any:
    from factscout.text.encoder import Encoder

    return Encoder()


class StanceHead:
    """Three-way stance classifier: an MLP head over frozen sentence embeddings (SBERT-NLI features).

    ``layers`` are ``(weight (in, out), bias (out,))`` pairs; hidden layers use ReLU and the last
    one gives the logits of :data:`STANCE_LABELS`. ``encoder`` is anything with
    ``encode(texts) -> L2-normalised (n, d) array`` (default: factscout's offline MiniLM, loaded
    on first use) or such a function.
    """

    def __init__(
        self,
        layers: Sequence[tuple[np.ndarray, np.ndarray]],
        *,
        encoder: Any = None,
        encoder_name: str = "minilm",
        info: dict[str, str] | None = None,
    ) -> None:
        if not layers:
            raise BadModel("a stance head needs at least one layer")
        self.layers = [(np.asarray(w, dtype=np.float32), np.asarray(b, dtype=np.float32)) for w, b in layers]
        for i, (w, b) in enumerate(self.layers):
            if w.ndim != 2 or b.shape != (w.shape[1],):
                raise BadModel(f"layer {i}: weight {w.shape} and bias {b.shape} do not fit")
            if i and w.shape[0] != self.layers[i - 1][0].shape[1]:
                raise BadModel(
                    f"layer {i} takes {w.shape[0]} inputs, layer {i - 1} gives {self.layers[i - 1][0].shape[1]}"
                )
        if self.layers[-1][0].shape[1] != len(STANCE_LABELS):
            raise BadModel(f"the last layer must give {len(STANCE_LABELS)} logits, gives {self.layers[-1][0].shape[1]}")
        if (self.layers[0][0].shape[0] - 1) % 4:
            raise BadModel(f"the first layer takes {self.layers[0][0].shape[0]} inputs, not 4 * dimension + 1")
        self.encoder_name = encoder_name
        self.info = dict(info or {})
        self._encoder = encoder

    @property
    def dimension(self) -> int:
        """The sentence-embedding dimension the head was trained on."""
        return (self.layers[0][0].shape[0] - 1) // 4

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            if self.encoder_name != "minilm":
                from factscout.text.encoder import Encoder

                self._encoder = Encoder(self.encoder_name)
            else:
                self._encoder = _default_encoder()
        return self._encoder

    # -- persistence --

    @classmethod
    def load(cls, path: str | Path | None = None, *, encoder: Any = None) -> StanceHead:
        """Load a head saved by :meth:`save`; by default the one shipped with factscout (offline)."""
        file = Path(path) if path is not None else MODEL_FILE
        if not file.is_file():
            hint = " (reinstall factscout, or train one: factscout train stance --out DIR)"
            raise ModelNotFound(f"no stance model at {file}{hint if path is None else ''}")
        try:
            with np.load(file, allow_pickle=False) as data:
                n = int(data["n_layers"])
                layers = [(data[f"w{i}"], data[f"b{i}"]) for i in range(n)]
                labels = tuple(str(x) for x in data["labels"])
                features = str(data["features"])
                encoder_name = str(data["encoder"])
                info = {str(k): str(v) for k, v in zip(data["info_keys"], data["info_values"], strict=True)}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            raise BadModel(f"{file} is not a factscout stance head: {exc}") from None
        if labels != STANCE_LABELS or features != FEATURES:
            raise BadModel(
                f"{file}: labels {labels} / features {features!r} differ from {STANCE_LABELS} / {FEATURES!r}"
            )
        return cls(layers, encoder=encoder, encoder_name=encoder_name, info=info)

    def save(self, path: str | Path) -> Path:
        """Write the head as a compressed fp16 ``.npz`` (weights only, no pickles)."""
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        arrays: dict[str, np.ndarray] = {
            "n_layers": np.array(len(self.layers)),
            "labels": np.array(STANCE_LABELS),
            "features": np.array(FEATURES),
            "encoder": np.array(self.encoder_name),
            "info_keys": np.array(sorted(self.info), dtype=str),
            "info_values": np.array([self.info[k] for k in sorted(self.info)], dtype=str),
        }
        for i, (w, b) in enumerate(self.layers):
            arrays[f"w{i}"] = w.astype(np.float16)
            arrays[f"b{i}"] = b.astype(np.float16)
        save_npz(file, arrays)
        return file

    # -- inference --

    def logits(self, features: np.ndarray) -> np.ndarray:
        h = np.asarray(features, dtype=np.float32)
        if h.ndim != 2 or h.shape[1] != self.layers[0][0].shape[0]:
            raise BadModel(f"the head takes {self.layers[0][0].shape[0]} features per pair, got shape {h.shape}")
        for i, (w, b) in enumerate(self.layers):
            h = h @ w + b
            if i < len(self.layers) - 1:
                h = np.maximum(h, 0.0)
        return h

    def predict_proba(self, claim_vectors: np.ndarray, sentence_vectors: np.ndarray) -> np.ndarray:
        """Class probabilities ``(n, 3)`` for paired rows of claim and sentence embeddings."""
        u = np.asarray(claim_vectors, dtype=np.float32)
        v = np.asarray(sentence_vectors, dtype=np.float32)
        if u.ndim == 2 and u.shape[1] != self.dimension:
            raise BadModel(f"the head was trained on {self.dimension}-d embeddings, got {u.shape[1]}-d")
        return softmax(self.logits(nli_features(u, v)))

    def predict(self, claim: str | Claim, sentences: Sequence[Sentence | str]) -> list[Stance]:
        """The stance of each sentence towards ``claim``, in input order (one encoder batch).

        ``claim`` is its text or a :class:`~factscout.records.Claim`. Plain strings are taken as sentences of an anonymous passage (``passage_id=""``) at
        their position in ``sentences``.
        """
        claim_text, items = stance_inputs(claim, sentences)
        if not items:
            return []
        vectors = np.asarray(embed_fn(self.encoder)([claim_text, *[s.text for s in items]]), dtype=np.float32)
        u = np.repeat(vectors[:1], len(items), axis=0)
        probs = self.predict_proba(u, vectors[1:])
        return [to_stance(s.passage_id, s.index, p) for s, p in zip(items, probs, strict=True)]


@STANCE_MODELS.register("head")
def _stance_head(encoder: Any = None) -> StanceHead:
    return StanceHead.load(encoder=encoder)


def to_stance(passage_id: str, sentence_index: int, probabilities: Sequence[float]) -> Stance:
    """A :class:`Stance` whose label is the most probable class (ties: supports, refutes, NEI order)."""
    p = tuple(float(x) for x in probabilities)
    if len(p) != 3:
        raise InputError(f"a stance needs 3 probabilities, got {p!r}")
    return Stance(passage_id, sentence_index, STANCE_LABELS[int(np.argmax(p))], (p[0], p[1], p[2]))


def predict_many(model: Any, claims: Sequence[Claim], sentences: Sequence[Sequence[Sentence]]) -> list[list[Stance]]:
    """Each claim's stances of its ``sentences``. A pairwise model (the cross-encoder) scores the
    (claim, sentence) pairs of all claims in one call: batches sorted by length across claims pad
    less, and each pair is scored once (the model's pair cache); another model goes claim by claim."""
    if not isinstance(model, PairwiseStance):
        return [model.predict(c, sents) if sents else [] for c, sents in zip(claims, sentences, strict=True)]
    pairs = [(c.text, s) for c, sents in zip(claims, sentences, strict=True) for s in sents]
    probs: Any = model.predict_pairs([p[0] for p in pairs], [p[1].text for p in pairs]) if pairs else []
    rows = iter(probs)
    return [[to_stance(s.passage_id, s.index, next(rows)) for s in sents] for sents in sentences]


class PairwiseStance:
    """``predict`` for a stance model that scores (claim, sentence) pairs together: a subclass
    gives ``predict_pairs(claims, sentences) -> (n, 3)`` probabilities in label order."""

    def predict_pairs(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        raise NotImplementedError

    def predict(self, claim: str | Claim, sentences: Sequence[Sentence | str]) -> list[Stance]:
        """The stance of each sentence towards ``claim``, in input order.

        Plain strings are taken as sentences of an anonymous passage (``passage_id=""``) at their
        position in ``sentences``.
        """
        claim_text, items = stance_inputs(claim, sentences)
        if not items:
            return []
        probs = self.predict_pairs([claim_text] * len(items), [s.text for s in items])
        return [to_stance(s.passage_id, s.index, p) for s, p in zip(items, probs, strict=True)]


__all__ = [
    "FEATURES",
    "MODEL_DIR",
    "MODEL_FILE",
    "NOT_ENOUGH_INFO",
    "REFUTES",
    "STANCE_LABELS",
    "SUPPORTS",
    "BadModel",
    "ModelNotFound",
    "PairwiseStance",
    "Sentence",
    "Stance",
    "StanceHead",
    "nli_features",
    "to_stance",
]
