"""``factscout factchecks``: build, search and extend a fact-check memory (:mod:`factscout.factchecks`).

``index`` reads the sources under the data root into a memory folder, ``search`` writes a TREC
run of fact-check ids for a BEIR queries file (CheckThat! 2A: ``vclaim_id``s, scored against the
lab's qrels as they are), ``add`` appends a user's own fact-checks atomically.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    err,
    friendly,
    input_path,
    one_of,
    out,
    output_path,
    quiet_libraries,
    status,
)
from factscout.factchecks.sources import SOURCES

app = typer.Typer(
    add_completion=False, no_args_is_help=True, help="Published fact-checks: build, search, add to a memory."
)

IndexDir = Annotated[Path, typer.Option("--index", help="the memory folder built by 'factscout factchecks index'")]


@app.command("index")
@friendly
def index(
    output: Annotated[
        Path, typer.Option(*OUTPUT, help="memory folder to write (a new generation, swapped in atomically)")
    ],
    source: Annotated[
        list[str] | None,
        typer.Option("--source", help=f"a source to read (repeatable; default: every one found): {one_of(SOURCES)}"),
    ] = None,
    data: Annotated[Path | None, typer.Option(help="data root (default: $FACTSCOUT_DATA or ../shared/data)")] = None,
) -> None:
    """Build a fact-check memory from the datasets holding published fact-checks (duplicates merged)."""
    quiet_libraries()
    from factscout.datasets.base import data_root
    from factscout.errors import DataNotFound
    from factscout.factchecks import FactCheckMemory, available_sources, load_source
    from factscout.factchecks.sources import check_source

    root = data if data is not None else data_root()
    names = [check_source(s) for s in source] if source else available_sources(root)
    if not names:
        raise DataNotFound(f"no fact-check source under {root}; known: {', '.join(SOURCES)}")
    records = []
    for name in names:
        with status(f"reading {name}"):
            got = load_source(name, root)
        err.print(f"{name}: {len(got)} fact-checks", highlight=False)
        records.extend(got)
    with status("encoding and indexing"):
        memory = FactCheckMemory.build(records)
        memory.save(output)
    out.print(
        f"{len(memory)} fact-checks ({len(records) - len(memory)} duplicates merged) -> {output}", highlight=False
    )


@app.command("search")
@friendly
def search(
    index: IndexDir,
    input: Annotated[Path, typer.Option(*INPUT, help="queries JSONL (_id, text, date?), as for 'factscout search'")],
    output: Annotated[Path, typer.Option(*OUTPUT, help="TREC run of fact-check ids to write")],
    k: Annotated[int, typer.Option(help="fact-checks per query")] = 10,
    date_filter: Annotated[
        bool,
        typer.Option(
            "--date-filter/--no-date-filter",
            help="a dated query finds only fact-checks published before its date (strictly, as `check`)",
        ),
    ] = True,
) -> None:
    """Rank the memory's fact-checks for each query (claim matching) into a TREC run."""
    quiet_libraries()
    from factscout.factchecks import FactCheckMemory
    from factscout.formats.beir import read_queries
    from factscout.formats.trec import write_run
    from factscout.records import Hit, Ranking
    from factscout.retrieve.base import check_k

    check_k(k)
    input_path(input, "--input")
    output_path(output, "--output")
    queries = list(read_queries(input, strict=True))
    memory = FactCheckMemory.load(index)
    rankings = []
    dated: dict[dt.date | None, list[int]] = {}
    for i, q in enumerate(queries):
        dated.setdefault(q.date if date_filter else None, []).append(i)
    found: dict[int, list] = {}
    for day, rows in dated.items():
        for i, matches in zip(
            rows,
            memory.search_many(
                [queries[i].text for i in rows], k, published_before=day, dates=[queries[i].date for i in rows]
            ),
            strict=True,
        ):
            found[i] = matches
    for i, q in enumerate(queries):
        hits = [Hit(m.record.fact_check_id, m.score) for m in found[i]]
        rankings.append(Ranking(q.query_id, hits))
    write_run(output, rankings, tag="factscout-factchecks")
    out.print(f"{len(rankings)} queries -> {output}", highlight=False)


@app.command("add")
@friendly
def add(
    input: Annotated[
        Path, typer.Option(*INPUT, help="JSONL of fact-check records (fact_check_id, claim, publisher, ...)")
    ],
    index: IndexDir,
) -> None:
    """Add your own published fact-checks to a memory, atomically: a bad row changes nothing."""
    quiet_libraries()
    from factscout.factchecks import FactCheckMemory, read_records

    input_path(input, "--input")
    FactCheckMemory.current(index)  # a memory must be there before the file is read
    records = read_records(input)
    memory = FactCheckMemory.load(index)
    before = len(memory)
    updated = memory.add(records)
    updated.save(index)
    out.print(f"{len(records)} read, {len(updated) - before} new fact-checks -> {index}", highlight=False)
