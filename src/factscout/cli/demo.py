"""``factscout demo``: index SciFact, score retrieval and check a few claims end to end, offline."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import err, friendly, one_of, out, print_report, quiet_libraries
from factscout.datasets import DATASETS
from factscout.retrieve import RETRIEVERS

_IN_PROCESS = [name for name in RETRIEVERS if not name.startswith("pg-")]  # the demo needs no server
_SCIFACT = [name for name in DATASETS if name.startswith("scifact")]


@friendly
def demo(
    retriever: Annotated[str, typer.Option(help=one_of(_IN_PROCESS))] = "hybrid",
    index: Annotated[Path, typer.Option("--index", help="where to keep the demo index")] = Path(
        ".factscout/scifact-index"
    ),
    claims: Annotated[int, typer.Option(help="how many example claims to show")] = 3,
    k: Annotated[int, typer.Option(help="hits shown per claim")] = 5,
    dataset: Annotated[str, typer.Option(help=" or ".join(_SCIFACT))] = "scifact",
    planner: Annotated[str, typer.Option(help="planner for the checked claims")] = "decompose",
    heldout: Annotated[
        int | None,
        typer.Option(
            "--heldout",
            help="held-out claims checked for the closing scores (default: all; 0: none)",
            min=0,
        ),
    ] = None,
    wait_for_sentences: Annotated[
        bool,
        typer.Option(
            "--wait-for-sentences",
            help="build a new index with its sentence vectors before checking (one stage, minutes longer); by"
            " default the demo answers from the passages and the vectors are added in the background",
        ),
    ] = False,
    timings: Annotated[
        Path | None, typer.Option("--timings", help="write the wall seconds of each step here (JSON)")
    ] = None,
) -> None:
    """Index SciFact, score retrieval on its train claims and check example claims end to end (offline);
    end with the scores of the claims held out from training: nDCG@10, verdict macro-F1 and the precision
    and coverage of the definite verdicts."""
    quiet_libraries()
    from factscout.demo import GOLD, run_demo

    err.print(
        f"[bold]factscout demo[/]: SciFact, {retriever} retrieval (first run builds the index; later runs reuse it)"
    )
    started = time.perf_counter()
    result = run_demo(
        retriever=retriever,
        index=index,
        n_claims=claims,
        k=k,
        dataset=dataset,
        planner=planner,
        heldout=heldout,
        staged=not wait_for_sentences,
    )
    if result.built:
        err.print(
            f"index built in {result.timings['index']:.0f} s"
            + ("" if result.sentences_stored else ": passages only; the checks below embed the sentences they read")
        )
    for (claim, ranking), report in zip(result.examples, result.reports, strict=True):
        print_report(report)
        gold = {str(g) for g in claim.meta.get("cited_doc_ids", [])}
        found = [h.rank for h in ranking.hits if h.passage_id in gold]
        raw = claim.meta.get("label")
        gold_label = f"{GOLD[raw]} (SciFact: {raw})" if raw in GOLD else "none (SciFact gives no label)"
        out.print(
            f"gold verdict: {gold_label}; cited abstracts found by the claim query at rank(s): "
            f"{found or 'none in the top ' + str(k)}",
            highlight=False,
        )
    out.rule(f"all {result.n_queries} {dataset} train claims")
    out.print("  ".join(f"{name} {value:.4f}" for name, value in result.scores.items()))
    held = result.heldout
    if held is not None:
        out.rule(f"{held.claims} {dataset} train claims held out from training")
        d = held.definite
        precision = "-" if d.precision is None else f"{d.precision:.4f}"
        threshold = f"--min-confidence {held.min_confidence:g}" if held.min_confidence else "no abstention"
        out.print(
            f"nDCG@10 {held.ndcg10:.4f}  verdict macro-F1 {held.macro_f1:.4f}  definite calls ({threshold}): "
            f"precision {precision}, coverage {d.coverage:.4f} ({d.calls} calls)",
            highlight=False,
        )
    if not result.sentences_stored:
        _sentences_follow(index)
    if timings is not None:
        record = {**result.timings, "total": time.perf_counter() - started, "built": result.built}
        timings.write_text(json.dumps({**record, "sentences_stored": result.sentences_stored}, indent=1) + "\n")


def _sentences_follow(index: Path) -> None:
    """Add the index's sentence vectors in a background process (unless one is at it) and say so."""
    from factscout.retrieve.index import sentences_in_background, sentences_running

    log_file = index.parent / f"{index.name}.sentences.log"
    running = sentences_running(index)
    pid = running or sentences_in_background(index, log_file)
    what = "are being added" if running else "are now added"
    err.print(
        f"[bold]sentence vectors[/] {what} to {index} in the background (process {pid}; log {log_file}). Until they"
        " are in, `check` on this index embeds the sentences of the passages it reads; the next `make demo` and"
        " `check` read the stored vectors (the check reports the path in provenance).",
        highlight=False,
    )
