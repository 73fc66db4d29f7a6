"""A query generator trained on gold sub-questions, on a CPU, in about two minutes.

No sequence-to-sequence model ships offline here (shared/MODELS.md), so this generator does not
write free text. It learns, from (claim, gold sub-questions) pairs, **which parts of a claim
fact-checkers ask about and which of those parts find the evidence**, and writes them as
keyword queries: a learned *span-selection* model over candidate sub-queries, in the spirit of
overgenerate-and-rank question generation (Heilman & Smith 2010, "Good Question! Statistical
Ranking for Question Generation", NAACL), with a retrieval-augmented signal from the nearest
training claims (as retrieval-augmented generation conditions on similar examples, Lewis et al.
2020; here the neighbours' gold questions vote on which of the new claim's words matter).

Why not transfer the neighbours' questions themselves: on AVeriTeC a neighbour's gold questions,
even with the neighbour's own words removed, *lower* BM25 recall (they pull in the neighbour's
evidence, and question words are noise to BM25), while the gold questions restricted to the
claim's own words keep much of the oracle's gain (R@100 0.651 vs 0.614 for the claim alone).
So the generator chooses among the claim's own words; what it learns is the choice.

Training (``QueryGenerator.fit``), seeded and deterministic:

1. Every training claim is indexed for neighbour search (TF-IDF over stemmed words, cosine;
   no torch needed) with the stems of its gold questions.
2. **Token model** (logistic regression, numpy + L-BFGS): for each content word of a training
   claim, does one of the claim's gold questions use it? Features: part of speech, entity type,
   dependency role (spaCy parse), position, inverse document frequency over the training
   claims, and the *neighbour vote* (the similarity-weighted share of the 10 nearest other
   training claims whose questions use the word; a claim never votes for itself).
3. **Candidate model** (logistic regression on soft labels): the candidates are the aspects of
   :mod:`factscout.plan.decompose` (halves, leave-one-part-out, topic, clauses, quantities,
   dates, entity pairs) and every run of one to three adjacent phrases (about 28 per claim).
   Features aggregate the token model's probabilities over the candidate and over what it
   leaves out, its length, coverage, contents (names, numbers, dates, verbs), position,
   neighbour vote and aspect kind. With an :class:`EvidencePool` (the default training uses
   AVeriTeC's gold answers), a candidate's label is the share of the claim's gold evidence its
   BM25 top 100 finds plus the share it finds beyond the claim's own top 100: the model learns
   which sub-queries retrieve the answers to the gold sub-questions. Without evidence the label
   is the token F1 between the candidate and the claim words of the best-matching gold question.

Generation scores a new claim's candidates and keeps the best with a redundancy penalty
(maximal marginal relevance, Carbonell & Goldstein 1998), after the claim itself.

The shipped model (``models/qgen.json``, 4 kB: the two weight vectors, the settings and the
sources to rebuild the rest, see ``models/MODEL_CARD.md``) was trained on AVeriTeC train,
ClaimDecomp dev and QuanTemp test questions, with AVeriTeC's answers as evidence. Its neighbour
index is rebuilt from ``../shared/data`` when it loads (about two seconds);
:class:`~factscout.errors.DataNotFound` says where it looked when the data is not there.
Rebuild it with ``python -m factscout.plan.qgen train --out PATH`` or :func:`train_default`.
For honest evaluation on a training dataset use :func:`cross_fitted_plans` (each fold planned
by a model fitted on the other folds); the planner itself never uses a claim's own pair (same
id or same text) as a neighbour.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import random
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.errors import DataNotFound, InputError
from factscout.plan.base import PLANNERS, finalize
from factscout.plan.decompose import (
    DEFAULT_MODEL,
    KINDS,
    _cut_points,
    decompose_doc,
    is_keyword,
    keywords,
    load_nlp,
)
from factscout.records import Claim, Query

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix
    from spacy.tokens import Doc, Token

log = logging.getLogger(__name__)

FORMAT = "factscout-qgen/1"
DEFAULT_MODEL_PATH = Path(__file__).with_name("models") / "qgen.json"
DEFAULT_SOURCES: tuple[tuple[str, str], ...] = (("averitec", "train"), ("claimdecomp", "dev"), ("quantemp", "test"))
DEFAULT_MAX_QUERIES = 8
SEED = 0

_WORD = re.compile(r"\w\w+")
# Lucene's English stop words (what the BM25 index drops) and question words
_STOP = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "but",
        "by",
        "for",
        "if",
        "in",
        "into",
        "is",
        "it",
        "no",
        "not",
        "of",
        "on",
        "or",
        "such",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "they",
        "this",
        "to",
        "was",
        "will",
        "with",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "did",
        "does",
        "do",
        "has",
        "have",
        "had",
        "been",
        "were",
        "can",
        "could",
        "would",
        "should",
        "may",
        "might",
    ]
)


# ---------------------------------------------------------------------------------------------
# words


_STEMMER: Any = None


def _stem(word: str) -> str:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return str(_STEMMER.stemWord(word))


def stems(text: str) -> list[str]:
    """Lower-cased, stemmed words of ``text`` without stop and question words (BM25's view)."""
    return [_stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP]


def _token_stem(t: Token) -> str | None:
    words = [w for w in _WORD.findall(t.lower_) if w not in _STOP]
    return _stem(words[0]) if words else None


def _normal_text(text: str) -> str:
    return " ".join(_WORD.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class TrainingPair:
    """A claim and its gold sub-questions; ``pair_id`` is ``"<dataset>:<claim_id>"``."""

    pair_id: str
    claim: str
    questions: tuple[str, ...]

    @property
    def claim_id(self) -> str:
        return self.pair_id.split(":", 1)[-1]


def pairs_from_claims(claims: Iterable[Claim], dataset: str) -> list[TrainingPair]:
    """Training pairs from claims that carry ``meta['questions']`` (claims without are skipped)."""
    out = []
    for c in claims:
        questions = tuple(str(q).strip() for q in c.meta.get("questions") or () if str(q).strip())
        if questions:
            out.append(TrainingPair(f"{dataset}:{c.claim_id}", c.text, questions))
    return out


def default_pairs(
    sources: Sequence[tuple[str, str]] = DEFAULT_SOURCES, root: str | Path | None = None
) -> list[TrainingPair]:
    """The training pairs of ``sources`` (dataset, split), read from the data folder."""
    from factscout.datasets import load_dataset

    pairs: list[TrainingPair] = []
    for name, split in sources:
        try:
            data = load_dataset(name, split, root)
        except DataNotFound as exc:
            raise DataNotFound(
                f"the qgen query generator rebuilds its neighbour index from the {name} {split} data: {exc}"
            ) from None
        pairs += pairs_from_claims(data.claims, name)
    return pairs


def _fingerprint(pairs: Sequence[TrainingPair]) -> str:
    digest = hashlib.sha256()
    for p in pairs:
        digest.update(p.pair_id.encode())
        digest.update(b"\0")
        digest.update(p.claim.encode())
        digest.update(b"\0")
    return digest.hexdigest()


# ---------------------------------------------------------------------------------------------
# neighbour index: TF-IDF cosine over stemmed claim words


class NeighbourIndex:
    """TF-IDF vectors of the training claims; ``search`` excludes given rows."""

    def __init__(self, claims: Sequence[str]) -> None:
        from scipy.sparse import csr_matrix

        docs = [stems(c) for c in claims]
        vocab: dict[str, int] = {}
        for d in docs:
            for s in d:
                vocab.setdefault(s, len(vocab))
        df = Counter(s for d in docs for s in set(d))
        n = max(len(docs), 1)
        self.vocab = vocab
        self.idf = np.ones(len(vocab), dtype=np.float32)
        for s, i in vocab.items():
            self.idf[i] = math.log((1 + n) / (1 + df[s])) + 1.0
        self.n_docs = n
        self.df = df
        rows, cols, vals = [], [], []
        for r, d in enumerate(docs):
            counts = Counter(vocab[s] for s in d)
            for c, k in counts.items():
                rows.append(r)
                cols.append(c)
                vals.append((1 + math.log(k)) * self.idf[c])
        m = csr_matrix((vals, (rows, cols)), shape=(len(docs), len(vocab)), dtype=np.float32)
        norms = np.sqrt(np.asarray(m.multiply(m).sum(axis=1)).ravel())
        norms[norms == 0] = 1.0
        from scipy.sparse import diags

        self.matrix: csr_matrix = diags(1.0 / norms) @ m

    def idf_of(self, stem: str) -> float:
        i = self.vocab.get(stem)
        return float(self.idf[i]) if i is not None else math.log(1 + self.n_docs) + 1.0

    def vector(self, text: str) -> np.ndarray:
        v = np.zeros(len(self.vocab), dtype=np.float32)
        for s, k in Counter(stems(text)).items():
            i = self.vocab.get(s)
            if i is not None:
                v[i] = (1 + math.log(k)) * self.idf[i]
        norm = float(np.linalg.norm(v))
        return v / norm if norm > 0 else v

    def search(self, text: str, k: int, exclude: set[int]) -> list[tuple[int, float]]:
        if not self.vocab:
            return []
        sims = self.matrix @ self.vector(text)
        if exclude:
            sims[list(exclude)] = -1.0
        top = np.argsort(-sims, kind="stable")[: k + len(exclude)]
        return [(int(i), float(sims[i])) for i in top if sims[i] > 0 and int(i) not in exclude][:k]


# ---------------------------------------------------------------------------------------------
# logistic regression (numpy + L-BFGS), soft labels allowed


@dataclass
class Logistic:
    """L2-regularised logistic regression over standardised features."""

    weights: np.ndarray = field(default_factory=lambda: np.zeros(0))
    bias: float = 0.0
    mean: np.ndarray = field(default_factory=lambda: np.zeros(0))
    scale: np.ndarray = field(default_factory=lambda: np.ones(0))

    def fit(self, x: np.ndarray, y: np.ndarray, l2: float = 1.0) -> Logistic:
        from scipy.optimize import minimize

        x = np.asarray(x, dtype=np.float64)
        y = np.clip(np.asarray(y, dtype=np.float64), 0.0, 1.0)
        self.mean = x.mean(axis=0)
        self.scale = x.std(axis=0)
        self.scale[self.scale < 1e-9] = 1.0
        z = (x - self.mean) / self.scale
        n, d = z.shape

        def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
            w, b = theta[:d], theta[d]
            logits = z @ w + b
            p = 1.0 / (1.0 + np.exp(-logits))
            eps = 1e-12
            value = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) + l2 * float(w @ w) / (2 * n)
            g = p - y
            grad = np.concatenate([z.T @ g / n + l2 * w / n, [g.mean()]])
            return float(value), grad

        result = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B", options={"maxiter": 500})
        self.weights, self.bias = result.x[:d], float(result.x[d])
        return self

    def predict(self, x: np.ndarray) -> np.ndarray:
        if len(x) == 0:
            return np.zeros(0)
        z = (np.asarray(x, dtype=np.float64) - self.mean) / self.scale
        return np.asarray(1.0 / (1.0 + np.exp(-(z @ self.weights + self.bias))))

    def to_dict(self) -> dict[str, Any]:
        return {
            "weights": [round(float(v), 6) for v in self.weights],
            "bias": round(self.bias, 6),
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Logistic:
        return cls(
            np.array(d["weights"], dtype=np.float64), float(d["bias"]), np.array(d["mean"]), np.array(d["scale"])
        )


# ---------------------------------------------------------------------------------------------
# features

_POS = ("NOUN", "PROPN", "VERB", "ADJ", "NUM", "ADV")
_ENT = {
    "PERSON": "person", "ORG": "org", "NORP": "place", "GPE": "place", "LOC": "place", "FAC": "place",
    "DATE": "time", "TIME": "time", "PERCENT": "number", "MONEY": "number", "CARDINAL": "number",
    "QUANTITY": "number", "ORDINAL": "number",
}  # fmt: skip
_ENT_KINDS = ("person", "org", "place", "time", "number", "other")
_DEPS = {
    "nsubj": "subj", "nsubjpass": "subj", "csubj": "subj", "dobj": "obj", "attr": "obj", "oprd": "obj",
    "pobj": "pobj", "ROOT": "root", "compound": "mod", "amod": "mod", "nummod": "mod", "poss": "mod",
}  # fmt: skip
_DEP_KINDS = ("subj", "obj", "pobj", "root", "mod", "other")
_FRAME = {"say", "claim", "show", "photo", "video", "image", "post", "picture", "tweet", "report", "state"}
TOKEN_FEATURES = (
    *(f"pos_{p}" for p in _POS),
    *(f"ent_{e}" for e in _ENT_KINDS),
    *(f"dep_{d}" for d in _DEP_KINDS),
    "like_num", "position", "idf", "vote", "vote_any", "frame", "length", "repeated",
)  # fmt: skip
CANDIDATE_KINDS = (*KINDS, "span")
CANDIDATE_FEATURES = (
    "p_mean", "p_max", "p_min", "p_sum", "n_words", "log_words", "coverage", "uncovered_p",
    "has_person", "has_org", "has_place", "has_time", "has_number", "has_verb",
    "start", "end", "idf_mean", "vote_mean", "vote_max", "whole",
    *(f"kind_{k}" for k in CANDIDATE_KINDS),
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class Candidate:
    """A possible sub-query of a claim: its text, stems, kind and features."""

    text: str
    stems: frozenset[str]
    kind: str
    features: tuple[float, ...]


@dataclass(frozen=True, slots=True)
class GeneratedQuery:
    """A generated sub-query with the candidate model's score."""

    text: str
    score: float
    kind: str


def _units(doc: Doc) -> list[list[Token]]:
    """The claim's keywords grouped into phrases (a name or noun phrase is one unit)."""
    kept = [t for t in doc if is_keyword(t)]
    if not kept:
        return []
    cuts = set(_cut_points(doc, kept))
    units: list[list[Token]] = [[kept[0]]]
    for i in range(1, len(kept)):
        if i in cuts:
            units.append([kept[i]])
        else:
            units[-1].append(kept[i])
    return units


class _ClaimView:
    """Per-claim token features shared by all of its candidates."""

    def __init__(
        self,
        doc: Doc,
        index: NeighbourIndex,
        neighbours: Sequence[tuple[int, float]],
        questions: Sequence[frozenset[str]],
    ):
        self.doc = doc
        self.tokens = [t for t in doc if is_keyword(t)]
        self.stem_of = {t.i: _token_stem(t) for t in self.tokens}
        self.claim_stems = frozenset(s for s in self.stem_of.values() if s)
        counts = Counter(s for s in self.stem_of.values() if s)
        total = sum(w for _, w in neighbours) or 1.0
        vote: dict[str, float] = {}
        vote_any: dict[str, float] = {}
        for s in self.claim_stems:
            vote[s] = sum(w for i, w in neighbours if s in questions[i]) / total
            vote_any[s] = float(any(s in questions[i] for i, _ in neighbours))
        self.vote, self.vote_any = vote, vote_any
        n = max(len(doc), 1)
        rows = []
        for t in self.tokens:
            s = self.stem_of[t.i] or ""
            ent = _ENT.get(t.ent_type_, "other" if t.ent_type_ else "")
            dep = _DEPS.get(t.dep_, "other")
            row = [float(t.pos_ == p) for p in _POS]
            row += [float(ent == e) for e in _ENT_KINDS]
            row += [float(dep == d) for d in _DEP_KINDS]
            row += [
                float(t.like_num),
                t.i / n,
                index.idf_of(s) / 10.0,
                vote.get(s, 0.0),
                vote_any.get(s, 0.0),
                float(t.lemma_.lower() in _FRAME),
                min(len(t.text), 20) / 10.0,
                float(counts[s] > 1),
            ]
            rows.append(row)
        self.token_x = np.array(rows, dtype=np.float64).reshape(len(rows), len(TOKEN_FEATURES))
        self.token_p = np.zeros(len(self.tokens))

    def set_token_model(self, model: Logistic | None) -> None:
        if model is not None and len(self.tokens):
            self.token_p = model.predict(self.token_x)

    def candidates(self, claim_date: Any = None) -> list[Candidate]:
        """Decomposition aspects and runs of adjacent phrases, deduplicated by stems."""
        texts: list[tuple[str, str]] = [(a.text, a.kind) for a in decompose_doc(self.doc, claim_date, KINDS)]
        units = _units(self.doc)
        for size in (1, 2, 3):
            for i in range(len(units) - size + 1):
                texts.append((keywords(t for u in units[i : i + size] for t in u), "span"))
        whole = keywords(self.tokens)
        texts.append((whole, "span"))
        by_stem: dict[str, list[int]] = {}
        for j, t in enumerate(self.tokens):
            s = self.stem_of[t.i]
            if s:
                by_stem.setdefault(s, []).append(j)
        out: list[Candidate] = []
        seen: set[frozenset[str]] = set()
        for text, kind in texts:
            cs = frozenset(s for s in stems(text) if s in by_stem)
            if not cs or cs in seen or not text.strip():
                continue
            seen.add(cs)
            out.append(Candidate(text, cs, kind, self._features(cs, kind, by_stem, text == whole)))
        return out

    def _features(self, cs: frozenset[str], kind: str, by_stem: dict[str, list[int]], whole: bool) -> tuple[float, ...]:
        idx = sorted({j for s in cs for j in by_stem[s]})
        p = self.token_p[idx] if len(self.token_p) else np.zeros(len(idx))
        toks = [self.tokens[j] for j in idx]
        n_all = max(len(self.tokens), 1)
        ents = {_ENT.get(t.ent_type_, "") for t in toks}
        uncovered = [j for j in range(len(self.tokens)) if j not in set(idx)]
        feats = [
            float(p.mean()) if len(p) else 0.0,
            float(p.max()) if len(p) else 0.0,
            float(p.min()) if len(p) else 0.0,
            float(p.sum()),
            float(len(cs)),
            math.log(1 + len(cs)),
            len(idx) / n_all,
            float(self.token_p[uncovered].sum()) if uncovered and len(self.token_p) else 0.0,
            float("person" in ents),
            float("org" in ents),
            float("place" in ents),
            float("time" in ents),
            float("number" in ents or any(t.like_num for t in toks)),
            float(any(t.pos_ == "VERB" for t in toks)),
            idx[0] / n_all if idx else 0.0,
            idx[-1] / n_all if idx else 0.0,
            float(np.mean([self.token_x[j, TOKEN_FEATURES.index("idf")] for j in idx])) if idx else 0.0,
            float(np.mean([self.vote.get(s, 0.0) for s in cs])),
            max((self.vote.get(s, 0.0) for s in cs), default=0.0),
            float(whole),
        ]
        feats += [float(kind == k) for k in CANDIDATE_KINDS]
        return tuple(feats)


def _f1(a: frozenset[str], b: frozenset[str]) -> float:
    inter = len(a & b)
    if not inter:
        return 0.0
    p, r = inter / len(a), inter / len(b)
    return 2 * p * r / (p + r)


def candidate_label(candidate: frozenset[str], claim_stems: frozenset[str], questions: Iterable[str]) -> float:
    """How well a candidate matches a gold question: best token F1 with the claim words it uses."""
    best = 0.0
    for q in questions:
        used = frozenset(stems(q)) & claim_stems
        if used:
            best = max(best, _f1(candidate, used))
    return best


@dataclass
class EvidencePool:
    """Gold evidence for labelling candidates by what they retrieve.

    ``retriever`` searches a closed passage pool; ``qrels`` maps a training pair id
    (``"averitec:train-12"``) to its relevant passages. A candidate's label is its recall in the
    top ``k`` plus the recall it adds beyond the claim's own top ``k`` (capped at 1): a
    sub-query is worth most when it finds evidence the claim alone misses.
    """

    retriever: Any
    qrels: Mapping[str, Mapping[str, int]]
    k: int = 100

    def covers(self, pair_id: str) -> bool:
        return any(rel > 0 for rel in (self.qrels.get(pair_id) or {}).values())

    def labels(self, items: Sequence[tuple[str, str, Sequence[str]]]) -> list[list[float]]:
        """Labels for ``(pair_id, claim, candidate texts)`` items, searched in one batch."""
        queries: list[Query] = []
        for n, (_, claim, texts) in enumerate(items):
            queries.append(Query(f"{n}", f"{n}", claim))
            queries += [Query(f"{n}#{j}", f"{n}", t) for j, t in enumerate(texts)]
        found = {
            q.query_id: set(r.passage_ids) for q, r in zip(queries, self.retriever.search(queries, self.k), strict=True)
        }
        out = []
        for n, (pair_id, _, texts) in enumerate(items):
            gold = {pid for pid, rel in (self.qrels.get(pair_id) or {}).items() if rel > 0}
            if not gold:
                out.append([0.0] * len(texts))
                continue
            base = found[f"{n}"] & gold
            row = []
            for j in range(len(texts)):
                got = found[f"{n}#{j}"] & gold
                row.append(min(1.0, (len(got) + len(got - base)) / len(gold)))
            out.append(row)
        return out


def averitec_evidence(root: str | Path | None = None, split: str = "train", k: int = 100) -> EvidencePool:
    """AVeriTeC's gold answers as the pool (BM25 over title + text), qrels keyed ``averitec:<id>``."""
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_retriever

    data = load_dataset("averitec_beir", split, root)
    qrels = {f"averitec:{cid}": dict(rel) for cid, rel in data.qrels.items()}
    return EvidencePool(build_retriever(data.corpus, "bm25"), qrels, k)


def _select(cands: Sequence[Candidate], scores: np.ndarray, n: int, redundancy: float) -> list[int]:
    """Maximal marginal relevance: the best candidates that repeat each other least."""
    chosen: list[int] = []
    remaining = list(range(len(cands)))
    while remaining and len(chosen) < n:
        best, best_value = -1, -math.inf
        for i in remaining:
            overlap = max(
                (len(cands[i].stems & cands[j].stems) / len(cands[i].stems | cands[j].stems) for j in chosen),
                default=0.0,
            )
            value = float(scores[i]) - redundancy * overlap
            if value > best_value + 1e-12:
                best, best_value = i, value
        chosen.append(best)
        remaining.remove(best)
    return chosen


# ---------------------------------------------------------------------------------------------
# the generator

_DOC_CACHE: dict[tuple[str, str], Doc] = {}
_DOC_CACHE_MAX = 50_000


def _parse(texts: Sequence[str], model: str) -> list[Doc]:
    nlp = load_nlp(model)
    missing = list(dict.fromkeys(t for t in texts if (model, t) not in _DOC_CACHE))
    if missing:
        if len(_DOC_CACHE) + len(missing) > _DOC_CACHE_MAX:
            _DOC_CACHE.clear()
        for text, doc in zip(missing, nlp.pipe([t[:2000] for t in missing], batch_size=128), strict=True):
            _DOC_CACHE[(model, text)] = doc
    return [_DOC_CACHE[(model, t)] for t in texts]


class QueryGenerator:
    """Learns which parts of a claim its gold sub-questions ask about; writes them as queries.

    ``fit(pairs)`` trains the token and candidate models (module docstring); ``generate(text)``
    returns the best sub-queries for an unseen claim. ``save``/``load`` keep the two models and
    the settings; the neighbour index is rebuilt from the training pairs (``load`` takes them,
    or reads the default datasets).
    """

    def __init__(
        self,
        *,
        neighbours: int = 10,
        redundancy: float = 0.3,
        max_train_claims: int = 3000,
        seed: int = SEED,
        spacy_model: str = DEFAULT_MODEL,
    ) -> None:
        if neighbours < 1:
            raise InputError(f"neighbours must be >= 1, got {neighbours}")
        self.neighbours = neighbours
        self.redundancy = redundancy
        self.max_train_claims = max_train_claims
        self.seed = seed
        self.spacy_model = spacy_model
        self.token_model: Logistic | None = None
        self.candidate_model: Logistic | None = None
        self.pairs: list[TrainingPair] = []
        self.sources: list[list[str]] | None = None
        self.metrics: dict[str, float] = {}
        self.label_source = "questions"
        self._index: NeighbourIndex | None = None
        self._question_stems: list[frozenset[str]] = []
        self._by_id: dict[str, list[int]] = {}
        self._by_text: dict[str, list[int]] = {}

    # -- the neighbour index -------------------------------------------------------------------

    def _build_index(self, pairs: Sequence[TrainingPair]) -> None:
        self.pairs = list(pairs)
        self._index = NeighbourIndex([p.claim for p in self.pairs])
        self._question_stems = [frozenset(s for q in p.questions for s in stems(q)) for p in self.pairs]
        self._by_id, self._by_text = {}, {}
        for i, p in enumerate(self.pairs):
            for key in {p.pair_id, p.claim_id}:
                self._by_id.setdefault(key, []).append(i)
            self._by_text.setdefault(_normal_text(p.claim), []).append(i)

    def _excluded(self, text: str, exclude_ids: Iterable[str]) -> set[int]:
        out = set(self._by_text.get(_normal_text(text), ()))
        for cid in exclude_ids:
            out.update(self._by_id.get(cid, ()))
        return out

    def neighbours_of(self, text: str, exclude_ids: Iterable[str] = ()) -> list[tuple[TrainingPair, float]]:
        """The nearest training pairs of a claim (never the claim itself, nor ``exclude_ids``)."""
        index = self._require_index()
        hits = index.search(text, self.neighbours, self._excluded(text, exclude_ids))
        return [(self.pairs[i], s) for i, s in hits]

    def _require_index(self) -> NeighbourIndex:
        if self._index is None:
            raise InputError("the query generator is not fitted: call fit(pairs) or load(path)")
        return self._index

    def _view(self, doc: Doc, text: str, exclude: set[int]) -> _ClaimView:
        index = self._require_index()
        hits = index.search(text, self.neighbours, exclude)
        return _ClaimView(doc, index, hits, self._question_stems)

    # -- training ------------------------------------------------------------------------------

    def fit(self, pairs: Sequence[TrainingPair], evidence: EvidencePool | None = None) -> QueryGenerator:
        """Train on (claim, gold sub-questions) pairs; any subset works (at least 2 pairs).

        With ``evidence``, the candidate model learns from what candidates of the pairs it covers
        retrieve (:class:`EvidencePool`); without, from their overlap with the gold questions.
        """
        pairs = [p for p in pairs if p.claim.strip() and p.questions]
        if len(pairs) < 2:
            raise InputError(f"qgen needs at least 2 training pairs with questions, got {len(pairs)}")
        self._build_index(pairs)
        rng = random.Random(self.seed)
        order = list(range(len(pairs)))
        rng.shuffle(order)
        token_rows = sorted(order[: self.max_train_claims])
        labelled = [i for i in order if evidence is not None and evidence.covers(pairs[i].pair_id)]
        use_evidence = len(labelled) >= 2
        cand_rows = sorted(labelled[: self.max_train_claims] if use_evidence else token_rows)
        rows = sorted(set(token_rows) | set(cand_rows))
        docs = dict(zip(rows, _parse([pairs[i].claim for i in rows], self.spacy_model), strict=True))
        views = {
            i: self._view(docs[i], pairs[i].claim, self._excluded(pairs[i].claim, [pairs[i].pair_id])) for i in rows
        }
        # token model: which claim words the gold questions use
        xs, ys = [], []
        for i in token_rows:
            gold = self._question_stems[i]
            view = views[i]
            for j, t in enumerate(view.tokens):
                xs.append(view.token_x[j])
                ys.append(float(view.stem_of[t.i] in gold))
        if not xs or len(set(ys)) < 2:
            raise InputError("qgen training pairs give no usable token examples (questions share no claim words)")
        self.token_model = Logistic().fit(np.array(xs), np.array(ys), l2=1.0)
        # candidate model: which sub-queries find the evidence (or match the gold questions)
        cands = {}
        for i in cand_rows:
            views[i].set_token_model(self.token_model)
            cands[i] = views[i].candidates()
        if use_evidence and evidence is not None:
            items = [(pairs[i].pair_id, pairs[i].claim, [c.text for c in cands[i]]) for i in cand_rows]
            labels = dict(zip(cand_rows, evidence.labels(items), strict=True))
        else:
            labels = {
                i: [candidate_label(c.stems, views[i].claim_stems, pairs[i].questions) for c in cands[i]]
                for i in cand_rows
            }
        cx = [c.features for i in cand_rows for c in cands[i]]
        cy = [y for i in cand_rows for y in labels[i]]
        if not cx:
            raise InputError("qgen training pairs give no candidate sub-queries")
        self.candidate_model = Logistic().fit(np.array(cx), np.array(cy), l2=1.0)
        self.metrics = {
            "train_pairs": float(len(pairs)),
            "token_claims": float(len(token_rows)),
            "token_examples": float(len(ys)),
            "token_positive_rate": round(float(np.mean(ys)), 4),
            "candidate_claims": float(len(cand_rows)),
            "candidate_examples": float(len(cy)),
            "candidate_mean_label": round(float(np.mean(cy)), 4),
            "candidate_label": 1.0 if use_evidence else 0.0,
        }
        self.label_source = "evidence" if use_evidence else "questions"
        log.info("qgen fitted on %d pairs (candidate labels from %s)", len(pairs), self.label_source)
        return self

    # -- generation ----------------------------------------------------------------------------

    def generate(
        self, text: str, *, n: int = DEFAULT_MAX_QUERIES - 1, exclude_ids: Iterable[str] = (), claim_date: Any = None
    ) -> list[GeneratedQuery]:
        """The ``n`` best sub-queries for claim ``text`` (never using its own training pair)."""
        return self.generate_many([text], n=n, exclude_ids=[list(exclude_ids)], claim_dates=[claim_date])[0]

    def generate_many(
        self,
        texts: Sequence[str],
        *,
        n: int = DEFAULT_MAX_QUERIES - 1,
        exclude_ids: Sequence[Iterable[str]] | None = None,
        claim_dates: Sequence[Any] | None = None,
    ) -> list[list[GeneratedQuery]]:
        """:meth:`generate` for several claims, parsed in one spaCy batch."""
        if self.candidate_model is None or self.token_model is None:
            raise InputError("the query generator is not fitted: call fit(pairs) or load(path)")
        docs = _parse(list(texts), self.spacy_model)
        out: list[list[GeneratedQuery]] = []
        for k, (text, doc) in enumerate(zip(texts, docs, strict=True)):
            excl = self._excluded(text, exclude_ids[k] if exclude_ids is not None else ())
            try:
                view = self._view(doc, text, excl)
                view.set_token_model(self.token_model)
                cands = view.candidates(claim_dates[k] if claim_dates is not None else None)
            except Exception as exc:  # an unforeseen parse must not sink a batch
                log.warning("qgen could not build candidates for a claim (%s); planning it alone", exc)
                out.append([])
                continue
            if not cands:
                out.append([])
                continue
            scores = self.candidate_model.predict(np.array([c.features for c in cands]))
            picked = _select(cands, scores, n, self.redundancy)
            out.append([GeneratedQuery(cands[i].text, round(float(scores[i]), 4), cands[i].kind) for i in picked])
        return out

    # -- persistence ---------------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        if self.candidate_model is None or self.token_model is None:
            raise InputError("the query generator is not fitted: nothing to save")
        return {
            "format": FORMAT,
            "settings": {
                "neighbours": self.neighbours,
                "redundancy": self.redundancy,
                "max_train_claims": self.max_train_claims,
                "seed": self.seed,
                "spacy_model": self.spacy_model,
            },
            "token_features": list(TOKEN_FEATURES),
            "candidate_features": list(CANDIDATE_FEATURES),
            "token_model": self.token_model.to_dict(),
            "candidate_model": self.candidate_model.to_dict(),
            "training": {
                "sources": self.sources,
                "pairs": len(self.pairs),
                "fingerprint": _fingerprint(self.pairs),
                "candidate_labels": self.label_source,
                "metrics": self.metrics,
            },
        }

    def save(self, path: str | Path, *, include_pairs: bool | None = None) -> Path:
        """Write the model as JSON. The training pairs go in too unless they came from named
        datasets (``sources``), which ``load`` reads again; ``include_pairs`` forces either way."""
        data = self.to_dict()
        if include_pairs if include_pairs is not None else self.sources is None:
            data["pairs"] = [[p.pair_id, p.claim, list(p.questions)] for p in self.pairs]
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(
        cls,
        path: str | Path = DEFAULT_MODEL_PATH,
        *,
        pairs: Sequence[TrainingPair] | None = None,
        root: str | Path | None = None,
    ) -> QueryGenerator:
        """Read a saved model and rebuild its neighbour index (from ``pairs``, the pairs saved in
        the file, or the datasets it was trained on, read from ``root``)."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DataNotFound(f"no qgen model at {path}") from None
        except (OSError, ValueError) as exc:
            raise InputError(f"{path} is not a qgen model: {exc}") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError(f"{path} is not a qgen model (format {FORMAT!r} expected)")
        if data.get("token_features") != list(TOKEN_FEATURES) or data.get("candidate_features") != list(
            CANDIDATE_FEATURES
        ):
            raise InputError(f"{path} was trained with other features; retrain it: python -m factscout.plan.qgen train")
        gen = cls(**data["settings"])
        gen.token_model = Logistic.from_dict(data["token_model"])
        gen.candidate_model = Logistic.from_dict(data["candidate_model"])
        training = data.get("training") or {}
        gen.metrics = dict(training.get("metrics") or {})
        gen.label_source = str(training.get("candidate_labels") or "questions")
        sources = training.get("sources")
        if pairs is None and "pairs" in data:
            pairs = [TrainingPair(str(i), str(c), tuple(q)) for i, c, q in data["pairs"]]
        if pairs is None:
            if not sources:
                raise InputError(f"{path} holds neither its training pairs nor the datasets they came from")
            pairs = default_pairs([(str(n), str(s)) for n, s in sources], root)
            if _fingerprint(pairs) != training.get("fingerprint"):
                log.warning("qgen: the training data differs from the data the model was trained on")
        gen.sources = [list(s) for s in sources] if sources else None
        gen._build_index(pairs)
        return gen


# ---------------------------------------------------------------------------------------------
# the planner

_DEFAULT_GENERATOR: QueryGenerator | None = None


def default_generator() -> QueryGenerator:
    """The shipped model with its neighbour index (built once per process)."""
    global _DEFAULT_GENERATOR
    if _DEFAULT_GENERATOR is None:
        _DEFAULT_GENERATOR = QueryGenerator.load(DEFAULT_MODEL_PATH)
    return _DEFAULT_GENERATOR


@PLANNERS.register("qgen")
class QgenPlanner:
    """Plans with a trained :class:`QueryGenerator`: the claim first, then generated sub-queries.

    ``model_path=None`` loads the shipped model. ``exclude_claim_ids`` are training pairs never
    used for neighbours (ids as ``"dataset:claim_id"`` or bare claim ids); a claim's own pair
    (same id or same text) is always excluded.
    """

    name = "qgen"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        generator: QueryGenerator | None = None,
        max_queries: int = DEFAULT_MAX_QUERIES,
        include_claim: bool = True,
        exclude_claim_ids: Iterable[str] = (),
    ) -> None:
        if isinstance(max_queries, bool) or not isinstance(max_queries, int) or max_queries < 1:
            raise InputError(f"max_queries must be a positive integer, got {max_queries!r}")
        if generator is not None and model_path is not None:
            raise InputError("give a model_path or a generator, not both")
        self._model_path = model_path
        self._generator = generator
        self.max_queries = max_queries
        self.include_claim = include_claim
        self.exclude_claim_ids = frozenset(exclude_claim_ids)

    @property
    def generator(self) -> QueryGenerator:
        if self._generator is None:
            self._generator = default_generator() if self._model_path is None else QueryGenerator.load(self._model_path)
        return self._generator

    def _n(self) -> int:
        return self.max_queries - 1 if self.include_claim else self.max_queries

    def plan(self, claim: Claim) -> list[Query]:
        return self.plan_many([claim])[0]

    def plan_many(self, claims: Sequence[Claim]) -> list[list[Query]]:
        """Plan several claims in one batch."""
        generated = self.generator.generate_many(
            [c.text for c in claims],
            n=max(self._n(), 0),
            exclude_ids=[self.exclude_claim_ids | {c.claim_id} for c in claims],
            claim_dates=[c.date for c in claims],
        )
        return [
            finalize(
                c, [g.text for g in gen], self.name, include_claim=self.include_claim, max_queries=self.max_queries
            )
            for c, gen in zip(claims, generated, strict=True)
        ]


# ---------------------------------------------------------------------------------------------
# training entry points


def train_default(
    out_path: str | Path = DEFAULT_MODEL_PATH, *, root: str | Path | None = None, **settings: Any
) -> Path:
    """Rebuild the shipped model: token model on AVeriTeC train, ClaimDecomp dev and QuanTemp test
    questions; candidate model on what candidates retrieve from AVeriTeC's gold answers."""
    pairs = default_pairs(DEFAULT_SOURCES, root)
    gen = QueryGenerator(**settings).fit(pairs, averitec_evidence(root))
    gen.sources = [list(s) for s in DEFAULT_SOURCES]
    return gen.save(out_path)


def cross_fitted_plans(
    claims: Sequence[Claim],
    *,
    folds: int = 5,
    seed: int = SEED,
    extra_pairs: Sequence[TrainingPair] | None = None,
    dataset: str = "averitec",
    evidence: EvidencePool | str | None = "auto",
    max_queries: int = DEFAULT_MAX_QUERIES,
    **settings: Any,
) -> list[Query]:
    """qgen plans for ``claims`` where no claim's generator saw its own gold questions.

    The claims are split into ``folds`` (seeded); each fold is planned by a generator fitted on
    the other folds' pairs plus ``extra_pairs`` (default: ClaimDecomp dev and QuanTemp test, or
    only what is found), always excluding pairs with the same claim text. ``evidence="auto"``
    labels candidates by retrieval from AVeriTeC's gold answer pool when ``dataset`` is
    ``"averitec"`` (only training-fold claims are ever labelled); ``None`` labels them by the
    gold questions.
    """
    if folds < 2:
        raise InputError(f"cross-fitting needs at least 2 folds, got {folds}")
    if evidence == "auto":
        evidence = None
        if dataset == "averitec":
            try:
                evidence = averitec_evidence()
            except DataNotFound as exc:
                log.warning("cross-fitting qgen without evidence labels: %s", exc)
    if isinstance(evidence, str):
        raise InputError(f"evidence must be an EvidencePool, 'auto' or None, got {evidence!r}")
    if extra_pairs is None:
        extra: list[TrainingPair] = []
        for name, split in DEFAULT_SOURCES:
            if name == dataset:
                continue
            try:
                extra += default_pairs([(name, split)])
            except DataNotFound as exc:
                log.warning("cross-fitting without %s: %s", name, exc)
        extra_pairs = extra
    own = pairs_from_claims(claims, dataset)
    ids = [c.claim_id for c in claims]
    order = ids[:]
    random.Random(seed).shuffle(order)
    fold_of = {cid: i % folds for i, cid in enumerate(order)}
    plans: dict[str, list[Query]] = {}
    for f in range(folds):
        held = [c for c in claims if fold_of[c.claim_id] == f]
        if not held:
            continue
        held_texts = {_normal_text(c.text) for c in held}
        train = [p for p in own if fold_of.get(p.claim_id) != f and _normal_text(p.claim) not in held_texts]
        train += [p for p in extra_pairs if _normal_text(p.claim) not in held_texts]
        gen = QueryGenerator(**settings).fit(train, evidence)
        planner = QgenPlanner(generator=gen, max_queries=max_queries)
        for c, qs in zip(held, planner.plan_many(held), strict=True):
            plans[c.claim_id] = qs
    return [q for c in claims for q in plans[c.claim_id]]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m factscout.plan.qgen", description="Train the qgen query generator."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    train = sub.add_parser("train", help="train on AVeriTeC train + ClaimDecomp dev + QuanTemp test")
    train.add_argument("--out", default=str(DEFAULT_MODEL_PATH), help="where to write the model JSON")
    train.add_argument("--data", default=None, help="data folder (default: $FACTSCOUT_DATA or ../shared/data)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = train_default(args.out, root=args.data)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    log.info("wrote %s (sha256 %s)", path, digest)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
