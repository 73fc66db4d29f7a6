"""The PostgreSQL server backend against the embedded one, measured in the same run.

For BM25, exact dense kNN, HNSW dense kNN and hybrid: the embedded backend (bm25s / faiss) is
the reference, and the server backend is scored on the same queries for queries/s (the whole
batch, best of ``--repeat`` runs, interleaved so machine load hits both alike), nDCG@10 and
R@100, and agreement (queries whose top 10 is the same list). Dense speed is timed on query
embeddings computed once (``search_vectors``), so it compares the two engines, not MiniLM;
the hybrid rows include query encoding on both sides. Index build times are given too.

The server is a throwaway PostgreSQL 16 + pgvector on 127.0.0.1 (``local.py``, binaries from
the pgserver wheel), on the same cores as the client, unless ``--dsn`` names another one.

    python benchmarks/server_backend.py [--corpus C --eval-queries Q --eval-qrels R] [--dsn DSN]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import time
from collections.abc import Callable

from _common import machine, markdown_table, publish, quiet, write_trec_run

from factscout.datasets import load_dataset
from factscout.evaluate import evaluate
from factscout.formats.beir import read_corpus, read_qrels, read_queries
from factscout.records import Ranking
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Retriever
from factscout.retrieve.dense import DenseConfig, DenseRetriever
from factscout.retrieve.hybrid import HybridConfig, HybridRetriever
from factscout.retrieve.postgres import PgBm25Retriever, PgConfig, PgDenseRetriever
from factscout.retrieve.postgres.hybrid import PgHybridRetriever
from factscout.retrieve.postgres.local import LocalPostgres
from factscout.text.encoder import Encoder


def timed(fn: Callable[[], object]) -> tuple[float, object]:
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


def race(reference: Callable[[], list[Ranking]], server: Callable[[], list[Ranking]], repeat: int) -> tuple:
    """Best time of each over interleaved runs, and each one's rankings."""
    t_ref, t_srv = [], []
    for _ in range(repeat):
        t, ref_out = timed(reference)
        t_ref.append(t)
        t, srv_out = timed(server)
        t_srv.append(t)
    return min(t_ref), min(t_srv), ref_out, srv_out


def same_top10(a: list[Ranking], b: list[Ranking]) -> float:
    return sum(list(x.passage_ids[:10]) == list(y.passage_ids[:10]) for x, y in zip(a, b, strict=True)) / len(a)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", help="BEIR corpus JSONL (default: SciFact corpus)")
    parser.add_argument("--eval-queries", help="BEIR queries JSONL of another split (default: SciFact train)")
    parser.add_argument("--eval-qrels", help="BEIR qrels TSV of that split")
    parser.add_argument("--dsn", help="a PostgreSQL server with pgvector (default: a throwaway one on loopback)")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if bool(args.eval_queries) != bool(args.eval_qrels):
        parser.error("--eval-queries and --eval-qrels go together")
    quiet()

    train = load_dataset("scifact", "train")
    store = PassageStore(read_corpus(args.corpus) if args.corpus else train.corpus)
    queries = list(read_queries(args.eval_queries)) if args.eval_queries else train.queries()
    qrels = read_qrels(args.eval_qrels) if args.eval_qrels else train.qrels
    k, repeat = args.k, args.repeat

    def quality(rankings: list[Ranking], label: str) -> list[str]:
        write_trec_run("server_backend", label, rankings)
        means = evaluate(qrels, rankings, ["nDCG@10", "R@100"]).means()
        return [f"{means['nDCG@10']:.4f}", f"{means['R@100']:.4f}"]

    rows: list[list[object]] = []
    builds: list[list[object]] = []
    headline: dict[str, object] = {"benchmark": "server_backend", "queries": len(queries), "passages": len(store)}
    with contextlib.ExitStack() as stack:
        dsn = args.dsn or stack.enter_context(LocalPostgres()).dsn
        pg = PgConfig(dsn, "benchmark")

        t_emb, bm25 = timed(lambda: Bm25Retriever.build(store))
        t_srv, pg_bm25 = timed(lambda: PgBm25Retriever.build(store, pg=pg))
        builds.append(["BM25", f"{t_emb:.1f}", f"{t_srv:.1f}"])
        t_ref, t_pg, ref, srv = race(lambda: bm25.search(queries, k), lambda: pg_bm25.search(queries, k), repeat)
        rows.append(
            [
                "BM25",
                *engine_row(len(queries), t_ref, t_pg),
                *quality(ref, "bm25-embedded"),
                *quality(srv, "bm25-server"),
                same_top10(ref, srv),
            ]
        )
        headline["bm25_qps_ratio"] = round(t_ref / t_pg, 3)
        headline["bm25_same_top10"] = round(same_top10(ref, srv), 4)

        encoder = Encoder()
        q_vecs = encoder.encode([q.text for q in queries])
        for label, config in (("dense exact", DenseConfig()), ("dense HNSW", DenseConfig(exact_below=0))):
            t_emb, dense = timed(lambda config=config: DenseRetriever.build(store, config, encoder=encoder))
            t_srv, pg_dense = timed(lambda config=config: PgDenseRetriever.build(store, config, pg, encoder=encoder))
            builds.append([f"{label} (embeddings cached)", f"{t_emb:.1f}", f"{t_srv:.1f}"])
            t_ref, t_pg, ref, srv = race(
                lambda dense=dense: dense.search_vectors(queries, q_vecs, k),
                lambda pg_dense=pg_dense: pg_dense.search_vectors(queries, q_vecs, k),
                repeat,
            )
            rows.append(
                [
                    label,
                    *engine_row(len(queries), t_ref, t_pg),
                    *quality(ref, f"{label}-embedded"),
                    *quality(srv, f"{label}-server"),
                    same_top10(ref, srv),
                ]
            )
            key = label.replace(" ", "_").lower()
            headline[f"{key}_qps_ratio"] = round(t_ref / t_pg, 3)
            headline[f"{key}_same_top10"] = round(same_top10(ref, srv), 4)

        hybrid = HybridRetriever(bm25, DenseRetriever.build(store, encoder=encoder), HybridConfig())
        t_srv, pg_hybrid = timed(lambda: PgHybridRetriever.build(store, pg=pg))
        builds.append(["hybrid (embeddings cached)", "BM25 + dense", f"{t_srv:.1f}"])
        pg_hybrid.dense.encoder = encoder  # one loaded MiniLM for both
        t_ref, t_pg, ref, srv = race(lambda: hybrid.search(queries, k), lambda: pg_hybrid.search(queries, k), 1)
        emb_quality, srv_quality = quality(ref, "hybrid-embedded"), quality(srv, "hybrid-server")
        rows.append(["hybrid (with query encoding)", *engine_row(len(queries), t_ref, t_pg), *emb_quality])
        rows[-1] += [*srv_quality, same_top10(ref, srv)]
        headline["hybrid_ndcg10_server"] = float(srv_quality[0])
        headline["hybrid_ndcg10_embedded"] = float(emb_quality[0])

    header = ["retrieval", "embedded q/s", "server q/s", "server / embedded", "nDCG@10 emb.", "R@100 emb."]
    header += ["nDCG@10 server", "R@100 server", "same top 10"]
    text = "\n".join(
        [
            f"### PostgreSQL backend vs embedded: {len(queries)} queries, k={k}, {len(store):,} passages",
            "",
            markdown_table(header, rows),
            "",
            "Index build (s), embedded vs PostgreSQL:",
            "",
            markdown_table(["index", "embedded", "PostgreSQL"], builds),
            "",
            f"Server: {'throwaway PostgreSQL 16.2 + pgvector 0.6.2 on 127.0.0.1' if not args.dsn else 'given by --dsn'},"
            f" same cores as the client. Load average at the end: {os.getloadavg()[0]:.1f}. Machine: {machine()}."
            " Reproduce: `python benchmarks/server_backend.py`",
        ]
    )
    publish("server_backend", text, headline)


def engine_row(n: int, t_ref: float, t_pg: float) -> list[str]:
    return [f"{n / t_ref:,.0f}", f"{n / t_pg:,.0f}", f"{t_ref / t_pg:.3f}"]


if __name__ == "__main__":
    main()
