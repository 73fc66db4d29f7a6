"""Scale-out on Ray: throughput with 1 and 2 Ray workers on this machine, and a sizing table.

* BFS trajectory generation (Kazemi et al., depth 4): candidate queries scored per second by
  ``generate_trajectories``' Ray executor (``map_on_ray`` over BFS actors) with 1 and 2
  workers. The clock starts once every actor has loaded its environment, spaCy and WordNet (a
  one-off cost per worker, reported apart), so the figure is the steady rate.
* Index building: passages indexed per second by the sharded BM25 build as Ray tasks (global
  statistics map-reduce; ``--shards`` shards, the same for both runs) with 1 and 2 CPUs in the
  local Ray instance, against the same build in-process (the reference, no Ray).
* Dense corpus encoding: passages embedded per second by ``encode_on_ray`` (Ray Data actors,
  one CPU and one torch thread each, the fixed encoding batches) with 1 and 2 actors, against
  ``Encoder.encode_corpus`` in-process (the reference: torch on all cores), on the first
  ``--encode-passages`` passages of the corpus, with no embedding cache; every time includes
  loading the model (on Ray: starting the actors, each loading it). The embeddings are compared
  bit for bit.

Scaling efficiency = rate with 2 workers / (2 x rate with 1 worker). The sizing table divides
the work (``--size-passages`` passages to index; ``--size-claims`` claims through depth-4 BFS)
by the measured per-core rate (the 1-worker rate) times the 2-worker efficiency, over 24 hours,
for machines of ``--cores-per-machine`` cores. The load average is recorded with each run: the
machine is shared, and a busy machine lowers both the rates and the efficiency.

    python benchmarks/scale.py [--claims claims.jsonl --corpus corpus.jsonl --qrels qrels.tsv]
        [--bfs-claims 100] [--index-copies 8] [--shards 4] [--encode-passages 2000] [--cores-per-machine 16]
"""

from __future__ import annotations

import argparse
import functools
import math
import os
import time

import numpy as np
from _common import add_data_flags, claims_corpus_qrels, machine, markdown_table, publish, quiet

from factscout.records import Claim, Passage
from factscout.retrieve import build_retriever
from factscout.retrieve.bm25 import Bm25Config
from factscout.retrieve.sharded import build_shards_local, split_passages
from factscout.rewrite.bfs import BfsConfig
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.generate import ray_worker
from factscout.scale.encode import encode_on_ray
from factscout.scale.jobs import map_on_ray
from factscout.scale.shards import build_shards_ray
from factscout.text.encoder import CORPUS_BATCH, Encoder

DAY = 24 * 3600


def load() -> float:
    return os.getloadavg()[0]


def reference_rows(runs: dict, keys: tuple, worker: str, rate_format: str) -> list[list[str]]:
    """Table rows of timed runs against the in-process reference run (``runs["in-process"]``)."""
    return [
        [
            "in-process (reference, no Ray)" if w == "in-process" else f"{w} {worker}{'s' if w != 1 else ''}",
            f"{runs[w]['seconds']:.1f}",
            format(runs[w]["rate"], rate_format),
            f"{runs[w]['rate'] / runs['in-process']['rate']:.2f}",
            f"{runs[w]['load']:.1f}",
        ]
        for w in keys
    ]


def start_ray(cpus: int, object_store_mb: int):  # type: ignore[no-untyped-def]
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    if ray.is_initialized():
        ray.shutdown()
    ray.init(
        num_cpus=cpus,
        include_dashboard=False,
        object_store_memory=object_store_mb * 2**20,
        logging_level="ERROR",
        log_to_driver=False,
    )
    return ray


def bfs_run(ray, env: SearchEnvironment, claims: list[Claim], config: BfsConfig, workers: int) -> dict:  # type: ignore[no-untyped-def]
    marks: dict[str, float] = {"submitted": time.perf_counter()}

    def ready(actors: list) -> None:
        ray.get([a.pid.remote() for a in actors])  # returns once every actor has set up
        marks["ready"] = time.perf_counter()

    results = list(
        map_on_ray(functools.partial(ray_worker, env, config), claims, address="auto", workers=workers, on_start=ready)
    )
    seconds = time.perf_counter() - marks["ready"]
    candidates = sum(r.candidates for r in results)
    return {
        "results": results,
        "candidates": candidates,
        "seconds": seconds,
        "setup": marks["ready"] - marks["submitted"],
        "rate": candidates / seconds,
        "claims_rate": len(claims) / seconds,
        "load": load(),
    }


def index_run(parts: list[list[Passage]], config: Bm25Config, n: int, ray_cpus: int | None) -> dict:
    start = time.perf_counter()
    shards = build_shards_local(parts, config) if ray_cpus is None else build_shards_ray(parts, config, "auto")
    seconds = time.perf_counter() - start
    assert sum(len(s.store) for s in shards if s is not None) == n
    return {"seconds": seconds, "rate": n / seconds, "load": load()}


def encode_run(texts: list[str], ray_workers: int | None) -> dict:
    encoder = Encoder()
    start = time.perf_counter()
    if ray_workers is None:
        vectors = encoder.encode_corpus(texts)
    else:
        vectors = encode_on_ray(encoder, texts, address="auto", workers=ray_workers)
    seconds = time.perf_counter() - start
    return {"vectors": vectors, "seconds": seconds, "rate": len(texts) / seconds, "load": load()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_flags(parser)
    parser.add_argument("--reward", default="AP@50")
    parser.add_argument("--bfs-claims", type=int, default=100, help="claims with relevant passages for the BFS runs")
    parser.add_argument("--index-copies", type=int, default=8, help="corpus copies indexed (ids suffixed)")
    parser.add_argument("--shards", type=int, default=4)
    parser.add_argument("--encode-passages", type=int, default=2000, help="passages for dense encoding (0: skip)")
    parser.add_argument("--cores-per-machine", type=int, default=16, help="machine size for the sizing table")
    parser.add_argument("--size-passages", type=float, default=100e6)
    parser.add_argument("--size-claims", type=float, default=100e3)
    parser.add_argument("--object-store-mb", type=int, default=512)
    args = parser.parse_args()
    quiet()

    claims, corpus, qrels, source = claims_corpus_qrels(parser, args)
    claims = claims[: args.bfs_claims]
    env = SearchEnvironment(build_retriever(corpus, "bm25"), qrels, args.reward)
    config = BfsConfig()
    copies = [
        Passage(f"{p.passage_id}~{i}", p.doc_id, p.title, p.text, p.published, p.url)
        for i in range(args.index_copies)
        for p in corpus
    ]
    parts = split_passages(copies, args.shards)
    bm25 = Bm25Config()
    load_start = load()

    texts = [p.contents for p in corpus[: args.encode_passages]]
    bfs, index, encode = {}, {}, {}
    index["in-process"] = index_run(parts, bm25, len(copies), None)
    if texts:
        encode["in-process"] = encode_run(texts, None)
    for workers in (1, 2):
        ray = start_ray(workers, args.object_store_mb)
        bfs[workers] = bfs_run(ray, env, claims, config, workers)
        index[workers] = index_run(parts, bm25, len(copies), workers)
        if texts:
            encode[workers] = encode_run(texts, workers)
        ray.shutdown()
    same_embeddings = all(np.array_equal(e["vectors"], encode["in-process"]["vectors"]) for e in encode.values())
    same = bfs[1]["results"] == bfs[2]["results"]
    bfs_speedup = bfs[2]["rate"] / bfs[1]["rate"]
    index_speedup = index[2]["rate"] / index[1]["rate"]

    def eff(speedup: float) -> float:
        return speedup / 2

    bfs_rows = [
        [
            f"{w} Ray worker{'s' if w > 1 else ''}",
            f"{bfs[w]['candidates']:,}",
            f"{bfs[w]['seconds']:.1f}",
            f"{bfs[w]['rate']:,.0f}",
            f"{bfs[w]['claims_rate']:.2f}",
            f"{bfs[w]['rate'] / bfs[1]['rate']:.2f}",
            f"{bfs[w]['setup']:.1f}",
            f"{bfs[w]['load']:.1f}",
        ]
        for w in (1, 2)
    ]
    index_rows = reference_rows(index, ("in-process", 1, 2), "Ray worker", ",.0f")
    encode_rows = reference_rows(encode, tuple(encode), "Ray Data actor", ",.1f")
    encode_text = (
        [
            f"Dense corpus encoding: the first {len(texts):,} passages, all-MiniLM-L6-v2 on the CPU in batches of "
            f"{CORPUS_BATCH} passages, no embedding cache; Ray Data actors of one CPU each on a local Ray instance "
            "with 1 and 2 CPUs (times include loading the model, and on Ray starting the actors).",
            "",
            markdown_table(["encoding", "seconds", "passages/s", "ratio vs in-process", "load average"], encode_rows),
            "",
            f"Same embeddings on Ray as in-process, bit for bit: {'yes' if same_embeddings else 'NO'}.",
            "",
        ]
        if encode
        else []
    )
    # sizing: per-core rate from the 1-worker run, scaled by the measured 2-worker efficiency
    per_claim = bfs[1]["candidates"] / len(claims)
    sizing = []
    for what, work, rate, speedup in (
        (f"index {args.size_passages:,.0f} passages", args.size_passages, index[1]["rate"], index_speedup),
        (
            f"depth-4 BFS over {args.size_claims:,.0f} claims (~{args.size_claims * per_claim:,.0f} candidates)",
            args.size_claims,
            bfs[1]["claims_rate"],
            bfs_speedup,
        ),
    ):
        core_hours = work / rate / 3600
        cores = work / (rate * min(eff(speedup), 1.0) * DAY)
        sizing.append(
            [
                what,
                f"{rate:,.1f}/s per core",
                f"{core_hours:,.0f}",
                f"{min(eff(speedup), 1.0):.2f}",
                f"{math.ceil(cores):,}",
                f"{math.ceil(cores / args.cores_per_machine):,}",
            ]
        )
    n_claims = len(claims)
    text = "\n".join(
        [
            f"### Scale-out on Ray: 1 vs 2 workers on this machine (load average {load_start:.1f} at the start)",
            "",
            f"BFS trajectories: {n_claims} claims ({source}) with relevant passages, BM25 over {len(corpus):,} passages, "
            f"reward {env.measure}, depth {config.max_depth}; clock started once the actors had loaded "
            "(setup column: spaCy, WordNet and the environment per actor, in parallel).",
            "",
            markdown_table(
                [
                    "BFS run",
                    "candidates",
                    "seconds",
                    "candidates/s",
                    "claims/s",
                    "speed-up",
                    "actor setup s",
                    "load average",
                ],
                bfs_rows,
            ),
            "",
            f"Index building: {len(copies):,} passages ({args.index_copies} copies of the corpus, ids suffixed), "
            f"{args.shards} BM25 shards with global statistics, Ray tasks on a local Ray instance with 1 and 2 CPUs.",
            "",
            markdown_table(["index build", "seconds", "passages/s", "ratio vs in-process", "load average"], index_rows),
            "",
            *encode_text,
            f"Scaling efficiency with 2 workers: BFS {eff(bfs_speedup):.2f} (speed-up {bfs_speedup:.2f}x; target "
            f">= 1.7x), index building {eff(index_speedup):.2f} (speed-up {index_speedup:.2f}x). Same BFS results "
            f"with 1 and 2 workers: {'yes' if same else 'NO'}.",
            "",
            f"Sizing for 24 hours from the per-core rates above (machines of {args.cores_per_machine} cores, "
            "scaling efficiency as measured with 2 workers, capped at 1; passages like SciFact abstracts):",
            "",
            markdown_table(
                ["job", "measured rate", "core-hours", "efficiency", "cores for 24 h", "machines for 24 h"], sizing
            ),
            "",
            f"Machine: {machine()}. Reproduce: `python benchmarks/scale.py`",
        ]
    )
    publish(
        "scale",
        text,
        {
            "benchmark": "scale",
            "bfs_candidates_per_s_1": round(bfs[1]["rate"]),
            "bfs_candidates_per_s_2": round(bfs[2]["rate"]),
            "bfs_speedup_2_vs_1": round(bfs_speedup, 3),
            "index_passages_per_s_1": round(index[1]["rate"]),
            "index_passages_per_s_2": round(index[2]["rate"]),
            "index_speedup_2_vs_1": round(index_speedup, 3),
            "same_bfs_results": same,
            **(
                {
                    "encode_passages_per_s_in_process": round(encode["in-process"]["rate"], 1),
                    "encode_passages_per_s_1": round(encode[1]["rate"], 1),
                    "encode_passages_per_s_2": round(encode[2]["rate"], 1),
                    "same_embeddings_on_ray": same_embeddings,
                }
                if encode
                else {}
            ),
            "load_average_start": round(load_start, 2),
        },
    )


if __name__ == "__main__":
    main()
