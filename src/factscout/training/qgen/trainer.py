"""Train the qgen query generator (:mod:`factscout.plan.qgen`): ``factscout train qgen``.

The shipped model (``plan/models/qgen.json``) is rebuilt by :func:`train_default`: the token
model on AVeriTeC train, ClaimDecomp dev and QuanTemp test questions, the candidate model on
what candidates retrieve from AVeriTeC's gold answers (:class:`EvidencePool`).
:func:`cross_fitted_plans` plans a training dataset honestly: each fold is planned by a model
fitted on the other folds (:func:`factscout.training.splits.folds_of`, ``by="shuffle"``).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factscout.errors import DataNotFound, InputError
from factscout.plan.qgen import (
    DEFAULT_MAX_QUERIES,
    DEFAULT_MODEL_PATH,
    DEFAULT_SOURCES,
    SEED,
    QgenPlanner,
    QueryGenerator,
    TrainingPair,
    default_pairs,
    pairs_from_claims,
)
from factscout.plan.qgen_words import normal_text
from factscout.records import Claim, Query
from factscout.training.splits import folds_of

if TYPE_CHECKING:
    pass

log = logging.getLogger(__name__)


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
    fold_claims = folds_of(claims, folds, seed, by="shuffle", key=[c.claim_id for c in claims])
    fold_of = {c.claim_id: f for f, fold in enumerate(fold_claims) for c in fold}
    plans: dict[str, list[Query]] = {}
    for f in range(folds):
        held = fold_claims[f]
        if not held:
            continue
        held_texts = {normal_text(c.text) for c in held}
        train = [p for p in own if fold_of.get(p.claim_id) != f and normal_text(p.claim) not in held_texts]
        train += [p for p in extra_pairs if normal_text(p.claim) not in held_texts]
        gen = QueryGenerator(**settings).fit(train, evidence)
        planner = QgenPlanner(generator=gen, max_queries=max_queries)
        for c, qs in zip(held, planner.plan_many(held), strict=True):
            plans[c.claim_id] = qs
    return [q for c in claims for q in plans[c.claim_id]]
