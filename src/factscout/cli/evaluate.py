"""``factscout evaluate``: score a TREC run against qrels, optionally against a second run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from factscout.cli.common import INPUT, friendly, out


@friendly
def evaluate(
    ctx: typer.Context,
    qrels: Annotated[Path, typer.Option(help="qrels: BEIR TSV or TREC 4-column")],
    run: Annotated[Path, typer.Option(*INPUT, "--run", help="the TREC run file to score")],
    metrics: Annotated[str, typer.Option(help="measures, e.g. --metrics ndcg@10 recall@100 mrr@10")] = "ndcg@10",
    compare: Annotated[Path | None, typer.Option(help="a second run: paired t-test and randomisation test")] = None,
    per_query: Annotated[bool, typer.Option("--per-query", help="print every query's scores")] = False,
    json_out: Annotated[bool, typer.Option("--json", help="print one JSON object")] = False,
) -> None:
    """Evaluate a TREC run against qrels."""
    from factscout.evaluate import compare_measures, parse_measures
    from factscout.evaluate import evaluate as evaluate_run
    from factscout.formats.trec import read_qrels, read_run

    measures = parse_measures([metrics, *ctx.args])
    judgements = read_qrels(qrels)
    result = evaluate_run(judgements, read_run(run), measures)
    other = evaluate_run(judgements, read_run(compare), measures) if compare else None
    if json_out:
        payload: dict[str, Any] = {"run": str(run), "queries": len(result.per_query), "means": result.means()}
        if other is not None:
            tests = compare_measures(result, other, measures)
            payload["compare"] = {
                "run": str(compare),
                "means": other.means(),
                "tests": {
                    str(m): {"t_test_p": c.t_test_p, "randomization_p": c.randomization_p}
                    for m, c in zip(measures, tests, strict=True)
                },
            }
        out.print_json(json.dumps(payload))
        return
    _print_evaluation(result, other, run, compare, measures, per_query)


def _print_evaluation(
    result: Any,
    other: Any,
    run: Path,
    compare: Path | None,
    measures: Sequence[Any],
    per_query: bool,
) -> None:
    from factscout.evaluate import compare_measures

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
        tests = compare_measures(result, other, measures)
        table.add_row("p (t-test)", *[f"{c.t_test_p:.4f}" for c in tests])
        table.add_row("p (randomisation)", *[f"{c.randomization_p:.4f}" for c in tests])
    out.print(table)
