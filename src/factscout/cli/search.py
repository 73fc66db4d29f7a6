"""``factscout search``: one query as a table, or a queries file as a TREC run (fused per claim)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    RayOption,
    claim_text,
    counted,
    err,
    friendly,
    input_path,
    one_of,
    out,
    output_path,
    parse_day,
    quiet_libraries,
)
from factscout.fuse import FUSIONS
from factscout.retrieve.base import UNDATED_POLICIES
from factscout.settings import DATE_FILTER_HELP


@friendly
def search(
    index: Annotated[Path, typer.Option("--index", help="index directory built by 'factscout index'")],
    queries: Annotated[
        Path | None, typer.Option(*INPUT, "--queries", help="queries JSONL (_id, text, date?, claim_id?, origin?)")
    ] = None,
    query: Annotated[str | None, typer.Option(help="one query; prints a table")] = None,
    k: Annotated[int, typer.Option(help="hits per query")] = 100,
    run: Annotated[Path | None, typer.Option(*OUTPUT, "--run", help="write a TREC run file here")] = None,
    date_filter: Annotated[bool, typer.Option("--date-filter/--no-date-filter", help=DATE_FILTER_HELP)] = True,
    date: Annotated[
        str | None, typer.Option(help="with --query: the query's date (YYYY-MM-DD; see --date-filter)")
    ] = None,
    undated: Annotated[
        str, typer.Option(help=f"undated passages under a date filter: {one_of(UNDATED_POLICIES)}")
    ] = "keep",
    batch_size: Annotated[int, typer.Option(help="queries per search batch")] = 256,
    by_doc: Annotated[bool, typer.Option("--by-doc", help="rank documents by their best passage (MaxP)")] = False,
    fusion: Annotated[
        str | None,
        typer.Option(help=f"fuse each claim's sub-query rankings: {' '.join(FUSIONS)}"),
    ] = None,
    fusion_weights: Annotated[Path | None, typer.Option(help="weights JSON for --fusion learned")] = None,
    fast: Annotated[
        bool,
        typer.Option(
            "--fast", help="embed a dense/hybrid index's queries with the int8 MiniLM (3x faster; docs/results.md)"
        ),
    ] = False,
    ray: RayOption = None,
) -> None:
    """Search an index with one query or a queries file (several queries per claim: --fusion).

    A query with a date finds only passages published before it unless --no-date-filter is given.
    """
    quiet_libraries()
    from factscout.errors import InputError
    from factscout.formats.beir import read_queries
    from factscout.formats.trec import write_run
    from factscout.records import Query
    from factscout.retrieve import load_index
    from factscout.retrieve.base import check_k, check_undated
    from factscout.retrieve.batch import search_all
    from factscout.retrieve.index import read_manifest

    check_k(k)
    check_undated(undated)
    fuse = None
    if fusion is not None:
        from factscout.fuse import named_fusion

        fuse = named_fusion(fusion, fusion_weights)
    if (queries is None) == (query is None):
        raise typer.BadParameter("give exactly one of --input FILE (--queries) or --query TEXT")
    # everything the user gave is checked before the index loads
    output_path(run, "--output")
    text = claim_text(query, "--query") if query is not None else None
    day = parse_day(date, "--date")
    items: list[Any] = []
    if queries is not None:
        input_path(queries, "--input")
        items = list(read_queries(queries, strict=True))
        if not items:
            raise InputError(f"--input {queries} holds no query")
    manifest = read_manifest(index)[1]
    if ray and manifest.get("retriever") != "sharded":
        raise typer.BadParameter("--ray searches a sharded index (built with factscout index --shards N)")
    extra: dict[str, Any] = {"ray": ray} if ray else {}
    if fast and manifest.get("retriever") in ("dense", "hybrid"):
        extra["query_encoder"] = "int8"
    retriever = load_index(index, undated=undated, **extra)  # --ray: shard actors
    if text is not None:
        before = day if date_filter else None
        ranking = retriever.search([Query("q", "q", text, "cli", day)], k, published_before=before)[0]
        _print_ranking(retriever, ranking, text)
        if run:
            write_run(run, [ranking])
        return
    with counted("searching", len(items)) as bar:
        rankings = search_all(
            retriever,
            items,
            k,
            date_filter=date_filter,
            by_doc=by_doc,
            batch_size=batch_size,
            on_batch=bar.advance,
        )
    if fuse is not None:
        from factscout.fuse import fuse_queries

        n_queries = len(rankings)
        rankings = fuse_queries(rankings, items, fuse, k)
        err.print(f"fused {n_queries} query rankings into {len(rankings)} claim rankings with {fusion}")
    if run:
        write_run(run, rankings)
        out.print(f"wrote {sum(len(r) for r in rankings)} hits for {len(rankings)} rankings to {run}")
    else:
        from factscout.formats.trec import run_lines

        sys.stdout.writelines(run_lines(rankings))
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
