"""Evaluation of stance models and the count rule: the held-out evaluation pairs, stance and
verdict scores, the similarity-only baseline, bootstrap intervals, temperature calibration, and the
label counts and rounding the metrics files use."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from factscout.nn.activations import softmax
from factscout.records import Claim
from factscout.select.threshold import (
    ScoredAbstract,
    best_threshold,
)
from factscout.training.stance.data import (
    LABEL_ID,
    Pair,
)
from factscout.verify.stance import (
    NOT_ENOUGH_INFO,
    STANCE_LABELS,
    SUPPORTS,
    Stance,
    to_stance,
)
from factscout.verify.verdict import (
    VERDICT_LABELS,
    RuleFit,
    accuracy,
    count_rule,
    macro_f1,
)


def stance_eval_set(pairs: Sequence[Pair], cosines: np.ndarray, neutrals_per_claim: int = 2) -> list[int]:
    """Indices of the stance evaluation pairs: every gold rationale sentence, plus for each claim
    the ``neutrals_per_claim`` non-rationale sentences most similar to it (hard neutrals: the
    ones a similarity selector would pass on)."""
    keep = [i for i, p in enumerate(pairs) if p.rationale]
    by_claim: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        if not p.rationale:
            by_claim.setdefault(p.claim_id, []).append(i)
    for idx in by_claim.values():
        idx.sort(key=lambda i: (-cosines[i], i))
        keep.extend(idx[:neutrals_per_claim])
    return sorted(keep)


def stance_scores(gold: Sequence[int], predicted: Sequence[int]) -> dict[str, float]:
    labels = range(len(STANCE_LABELS))
    return {"accuracy": accuracy(gold, predicted), "macro_f1": macro_f1(gold, predicted, labels)}


def best_similarity_threshold(cosines: np.ndarray, gold: Sequence[int]) -> float:
    """The similarity-only baseline's threshold: cos >= t -> supports, else not enough info
    (it has no way to say refutes), t maximising macro-F1 on the given pairs."""
    best_t, best_f = 0.0, -1.0
    for t in np.arange(0.0, 1.0, 0.01):
        pred = np.where(cosines >= t, LABEL_ID[SUPPORTS], LABEL_ID[NOT_ENOUGH_INFO])
        f = macro_f1(list(gold), list(pred), range(len(STANCE_LABELS)))
        if f > best_f + 1e-12:
            best_t, best_f = float(t), f
    return round(best_t, 2)


def claim_stances(
    claims: Sequence[Claim],
    pairs: Sequence[Pair],
    probs: np.ndarray,
    cosines: np.ndarray,
    *,
    evidence: str,
    threshold: float,
) -> list[list[Stance]]:
    """Per-claim stance lists under an evidence setting: ``"selector"`` (sentences of the cited
    abstracts with cosine >= threshold) or ``"gold"`` (gold rationale sentences; claims with no
    rationale get the selector's sentences, so NEI is not given away)."""
    by_claim: dict[str, list[int]] = {}
    for i, p in enumerate(pairs):
        by_claim.setdefault(p.claim_id, []).append(i)
    out = []
    for c in claims:
        idx = by_claim.get(c.claim_id, [])
        chosen = [i for i in idx if pairs[i].rationale] if evidence == "gold" else []
        if not chosen:
            chosen = [i for i in idx if cosines[i] >= threshold]
        out.append([to_stance(pairs[i].doc_id, pairs[i].index, probs[i]) for i in chosen])
    return out


def verdict_scores(stances: Sequence[Sequence[Stance]], gold: Sequence[str], fit: RuleFit) -> dict[str, float]:
    pred = [count_rule(s, min_evidence=fit.min_evidence, min_confidence=fit.min_confidence).label for s in stances]
    return {"accuracy": accuracy(gold, pred), "macro_f1": macro_f1(gold, pred, VERDICT_LABELS)}


def round4(x: float) -> float:
    """``x`` rounded to 4 decimals, as every reported figure is."""
    return round(float(x), 4)


def prf_of(scored: Sequence[ScoredAbstract], threshold: float) -> tuple[float, float, float]:
    """(precision, recall, F1) of the similarity selector at ``threshold`` on ``scored``."""
    fit = best_threshold(scored, [threshold])
    return fit.precision, fit.recall, fit.f1


def label_counts(pairs: Sequence[Pair]) -> dict[str, int]:
    """How many pairs carry each stance label."""
    return id_counts([p.label for p in pairs])


def id_counts(labels: Sequence[int]) -> dict[str, int]:
    """How many of ``labels`` (stance label ids) are each stance label."""
    c = Counter(labels)
    return {STANCE_LABELS[i]: c.get(i, 0) for i in range(len(STANCE_LABELS))}


def per_class_f1(gold: Sequence[int], pred: Sequence[int]) -> dict[str, float]:
    """F1 of each stance label (one-vs-rest), rounded."""
    return {STANCE_LABELS[i]: round4(macro_f1(gold, pred, [i])) for i in range(len(STANCE_LABELS))}


def round_tree(x: Any) -> Any:
    """``x`` with every float in it (through nested dicts) rounded by :func:`round4`."""
    if isinstance(x, dict):
        return {k: round_tree(v) for k, v in x.items()}
    if isinstance(x, float):
        return round4(x)
    return x


def fit_temperature(logits: np.ndarray, gold: Sequence[int]) -> float:
    """The temperature ``T`` minimising the negative log-likelihood of ``softmax(logits / T)``
    (a log-spaced grid over [0.05, 20]: one parameter, no optimiser needed)."""
    y = np.asarray(gold, dtype=np.int64)
    best_t, best_nll = 1.0, math.inf
    for t in np.exp(np.linspace(math.log(0.05), math.log(20.0), 601)):
        p = softmax(logits / t)
        nll = float(-np.mean(np.log(np.clip(p[np.arange(len(y)), y], 1e-12, None))))
        if nll < best_nll - 1e-12:
            best_t, best_nll = float(t), nll
    return best_t


def expected_calibration_error(probs: np.ndarray, gold: Sequence[int], bins: int = 10) -> float:
    """Expected calibration error of the top-class confidence (equal-width bins:
    :func:`factscout.evaluate.calibration.expected_calibration_error`)."""
    from factscout.evaluate.calibration import expected_calibration_error as ece

    return ece(probs.max(axis=1), probs.argmax(axis=1) == np.asarray(gold), bins)
