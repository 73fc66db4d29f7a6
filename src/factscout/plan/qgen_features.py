"""qgen's models and features: the TF-IDF neighbour index over training claims, logistic
regression with soft labels (numpy + L-BFGS), the token and candidate features of a claim
(:class:`ClaimView`), the question-overlap label and the redundancy-penalised selection."""

from __future__ import annotations

import logging
import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from factscout.plan.aspects import (
    KINDS,
    cut_points,
    decompose_doc,
    is_keyword,
    keywords,
)
from factscout.plan.qgen_words import stems, token_stem

if TYPE_CHECKING:
    from scipy.sparse import csr_matrix
    from spacy.tokens import Doc, Token

log = logging.getLogger(__name__)

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
    cuts = set(cut_points(doc, kept))
    units: list[list[Token]] = [[kept[0]]]
    for i in range(1, len(kept)):
        if i in cuts:
            units.append([kept[i]])
        else:
            units[-1].append(kept[i])
    return units


class ClaimView:
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
        self.stem_of = {t.i: token_stem(t) for t in self.tokens}
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


def mmr_select(cands: Sequence[Candidate], scores: np.ndarray, n: int, redundancy: float) -> list[int]:
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
