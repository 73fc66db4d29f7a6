"""Retrieval quality: BM25, dense and hybrid on SciFact (BEIR view: qrels = cited abstracts).

Default evaluation set: the 809 SciFact train claims (the test claims are unlabelled here).
Hybrid fusion weights are tuned on train claims only; to report the hybrid honestly on the same
claims it is tuned on, the table also gives a 2-fold cross-validated figure (tune alpha on one
half, score the other). Another split in the same format can be scored with
``--eval-queries queries.jsonl --eval-qrels qrels.tsv`` (BEIR); tuning then uses all of train.

    python benchmarks/retrieval_quality.py [--eval-queries Q --eval-qrels R] [--corpus C]
"""

from __future__ import annotations

import argparse
import random
import time

from _common import machine, markdown_table, publish, quiet, write_trec_run

from factscout.datasets import load_dataset
from factscout.evaluate import compare, evaluate
from factscout.formats.beir import read_corpus, read_qrels, read_queries
from factscout.fuse import comb_sum, rrf
from factscout.records import Ranking
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
from factscout.retrieve.dense import DenseRetriever

MEASURES = ["nDCG@10", "R@100", "MRR@10"]
ALPHAS = [round(0.1 * i, 1) for i in range(11)]


def linear(sparse: list[Ranking], dense: list[Ranking], alpha: float, k: int = 100) -> list[Ranking]:
    return [
        comb_sum([s, d], weights=(alpha, 1 - alpha), query_id=s.query_id).top(k)
        for s, d in zip(sparse, dense, strict=True)
    ]


def tune_alpha(qrels, sparse, dense) -> float:  # type: ignore[no-untyped-def]
    scores = {a: evaluate(qrels, linear(sparse, dense, a), ["nDCG@10"]).mean("nDCG@10") for a in ALPHAS}
    return max(ALPHAS, key=lambda a: (scores[a], -abs(a - 0.5)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", help="BEIR corpus JSONL (default: SciFact corpus)")
    parser.add_argument("--eval-queries", help="BEIR queries JSONL of another split")
    parser.add_argument("--eval-qrels", help="BEIR qrels TSV of that split")
    parser.add_argument("--depth", type=int, default=100, help="hits per retriever before fusion")
    args = parser.parse_args()
    if bool(args.eval_queries) != bool(args.eval_qrels):
        parser.error("--eval-queries and --eval-qrels go together")
    quiet()

    train = load_dataset("scifact", "train")
    passages = list(read_corpus(args.corpus)) if args.corpus else list(train.corpus)
    store = PassageStore(passages)
    t0 = time.perf_counter()
    bm25 = Bm25Retriever.build(store)
    bm25_bs = Bm25Retriever.build(store, Bm25Config(k1=1.5, b=0.75))
    dense = DenseRetriever.build(store, show_progress=True)
    build_s = time.perf_counter() - t0

    train_q, train_qrels = train.queries(), train.qrels
    if args.eval_queries:
        eval_q, eval_qrels, eval_name = (
            list(read_queries(args.eval_queries)),
            read_qrels(args.eval_qrels),
            args.eval_queries,
        )
    else:
        eval_q, eval_qrels, eval_name = train_q, train_qrels, "SciFact train (809 claims)"

    depth = max(100, args.depth)
    runs = {
        "BM25 (k1=0.9, b=0.4; default)": bm25.search(eval_q, depth),
        "BM25 (k1=1.5, b=0.75)": bm25_bs.search(eval_q, depth),
        "dense MiniLM-L6 (exact)": dense.search(eval_q, depth),
    }
    sparse_eval, dense_eval = runs["BM25 (k1=0.9, b=0.4; default)"], runs["dense MiniLM-L6 (exact)"]
    sparse_train = sparse_eval if not args.eval_queries else bm25.search(train_q, depth)
    dense_train = dense_eval if not args.eval_queries else dense.search(train_q, depth)

    alpha = tune_alpha(train_qrels, sparse_train, dense_train)
    runs[f"hybrid linear (alpha={alpha}, tuned on train)"] = linear(sparse_eval, dense_eval, alpha)
    runs["hybrid RRF (k=60)"] = [rrf([s, d], query_id=s.query_id) for s, d in zip(sparse_eval, dense_eval, strict=True)]

    cv_note = ""
    if not args.eval_queries:  # 2-fold CV: never score a claim with an alpha tuned on it
        ids = sorted(eval_qrels)
        random.Random(0).shuffle(ids)
        folds = [set(ids[::2]), set(ids[1::2])]
        cv: list[Ranking] = []
        chosen = []
        for tune_ids, test_ids in ((folds[0], folds[1]), (folds[1], folds[0])):
            sub = lambda rs, keep: [r for r in rs if r.query_id in keep]  # noqa: E731
            a = tune_alpha({q: train_qrels[q] for q in tune_ids}, sub(sparse_eval, tune_ids), sub(dense_eval, tune_ids))
            chosen.append(a)
            cv += linear(sub(sparse_eval, test_ids), sub(dense_eval, test_ids), a)
        runs[f"hybrid linear, 2-fold CV (alpha={chosen[0]}/{chosen[1]})"] = cv
        cv_note = "The 2-fold CV row scores every claim with an alpha tuned on the other half."

    results = {name: evaluate(eval_qrels, run, MEASURES) for name, run in runs.items()}
    for name, run in runs.items():
        write_trec_run("retrieval_quality", name, run)
    base = results["BM25 (k1=0.9, b=0.4; default)"]
    rows = []
    for name, res in results.items():
        p = compare(base, res, "nDCG@10").randomization_p if res is not base else float("nan")
        rows.append([name, *[res.mean(m) for m in MEASURES], "—" if res is base else f"{p:.3g}"])
    text = "\n".join(
        [
            f"### Retrieval quality on {eval_name}, SciFact corpus ({len(store)} abstracts)",
            "",
            markdown_table(["retriever", *MEASURES, "p vs BM25 (nDCG@10, randomisation)"], rows),
            "",
            f"Index build: {build_s:.0f} s on {machine()} (two BM25 indexes, plus encoding the corpus unless its "
            f"embeddings are already in the cache; a first encoding takes about 7 minutes). {cv_note}",
            "Reproduce: `python benchmarks/retrieval_quality.py`",
        ]
    )
    hybrid_name = next(n for n in runs if n.startswith("hybrid linear (alpha"))
    headline = {
        "benchmark": "retrieval_quality",
        "eval": eval_name,
        "bm25_ndcg@10": round(base.mean("nDCG@10"), 4),
        "bm25_r@100": round(base.mean("R@100"), 4),
        "dense_ndcg@10": round(results["dense MiniLM-L6 (exact)"].mean("nDCG@10"), 4),
        "hybrid_ndcg@10": round(results[hybrid_name].mean("nDCG@10"), 4),
        "hybrid_r@100": round(results[hybrid_name].mean("R@100"), 4),
        "hybrid_alpha": alpha,
    }
    if cv_note:
        cv_name = next(n for n in runs if "CV" in n)
        headline["hybrid_cv_ndcg@10"] = round(results[cv_name].mean("nDCG@10"), 4)
    publish("retrieval_quality", text, headline)


if __name__ == "__main__":
    main()
