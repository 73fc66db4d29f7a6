"""``factscout rewrite``: edit a claim (or a file of claims) into a better search query."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    claim_text,
    counted,
    err,
    friendly,
    one_of,
    out,
    output_path,
    quiet_libraries,
    read_claims,
    status,
)
from factscout.rewrite.io import BASELINES, shipped_policies


@friendly
def rewrite(
    claim: Annotated[str | None, typer.Argument(help="the claim to rewrite (or give --input FILE)")] = None,
    index: Annotated[Path, typer.Option("--index", help="index directory built with `factscout index`")] = Path(
        ".factscout/scifact-index"
    ),
    policy: Annotated[
        str | None,
        typer.Option(
            help="policy folder from `factscout train rewrite`, a shipped policy: "
            f"{one_of(shipped_policies())}, or a baseline: {one_of(BASELINES)}"
        ),
    ] = None,
    claims: Annotated[
        Path | None, typer.Option(*INPUT, "--claims", help="claims JSONL in BEIR query form (_id, text, date?)")
    ] = None,
    out_path: Annotated[
        Path | None,
        typer.Option(*OUTPUT, "--out", help="with --input: queries JSONL to write (the `factscout plan` rows)"),
    ] = None,
    qrels: Annotated[
        Path | None, typer.Option(help="qrels (BEIR TSV or TREC): score each edit and stop when none improves")
    ] = None,
    claim_id: Annotated[str | None, typer.Option(help="with CLAIM and --qrels: the claim's id in the qrels")] = None,
    reward: Annotated[str, typer.Option(help="reward measure with --qrels: AP@k | R@k | RR")] = "AP@50",
    max_steps: Annotated[
        int | None,
        typer.Option(help="edits at most (default: the policy's own step limit, or 4, the BFS depth)"),
    ] = None,
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
    from factscout.rewrite.ranker import RankerPolicy

    if (claim is None) == (claims is None):
        raise typer.BadParameter("give exactly one of a CLAIM argument or --input FILE (--claims)")
    if claims is not None and out_path is None:
        raise typer.BadParameter("--input FILE (--claims) needs --output FILE (--out) for the rewritten queries")
    if claim is not None and (qrels is None) != (claim_id is None):
        raise typer.BadParameter("--qrels and --claim-id go together (the claim's id in the qrels)")
    if policy is None:
        raise InputError(
            "no rewrite policy given: pass --policy with a folder from `factscout train rewrite`, a shipped "
            f"policy ({', '.join(shipped_policies())}; which beat the original claim on held-out claims, and "
            "where: src/factscout/rewrite/models/POLICIES.md) or a baseline (original | random)"
        )
    text = claim_text(claim) if claim is not None else None
    items = read_claims(claims) if claims is not None else []  # read whole before anything loads
    output_path(out_path, "--output")
    read_manifest(index)
    engine = make_policy(policy, seed=seed)
    searched = load_index(index) if qrels is not None or isinstance(engine, RankerPolicy) else None
    if isinstance(engine, RankerPolicy):  # it plans by searching the index it rewrites for
        engine = engine.bind(searched)
    env = SearchEnvironment(searched, read_qrels(qrels), reward) if searched is not None and qrels is not None else None
    if claim is not None:
        with status("rewriting the claim"):
            trace = rewrite_claim(Claim(claim_id or "claim", str(text)), engine, env, max_steps=max_steps)
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
    with counted("rewriting claims", len(items)) as bar:
        queries, failures = rewrite_all(items, engine, env, max_steps=max_steps, on_claim=bar.advance)
    write_queries(out_path, queries)
    edited = sum(q.origin == "rewrite" and q.text != c.text for q, c in zip(queries, items, strict=True))
    out.print(f"wrote {len(queries)} rewritten queries ({edited} edited) with {engine.name} to {out_path}")
    for failure in failures[:5]:
        err.print(f"rewrite failed on {failure} (kept the claim)", highlight=False, soft_wrap=True)
