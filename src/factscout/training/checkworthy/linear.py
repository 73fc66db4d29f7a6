"""Fit the linear check-worthiness model (:class:`~factscout.claims.checkworthy.LinearCheckworthy`):
two L2-regularised logistic regressions (scikit-learn, lbfgs) over ``[MiniLM embedding, scaled
surface features]``: check-worthy against the rest on every training sentence, and non-factual
against unimportant factual on the sentences with a three-way label that are not check-worthy.

Sentences are weighted so each training part counts as ``part_weights`` says (default: each part
by its size, except CheckThat! 2021 1B transcripts, whose 1%-positive lines would otherwise
outweigh the rest and whose negatives include many factual claims no fact-checker picked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from factscout.claims.checkworthy import LinearCheckworthy, surface_features
from factscout.datasets.checkworthy import NON_FACTUAL, UNIMPORTANT_FACTUAL, CheckworthySentence


def sample_weights(sentences: Sequence[CheckworthySentence], part_weights: Mapping[str, float]) -> np.ndarray:
    """Per-sentence weights: a dataset named in ``part_weights`` gets that total weight relative to
    its size (1.0: as many as it has sentences; 0.5: half), spread evenly over its sentences."""
    out = np.ones(len(sentences), dtype=np.float64)
    for dataset, factor in part_weights.items():
        idx = [i for i, s in enumerate(sentences) if s.dataset == dataset]
        out[idx] = float(factor)
    return out


def fit_linear(
    sentences: Sequence[CheckworthySentence],
    embeddings: np.ndarray,
    *,
    c: float = 1.0,
    part_weights: Mapping[str, float] | None = None,
    three_way: bool = True,
    seed: int = 13,
    info: Mapping[str, object] | None = None,
) -> LinearCheckworthy:
    """The fitted model (threshold 0.5; the trainer sets the dev-chosen one)."""
    from sklearn.linear_model import LogisticRegression

    texts = [s.text for s in sentences]
    surface = surface_features(texts)
    mean = surface.mean(axis=0)
    std = surface.std(axis=0)
    std = np.where(std > 1e-6, std, 1.0).astype(np.float32)
    x = np.hstack([np.asarray(embeddings, dtype=np.float32), (surface - mean) / std])
    weights = sample_weights(sentences, part_weights or {})
    y = np.array([s.checkworthy for s in sentences], dtype=np.int64)
    worthy = LogisticRegression(C=c, max_iter=3000, random_state=seed).fit(x, y, sample_weight=weights)
    factual = None
    if three_way:
        idx = [i for i, s in enumerate(sentences) if s.label in (NON_FACTUAL, UNIMPORTANT_FACTUAL)]
        if idx:
            yf = np.array([sentences[i].label == NON_FACTUAL for i in idx], dtype=np.int64)
            model = LogisticRegression(C=c, max_iter=3000, random_state=seed).fit(
                x[idx], yf, sample_weight=weights[idx]
            )
            factual = (model.coef_[0].astype(np.float32), float(model.intercept_[0]))
    return LinearCheckworthy(
        (worthy.coef_[0].astype(np.float32), float(worthy.intercept_[0])),
        factual,
        (mean.astype(np.float32), std),
        info=dict(info or {}),
    )
