"""Query planning and sub-query fusion on AVeriTeC (QuanTemp++ reproduction).

AVeriTeC train: the gold questions are the oracle queries; the gold answers are the closed
passage pool and the qrels; claims are dated, and passages whose source URL carries a date
are dated. Passages are indexed as title + text only (the question an answer belongs to is
never indexed).

* Table A: the aggregations (TOP-1, CONCAT, CombSUM, CombMAX, each ± min-max, RRF, learned)
  over the oracle queries: nDCG@10, R@100.
* Table B: planners (claim-only, oracle, decompose, qgen, LLM planners when an endpoint is
  configured) x with / without the published-before-claim filter x the two QuanTemp++
  aggregations (CombMAX-norm, CombSUM-norm): nDCG@10, R@10, R@100, P@10, MRR@10, coverage@10.

Learned fusion weights and the qgen generator are always scored on claims they were not fitted
on (2-fold and 5-fold cross-fitting).

    python benchmarks/query_planning.py [--retriever bm25|dense|hybrid]
        [--eval-claims claims.jsonl --eval-qrels qrels.tsv --eval-corpus corpus.jsonl]
"""

from __future__ import annotations

import argparse
import os
import random
import re
import time
from collections.abc import Sequence

from _common import machine, markdown_table, publish, quiet, write_trec_run

from factscout.datasets import load_dataset
from factscout.evaluate import evaluate
from factscout.evaluate.coverage import mean_coverage
from factscout.formats.beir import read_claims, read_corpus, read_qrels
from factscout.fuse import LearnedFusion, fuse_by_claim, make_fusion
from factscout.fuse.learned import DEFAULT_WEIGHTS
from factscout.plan import make_planner, plan_all
from factscout.records import Claim, Query, Ranking
from factscout.retrieve import Retriever, build_retriever, search_with_query_dates

K = 100
TABLE_B_FUSIONS = ("combmax-norm", "combsum-norm")
TABLE_A = ["top1", "concat", "combsum", "combmax", "combsum-norm", "combmax-norm", "rrf"]
MEASURES_B = ["nDCG@10", "R@10", "R@100", "P@10", "MRR@10"]
_ANSWER = re.compile(r"^(?P<claim>.+)-q(?P<q>\d+)-a\d+$")


def subquestion_qrels(qrels: dict[str, dict[str, int]]) -> dict[str, dict[str, set[str]]]:
    """AVeriTeC answer ids are ``<claim>-q<i>-a<j>``: group each claim's relevant answers by question."""
    out: dict[str, dict[str, set[str]]] = {}
    for claim_id, docs in qrels.items():
        for pid, rel in docs.items():
            m = _ANSWER.match(pid)
            if rel > 0 and m:
                out.setdefault(claim_id, {}).setdefault(m["q"], set()).add(pid)
    return out


def search(retriever: Retriever, queries: Sequence[Query], dated: bool) -> list[Ranking]:
    if dated:
        return search_with_query_dates(retriever, queries, K)
    return retriever.search([Query(q.query_id, q.claim_id, q.text, q.origin, None) for q in queries], K)


def grouped(rankings: Sequence[Ranking], queries: Sequence[Query]) -> dict[str, list[Ranking]]:
    claim_of = {q.query_id: q.claim_id for q in queries}
    out: dict[str, list[Ranking]] = {}
    for r in rankings:
        out.setdefault(claim_of[r.query_id], []).append(r)
    return out


def cross_fitted_learned(groups: dict[str, list[Ranking]], qrels, folds: int = 2) -> tuple[list[Ranking], list]:  # type: ignore[no-untyped-def]
    ids = sorted(groups)
    random.Random(0).shuffle(ids)
    fused: list[Ranking] = []
    models = []
    for f in range(folds):
        test = set(ids[f::folds])
        train = {c: rs for c, rs in groups.items() if c not in test}
        model, _ = LearnedFusion.fit(train, {c: qrels[c] for c in train if c in qrels})
        models.append(model)
        fused += [model(groups[c], query_id=c).top(K) for c in ids if c in test]
    return fused, models


def plan_queries(name: str, claims: Sequence[Claim]) -> tuple[list[Query], int]:
    if name == "qgen":
        from factscout.training.qgen.trainer import cross_fitted_plans

        return cross_fitted_plans(claims, folds=5, seed=0), 0
    queries, failures = plan_all(make_planner(name), claims)
    return queries, len(failures)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", default="bm25", help="bm25 | dense | hybrid")
    parser.add_argument("--eval-claims", help="claims JSONL (BEIR queries with metadata.questions, date/claim_date)")
    parser.add_argument("--eval-qrels", help="qrels TSV of those claims")
    parser.add_argument("--eval-corpus", help="passage pool JSONL (BEIR corpus)")
    parser.add_argument("--planners", default="claim,oracle,decompose,qgen", help="comma-separated planner names")
    parser.add_argument("--limit", type=int, default=0, help="use only the first N claims (smoke runs)")
    parser.add_argument("--save-learned", action="store_true", help="write fusion weights fitted on all claims")
    args = parser.parse_args()
    given = [args.eval_claims, args.eval_qrels, args.eval_corpus]
    if any(given) and not all(given):
        parser.error("--eval-claims, --eval-qrels and --eval-corpus go together")
    quiet()

    if args.eval_claims:
        skipped: list[str] = []
        claims = list(read_claims(args.eval_claims, skipped=skipped))
        qrels, corpus, name = read_qrels(args.eval_qrels), list(read_corpus(args.eval_corpus)), args.eval_claims
    else:
        data = load_dataset("averitec_beir", "train")
        claims, qrels, corpus, name = list(data.claims), data.qrels, list(data.corpus), "AVeriTeC train"
    if args.limit:
        claims = claims[: args.limit]
    qrels = {c.claim_id: qrels[c.claim_id] for c in claims if c.claim_id in qrels}
    subq = subquestion_qrels(qrels)
    planners = [p.strip() for p in args.planners.split(",") if p.strip()]
    if os.environ.get("FACTSCOUT_LLM_BASE_URL"):
        planners += [p for p in ("claimdecomp", "programfc") if p not in planners]

    t0 = time.perf_counter()
    retriever = build_retriever(corpus, args.retriever, show_progress=False)
    build_s = time.perf_counter() - t0

    # Table A: aggregations over oracle queries
    oracle_q, _ = plan_queries("oracle", claims)
    oracle_runs = search(retriever, oracle_q, dated=False)
    groups = grouped(oracle_runs, oracle_q)
    rows_a = []
    headline: dict[str, object] = {"benchmark": "query_planning", "eval": name, "retriever": args.retriever}
    result = f"query_planning_{args.retriever}"
    for fusion in TABLE_A:
        fused = [make_fusion(fusion)(rs, cid).top(K) for cid, rs in groups.items()]
        write_trec_run(result, f"A-oracle-{fusion}", fused)
        e = evaluate(qrels, fused, ["nDCG@10", "R@100"])
        rows_a.append([fusion, e.mean("nDCG@10"), e.mean("R@100")])
        headline[f"A_{fusion}_ndcg@10"] = round(e.mean("nDCG@10"), 4)
    fused, models = cross_fitted_learned(groups, qrels)
    write_trec_run(result, "A-oracle-learned-2-fold-cv", fused)
    e = evaluate(qrels, fused, ["nDCG@10", "R@100"])
    rows_a.append(
        [
            f"learned, 2-fold CV ({'; '.join(f'{m.combine} cw={m.claim_weight} d={m.decay}' for m in models)})",
            e.mean("nDCG@10"),
            e.mean("R@100"),
        ]
    )
    headline["A_learned_cv_ndcg@10"] = round(e.mean("nDCG@10"), 4)

    # Table B: planners x temporal filter, fused with the two QuanTemp++ aggregations
    rows_b = []
    plan_stats = []
    for planner in planners:
        t = time.perf_counter()
        queries, failed = plan_queries(planner, claims)
        plan_s = time.perf_counter() - t
        plan_stats.append(
            f"{planner}: {len(queries) / max(len(claims), 1):.1f} queries/claim, planned in {plan_s:.0f} s"
            + (f", {failed} claims fell back to the claim" if failed else "")
        )
        owner = {q.query_id: q.claim_id for q in queries}
        for dated in (False, True):
            runs = search(retriever, queries, dated)
            for fusion in TABLE_B_FUSIONS:
                fused = fuse_by_claim(runs, owner, make_fusion(fusion), K)
                write_trec_run(result, f"B-{planner}-{'dated' if dated else 'undated'}-{fusion}", fused)
                e = evaluate(qrels, fused, MEASURES_B)
                cov = mean_coverage(fused, subq, 10)
                rows_b.append([planner, "yes" if dated else "no", fusion, *[e.mean(m) for m in MEASURES_B], cov])
                tag = f"B_{planner}{'_dated' if dated else ''}_{fusion}"
                headline[f"{tag}_r@100"] = round(e.mean("R@100"), 4)
                headline[f"{tag}_ndcg@10"] = round(e.mean("nDCG@10"), 4)
            if planner == "decompose" and not dated and args.save_learned:
                model, _ = LearnedFusion.fit(grouped(runs, queries), qrels)
                model.save(FUSIONS_PATH)
    for fusion in TABLE_B_FUSIONS:
        base = headline.get(f"B_claim_{fusion}_r@100")
        for planner in ("decompose", "qgen"):
            got = headline.get(f"B_{planner}_{fusion}_r@100")
            if base and got:
                headline[f"{planner}_vs_claim_r@100_rel_{fusion}"] = round(float(got) / float(base) - 1, 4)  # type: ignore[arg-type]

    n_dated = sum(1 for p in corpus if p.published)
    text = "\n".join(
        [
            f"### Table A: aggregating oracle sub-query results ({name}, {len(groups)} claims, {args.retriever})",
            "",
            markdown_table(["aggregation", "nDCG@10", "R@100"], rows_a),
            "",
            f"### Table B: planners x published-before-claim filter x fusion ({args.retriever})",
            "",
            markdown_table(["planner", "date filter", "fusion", *MEASURES_B, "coverage@10"], rows_b),
            "",
            f"{len(claims)} claims, {len(corpus)} passages ({n_dated} dated from their source URL; undated ones are kept by "
            f"the filter). Planning: {'; '.join(plan_stats)}. Index built in {build_s:.0f} s on {machine()}.",
            f"Reproduce: `python benchmarks/query_planning.py --retriever {args.retriever}`",
        ]
    )
    publish(result, text, headline)


FUSIONS_PATH = DEFAULT_WEIGHTS

if __name__ == "__main__":
    main()
