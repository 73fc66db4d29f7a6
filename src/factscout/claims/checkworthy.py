"""Check-worthiness: how worth fact-checking a sentence is (Hassan et al. 2017, "Toward Automated
Fact-Checking: Detecting Check-worthy Factual Claims by ClaimBuster", KDD; the CLEF CheckThat!
lab's task 1).

``load_checkworthy(path=None)`` loads the shipped model (or one written by ``factscout train
checkworthy``); ``model.score(texts) -> [CheckworthyScore]`` gives, per text, the probability that
it is check-worthy, a label at the model's shipped ``threshold`` (chosen on dev for the F1 of the
check-worthy class) and the probability of each label. A model with three labels (ClaimBuster's
non-factual / unimportant factual / check-worthy) labels a text below the threshold with the
likelier of the other two; a two-label model says "check-worthy" or "not check-worthy".

Two kinds of model, one file format each (``config.format`` in the ``.npz``):

- :class:`LinearCheckworthy`: logistic regression over the MiniLM sentence embedding (the int8
  encoder ``check`` uses, :func:`factscout.text.onnx_encoder.int8_encoder`) and a few surface
  features (:func:`surface_features`: numbers, percentages, money, years, comparatives, capitalised
  words, first-person and opinion words, length...). Check-worthy against the rest, then, below
  it, non-factual against unimportant factual (a second regression on the three-way data), so the
  three probabilities are ``((1 - p) q, (1 - p)(1 - q), p)``.
- :class:`MinilmCheckworthy`: all-MiniLM-L6-v2 fine-tuned with a three-way head
  (:func:`factscout.nn.backbone.build_network`, the sentence as the only segment), shipped as
  the weights that differ from the backbone; run as int8 on ONNX Runtime.

Which one is the default, and their figures, are in ``models/CHECKWORTHY_CARD.md``.
"""

from __future__ import annotations

import json
import math
import re
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.claims.scores import (
    MINILM_FORMAT,
    CheckworthyModel,
    CheckworthyScore,
    Scoring,
    checked_threshold,
    scores_of,
)
from factscout.datasets.checkworthy import CHECK_WORTHY, CHECKWORTHY_LABELS
from factscout.errors import BadModel, ModelNotFound

MODEL_DIR = Path(__file__).parent / "models"
MANIFEST = MODEL_DIR / "checkworthy.json"
LINEAR_FORMAT = "factscout-checkworthy-linear"
NOT_CHECK_WORTHY = "not check-worthy"
BINARY_LABELS = (NOT_CHECK_WORTHY, CHECK_WORTHY)
"""The labels of a two-label model, in the order of its probabilities."""


# -- surface features -----------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])[$£€]?\d[\d,.]*(?:\s?(?:%|percent\b|per cent\b))?", re.I)
_PERCENT = re.compile(r"\d\s?%|\bper\s?cent\b|\bpercent(?:age)?\b", re.I)
_MONEY = re.compile(r"[$£€]\s?\d|\b(?:dollars?|billion|million|trillion|budget|tax(?:es)?|deficit|debt)\b", re.I)
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d\b")
_COMPARATIVE = re.compile(
    r"\b(?:more|less|fewer|most|least|than|higher|lower|larger|smaller|bigger|greater|increas\w*|decreas\w*|"
    r"rose|risen|fell|fallen|doubled|tripled|grew|grown|cut|record|largest|highest|lowest|biggest|worst|best)\b",
    re.I,
)
_FIRST_SINGULAR = re.compile(r"\b(?:i|me|my|mine|i'm|i've|i'd|i'll)\b", re.I)
_FIRST_PLURAL = re.compile(r"\b(?:we|us|our|ours|we're|we've|we'll)\b", re.I)
_SECOND = re.compile(r"\b(?:you|your|yours|you're|you've)\b", re.I)
_OPINION = re.compile(
    r"\b(?:think|believe|feel|hope|wish|want|guess|should|must|ought|maybe|perhaps|probably|love|hate|kind|nice|"
    r"great|wonderful|terrible|horrible|awful|good|bad|beautiful|amazing|sad|happy|thank|thanks|please|sorry|"
    r"opinion|agree|disagree)\b",
    re.I,
)
_FUTURE = re.compile(r"\b(?:will|would|going to|gonna|'ll|could|might|may)\b", re.I)
_NEGATION = re.compile(r"\b(?:not|no|never|nobody|nothing|n't)\b|n't\b", re.I)
_TWEETY = re.compile(r"https?://\S+|[@#]\w+")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’-]*")

SURFACE_FEATURES = (
    "has number",
    "numbers",
    "percent",
    "money",
    "year",
    "comparatives",
    "capitalised words",
    "first person singular",
    "first person plural",
    "second person",
    "opinion words",
    "future / modal",
    "negation",
    "question",
    "exclamation",
    "links / mentions / hashtags",
    "log words",
)


def surface_features(texts: Sequence[str]) -> np.ndarray:
    """``(n, len(SURFACE_FEATURES))`` cheap cues of a factual claim (ClaimBuster's feature set in
    spirit: Hassan et al. 2017): counts as ``log1p``, shares of the words, flags."""
    rows = []
    for text in texts:
        plain = _TWEETY.sub(" ", text)
        words = _WORD.findall(plain)
        n = max(1, len(words))
        capitalised = sum(1 for w in words[1:] if w[0].isupper() and not w.isupper())
        numbers = len(_NUMBER.findall(plain))
        rows.append(
            [
                float(numbers > 0),
                math.log1p(numbers),
                float(bool(_PERCENT.search(plain))),
                math.log1p(len(_MONEY.findall(plain))),
                float(bool(_YEAR.search(plain))),
                math.log1p(len(_COMPARATIVE.findall(plain))),
                capitalised / n,
                len(_FIRST_SINGULAR.findall(plain)) / n,
                len(_FIRST_PLURAL.findall(plain)) / n,
                len(_SECOND.findall(plain)) / n,
                len(_OPINION.findall(plain)) / n,
                len(_FUTURE.findall(plain)) / n,
                len(_NEGATION.findall(plain)) / n,
                float("?" in text),
                float("!" in text),
                math.log1p(len(_TWEETY.findall(text))),
                math.log1p(len(words)),
            ]
        )
    return np.asarray(rows, dtype=np.float32).reshape(len(texts), len(SURFACE_FEATURES))


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-np.clip(x, -40.0, 40.0)))


# -- the linear model -----------------------------------------------------------------------------


class LinearCheckworthy(Scoring):
    """Logistic regression over MiniLM embeddings and :func:`surface_features` (module docstring).

    ``worthy`` = (weights, bias) of check-worthy against the rest over ``[embedding, scaled
    features]``; ``factual`` = (weights, bias) of non-factual against unimportant factual (None: a
    two-label model); ``scale`` = (mean, std) of the surface features.
    """

    def __init__(
        self,
        worthy: tuple[np.ndarray, float],
        factual: tuple[np.ndarray, float] | None,
        scale: tuple[np.ndarray, np.ndarray],
        *,
        threshold: float = 0.5,
        encoder: Any = None,
        info: Mapping[str, Any] | None = None,
    ) -> None:
        self.worthy = (np.asarray(worthy[0], dtype=np.float32), float(worthy[1]))
        self.factual = None if factual is None else (np.asarray(factual[0], dtype=np.float32), float(factual[1]))
        self.scale = (np.asarray(scale[0], dtype=np.float32), np.asarray(scale[1], dtype=np.float32))
        self.threshold = checked_threshold(threshold, "linear check-worthiness model")
        self.labels: tuple[str, ...] = BINARY_LABELS if self.factual is None else tuple(CHECKWORTHY_LABELS)
        self._encoder = encoder
        self.info = dict(info or {})

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from factscout.text.onnx_encoder import int8_encoder

            self._encoder = int8_encoder()
        return self._encoder

    def features(self, texts: Sequence[str], embeddings: np.ndarray | None = None) -> np.ndarray:
        """``[embedding, scaled surface features]`` per text (``embeddings``: computed already)."""
        if embeddings is None:
            from factscout.text.encoder import embed_fn

            embeddings = embed_fn(self.encoder)([t if t.strip() else " " for t in texts])
        mean, std = self.scale
        return np.hstack([np.asarray(embeddings, dtype=np.float32), (surface_features(texts) - mean) / std])

    def probabilities(self, texts: Sequence[str], embeddings: np.ndarray | None = None) -> np.ndarray:
        x = self.features(texts, embeddings)
        p = _sigmoid(x @ self.worthy[0] + self.worthy[1])
        if self.factual is None:
            return np.stack([1.0 - p, p], axis=1)
        q = _sigmoid(x @ self.factual[0] + self.factual[1])
        return np.stack([(1.0 - p) * q, (1.0 - p) * (1.0 - q), p], axis=1)

    def save(self, path: str | Path) -> Path:
        """Write the weights (fp32) and the config (threshold, labels, info) to an ``.npz``."""
        from factscout.formats.npz import save_npz

        config = {
            "format": LINEAR_FORMAT,
            "format_version": 1,
            "labels": list(self.labels),
            "threshold": self.threshold,
            "surface_features": list(SURFACE_FEATURES),
            "info": self.info,
        }
        arrays = {
            "config": np.array(json.dumps(config, sort_keys=True)),
            "worthy_w": self.worthy[0],
            "worthy_b": np.float32(self.worthy[1]),
            "mean": self.scale[0],
            "std": self.scale[1],
        }
        if self.factual is not None:
            arrays["factual_w"], arrays["factual_b"] = self.factual[0], np.float32(self.factual[1])
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        save_npz(path, arrays)
        return path

    @classmethod
    def load(cls, path: str | Path, *, encoder: Any = None) -> LinearCheckworthy:
        file = Path(path)
        config, data = _read_npz(file, LINEAR_FORMAT)
        if tuple(config.get("surface_features", ())) != SURFACE_FEATURES:
            raise BadModel(f"{file}: its surface features differ from this factscout's")
        try:
            factual = (data["factual_w"], float(data["factual_b"])) if "factual_w" in data else None
            model = cls(
                (data["worthy_w"], float(data["worthy_b"])),
                factual,
                (data["mean"], data["std"]),
                threshold=checked_threshold(config.get("threshold"), str(file)),
                encoder=encoder,
                info=config.get("info", {}),
            )
        except KeyError as exc:
            raise BadModel(f"{file}: the linear check-worthiness model lacks {exc}") from None
        if tuple(config.get("labels", ())) != model.labels:
            raise BadModel(f"{file}: labels {config.get('labels')} differ from {model.labels}")
        return model


def _read_npz(file: Path, fmt: str | None, *, weights: bool = True) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """A model file's config and (with ``weights``) its arrays; with ``fmt``, its format checked."""
    if not file.is_file():
        raise ModelNotFound(f"no check-worthiness model at {file}")
    try:
        with np.load(file, allow_pickle=False) as data:
            config = json.loads(str(data["config"]))
            arrays = {k: np.asarray(data[k]) for k in data if k != "config"} if weights else {}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        raise BadModel(f"{file} is not a factscout check-worthiness model: {exc}") from None
    found = config.get("format") if isinstance(config, dict) else "?"
    if fmt is not None and found != fmt:
        raise BadModel(f"{file} is not a factscout check-worthiness model (format {found!r}, expected {fmt!r})")
    return config if isinstance(config, dict) else {}, arrays


def model_format(path: str | Path) -> str:
    """The ``format`` a check-worthiness model file names (without reading its weights)."""
    config, _ = _read_npz(Path(path), None, weights=False)
    return str(config.get("format", "?"))


# -- loading --------------------------------------------------------------------------------------


def shipped_files() -> dict[str, Any]:
    """The manifest of the shipped models: ``{"default": kind, "files": {kind: file name}}``."""
    if not MANIFEST.is_file():
        raise ModelNotFound(
            f"no shipped check-worthiness model ({MANIFEST} is missing); reinstall factscout, or train one: "
            "factscout train checkworthy --out DIR"
        )
    manifest = json.loads(MANIFEST.read_text())
    if not isinstance(manifest, dict) or manifest.get("default") not in manifest.get("files", {}):
        raise BadModel(f"{MANIFEST}: expected a default kind among its files")
    return manifest


def shipped_path(kind: str | None = None) -> Path:
    """The shipped model file of ``kind`` (``linear``, ``minilm``; default: the shipped default)."""
    manifest = shipped_files()
    kind = kind or str(manifest["default"])
    if kind not in manifest["files"]:
        from factscout.errors import UnknownName

        raise UnknownName("check-worthiness model kind", kind, manifest["files"])
    return MODEL_DIR / str(manifest["files"][kind])


def load_checkworthy(path: str | Path | None = None, *, kind: str | None = None) -> CheckworthyModel:
    """The check-worthiness model in ``path`` (a file written by ``factscout train checkworthy``);
    by default the shipped one (``kind``: the shipped ``linear`` or ``minilm`` model instead of the
    default)."""
    file = Path(path) if path is not None else shipped_path(kind)
    fmt = model_format(file)
    if fmt == LINEAR_FORMAT:
        return LinearCheckworthy.load(file)
    if fmt == MINILM_FORMAT:
        from factscout.claims.checkworthy_minilm import MinilmCheckworthy

        return MinilmCheckworthy.load_int8(file)
    raise BadModel(f"{file} is not a factscout check-worthiness model (format {fmt!r})")


__all__ = [
    "BINARY_LABELS",
    "CHECKWORTHY_LABELS",
    "CheckworthyModel",
    "CheckworthyScore",
    "LinearCheckworthy",
    "load_checkworthy",
    "scores_of",
    "surface_features",
]
