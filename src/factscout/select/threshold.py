"""Sentence selection by an embedding-similarity threshold (Quin+).

Quin+ (Samarinas, Hsu & Lee 2021, "Improving Evidence Retrieval for Automated Explainable
Fact-Checking", NAACL demos) keeps, from each retrieved passage, the sentences whose dense
embedding is close enough to the claim's: cosine similarity >= a threshold. The embeddings are
sentence embeddings (SBERT; Reimers & Gurevych 2019), here all-MiniLM-L6-v2 by default.

The threshold is tuned, not guessed: :func:`tune_threshold` picks the one that maximises
micro sentence-level F1 against SciFact rationale sentences (Wadden et al. 2020) over the cited
abstracts of the training claims that have evidence, and :func:`cross_validate_threshold`
reports that F1 on claims not used for tuning. :data:`DEFAULT_THRESHOLD` is the value tuned on
all SciFact train claims (figures in ``factscout/verify/models/MODEL_CARD.md``).
"""

from __future__ import annotations

import random
from collections.abc import Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.encoding import CachingEncoder
from factscout.records import Claim, Passage, Sentence
from factscout.select.base import register_selector
from factscout.text.encoder import embed_fn

# Tuned on all 809 SciFact train claims: micro sentence F1 0.418 (P 0.307, R 0.654); two-fold
# cross-validated F1 0.412 (MODEL_CARD.md, "Sentence selection"; `factscout train stance` reproduces it).
DEFAULT_THRESHOLD = 0.54
THRESHOLD_GRID: tuple[float, ...] = tuple(round(0.05 + 0.01 * i, 2) for i in range(91))  # 0.05 .. 0.95


@dataclass(frozen=True, slots=True)
class PRF:
    """Precision, recall and F1."""

    precision: float
    recall: float
    f1: float


def sentence_prf(predicted: Iterable[Hashable], gold: Iterable[Hashable]) -> PRF:
    """Sentence-level precision, recall and F1 of a set of selected sentences against gold rationales.

    Items are any hashable sentence keys, e.g. ``(claim_id, doc_id, index)`` to micro-average
    over many claims. Duplicates count once. With nothing predicted, precision is 0; with no
    gold sentence, recall is 0; F1 is 0 when precision + recall is 0.
    """
    pred, true = set(predicted), set(gold)
    tp = len(pred & true)
    p = tp / len(pred) if pred else 0.0
    r = tp / len(true) if true else 0.0
    return PRF(p, r, 2 * p * r / (p + r) if p + r else 0.0)


class ThresholdSelector:
    """Keep the sentences whose cosine similarity to the claim is >= ``threshold`` (Quin+).

    ``encoder`` is an object with ``encode(texts) -> (n, d)`` L2-normalised embeddings (default:
    factscout's offline MiniLM :class:`~factscout.text.encoder.Encoder`, loaded on first
    use) or such a function. Rows are normalised again here, so any embedding function works.
    """

    def __init__(self, threshold: float = DEFAULT_THRESHOLD, encoder: Any = None) -> None:
        if not isinstance(threshold, int | float) or not -1.0 <= threshold <= 1.0:
            raise InputError(f"a cosine threshold must be a number in [-1, 1], got {threshold!r}")
        self.threshold = float(threshold)
        self._encoder = encoder

    @property
    def encoder(self) -> Any:
        if self._encoder is None:
            from factscout.text.encoder import Encoder

            self._encoder = Encoder()
        return self._encoder

    def scores(self, claim_text: str, sentences: Sequence[str]) -> np.ndarray:
        """Cosine similarity of each sentence to the claim (one encoder batch)."""
        if not isinstance(claim_text, str) or not claim_text.strip():
            raise InputError(f"selection needs a non-empty claim text, got {claim_text!r}")
        if isinstance(sentences, str):
            raise InputError("sentences must be a sequence of strings, not one string")
        if not sentences:
            return np.zeros(0, dtype=np.float32)
        vectors = _normalise(embed_fn(self.encoder)([claim_text, *sentences]))
        out: np.ndarray = vectors[1:] @ vectors[0]
        return out

    def select(self, claim_text: str, passage_id: str, sentences: Sequence[str]) -> list[Sentence]:
        """The sentences of passage ``passage_id`` at or above the threshold, in passage order,
        each with its cosine similarity as ``score``."""
        sims = self.scores(claim_text, sentences)
        return [
            Sentence(passage_id, i, text, float(s))
            for i, (text, s) in enumerate(zip(sentences, sims, strict=True))
            if s >= self.threshold
        ]

    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]:
        """:meth:`select` over a passage's text split with :func:`factscout.text.sentences.sentences_of`."""
        from factscout.text.sentences import sentences_of

        return self.select(claim.text, passage.passage_id, sentences_of(passage.text))


@register_selector("threshold")
def _threshold_selector(encoder: Any = None, threshold: float | None = None) -> ThresholdSelector:
    """``threshold``: the cosine cut (``None``: :data:`DEFAULT_THRESHOLD`)."""
    return ThresholdSelector(DEFAULT_THRESHOLD if threshold is None else threshold, encoder=encoder)


def _normalise(vectors: np.ndarray) -> np.ndarray:
    v = np.asarray(vectors, dtype=np.float32)
    if v.ndim != 2:
        raise InputError(f"an embedding function must return a 2-d array, got shape {v.shape}")
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    out: np.ndarray = v / np.maximum(norms, 1e-12)
    return out


# --- tuning on rationale-annotated data ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ScoredAbstract:
    """The claim-similarity of every sentence of one abstract cited by a claim, with the gold
    rationale indices (empty when the abstract is cited but is not evidence)."""

    claim_id: str
    doc_id: str
    scores: tuple[float, ...]
    gold: frozenset[int]


@dataclass(frozen=True, slots=True)
class ThresholdFit:
    """A tuned threshold and the micro sentence-level P/R/F1 it reaches."""

    threshold: float
    precision: float
    recall: float
    f1: float


def score_abstracts(
    claims: Iterable[Claim], abstracts: Mapping[str, Sequence[str]], *, encoder: Any = None
) -> list[ScoredAbstract]:
    """Score every sentence of the cited abstracts of each SciFact-style claim that has evidence.

    Claims carry ``meta['evidence']`` (``{doc_id: [{"sentences": [...], ...}]}``) and
    ``meta['cited_doc_ids']``; claims without evidence (NEI) are skipped. Encoding uses the
    encoder's on-disk cache when it has one (``encode_cached``).
    """
    pairs: list[tuple[Claim, str, frozenset[int]]] = []
    for claim in claims:
        evidence = claim.meta.get("evidence") or {}
        if not evidence:
            continue
        cited = list(dict.fromkeys([*claim.meta.get("cited_doc_ids", []), *evidence]))
        for doc_id in cited:
            if doc_id not in abstracts:
                raise InputError(f"claim {claim.claim_id!r} cites {doc_id!r}, which is not among the abstracts")
            gold = frozenset(i for ev in evidence.get(doc_id, []) for i in ev["sentences"])
            pairs.append((claim, doc_id, gold))
    if not pairs:
        return []
    enc = encoder if encoder is not None else ThresholdSelector().encoder
    claim_texts = list(dict.fromkeys(c.text for c, _, _ in pairs))
    doc_ids = list(dict.fromkeys(d for _, d, _ in pairs))
    sentences = [s for d in doc_ids for s in abstracts[d]]
    encode = enc.encode_cached if isinstance(enc, CachingEncoder) else embed_fn(enc)
    claim_vecs = dict(zip(claim_texts, _normalise(encode(claim_texts)), strict=True))
    sent_vecs = _normalise(encode(sentences)) if sentences else np.zeros((0, 1), dtype=np.float32)
    offsets: dict[str, tuple[int, int]] = {}
    start = 0
    for d in doc_ids:
        offsets[d] = (start, start + len(abstracts[d]))
        start += len(abstracts[d])
    out = []
    for claim, doc_id, gold in pairs:
        lo, hi = offsets[doc_id]
        sims = sent_vecs[lo:hi] @ claim_vecs[claim.text]
        out.append(ScoredAbstract(claim.claim_id, doc_id, tuple(float(s) for s in sims), gold))
    return out


def _prf_at(scored: Sequence[ScoredAbstract], threshold: float) -> PRF:
    predicted = [(a.claim_id, a.doc_id, i) for a in scored for i, s in enumerate(a.scores) if s >= threshold]
    gold = [(a.claim_id, a.doc_id, i) for a in scored for i in a.gold]
    return sentence_prf(predicted, gold)


def best_threshold(scored: Sequence[ScoredAbstract], grid: Sequence[float] = THRESHOLD_GRID) -> ThresholdFit:
    """The grid threshold with the highest micro sentence-level F1 (ties: the lowest threshold)."""
    if not scored:
        raise InputError("threshold tuning needs at least one scored abstract")
    if not grid:
        raise InputError("threshold tuning needs a non-empty grid")
    fits = [ThresholdFit(float(t), *_astuple(_prf_at(scored, t))) for t in sorted(grid)]
    top = max(f.f1 for f in fits)
    return next(f for f in fits if f.f1 >= top - 1e-12)


def _astuple(prf: PRF) -> tuple[float, float, float]:
    return prf.precision, prf.recall, prf.f1


def tune_threshold(
    claims: Iterable[Claim],
    abstracts: Mapping[str, Sequence[str]],
    *,
    encoder: Any = None,
    grid: Sequence[float] = THRESHOLD_GRID,
) -> ThresholdFit:
    """The threshold maximising micro sentence-level F1 of :class:`ThresholdSelector` on the
    rationales of ``claims`` (SciFact-style, see :func:`score_abstracts`)."""
    return best_threshold(score_abstracts(claims, abstracts, encoder=encoder), grid)


@dataclass(frozen=True, slots=True)
class ThresholdCv:
    """Two-fold cross-validation of the threshold: each half tunes, the other half scores."""

    thresholds: tuple[float, float]
    f1: tuple[float, float]
    precision: tuple[float, float]
    recall: tuple[float, float]

    @property
    def mean_f1(self) -> float:
        return sum(self.f1) / 2


def cross_validate_threshold(
    scored: Sequence[ScoredAbstract], *, seed: int = 0, grid: Sequence[float] = THRESHOLD_GRID
) -> ThresholdCv:
    """Split the claims in two halves (seeded shuffle of claim ids), tune on one, score the other,
    and the other way round."""
    claim_ids = sorted({a.claim_id for a in scored})
    if len(claim_ids) < 2:
        raise InputError("cross-validation needs scored abstracts of at least two claims")
    random.Random(seed).shuffle(claim_ids)
    half: Collection[str] = set(claim_ids[: len(claim_ids) // 2])
    folds = ([a for a in scored if a.claim_id in half], [a for a in scored if a.claim_id not in half])
    ts, fs, ps, rs = [], [], [], []
    for tune_on, score_on in (folds, folds[::-1]):
        fit = best_threshold(tune_on, grid)
        prf = _prf_at(score_on, fit.threshold)
        ts.append(fit.threshold)
        fs.append(prf.f1)
        ps.append(prf.precision)
        rs.append(prf.recall)
    return ThresholdCv((ts[0], ts[1]), (fs[0], fs[1]), (ps[0], ps[1]), (rs[0], rs[1]))
