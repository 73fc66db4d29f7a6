"""Claim matching: which published fact-checks check this claim (CheckThat! 2022 task 2A).

Candidates come from two views of the memory, as in the task's stronger runs (Nakov et al.
2022; Hövelmeyer et al. 2022): BM25 (Robertson & Zaragoza 2009; factscout's bm25s retriever)
over title + claim + summary, and dense cosine similarity of all-MiniLM-L6-v2 embeddings
(Reimers & Gurevych 2019), each giving its top ``depth``; the query is the cleaned tweet
(:func:`~.clean.clean_tweet`). Every candidate in the union is scored by a logistic model over
six features (the learned fusion, trained by ``factscout train claim-match`` on CheckThat 2A
train and chosen on dev): BM25 score relative to the query's best and absolute (/20), cosine and
cosine minus the query's best cosine, and the reciprocal ranks of both lists (1/(60+rank),
as in RRF, Cormack et al. 2009). The model's probability is the match score; a match is shown
only at or above the threshold chosen on dev for precision >= 0.9 of the top match.

The weights ship as ``models/claim_match.json`` (:data:`DEFAULT_MODEL`); without them the
matcher falls back to CombSUM of min-max normalised BM25 and cosine (Fox & Shaw 1994).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from factscout.errors import BadModel

FEATURES = ("bm25_rel", "bm25_abs", "cosine", "cosine_gap", "rr_bm25", "rr_dense")
RR_K = 60
DEFAULT_MODEL = Path(__file__).parent / "models" / "claim_match.json"


@dataclass(frozen=True, slots=True)
class MatchModel:
    """A logistic model over :data:`FEATURES`; ``threshold`` is the shown-match cut on its probability.

    With no ``weights`` (the fallback) the score is CombSUM of min-max normalised BM25 and cosine,
    with ``bm25_weight`` on BM25, and ``threshold`` applies to that score."""

    weights: tuple[float, ...] = ()
    bias: float = 0.0
    threshold: float = 0.5
    depth: int = 30
    bm25_weight: float = 0.3
    encoder: str = "minilm"
    metrics: Mapping[str, object] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.weights and len(self.weights) != len(FEATURES):
            raise BadModel(
                f"claim-match model needs {len(FEATURES)} weights ({', '.join(FEATURES)}), got {len(self.weights)}"
            )
        if self.depth < 1:
            raise BadModel(f"claim-match depth must be >= 1, got {self.depth}")

    @property
    def learned(self) -> bool:
        return bool(self.weights)

    def save(self, path: str | os.PathLike[str]) -> None:
        row = asdict(self)
        row["features"] = list(FEATURES)
        Path(path).write_text(json.dumps(row, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike[str] = DEFAULT_MODEL) -> MatchModel:
        """The model at ``path``; the shipped one by default (the fallback when it is absent)."""
        p = Path(path)
        if not p.is_file():
            if p == DEFAULT_MODEL:
                return cls()
            raise BadModel(f"no claim-match model at {p}")
        try:
            row = json.loads(p.read_text())
            if row.pop("features", list(FEATURES)) != list(FEATURES):
                raise ValueError("its features differ from " + ", ".join(FEATURES))
            row["weights"] = tuple(float(w) for w in row.get("weights", ()))
            return cls(**row)
        except (ValueError, TypeError) as exc:
            raise BadModel(f"{p}: not a claim-match model ({exc})") from None


def file_sha256(path: str | os.PathLike[str]) -> str | None:
    p = Path(path)
    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else None


def candidate_features(
    bm25: Mapping[int, float], cosines: np.ndarray, dense_top: Sequence[int]
) -> tuple[list[int], np.ndarray]:
    """The candidate rows (the union of the BM25 hits and the dense top) and their feature matrix.

    ``bm25`` maps a row to its BM25 score; ``cosines`` holds the query's cosine to every row;
    ``dense_top`` lists the dense top rows in rank order."""
    rows = sorted(set(bm25) | set(dense_top))
    if not rows:
        return [], np.zeros((0, len(FEATURES)), dtype=np.float64)
    depth = max(len(bm25), len(dense_top))
    b_rank = {r: i for i, r in enumerate(sorted(bm25, key=lambda r: (-bm25[r], r)))}
    cos = np.asarray([cosines[r] for r in rows], dtype=np.float64)
    d_order = sorted(range(len(rows)), key=lambda i: (-cos[i], rows[i]))
    d_rank = {rows[i]: n for n, i in enumerate(d_order)}
    b_max = max(bm25.values(), default=0.0) or 1.0
    X = np.empty((len(rows), len(FEATURES)), dtype=np.float64)
    for i, r in enumerate(rows):
        b = bm25.get(r, 0.0)
        X[i] = (
            b / b_max,
            b / 20.0,
            cos[i],
            cos[i] - cos.max(),
            1 / (RR_K + b_rank.get(r, depth)),
            1 / (RR_K + d_rank[r]),
        )
    return rows, X


def score_candidates(model: MatchModel, X: np.ndarray) -> np.ndarray:
    """Match scores of a feature matrix: the logistic probability, or the fallback CombSUM."""
    if len(X) == 0:
        return np.zeros(0)
    if model.learned:
        z = X @ np.asarray(model.weights) + model.bias
        return 1.0 / (1.0 + np.exp(-np.clip(z, -50, 50)))
    cos = X[:, 2]
    span = cos.max() - cos.min()
    cos_norm = (cos - cos.min()) / span if span > 0 else np.ones_like(cos)
    return np.asarray(model.bm25_weight * X[:, 0] + (1 - model.bm25_weight) * cos_norm)
