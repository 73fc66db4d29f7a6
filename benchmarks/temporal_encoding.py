"""How fast the MiniLM variant of the time-aware benchmark can encode MultiFC's snippets.

Encodes the first ``--n`` distinct snippet texts of MultiFC (train + dev, file order) with the
encoder ``factscout.temporal.embeddings`` uses (all-MiniLM-L6-v2, int8 ONNX when installed) into
a throw-away cache folder, and projects the time to encode every distinct snippet and claim.
The decision it informs: encode all of MultiFC for the MiniLM variant only when the projection
fits beside the BiLSTM runs.

    python benchmarks/temporal_encoding.py [--n 2000] [--threads 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time

import torch
from _common import machine, publish, quiet

from factscout.datasets import load_dataset
from factscout.temporal.embeddings import EmbeddingStore


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    quiet()
    torch.set_num_threads(args.threads)
    texts: list[str] = []
    seen: set[str] = set()
    for split in ("train", "dev"):
        ds = load_dataset("multifc", split)
        for t in [p.contents for p in ds.corpus] + [c.text for c in ds.claims]:
            if t and t not in seen:
                seen.add(t)
                texts.append(t)
    sample = texts[: args.n]
    with tempfile.TemporaryDirectory() as folder:
        store = EmbeddingStore(folder=folder)
        store.encoder.encode(["warm up"])
        start = time.perf_counter()
        store.fill(sample)
        seconds = time.perf_counter() - start
    rate = len(sample) / seconds
    projected = len(texts) / rate
    encoder = type(store.encoder).__name__
    text = (
        f"### MiniLM encoding rate for the time-aware benchmark\n\n"
        f"{len(sample)} MultiFC snippets encoded in {seconds:.1f} s ({rate:.1f} texts/s, {encoder}, "
        f"torch threads {args.threads}) on {machine()}, shared with other jobs. MultiFC has {len(texts)} distinct "
        f"snippet and claim texts: all of them would take about {projected / 60:.0f} min.\n\n"
        f"Reproduce: `python benchmarks/temporal_encoding.py --n {args.n} --threads {args.threads}`"
    )
    publish(
        "temporal_encoding",
        text,
        {
            "texts_per_second": round(rate, 1),
            "distinct_texts": len(texts),
            "projected_minutes": round(projected / 60, 1),
        },
    )


if __name__ == "__main__":
    main()
