"""``check``: the whole pipeline for a claim, plan -> retrieve -> fuse -> re-rank -> select ->
stance -> verdict, returning one :class:`~factscout.report.Report` per claim.

This is the one core behind ``factscout check``, the HTTP API and the web page (Quin+'s
"verify any claim", Samarinas et al. 2021, with QuanTemp++'s planning, fusion and
published-before-claim filter, Prabhu 2025):

1. **plan** the claim into queries (default: the offline ``decompose`` planner; the claim itself
   is always the first query);
2. **retrieve** ``depth`` passages per query from the index, only passages published before the
   claim's date when it has one (``date_filter``; undated passages follow the index's policy);
3. **fuse** each claim's query rankings (default CombSUM over min-max normalised scores: on
   AVeriTeC it gives the planners their best nDCG@10 and R@100, README Table B); every hit keeps
   the queries that found it;
4. **re-rank** the fused top ``rerank_depth`` with factscout's cross-encoder (``rerank=True``, or
   any ``reranker``), its score interpolated with the fusion score by the weight tuned on
   training claims (off by default: +0.010 nDCG@10 over hybrid on held-out SciFact, not
   significant, for about 50 cross-encoder passes per claim);
5. **select** evidence sentences from the top ``passages`` passages (embedding threshold, or any
   selector with ``select_passage(claim, passage)``);
6. classify each selected sentence's **stance** and apply the **verdict** rule (Quin+ count
   rule with tuned thresholds).

Claims are planned and searched in batches; a claim with no evidence gets the verdict
``not enough evidence``, never an error.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS, Claim, Passage, Query, Ranking, Sentence, Stance
from factscout.report import Evidence, EvidenceSentence, Report, VerdictSummary, days_between
from factscout.verify.classifier import CLASSIFIER_LABELS

log = logging.getLogger(__name__)


class Selector(Protocol):
    def select_passage(self, claim: Claim, passage: Passage) -> list[Sentence]: ...


class Reranker(Protocol):
    def rerank(
        self, claim_text: str, ranking: Ranking, passages: Any, top_n: int = ..., interpolate: Any = ...
    ) -> Ranking: ...


SELECTORS = ("threshold", "bio")
STANCES = ("head", "cross")
VERDICT_METHODS = ("rule", "classifier")


@dataclass(frozen=True, slots=True)
class CheckSettings:
    """The knobs of :class:`Checker`; every one is recorded in each report's provenance."""

    planner: str = "decompose"
    fusion: str = "combsum-norm"
    depth: int = 100
    passages: int = 5  # read for evidence sentences: 5 keeps check under 1 s (README latency); 1-10 compared there
    rerank: bool = False  # the shipped cross-encoder, interpolated with the fusion score
    rerank_depth: int = 50
    date_filter: bool = True
    selector: str = "threshold"  # or "bio": the BIO tagger (more precise, finds less; select/models)
    stance: str = "head"  # or "cross": the stance cross-encoder (reads claim and sentence together; slower)
    verdict: str = "rule"  # or "classifier": the QuanTemp++ classifier over the top-3 evidence (4 labels)
    threshold: float | None = None  # embedding-threshold selector; None: the tuned default
    min_evidence: int | None = None  # count rule; None: the tuned defaults
    min_confidence: float | None = None
    max_queries: int | None = None
    temporal: str | None = None  # time-aware re-ranking with this temporal ranking (temporal/rerank.py)
    temporal_weight: float = 0.3

    def __post_init__(self) -> None:
        for name in ("depth", "passages", "rerank_depth"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        if self.verdict not in VERDICT_METHODS:
            raise InputError(f"no verdict method {self.verdict!r}; known: {', '.join(VERDICT_METHODS)}")
        if self.selector not in SELECTORS:
            raise InputError(f"no selector {self.selector!r}; known: {', '.join(SELECTORS)}")
        if self.stance not in STANCES:
            raise InputError(f"no stance model {self.stance!r}; known: {', '.join(STANCES)}")
        if self.passages > self.depth:
            raise InputError(f"passages ({self.passages}) cannot exceed the retrieval depth ({self.depth})")
        if self.temporal is not None:
            from factscout.temporal.rerank import TimeAwareReranker

            TimeAwareReranker(self.temporal, self.temporal_weight)  # an unknown method lists the known ones


@dataclass(frozen=True, slots=True)
class Retrieved:
    """What retrieval found for one claim: its planned queries and its fused (re-ranked) ranking."""

    queries: tuple[Query, ...]
    ranking: Ranking
    extra: dict[str, Any] = field(default_factory=dict)


class CachedEncoder:
    """Wraps an encoder so the selector and the stance model embed each text once per claim."""

    def __init__(self, encoder: Any, size: int = 50_000) -> None:
        self.encoder, self.size = encoder, size
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()

    @property
    def model(self) -> Any:
        """The wrapped sentence-transformers model (the BIO tagger reads its token states)."""
        return getattr(self.encoder, "model", self.encoder)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if missing:
            for t, v in zip(missing, self.encoder.encode(missing), strict=True):
                self._cache[t] = np.asarray(v, dtype=np.float32)
        rows = []
        for t in texts:
            self._cache.move_to_end(t)
            rows.append(self._cache[t])
        while len(self._cache) > self.size:
            self._cache.popitem(last=False)
        dim = rows[0].shape[0] if rows else 0
        return np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)


class Checker:
    """Checks claims against one index. Build it once; models load on first use and are shared.

    Components default to factscout's offline ones: the ``settings.planner`` planner, the
    ``settings.fusion`` fusion, the embedding-threshold selector, the shipped stance head and
    the Quin+ count rule. Pass your own to swap any of them (``reranker=None`` skips re-ranking).
    """

    def __init__(
        self,
        retriever: Any,
        settings: CheckSettings | None = None,
        *,
        planner: Any = None,
        selector: Selector | None = None,
        stance: Any = None,
        rule: Any = None,
        reranker: Reranker | None = None,
        encoder: Any = None,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        from factscout.fuse import make_fusion
        from factscout.plan import make_planner
        from factscout.verify.verdict import DEFAULT_MIN_CONFIDENCE, DEFAULT_MIN_EVIDENCE, CountRule

        self.settings = s = settings or CheckSettings()
        self.retriever = retriever
        store = getattr(retriever, "store", None)
        if store is None:
            raise InputError(f"checking needs a retriever with a passage store, got {type(retriever).__name__}")
        self.store = store
        if planner is None:
            planner = make_planner(s.planner, **({"max_queries": s.max_queries} if s.max_queries else {}))
        self.planner = planner
        self.fusion = make_fusion(s.fusion)
        self._encoder = encoder
        self._selector = selector
        self._stance = stance
        if reranker is None and s.rerank:
            from factscout.rerank import CrossEncoderReranker

            reranker = CrossEncoderReranker.load()
        self.reranker = reranker
        self._classifier: Any = None
        self.provenance: dict[str, Any] = dict(provenance or {})
        tuned = (DEFAULT_MIN_EVIDENCE, DEFAULT_MIN_CONFIDENCE)
        if s.stance == "cross":
            tuned = getattr(self.stance, "rule_thresholds", None) or tuned  # tuned with that model
        self.rule = rule or CountRule(
            tuned[0] if s.min_evidence is None else s.min_evidence,
            tuned[1] if s.min_confidence is None else s.min_confidence,
        )
        self.provenance = {"settings": asdict(s), "rule": repr(self.rule), **self.provenance}

    @classmethod
    def from_index(
        cls, directory: str | os.PathLike[str], settings: CheckSettings | None = None, **components: Any
    ) -> Checker:
        """A checker over the index in ``directory`` (built with ``factscout index``)."""
        from factscout.retrieve import load_index
        from factscout.retrieve.index import read_manifest

        path, manifest = read_manifest(directory)
        retriever = load_index(directory)
        info = {"index": str(Path(directory)), "generation": path.name, "retriever": manifest.get("retriever")}
        return cls(retriever, settings, provenance=info, **components)

    # -- components loaded on first use --

    @property
    def encoder(self) -> CachedEncoder:
        """Embeds claims and sentences for selection and stance: the int8 ONNX MiniLM when installed
        (same embeddings, cosine >= 0.998, about twice as fast), else the fp32 one; the BIO
        tagger reads token states, so it always gets the fp32 model."""
        if not isinstance(self._encoder, CachedEncoder):
            if self._encoder is None:
                if self.settings.selector == "bio":
                    from factscout.retrieve.encoder import Encoder

                    self._encoder = Encoder()
                else:
                    from factscout.retrieve.onnx_encoder import fast_encoder

                    self._encoder = fast_encoder()
            self._encoder = CachedEncoder(self._encoder)
        return self._encoder

    @property
    def selector(self) -> Selector:
        if self._selector is None and self.settings.selector == "bio":
            from factscout.select.tagger import BioTagger

            self._selector = BioTagger.load(encoder=self.encoder)
        if self._selector is None:
            from factscout.select.threshold import DEFAULT_THRESHOLD, ThresholdSelector

            threshold = self.settings.threshold if self.settings.threshold is not None else DEFAULT_THRESHOLD
            self._selector = ThresholdSelector(threshold, encoder=self.encoder)
        return self._selector

    @property
    def stance(self) -> Any:
        if self._stance is None:
            if self.settings.stance == "cross":
                from factscout.verify.cross_stance import CrossStanceModel

                self._stance = CrossStanceModel.load()
            else:
                from factscout.verify.stance import StanceHead

                self._stance = StanceHead.load(encoder=self.encoder)
            self.provenance["stance_model"] = {
                "kind": self.settings.stance,
                **dict(getattr(self._stance, "info", {}) or {}),
            }
        return self._stance

    @property
    def classifier(self) -> Any:
        if self._classifier is None:
            from factscout.verify.classifier import VerdictClassifier
            from factscout.verify.stance import StanceHead

            # the classifier was trained on the SBERT-style head's probabilities
            head = self.stance if isinstance(self.stance, StanceHead) else None
            self._classifier = VerdictClassifier.load(encoder=self.encoder, stance=head)
        return self._classifier

    # -- the pipeline --

    def check(self, claim: Claim | str, date: dt.date | None = None) -> Report:
        """Check one claim (a :class:`Claim`, or its text with an optional date)."""
        if isinstance(claim, str):
            claim = Claim("claim", claim, date)
        return self.check_many([claim])[0]

    def check_many(self, claims: Sequence[Claim], batch_size: int = 64) -> list[Report]:
        return list(self.iter_check(claims, batch_size))

    def iter_check(self, claims: Iterable[Claim], batch_size: int = 64) -> Iterator[Report]:
        """Reports in claim order, planning and searching ``batch_size`` claims at a time."""
        batch: list[Claim] = []
        for claim in claims:
            batch.append(claim)
            if len(batch) == batch_size:
                yield from self._check_batch(batch)
                batch = []
        if batch:
            yield from self._check_batch(batch)

    def _check_batch(self, claims: Sequence[Claim]) -> list[Report]:
        return self.judge_many(claims, self.retrieve(claims))

    def judge_many(
        self, claims: Sequence[Claim], found: Sequence[Retrieved], *, passages: int | None = None
    ) -> list[Report]:
        """:meth:`judge` for each claim and what :meth:`retrieve` found for it, embedding the
        whole batch's sentences at once."""
        self._embed_batch(claims, [f.ranking for f in found], passages or self.settings.passages)
        return [
            self.judge(c, f.ranking, f.queries, f.extra, passages=passages) for c, f in zip(claims, found, strict=True)
        ]

    def retrieve(self, claims: Sequence[Claim]) -> list[Retrieved]:
        """Plan, search (with the date filter), fuse and re-rank: each claim's queries and ranking."""
        from factscout.fuse import fuse_by_claim
        from factscout.plan import plan_all
        from factscout.retrieve import search_with_query_dates

        ids = [c.claim_id for c in claims]
        if len(set(ids)) != len(ids):
            raise InputError(f"claim ids must be unique within a batch: {sorted({i for i in ids if ids.count(i) > 1})}")
        queries, failures = plan_all(self.planner, claims)
        failed = {f.claim_id: f.error for f in failures}
        s = self.settings
        if s.date_filter:
            rankings = search_with_query_dates(self.retriever, queries, s.depth)
        else:
            rankings = self.retriever.search(queries, s.depth)
        claim_of = {q.query_id: q.claim_id for q in queries}
        missing: dict[str, set[str]] = {}  # shards of a sharded index that did not answer, per claim
        for r in rankings:
            if r.missing_shards:
                missing.setdefault(claim_of[r.query_id], set()).update(r.missing_shards)
        fused = {r.query_id: r for r in fuse_by_claim(rankings, claim_of, self.fusion, s.depth)}
        by_claim: dict[str, list[Query]] = {}
        for q in queries:
            by_claim.setdefault(q.claim_id, []).append(q)
        out = []
        for claim in claims:
            ranking = fused.get(claim.claim_id, Ranking(claim.claim_id))
            if self.reranker is not None and len(ranking):
                ranking = self.reranker.rerank(
                    claim.text, ranking, self.store, top_n=s.rerank_depth, interpolate="tuned"
                )
            if s.temporal is not None:
                from factscout.temporal.rerank import TimeAwareReranker

                ranking = TimeAwareReranker(s.temporal, s.temporal_weight).rerank(ranking, self.store, claim.date)
            extra: dict[str, Any] = {"planner_error": failed[claim.claim_id]} if claim.claim_id in failed else {}
            if claim.claim_id in missing:  # partial evidence: said in the report, never silent
                extra["missing_shards"] = sorted(missing[claim.claim_id])
            out.append(Retrieved(tuple(by_claim.get(claim.claim_id, ())), ranking, extra))
        return out

    def _embed_batch(self, claims: Sequence[Claim], rankings: Sequence[Ranking], passages: int) -> None:
        """Embed the batch's claims and candidate sentences in one encoder call (the encoder is
        far faster on one large batch than on many small ones); selection and stance then read
        the cache. Skipped when the selector brings its own encoder."""
        from factscout.datasets.passages import sentences_of

        if self._selector is not None and getattr(self._selector, "encoder", None) is not self._encoder:
            return
        texts = [c.text for c in claims]
        for ranking in rankings:
            for hit in ranking.top(passages).hits:
                texts += sentences_of(self.store[hit.passage_id].text)
        self.encoder.encode(list(dict.fromkeys(texts)))

    def judge(
        self,
        claim: Claim,
        ranking: Ranking,
        queries: tuple[Query, ...] = (),
        extra: dict[str, Any] | None = None,
        *,
        passages: int | None = None,
    ) -> Report:
        """Select, classify and judge the top ``passages`` (default ``settings.passages``) of an
        already retrieved ``ranking`` for ``claim``."""
        extra = extra or {}
        hits = ranking.top(passages or self.settings.passages).hits
        read = [self.store[h.passage_id] for h in hits]
        selected = [self.selector.select_passage(claim, p) for p in read]
        flat = [sent for sents in selected for sent in sents]
        stances: list[Stance] = self.stance.predict(claim, flat) if flat else []
        verdict = self.rule(stances)
        counted = {(x.passage_id, x.sentence_index): side for side, xs in (
            (SUPPORTS, verdict.supporting), (REFUTES, verdict.refuting)) for x in xs}  # fmt: skip
        stance_of = {(x.passage_id, x.sentence_index): x for x in stances}
        evidence = []
        for hit, passage, sents in zip(hits, read, selected, strict=True):
            marked = []
            for sent in sents:
                st = stance_of[(sent.passage_id, sent.index)]
                side = counted.get((sent.passage_id, sent.index), NOT_ENOUGH_INFO)
                marked.append(EvidenceSentence(sent.index, sent.text, round(sent.score, 6), side, st.probabilities))
            evidence.append(
                Evidence(
                    passage_id=passage.passage_id,
                    doc_id=passage.doc_id,
                    title=passage.title,
                    url=passage.url,
                    published=passage.published,
                    rank=hit.rank,
                    score=float(hit.score),
                    found_by=hit.found_by,
                    stance=_passage_stance(marked),
                    sentences=tuple(marked),
                    days_from_claim=days_between(passage.published, claim.date),
                )
            )
        label, method, reason = verdict.label, "quin+ count rule", verdict.reason
        if self.settings.verdict == "classifier":
            prediction = self.classifier.predict_ranking(claim.text, ranking, self.store)
            label, method = prediction.label, "quantemp++ classifier (claim + top-3 evidence with score > 0.5)"
            probs = ", ".join(
                f"{name} {p:.2f}" for name, p in zip(CLASSIFIER_LABELS, prediction.probabilities, strict=True)
            )
            reason = f"classifier probabilities: {probs}; count rule alone: {verdict.label}"
        summary = VerdictSummary(
            label=label,
            method=method,
            reason=reason,
            supporting=len(verdict.supporting),
            refuting=len(verdict.refuting),
            neutral=len(verdict.neutral),
        )
        return Report(claim, queries, tuple(evidence), summary, {**self.provenance, **extra})


def _passage_stance(sentences: Sequence[EvidenceSentence]) -> str:
    """The side of the passage's most confident counted sentence (``not enough info`` if none)."""
    best, label = -1.0, NOT_ENOUGH_INFO
    for s in sentences:
        if s.stance == NOT_ENOUGH_INFO:
            continue
        p = s.probabilities[STANCE_LABELS.index(s.stance)]
        if p > best:
            best, label = p, s.stance
    return label


@dataclass
class CheckStats:
    """Counts for a batch run (what the CLI prints at the end)."""

    claims: int = 0
    verdicts: dict[str, int] = field(default_factory=dict)

    def add(self, report: Report) -> None:
        self.claims += 1
        self.verdicts[report.verdict.label] = self.verdicts.get(report.verdict.label, 0) + 1
