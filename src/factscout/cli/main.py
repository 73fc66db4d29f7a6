"""The ``factscout`` command line: thin typer commands over the library.

Each command parses its input, calls one core function and prints or writes the result.
Errors a user can cause are printed as one line (``error: ...``) with exit status 2.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from factscout.errors import FactscoutError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Find and judge the evidence for a claim.")
out = Console()
err = Console(stderr=True)
F = TypeVar("F", bound=Callable[..., Any])


def quiet_libraries() -> None:
    """The CLI owns the terminal: silence third-party progress bars and hub look-ups."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    try:
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        hf_logging.set_verbosity_error()
    except ImportError:
        pass


def friendly(fn: F) -> F:
    """Turn factscout's errors into one readable line and exit status 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except FactscoutError as exc:
            err.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper  # type: ignore[return-value]


def progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
        disable=not err.is_terminal,
    )


def _read_claims(path: Path) -> list[Any]:
    """The claims of a BEIR query file; lines that are not claims are named on stderr and skipped."""
    from factscout.formats.beir import read_claims

    skipped: list[str] = []
    items = list(read_claims(path, skipped=skipped))
    for line in skipped:
        err.print(f"skipped: {line}", highlight=False, soft_wrap=True)
    return items


RayOption = Annotated[
    str | None,
    typer.Option("--ray", help="run on Ray: 'auto' (RAY_ADDRESS, the cluster started here, or a local one) or ADDRESS"),
]


def _parse_day(value: str | None, flag: str) -> dt.date | None:
    from factscout.dates import parse_date

    return parse_date(value, field=flag) if value else None


@app.command()
@friendly
def index(
    corpus: Annotated[Path, typer.Option(help="BEIR JSONL corpus (_id, title, text, published?, url?); .gz ok")],
    index: Annotated[Path, typer.Option("--index", help="index directory (created or replaced atomically)")],
    retriever: Annotated[
        str,
        typer.Option(help="bm25 | dense | hybrid, or pg-bm25 | pg-dense | pg-hybrid in PostgreSQL ($FACTSCOUT_PG_DSN)"),
    ] = "bm25",
    k1: Annotated[float, typer.Option(help="BM25 k1")] = 0.9,
    b: Annotated[float, typer.Option(help="BM25 b")] = 0.4,
    encoder: Annotated[
        str, typer.Option(help="dense encoder: 'minilm' (offline) or a sentence-transformers name/path")
    ] = "minilm",
    fusion: Annotated[str, typer.Option(help="hybrid fusion: linear | rrf")] = "linear",
    alpha: Annotated[
        float, typer.Option(help="hybrid weight of BM25 in the linear fusion (0.6: tuned on SciFact train)")
    ] = 0.6,
    window: Annotated[int, typer.Option(help="split documents into windows of this many sentences (0: whole)")] = 0,
    stride: Annotated[int, typer.Option(help="sentences between window starts (with --window)")] = 3,
    shards: Annotated[int, typer.Option(help="split a BM25 index into N shards (global statistics); 0: one index")] = 0,
    ray: RayOption = None,
    encode_batch: Annotated[
        int | None, typer.Option(help="dense: passages per encoding call, also per Ray Data task (default 256)")
    ] = None,
    pg_name: Annotated[str, typer.Option(help="index name on the PostgreSQL server (pg-* retrievers)")] = "factscout",
) -> None:
    """Index a corpus for search."""
    quiet_libraries()
    from factscout.datasets.passages import split_passages
    from factscout.formats.beir import read_corpus
    from factscout.retrieve import RETRIEVERS, build_retriever, save_index

    RETRIEVERS[retriever]
    dense: dict[str, Any] = {"encoder": encoder, **({"encode_batch": encode_batch} if encode_batch is not None else {})}
    settings = {"bm25": {"k1": k1, "b": b}, "dense": dense, "hybrid": {"fusion": fusion, "alpha": alpha}}
    if ray and not shards and retriever in ("dense", "hybrid"):
        dense["ray"] = ray  # the corpus is encoded on Ray Data actors
    elif shards or ray:
        if retriever not in ("bm25", "sharded") or shards < 1:
            raise typer.BadParameter(
                "--shards N (N >= 1) shards a BM25 index; --ray builds those shards on Ray, or encodes a dense"
                " or hybrid corpus on Ray"
            )
        retriever, settings["sharded"] = "sharded", {"shards": shards, "ray": ray}
    settings["postgres"] = {"name": pg_name}
    with progress() as bar:
        bar.add_task(f"reading {corpus.name}", total=None)
        passages = list(read_corpus(corpus))
        if window:
            passages = split_passages(passages, window, min(stride, window))
    with err.status(f"indexing {len(passages)} passages with {retriever} (dense encoding shows its own bar)"):
        built = build_retriever(passages, retriever, settings, show_progress=err.is_terminal)
        gen = save_index(built, index, source=str(corpus))
    out.print(
        f"indexed {len(built.store)} passages ({built.store.n_dated} dated) with {retriever} into {index} ({gen.name})"
    )


@app.command()
@friendly
def search(
    index: Annotated[Path, typer.Option("--index", help="index directory built by 'factscout index'")],
    queries: Annotated[Path | None, typer.Option(help="queries JSONL (_id, text, date?, claim_id?, origin?)")] = None,
    query: Annotated[str | None, typer.Option(help="one query; prints a table")] = None,
    k: Annotated[int, typer.Option(help="hits per query")] = 100,
    run: Annotated[Path | None, typer.Option(help="write a TREC run file here")] = None,
    date_filter: Annotated[
        bool, typer.Option("--date-filter", help="each query's date becomes published_before")
    ] = False,
    date: Annotated[str | None, typer.Option(help="with --query: keep passages published before this day")] = None,
    undated: Annotated[str, typer.Option(help="undated passages under a date filter: keep | drop")] = "keep",
    batch_size: Annotated[int, typer.Option(help="queries per search batch")] = 256,
    by_doc: Annotated[bool, typer.Option("--by-doc", help="rank documents by their best passage (MaxP)")] = False,
    fusion: Annotated[
        str | None,
        typer.Option(
            help="fuse each claim's sub-query rankings: top1 concat combsum combmax combsum-norm combmax-norm rrf learned"
        ),
    ] = None,
    fusion_weights: Annotated[Path | None, typer.Option(help="weights JSON for --fusion learned")] = None,
    ray: RayOption = None,
) -> None:
    """Search an index with one query or a queries file (several queries per claim: --fusion)."""
    quiet_libraries()
    from factscout.formats.beir import read_queries
    from factscout.formats.trec import write_run
    from factscout.records import Query
    from factscout.retrieve import load_index, search_with_query_dates
    from factscout.retrieve.base import check_k, check_undated
    from factscout.retrieve.documents import max_passage
    from factscout.retrieve.index import read_manifest

    check_k(k)
    check_undated(undated)
    fuse = None
    if fusion is not None:
        from factscout.fuse import make_fusion

        fuse = make_fusion(fusion, weights=fusion_weights) if fusion == "learned" else make_fusion(fusion)
    if (queries is None) == (query is None):
        raise typer.BadParameter("give exactly one of --queries FILE or --query TEXT")
    if ray and read_manifest(index)[1].get("retriever") != "sharded":
        raise typer.BadParameter("--ray searches a sharded index (built with factscout index --shards N)")
    retriever = load_index(index, undated=undated, **({"ray": ray} if ray else {}))  # --ray: shard actors
    if query is not None:
        day = _parse_day(date, "--date")
        ranking = retriever.search([Query("q", "q", query, "cli", day)], k, published_before=day)[0]
        _print_ranking(retriever, ranking, query)
        if run:
            write_run(run, [ranking])
        return
    assert queries is not None
    items = list(read_queries(queries))
    if not date_filter:
        items = [Query(q.query_id, q.claim_id, q.text, q.origin, None) for q in items]
    rankings = []
    with progress() as bar:
        task = bar.add_task("searching", total=len(items))
        for start in range(0, len(items), batch_size):
            batch = items[start : start + batch_size]
            found = search_with_query_dates(retriever, batch, k * 4 if by_doc else k)
            rankings += [max_passage(r, retriever.store, k) for r in found] if by_doc else found
            bar.advance(task, len(batch))
    if fuse is not None:
        from factscout.fuse import fuse_by_claim

        n_queries = len(rankings)
        rankings = fuse_by_claim(rankings, {q.query_id: q.claim_id for q in items}, fuse, k)
        err.print(f"fused {n_queries} query rankings into {len(rankings)} claim rankings with {fusion}")
    if run:
        write_run(run, rankings)
        out.print(f"wrote {sum(len(r) for r in rankings)} hits for {len(rankings)} rankings to {run}")
    else:
        for r in rankings:
            for h in r.hits:
                sys.stdout.write(f"{r.query_id} Q0 {h.passage_id} {h.rank} {h.score:.6f} factscout\n")
    partial = [r for r in rankings if r.partial]
    if partial:
        shards_missing = sorted({s for r in partial for s in r.missing_shards})
        err.print(f"[bold yellow]partial:[/] {len(partial)} rankings lack the hits of {', '.join(shards_missing)}")
    filtered = [r.date_filter for r in rankings if r.date_filter]
    if filtered:
        late = sum(f.excluded_late for f in filtered) / len(filtered)
        undated_n = filtered[0].undated_kept + filtered[0].undated_dropped
        err.print(
            f"date filter on {len(filtered)}/{len(rankings)} queries: on average {late:.0f} later passages excluded; "
            f"{undated_n} undated passages {'kept' if undated == 'keep' else 'dropped'}"
        )


def _print_ranking(retriever: Any, ranking: Any, query: str) -> None:
    passages = [retriever.store[h.passage_id] for h in ranking.hits]
    dated = any(p.published for p in passages)
    table = Table(title=query, title_justify="left")
    for col in ("rank", "score", "passage", *(["published"] if dated else []), "text"):
        table.add_column(col, overflow="fold", no_wrap=col != "text")
    for h, p in zip(ranking.hits, passages, strict=True):
        snippet = (f"[bold]{p.title}[/] — " if p.title else "") + p.text.replace("[", "\\[")
        cells = [str(h.rank), f"{h.score:.3f}", p.passage_id]
        if dated:
            cells.append(p.published.isoformat() if p.published else "undated")
        table.add_row(*cells, snippet[:220] + ("…" if len(snippet) > 220 else ""))
    out.print(table)
    if ranking.date_filter:
        f = ranking.date_filter
        out.print(
            f"published before {f.published_before}: {f.allowed} passages allowed, {f.excluded_late} later excluded, "
            f"{f.undated_kept} undated kept, {f.undated_dropped} undated dropped"
        )


@app.command()
@friendly
def plan(
    claims: Annotated[Path, typer.Option(help="claims JSONL in BEIR query form (_id, text, date?, metadata?)")],
    out_path: Annotated[
        Path, typer.Option("--out", help="queries JSONL to write (_id, claim_id, text, origin, date?)")
    ],
    planner: Annotated[
        str, typer.Option(help="claim | oracle | decompose | qgen | claimdecomp | programfc")
    ] = "decompose",
    mmr: Annotated[bool, typer.Option("--mmr", help="filter sub-queries with the QuanTemp++ MMR rule")] = False,
    justification: Annotated[
        bool, typer.Option("--justification", help="with --mmr: also score against meta.justification")
    ] = False,
    alpha: Annotated[float, typer.Option(help="MMR: weight of the claim vs the justification")] = 0.8,
    lam: Annotated[float, typer.Option("--lambda", help="MMR: weight of redundancy")] = 0.4,
    gamma: Annotated[float, typer.Option(help="MMR: keep a sub-query when its score exceeds this")] = 0.4,
) -> None:
    """Plan the search queries for each claim."""
    quiet_libraries()
    from factscout.formats.beir import read_claims, write_queries
    from factscout.plan import make_planner, plan_all
    from factscout.plan.mmr import MmrFilter

    engine = make_planner(planner)
    skipped: list[str] = []
    items = list(read_claims(claims, skipped=skipped))
    with err.status(f"planning {len(items)} claims with {planner}"):
        queries, failures = plan_all(engine, items)
        if mmr:
            keep = MmrFilter(alpha, lam, gamma)
            by_claim = {c.claim_id: c for c in items}
            grouped: dict[str, list] = {}
            for q in queries:
                grouped.setdefault(q.claim_id, []).append(q)
            queries = [
                q
                for cid, qs in grouped.items()
                for q in keep.filter(
                    by_claim[cid], qs, by_claim[cid].meta.get("justification") if justification else None
                )
            ]
    write_queries(out_path, queries)
    out.print(
        f"wrote {len(queries)} queries for {len(items)} claims ({len(queries) / max(len(items), 1):.1f} per claim) to {out_path}"
    )
    for note in skipped[:5]:
        err.print(f"skipped: {note}", highlight=False, soft_wrap=True)
    for failure in failures[:5]:
        err.print(
            f"planner failed on {failure.claim_id} (searched as the claim alone): {failure.error}", soft_wrap=True
        )
    if len(skipped) + len(failures) > 10:
        err.print(f"... {len(skipped)} claims skipped, {len(failures)} planner failures in all")


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": False})
@friendly
def evaluate(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Option(help="qrels: BEIR TSV or TREC 4-column")],
    run: Annotated[Path, typer.Option(help="TREC run file")],
    metrics: Annotated[str, typer.Option(help="measures, e.g. --metrics ndcg@10 recall@100 mrr@10")] = "ndcg@10",
    compare: Annotated[Path | None, typer.Option(help="a second run: paired t-test and randomisation test")] = None,
    per_query: Annotated[bool, typer.Option("--per-query", help="print every query's scores")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Evaluate a TREC run against qrels."""
    from factscout.evaluate import compare as compare_runs
    from factscout.evaluate import evaluate as evaluate_run
    from factscout.evaluate import parse_measures
    from factscout.formats.trec import read_qrels, read_run

    measures = parse_measures([metrics, *ctx.args])
    judgements = read_qrels(qrels)
    result = evaluate_run(judgements, read_run(run), measures)
    other = evaluate_run(judgements, read_run(compare), measures) if compare else None
    if json_out:
        payload: dict[str, Any] = {"run": str(run), "queries": len(result.per_query), "means": result.means()}
        if other is not None:
            payload["compare"] = {
                "run": str(compare),
                "means": other.means(),
                "tests": {
                    str(m): {"t_test_p": c.t_test_p, "randomization_p": c.randomization_p}
                    for m in measures
                    for c in [compare_runs(result, other, m)]
                },
            }
        out.print_json(json.dumps(payload))
        return
    _print_evaluation(result, other, run, compare, measures, per_query)


def _print_evaluation(
    result: Any, other: Any, run: Path, compare: Path | None, measures: Sequence[Any], per_query: bool
) -> None:
    from factscout.evaluate import compare as compare_runs

    if per_query:
        table = Table("query", *[str(m) for m in measures])
        for q, scores in result.per_query.items():
            table.add_row(q, *[f"{scores[m]:.4f}" for m in measures])
        out.print(table)
    table = Table(title=f"{len(result.per_query)} judged queries")
    table.add_column("run")
    for m in measures:
        table.add_column(str(m), justify="right")
    table.add_row(run.name, *[f"{result.mean(m):.4f}" for m in measures])
    if other is not None and compare is not None:
        table.add_row(compare.name, *[f"{other.mean(m):.4f}" for m in measures])
        tests = [compare_runs(result, other, m) for m in measures]
        table.add_row("p (t-test)", *[f"{c.t_test_p:.4f}" for c in tests])
        table.add_row("p (randomisation)", *[f"{c.randomization_p:.4f}" for c in tests])
    out.print(table)


@app.command()
@friendly
def check(
    claim: Annotated[str | None, typer.Argument(help="the claim to check (or give --claims FILE)")] = None,
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")] = Path(
        ".factscout/scifact-index"
    ),
    date: Annotated[str | None, typer.Option(help="the claim's date (YYYY-MM-DD): evidence must predate it")] = None,
    claims: Annotated[Path | None, typer.Option(help="claims JSONL in BEIR query form (_id, text, date?)")] = None,
    out_path: Annotated[Path | None, typer.Option("--out", help="reports JSONL to write (with --claims)")] = None,
    planner: Annotated[
        str, typer.Option(help="claim | decompose | qgen | oracle | claimdecomp | programfc")
    ] = "decompose",
    fusion: Annotated[str, typer.Option(help="how sub-query rankings are fused")] = "combsum-norm",
    passages: Annotated[int, typer.Option(help="top passages read for evidence sentences")] = 5,
    depth: Annotated[int, typer.Option(help="passages retrieved per query")] = 100,
    rerank: Annotated[bool, typer.Option("--rerank", help="re-rank the top 50 with factscout's cross-encoder")] = False,
    selector: Annotated[str, typer.Option(help="evidence sentences: threshold | bio (the BIO tagger)")] = "threshold",
    stance: Annotated[
        str, typer.Option(help="head (SBERT-style, fast) | cross (cross-encoder: claim and sentence read together)")
    ] = "head",
    verdict: Annotated[
        str, typer.Option(help="rule (Quin+ count rule) | classifier (QuanTemp++, can say conflicting)")
    ] = "rule",
    no_date_filter: Annotated[
        bool, typer.Option("--no-date-filter", help="also use evidence published after the claim date")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON (one claim)")] = False,
    ray: RayOption = None,
    workers: Annotated[int | None, typer.Option(help="with --ray: checker actors (default: one per CPU)")] = None,
) -> None:
    """Check a claim: plan, retrieve, fuse, select evidence sentences, classify stance, give a verdict."""
    quiet_libraries()
    from factscout.check import Checker, CheckSettings
    from factscout.records import Claim

    if (claim is None) == (claims is None):
        raise typer.BadParameter("give exactly one of a CLAIM argument or --claims FILE")
    if claims is not None and out_path is None:
        raise typer.BadParameter("--claims needs --out FILE for the reports")
    settings = CheckSettings(
        planner=planner,
        fusion=fusion,
        passages=passages,
        depth=depth,
        date_filter=not no_date_filter,
        rerank=rerank,
        selector=selector,
        stance=stance,
        verdict=verdict,
    )
    if ray is not None:
        if claims is None or out_path is None:
            raise typer.BadParameter("--ray checks a --claims FILE (with --out)")
        from factscout.scale.jobs import check_on_ray

        _write_reports(out_path, check_on_ray(index, settings, _read_claims(claims), address=ray, workers=workers))
        return
    checker = Checker.from_index(index, settings)
    if claim is not None:
        if not claim.strip():
            raise typer.BadParameter("the claim is empty")
        with err.status("checking the claim"):
            report = checker.check(Claim("claim", claim.strip(), _parse_day(date, "--date")))
        if as_json:
            out.print_json(json.dumps(report.to_dict()))
        else:
            _print_report(report)
        return
    assert claims is not None and out_path is not None  # for mypy: checked above
    _write_reports(out_path, checker.iter_check(_read_claims(claims), batch_size=32))


def _write_reports(out_path: Path, reports: Any) -> None:
    from factscout.cli.stats import CheckStats
    from factscout.formats.jsonl import write_jsonl

    stats = CheckStats()
    with progress() as bar:
        task = bar.add_task("checking claims", total=None)

        def rows() -> Any:
            for report in reports:
                stats.add(report)
                bar.advance(task)
                yield report.to_dict()

        write_jsonl(out_path, rows())
    verdicts = ", ".join(f"{n} {label}" for label, n in sorted(stats.verdicts.items()))
    err.print(f"wrote {stats.claims} reports to {out_path} ({verdicts})")


def _print_report(report: Any) -> None:
    v = report.verdict
    colour = {"supported": "green", "refuted": "red"}.get(v.label, "yellow")
    out.rule(f"[bold]{report.claim.text}[/]")
    out.print(f"verdict: [bold {colour}]{v.label}[/]  ({v.supporting} supporting, {v.refuting} refuting, "
              f"{v.neutral} neutral sentences; {v.method})", highlight=False)  # fmt: skip
    out.print("queries: " + " | ".join(q.text for q in report.queries), highlight=False, soft_wrap=True)
    for stance, group in report.grouped().items():
        if not group:
            continue
        out.print(f"\n[bold]{stance}[/] ({len(group)})")
        for e in group:
            date = e.published.isoformat() if e.published else "undated"
            late = " [red](after the claim)[/]" if e.after_claim else ""
            out.print(f"  #{e.rank} {e.title or e.doc_id} [dim]{date}{late} found by {', '.join(e.found_by)}[/]",
                      highlight=False, soft_wrap=True)  # fmt: skip
            for sent in e.sentences:
                out.print(f"    > {sent.text} [dim]({sent.stance})[/]", highlight=False, soft_wrap=True)


@app.command()
@friendly
def trajectories(
    claims: Annotated[Path, typer.Option(help="claims JSONL in BEIR query form (_id, text, date?)")],
    qrels: Annotated[Path, typer.Option(help="qrels of those claims (BEIR TSV or TREC)")],
    index: Annotated[Path, typer.Option("--index", help="index directory: the black-box search endpoint")],
    out_path: Annotated[Path, typer.Option("--out", help="trajectories JSONL (appended; reruns resume)")],
    reward: Annotated[str, typer.Option(help="AP@50 | R@50 | RR (any cut-off)")] = "AP@50",
    depth: Annotated[int, typer.Option(help="BFS depth limit (edits per sequence)")] = 4,
    top_n: Annotated[int, typer.Option(help="sequences kept per claim")] = 5,
    workers: Annotated[
        int | None, typer.Option(help="processes, one claim at a time each (default 1; with --ray: one per CPU)")
    ] = None,
    seed: Annotated[int, typer.Option(help="seed of the random pruning")] = 0,
    negatives: Annotated[
        int, typer.Option(help="random-edit (negative) sequences per claim, for the decision transformer")
    ] = 0,
    ray: RayOption = None,
) -> None:
    """Generate edit trajectories by BFS against the index (training data for `factscout train rewrite`)."""
    quiet_libraries()
    from factscout.formats.trec import read_qrels
    from factscout.retrieve import load_index
    from factscout.rewrite import BfsConfig, SearchEnvironment, generate_trajectories

    items = _read_claims(claims)
    env = SearchEnvironment(load_index(index), read_qrels(qrels), reward)
    config = BfsConfig(max_depth=depth, top_n=top_n, seed=seed, negatives=negatives)
    summary = generate_trajectories(
        items, env, out_path, config, workers=workers, show_progress=err.is_terminal, ray=ray
    )
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(summary.statuses.items()))
    err.print(
        f"{summary.claims} claims ({summary.resumed} already done): {statuses}; {summary.sequences} sequences, "
        f"{summary.candidates} candidate queries scored ({summary.candidates_per_second:,.0f}/s) -> {out_path}"
    )


@app.command()
@friendly
def rewrite(
    claim: Annotated[str | None, typer.Argument(help="the claim to rewrite (or give --claims FILE)")] = None,
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")] = Path(
        ".factscout/scifact-index"
    ),
    policy: Annotated[
        str | None,
        typer.Option(
            help="policy folder from `factscout train rewrite`, a shipped policy (averitec-bm25...), "
            "or a baseline: original | random"
        ),
    ] = None,
    claims: Annotated[Path | None, typer.Option(help="claims JSONL in BEIR query form (_id, text, date?)")] = None,
    out_path: Annotated[
        Path | None, typer.Option("--out", help="with --claims: queries JSONL to write (the `factscout plan` rows)")
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option(help="qrels (BEIR TSV or TREC): score each edit and stop when none improves")
    ] = None,
    claim_id: Annotated[str | None, typer.Option(help="with CLAIM and --qrels: the claim's id in the qrels")] = None,
    reward: Annotated[str, typer.Option(help="reward measure with --qrels: AP@k | R@k | RR")] = "AP@50",
    max_steps: Annotated[int, typer.Option(help="edits at most")] = 4,
    seed: Annotated[int, typer.Option(help="seed of the random baseline")] = 0,
) -> None:
    """Rewrite a claim into a better search query with a learned edit policy (Kazemi et al. 2023)."""
    quiet_libraries()
    from factscout.errors import InputError
    from factscout.formats.beir import write_queries
    from factscout.formats.trec import read_qrels
    from factscout.records import Claim
    from factscout.retrieve import load_index
    from factscout.retrieve.index import read_manifest
    from factscout.rewrite.environment import SearchEnvironment
    from factscout.rewrite.policy import make_policy, rewrite_all, shipped_policies
    from factscout.rewrite.policy import rewrite as rewrite_claim

    if (claim is None) == (claims is None):
        raise typer.BadParameter("give exactly one of a CLAIM argument or --claims FILE")
    if claims is not None and out_path is None:
        raise typer.BadParameter("--claims needs --out FILE for the rewritten queries")
    if claim is not None and (qrels is None) != (claim_id is None):
        raise typer.BadParameter("--qrels and --claim-id go together (the claim's id in the qrels)")
    if policy is None:
        raise InputError(
            "no rewrite policy given: pass --policy with a folder from `factscout train rewrite`, a shipped "
            f"policy ({', '.join(shipped_policies())}; none beats the original claim on held-out claims, see the "
            "README) or a baseline (original | random)"
        )
    read_manifest(index)
    engine = make_policy(policy, seed=seed)
    env = SearchEnvironment(load_index(index), read_qrels(qrels), reward) if qrels is not None else None
    if claim is not None:
        if not claim.strip():
            raise typer.BadParameter("the claim is empty")
        with err.status("rewriting the claim"):
            trace = rewrite_claim(Claim(claim_id or "claim", claim.strip()), engine, env, max_steps=max_steps)
        before = trace.original_reward
        for step in trace.steps:
            scored = f": {trace.measure} {before:.2f} → {step.reward:.2f}" if step.reward is not None else ""
            out.print(f"{step.label}{scored}", highlight=False, soft_wrap=True)
            before = step.reward
        if not trace.steps:
            out.print(f"no edit ({engine.name})", highlight=False)
        out.print(f"final query: {trace.final}", highlight=False, soft_wrap=True)
        return
    assert claims is not None and out_path is not None  # for mypy: checked above
    items = _read_claims(claims)
    with progress() as bar:
        task = bar.add_task("rewriting claims", total=len(items))
        queries, failures = rewrite_all(items, engine, env, max_steps=max_steps, on_claim=lambda: bar.advance(task))
    write_queries(out_path, queries)
    edited = sum(q.origin == "rewrite" and q.text != c.text for q, c in zip(queries, items, strict=True))
    out.print(f"wrote {len(queries)} rewritten queries ({edited} edited) with {engine.name} to {out_path}")
    for failure in failures[:5]:
        err.print(f"rewrite failed on {failure} (kept the claim)", highlight=False, soft_wrap=True)


TRAINERS = {
    "stance": ("factscout.verify.train_stance", []),
    "stance-cross": ("factscout.verify.train_cross_stance", []),
    "rerank": ("factscout.rerank.train", []),
    "selector": ("factscout.select.train_tagger", []),
    "classifier": ("factscout.verify.train_classifier", []),
    "qgen": ("factscout.plan.qgen", ["train"]),
    "dense": ("factscout.retrieve.train_dense", []),
    "rewrite": ("factscout.rewrite.train_policy", []),
}


def _importable(module: str) -> bool:
    import importlib.util

    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


@app.command(
    context_settings={"allow_extra_args": True, "ignore_unknown_options": True, "help_option_names": []},
)
@friendly
def train(
    ctx: typer.Context,
    model: Annotated[str, typer.Argument(help=f"which model: {' | '.join(TRAINERS)}")],
) -> None:
    """Train one of factscout's models (seeded; writes weights, metrics and a model card).

    Options after MODEL go to that trainer: `factscout train stance --out DIR`;
    `factscout train stance --help` lists them.
    """
    import importlib

    from factscout.errors import UnknownName

    if model in ("--help", "-h"):
        out.print(f"usage: factscout train {{{','.join(TRAINERS)}}} [TRAINER OPTIONS]; TRAINER --help lists them")
        return
    if model not in TRAINERS:
        raise UnknownName("trainer", model, TRAINERS)
    module_name, prefix = TRAINERS[model]
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise UnknownName(
                "installed trainer", model, [m for m, (n, _) in TRAINERS.items() if _importable(n)]
            ) from None
        raise
    code = module.main([*prefix, *ctx.args])
    raise typer.Exit(int(code or 0))


@app.command()
@friendly
def demo(
    retriever: Annotated[str, typer.Option(help="bm25 | dense | hybrid")] = "hybrid",
    index: Annotated[Path, typer.Option("--index", help="where to keep the demo index")] = Path(
        ".factscout/scifact-index"
    ),
    claims: Annotated[int, typer.Option(help="how many example claims to show")] = 3,
    k: Annotated[int, typer.Option(help="hits shown per claim")] = 5,
    dataset: Annotated[str, typer.Option(help="scifact or scifact_mini")] = "scifact",
    planner: Annotated[str, typer.Option(help="planner for the checked claims")] = "decompose",
) -> None:
    """Index SciFact, score retrieval on its train claims and check example claims end to end (offline)."""
    quiet_libraries()
    from factscout.demo import run_demo

    err.print(
        f"[bold]factscout demo[/]: SciFact, {retriever} retrieval (first run builds the index; later runs reuse it)"
    )
    result = run_demo(retriever=retriever, index=index, n_claims=claims, k=k, dataset=dataset, planner=planner)
    for (claim, ranking), report in zip(result.examples, result.reports, strict=True):
        _print_report(report)
        gold = {str(g) for g in claim.meta.get("cited_doc_ids", [])}
        found = [h.rank for h in ranking.hits if h.passage_id in gold]
        out.print(
            f"gold label: {claim.meta.get('label') or 'none'}; cited abstracts found by the claim query at rank(s): "
            f"{found or 'none in the top ' + str(k)}",
            highlight=False,
        )
    out.rule(f"all {result.n_queries} {dataset} train claims")
    out.print("  ".join(f"{name} {value:.4f}" for name, value in result.scores.items()))


@app.command()
@friendly
def serve(
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")],
    host: Annotated[str, typer.Option(help="address to listen on")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="port")] = 8000,
    planner: Annotated[str, typer.Option(help="default planner of /v1/check and the page")] = "decompose",
    passages: Annotated[int, typer.Option(help="top passages read for evidence sentences")] = 5,
    policy: Annotated[
        str, typer.Option(help="query editor suggestions: a `factscout train rewrite` folder, or random | original")
    ] = "random",
    qrels: Annotated[Path | None, typer.Option(help="qrels (BEIR TSV or TREC): the editor shows the metric")] = None,
    token: Annotated[
        str | None, typer.Option(envvar="FACTSCOUT_TOKEN", help="require this bearer token on the API (page off)")
    ] = None,
    max_pending: Annotated[int, typer.Option(help="requests queued or running before 503")] = 128,
    threads: Annotated[
        int, typer.Option(help="threads per model call (torch, ONNX Runtime); 1 is fastest on a busy machine")
    ] = 1,
) -> None:
    """Serve the HTTP API (/v1/check, /v1/search, /v1/plan, /v1/rewrite) and the web page."""
    quiet_libraries()
    from factscout.check import Checker, CheckSettings
    from factscout.formats.trec import read_qrels
    from factscout.serve import create_app
    from factscout.serve.app import model_threads

    try:
        import uvicorn
    except ImportError:
        from factscout.errors import MissingDependency

        raise MissingDependency("factscout serve needs uvicorn: pip install 'factscout[serve]'") from None
    from factscout.retrieve.index import read_manifest

    read_manifest(index)  # a missing or broken index is reported before any model loads
    encoder = model_threads(threads)
    checker = Checker.from_index(index, CheckSettings(planner=planner, passages=passages), encoder=encoder)
    judgements = read_qrels(qrels) if qrels else None
    web = create_app(checker, token=token, policy=policy, qrels=judgements, max_pending=max_pending)
    err.print(f"factscout serving {index} on http://{host}:{port}/ (API under /v1, schema at /openapi.json)")
    uvicorn.run(web, host=host, port=port, log_level="warning")


@app.command()
@friendly
def collect(
    claims: Annotated[Path, typer.Option(help="claims JSONL in BEIR query form (_id, text, date?, metadata?)")],
    provider: Annotated[str, typer.Option(help="web search: serpapi | brave | bing | google (keys from the env)")],
    out_path: Annotated[Path, typer.Option("--out", help="output folder: corpus, qrels, queries, records, snapshot/")],
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
    from factscout.collect.providers import PROVIDERS

    PROVIDERS[provider]
    settings = CollectSettings(
        provider=provider, planner=planner, mmr=not no_mmr, results=results, distractors=distractors, threshold=threshold,
        crawl=not no_crawl, exclude_domains=tuple(exclude_domain or ()), allow_hosts=tuple(allow_host or ()),
        base_url=base_url, min_interval=min_interval, crawler=CrawlSettings(host_interval=host_interval),
    )  # fmt: skip
    items = _read_claims(claims)
    with progress() as bar:
        task = bar.add_task("collecting" + (" (replay)" if replay else ""), total=len(items))
        report = run_collect(
            items, out_path, settings, replay=replay, drift_from=drift_from, on_claim=lambda: bar.advance(task)
        )
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


def main() -> None:  # pragma: no cover
    app()
