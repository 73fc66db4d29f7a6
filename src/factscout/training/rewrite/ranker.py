"""Train the candidate-ranking rewrite policy (:mod:`factscout.rewrite.ranker`).

    factscout train rewrite-ranker --claims C --qrels Q --corpus P --retriever bm25-and --out DIR

No trajectories are needed: the environment scores every candidate query of a training claim
directly (AP@50 against the claim's qrels, as BFS scores its edits), and the policy learns to
predict that score from what it may see at inference.

1. **Token model.** Every content word of a training claim is an example; its label is whether
   all its standard-analyzer terms occur in one of the claim's relevant passages (title and text).
   A logistic regression (L2, ``token_c``) on standardised :func:`~.ranker.word_features`.
2. **Candidates.** Each training claim's candidates (:func:`~.ranker.candidates`) are searched on
   the endpoint and scored by the environment. Their token log-probabilities come from token
   models fitted on the *other* folds (``folds``-fold, grouped by claim), so the reward model sees
   probabilities as noisy as those of unseen claims.
3. **Reward model.** Gradient-boosted regression trees (scikit-learn's
   ``GradientBoostingRegressor``: squared error, ``trees`` trees of depth ``depth``, learning rate
   ``rate``, row subsampling 0.8) from :func:`~.ranker.candidate_features` to the candidate's
   reward (``raw``) or its gain over the claim's (``gain``: per-claim difficulty removed, which
   helps on disjunctive endpoints), exported to arrays (:class:`~.ranker.Trees`).
4. **Choices by cross-validation.** The target and the margin (:attr:`RankerConfig.margin`, from
   ``margins``) are those whose picks, each fold's claims ranked by trees fitted on the other
   folds, have the highest mean reward on the training claims (ties: raw, then the larger margin).

``training`` records that cross-validated estimate for every choice, the oracle over the
candidates (the headroom) and the claim's own mean reward, all on the training claims.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.records import Claim, Passage
from factscout.retrieve.standard_analyzer import standard_tokens
from factscout.rewrite.actions import ParsedQuery, parse
from factscout.rewrite.agreement import PassageVectors, agreement_encoder
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.keywords import IdfTable
from factscout.rewrite.ranker import (
    RankerConfig,
    RankerPolicy,
    TokenModel,
    Trees,
    Word,
    candidates,
    content_words,
    endpoint_search,
    observed_features,
    word_features,
)
from factscout.training.base import described

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RankerSettings:
    """The two models' hyper-parameters and the cross-validation."""

    folds: int = described(5, "cross-validation folds (out-of-fold features; target and margin)")
    token_c: float = 0.1
    trees: int = 200
    depth: int = 3
    rate: float = 0.05
    seed: int = 0
    margins: tuple[float, ...] = (0.0, 0.01, 0.02, 0.05, 0.1)
    targets: tuple[str, ...] = ("raw", "gain")
    booster: str = described("exact", "exact (GradientBoostingRegressor) | hist (histogram boosting, ~10x faster)")

    def __post_init__(self) -> None:
        if self.folds < 2 or self.trees < 1 or self.depth < 1:
            raise InputError(f"RankerSettings needs folds >= 2, trees >= 1, depth >= 1: {self}")
        if not (self.token_c > 0 and 0 < self.rate <= 1):
            raise InputError(f"RankerSettings needs token_c > 0 and 0 < rate <= 1: {self}")
        if not self.margins or any(m < 0 for m in self.margins):
            raise InputError(f"RankerSettings needs margins >= 0: {self.margins}")
        if not self.targets or set(self.targets) - {"raw", "gain"}:
            raise InputError(f"RankerSettings targets are from raw, gain: {self.targets}")
        if self.booster not in ("exact", "hist"):
            raise InputError(f"RankerSettings booster is exact or hist, got {self.booster!r}")


@dataclass(slots=True)
class _ClaimData:
    claim: Claim
    parsed: ParsedQuery
    words: list[Word]  # its content words
    features: np.ndarray  # word features
    labels: np.ndarray  # word in a relevant passage


def _sklearn() -> Any:
    try:
        import sklearn  # noqa: F401
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency(
            "training the ranker policy needs scikit-learn: pip install 'factscout[dense]'"
        ) from None
    from sklearn import ensemble, linear_model

    return linear_model, ensemble


def fit_token_model(features: np.ndarray, labels: np.ndarray, c: float) -> TokenModel:
    """Logistic regression (L2 strength 1/c) on standardised features."""
    linear_model, _ = _sklearn()
    mean = features.mean(axis=0)
    scale = features.std(axis=0)
    scale[scale == 0] = 1.0
    if len(set(labels.tolist())) < 2:  # every word in (or out of) the passages: a constant model
        p = float(np.clip(labels.mean() if len(labels) else 0.5, 1e-3, 1 - 1e-3))
        return TokenModel(mean, scale, np.zeros_like(mean), math.log(p / (1 - p)))
    model = linear_model.LogisticRegression(C=c, max_iter=3000).fit((features - mean) / scale, labels)
    return TokenModel(mean, scale, model.coef_[0].astype(np.float64), float(model.intercept_[0]))


def fit_trees(x: np.ndarray, y: np.ndarray, settings: RankerSettings) -> Trees:
    """Gradient-boosted regression trees, exported to :class:`Trees` arrays."""
    _, ensemble = _sklearn()
    if settings.booster == "hist":
        return _fit_hist_trees(ensemble, x, y, settings)
    model = ensemble.GradientBoostingRegressor(
        n_estimators=settings.trees,
        max_depth=settings.depth,
        learning_rate=settings.rate,
        subsample=0.8,
        random_state=settings.seed,
    ).fit(x, y)
    trees = []
    for (estimator,) in model.estimators_:
        tree = estimator.tree_
        inner = tree.children_left >= 0
        trees.append(
            (
                np.where(inner, tree.feature, -1),
                tree.threshold,
                tree.children_left,
                tree.children_right,
                tree.value[:, 0, 0],
            )
        )
    return _join_trees(trees, float(np.asarray(model.init_.predict(x[:1])).ravel()[0]), settings.rate)


def _fit_hist_trees(ensemble: Any, x: np.ndarray, y: np.ndarray, settings: RankerSettings) -> Trees:
    """Histogram gradient boosting (binned features: ~10x faster on 100k+ candidates; no row
    subsampling), exported from its predictors' node arrays. Its leaf values already carry the
    learning rate, so the exported ``rate`` is 1; a row goes left when its feature is <= the node's
    real-valued threshold, as in :class:`Trees` (the features are never missing)."""
    model = ensemble.HistGradientBoostingRegressor(
        max_iter=settings.trees,
        max_depth=settings.depth,
        max_leaf_nodes=2**settings.depth,
        learning_rate=settings.rate,
        early_stopping=False,
        random_state=settings.seed,
    ).fit(x, y)
    trees = []
    for (predictor,) in model._predictors:  # private, but the only export; the tests compare predictions
        n = predictor.nodes
        leaf = n["is_leaf"].astype(bool)
        trees.append(
            (
                np.where(leaf, -1, n["feature_idx"]),
                np.where(leaf, 0.0, n["num_threshold"]),
                np.where(leaf, -1, n["left"].astype(np.int64)),
                np.where(leaf, -1, n["right"].astype(np.int64)),
                np.where(leaf, n["value"], 0.0),
            )
        )
    return _join_trees(trees, float(np.asarray(model._baseline_prediction).ravel()[0]), 1.0)


def _join_trees(trees: Sequence[tuple[np.ndarray, ...]], init: float, rate: float) -> Trees:
    """One :class:`Trees` from per-tree (feature, threshold, left, right, value) node arrays whose
    child indices are local to the tree and -1 at leaves."""
    sizes = [len(t[0]) for t in trees]
    roots = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int32) if trees else np.zeros(0, np.int32)
    feature, threshold, left, right, value = (np.concatenate(parts) for parts in zip(*trees, strict=True))
    offsets = np.repeat(roots, sizes)
    return Trees(
        feature.astype(np.int32),
        threshold.astype(np.float64),
        np.where(left >= 0, left + offsets, -1).astype(np.int32),
        np.where(right >= 0, right + offsets, -1).astype(np.int32),
        value.astype(np.float64),
        roots,
        init,
        rate,
    )


def _folds(n: int, folds: int, seed: int) -> np.ndarray:
    """A fold number per claim: a seeded permutation cut into ``folds`` near-equal parts."""
    out = np.empty(n, dtype=np.int64)
    out[np.random.default_rng(seed).permutation(n)] = np.arange(n) % folds
    return out


def _pick(rewards: np.ndarray, predicted: np.ndarray, margin: float) -> float:
    """The reward of the candidate a ranker with ``margin`` searches (candidate 0 is the claim)."""
    best = int(np.argmax(predicted))
    return float(rewards[best] if predicted[best] - predicted[0] > margin else rewards[0])


def train_ranker(
    claims: Sequence[Claim],
    qrels: Mapping[str, Mapping[str, int]],
    passages: Mapping[str, Passage],
    retriever: Any,
    config: RankerConfig | None = None,
    settings: RankerSettings | None = None,
    *,
    idf: IdfTable | None = None,
    vectors: PassageVectors | None = None,
) -> RankerPolicy:
    """Fit the ranker policy on ``claims`` (those with a relevant passage in ``qrels``) searching
    ``retriever``; ``passages`` by id give the relevant passages' words and, without ``idf``, the
    corpus's idf. With ``config.semantic`` the reward model also reads the agreement features
    (:mod:`~factscout.rewrite.agreement`); their passage vectors are ``vectors`` or, by default,
    every passage encoded once by that encoder (through the on-disk cache). Returns the policy
    bound to ``retriever``."""
    settings = settings or RankerSettings()
    config = config or RankerConfig(retriever=str(getattr(retriever, "name", "")))
    started = time.perf_counter()
    idf = idf or IdfTable.from_passages(passages.values())
    env = SearchEnvironment(retriever, qrels, "AP@50")
    data: list[_ClaimData] = []
    for claim in claims:
        relevant = [passages[p] for p, grade in qrels.get(claim.claim_id, {}).items() if grade > 0 and p in passages]
        if not relevant:
            continue
        terms = set().union(*(standard_tokens(p.contents) for p in relevant))
        parsed = parse(claim.text)
        words = content_words(parsed, idf)
        labels = np.array([all(t in terms for t in standard_tokens(w.text)) for w in words], dtype=bool)
        data.append(_ClaimData(claim, parsed, words, word_features(parsed, words, idf), labels))
    if len(data) < settings.folds:
        raise InputError(
            f"the ranker needs at least {settings.folds} training claims with a relevant passage in the corpus, "
            f"got {len(data)}"
        )
    fold = _folds(len(data), settings.folds, settings.seed)

    def token_model(keep: np.ndarray) -> TokenModel:
        rows = [d for d, k in zip(data, keep, strict=True) if k]
        return fit_token_model(
            np.concatenate([d.features for d in rows]), np.concatenate([d.labels for d in rows]), settings.token_c
        )

    search = endpoint_search(retriever, config.observe)
    if config.semantic and vectors is None:
        vectors = PassageVectors(passages, agreement_encoder(config.semantic, idf))
        vectors.prime(list(passages.values()))
    cand_x: dict[int, np.ndarray] = {}
    cand_y: dict[int, np.ndarray] = {}
    for f in range(settings.folds):
        model = token_model(fold != f)
        for i in np.flatnonzero(fold == f).tolist():
            d = data[i]
            parsed, words = d.parsed, d.words
            log_p = model.log_p(d.features) if len(words) else np.zeros(0)
            cands = candidates(parsed, words, config)
            results = [search(c.text) for c in cands]
            cand_x[i] = observed_features(parsed.text, cands, words, log_p, results, config, vectors)
            cand_y[i] = np.asarray(env.rewards(d.claim, [c.text for c in cands]))
    x = np.concatenate([cand_x[i] for i in range(len(data))])
    y = np.concatenate([cand_y[i] for i in range(len(data))])
    group = np.concatenate([np.full(len(cand_y[i]), i) for i in range(len(data))])
    claim_reward = np.array([cand_y[i][0] for i in range(len(data))])  # candidate 0 is the claim
    targets = {"raw": y, "gain": y - claim_reward[group]}
    chosen: dict[tuple[str, float], float] = {}
    for target in settings.targets:
        predicted = np.zeros(len(y))
        for f in range(settings.folds):
            held = fold[group] == f
            predicted[held] = fit_trees(x[~held], targets[target][~held], settings).predict(x[held])
        for margin in settings.margins:
            picks = [_pick(cand_y[i], predicted[group == i], margin) for i in range(len(data))]
            chosen[target, margin] = float(np.mean(picks))
    target, margin = max(chosen, key=lambda k: (round(chosen[k], 6), k[0] == "raw", k[1]))
    config = replace(config, margin=margin)
    trees = fit_trees(x, targets[target], settings)
    policy = RankerPolicy(config, token_model(np.ones(len(data), dtype=bool)), trees, idf)
    training = {
        "claims": len(data),
        "features": config.n_features,
        "candidates": len(y),
        "settings": asdict(settings),
        "target": target,
        "margin": margin,
        "cross-validated AP@50": round(chosen[target, margin], 4),
        "cross-validated AP@50 of every choice": {f"{t}, margin {m}": round(v, 4) for (t, m), v in chosen.items()},
        "claim AP@50": round(float(claim_reward.mean()), 4),
        "oracle AP@50 over the candidates": round(float(np.mean([cand_y[i].max() for i in range(len(data))])), 4),
        "seconds": round(time.perf_counter() - started, 1),
    }
    log.info("ranker: %s", training)
    policy.training.update(training)
    return policy.bind(retriever, vectors=vectors)
