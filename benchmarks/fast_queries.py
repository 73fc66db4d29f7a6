"""MiniLM dynamically quantised to int8 on ONNX Runtime against fp32: queries only (``--fast``)
and corpus plus queries (an index built with ``--encoder minilm-int8``), each searched dense and
hybrid over the same passages, nDCG@10 with a paired 95% bootstrap CI of the difference from fp32
and a permutation p; and the CPU per text of each encoder on claims and on passages, in one run.

    python benchmarks/fast_queries.py [--index .factscout/scifact-index] [--speed-sample 400]
        [--claims claims.jsonl --corpus corpus.jsonl --qrels qrels.tsv]

``--index`` is a hybrid index built with the plain ``minilm`` encoder over the same corpus (the
demo's by default, built when missing); with ``--claims/--corpus/--qrels`` (another split in
BEIR form) a hybrid index of that corpus is built in a temporary folder. The int8 passage vectors
go through the embedding cache (the first run encodes the corpus: ~3 min for SciFact on 2 cores).
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import add_data_flags, claims_corpus_qrels, markdown_table, publish, quiet

from factscout.evaluate.classification import mean_interval

ROOT = Path(__file__).resolve().parents[1]


def cpu_per_text(encoder, texts) -> float:  # type: ignore[no-untyped-def]
    encoder.encode(texts[:8])  # load the model outside the timing
    start = time.process_time()
    encoder.encode(texts)
    return (time.process_time() - start) / len(texts)


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--speed-sample", type=int, default=400, help="passages timed per encoder")
    add_data_flags(parser)
    args = parser.parse_args()
    from dataclasses import replace

    from factscout.evaluate import evaluate
    from factscout.evaluate.significance import compare
    from factscout.records import Query
    from factscout.retrieve import build_index, load_index
    from factscout.retrieve.dense import DenseRetriever
    from factscout.retrieve.index import read_manifest
    from factscout.text.onnx_encoder import Int8Encoder

    claims, corpus, qrels, source = claims_corpus_qrels(parser, args)
    work = None
    index = args.index
    if args.claims or not index.exists():
        work = Path(tempfile.mkdtemp(prefix="fast-queries-"))
        index = work / "idx" if args.claims else index
        build_index(corpus, index, "hybrid", show_progress=True)
    try:
        _, manifest = read_manifest(index)
        if manifest.get("retriever") != "hybrid" or manifest.get("n_passages") != len(corpus):
            raise SystemExit(f"{index} is not a hybrid index of these {len(corpus)} passages")
        hybrid = load_index(index)
        if hybrid.dense.config.encoder != "minilm":  # type: ignore[attr-defined]
            raise SystemExit(f"{index} was not built with the plain minilm encoder")
        queries = [Query(c.claim_id, c.claim_id, c.text) for c in claims]
        texts = [q.text for q in queries]
        fp32, int8 = hybrid.dense.encoder, Int8Encoder()  # type: ignore[attr-defined]
        store = hybrid.store
        passages = [p.contents for p in store.passages]
        int8_dense = DenseRetriever(
            store,
            vectors := int8.encode_cached(passages, show_progress=True),
            DenseRetriever._make_index(vectors, hybrid.dense.config),  # type: ignore[attr-defined]
            replace(hybrid.dense.config, encoder="minilm-int8"),  # type: ignore[attr-defined]
            int8,
        )
        q32, q8 = fp32.encode(texts), int8.encode(texts)
        sparse = hybrid.sparse.search(queries, 100)  # type: ignore[attr-defined]
        dense = {
            "fp32": hybrid.dense.search_vectors(queries, q32, 100),  # type: ignore[attr-defined]
            "int8 queries (--fast)": hybrid.dense.search_vectors(queries, q8, 100),  # type: ignore[attr-defined]
            "int8 corpus + queries (minilm-int8)": int8_dense.search_vectors(queries, q8, 100),
        }
        sample = passages[: args.speed_sample]
        cpu = {
            "claim": (cpu_per_text(fp32, texts), cpu_per_text(int8, texts)),
            "passage": (cpu_per_text(fp32, sample), cpu_per_text(int8, sample)),
        }
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    rows, headline = [], {"claims": len(queries), "source": source}
    for kind in ("dense", "hybrid"):
        runs = {
            name: run if kind == "dense" else [hybrid.fuse(s, d) for s, d in zip(sparse, run, strict=True)]  # type: ignore[attr-defined]
            for name, run in dense.items()
        }
        scored = {name: evaluate(qrels, run, ["nDCG@10"]) for name, run in runs.items()}
        ref = scored["fp32"]
        rows.append([kind, "fp32", f"{ref.mean('nDCG@10'):.4f}", "", "", ""])
        headline[f"{kind}_ndcg10_fp32"] = round(ref.mean("nDCG@10"), 4)
        for name, result in scored.items():
            if name == "fp32":
                continue
            diff = np.array(result.column("nDCG@10")) - np.array(ref.column("nDCG@10"))
            lo, hi = mean_interval(diff)
            p = compare(ref, result, "nDCG@10").randomization_p
            rows.append(
                [
                    kind,
                    name,
                    f"{result.mean('nDCG@10'):.4f}",
                    f"{diff.mean():+.4f}",
                    f"[{lo:+.4f}, {hi:+.4f}]",
                    f"{p:.3f}",
                ]
            )
            key = "int8_corpus" if "corpus" in name else "int8_queries"
            headline[f"{kind}_ndcg10_{key}"] = round(result.mean("nDCG@10"), 4)
            headline[f"{kind}_{key}_delta_ci95"] = [round(lo, 4), round(hi, 4)]
    for what, (a, b) in cpu.items():
        headline[f"{what}_encoding_speedup"] = round(a / b, 2)
    text = "\n".join(
        [
            f"### MiniLM int8 (dynamic, ONNX Runtime) vs fp32 ({source}, {len(queries)} claims,"
            f" {len(corpus):,} passages)",
            "",
            markdown_table(
                ["search", "encoder", "nDCG@10", "Δ vs fp32", "95% CI of Δ (bootstrap)", "permutation p"], rows
            ),
            "",
            markdown_table(
                ["texts", "fp32 CPU ms / text", "int8 CPU ms / text", "speed-up"],
                [[f"{what}s", f"{a * 1000:.1f}", f"{b * 1000:.1f}", f"{a / b:.2f}x"] for what, (a, b) in cpu.items()],
            ),
            "",
            f"Claims encoded in one batched call each; passages: the first {len(sample)} of the corpus.",
        ]
    )
    publish("fast_queries", text, headline)


if __name__ == "__main__":
    main()
