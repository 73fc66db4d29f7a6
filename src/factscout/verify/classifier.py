"""A learned verdict classifier over a claim and its top retrieved evidence (QuanTemp++).

QuanTemp (Venktesh et al. 2024, "QuanTemp: A real-world open-domain benchmark for
fact-checking numerical claims", SIGIR) and QuanTemp++ (Prabhu 2025) classify a claim as
true / false / conflicting from the claim and its top evidence: the top-3 retrieved snippets
whose retrieval score is above 0.5. This module is that step for factscout, trained on the
data that is here (AVeriTeC train, Schlichtkrull et al. 2023, which has verdict labels;
QuanTemp's here do not have any):

* **evidence** (:func:`select_evidence`): at most ``k`` (default :data:`TOP_K` = 3) snippets,
  highest score first, keeping only scores ``> min_score`` (default :data:`MIN_SCORE` = 0.5).
  factscout's fused scores are sums of min-max normalised scores, so the cut is defined on the
  claim's fused ranking min-max normalised once more (:func:`normalized_evidence`): the best hit
  scores 1, the last retrieved hit (``depth``) scores 0, and 0.5 is half way.
* **features** (:func:`verdict_features`): the frozen MiniLM embedding ``u`` of the claim, the
  mean ``v`` of the evidence embeddings, the SBERT pair features ``|u-v|`` and ``u*v``
  (Reimers & Gurevych 2019), and :data:`STAT_NAMES`: the shipped stance head's supports /
  refutes / not-enough-info probabilities aggregated over the evidence (mean, max), cosine and
  retrieval-score statistics and the evidence count.
* **head**: multinomial logistic regression with balanced class weights over standardised
  features (trained by ``factscout train classifier``), shipped as
  ``models/verdict_classifier.npz`` (fp16 weights, float32 standardisation, no pickles;
  ``models/CLASSIFIER_CARD.md``).

Classes are AVeriTeC's four, :data:`CLASSIFIER_LABELS`. The 3-class QuanTemp++ view
(:data:`QUANTEMP_LABELS`) maps supported -> true, refuted -> false, conflicting -> conflicting;
"not enough evidence" has no QuanTemp++ counterpart, so :meth:`Prediction.three_way` takes the
most probable of the other three (probabilities renormalised over them), and 3-class figures
leave out claims whose gold label is "not enough evidence".

**No evidence** (no snippet above the cut, or none given) is not an error: the evidence block
of the features is all zeros (as for training claims whose retrieval kept nothing), so the
prediction comes from the claim alone.
"""

from __future__ import annotations

import math
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple, cast

import numpy as np

from factscout.errors import InputError
from factscout.formats.npz import save_npz
from factscout.nn.activations import softmax
from factscout.records import (
    CONFLICTING,
    NOT_ENOUGH_EVIDENCE,
    REFUTED,
    SUPPORTED,
    Claim,
    PassageLookup,
    Ranking,
    Stance,
    Verdict,
    VerdictLabel,
)
from factscout.text.encoder import embed_fn
from factscout.verify.base import VERDICT_METHODS
from factscout.verify.stance import MODEL_DIR, BadModel, ModelNotFound, StanceHead
from factscout.verify.verdict import CountRule

CLASSIFIER_LABELS: tuple[str, str, str, str] = (
    SUPPORTED,
    REFUTED,
    CONFLICTING,
    NOT_ENOUGH_EVIDENCE,
)
"""The classifier's classes, in the order of :attr:`Prediction.probabilities` (AVeriTeC's four)."""

TRUE, FALSE = "true", "false"
QUANTEMP_LABELS: tuple[str, str, str] = (TRUE, FALSE, CONFLICTING)
"""QuanTemp++'s three verdicts."""
TO_QUANTEMP: dict[str, str] = {SUPPORTED: TRUE, REFUTED: FALSE, CONFLICTING: CONFLICTING}
"""The 3-class view; ``not enough evidence`` has no counterpart (see :meth:`Prediction.three_way`)."""

AVERITEC_LABELS: dict[str, str] = {
    "Supported": SUPPORTED,
    "Refuted": REFUTED,
    "Conflicting Evidence/Cherrypicking": CONFLICTING,
    "Not Enough Evidence": NOT_ENOUGH_EVIDENCE,
}
"""AVeriTeC's label strings -> :data:`CLASSIFIER_LABELS`."""

TOP_K = 3
MIN_SCORE = 0.5
FEATURES = "u,mean(v),|u-mean(v)|,u*mean(v),stats-v1"
STAT_NAMES: tuple[str, ...] = (
    "has_evidence",
    "n_evidence/10",
    "mean_score",
    "max_score",
    "mean_cos",
    "max_cos",
    "min_cos",
    "mean_p_supports",
    "mean_p_refutes",
    "mean_p_nei",
    "max_p_supports",
    "max_p_refutes",
    "max_p_nei",
    "frac_supports",
    "frac_refutes",
)
"""The evidence statistics appended to the embedding features (all 0 without evidence)."""
MODEL_FILE = MODEL_DIR / "verdict_classifier.npz"


class Prediction(NamedTuple):
    """A verdict with the probabilities of :data:`CLASSIFIER_LABELS` (unpacks as ``label, probabilities``)."""

    label: str
    probabilities: tuple[float, float, float, float]

    def three_way(self) -> tuple[str, tuple[float, float, float]]:
        """The QuanTemp++ view: ``(true|false|conflicting, probabilities)`` renormalised over the three
        classes that have a counterpart (the "not enough evidence" mass is dropped)."""
        p = np.asarray(self.probabilities[:3], dtype=np.float64)
        total = float(p.sum())
        q = p / total if total > 0 else np.full(3, 1 / 3)
        probs = (float(q[0]), float(q[1]), float(q[2]))
        return QUANTEMP_LABELS[int(np.argmax(q))], probs


# --- evidence selection ----------------------------------------------------------------------


def select_evidence(scores: Sequence[float], k: int = TOP_K, min_score: float = MIN_SCORE) -> list[int]:
    """Indices of the evidence to read: the ``k`` highest ``scores`` that are ``> min_score``.

    QuanTemp++'s rule (top-3 snippets with retrieval score above 0.5). Ties keep input order;
    the result is ordered best first.
    """
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise InputError(f"k must be a non-negative integer, got {k!r}")
    values = [float(s) for s in scores]
    bad = [s for s in values if not math.isfinite(s)]
    if bad:
        raise InputError(f"evidence scores must be finite numbers, got {bad[:3]}")
    order = sorted(range(len(values)), key=lambda i: (-values[i], i))
    return [i for i in order if values[i] > min_score][:k]


def normalized_evidence(ranking: Ranking) -> list[tuple[str, float]]:
    """``(passage_id, score)`` of a claim's fused ranking, scores min-max normalised over the ranking
    (Lee 1997; one hit or all-equal scores give 1.0), the scale on which :data:`MIN_SCORE` applies."""
    from factscout.fuse.normalize import min_max

    return [(h.passage_id, float(h.score)) for h in min_max(ranking).hits]


# --- features --------------------------------------------------------------------------------


def verdict_features(
    claim_vector: np.ndarray,
    evidence_vectors: np.ndarray,
    evidence_scores: Sequence[float],
    stance_probabilities: np.ndarray,
) -> np.ndarray:
    """The feature vector of one claim: ``[u, v, |u-v|, u*v, stats]`` with ``v`` the mean of the
    (already selected) evidence embeddings and ``stats`` as :data:`STAT_NAMES`. Without evidence
    ``v`` and ``stats`` are zeros. Returns float32 ``(4d + len(STAT_NAMES),)``."""
    u = np.asarray(claim_vector, dtype=np.float32).reshape(-1)
    d = u.shape[0]
    ev = np.asarray(evidence_vectors, dtype=np.float32).reshape(-1, d)
    n = ev.shape[0]
    scores = np.asarray(evidence_scores, dtype=np.float32).reshape(-1)
    probs = np.asarray(stance_probabilities, dtype=np.float32).reshape(-1, 3)
    if scores.shape[0] != n or probs.shape[0] != n:
        raise InputError(f"{n} evidence vectors but {scores.shape[0]} scores and {probs.shape[0]} stance rows")
    stats = np.zeros(len(STAT_NAMES), dtype=np.float32)
    if n:
        v = ev.mean(axis=0)
        cos = ev @ u
        winner = probs.argmax(axis=1)
        stats[:] = [
            1.0,
            n / 10,
            scores.mean(),
            scores.max(),
            cos.mean(),
            cos.max(),
            cos.min(),
            *probs.mean(axis=0),
            *probs.max(axis=0),
            float(np.mean(winner == 0)),
            float(np.mean(winner == 1)),
        ]
    else:
        v = np.zeros(d, dtype=np.float32)
    return np.concatenate([u, v, np.abs(u - v), u * v, stats]).astype(np.float32)


# --- the model -------------------------------------------------------------------------------


class VerdictClassifier:
    """Claim + top evidence -> supported / refuted / conflicting / not enough evidence.

    ``weight`` ``(features, 4)`` and ``bias`` ``(4,)`` are a linear softmax head over
    :func:`verdict_features` standardised with ``mean`` and ``scale`` (``(x - mean) / scale``). ``encoder`` is anything
    with ``encode(texts) -> L2-normalised (n, d)`` (default: the offline MiniLM, loaded on first
    use); ``stance`` the stance head whose probabilities enter the features (default: the shipped
    one, sharing the encoder).
    """

    def __init__(
        self,
        weight: np.ndarray,
        bias: np.ndarray,
        mean: np.ndarray | None = None,
        scale: np.ndarray | None = None,
        *,
        k: int = TOP_K,
        min_score: float = MIN_SCORE,
        encoder: Any = None,
        stance: StanceHead | None = None,
        info: dict[str, str] | None = None,
    ) -> None:
        self.weight = np.asarray(weight, dtype=np.float32)
        self.bias = np.asarray(bias, dtype=np.float32)
        n_labels = len(CLASSIFIER_LABELS)
        if self.weight.ndim != 2 or self.weight.shape[1] != n_labels or self.bias.shape != (n_labels,):
            raise BadModel(f"a verdict head needs weight (features, {n_labels}) and bias ({n_labels},), got "
                           f"{self.weight.shape} and {self.bias.shape}")  # fmt: skip
        if (self.weight.shape[0] - len(STAT_NAMES)) % 4 or self.weight.shape[0] <= len(STAT_NAMES):
            raise BadModel(f"the head takes {self.weight.shape[0]} features, not 4 * dimension + {len(STAT_NAMES)}")
        n = self.weight.shape[0]
        self.mean = np.zeros(n, np.float32) if mean is None else np.asarray(mean, dtype=np.float32)
        self.scale = np.ones(n, np.float32) if scale is None else np.asarray(scale, dtype=np.float32)
        if self.mean.shape != (n,) or self.scale.shape != (n,):
            raise BadModel(f"mean {self.mean.shape} and scale {self.scale.shape} must both be ({n},)")
        arrays = (self.weight, self.bias, self.mean, self.scale)
        if not all(np.all(np.isfinite(a)) for a in arrays) or np.any(self.scale <= 0):
            raise BadModel("the verdict head has non-finite weights or non-positive scales")
        select_evidence([], k, min_score)  # validates k
        self.k, self.min_score = k, float(min_score)
        self.info = dict(info or {})
        self._encoder = encoder
        self._stance = stance

    @property
    def dimension(self) -> int:
        """The sentence-embedding dimension the head was trained on."""
        return (self.weight.shape[0] - len(STAT_NAMES)) // 4

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from factscout.text.encoder import Encoder

            self._encoder = Encoder()
        return self._encoder

    @property
    def stance(self) -> StanceHead:
        if self._stance is None:
            self._stance = StanceHead.load(encoder=self.encoder)
        return self._stance

    # -- persistence --

    @classmethod
    def load(
        cls, path: str | Path | None = None, *, encoder: Any = None, stance: StanceHead | None = None
    ) -> VerdictClassifier:
        """Load a head saved by :meth:`save`; by default the one shipped with factscout (offline)."""
        file = Path(path) if path is not None else MODEL_FILE
        if not file.is_file():
            hint = " (reinstall factscout, or train one: factscout train classifier --out DIR)"
            raise ModelNotFound(f"no verdict classifier at {file}{hint if path is None else ''}")
        try:
            with np.load(file, allow_pickle=False) as data:
                weight, bias, mean, scale = data["weight"], data["bias"], data["mean"], data["scale"]
                labels = tuple(str(x) for x in data["labels"])
                features = str(data["features"])
                k, min_score = int(data["k"]), float(data["min_score"])
                info = {str(a): str(b) for a, b in zip(data["info_keys"], data["info_values"], strict=True)}
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as exc:
            raise BadModel(f"{file} is not a factscout verdict classifier: {exc}") from None
        if labels != CLASSIFIER_LABELS or features != FEATURES:
            raise BadModel(
                f"{file}: labels {labels} / features {features!r} differ from {CLASSIFIER_LABELS} / {FEATURES!r}"
            )
        return cls(weight, bias, mean, scale, k=k, min_score=min_score, encoder=encoder, stance=stance, info=info)

    def save(self, path: str | Path) -> Path:
        """Write the head as a compressed ``.npz`` (no pickles): weights fp16, the standardisation
        ``mean``/``scale`` float32 (some feature scales are ~1e-3, too fine for fp16 once folded in)."""
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.info)
        arrays: dict[str, np.ndarray] = {
            "weight": self.weight.astype(np.float16),
            "bias": self.bias.astype(np.float16),
            "mean": self.mean.astype(np.float32),
            "scale": self.scale.astype(np.float32),
            "labels": np.array(CLASSIFIER_LABELS),
            "features": np.array(FEATURES),
            "k": np.array(self.k),
            "min_score": np.array(self.min_score),
            "info_keys": np.array(keys, dtype=str),
            "info_values": np.array([self.info[x] for x in keys], dtype=str),
        }
        save_npz(file, arrays)
        return file

    # -- inference --

    def predict_features(self, features: np.ndarray) -> np.ndarray:
        """Class probabilities ``(n, 4)`` for rows of :func:`verdict_features`."""
        x = np.asarray(features, dtype=np.float32)
        if x.ndim != 2 or x.shape[1] != self.weight.shape[0]:
            raise BadModel(f"the head takes {self.weight.shape[0]} features per claim, got shape {x.shape}")
        return softmax(((x - self.mean) / self.scale) @ self.weight + self.bias)

    def predict(self, claim_text: str, evidence_texts: Sequence[str], evidence_scores: Sequence[float]) -> Prediction:
        """The verdict on ``claim_text`` from its evidence: the top ``k`` texts whose score is
        ``> min_score`` (scores on the min-max normalised scale, see :func:`normalized_evidence`)."""
        return self.predict_many([(claim_text, evidence_texts, evidence_scores)])[0]

    def predict_ranking(self, claim_text: str, ranking: Ranking, store: Any) -> Prediction:
        """:meth:`predict` from a claim's fused ranking (``Checker.retrieve(...)[i].ranking``) and the
        passage store (``store[passage_id].text``): scores min-max normalised, then the top ``k`` > cut."""
        evidence = normalized_evidence(ranking)
        keep = select_evidence([score for _, score in evidence], self.k, self.min_score)
        return self.predict(claim_text, [store[evidence[i][0]].text for i in keep], [evidence[i][1] for i in keep])

    def predict_many(self, items: Sequence[tuple[str, Sequence[str], Sequence[float]]]) -> list[Prediction]:
        """:meth:`predict` for many ``(claim_text, evidence_texts, evidence_scores)``, one encoder batch."""
        chosen: list[tuple[str, list[str], list[float]]] = []
        for n, item in enumerate(items):
            if not isinstance(item, tuple | list) or len(item) != 3:
                raise InputError(f"item {n}: expected (claim_text, evidence_texts, evidence_scores), got {item!r}")
            claim, texts, scores = item
            if not isinstance(claim, str) or not claim.strip():
                raise InputError(f"item {n}: the claim text must be a non-empty string, got {claim!r}")
            if isinstance(texts, str) or len(texts) != len(scores):
                raise InputError(f"item {n}: need one score per evidence text, got {len(texts)} texts "
                                 f"and {len(scores)} scores")  # fmt: skip
            if not all(isinstance(t, str) for t in texts):
                raise InputError(f"item {n}: evidence texts must be strings")
            keep = select_evidence(scores, self.k, self.min_score)
            chosen.append((claim, [texts[i] for i in keep], [float(scores[i]) for i in keep]))
        if not chosen:
            return []
        unique = list(dict.fromkeys(t for c, ts, _ in chosen for t in (c, *ts)))
        vectors = np.asarray(embed_fn(self.encoder)(unique), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise BadModel(f"the head was trained on {self.dimension}-d embeddings, the encoder gives {vectors.shape}")
        row = {t: i for i, t in enumerate(unique)}
        feats = []
        for claim, texts, scores in chosen:
            u = vectors[row[claim]]
            ev = vectors[[row[t] for t in texts]] if texts else np.zeros((0, self.dimension), np.float32)
            probs = self.stance.predict_proba(np.repeat(u[None], len(texts), axis=0), ev) if texts else ev[:, :3]
            feats.append(verdict_features(u, ev, scores, probs))
        return [to_prediction(p) for p in self.predict_features(np.stack(feats))]


@VERDICT_METHODS.register("classifier")
class ClassifierVerdict:
    """The verdict method ``classifier``: the label from :class:`VerdictClassifier` over the claim and
    its top evidence, the counted sentences (and the report's counts) from the count ``rule``.

    ``classifier`` is a loaded classifier or a function that loads one on first use (default: the
    shipped one, :meth:`VerdictClassifier.load`).
    """

    METHOD = "quantemp++ classifier (claim + top-3 evidence with score > 0.5)"

    def __init__(
        self,
        rule: CountRule | None = None,
        classifier: VerdictClassifier | Callable[[], VerdictClassifier] | None = None,
    ) -> None:
        self.rule = rule if rule is not None else CountRule()
        self._classifier = classifier

    @property
    def classifier(self) -> VerdictClassifier:
        if not isinstance(self._classifier, VerdictClassifier):
            self._classifier = VerdictClassifier.load() if self._classifier is None else self._classifier()
        return self._classifier

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict:
        counted = self.rule(stances)
        prediction = self.classifier.predict_ranking(claim.text, ranking, passages)
        probs = ", ".join(
            f"{name} {p:.2f}" for name, p in zip(CLASSIFIER_LABELS, prediction.probabilities, strict=True)
        )
        reason = f"classifier probabilities: {probs}; count rule alone: {counted.label}"
        label = cast(VerdictLabel, prediction.label)  # one of CLASSIFIER_LABELS
        return Verdict(label, counted.supporting, counted.refuting, counted.neutral, reason, self.METHOD)


def to_prediction(probabilities: Sequence[float]) -> Prediction:
    """A :class:`Prediction` whose label is the most probable class (ties: :data:`CLASSIFIER_LABELS` order)."""
    p = np.asarray(probabilities, dtype=np.float64)
    if p.shape != (len(CLASSIFIER_LABELS),):
        raise InputError(f"a verdict needs {len(CLASSIFIER_LABELS)} probabilities, got {probabilities!r}")
    p = p / p.sum()
    probs = (float(p[0]), float(p[1]), float(p[2]), float(p[3]))
    return Prediction(CLASSIFIER_LABELS[int(np.argmax(p))], probs)


__all__ = [
    "AVERITEC_LABELS",
    "CLASSIFIER_LABELS",
    "CONFLICTING",
    "MIN_SCORE",
    "QUANTEMP_LABELS",
    "STAT_NAMES",
    "TOP_K",
    "TO_QUANTEMP",
    "ClassifierVerdict",
    "Prediction",
    "VerdictClassifier",
    "normalized_evidence",
    "select_evidence",
    "to_prediction",
    "verdict_features",
]
