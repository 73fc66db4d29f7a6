"""A learned, calibrated verdict from the claim's evidence: the verdict method ``learned``.

The Quin+ count rule (:mod:`factscout.verify.verdict`) counts confident sentences; it cannot
weigh a strongly refuting sentence in the best passage against three weak supporting ones in
passages far down the ranking, and its two thresholds carry over poorly between claim sets.
Here a small model reads the same inputs the rule reads, plus how well retrieved each piece of
evidence is, and gives a probability for each verdict (the aggregation step of evidence-based
fact-checking pipelines, e.g. the "verdict prediction from top-k sentences" of SciFact's
VeriSci, Wadden et al. 2020, and the aggregation over evidence of AVeriTeC baselines,
Schlichtkrull et al. 2023).

**Features** (:func:`claim_features`, names in :func:`feature_names`) of one claim, from its
sentence stances and its fused ranking only (what every :class:`~factscout.verify.base.VerdictMethod`
is given):

* each stance is placed at its passage's retrieval rank and gets that passage's *relevance*, the
  passage's score min-max normalised over the claim's ranking (best passage 1, last 0; Lee 1997);
  stances are ordered by (passage rank, most decisive first: lowest not-enough-info probability,
  sentence index) and the first ``k`` are kept (padded with zeros when fewer);
* per slot: present, the three stance probabilities, relevance;
* over the ``k`` kept stances, per stance class: max and mean probability, relevance-weighted sum
  and max;
* over all stances: how many support / refute with confidence >= each of
  :data:`CONFIDENCE_LEVELS` (log1p), the number of sentences and of passages with one (log1p);
* retrieval: any hit, log1p of the top fused score, the mean relevance of the top 5 passages,
  the gap between the first two normalised scores, the mean relevance of passages with evidence;
* the count rule's own verdict (one-hot over its three labels) and its supporting-minus-refuting
  balance.

**Model**: multinomial logistic regression over standardised features, trained by
``factscout train verdict-aggregator`` (``training/verdict/aggregator.py``): fitted on SciFact
fitting claims, regularisation chosen on dev claims, then a softmax temperature fitted on dev
(Guo et al. 2017) so the probabilities are calibrated. The label set is stored with the model:
SciFact's three verdicts, or four with ``conflicting`` when trained on AVeriTeC-style data.
Weights are a JSON file (no pickles), ``models/verdict_aggregator.json``, with its card
``models/VERDICT_AGGREGATOR_CARD.md``.

The verdict reports the count rule's counted sentences (supporting / refuting / neutral), as the
classifier does, so the report and page mark evidence the same way whichever method ran; its
``method`` says ``learned aggregator``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np

from factscout.errors import InputError
from factscout.nn.activations import softmax
from factscout.records import (
    REFUTES,
    RULE_VERDICT_LABELS,
    SUPPORTS,
    VERDICT_LABELS,
    Claim,
    PassageLookup,
    Ranking,
    Stance,
    Verdict,
    VerdictLabel,
)
from factscout.verify.base import VERDICT_METHODS
from factscout.verify.stance import MODEL_DIR, BadModel, ModelNotFound
from factscout.verify.verdict import CountRule, count_rule

FORMAT = "factscout-verdict-aggregator/1"
FEATURES = "stance-slots,class-aggregates,confident-counts,retrieval,count-rule/v1"
DEFAULT_K = 10
CONFIDENCE_LEVELS: tuple[float, ...] = (0.5, 0.7, 0.9)
TOP_PASSAGES = 5
MODEL_FILE = MODEL_DIR / "verdict_aggregator.json"
CARD_FILE = MODEL_DIR / "VERDICT_AGGREGATOR_CARD.md"
_SHORT = ("sup", "ref", "nei")


def feature_names(k: int = DEFAULT_K) -> list[str]:
    """The names of :func:`claim_features`' columns, in order."""
    _check_k(k)
    names = [f"slot{j}_{x}" for j in range(k) for x in ("present", *(f"p_{c}" for c in _SHORT), "relevance")]
    for c in _SHORT:
        names += [f"max_p_{c}", f"mean_p_{c}", f"sum_rel_p_{c}", f"max_rel_p_{c}"]
    for t in CONFIDENCE_LEVELS:
        names += [f"log1p_n_sup>={t:g}", f"log1p_n_ref>={t:g}"]
    names += ["log1p_sentences", "log1p_passages_with_evidence"]
    names += ["has_hits", "log1p_top_score", "mean_rel_top5", "gap_rel_1_2", "mean_rel_evidence_passages"]
    names += [f"rule_{label.replace(' ', '_')}" for label in RULE_VERDICT_LABELS] + ["rule_balance"]
    return names


def _check_k(k: object) -> int:
    if isinstance(k, bool) or not isinstance(k, int) or k < 1:
        raise InputError(f"k (stances read) must be a positive integer, got {k!r}")
    return k


def claim_features(stances: Sequence[Stance], ranking: Ranking, rule: CountRule, k: int = DEFAULT_K) -> np.ndarray:
    """The feature vector of one claim (see the module docstring), float64 ``(len(feature_names(k)),)``.

    ``rule`` is the count rule whose verdict enters the features (the one the model was trained
    with). No stances and an empty ranking are not errors: those blocks are zeros.
    """
    _check_k(k)
    hits = ranking.hits
    rank_of = {h.passage_id: n for n, h in enumerate(hits)}
    scores = np.array([float(h.score) for h in hits], dtype=np.float64)
    if len(scores):
        lo, hi = float(scores.min()), float(scores.max())
        relevance = (scores - lo) / (hi - lo) if hi > lo else np.ones_like(scores)
    else:
        relevance = scores
    items = []  # (passage rank, p(not enough info): most decisive first, sentence index, probabilities, relevance)
    for s in stances:
        p = np.asarray(s.probabilities, dtype=np.float64)
        if p.shape != (3,) or not np.all(np.isfinite(p)):
            raise InputError(f"stance {s.passage_id}:{s.sentence_index} has bad probabilities {s.probabilities!r}")
        n = rank_of.get(s.passage_id)
        rel = float(relevance[n]) if n is not None else 0.0
        items.append((n if n is not None else len(hits), p[2], s.sentence_index, p, rel))
    items.sort(key=lambda x: (x[0], x[1], x[2]))
    top = items[:k]

    slots = np.zeros((k, 5))
    for j, item in enumerate(top):
        slots[j] = (1.0, *item[3], item[4])
    agg = np.zeros((3, 4))
    if top:
        probs = np.stack([x[3] for x in top])
        weights = np.array([x[4] for x in top])
        weighted = probs * weights[:, None]
        agg[:, 0], agg[:, 1] = probs.max(axis=0), probs.mean(axis=0)
        agg[:, 2], agg[:, 3] = weighted.sum(axis=0), weighted.max(axis=0)
    counts = []
    for t in CONFIDENCE_LEVELS:
        counts.append(math.log1p(sum(s.label == SUPPORTS and s.confidence >= t for s in stances)))
        counts.append(math.log1p(sum(s.label == REFUTES and s.confidence >= t for s in stances)))
    sizes = [math.log1p(len(stances)), math.log1p(len({s.passage_id for s in stances}))]
    retrieval = [0.0] * 5
    if len(hits):
        evidence_ranks = sorted({x[0] for x in items if x[0] < len(hits)})
        retrieval = [
            1.0,
            math.log1p(max(float(scores[0]), 0.0)),
            float(relevance[:TOP_PASSAGES].mean()),
            float(relevance[0] - relevance[1]) if len(hits) > 1 else 0.0,
            float(relevance[evidence_ranks].mean()) if evidence_ranks else 0.0,
        ]
    verdict = count_rule(stances, min_evidence=rule.min_evidence, min_confidence=rule.min_confidence)
    one_hot = [float(verdict.label == label) for label in RULE_VERDICT_LABELS]
    n_sup, n_ref = len(verdict.supporting), len(verdict.refuting)
    balance = (n_sup - n_ref) / (n_sup + n_ref + 1)
    return np.concatenate([slots.reshape(-1), agg.reshape(-1), counts, sizes, retrieval, one_hot, [balance]])


class VerdictAggregator:
    """The trained model: ``softmax((((x - mean) / scale) @ weight + bias) / temperature)`` over
    :func:`claim_features` rows, classes ``labels``.

    ``rule`` is the count rule whose verdict is one of the features (fixed at training time);
    ``info`` free-form provenance (stance model, data, date) shown in reports and the card.
    """

    def __init__(
        self,
        labels: Sequence[str],
        weight: np.ndarray,
        bias: np.ndarray,
        mean: np.ndarray,
        scale: np.ndarray,
        *,
        k: int = DEFAULT_K,
        rule: CountRule | None = None,
        temperature: float = 1.0,
        info: Mapping[str, str] | None = None,
    ) -> None:
        self.labels = tuple(str(x) for x in labels)
        unknown = [x for x in self.labels if x not in VERDICT_LABELS]
        if unknown or len(set(self.labels)) != len(self.labels) or len(self.labels) < 2:
            raise BadModel(f"verdict aggregator labels must be 2+ distinct of {', '.join(VERDICT_LABELS)}, "
                           f"got {list(self.labels)}")  # fmt: skip
        self.k = _check_k(k)
        n, c = len(feature_names(self.k)), len(self.labels)
        self.weight = np.asarray(weight, dtype=np.float64)
        self.bias = np.asarray(bias, dtype=np.float64)
        self.mean = np.asarray(mean, dtype=np.float64)
        self.scale = np.asarray(scale, dtype=np.float64)
        shapes = (self.weight.shape, self.bias.shape, self.mean.shape, self.scale.shape)
        if shapes != ((n, c), (c,), (n,), (n,)):
            raise BadModel(f"a verdict aggregator with k={self.k} and {c} labels needs weight ({n}, {c}), bias ({c},), "
                           f"mean and scale ({n},); got {', '.join(map(str, shapes))}")  # fmt: skip
        arrays = (self.weight, self.bias, self.mean, self.scale)
        if not all(np.all(np.isfinite(a)) for a in arrays) or np.any(self.scale <= 0):
            raise BadModel("the verdict aggregator has non-finite weights or non-positive scales")
        if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0):
            raise BadModel(f"the temperature must be a positive number, got {temperature!r}")
        self.temperature = float(temperature)
        self.rule = rule if rule is not None else CountRule()
        self.info = {str(a): str(b) for a, b in (info or {}).items()}

    # -- inference --

    def features(self, stances: Sequence[Stance], ranking: Ranking) -> np.ndarray:
        return claim_features(stances, ranking, self.rule, self.k)

    def predict_features(self, features: np.ndarray) -> np.ndarray:
        """Calibrated class probabilities ``(n, len(labels))`` for rows of :func:`claim_features`."""
        x = np.asarray(features, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self.weight.shape[0]:
            raise InputError(f"the aggregator takes {self.weight.shape[0]} features per claim, got shape {x.shape}")
        return softmax(((((x - self.mean) / self.scale) @ self.weight) + self.bias) / self.temperature)

    def predict(self, stances: Sequence[Stance], ranking: Ranking) -> tuple[str, tuple[float, ...]]:
        """``(label, probabilities in labels order)`` for one claim (ties: ``labels`` order)."""
        p = self.predict_features(self.features(stances, ranking)[None])[0]
        return self.labels[int(np.argmax(p))], tuple(float(x) for x in p)

    # -- persistence --

    def to_json(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "features": FEATURES,
            "k": self.k,
            "labels": list(self.labels),
            "feature_names": feature_names(self.k),
            "rule": {"min_evidence": self.rule.min_evidence, "min_confidence": self.rule.min_confidence},
            "temperature": self.temperature,
            "weight": self.weight.tolist(),
            "bias": self.bias.tolist(),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "info": dict(sorted(self.info.items())),
        }

    def save(self, path: str | Path) -> Path:
        """Write the model as JSON (weights as plain lists; no pickles)."""
        file = Path(path)
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_text(json.dumps(self.to_json(), indent=1) + "\n")
        return file

    @classmethod
    def load(cls, path: str | Path | None = None) -> VerdictAggregator:
        """Load a model written by :meth:`save`; by default the one shipped with factscout."""
        file = Path(path) if path is not None else MODEL_FILE
        if not file.is_file():
            hint = " (reinstall factscout, or train one: factscout train verdict-aggregator --out DIR)"
            raise ModelNotFound(f"no verdict aggregator at {file}{hint if path is None else ''}")
        try:
            data = json.loads(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise BadModel(f"{file} is not a factscout verdict aggregator: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            got = data.get("format") if isinstance(data, dict) else type(data).__name__
            raise BadModel(f"{file} is not a factscout verdict aggregator (format {got!r}, expected {FORMAT!r})")
        if data.get("features") != FEATURES:
            raise BadModel(f"{file}: features {data.get('features')!r} differ from this factscout's {FEATURES!r}")
        try:
            k = data["k"]
            if data["feature_names"] != feature_names(k):
                raise BadModel(f"its feature names differ from this factscout's for k={k}")
            rule = CountRule(data["rule"]["min_evidence"], data["rule"]["min_confidence"])
            return cls(
                data["labels"],
                np.array(data["weight"], dtype=np.float64),
                np.array(data["bias"], dtype=np.float64),
                np.array(data["mean"], dtype=np.float64),
                np.array(data["scale"], dtype=np.float64),
                k=k,
                rule=rule,
                temperature=data["temperature"],
                info=data.get("info") or {},
            )
        except BadModel as exc:
            raise BadModel(f"{file}: {exc}") from None
        except (KeyError, TypeError, ValueError, InputError) as exc:
            raise BadModel(f"{file} is not a factscout verdict aggregator: {type(exc).__name__}: {exc}") from None


@VERDICT_METHODS.register("learned")
class LearnedVerdict:
    """The verdict method ``learned``: the label from :class:`VerdictAggregator` over the claim's
    stances and ranking; the counted sentences (and the report's counts) from the count ``rule``.

    ``aggregator`` is a loaded model or a function that loads one on first use (default: the
    shipped one, :meth:`VerdictAggregator.load`). ``classifier`` is accepted and ignored (every
    verdict factory is called with the same keywords).
    """

    METHOD = "learned aggregator"

    def __init__(
        self,
        rule: CountRule | None = None,
        aggregator: VerdictAggregator | Callable[[], VerdictAggregator] | None = None,
        **_: Any,
    ) -> None:
        self.rule = rule if rule is not None else CountRule()
        self._aggregator = aggregator

    @property
    def aggregator(self) -> VerdictAggregator:
        if not isinstance(self._aggregator, VerdictAggregator):
            self._aggregator = VerdictAggregator.load() if self._aggregator is None else self._aggregator()
        return self._aggregator

    @property
    def trained_with(self) -> str | None:
        """The stance model whose stances the aggregator was trained on (``None``: not recorded)."""
        found = self.aggregator.info.get("stance")
        return str(found) if found else None

    @property
    def method(self) -> str:
        model = self.aggregator
        stance = f" of the {self.trained_with} stance model" if self.trained_with else ""
        return f"{self.METHOD} (logistic regression over the top-{model.k} stances{stance} and retrieval scores)"

    def judge(self, claim: Claim, stances: Sequence[Stance], ranking: Ranking, passages: PassageLookup) -> Verdict:
        counted = self.rule(stances)
        model = self.aggregator
        label, probs = model.predict(stances, ranking)
        shown = ", ".join(f"{name} {p:.2f}" for name, p in zip(model.labels, probs, strict=True))
        reason = f"aggregator probabilities: {shown}; count rule alone: {counted.label}"
        return Verdict(
            cast(VerdictLabel, label), counted.supporting, counted.refuting, counted.neutral, reason, self.method
        )


__all__ = [
    "CONFIDENCE_LEVELS",
    "DEFAULT_K",
    "FEATURES",
    "MODEL_FILE",
    "LearnedVerdict",
    "VerdictAggregator",
    "claim_features",
    "feature_names",
]
