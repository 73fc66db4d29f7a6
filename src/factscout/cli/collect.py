"""``factscout collect``: web evidence for claims into a BEIR corpus, qrels and a replayable snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import INPUT, OUTPUT, counted, err, friendly, one_of, out, quiet_libraries, read_claims
from factscout.collect.providers import PROVIDERS


@friendly
def collect(
    claims: Annotated[
        Path,
        typer.Option(*INPUT, "--claims", help="claims JSONL in BEIR query form (_id, text, date?, metadata?)"),
    ],
    provider: Annotated[str, typer.Option(help=f"web search: {one_of(PROVIDERS)} (keys from the env)")],
    out_path: Annotated[
        Path, typer.Option(*OUTPUT, "--out", help="output folder: corpus, qrels, queries, records, snapshot/")
    ],
    replay: Annotated[Path | None, typer.Option(help="replay an earlier output/snapshot folder: no network")] = None,
    planner: Annotated[
        str, typer.Option(help="auto (LLM if FACTSCOUT_LLM_BASE_URL, else decompose) or a planner")
    ] = "auto",
    results: Annotated[int, typer.Option(help="results per sub-query")] = 10,
    distractors: Annotated[int, typer.Option(help="results of the verbatim-claim search (distractors)")] = 10,
    threshold: Annotated[float, typer.Option(help="relevance: cosine(sub-query, snippet) at least this")] = 0.45,
    no_mmr: Annotated[bool, typer.Option("--no-mmr", help="keep every planned sub-query")] = False,
    no_crawl: Annotated[bool, typer.Option("--no-crawl", help="documents are the snippets; fetch no page")] = False,
    allow_host: Annotated[
        list[str] | None, typer.Option(help="crawl this private host/IP/CIDR anyway (repeat)")
    ] = None,
    exclude_domain: Annotated[list[str] | None, typer.Option(help="another fact-check site to drop (repeat)")] = None,
    base_url: Annotated[str | None, typer.Option(help="the provider's API root (a proxy or a test server)")] = None,
    min_interval: Annotated[float, typer.Option(help="seconds between two provider requests")] = 1.0,
    host_interval: Annotated[float, typer.Option(help="seconds between two requests to one web host")] = 1.0,
    drift_from: Annotated[Path | None, typer.Option(help="report drift against an earlier run's snapshot")] = None,
) -> None:
    """Collect web evidence for claims (QuanTemp++ pipeline) into a BEIR corpus + qrels + replayable snapshot."""
    quiet_libraries()
    from factscout.collect import CollectSettings
    from factscout.collect import collect as run_collect
    from factscout.collect.crawl import CrawlSettings

    PROVIDERS[provider]
    settings = CollectSettings(
        provider=provider, planner=planner, mmr=not no_mmr, results=results, distractors=distractors, threshold=threshold,
        crawl=not no_crawl, exclude_domains=tuple(exclude_domain or ()), allow_hosts=tuple(allow_host or ()),
        base_url=base_url, min_interval=min_interval, crawler=CrawlSettings(host_interval=host_interval),
    )  # fmt: skip
    items = read_claims(claims)
    with counted("collecting" + (" (replay)" if replay else ""), len(items)) as bar:
        report = run_collect(items, out_path, settings, replay=replay, drift_from=drift_from, on_claim=bar.advance)
    out.print(
        f"{report.documents} documents ({report.relevant} relevant judgements for {report.claims_with_evidence}/"
        f"{report.claims} claims, {report.distractors} distractors) from {report.searches} searches "
        f"({report.failed_searches} failed) with {report.planner}; corpus, qrels and snapshot in {out_path}",
        highlight=False,
    )
    kept = ("relevant", "distractor", "already relevant")
    dropped = ", ".join(f"{n} {d}" for d, n in report.decisions.most_common() if d not in kept)
    err.print(
        f"results dropped: {dropped or 'none'} (reasons per result in {out_path / 'records.jsonl'})", highlight=False
    )
    for failure in report.plan_failures[:5]:
        err.print(f"planner failed on {failure} (searched the claim alone)", highlight=False, soft_wrap=True)
    if report.drift is not None:
        err.print(f"drift since {drift_from}: {report.drift.summary()} (details in {out_path / 'drift.json'})")
