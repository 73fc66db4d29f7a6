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
Rebuild it with ``factscout train qgen --out PATH`` (:func:`factscout.training.qgen.trainer.train_default`).
For honest evaluation on a training dataset use :func:`factscout.training.qgen.trainer.cross_fitted_plans` (each fold planned
by a model fitted on the other folds); the planner itself never uses a claim's own pair (same
id or same text) as a neighbour.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from factscout.errors import DataNotFound, InputError, PlanError
from factscout.plan.base import PLANNERS, finalize
from factscout.plan.decompose import (
    DEFAULT_MODEL,
    load_nlp,
)
from factscout.plan.qgen_features import (
    CANDIDATE_FEATURES,
    TOKEN_FEATURES,
    ClaimView,
    GeneratedQuery,
    Logistic,
    NeighbourIndex,
    candidate_label,
    mmr_select,
)
from factscout.plan.qgen_words import normal_text, stems
from factscout.records import Claim, Query

if TYPE_CHECKING:
    from spacy.tokens import Doc

log = logging.getLogger(__name__)

FORMAT = "factscout-qgen/1"
DEFAULT_MODEL_PATH = Path(__file__).with_name("models") / "qgen.json"
DEFAULT_SOURCES: tuple[tuple[str, str], ...] = (("averitec", "train"), ("claimdecomp", "dev"), ("quantemp", "test"))
DEFAULT_MAX_QUERIES = 8
SEED = 0


class EvidenceLabels(Protocol):
    """Gold evidence that labels candidates by what they retrieve
    (:class:`factscout.training.qgen.trainer.EvidencePool`)."""

    def covers(self, pair_id: str) -> bool: ...

    def labels(self, items: Sequence[tuple[str, str, Sequence[str]]]) -> list[list[float]]: ...


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
            self._by_text.setdefault(normal_text(p.claim), []).append(i)

    def _excluded(self, text: str, exclude_ids: Iterable[str]) -> set[int]:
        out = set(self._by_text.get(normal_text(text), ()))
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

    def _view(self, doc: Doc, text: str, exclude: set[int]) -> ClaimView:
        index = self._require_index()
        hits = index.search(text, self.neighbours, exclude)
        return ClaimView(doc, index, hits, self._question_stems)

    # -- training ------------------------------------------------------------------------------

    def fit(self, pairs: Sequence[TrainingPair], evidence: EvidenceLabels | None = None) -> QueryGenerator:
        """Train on (claim, gold sub-questions) pairs; any subset works (at least 2 pairs).

        With ``evidence``, the candidate model learns from what candidates of the pairs it covers
        retrieve (an :class:`EvidenceLabels`, e.g. :class:`factscout.training.qgen.trainer.EvidencePool`); without, from their overlap with the gold questions.
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
            except Exception as exc:
                raise PlanError(f"qgen could not build candidates for the claim: {type(exc).__name__}: {exc}") from exc
            if not cands:
                out.append([])
                continue
            scores = self.candidate_model.predict(np.array([c.features for c in cands]))
            picked = mmr_select(cands, scores, n, self.redundancy)
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
            raise InputError(f"{path} was trained with other features; retrain it: factscout train qgen")
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
