"""What the candidate ranker reads of the passages an endpoint returns: how close they are, in
meaning, to the claim.

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
``lexical`` (:class:`LexicalEncoder`): the words the claim and the passage share, or
``lexical-idf`` (:class:`IdfLexicalEncoder`): the same, each word weighted by its idf in the
searched corpus, so that sharing a rare word counts more than sharing a common one (what a BM25
engine would see).

Cost: one encoding per distinct returned passage, cached for the policy's life
(:class:`PassageVectors`), and one per claim. :meth:`PassageVectors.prime` encodes a whole corpus
at once through the on-disk embedding cache (what training and the benchmarks do).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.encoding import SentenceEncoder
from factscout.records import Passage, PassageLookup

DEPTH = 10  # returned passages read per candidate (a search page)
SUMMARIES = ("cos top 1", "cos top 3", "cos top 10", "max cos top 10", "cos rank-discounted")
AGREEMENT_FEATURES = (*SUMMARIES, *(f"{s} - claim's" for s in SUMMARIES))
_DISCOUNT = 1.0 / np.log2(np.arange(DEPTH) + 2.0)


LEXICAL = "lexical"  # RankerConfig.semantic: judge by shared words instead of a sentence encoder
LEXICAL_IDF = "lexical-idf"  # the same, words weighted by their idf in the searched corpus


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


class IdfLexicalEncoder:
    """Unit vectors of the standard-analyzer terms of a text (stop words dropped), each term
    weighted by its idf in ``idf`` (a :class:`~.keywords.IdfTable`: the searched corpus's) times
    ``1 + ln(tf)``, hashed into ``dim`` buckets: their cosine is a TF-IDF cosine. A term absent
    from the corpus weighs 0. Nothing to fit beyond the idf table the ranker already ships."""

    def __init__(self, idf: Any, dim: int = 4096) -> None:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        self.idf = idf
        self.dim = dim
        self._stop = ENGLISH_STOP_WORDS
        self._bucket: dict[str, int] = {}

    def _index(self, term: str) -> int:
        b = self._bucket.get(term)
        if b is None:
            from sklearn.utils import murmurhash3_32

            b = self._bucket[term] = murmurhash3_32(term, positive=True) % self.dim
        return b

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        from factscout.retrieve.standard_analyzer import standard_tokens

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for r, text in enumerate(texts):
            counts: dict[str, int] = {}
            for t in standard_tokens(text):
                if t not in self._stop:
                    counts[t] = counts.get(t, 0) + 1
            for t, tf in counts.items():
                out[r, self._index(t)] += self.idf.idf(t) * (1.0 + np.log(tf))
            norm = float(np.linalg.norm(out[r]))
            if norm > 0:
                out[r] /= norm
        return out


def agreement_encoder(name: str, idf: Any = None) -> Any:
    """The judge a ranker config names: ``lexical``, ``lexical-idf`` (needs ``idf``, the searched
    corpus's :class:`~.keywords.IdfTable`), or a sentence encoder's name (``minilm``...)."""
    if name == LEXICAL:
        return LexicalEncoder()
    if name == LEXICAL_IDF:
        if idf is None:
            raise InputError("the lexical-idf judge needs the searched corpus's idf table")
        return IdfLexicalEncoder(idf)
    from factscout.retrieve.adapter import make_encoder

    return make_encoder(name)


class PassageVectors:
    """Unit vectors of passages by id (from ``lookup``: a dict or a retriever's store), each
    encoded once by ``encoder`` (any object with ``encode(texts)`` returning unit vectors)."""

    def __init__(self, lookup: PassageLookup, encoder: Any) -> None:
        if not isinstance(encoder, SentenceEncoder):
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
    return _with_gain_over_claim(rows)


def _with_gain_over_claim(rows: np.ndarray) -> np.ndarray:
    """``rows`` (one per candidate, the claim first) beside each row minus the claim's, as float32."""
    base = rows[0] if len(rows) else np.zeros(rows.shape[1])
    return np.concatenate([rows, rows - base], axis=1).astype(np.float32)


# ---------------------------------------------------------------- consensus among the candidates

CONSENSUS_DEPTH = 50  # results of each candidate fused (the depth the reward, AP@50, reads)
_CONSENSUS_SUMMARIES = ("consensus top 1", "consensus top 10", "consensus rank-discounted", "fused top 10 found")
CONSENSUS_FEATURES = (*_CONSENSUS_SUMMARIES, *(f"{s} - claim's" for s in _CONSENSUS_SUMMARIES))
_RRF_K = 60.0


def consensus_features(returned: Sequence[Sequence[str]]) -> np.ndarray:
    """(len(returned), len(CONSENSUS_FEATURES)): how much each candidate's results agree with what
    all the candidates of the claim find together. The candidates' top :data:`CONSENSUS_DEPTH`
    rankings are fused by reciprocal rank (``sum 1 / (60 + rank)``, scaled so the best fused
    passage scores 1); a candidate is summarised by the fused score of its top passage, the mean
    over its top 10 and a rank-discounted mean, and the share of the fused top 10 in its own top 10;
    then each minus the claim's (the first candidate). A passage that many rewrites of a claim
    find is more likely about it (query-variation fusion), so a candidate whose top results are
    those passages is predicted to do well. It reads only the rankings: no text, no qrel."""
    fused: dict[str, float] = {}
    for ids in returned:
        for rank, pid in enumerate(ids[:CONSENSUS_DEPTH]):
            fused[pid] = fused.get(pid, 0.0) + 1.0 / (_RRF_K + rank + 1)
    rows = np.zeros((len(returned), len(_CONSENSUS_SUMMARIES)), dtype=np.float64)
    if fused:
        best = max(fused.values())
        fused_top = set(sorted(fused, key=lambda p: (-fused[p], p))[:DEPTH])
        for r, ids in enumerate(returned):
            top = list(ids[:DEPTH])
            if not top:
                continue
            score = np.array([fused[p] for p in top]) / best
            w = _DISCOUNT[: len(score)]
            rows[r] = (score[0], score.mean(), (score * w).sum() / w.sum(), len(fused_top.intersection(top)) / DEPTH)
    return _with_gain_over_claim(rows)
