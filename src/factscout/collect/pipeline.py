"""Evidence collection from the web, the QuanTemp++ way, frozen in a replayable snapshot.

For each claim (Venktesh et al. 2024, QuanTemp; its QuanTemp++ corpus-building pipeline):

1. **Queries**: a factscout planner turns the claim into sub-queries (``auto``: the ClaimDecomp
   LLM planner when an endpoint is configured, ``FACTSCOUT_LLM_BASE_URL``; the offline
   ``decompose`` planner otherwise), and the QuanTemp++ MMR filter
   (:class:`factscout.plan.mmr.MmrFilter`, scored against the claim and, when the claim has
   one, its ``justification``) drops redundant or off-topic ones.
2. **Search**: each sub-query goes to the web-search provider, restricted to pages published
   before the claim's day (the provider's own date restriction, then a post-filter on the dates
   it returns).
3. **Relevance**: a result is kept when cosine(sub-query, snippet) >= 0.45
   (:mod:`factscout.collect.relevance`).
4. **Leakage**: results from fact-checking sites (:mod:`factscout.collect.factcheck`) are dropped
   before anything is fetched.
5. **Crawl**: kept results are fetched (:mod:`factscout.collect.crawl`: robots.txt, limits, no
   private addresses) and reduced to their main text and publication date; a page whose own date
   is on or after the claim's day is dropped too.
6. **Corpus**: kept pages become documents judged relevant to the claim (the qrels); the
   verbatim claim is searched as well, with the same date limit, and its results (minus the
   relevant ones, fact-check sites and late pages) become unjudged distractors.

Every plan, provider answer and page goes through a :class:`~factscout.collect.snapshot.Session`:
a live run records them, a replay (``replay=`` an earlier output or snapshot folder) reads them
and touches no network, so it rewrites the same corpus, qrels and manifest byte for byte. What
is *not* recorded is recomputed from the recorded bytes: relevance scores, page text and dates.
So a replay may also change the threshold or the fact-check list and re-filter offline.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from factscout.collect.corpus import DISTRACTOR, RELEVANT, CorpusBuilder, page_url
from factscout.collect.crawl import Crawler, CrawlSettings, PageText, read_page
from factscout.collect.factcheck import FactCheckSites
from factscout.collect.netguard import AddressPolicy
from factscout.collect.providers import SearchRequest, SearchResult, make_provider
from factscout.collect.relevance import DEFAULT_THRESHOLD, Embed, RelevanceFilter, default_embed
from factscout.collect.search import WebSearcher, fetched_day
from factscout.collect.snapshot import Drift, Session, Snapshot, canonical, compare_snapshots, utc_now
from factscout.errors import InputError
from factscout.records import Claim, Query

log = logging.getLogger(__name__)

AUTO_PLANNER = "auto"


def resolve_planner(name: str) -> str:
    """``auto`` is ``claimdecomp`` when an LLM endpoint is configured, else ``decompose``."""
    from factscout.plan.llm import ENV_BASE_URL

    if name != AUTO_PLANNER:
        return name
    return "claimdecomp" if os.environ.get(ENV_BASE_URL, "").strip() else "decompose"


@dataclass(frozen=True)
class CollectSettings:
    """What to collect and how (defaults follow QuanTemp++ where it says)."""

    provider: str = "serpapi"
    planner: str = AUTO_PLANNER
    mmr: bool = True
    results: int = 10
    distractors: int = 10
    threshold: float = DEFAULT_THRESHOLD
    date_filter: bool = True
    crawl: bool = True
    exclude_domains: tuple[str, ...] = ()
    allow_hosts: tuple[str, ...] = ()
    base_url: str | None = None
    min_interval: float = 1.0
    crawler: CrawlSettings = field(default_factory=CrawlSettings)

    def __post_init__(self) -> None:
        for name in ("results", "distractors"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0 or (name == "results" and value < 1):
                raise InputError(
                    f"{name} per search must be an integer >= {1 if name == 'results' else 0}, got {value!r}"
                )
        if not -1.0 <= self.threshold <= 1.0:
            raise InputError(f"relevance threshold is a cosine, in [-1, 1]; got {self.threshold!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["crawler"] = {k: v for k, v in d["crawler"].items() if k != "retry"} | {
            "retries": self.crawler.retry.max_retries
        }
        return d


@dataclass
class CollectReport:
    """What a run did: counts, the planner used, failures, and the drift when asked for."""

    out: Path
    claims: int = 0
    sub_queries: int = 0
    searches: int = 0
    failed_searches: int = 0
    documents: int = 0
    relevant: int = 0
    distractors: int = 0
    claims_with_evidence: int = 0
    planner: str = ""
    replayed_from: str | None = None
    decisions: Counter[str] = field(default_factory=Counter)
    plan_failures: list[str] = field(default_factory=list)
    drift: Drift | None = None

    def to_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in asdict(self).items() if k not in {"out", "drift", "decisions"}}
        d["decisions"] = dict(sorted(self.decisions.items()))
        if self.drift is not None:
            d["drift"] = self.drift.summary()
        return d


def _plan_request(claim: Claim, settings: CollectSettings) -> dict[str, Any]:
    justification = claim.meta.get("justification")
    return {
        "claim_id": claim.claim_id,
        "text": claim.text,
        "date": claim.date.isoformat() if claim.date else None,
        "planner": settings.planner,
        "mmr": settings.mmr,
        "justification": justification if isinstance(justification, str) and justification.strip() else None,
    }


def plan_claims(
    claims: Sequence[Claim], settings: CollectSettings, session: Session, embed: Callable[[], Embed]
) -> tuple[dict[str, list[Query]], str, list[str]]:
    """Each claim's queries (planned live and recorded, or replayed), the planner used, failures."""
    plans: dict[str, list[Query]] = {}
    failures: list[str] = []
    used = resolve_planner(settings.planner)
    if session.replaying:
        for claim in claims:
            entry, body = session.lookup("plan", _plan_request(claim, settings))
            used = str(entry.meta.get("planner") or used)
            rows = json.loads(body or b"[]")
            plans[claim.claim_id] = [
                Query(r["query_id"], claim.claim_id, r["text"], r["origin"], claim.date) for r in rows
            ]
        return plans, used, failures
    from factscout.plan import make_planner, plan_all
    from factscout.plan.mmr import MmrFilter

    queries, failed = plan_all(make_planner(used), claims)
    failures = [f"{f.claim_id}: {f.error}" for f in failed]
    for q in queries:
        plans.setdefault(q.claim_id, []).append(q)
    keep = MmrFilter(embed=embed()) if settings.mmr else None
    failed_ids = {f.claim_id: f.error for f in failed}
    for claim in claims:
        request = _plan_request(claim, settings)
        planned = plans.get(claim.claim_id) or [Query.for_claim(claim)]
        if keep is not None:
            planned = keep.filter(claim, planned, request["justification"])
        plans[claim.claim_id] = planned
        rows = [{"query_id": q.query_id, "text": q.text, "origin": q.origin} for q in planned]
        meta: dict[str, Any] = {"planner": used, "outcome": "ok"}
        if claim.claim_id in failed_ids:
            meta |= {
                "outcome": "error",
                "reason": f"planner failed, searched the claim alone: {failed_ids[claim.claim_id]}"[:300],
            }
        session.out.record("plan", request, canonical(rows), meta)
    return plans, used, failures


class _Pages:
    """Page texts by URL: fetched live (or replayed) once per run, read from the stored bytes."""

    def __init__(self, session: Session, crawler: Callable[[], Crawler], settings: CrawlSettings) -> None:
        self.session = session
        self._crawler = crawler
        self.settings = settings
        self._read: dict[str, tuple[PageText | str, str]] = {}

    def get(self, url: str) -> tuple[PageText | str, str]:
        """The page's text (or why it is unusable) and its final URL."""
        if url not in self._read:
            entry, body = self.session.get("page", {"url": url}, lambda: self._crawler().fetch(url))
            final = str(entry.meta.get("final_url") or url)
            if entry.outcome != "ok" or body is None:
                page: PageText | str = entry.reason or entry.outcome
            else:
                page = read_page(body, final, fetched=fetched_day(entry), min_chars=self.settings.min_chars)
            self._read[url] = (page, final)
        return self._read[url]


def _after(day: dt.date | None, claim: Claim, settings: CollectSettings) -> bool:
    return settings.date_filter and claim.date is not None and day is not None and day >= claim.date


def collect(
    claims: Sequence[Claim],
    out_dir: str | os.PathLike[str],
    settings: CollectSettings | None = None,
    *,
    replay: str | os.PathLike[str] | None = None,
    drift_from: str | os.PathLike[str] | None = None,
    embed: Embed | None = None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.monotonic,
    now: Callable[[], dt.datetime] = utc_now,
    on_claim: Callable[[], None] | None = None,
) -> CollectReport:
    """Collect evidence for ``claims`` into ``out_dir`` (see the module docstring).

    ``replay`` makes the run offline from an earlier snapshot; ``drift_from`` compares this
    run's snapshot with an earlier one when done. ``embed``, ``sleep``, ``clock`` and ``now`` are
    injectable for tests.
    """
    settings = settings or CollectSettings()
    if not claims:
        raise InputError("no claims to collect evidence for")
    ids = [c.claim_id for c in claims]
    if len(set(ids)) != len(ids):
        raise InputError(f"claim id {next(i for i in ids if ids.count(i) > 1)!r} occurs twice")
    out = Path(out_dir)
    source = Snapshot.open(replay) if replay is not None else None
    earlier = Snapshot.open(drift_from) if drift_from is not None else None  # read before ``out`` may overwrite it
    session = Session(Snapshot(out / "snapshot"), source)
    report = CollectReport(out, claims=len(claims), replayed_from=str(replay) if replay is not None else None)

    encoder: list[Embed] = [embed] if embed is not None else []

    def shared_embed() -> Embed:
        if not encoder:
            encoder.append(default_embed())
        return encoder[0]

    policy = AddressPolicy.allowing(settings.allow_hosts)  # bad entries fail now, not mid-run
    sites = FactCheckSites.load(settings.exclude_domains)
    crawlers: list[Crawler] = []

    def crawler() -> Crawler:
        if not crawlers:
            crawlers.append(Crawler(policy, settings.crawler, sleep=sleep, clock=clock, now=now))
        return crawlers[0]

    plans, report.planner, report.plan_failures = plan_claims(claims, settings, session, shared_embed)
    provider = make_provider(settings.provider, base_url=settings.base_url)
    searcher = WebSearcher(provider, session, min_interval=settings.min_interval, sleep=sleep, clock=clock, now=now)
    relevance = RelevanceFilter(settings.threshold, load=shared_embed)
    run = _Run(
        settings, searcher, relevance, sites, _Pages(session, crawler, settings.crawler), CorpusBuilder(), report
    )
    all_queries: list[Query] = []
    try:
        for claim in claims:
            all_queries += plans[claim.claim_id]
            run.claim(claim, plans[claim.claim_id])
            if on_claim is not None:
                on_claim()
    finally:
        searcher.close()
        for c in crawlers:
            c.close()
    corpus = run.corpus
    corpus.write(out, claims, all_queries)
    session.out.write_manifest()
    report.documents = len(corpus.documents)
    report.relevant = sum(len(d) for d in corpus.qrels.values())
    report.distractors = len(corpus.distractor_ids)
    report.claims_with_evidence = len(corpus.qrels)
    report.decisions = corpus.decisions
    if earlier is not None:
        report.drift = compare_snapshots(earlier, session.out)
        (out / "drift.json").write_text(
            json.dumps(report.drift.to_dict(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
    (out / "collect.json").write_text(
        json.dumps(
            {"settings": settings.to_dict(), "report": report.to_dict()}, indent=1, ensure_ascii=False, default=str
        )
        + "\n",
        encoding="utf-8",
    )
    return report


@dataclass
class _Run:
    """The per-claim steps of one collection run, sharing its searcher, filters and corpus."""

    settings: CollectSettings
    searcher: WebSearcher
    relevance: RelevanceFilter
    sites: FactCheckSites
    pages: _Pages
    corpus: CorpusBuilder
    report: CollectReport

    def claim(self, claim: Claim, queries: Sequence[Query]) -> None:
        """Search the claim's sub-queries (relevant pages), then the claim itself (distractors)."""
        subs = [q for q in queries if q.query_id != claim.claim_id] or [
            q for q in queries if q.query_id == claim.claim_id
        ]
        self.report.sub_queries += len(subs)
        before = claim.date if self.settings.date_filter else None
        relevant: set[str] = set()
        for q in subs:
            results = self._search(claim, q, "sub-query", self.settings.results, before)
            for result, score in zip(results, self.relevance.scores(q.text, results), strict=True):
                decision, doc_id = self._screen(result, claim, self.relevance.relevant(score), RELEVANT)
                if doc_id is not None:
                    self.corpus.judge(claim.claim_id, q.query_id, doc_id)
                    relevant.add(page_url(result.url))
                self.corpus.record(_row(claim, q, "sub-query", result, score, decision, doc_id))
        if not self.settings.distractors:
            return
        verbatim = Query.for_claim(claim)
        for result in self._search(claim, verbatim, "claim", self.settings.distractors, before):
            if page_url(result.url) in relevant:
                decision, doc_id = "already relevant", None
            else:
                decision, doc_id = self._screen(result, claim, True, DISTRACTOR)
                if doc_id is not None and doc_id in self.corpus.qrels.get(claim.claim_id, {}):
                    decision, doc_id = "already relevant", None  # the same page under another URL
            self.corpus.record(_row(claim, verbatim, "claim", result, None, decision, doc_id))

    def _search(
        self, claim: Claim, query: Query, role: str, count: int, before: dt.date | None
    ) -> tuple[SearchResult, ...]:
        outcome = self.searcher.search(SearchRequest(query.text, count, before))
        self.report.searches += 1
        if outcome.error:
            self.report.failed_searches += 1
            row = {"claim_id": claim.claim_id, "query_id": query.query_id, "query": query.text, "role": role}
            self.corpus.record(row | {"error": outcome.error})
        return outcome.results

    def _screen(self, result: SearchResult, claim: Claim, relevant: bool, keep_as: str) -> tuple[str, str | None]:
        """One result's fate: dropped (and why), or kept as a document (``keep_as``) with its id.
        The cheap checks come first, so nothing is fetched for a result they drop."""
        if (site := self.sites.match(result.url)) is not None:
            return f"fact-check site: {site}", None
        if _after(result.published, claim, self.settings):
            return "published on or after the claim date (search result date)", None
        if not relevant:
            return "not relevant", None
        if not self.settings.crawl:
            return keep_as, self.corpus.add_document(result.url, result.title, result.snippet, result.published)
        page, final = self.pages.get(page_url(result.url))
        if isinstance(page, str):
            return f"page skipped: {page}", None
        if (site := self.sites.match(final)) is not None:
            return f"fact-check site: {site} (after redirect)", None
        published = page.published or result.published
        if _after(published, claim, self.settings):
            return "published on or after the claim date (page date)", None
        return keep_as, self.corpus.add_document(final, page.title or result.title, page.text, published)


def _row(
    claim: Claim, query: Query, role: str, result: SearchResult, score: float | None, decision: str, doc_id: str | None
) -> dict[str, Any]:
    return {
        "claim_id": claim.claim_id,
        "query_id": query.query_id,
        "query": query.text,
        "role": role,
        "rank": result.rank,
        "url": result.url,
        "title": result.title,
        "snippet": result.snippet,
        "published": result.published.isoformat() if result.published else None,
        "score": score,
        "decision": decision,
        "doc_id": doc_id,
    }
