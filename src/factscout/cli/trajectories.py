"""``factscout trajectories``: BFS edit sequences against an index (training data of the rewrite policy)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import INPUT, OUTPUT, RayOption, counted, err, friendly, quiet_libraries, read_claims


@friendly
def trajectories(
    claims: Annotated[
        Path, typer.Option(*INPUT, "--claims", help="claims JSONL in BEIR query form (_id, text, date?)")
    ],
    qrels: Annotated[Path, typer.Option(help="qrels of those claims (BEIR TSV or TREC)")],
    index: Annotated[Path, typer.Option("--index", help="index directory: the black-box search endpoint")],
    out_path: Annotated[Path, typer.Option(*OUTPUT, "--out", help="trajectories JSONL (appended; reruns resume)")],
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
    keep_set: Annotated[
        bool,
        typer.Option(
            "--keep-set/--no-keep-set",
            help="also search which words to keep (long removal sequences): for AND endpoints such as bm25-and, "
            "where every single edit of a claim finds nothing",
        ),
    ] = False,
    ray: RayOption = None,
) -> None:
    """Generate edit trajectories by BFS against the index (training data for `factscout train rewrite`)."""
    quiet_libraries()
    from factscout.formats.trec import read_qrels
    from factscout.retrieve import load_index
    from factscout.rewrite import BfsConfig, SearchEnvironment, generate_trajectories
    from factscout.rewrite.trajectories import finished_claims

    items = read_claims(claims)
    env = SearchEnvironment(load_index(index), read_qrels(qrels), reward)
    config = BfsConfig(max_depth=depth, top_n=top_n, seed=seed, negatives=negatives, keep_set=keep_set)
    done = finished_claims(out_path)  # a rerun resumes: the bar counts the claims still to search
    with counted("BFS trajectories", len({c.claim_id for c in items} - done)) as bar:
        summary = generate_trajectories(
            items, env, out_path, config, workers=workers, on_claim=lambda _: bar.advance(), ray=ray
        )
    statuses = ", ".join(f"{n} {status}" for status, n in sorted(summary.statuses.items()))
    err.print(
        f"{summary.claims} claims ({summary.resumed} already done): {statuses}; {summary.sequences} sequences, "
        f"{summary.candidates} candidate queries scored ({summary.candidates_per_second:,.0f}/s) -> {out_path}"
    )
