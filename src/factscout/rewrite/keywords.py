"""Keyword baselines of query rewriting, written as sequences of *remove* edits.

A reviewer of learned query rewriting (Kazemi et al., "Query Rewriting for Effective
Misinformation Discovery", AACL 2023) asks first whether plain keyword extraction does as well.
These baselines answer that inside the same action space, so they run through
:func:`~factscout.rewrite.rewriter.rewrite` and show in the page's editor like any policy:

* :class:`StopwordPolicy` (``stopwords``) keeps every token that is neither a stop word nor
  punctuation.
* :class:`TopIdfPolicy` (``top-idf-k``) keeps the ``k`` content words with the highest inverse
  document frequency in the searched corpus (:class:`IdfTable`).
* :class:`KeyBertPolicy` (``keybert-k``) keeps the ``k`` content words whose embeddings are
  closest to the claim's (KeyBERT, Grootendorst 2020, with unigram candidates; the paper's
  keyword baseline).

**From a keep-set to edits.** Each policy computes the set of the claim's tokens to keep once,
from the claim (``episode.queries[0]``, tokens and tags from :func:`~.actions.parse`). At every
step it re-parses the current query, aligns its tokens to the claim's (only removals happened,
so they are a subsequence: :func:`align`) and returns the remove action of the leftmost token
that is not kept; None when every remaining token is kept. The final query is the kept tokens in
the claim's order.

**Never empty.** A claim with nothing to keep (only stop words and punctuation, say) is left as it
is: the policy stops at once. Otherwise a kept token always remains.

**Past position 31.** An action addresses one of the first 32 tokens (:data:`~.actions.MAX_POSITIONS`).
Removing from the left moves later tokens into reach; when the first 32 tokens of the current
query are all kept, a token to remove behind them can never be addressed, so the policy stops
there and the query keeps the claim's tail from that point (every token of it, kept or not).

**Re-tokenised queries.** spaCy may split a shortened query differently from the claim
(``D patients.`` minus ``patients`` is ``D.``, one token): :func:`align` then matches on
characters, and a token that holds a kept and an unkept claim token stays (``D.``), so such a
final query can keep a punctuation mark or stop word glued to a kept word. If the current query
is not made of the claim's tokens at all (someone else edited it), the policy stops.

**No glued words.** The remove edit joins the word before a removed token to the word after it
when the removed token followed it without a space (removing the comma of ``elderly, the`` gives
``elderlythe``). A removal is skipped, for now, when it would change the words a search engine
sees beyond dropping the removed token, or when spaCy would then read a kept word and an unkept
word as one token (``RLS) -40%`` minus ``)`` is ``RLS-40%``, one token ``RLS-40`` that no later
removal can split); the next unkept token is removed instead, and the skipped one is tried again
at the next step, when its neighbours may have changed. So a final query can keep a comma or
bracket the analyzer ignores, or, rarely, an unkept word that could not be removed cleanly.
Removing all unkept tokens takes as many steps as there are of them: give ``rewrite`` a
``max_steps`` above the claim's length (:func:`tune_k` uses 32), not the BFS depth of 4.

Evaluate these policies with ``rewrite(claim, policy)`` (no environment) and score the final
query: with an environment, ``rewrite`` also stops when no edit improves the reward, which reads
the claim's qrels.
"""

from __future__ import annotations

import logging
import math
import unicodedata
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from factscout.errors import InputError
from factscout.nn.encoding import SentenceEncoder
from factscout.records import Claim, Passage
from factscout.retrieve.standard_analyzer import standard_tokens
from factscout.rewrite.actions import EDIT_KINDS, MAX_POSITIONS, ParsedQuery, Token, apply_action, parse
from factscout.rewrite.base import Episode, RewardMode, RewritePolicy, check_positive
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.rewriter import rewrite

log = logging.getLogger(__name__)

_REMOVE = EDIT_KINDS.index("remove") * MAX_POSITIONS  # action id of "remove, position 0"
_KEEP_CACHE = 4096  # keep-sets remembered per policy (claims; a rewrite asks once per step)
DEFAULT_KS: tuple[int, ...] = (1, 2, 3, 4, 5, 6, 7, 8)
TUNE_MAX_STEPS = 32


class WordEncoder(Protocol):
    """What :class:`KeyBertPolicy` needs of an encoder: L2-normalised rows, one per text."""

    def encode(self, texts: list[str]) -> np.ndarray: ...


# ---------------------------------------------------------------- token classes


def is_punct(text: str) -> bool:
    """spaCy's lexical ``is_punct``: every character is Unicode punctuation (category P*)."""
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


def is_content(token: Token) -> bool:
    """A token worth keeping as a keyword: not a stop word (spaCy's ``is_stop``), not punctuation."""
    return not token.is_stop and not is_punct(token.text)


# ---------------------------------------------------------------- from a keep-set to edits


def align(
    claim: Sequence[str], current: Sequence[str], keep: frozenset[int] = frozenset()
) -> list[tuple[int, ...]] | None:
    """The claim positions each token of ``current`` holds; ``current`` is the claim's tokens
    (texts) after removals, so they are a subsequence of ``claim``.

    Of all embeddings, the one that drops the fewest kept tokens (``keep``: claim positions), then
    the one that drops the earliest tokens: the state the leftmost-first removals of
    :func:`next_removal` leave (``a a b`` keeping the second ``a``, minus its first token, is
    ``a b`` = positions 1, 2, not 0, 2). Usually each token holds one claim token. spaCy may split
    a shortened query differently (``D patients.`` minus ``patients`` is ``D.``, one token): then
    the tokens are aligned on their characters and a token may hold several claim tokens (``D.``
    holds ``D`` and ``.``) or share one with its neighbour. None when ``current`` is not made of
    the claim's tokens in order."""
    found = _align_tokens(claim, current, keep)
    return found if found is not None else _align_characters(claim, current, keep)


def _align_tokens(claim: Sequence[str], current: Sequence[str], keep: frozenset[int]) -> list[tuple[int, ...]] | None:
    n, m = len(current), len(claim)
    inf = math.inf
    # cost[i][j]: fewest kept claim tokens dropped embedding current[i:] into claim[j:]
    cost = [[inf] * (m + 1) for _ in range(n + 1)]
    cost[n][m] = 0
    for j in range(m - 1, -1, -1):
        cost[n][j] = cost[n][j + 1] + (j in keep)
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            drop = cost[i][j + 1] + (j in keep)
            match = cost[i + 1][j + 1] if current[i] == claim[j] else inf
            cost[i][j] = min(drop, match)
    if cost[0][0] == inf:
        return None
    out: list[tuple[int, ...]] = []
    i = j = 0
    while i < n:
        if cost[i][j + 1] + (j in keep) == cost[i][j]:  # drop claim[j] when that costs nothing more
            j += 1
        else:
            out.append((j,))
            i, j = i + 1, j + 1
    return out


def _align_characters(
    claim: Sequence[str], current: Sequence[str], keep: frozenset[int]
) -> list[tuple[int, ...]] | None:
    chars = "".join(current)
    size, m = len(chars), len(claim)
    inf = math.inf
    # cost[j][c]: fewest kept claim tokens dropped spelling chars[c:] with whole tokens of claim[j:]
    cost = [[inf] * (size + 1) for _ in range(m + 1)]
    cost[m][size] = 0
    for j in range(m - 1, -1, -1):
        word, here, after = claim[j], cost[j], cost[j + 1]
        for c in range(size + 1):
            best = after[c] + (j in keep)
            if word and chars.startswith(word, c):
                best = min(best, after[c + len(word)])
            here[c] = best
    if cost[0][0] == inf:
        return None
    spans: list[tuple[int, int, int]] = []  # (claim position, start, end) in chars
    j = c = 0
    while c < size:
        if cost[j + 1][c] + (j in keep) == cost[j][c]:
            j += 1
        else:
            spans.append((j, c, c + len(claim[j])))
            c += len(claim[j])
            j += 1
    out: list[tuple[int, ...]] = []
    start = 0
    for text in current:
        end = start + len(text)
        out.append(tuple(p for p, a, b in spans if a < end and b > start))
        start = end
    return out


def next_removal(claim: ParsedQuery, keep: frozenset[int], current: ParsedQuery, mask: Sequence[bool]) -> int | None:
    """The remove action of the leftmost token of ``current`` that holds only claim tokens not in
    ``keep`` (and none it shares with another token); None when there is none, nothing is to be
    kept, that token sits past position 31, the removal is masked or ``current`` is not made of
    the claim's tokens (:func:`align`)."""
    if not keep:
        return None
    words = [t.text for t in claim.tokens]
    held = align(words, [t.text for t in current.tokens], keep)
    if held is None:
        log.debug("%r is not made of the tokens of the claim %r; stopping", current.text, claim.text)
        return None
    shared = Counter(p for positions in held for p in positions)
    for at, positions in enumerate(held):
        if not positions or any(p in keep or shared[p] > 1 for p in positions):
            continue
        if at >= MAX_POSITIONS:
            return None
        action = _REMOVE + at
        if not mask[action]:
            return None
        after = apply_action(current, action).next_query
        if _glues(current, at, after) or _traps(words, keep, after):
            continue
        return action
    return None


def _traps(claim: Sequence[str], keep: frozenset[int], after: str) -> bool:
    """Whether spaCy would read ``after`` with a kept word and an unkept word in one token, which
    no removal can then separate (``RLS) -40%`` minus ``)`` is ``RLS-40%``: ``RLS-40`` is one
    token); a kept word glued to a punctuation mark (``D.``) is harmless and allowed."""
    held = align(claim, [t.text for t in parse(after).tokens], keep)
    if held is None:
        return True
    return any(
        any(p in keep for p in positions) and any(p not in keep and standard_tokens(claim[p]) for p in positions)
        for positions in held
    )


def _glues(current: ParsedQuery, at: int, after: str) -> bool:
    """Whether removing token ``at`` changes the other words a search engine sees: the standard
    analyzer's terms of ``after`` are not those of the other tokens (``elderly, the`` minus the
    comma written ``elderlythe``)."""
    tokens = current.tokens
    before = "".join(t.text + t.whitespace for t in tokens[:at])
    rest = before + " " + "".join(t.text + t.whitespace for t in tokens[at + 1 :])
    return standard_tokens(after) != standard_tokens(rest)


class KeepSetPolicy:
    """The shared ``choose``: a keep-set from the claim (cached per claim text), then removals."""

    name: str
    reward: RewardMode
    target_return: float
    _keeps: OrderedDict[str, frozenset[int]]

    def keep_set(self, claim: ParsedQuery) -> frozenset[int]:  # pragma: no cover - each policy has its own
        raise NotImplementedError

    @property
    def step_limit(self) -> int:
        """Edits at most by default: one removal per token in reach (``TUNE_MAX_STEPS``)."""
        return TUNE_MAX_STEPS

    def keep(self, claim: str) -> frozenset[int]:
        """Positions of the tokens of ``claim`` (as :func:`~.actions.parse` splits it) to keep."""
        found = self._keeps.get(claim)
        if found is None:
            found = self.keep_set(parse(claim))
            self._keeps[claim] = found
            while len(self._keeps) > _KEEP_CACHE:
                self._keeps.popitem(last=False)
        return found

    def choose(self, episode: Episode) -> int | None:
        claim = episode.queries[0]
        return next_removal(parse(claim), self.keep(claim), parse(episode.queries[-1]), episode.mask)


def _first_k(ranked: Iterable[tuple[Any, int, str]], k: int) -> frozenset[int]:
    """Positions of the first ``k`` distinct words of ``ranked`` ((sort key, position, word)
    already sorted); a word written twice counts once, its first occurrence."""
    keep: dict[str, int] = {}
    for _, position, word in ranked:
        if word not in keep:
            keep[word] = position
            if len(keep) == k:
                break
    return frozenset(keep.values())


# ---------------------------------------------------------------- stop words


@dataclass(frozen=True, slots=True)
class StopwordPolicy(KeepSetPolicy):
    """Stop-word removal: keep every token that is not a stop word or punctuation."""

    name: str = field(default="stopwords", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)
    _keeps: OrderedDict[str, frozenset[int]] = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def keep_set(self, claim: ParsedQuery) -> frozenset[int]:
        return frozenset(i for i, t in enumerate(claim.tokens) if is_content(t))


# ---------------------------------------------------------------- IDF


class IdfTable:
    """Document frequencies of a corpus under Elasticsearch's standard analyzer, and Lucene's idf::

        idf(t) = ln(1 + (N - df(t) + 0.5) / (df(t) + 0.5))

    (N documents, df(t) of them contain the term t), the idf of the ``bm25-plain`` and
    ``bm25-and`` endpoints. A term absent from the corpus gets idf 0 (every present term has a
    positive one), so it is never kept before a present term: on an AND endpoint a query with it
    matches nothing."""

    __slots__ = ("df", "n_docs")

    def __init__(self, n_docs: int, df: Mapping[str, int]) -> None:
        check_positive("IdfTable", n_docs=n_docs)
        bad = [(t, c) for t, c in df.items() if not isinstance(c, int) or not 0 < c <= n_docs]
        if bad:
            raise InputError(f"document frequencies must be in 1..{n_docs} (the corpus size), got {bad[:3]}")
        self.n_docs = n_docs
        self.df = dict(df)

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> IdfTable:
        """Count, for every standard-analyzer term, the texts that contain it."""
        df: Counter[str] = Counter()
        n = 0
        for text in texts:
            df.update(set(standard_tokens(text)))
            n += 1
        if n == 0:
            raise InputError("cannot compute IDF over an empty corpus")
        return cls(n, df)

    @classmethod
    def from_passages(cls, passages: Iterable[Passage]) -> IdfTable:
        """:meth:`from_texts` over what an index searches: each passage's title and text."""
        return cls.from_texts(p.contents for p in passages)

    def idf(self, term: str) -> float:
        """Lucene's idf of one (already analysed) term; 0 when the corpus lacks it."""
        df = self.df.get(term, 0)
        if df == 0:
            return 0.0
        return math.log(1 + (self.n_docs - df + 0.5) / (df + 0.5))

    def word_idf(self, word: str) -> float:
        """The idf of a word as written (a spaCy token): the highest idf of its standard-analyzer
        terms (``COVID-19`` is ``covid`` and ``19``), 0 when it has none."""
        return max((self.idf(t) for t in standard_tokens(word)), default=0.0)


@dataclass(frozen=True, slots=True)
class TopIdfPolicy(KeepSetPolicy):
    """Keep the ``k`` content tokens (:func:`is_content`) with the highest IDF in ``idf``; ties go
    to the earlier token, and a word repeated in the claim (same lower-cased text) counts once."""

    k: int
    idf: IdfTable = field(repr=False, compare=False)
    name: str = field(default="", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)
    _keeps: OrderedDict[str, frozenset[int]] = field(default_factory=OrderedDict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_positive("TopIdfPolicy", k=self.k)
        if not isinstance(self.idf, IdfTable):
            raise InputError(f"TopIdfPolicy needs an IdfTable, got {type(self.idf).__name__}")
        object.__setattr__(self, "name", f"top-idf-{self.k}")

    def keep_set(self, claim: ParsedQuery) -> frozenset[int]:
        scored = sorted(
            (-self.idf.word_idf(t.text), i, t.text.lower()) for i, t in enumerate(claim.tokens) if is_content(t)
        )
        return _first_k(scored, self.k)


# ---------------------------------------------------------------- KeyBERT


def is_candidate(token: Token) -> bool:
    """A KeyBERT candidate: a content token made of letters and digits only (``COVID-19`` is not)."""
    return is_content(token) and token.text.isalnum()


@dataclass(frozen=True, slots=True)
class KeyBertPolicy(KeepSetPolicy):
    """KeyBERT (Grootendorst 2020) with unigram candidates: embed the claim and each candidate word
    (:func:`is_candidate`, lower-cased) with ``encoder`` and keep the ``k`` words most similar to
    the claim (cosine; ties go to the earlier word; a repeated word counts once, its first
    occurrence kept). ``encoder.encode(list[str])`` returns L2-normalised rows: the MiniLM state
    encoder (``state_encoder("minilm")``) in use. Word embeddings are cached per word."""

    k: int
    encoder: WordEncoder = field(repr=False, compare=False)
    name: str = field(default="", init=False)
    reward: RewardMode = field(default="dense", init=False)
    target_return: float = field(default=1.0, init=False)
    _keeps: OrderedDict[str, frozenset[int]] = field(default_factory=OrderedDict, init=False, repr=False, compare=False)
    _words: dict[str, np.ndarray] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_positive("KeyBertPolicy", k=self.k)
        if not isinstance(self.encoder, SentenceEncoder):
            raise InputError(
                f"KeyBertPolicy needs an encoder with encode(list[str]), got {type(self.encoder).__name__}"
            )
        object.__setattr__(self, "name", f"keybert-{self.k}")

    def _encode(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(self.encoder.encode(texts), dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(texts):
            raise InputError(f"the encoder gave an array of shape {vectors.shape} for {len(texts)} texts")
        return vectors

    def keep_set(self, claim: ParsedQuery) -> frozenset[int]:
        words = [(i, t.text.lower()) for i, t in enumerate(claim.tokens) if is_candidate(t)]
        if not words:
            return frozenset()
        todo = [w for w in dict.fromkeys(w for _, w in words) if w not in self._words]
        if todo:
            self._words.update(zip(todo, self._encode(todo), strict=True))
        claim_vector = self._encode([claim.text])[0]
        scored = sorted((-float(self._words[w] @ claim_vector), i, w) for i, w in words)
        return _first_k(scored, self.k)


# ---------------------------------------------------------------- tuning k


def tune_k(
    make_policy: Callable[[int], RewritePolicy],
    claims: Sequence[Claim],
    env: SearchEnvironment,
    ks: Sequence[int] = DEFAULT_KS,
    max_steps: int = TUNE_MAX_STEPS,
) -> tuple[int, dict[int, float]]:
    """The ``k`` of ``make_policy(k)`` with the highest mean reward of the final query over
    ``claims`` (training claims with qrels in ``env``), and the mean reward of every ``k``; ties go
    to the smaller ``k``. Each claim is rewritten without the environment (``env`` only scores the
    final query), as at inference."""
    if not claims:
        raise InputError("tune_k needs at least one training claim")
    if not ks:
        raise InputError("tune_k needs at least one k to try")
    check_positive("tune_k", max_steps=max_steps)
    for k in ks:
        check_positive("tune_k", k=k)
    means: dict[int, float] = {}
    for k in sorted(set(ks)):
        policy = make_policy(k)
        finals = [rewrite(claim, policy, max_steps=max_steps).final for claim in claims]
        means[k] = float(np.mean([env.reward(c, q) for c, q in zip(claims, finals, strict=True)]))
    best = min(means, key=lambda k: (-means[k], k))
    return best, means
