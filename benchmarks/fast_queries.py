"""Queries embedded by the int8 ONNX MiniLM (``--fast``) against the index's fp32 MiniLM: the
same dense and hybrid indexes searched both ways, nDCG@10 with a paired 95% bootstrap CI of the
difference and a permutation p, and the CPU per query of each query encoder, in one run.

    python benchmarks/fast_queries.py [--index .factscout/scifact-index]
        [--claims claims.jsonl --corpus corpus.jsonl --qrels qrels.tsv]

``--index`` is a hybrid index built with the plain ``minilm`` encoder over the same corpus (the
demo's by default, built when missing); with ``--claims/--corpus/--qrels`` (another split in
BEIR form) a hybrid index of that corpus is built in a temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import add_data_flags, claims_corpus_qrels, markdown_table, publish, quiet

ROOT = Path(__file__).resolve().parents[1]


def bootstrap_ci(diff: np.ndarray, n: int = 10_000, seed: int = 0) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(n, len(diff)))].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    add_data_flags(parser)
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from factscout.evaluate import evaluate
    from factscout.evaluate.significance import compare
    from factscout.records import Query
    from factscout.retrieve import build_index, load_index
    from factscout.retrieve.index import read_manifest

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
        queries = [Query(c.claim_id, c.claim_id, c.text) for c in claims]
        texts = [q.text for q in queries]
        rows, headline = [], {"claims": len(queries), "source": source}
        runs = {}
        for qe in ("model", "int8"):
            hybrid = load_index(index, query_encoder=qe)
            encoder = hybrid.dense.query_encoder  # type: ignore[attr-defined]
            encoder.encode(texts[:8])  # load the model outside the timing
            start = time.process_time()
            vectors = encoder.encode(texts)
            runs[qe] = {"encode_cpu": (time.process_time() - start) / len(texts)}
            runs[qe]["dense"] = hybrid.dense.search_vectors(queries, vectors, 100)  # type: ignore[attr-defined]
            runs[qe]["hybrid"] = hybrid.search(queries, 100)
        for kind in ("dense", "hybrid"):
            a, b = evaluate(qrels, runs["model"][kind], ["nDCG@10"]), evaluate(qrels, runs["int8"][kind], ["nDCG@10"])
            diff = np.array(b.column("nDCG@10")) - np.array(a.column("nDCG@10"))
            lo, hi = bootstrap_ci(diff)
            p = compare(a, b, "nDCG@10").randomization_p
            rows.append(
                [
                    kind,
                    f"{a.mean('nDCG@10'):.4f}",
                    f"{b.mean('nDCG@10'):.4f}",
                    f"{diff.mean():+.4f}",
                    f"[{lo:+.4f}, {hi:+.4f}]",
                    f"{p:.3f}",
                ]
            )
            headline[f"{kind}_ndcg10_fp32"] = round(a.mean("nDCG@10"), 4)
            headline[f"{kind}_ndcg10_int8"] = round(b.mean("nDCG@10"), 4)
            headline[f"{kind}_delta_ci95"] = [round(lo, 4), round(hi, 4)]
        speed = runs["model"]["encode_cpu"] / runs["int8"]["encode_cpu"]
        headline["query_encoding_speedup"] = round(speed, 2)
    finally:
        if work is not None:
            shutil.rmtree(work, ignore_errors=True)
    text = "\n".join(
        [
            f"### Query encoder: fp32 MiniLM vs its int8 ONNX build ({source}, {len(queries)} claims, {len(corpus):,} passages)",
            "",
            markdown_table(
                [
                    "search",
                    "nDCG@10 fp32 queries",
                    "nDCG@10 int8 queries",
                    "Δ",
                    "95% CI of Δ (bootstrap)",
                    "permutation p",
                ],
                rows,
            ),
            "",
            f"Query encoding CPU per claim: fp32 {runs['model']['encode_cpu'] * 1000:.1f} ms, int8"
            f" {runs['int8']['encode_cpu'] * 1000:.1f} ms ({speed:.2f}x faster). The passage vectors are the index's"
            " fp32 ones in both rows.",
        ]
    )
    publish("fast_queries", text, headline)


if __name__ == "__main__":
    main()
