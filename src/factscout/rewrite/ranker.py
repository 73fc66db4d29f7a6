"""A rewrite policy that ranks candidate keyword queries by their predicted reward, observing the
search endpoint: ``ranker``.

The token-pointing policy (:mod:`.pointer`) learns one edit at a time from BFS trajectories; on a
conjunctive endpoint it must chain ten correct removals and loses to keeping the single rarest word
(top-1 IDF). This policy plans the whole rewrite at once, the way a searcher does: it proposes
candidate queries made of the claim's own words, **issues each to the endpoint** (a black box: it
reads the ranked ids and scores a search box returns, never a qrel), predicts from what it sees how
good each candidate is, and keeps the best one. The result is written as the paper's *remove*
edits (:class:`~.keywords.KeepSetPolicy`), so it is auditable and shows in the page's editor like
any policy.

The rewrite happens only when the best candidate's predicted reward beats the claim's by more than
a ``margin`` chosen by cross-validation on the training claims: on a disjunctive endpoint the claim
is often the best query already.

**Candidates** (:func:`candidates`): the claim itself; its content words (stop-word removal); the
``k`` highest-idf content words for every ``k`` (top-k IDF); and every set of at most
``max_size`` of the ``top_n`` highest-idf distinct words.

**Two learned models**, both fitted by :mod:`factscout.training.rewrite.ranker` on training claims
with qrels:

* a **token model** (logistic regression over :func:`word_features`: part of speech, stop word,
  digits, capitalisation, position, the word's idf in the searched corpus and its idf rank in the
  claim) that gives P(the word occurs in a relevant passage): a candidate is only as good as the
  chance that every word it keeps is in the passage sought;
* a **reward model** (gradient-boosted regression trees over :func:`candidate_features`: the
  candidate's size, the sum and minimum of its words' log-probabilities and idfs, and what the
  endpoint returned for it: how many results (log, none, a full page), the top score and the
  score gap to the tenth result, the overlap of its top 10 with the claim's) that predicts the
  candidate's AP@50, or its gain over the claim's (the target is chosen by cross-validation).
  With ``RankerConfig.semantic`` (an encoder name) it also reads *what* the endpoint returned:
  how close the candidate's top 10 passages are in meaning to the claim, and whether closer than
  the claim's own (:mod:`.agreement`). That is what lets it beat the claim on disjunctive BM25.
  With ``RankerConfig.consensus`` it also reads how each candidate's results agree with what all
  the claim's candidates find together (reciprocal-rank fusion of their rankings:
  :func:`~.agreement.consensus_features`).

Both are stored as plain arrays (``ranker.npz``: the logistic regression's weights and the trees'
nodes, read by :class:`Trees`), so inference needs numpy only and no pickled object is ever
loaded. Cost per claim: one search per candidate (~80 for a 12-word claim, 22,000 searches/s on
``bm25-and`` over SciFact), and with ``semantic`` one encoding per passage not read before.
"""

from __future__ import annotations

import itertools
import math
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.records import Query
from factscout.retrieve.base import HasStore, Searcher
from factscout.retrieve.standard_analyzer import standard_tokens
from factscout.rewrite.actions import MAX_POSITIONS, ParsedQuery, parse
from factscout.rewrite.agreement import (
    AGREEMENT_FEATURES,
    CONSENSUS_FEATURES,
    PassageVectors,
    agreement_encoder,
    agreement_features,
    consensus_features,
)
from factscout.rewrite.base import REWRITE_POLICIES, RewardMode, check_positive
from factscout.rewrite.keywords import IdfTable, KeepSetPolicy, is_content
from factscout.rewrite.pointer import N_FEATURES as N_TAGS
from factscout.rewrite.pointer import token_features

N_WORD_FEATURES = N_TAGS + 4  # the pointer's tags and idf, plus idf rank, is-rarest, words, gap to the rarest
CANDIDATE_FEATURES = (
    "size", "sum log p", "min log p", "sum idf", "min idf", "max idf", "log results", "no result",
    "full page", "is the claim", "is stop-word removal", "words", "share of words", "top score",
    "score gap 1-10", "top-10 overlap with the claim",
)  # fmt: skip
N_ALL_FEATURES = len(CANDIDATE_FEATURES) + len(AGREEMENT_FEATURES) + len(CONSENSUS_FEATURES)
SearchResults = tuple[tuple[str, ...], tuple[float, ...]]


@dataclass(frozen=True, slots=True)
class RankerConfig:
    """Which candidates are tried, how many results each observes, the endpoint trained for."""

    top_n: int = 8  # the highest-idf distinct words whose small subsets are candidates
    max_size: int = 3  # the largest subset tried
    observe: int = 1000  # results read per candidate (a search box's page)
    retriever: str = ""  # the endpoint the models were fitted on (informational)
    margin: float = 0.0  # rewrite only when the best candidate's predicted reward beats the claim's by more
    semantic: str = ""  # judge of claim-vs-results agreement (.agreement): an encoder name, "lexical", or "": none
    consensus: bool = False  # also read how each candidate's results agree with all candidates' fused results

    def __post_init__(self) -> None:
        check_positive("RankerConfig", top_n=self.top_n, max_size=self.max_size, observe=self.observe)
        if not (isinstance(self.margin, int | float) and self.margin >= 0):
            raise InputError(f"RankerConfig: margin must be a number >= 0, got {self.margin!r}")
        if not isinstance(self.semantic, str):
            raise InputError(f"RankerConfig: semantic must be an encoder name or '', got {self.semantic!r}")
        if not isinstance(self.consensus, bool):
            raise InputError(f"RankerConfig: consensus must be true or false, got {self.consensus!r}")

    @property
    def n_features(self) -> int:
        """The reward model's input width: the candidate features, the agreement features when
        ``semantic`` names an encoder, then the consensus features when ``consensus`` is set."""
        return (
            len(CANDIDATE_FEATURES)
            + (len(AGREEMENT_FEATURES) if self.semantic else 0)
            + (len(CONSENSUS_FEATURES) if self.consensus else 0)
        )


@dataclass(frozen=True, slots=True)
class Word:
    """A content word of the claim that a candidate may keep: its claim position and idf."""

    position: int
    text: str
    idf: float


def content_words(parsed: ParsedQuery, idf: IdfTable) -> list[Word]:
    """The claim's content tokens (of the first 32) that the standard analyzer keeps terms of."""
    return [
        Word(i, t.text.lower(), idf.word_idf(t.text))
        for i, t in enumerate(parsed.tokens[:MAX_POSITIONS])
        if is_content(t) and standard_tokens(t.text)
    ]


def word_features(parsed: ParsedQuery, words: Sequence[Word], idf: IdfTable) -> np.ndarray:
    """(len(words), N_WORD_FEATURES): the pointer policy's token tags and idf
    (:func:`~.pointer.token_features`), the word's idf rank among the claim's content words
    (0 = rarest), whether it is the rarest, how many content words the claim has, and its idf
    minus the rarest's."""
    if not words:
        return np.zeros((0, N_WORD_FEATURES), dtype=np.float32)
    tags = token_features(parsed, idf)
    idfs = np.array([w.idf for w in words])
    rank = np.empty(len(words))
    rank[np.argsort(-idfs, kind="stable")] = np.arange(len(words))
    extra = np.stack([rank, rank == 0, np.full(len(words), len(words)), idfs - idfs.max()], axis=1)
    return np.concatenate([tags[[w.position for w in words]], extra], axis=1).astype(np.float32)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A candidate query: the claim positions it keeps (None: the claim as it is) and its text."""

    keep: frozenset[int] | None
    text: str
    words: tuple[int, ...]  # indices into the claim's content words
    kind: str  # "claim", "content", "top-k" or "subset"


def candidates(parsed: ParsedQuery, words: Sequence[Word], config: RankerConfig) -> list[Candidate]:
    """The claim, its content words, the top-k IDF sets for every k, and every set of at most
    ``max_size`` of the ``top_n`` highest-idf distinct words (a repeated word counts once), each
    once (the first kind that proposes a set names it). The text of a set is its words in the
    claim's order, joined by spaces: what a search engine sees of the remove edits' result."""
    out = [Candidate(None, parsed.text, tuple(range(len(words))), "claim")]
    if not words:
        return out
    first: dict[str, int] = {}
    for j in sorted(range(len(words)), key=lambda j: (-words[j].idf, j)):
        first.setdefault(words[j].text, j)
    ranked = list(first.values())  # distinct words, rarest first
    seen: set[tuple[int, ...]] = set()

    def add(kept: Sequence[int], kind: str) -> None:
        key = tuple(sorted(kept))
        if key in seen:
            return
        seen.add(key)
        positions = sorted(words[j].position for j in key)
        text = " ".join(parsed.tokens[p].text for p in positions)
        out.append(Candidate(frozenset(positions), text, key, kind))

    add(range(len(words)), "content")
    for k in range(1, len(ranked) + 1):
        add(ranked[:k], "top-k")
    for size in range(1, config.max_size + 1):
        for subset in itertools.combinations(ranked[: config.top_n], size):
            add(subset, "subset")
    return out


def candidate_features(
    cands: Sequence[Candidate],
    words: Sequence[Word],
    log_p: np.ndarray,
    results: Sequence[SearchResults],
    config: RankerConfig,
) -> np.ndarray:
    """(len(cands), len(CANDIDATE_FEATURES)) features of each candidate from its words'
    log-probabilities ``log_p`` (token model) and idfs, and from ``results``, what the endpoint
    returned for it (ranked ids and scores, at most ``config.observe``); the first candidate is
    the claim."""
    claim_top = set(results[0][0][:10]) if results else set()
    n_words = len(words)
    idfs = np.array([w.idf for w in words]) if words else np.zeros(0)
    rows = []
    for cand, (ids, scores) in zip(cands, results, strict=True):
        kept = list(cand.words)
        lp = log_p[kept] if kept else np.zeros(1)
        kept_idf = idfs[kept] if kept else np.zeros(1)
        n = len(ids)
        rows.append(
            [
                len(kept),
                lp.sum(),
                lp.min(),
                kept_idf.sum(),
                kept_idf.min(),
                kept_idf.max(),
                math.log1p(n),
                n == 0,
                n >= config.observe,
                cand.kind == "claim",
                cand.kind == "content",
                n_words,
                len(kept) / max(n_words, 1),
                scores[0] if n else 0.0,
                scores[0] - scores[min(9, n - 1)] if n else 0.0,
                len(set(ids[:10]) & claim_top) / 10,
            ]
        )
    return np.asarray(rows, dtype=np.float32).reshape(len(cands), len(CANDIDATE_FEATURES))


def observed_features(
    claim: str,
    cands: Sequence[Candidate],
    words: Sequence[Word],
    log_p: np.ndarray,
    results: Sequence[SearchResults],
    config: RankerConfig,
    vectors: PassageVectors | None,
) -> np.ndarray:
    """(len(cands), config.n_features): :func:`candidate_features`, then with ``config.semantic``
    the agreement of each candidate's returned passages with ``claim`` (read through ``vectors``),
    then with ``config.consensus`` the candidates' agreement with each other's results."""
    parts = [candidate_features(cands, words, log_p, results, config)]
    returned = [ids for ids, _ in results]
    if config.semantic:
        if vectors is None:
            raise InputError("this ranker reads the returned passages: bind it with the passages' vectors")
        parts.append(agreement_features(vectors.embed(claim), returned, vectors))
    if config.consensus:
        parts.append(consensus_features(returned))
    return np.concatenate(parts, axis=1)


# ---------------------------------------------------------------- the two models, as arrays


@dataclass(frozen=True, slots=True)
class TokenModel:
    """Logistic regression on standardised :func:`word_features`: P(word in a relevant passage)."""

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def __post_init__(self) -> None:
        shapes = {self.mean.shape, self.scale.shape, self.coef.shape}
        if shapes != {(N_WORD_FEATURES,)}:
            raise InputError(f"token model arrays must have shape ({N_WORD_FEATURES},), got {sorted(shapes)}")

    def log_p(self, features: np.ndarray) -> np.ndarray:
        """log P(word in a relevant passage) per row, floored at log(1e-4)."""
        z = ((features - self.mean) / self.scale) @ self.coef + self.intercept
        return np.maximum(-np.logaddexp(0.0, -z), math.log(1e-4))


@dataclass(frozen=True, slots=True)
class Trees:
    """A gradient-boosted regression tree ensemble as flat node arrays (scikit-learn's
    ``tree_`` layout: a node is a leaf when its left child is -1; a row goes left when its
    feature is <= the threshold): prediction = ``init`` + ``rate`` x the sum of the leaves reached."""

    feature: np.ndarray  # (nodes,) int32
    threshold: np.ndarray  # (nodes,) float64
    left: np.ndarray  # (nodes,) int32, -1 at leaves; indices are global
    right: np.ndarray  # (nodes,) int32
    value: np.ndarray  # (nodes,) float64
    roots: np.ndarray  # (trees,) int32: each tree's first node
    init: float
    rate: float

    def __post_init__(self) -> None:
        n = len(self.feature)
        if not (len(self.threshold) == len(self.left) == len(self.right) == len(self.value) == n):
            raise InputError("tree arrays differ in length")
        inner = self.left >= 0
        if n and (
            self.left.max() >= n
            or self.right.max() >= n
            or np.any(self.right[inner] < 0)
            or np.any(self.feature[inner] < 0)
            or np.any(self.feature[inner] >= N_ALL_FEATURES)
            or np.any(self.roots < 0)
            or np.any(self.roots >= n)
        ):
            raise InputError("tree arrays point outside the ensemble or at unknown features")

    def predict(self, x: np.ndarray) -> np.ndarray:
        """The ensemble's prediction for each row of ``x`` (rows, the config's ``n_features``)."""
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        out = np.full(len(x), self.init)
        rows = np.arange(len(x))
        for root in self.roots:
            node = np.full(len(x), root)
            for _ in range(64):  # depth bound: a malformed cycle cannot loop forever
                inner = self.left[node] >= 0
                if not inner.any():
                    break
                at = node[inner]
                go_left = x[rows[inner], self.feature[at]] <= self.threshold[at]
                node[inner] = np.where(go_left, self.left[at], self.right[at])
            out += self.rate * self.value[node]
        return out


# ---------------------------------------------------------------- the policy


def endpoint_search(retriever: Any, observe: int) -> Callable[[str], SearchResults]:
    """A function from a query text to what ``retriever`` returns for it (ids and scores of at
    most ``observe`` results); a text without any analyzer term returns nothing unsearched."""

    def search(text: str) -> SearchResults:
        if not standard_tokens(text):
            return (), ()
        ranking = retriever.search([Query("rewrite", "rewrite", text)], observe)[0]
        return tuple(ranking.passage_ids), tuple(ranking.scores_in_order())

    return search


@dataclass(frozen=True, slots=True)
class RankerPolicy(KeepSetPolicy):
    """Keeps the candidate query (:func:`candidates`) with the highest predicted reward, as
    remove edits; the claim itself when that is predicted best. Needs the search endpoint:
    :meth:`bind` (``make_policy(..., retriever=...)`` does it)."""

    config: RankerConfig
    tokens: TokenModel = field(repr=False)
    trees: Trees = field(repr=False)
    idf: IdfTable = field(repr=False)
    search: Callable[[str], SearchResults] | None = field(default=None, repr=False, compare=False)
    training: dict[str, Any] = field(default_factory=dict, compare=False)
    vectors: PassageVectors | None = field(default=None, repr=False, compare=False)
    kind: str = field(default="ranker", init=False)
    name: str = field(default="ranker", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)
    _keeps: OrderedDict[str, frozenset[int]] = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        used = self.trees.feature[self.trees.left >= 0]
        if used.size and int(used.max()) >= self.config.n_features:
            raise InputError(
                f"the reward model reads feature {int(used.max())} but the config gives {self.config.n_features} "
                "(agreement features need config.semantic, consensus features config.consensus)"
            )

    def bind(self, retriever: Any, *, vectors: PassageVectors | None = None) -> RankerPolicy:
        """This policy searching ``retriever`` (any object with the retriever ``search``). With
        ``config.semantic`` it also reads the returned passages (from ``retriever.store``, encoded by
        that encoder), unless ``vectors`` is given."""
        if not isinstance(retriever, Searcher):
            raise InputError(f"the ranker policy needs a retriever with search(), got {type(retriever).__name__}")
        search = endpoint_search(retriever, self.config.observe)
        if self.config.semantic and vectors is None:
            if not isinstance(retriever, HasStore):
                raise InputError(
                    f"this ranker reads the returned passages, but {type(retriever).__name__} has no passage store"
                )
            vectors = PassageVectors(retriever.store, agreement_encoder(self.config.semantic, self.idf))
        return RankerPolicy(self.config, self.tokens, self.trees, self.idf, search, self.training, vectors)

    def candidate_queries(self, claim: str | ParsedQuery) -> list[Candidate]:
        """The candidates of ``claim`` (:func:`candidates`), the claim first; no search."""
        parsed = parse(claim) if isinstance(claim, str) else claim
        return candidates(parsed, content_words(parsed, self.idf), self.config)

    def scored(self, claim: str | ParsedQuery) -> list[tuple[Candidate, float]]:
        """Every candidate of ``claim`` with its predicted reward, best first."""
        if self.search is None:
            raise InputError(
                "the ranker policy observes the search endpoint: bind it to the index's retriever "
                "(policy.bind(retriever), or make_policy(spec, retriever=...))"
            )
        parsed = parse(claim) if isinstance(claim, str) else claim
        words = content_words(parsed, self.idf)
        log_p = self.tokens.log_p(word_features(parsed, words, self.idf)) if words else np.zeros(0)
        cands = candidates(parsed, words, self.config)
        results = [self.search(c.text) for c in cands]
        x = observed_features(parsed.text, cands, words, log_p, results, self.config, self.vectors)
        predicted = self.trees.predict(x)
        order = np.argsort(-predicted, kind="stable")
        return [(cands[i], float(predicted[i])) for i in order]

    def best(self, claim: str | ParsedQuery) -> Candidate:
        """The candidate to search: the best predicted, unless it beats the claim's prediction by
        no more than ``config.margin`` (then the claim)."""
        scored = self.scored(claim)
        (best, top), claim_score = scored[0], next(s for c, s in scored if c.kind == "claim")
        return best if top - claim_score > self.config.margin else next(c for c, _ in scored if c.kind == "claim")

    def keep_set(self, claim: ParsedQuery) -> frozenset[int]:
        best = self.best(claim)
        return frozenset(range(len(claim.tokens))) if best.keep is None else best.keep


REWRITE_POLICIES.register("ranker")(RankerPolicy)
