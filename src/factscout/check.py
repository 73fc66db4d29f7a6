"""``check``: the whole pipeline for a claim, plan -> retrieve -> fuse -> re-rank -> select ->
stance -> verdict, returning one :class:`~factscout.report.Report` per claim.

This is the one core behind ``factscout check``, the HTTP API and the web page (Quin+'s
"verify any claim", Samarinas et al. 2021, with QuanTemp++'s planning, fusion and
published-before-claim filter, Prabhu 2025). :class:`CheckSettings` names one implementation
per step and :class:`Checker` composes them, each looked up in its step's registry:

1. **plan** the claim into queries (``PLANNERS``; default: the offline ``decompose`` planner,
   the claim itself always the first query);
2. **retrieve** ``depth`` passages per query from the index, only passages published before the
   claim's date when it has one (``date_filter``; undated passages follow the index's policy);
3. **fuse** each claim's query rankings (``FUSIONS``; default CombSUM over min-max normalised
   scores); every hit keeps the queries that found it;
4. **re-rank** with the ``RERANKERS`` the settings name, in turn: the ``cross-encoder`` over
   the fused top ``rerank_depth`` (``rerank=True``, off by default) and the ``time-aware`` one
   (``temporal``);
5. **select** evidence sentences from the top ``passages`` passages (``SELECTORS``);
6. classify each selected sentence's **stance** (``STANCE_MODELS``) and give the **verdict**
   (``VERDICT_METHODS``: the Quin+ count rule, whose counted sentences every report marks, or
   the QuanTemp++ classifier); a definite verdict gets its calibrated **confidence** and below
   ``min_verdict_confidence`` factscout **abstains**, saying why (:mod:`factscout.verify.confidence`).

Any step can also be passed in as an object that follows its protocol. Claims are planned and searched
in batches; a claim with no evidence gets the verdict ``not enough evidence``, never an error.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from factscout.errors import InputError
from factscout.nn.encoding import CachedEncoder, SentenceEncoder
from factscout.records import Claim, Query, Ranking, Sentence
from factscout.report import CheckedBefore, Report, assemble, prior_check
from factscout.rerank.base import Reranker, make_reranker
from factscout.retrieve.base import HasStore
from factscout.select.base import EncodingSelector, Selector, default_encoder, make_selector, stance_model_of
from factscout.settings import CheckSettings
from factscout.verify.base import (
    RULE_TUNED_WITH,
    DescribedModel,
    StanceModel,
    TrainedVerdict,
    TunedStanceModel,
    VerdictMethod,
    make_stance_model,
    make_verdict_method,
)
from factscout.verify.confidence import abstention_policy, selective_verdict, shipped
from factscout.verify.stance import predict_many
from factscout.verify.verdict import DEFAULT_MIN_CONFIDENCE, DEFAULT_MIN_EVIDENCE, DEFAULT_MIN_SHARE, CountRule

if TYPE_CHECKING:
    from factscout.factchecks import FactCheckMemory
    from factscout.plan import Planner
    from factscout.retrieve.base import Retriever
    from factscout.retrieve.sentences import SentenceData
    from factscout.verify.classifier import VerdictClassifier
    from factscout.verify.confidence import VerdictConfidence

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Retrieved:
    """What retrieval found for one claim: its planned queries and its fused (re-ranked) ranking."""

    queries: tuple[Query, ...]
    ranking: Ranking
    extra: dict[str, Any] = field(default_factory=dict)


class Checker:
    """Checks claims against one index. Build it once; models load on first use and are shared.

    Each step comes from its registry under the name ``settings`` gives it. Pass your own ``planner``,
    ``selector``, ``stance`` model, count ``rule``, ``reranker``, sentence ``encoder``, verdict
    ``confidence`` model or loaded ``factchecks`` memory to swap (or share) any of them (``reranker=None`` with ``rerank=False`` skips re-ranking).
    """

    def __init__(
        self,
        retriever: Retriever,
        settings: CheckSettings | None = None,
        *,
        planner: Planner | None = None,
        selector: Selector | None = None,
        stance: StanceModel | None = None,
        rule: CountRule | None = None,
        reranker: Reranker | None = None,
        encoder: SentenceEncoder | None = None,
        confidence: VerdictConfidence | None = None,
        factchecks: FactCheckMemory | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> None:
        from factscout.fuse import make_fusion
        from factscout.plan import make_planner

        self.settings = s = settings or CheckSettings()
        self.retriever = retriever
        if not isinstance(retriever, HasStore):
            raise InputError(f"checking needs a retriever with a passage store, got {type(retriever).__name__}")
        self.store = retriever.store
        self.sentences: SentenceData | None = None  # the index's stored sentences (from_index)
        self._sentences_usable: bool | None = None
        if planner is None:
            planner = make_planner(s.planner, **({"max_queries": s.max_queries} if s.max_queries else {}))
        self.planner = planner
        self.fusion = make_fusion(s.fusion)
        self._encoder = encoder
        self._selector = selector
        self._stance = stance
        self._factchecks = factchecks
        if reranker is None and s.rerank:
            reranker = make_reranker("cross-encoder", top_n=s.rerank_depth)
        self.reranker = reranker
        temporal = make_reranker("time-aware", method=s.temporal, weight=s.temporal_weight) if s.temporal else None
        self.rerankers: tuple[Reranker, ...] = tuple(r for r in (reranker, temporal) if r is not None)
        self.provenance: dict[str, Any] = dict(provenance or {})
        tuned = (DEFAULT_MIN_EVIDENCE, DEFAULT_MIN_CONFIDENCE, DEFAULT_MIN_SHARE)
        if s.stance != RULE_TUNED_WITH:
            tuned = (self.stance.rule_thresholds if isinstance(self.stance, TunedStanceModel) else None) or tuned
        self.rule = rule or CountRule(
            tuned[0] if s.min_evidence is None else s.min_evidence,
            tuned[1] if s.min_stance_confidence is None else s.min_stance_confidence,
            tuned[2] if s.min_share is None else s.min_share,
        )
        self.verdict_method: VerdictMethod = make_verdict_method(
            s.verdict, rule=self.rule, classifier=self._load_classifier
        )
        self.provenance = {"settings": asdict(s), "rule": repr(self.rule), **self.provenance}
        policy = abstention_policy(confidence or shipped(), s.stance, s.verdict, s.min_verdict_confidence)
        self.confidence, self.min_confidence = policy.model, policy.min_confidence
        self.provenance.update(policy.provenance)
        warnings = policy.warnings
        method = self.verdict_method
        trained_with = method.trained_with if isinstance(method, TrainedVerdict) else None
        if trained_with is not None and trained_with != s.stance:
            warnings.insert(0, f"the {s.verdict} verdict was trained on stances of the {trained_with!r} stance model, not "
                            f"{s.stance!r}: its probabilities may be off (retrain it with --stance {s.stance})")  # fmt: skip
        for warning in warnings:
            log.warning(warning)
        if warnings:
            self.provenance["warnings"] = warnings

    @property
    def factchecks(self) -> FactCheckMemory | None:
        """The fact-check memory ``settings.factchecks`` names, loaded on first use (``None``: none)."""
        if self._factchecks is None and self.settings.factchecks is not None:
            from factscout.factchecks import FactCheckMemory

            # the claim is embedded by the checker's own MiniLM (int8 unless --no-fast): no second model loads
            self._factchecks = FactCheckMemory.load(self.settings.factchecks, encoder=self.encoder)
            meta = self._factchecks.metadata()
            self.provenance["factchecks"] = {"memory": self.settings.factchecks} | {
                k: meta[k] for k in ("n_records", "sources", "model_sha256", "threshold")
            }
        return self._factchecks

    def checked_before(self, claims: Sequence[Claim]) -> list[CheckedBefore | None]:
        """Each claim's "Checked before" section: the memory's fact-checks that match it at or
        above the memory's threshold, only those published before the claim's date (strictly) when
        it has one and the date filter is on (``None`` for every claim when no memory is set)."""
        memory = self.factchecks
        if memory is None:
            return [None] * len(claims)
        out: list[CheckedBefore | None] = []
        for claim in claims:
            before = claim.date if self.settings.date_filter else None
            found = memory.matches(claim.text, published_before=before)
            out.append(
                CheckedBefore(
                    matches=tuple(prior_check(m.record, m.score) for m in found),
                    threshold=memory.threshold,
                    published_before=before,
                    memory=str(self.settings.factchecks),
                )
            )
        return out

    @classmethod
    def from_index(
        cls, directory: str | os.PathLike[str], settings: CheckSettings | None = None, **components: Any
    ) -> Checker:
        """A checker over the index in ``directory`` (built with ``factscout index``)."""
        from factscout.retrieve import load_index
        from factscout.retrieve.index import read_manifest
        from factscout.retrieve.sentences import load_sentence_data

        path, manifest = read_manifest(directory)
        settings = settings or CheckSettings()
        fast = settings.int8_queries(manifest.get("retriever"))
        retriever = load_index(directory, **({"query_encoder": "int8"} if fast else {}))
        info = {
            "index": str(Path(directory)),
            "generation": path.name,
            "retriever": manifest.get("retriever"),
            "source": manifest.get("source"),
        }
        checker = cls(retriever, settings, provenance=info, **components)
        checker.sentences = load_sentence_data(path, len(retriever.store))
        # which way this check's sentences were embedded: read from the index, or per claim
        checker.provenance["sentence_vectors"] = "stored" if checker.sentences is not None else "per-claim"
        if checker.sentences is None:
            msg = "index %s has no stored sentence vectors: sentences are embedded per claim (slower); store them"
            log.warning(msg + " with 'factscout index --index %s --add-sentences'", directory, directory)
        return checker

    # -- steps loaded on first use --

    @property
    def encoder(self) -> CachedEncoder:
        """Embeds claims and sentences for selection and stance, each text once: the encoder the
        selector works best with (:func:`~factscout.select.base.default_encoder`) unless given."""
        if not isinstance(self._encoder, CachedEncoder):  # int8 unless on the fp32 path (--no-fast)
            int8 = self.settings.fast is not False
            given = self._encoder if self._encoder is not None else default_encoder(self.settings.selector, int8=int8)
            self._encoder = CachedEncoder(given)
        return self._encoder

    @property
    def selector(self) -> Selector:
        if self._selector is None:
            options: dict[str, Any] = {"encoder": self.encoder, "threshold": self.settings.threshold}
            if stance_model_of(self.settings.selector) == self.settings.stance:
                options["stance_model"] = self.stance  # one model and prediction cache for both steps
            self._selector = make_selector(self.settings.selector, **options)
        return self._selector

    @property
    def stance(self) -> StanceModel:
        if self._stance is None:
            self._stance = make_stance_model(self.settings.stance_model_name, encoder=self.encoder)
            self.provenance["stance_model"] = {
                "kind": self.settings.stance_model_name,
                **(dict(self._stance.info) if isinstance(self._stance, DescribedModel) else {}),
            }
        return self._stance

    def _load_classifier(self) -> VerdictClassifier:
        from factscout.verify.classifier import VerdictClassifier
        from factscout.verify.stance import StanceHead

        # the classifier was trained on the SBERT-style head's probabilities
        head = self.stance if isinstance(self.stance, StanceHead) else None
        return VerdictClassifier.load(encoder=self.encoder, stance=head)

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
        return self.judge(claims, self.retrieve(claims))

    def judge(
        self, claims: Sequence[Claim], found: Sequence[Retrieved], *, passages: int | None = None
    ) -> list[Report]:
        """Select, classify and judge the top ``passages`` (default ``settings.passages``) of what
        :meth:`retrieve` found for each claim: the batch's sentences are embedded at once and their
        stances predicted together (:func:`~factscout.verify.stance.predict_many`)."""
        n = passages or self.settings.passages
        self._embed_batch(claims, [f.ranking for f in found], n)
        selected = [self._select(c, f.ranking, n) for c, f in zip(claims, found, strict=True)]
        flat = [[s for sents in sel for s in sents] for sel in selected]
        stances = predict_many(self.stance, claims, flat)
        priors = self.checked_before(claims)
        reports = []
        for claim, f, sel, st, prior in zip(claims, found, selected, stances, priors, strict=True):
            hits = f.ranking.top(n).hits
            verdict = self.verdict_method.judge(claim, st, f.ranking, self.store)
            verdict = selective_verdict(verdict, st, self.confidence, self.min_confidence)
            read = [self.store[h.passage_id] for h in hits]
            provenance = {**self.provenance, **f.extra}
            reports.append(assemble(claim, f.queries, hits, read, sel, st, verdict, provenance, prior))
        return reports

    def _select(self, claim: Claim, ranking: Ranking, passages: int) -> list[list[Sentence]]:
        """The selected sentences of each of the top ``passages`` passages of ``ranking``."""
        return [self.selector.select_passage(claim, self.store[h.passage_id]) for h in ranking.top(passages).hits]

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
            for reranker in self.rerankers:
                if len(ranking):
                    ranking = reranker.rerank(claim, ranking, self.store)
            extra: dict[str, Any] = {"planner_error": failed[claim.claim_id]} if claim.claim_id in failed else {}
            if claim.claim_id in missing:  # partial evidence: said in the report, never silent
                extra["missing_shards"] = sorted(missing[claim.claim_id])
            out.append(Retrieved(tuple(by_claim.get(claim.claim_id, ())), ranking, extra))
        return out

    def _embed_batch(self, claims: Sequence[Claim], rankings: Sequence[Ranking], passages: int) -> None:
        """Embed the batch's claims and candidate sentences at once (stored sentence vectors primed
        from the index); selection and stance then read the cache. Skipped when the selector
        brings its own encoder."""
        from factscout.retrieve.sentences import fits, prime_encoder

        own = self._selector.encoder if isinstance(self._selector, EncodingSelector) else None
        if self._selector is not None and own is not self._encoder:
            return
        if self._sentences_usable is None:
            self._sentences_usable = fits(self.sentences, self.store, self.encoder)
            if self.sentences is not None:  # the index has them; whether they fit this encoder decides
                self.provenance["sentence_vectors"] = "stored" if self._sentences_usable else "per-claim"
        stored = self.sentences if self._sentences_usable else None
        ids = [hit.passage_id for ranking in rankings for hit in ranking.top(passages).hits]
        prime_encoder(self.encoder, stored, self.store, ids, [c.text for c in claims])
