"""Claim-aware sentence selection: a cross-encoder reads (claim, sentence) and scores relevance.

The threshold selector (Quin+; :mod:`factscout.select.threshold`) keeps a sentence when its
embedding is close to the claim's; two separately embedded texts cannot tell "about vitamin D"
from "about vitamin D *and falls*". A cross-encoder reads claim and sentence together, every
claim token attending to every sentence token (Nogueira & Cho 2019, "Passage Re-ranking with
BERT", arXiv:1901.04085), so its score can depend on the claim's specific subject.

The scorer is factscout's own cross-encoder re-ranker
(:class:`~factscout.rerank.cross_encoder.CrossEncoderReranker`, LoRA over the offline MiniLM,
trained for claim -> abstract relevance on SciFact train without the held-out claims), applied to
single sentences. A sentence is kept when

    score = relevance + cosine_weight * cos(claim, sentence)  >=  threshold
    and cos(claim, sentence) >= min_cosine

``cosine_weight``, ``threshold`` and ``min_cosine`` are chosen for micro sentence-level F1 on
the rationales of the training part of SciFact (the claims the BIO tagger trains on; never the
held-out claims) by ``python benchmarks/selection.py --write-setting`` and stored in
``models/relevance.json``, which :func:`read_setting` checks and the ``relevance`` selector uses.

The relevance score comes from a *scorer* (:class:`RelevanceScorer`), and a setting names the scorer
it was chosen for (``scorer`` in the setting; a threshold on one scorer's scale means nothing on
another's): ``"reranker"`` (above, :class:`RerankerRelevance`, the ``relevance`` selector) or
``"stance"``, the stance cross-encoder's ``1 - P(not enough info)`` (:class:`StanceRelevance`; the
``stance-relevance`` selector in :mod:`factscout.select.stance_relevance`, setting
``models/stance_relevance.json``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from factscout.errors import BadModel, InputError, ModelNotFound
from factscout.records import NOT_ENOUGH_INFO, STANCE_LABELS, Claim, Passage, Sentence
from factscout.select.base import register_selector

SETTING_FILE = Path(__file__).parent / "models" / "relevance.json"
FORMAT = "factscout-relevance-selector"
FORMAT_VERSION = 1
SCORERS = ("reranker", "stance")  # what a setting can be chosen for (see RelevanceScorer)
_KEYS = {"threshold", "cosine_weight", "min_cosine", "scorer"}
_NEI = STANCE_LABELS.index(NOT_ENOUGH_INFO)


@dataclass(frozen=True, slots=True)
class RelevanceSetting:
    """The selection rule's numbers: keep when ``relevance + cosine_weight * cos >= threshold``
    and ``cos >= min_cosine``; ``scorer``: the relevance scorer the numbers were chosen for
    (one of :data:`SCORERS`)."""

    threshold: float
    cosine_weight: float = 0.0
    min_cosine: float = -1.0
    scorer: str = "reranker"

    def __post_init__(self) -> None:
        if self.scorer not in SCORERS:
            raise InputError(f"relevance setting scorer must be one of {', '.join(SCORERS)}, got {self.scorer!r}")
        for name in ("threshold", "cosine_weight", "min_cosine"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise InputError(f"relevance setting {name} must be a finite number, got {value!r}")
        if self.cosine_weight < 0:
            raise InputError(f"relevance setting cosine_weight must be >= 0, got {self.cosine_weight!r}")
        if not -1.0 <= self.min_cosine <= 1.0:
            raise InputError(f"relevance setting min_cosine must be in [-1, 1], got {self.min_cosine!r}")

    def keep(self, relevance: np.ndarray, cosine: np.ndarray) -> np.ndarray:
        """Boolean mask of the kept sentences."""
        kept: np.ndarray = (self.combined(relevance, cosine) >= self.threshold) & (cosine >= self.min_cosine)
        return kept

    def combined(self, relevance: np.ndarray, cosine: np.ndarray) -> np.ndarray:
        out: np.ndarray = np.asarray(relevance, dtype=np.float64) + self.cosine_weight * np.asarray(
            cosine, dtype=np.float64
        )
        return out


def read_setting(path: str | Path | None = None, *, scorer: str | None = None) -> RelevanceSetting:
    """The setting stored in ``path`` (default: the shipped ``models/relevance.json``); with
    ``scorer``, a setting chosen for another scorer is a :class:`BadModel` error. A file without
    ``scorer`` in its setting was chosen for the re-ranker (the first format had only that one)."""
    file = Path(path) if path is not None else SETTING_FILE
    if not file.is_file():
        raise ModelNotFound(f"no relevance selector setting at {file}")
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadModel(f"{file}: cannot read the relevance selector setting ({exc})") from None
    except json.JSONDecodeError as exc:
        raise BadModel(f"{file}, line {exc.lineno}: not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        got = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise BadModel(f"{file}: not a relevance selector setting (format {got!r}, expected {FORMAT!r})")
    if data.get("format_version") != FORMAT_VERSION:
        raise BadModel(f"{file}: format_version {data.get('format_version')!r}, this factscout reads {FORMAT_VERSION}")
    rule = data.get("setting")
    if not isinstance(rule, dict) or "threshold" not in rule:
        raise BadModel(f"{file}: 'setting' must be an object with at least 'threshold'")
    unknown = sorted(set(rule) - _KEYS)
    if unknown:
        raise BadModel(f"{file}: unknown keys in 'setting': {', '.join(unknown)}")
    try:
        setting = RelevanceSetting(**rule)
    except InputError as exc:
        raise BadModel(f"{file}: {exc}") from None
    if scorer is not None and setting.scorer != scorer:
        raise BadModel(f"{file}: a setting chosen for the {setting.scorer!r} scorer, not {scorer!r}")
    return setting


def write_setting(path: str | Path, setting: RelevanceSetting, info: Mapping[str, Any]) -> Path:
    """Write ``setting`` with what it was chosen on (``info``) as the selector's JSON file."""
    file = Path(path)
    file.parent.mkdir(parents=True, exist_ok=True)
    body = {"format": FORMAT, "format_version": FORMAT_VERSION, "setting": asdict(setting), **dict(info)}
    file.write_text(json.dumps(body, indent=2) + "\n", encoding="utf-8")
    return file


@runtime_checkable
class RelevanceScorer(Protocol):
    """Scores how relevant each sentence is to its paired claim (higher: more relevant);
    ``name`` is the :data:`SCORERS` entry a setting names."""

    name: str

    def relevance(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray: ...


class RerankerRelevance:
    """The cross-encoder re-ranker's score of (claim, sentence) (a logit-like number, unbounded).

    ``reranker``: a :class:`~factscout.rerank.cross_encoder.CrossEncoderReranker` (default: the
    shipped one, loaded on first use)."""

    name = "reranker"

    def __init__(self, reranker: Any = None) -> None:
        self._reranker = reranker

    @property
    def reranker(self) -> Any:
        if self._reranker is None:
            from factscout.rerank.cross_encoder import CrossEncoderReranker

            self._reranker = CrossEncoderReranker.load()
        return self._reranker

    def relevance(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        return np.asarray(self.reranker.score_pairs(list(claims), list(sentences)), dtype=np.float64)


class StanceRelevance:
    """``1 - P(not enough info)`` of the stance cross-encoder, in [0, 1].

    ``model``: anything with ``predict_pairs(claims, sentences) -> (n, 3)`` probabilities in
    :data:`~factscout.records.STANCE_LABELS` order (default: the shipped
    :class:`~factscout.verify.cross_stance.CrossStanceModel`, loaded on first use)."""

    name = "stance"

    def __init__(self, model: Any = None) -> None:
        self._model = model

    @property
    def model(self) -> Any:
        if self._model is None:
            from factscout.verify.cross_stance import CrossStanceModel

            self._model = CrossStanceModel.load()
        return self._model

    def relevance(self, claims: Sequence[str], sentences: Sequence[str]) -> np.ndarray:
        probs = np.asarray(self.model.predict_pairs(list(claims), list(sentences)), dtype=np.float64)
        if probs.ndim != 2 or probs.shape != (len(sentences), len(STANCE_LABELS)):
            raise ValueError(f"the stance model gave probabilities of shape {probs.shape} for {len(sentences)} pairs")
        out: np.ndarray = 1.0 - probs[:, _NEI]
        return out


def make_scorer(name: str) -> RelevanceScorer:
    """The relevance scorer ``name`` (one of :data:`SCORERS`), its model loaded on first use."""
    if name == "reranker":
        return RerankerRelevance()
    if name == "stance":
        return StanceRelevance()
    raise InputError(f"no relevance scorer {name!r}; known: {', '.join(SCORERS)}")


class RelevanceSelector:
    """Keep the sentences a cross-encoder finds relevant to the claim (see the module doc).

    ``scorer``: the :class:`RelevanceScorer` (default: the one ``setting.scorer`` names; a scorer
    other than the one the setting was chosen for is an :class:`InputError`); ``reranker``: the
    re-ranker of the default ``"reranker"`` scorer (default: the shipped one, loaded on first
    use); ``encoder``: the sentence encoder for the cosine term (default: the offline MiniLM; not
    run when ``cosine_weight`` is 0 and ``min_cosine`` -1). A kept sentence's ``score`` is its
    combined score.
    """

    def __init__(
        self,
        setting: RelevanceSetting,
        *,
        scorer: RelevanceScorer | None = None,
        reranker: Any = None,
        encoder: Any = None,
    ) -> None:
        if scorer is not None and reranker is not None:
            raise InputError("give a relevance scorer or a reranker, not both")
        if reranker is not None:
            scorer = RerankerRelevance(reranker)
        if scorer is None:
            scorer = make_scorer(setting.scorer)
        if scorer.name != setting.scorer:
            raise InputError(f"the relevance setting was chosen for the {setting.scorer!r} scorer, not {scorer.name!r}")
        self.setting = setting
        self.scorer = scorer
        self._encoder = encoder
        self._cosine: Any = None

    @property
    def reranker(self) -> Any:
        """The re-ranker of a ``"reranker"`` scorer."""
        if not isinstance(self.scorer, RerankerRelevance):
            raise InputError(f"this relevance selector scores with {self.setting.scorer!r}, not a reranker")
        return self.scorer.reranker

    @property
    def uses_cosine(self) -> bool:
        return self.setting.cosine_weight != 0.0 or self.setting.min_cosine > -1.0

    def scores(self, claim_text: str, sentences: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """(scorer relevance, cosine) of each sentence to the claim; the cosine is zeros
        when the setting does not use it."""
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise InputError(f"selection needs a non-empty claim text, got {claim_text!r}")
        if isinstance(sentences, str):
            raise InputError("sentences must be a sequence of strings, not one string")
        if not sentences:
            return np.zeros(0), np.zeros(0)
        relevance = np.asarray(self.scorer.relevance([claim_text] * len(sentences), list(sentences)))
        if not self.uses_cosine:
            return relevance.astype(np.float64), np.zeros(len(sentences))
        if self._cosine is None:
            from factscout.select.threshold import ThresholdSelector

            self._cosine = ThresholdSelector(encoder=self._encoder)
        cosine = self._cosine.scores(claim_text, sentences)
        return relevance.astype(np.float64), np.asarray(cosine, dtype=np.float64)

    def select(self, claim_text: str, passage_id: str, sentences: Sequence[str]) -> list[Sentence]:
        """The kept sentences of passage ``passage_id``, in passage order."""
        relevance, cosine = self.scores(claim_text, sentences)
        if not len(relevance):
            return []
        combined = self.setting.combined(relevance, cosine)
        kept = self.setting.keep(relevance, cosine)
        return [Sentence(passage_id, i, sentences[i], float(combined[i])) for i in map(int, np.flatnonzero(kept))]

    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]:
        """:meth:`select` over a passage's text split with :func:`factscout.text.sentences.sentences_of`."""
        from factscout.text.sentences import sentences_of

        return self.select(claim.text, passage.passage_id, sentences_of(passage.text))


@register_selector("relevance")
def _relevance_selector(
    encoder: Any = None, threshold: float | None = None, setting: str | Path | None = None
) -> RelevanceSelector:
    """``setting``: a setting file (``None``: the shipped ``models/relevance.json``);
    ``threshold``: overrides its cut on the combined score."""
    chosen = read_setting(setting, scorer="reranker")
    if threshold is not None:
        chosen = replace(chosen, threshold=threshold)
    return RelevanceSelector(chosen, encoder=encoder)
