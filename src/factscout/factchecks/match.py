"""Claim matching: which published fact-checks check this claim (CheckThat! 2022 task 2A).

Candidates come from two views of the memory, as in the task's stronger runs (Nakov et al.
2022; Hövelmeyer et al. 2022): BM25 (Robertson & Zaragoza 2009; factscout's bm25s retriever)
over title + claim + summary, and dense cosine similarity of all-MiniLM-L6-v2 embeddings
(Reimers & Gurevych 2019), each giving its top ``depth``; the query is the cleaned tweet
(:func:`~.clean.clean_tweet`). Every candidate in the union is scored by a logistic model over
eleven features (the learned fusion, trained by ``factscout train claim-match`` on CheckThat 2A
train and chosen on dev): BM25 score relative to the query's best and absolute (/20), cosine and
cosine minus the query's best cosine, the reciprocal ranks of both lists (1/(60+rank), as in
RRF, Cormack et al. 2009); the time between the claim's date (a tweet's embed-signature date,
or the date given with the claim) and the fact-check's publication (log days, and whether it was
published within :data:`SOON` of the claim: fact-checkers answer viral claims within days); and
the Jaccard overlap and coverage of content words between the claim and the fact-check's
title + claim. The model's probability is the match score; a match is shown
only at or above the threshold chosen on dev for precision >= 0.9 of the top match.

The weights ship as ``models/claim_match.json`` (:data:`DEFAULT_MODEL`); without them the
matcher falls back to CombSUM of min-max normalised BM25 and cosine (Fox & Shaw 1994).
"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from factscout.errors import BadModel

FEATURES = (
    "bm25_rel",
    "bm25_abs",
    "cosine",
    "cosine_gap",
    "rr_bm25",
    "rr_dense",
    "both_dated",
    "log_day_gap",
    "checked_soon_after",
    "word_jaccard",
    "word_cover",
)
SOON = (-3, 60)  # a fact-check published from 3 days before to 60 days after the claim's date
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "to",
        "in",
        "and",
        "is",
        "was",
        "for",
        "on",
        "that",
        "this",
        "with",
        "as",
        "are",
        "be",
        "by",
        "at",
        "it",
        "from",
        "has",
        "have",
        "not",
        "will",
        "his",
        "her",
        "they",
        "he",
        "she",
        "you",
        "we",
        "i",
        "our",
        "your",
        "their",
    ]
)
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


def content_words(text: str) -> frozenset[str]:
    """Lower-cased words of two or more characters, without the commonest English function words."""
    return frozenset(w for w in _WORD.findall(text.lower()) if len(w) > 1 and w not in _STOP)


def candidate_features(
    bm25: Mapping[int, float],
    cosines: Mapping[int, float] | np.ndarray,
    dense_top: Sequence[int],
    *,
    query_date: dt.date | None = None,
    query_words: frozenset[str] = frozenset(),
    record_dates: Sequence[dt.date | None] | None = None,
    record_words: Callable[[int], frozenset[str]] | None = None,
) -> tuple[list[int], np.ndarray]:
    """The candidate rows (the union of the BM25 hits and the dense top) and their feature matrix.

    ``bm25`` maps a row to its BM25 score; ``cosines`` gives the query's cosine for each row;
    ``dense_top`` lists the dense top rows in rank order; ``record_dates[row]`` and
    ``record_words(row)`` give a record's publication date and content words."""
    rows = sorted(set(bm25) | set(dense_top))
    if not rows:
        return [], np.zeros((0, len(FEATURES)), dtype=np.float64)
    depth = max(len(bm25), len(dense_top))
    b_rank = {r: i for i, r in enumerate(sorted(bm25, key=lambda r: (-bm25[r], r)))}
    cos = np.asarray([cosines[r] for r in rows], dtype=np.float64)
    d_order = sorted(range(len(rows)), key=lambda i: (-cos[i], rows[i]))
    d_rank = {rows[i]: n for n, i in enumerate(d_order)}
    b_max = max(bm25.values(), default=0.0) or 1.0
    X = np.zeros((len(rows), len(FEATURES)), dtype=np.float64)
    for i, r in enumerate(rows):
        b = bm25.get(r, 0.0)
        X[i, :6] = (
            b / b_max,
            b / 20.0,
            cos[i],
            cos[i] - cos.max(),
            1 / (RR_K + b_rank.get(r, depth)),
            1 / (RR_K + d_rank[r]),
        )
        published = record_dates[r] if record_dates is not None else None
        if query_date is not None and published is not None:
            days = (published - query_date).days
            X[i, 6:9] = (1.0, math.log1p(abs(days)) / 5, float(SOON[0] <= days <= SOON[1]))
        if record_words is not None and query_words:
            words = record_words(r)
            shared = len(query_words & words)
            X[i, 9:11] = (shared / max(1, len(query_words | words)), shared / max(1, len(words)))
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
