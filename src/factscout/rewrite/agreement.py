"""What the candidate ranker reads of the passages an endpoint returns: how close they are, in
meaning, to the claim (issue 17).

A searcher judges a candidate query by reading what it finds. The ranker's endpoint features
(:func:`~.ranker.candidate_features`: result counts, BM25 scores, overlap with the claim's results)
say how *much* a query finds and how sure the engine is, but not whether what it finds is about
the claim. These features do: the cosine similarity, in a sentence encoder's space (all-MiniLM-L6-v2
by default), between the claim and each of the candidate's top ``DEPTH`` returned passages,
summarised as the top-1, top-3 and top-10 means, the maximum and a rank-discounted mean; and each
of these minus the claim's own (the first candidate), so the trees see whether a rewrite finds
passages closer to the claim than the claim does.

It is a query-performance predictor with the encoder as judge; the rewrite it picks is still
searched by the endpoint alone, whose ranking is what is scored. It never reads a qrel.

The judge should see what the endpoint does not. For BM25 endpoints that is meaning (MiniLM).
For a dense endpoint, MiniLM cosines to the claim are the endpoint's own scores (the claim's
nearest neighbours are, by construction, the passages closest to it), so the judge there is
``lexical`` (:class:`LexicalEncoder`): the words the claim and the passage share.

Cost: one encoding per distinct returned passage, cached for the policy's life
(:class:`PassageVectors`), and one per claim. :meth:`PassageVectors.prime` encodes a whole corpus
at once through the on-disk embedding cache (what training and the benchmarks do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.records import Passage, PassageLookup

DEPTH = 10  # returned passages read per candidate (a search page)
SUMMARIES = ("cos top 1", "cos top 3", "cos top 10", "max cos top 10", "cos rank-discounted")
AGREEMENT_FEATURES = (*SUMMARIES, *(f"{s} - claim's" for s in SUMMARIES))
_DISCOUNT = 1.0 / np.log2(np.arange(DEPTH) + 2.0)


LEXICAL = "lexical"  # RankerConfig.semantic: judge by shared words instead of a sentence encoder


class LexicalEncoder:
    """Unit vectors of the words of a text (lowercased, English stop words dropped, hashed into
    ``dim`` buckets by scikit-learn's ``HashingVectorizer``, each word counted once): their cosine
    is the share of words two texts have in common. Stateless: no vocabulary to fit or ship."""

    def __init__(self, dim: int = 4096) -> None:
        from sklearn.feature_extraction.text import HashingVectorizer

        self.dim = dim
        self._vectorizer = HashingVectorizer(
            n_features=dim, stop_words="english", alternate_sign=False, norm="l2", binary=True
        )

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return np.asarray(self._vectorizer.transform(list(texts)).toarray(), dtype=np.float32)


def agreement_encoder(name: str) -> Any:
    """The judge a ranker config names: ``lexical``, or a sentence encoder's name (``minilm``...)."""
    if name == LEXICAL:
        return LexicalEncoder()
    from factscout.retrieve.adapter import make_encoder

    return make_encoder(name)


class PassageVectors:
    """Unit vectors of passages by id (from ``lookup``: a dict or a retriever's store), each
    encoded once by ``encoder`` (any object with ``encode(texts)`` returning unit vectors)."""

    def __init__(self, lookup: PassageLookup, encoder: Any) -> None:
        if not callable(getattr(encoder, "encode", None)):
            raise InputError(f"PassageVectors needs an encoder with encode(texts), got {type(encoder).__name__}")
        self.lookup = lookup
        self.encoder = encoder
        self._vectors: dict[str, np.ndarray] = {}

    def prime(self, passages: Sequence[Passage]) -> None:
        """Encode ``passages`` in one go, through the on-disk embedding cache when the encoder has
        one (``encode_cached``)."""
        todo = [p for p in passages if p.passage_id not in self._vectors]
        if not todo:
            return
        encode = getattr(self.encoder, "encode_cached", self.encoder.encode)
        for p, v in zip(todo, np.asarray(encode([p.contents for p in todo])), strict=True):
            self._vectors[p.passage_id] = v

    def __call__(self, ids: Sequence[str]) -> np.ndarray:
        """(len(ids), dim) vectors, encoding the passages not seen before."""
        missing = list(dict.fromkeys(i for i in ids if i not in self._vectors))
        if missing:
            try:
                texts = [self.lookup[i].contents for i in missing]
            except KeyError as exc:
                raise InputError(f"the endpoint returned passage {exc} that its store does not hold") from None
            for i, v in zip(missing, np.asarray(self.encoder.encode(texts)), strict=True):
                self._vectors[i] = v
        if not ids:
            return np.zeros((0, 0), dtype=np.float32)
        return np.stack([self._vectors[i] for i in ids])

    def embed(self, text: str) -> np.ndarray:
        """The unit vector of a claim."""
        return np.asarray(self.encoder.encode([text]))[0]


def agreement_features(claim: np.ndarray, returned: Sequence[Sequence[str]], vectors: PassageVectors) -> np.ndarray:
    """(len(returned), len(AGREEMENT_FEATURES)): for each candidate's returned ids (best first;
    the first candidate is the claim), the :data:`SUMMARIES` of the cosines between ``claim``
    (a unit vector) and its top :data:`DEPTH` passages (zeros when it found nothing), then each
    minus the claim's."""
    rows = np.zeros((len(returned), len(SUMMARIES)), dtype=np.float64)
    for r, ids in enumerate(returned):
        top = list(ids[:DEPTH])
        if not top:
            continue
        cos = vectors(top) @ claim
        w = _DISCOUNT[: len(cos)]
        rows[r] = (cos[0], cos[:3].mean(), cos.mean(), cos.max(), (cos * w).sum() / w.sum())
    base = rows[0] if len(rows) else np.zeros(len(SUMMARIES))
    return np.concatenate([rows, rows - base], axis=1).astype(np.float32)
