"""How a check-worthiness model is measured: F1 of the check-worthy class at a threshold, the
threshold that maximises it, and for transcripts the lab's ranking measures (CheckThat! 2021 1B:
each transcript a query, its check-worthy lines the relevant documents; MAP, RR and P@k averaged
over transcripts), all through :mod:`factscout.evaluate`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from factscout.datasets.checkworthy import CheckworthySentence
from factscout.evaluate.classification import per_class_f1
from factscout.evaluate.metrics import evaluate

RANKING_MEASURES = ("AP", "RR", "P@1", "P@3", "P@5", "P@10", "P@20", "P@30")
"""CheckThat! 2021 1B's measures (MAP, the lab's main one, is the mean of AP over transcripts)."""


def f1_at(gold: Sequence[bool], probability: np.ndarray, threshold: float) -> float:
    """F1 of the check-worthy class with ``probability >= threshold`` called check-worthy."""
    predicted = [bool(p >= threshold) for p in np.asarray(probability)]
    return float(per_class_f1(list(map(bool, gold)), predicted, labels=[True])[True])


def precision_recall_at(gold: Sequence[bool], probability: np.ndarray, threshold: float) -> tuple[float, float]:
    g = np.asarray(gold, dtype=bool)
    p = np.asarray(probability) >= threshold
    tp = float((g & p).sum())
    return (tp / p.sum() if p.sum() else 0.0), (tp / g.sum() if g.sum() else 0.0)


def candidate_thresholds(probabilities: Sequence[np.ndarray]) -> np.ndarray:
    """Thresholds worth trying: a grid plus the quantiles of the probabilities seen."""
    seen = np.concatenate([np.asarray(p, dtype=np.float64) for p in probabilities]) if probabilities else np.zeros(0)
    grid = np.linspace(0.02, 0.98, 97)
    quantiles = np.quantile(seen, np.linspace(0.01, 0.99, 99)) if len(seen) else np.zeros(0)
    return np.unique(np.clip(np.concatenate([grid, quantiles]), 1e-4, 1 - 1e-4))


def best_threshold(
    gold: Mapping[str, Sequence[bool]], probability: Mapping[str, np.ndarray]
) -> tuple[float, float, dict[str, float]]:
    """``(threshold, mean F1, F1 per set)``: the one threshold maximising the unweighted mean of
    the check-worthy F1 over the given dev sets (ties: the threshold nearest 0.5)."""
    names = list(gold)
    best: tuple[float, float, float, dict[str, float]] | None = None
    for t in candidate_thresholds([probability[n] for n in names]):
        per = {n: f1_at(gold[n], probability[n], float(t)) for n in names}
        mean = float(np.mean(list(per.values())))
        key = (round(mean, 6), -abs(float(t) - 0.5))
        if best is None or key > (round(best[1], 6), -abs(best[0] - 0.5)):
            best = (float(t), mean, 0.0, per)
    assert best is not None
    return best[0], best[1], best[3]


def ranking_scores(sentences: Sequence[CheckworthySentence], probability: np.ndarray) -> dict[str, float]:
    """The lab's ranking measures (:data:`RANKING_MEASURES`; AP and RR averaged over transcripts, reported as MAP and MRR) with each
    transcript (``debate``) a query; transcripts without a check-worthy line are not scored (none: no measures)."""
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for s, p in zip(sentences, np.asarray(probability, dtype=np.float64), strict=True):
        group = s.debate or s.dataset
        qrels.setdefault(group, {})[s.sentence_id] = int(s.checkworthy)
        run.setdefault(group, {})[s.sentence_id] = float(p)
    judged = [q for q, docs in qrels.items() if any(docs.values())]
    if not judged:
        return {}
    means = evaluate(qrels, run, list(RANKING_MEASURES), queries=judged).means()
    return {("MAP" if k == "AP" else k): float(v) for k, v in means.items()}


def summary(
    sentences: Sequence[CheckworthySentence], probability: np.ndarray, threshold: float, *, ranking: bool = False
) -> dict[str, float]:
    """F1 / precision / recall of the check-worthy class at ``threshold``, the best F1 any
    threshold reaches on this set (an oracle, for reference) and, with ``ranking``, the lab's
    ranking measures."""
    gold = [s.checkworthy for s in sentences]
    precision, recall = precision_recall_at(gold, probability, threshold)
    oracle = max(f1_at(gold, probability, float(t)) for t in candidate_thresholds([probability]))
    out = {
        "sentences": float(len(gold)),
        "check-worthy": float(sum(gold)),
        "F1": f1_at(gold, probability, threshold),
        "precision": precision,
        "recall": recall,
        "oracle F1": oracle,
    }
    if ranking:
        out.update(ranking_scores(sentences, probability))
    return out
