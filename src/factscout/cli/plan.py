"""``factscout plan``: the search queries of each claim, optionally filtered by MMR."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    counted,
    err,
    friendly,
    input_path,
    one_of,
    out,
    output_path,
    quiet_libraries,
    read_claims,
    status,
)
from factscout.plan import PLANNERS


@friendly
def plan(
    claims: Annotated[
        Path, typer.Option(*INPUT, "--claims", help="claims JSONL in BEIR query form (_id, text, date?, metadata?)")
    ],
    out_path: Annotated[
        Path, typer.Option(*OUTPUT, "--out", help="queries JSONL to write (_id, claim_id, text, origin, date?)")
    ],
    planner: Annotated[str, typer.Option(help=one_of(PLANNERS))] = "decompose",
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
    from factscout.formats.beir import write_queries
    from factscout.plan import make_planner, plan_all
    from factscout.plan.base import PLAN_BATCH, PlanFailure
    from factscout.plan.mmr import MmrFilter
    from factscout.records import Query

    output_path(out_path, "--output")
    input_path(claims, "--input")
    items = read_claims(claims, "planned")  # read whole before the planner loads
    engine = make_planner(planner)
    queries: list[Query] = []
    failures: list[PlanFailure] = []
    # plan_all gives a batch planner (plan_many) PLAN_BATCH claims per call and plans the others one claim
    # at a time: the same calls here, a few claims per plan_all call, so the bar counts as it goes
    step = PLAN_BATCH if hasattr(engine, "plan_many") else 8
    with counted(f"planning with {planner}", len(items)) as bar:
        for start in range(0, len(items), step):
            batch = items[start : start + step]
            planned, failed = plan_all(engine, batch)
            queries += planned
            failures += failed
            bar.advance(len(batch))
    if mmr:
        with status(f"MMR filter over {len(queries)} queries"):
            queries = MmrFilter(alpha, lam, gamma).filter_plans(items, queries, justification=justification)
    write_queries(out_path, queries)
    out.print(
        f"wrote {len(queries)} queries for {len(items)} claims ({len(queries) / max(len(items), 1):.1f} per claim) to {out_path}"
    )
    for failure in failures[:5]:
        err.print(
            f"planner failed on {failure.claim_id} (searched as the claim alone): {failure.error}", soft_wrap=True
        )
    if len(failures) > 5:
        err.print(f"... {len(failures)} planner failures in all")
