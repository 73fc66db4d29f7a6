"""Retrieval speed, each figure against a reference measured in the same run.

* BM25 queries/s: factscout's ``Bm25Retriever.search`` (tokenising, masking, building typed
  rankings) vs the raw bm25s calls on the same index (target: overhead <= 10%), and vs
  rank_bm25 and tantivy, the alternatives considered for the engine.
* Dense encoding passages/s: factscout's ``Encoder`` vs raw sentence-transformers on the same
  passages (target: >= 0.9x).
* Time to BM25-index the 177k MultiFC snippets.

    python benchmarks/retrieval_speed.py [--eval-queries queries.jsonl] [--corpus corpus.jsonl] [--snippets S]
"""

from __future__ import annotations

import argparse
import gc
import time
from collections.abc import Callable

from _common import machine, markdown_table, publish, quiet

from factscout.datasets import data_root, load_dataset
from factscout.formats.beir import read_corpus, read_queries
from factscout.formats.jsonl import read_jsonl
from factscout.records import Passage
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Retriever
from factscout.text.encoder import Encoder


def best_of(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bm25_rows(store: PassageStore, texts: list[str], k: int, repeat: int) -> tuple[list[list[object]], float]:
    import bm25s

    ours = Bm25Retriever.build(store)
    from factscout.records import Query

    queries = [Query(f"q{i}", f"q{i}", t) for i, t in enumerate(texts)]
    cfg = ours.config

    def raw() -> object:
        tokens = bm25s.tokenize(
            texts, stopwords=cfg.stopwords, stemmer=ours._stem, return_ids=False, show_progress=False
        )
        return ours.engine.retrieve(tokens, k=k, show_progress=False)

    def factscout() -> object:
        return ours.search(queries, k)

    raw(), factscout()  # warm up
    t_raw, t_ours = [], []
    for _ in range(repeat):  # interleave so drift in machine load hits both alike
        t_raw.append(best_of(raw, 1))
        t_ours.append(best_of(factscout, 1))
    raw_qps, ours_qps = len(texts) / min(t_raw), len(texts) / min(t_ours)
    rows: list[list[object]] = [
        ["bm25s raw (reference)", f"{raw_qps:,.0f}", "1.00"],
        ["factscout Bm25Retriever.search", f"{ours_qps:,.0f}", f"{ours_qps / raw_qps:.2f}"],
    ]
    sub = texts[: min(len(texts), 100)]
    corpus_tokens = bm25s.tokenize(
        [p.contents for p in store.passages], stopwords="en", stemmer=ours._stem, return_ids=False, show_progress=False
    )
    from rank_bm25 import BM25Okapi

    okapi = BM25Okapi(corpus_tokens)
    q_tokens = bm25s.tokenize(sub, stopwords="en", stemmer=ours._stem, return_ids=False, show_progress=False)
    t = best_of(lambda: [okapi.get_top_n(q, store.ids, n=k) for q in q_tokens], 1)
    rows.append(["rank_bm25 BM25Okapi", f"{len(sub) / t:,.0f}", f"{len(sub) / t / raw_qps:.2f}"])
    try:
        import tantivy
    except ImportError:
        rows.append(["tantivy", "not installed", ""])
    else:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="en_stem")
        builder.add_integer_field("pos", stored=True, indexed=False)
        schema = builder.build()
        index = tantivy.Index(schema)
        writer = index.writer()
        for i, p in enumerate(store.passages):
            writer.add_document(tantivy.Document(body=p.contents, pos=i))
        writer.commit()
        index.reload()
        searcher = index.searcher()
        import re

        clean = [re.sub(r"[^\w\s]", " ", s) for s in sub]

        def tv() -> object:
            return [searcher.search(index.parse_query(q, ["body"]), k).hits for q in clean]

        tv()
        t = best_of(tv, 2)
        rows.append(["tantivy (en_stem, fixed k1/b)", f"{len(sub) / t:,.0f}", f"{len(sub) / t / raw_qps:.2f}"])
    return rows, ours_qps / raw_qps


def encode_rows(texts: list[str], repeat: int) -> tuple[list[list[object]], float]:
    ours = Encoder()
    raw_model = ours.model  # the same loaded SentenceTransformer, called directly

    def raw() -> object:
        return raw_model.encode(texts, batch_size=ours.batch_size, normalize_embeddings=True, convert_to_numpy=True)

    def factscout() -> object:
        return ours.encode(texts)

    raw(), factscout()
    t_raw, t_ours = [], []
    for _ in range(repeat):
        t_raw.append(best_of(raw, 1))
        t_ours.append(best_of(factscout, 1))
    r, o = len(texts) / min(t_raw), len(texts) / min(t_ours)
    rows: list[list[object]] = [
        ["sentence-transformers encode (reference)", f"{r:.1f}", "1.00"],
        ["factscout Encoder.encode", f"{o:.1f}", f"{o / r:.2f}"],
    ]
    return rows, o / r


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", help="BEIR corpus JSONL (default: SciFact corpus)")
    parser.add_argument("--eval-queries", help="BEIR queries JSONL (default: SciFact train claims)")
    parser.add_argument("--snippets", help="MultiFC snippets.jsonl(.gz) to time indexing on")
    parser.add_argument("--k", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-encode", type=int, default=256, help="passages for the encoding comparison")
    args = parser.parse_args()
    quiet()

    scifact = load_dataset("scifact", "train")
    store = PassageStore(read_corpus(args.corpus) if args.corpus else scifact.corpus)
    texts = [q.text for q in (read_queries(args.eval_queries) if args.eval_queries else scifact.queries())]
    bm25, overhead_ratio = bm25_rows(store, texts, args.k, args.repeat)
    enc, enc_ratio = encode_rows([p.contents for p in store.passages[: args.n_encode]], max(2, args.repeat // 2))

    snippets_path = args.snippets or str(data_root() / "multifc" / "snippets.jsonl.gz")
    t = time.perf_counter()
    passages = [
        Passage(
            f"{row['claimID']}:{row.get('rank', n)}:{n}",
            row["claimID"],
            row.get("title") or "",
            row.get("snippet") or "",
        )
        for n, (_, row) in enumerate(read_jsonl(snippets_path))
    ]
    t_read = time.perf_counter() - t
    t = time.perf_counter()
    Bm25Retriever.build(PassageStore(passages))
    t_index = time.perf_counter() - t

    text = "\n".join(
        [
            f"### BM25 search speed: {len(texts)} queries, k={args.k}, {len(store)} passages",
            "",
            markdown_table(["engine", "queries/s", "ratio vs bm25s raw"], bm25),
            "",
            f"### Dense encoding speed: {min(args.n_encode, len(store))} passages, all-MiniLM-L6-v2, CPU",
            "",
            markdown_table(["encoder", "passages/s", "ratio"], enc),
            "",
            f"### Indexing {len(passages):,} MultiFC snippets with BM25: {t_index:.1f} s "
            f"({len(passages) / t_index:,.0f} passages/s; reading the file: {t_read:.1f} s)",
            "",
            f"Machine: {machine()}. Reproduce: `python benchmarks/retrieval_speed.py`",
        ]
    )
    publish(
        "retrieval_speed",
        text,
        {
            "benchmark": "retrieval_speed",
            "bm25_factscout_vs_raw": round(overhead_ratio, 3),
            "encode_factscout_vs_raw": round(enc_ratio, 3),
            "multifc_bm25_index_s": round(t_index, 1),
            "multifc_passages": len(passages),
        },
    )


if __name__ == "__main__":
    main()
