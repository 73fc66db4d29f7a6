"""BFS trajectory generation speed for query rewriting (Kazemi et al., AACL 2023), each figure
against a reference measured in the same run.

* Candidate queries scored per second by ``SearchEnvironment.rewards`` (batched search, reward,
  cache bookkeeping; cold cache) vs the raw ``retriever.search`` on the same query strings in
  the same batches (the reference: what the black box itself costs). Target: >= 1,000/s on
  2 cores against in-process BM25 on SciFact (5,183 abstracts).
* Candidate generation (spaCy tagging + WordNet/lemminflect edits) per second.
* End-to-end BFS (``generate_trajectories``: generation + scoring + writing) with 1 and 2
  worker processes, in candidates scored per second; the two runs must write the same file.

    python benchmarks/bfs_speed.py [--claims claims.jsonl --corpus corpus.jsonl --qrels qrels.tsv]
        [--n-claims 200] [--bfs-claims 50] [--repeat 3]
"""

from __future__ import annotations

import argparse
import gc
import shlex
import sys
import tempfile
import time
from pathlib import Path

from _common import add_data_flags, claims_corpus_qrels, machine, markdown_table, publish, quiet

from factscout.records import Query
from factscout.retrieve import build_retriever
from factscout.rewrite.actions import clear_caches, load_nlp, parse, valid_edits, wordnet
from factscout.rewrite.bfs import BfsConfig
from factscout.rewrite.environment import SearchEnvironment
from factscout.rewrite.generate import generate_trajectories


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_flags(parser)
    parser.add_argument("--reward", default="AP@50")
    parser.add_argument("--n-claims", type=int, default=200, help="claims whose one-edit candidates are scored")
    parser.add_argument("--bfs-claims", type=int, default=50, help="claims for the end-to-end BFS runs")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--retriever", default="bm25", choices=("bm25", "bm25-plain", "bm25-and"))
    parser.add_argument("--keep-set", action="store_true", help="the end-to-end BFS also runs keep-set search")
    args = parser.parse_args()
    quiet()

    claims, corpus, qrels, source = claims_corpus_qrels(parser, args)
    retriever = build_retriever(corpus, args.retriever)
    load_nlp()
    wordnet()

    # --- candidate generation: every valid one-edit rewrite of each claim
    sample = claims[: args.n_claims]
    t = time.perf_counter()
    batches = [[e.next_query for e in valid_edits(parse(c.text))] for c in sample]
    t_gen = time.perf_counter() - t
    n_cand = sum(len(b) for b in batches)

    # --- scoring: environment (cold cache each repeat) vs raw retriever.search, same batches
    probe = SearchEnvironment(retriever, qrels, args.reward)
    depth = probe.depth

    def raw() -> None:
        for claim, batch in zip(sample, batches, strict=True):
            retriever.search([Query(f"{claim.claim_id}#{i}", claim.claim_id, q) for i, q in enumerate(batch)], depth)

    def ours() -> None:
        env = SearchEnvironment(retriever, qrels, args.reward)
        for claim, batch in zip(sample, batches, strict=True):
            env.rewards(claim, batch)

    raw(), ours()  # warm up
    t_raw, t_ours = [], []
    for _ in range(args.repeat):  # interleaved, so load drift hits both alike
        for fn, times in ((raw, t_raw), (ours, t_ours)):
            gc.collect()
            t = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t)
    raw_cps, ours_cps = n_cand / min(t_raw), n_cand / min(t_ours)

    # --- end to end: BFS over other claims with 1 and 2 workers
    bfs_claims = claims[args.n_claims : args.n_claims + args.bfs_claims] or claims[: args.bfs_claims]
    config = BfsConfig(keep_set=args.keep_set)
    bfs_rows: list[list[object]] = []
    outputs = []
    with tempfile.TemporaryDirectory() as tmp:
        for workers in (1, 2):
            clear_caches()  # each run starts cold: workers must not inherit the previous run's parses
            env = SearchEnvironment(retriever, qrels, args.reward)
            out = Path(tmp) / f"w{workers}.jsonl"
            summary = generate_trajectories(bfs_claims, env, out, config, workers=workers)
            outputs.append(out.read_bytes())
            bfs_rows.append(
                [
                    f"generate_trajectories, {workers} worker{'s' if workers > 1 else ''}",
                    f"{summary.candidates:,}",
                    f"{summary.seconds:.1f}",
                    f"{summary.candidates_per_second:,.0f}",
                    ", ".join(f"{k} {v}" for k, v in sorted(summary.statuses.items())),
                ]
            )
    same = outputs[0] == outputs[1]
    e2e = float(str(bfs_rows[-1][3]).replace(",", ""))

    text = "\n".join(
        [
            f"### Scoring rewrite candidates: {n_cand:,} one-edit candidates of {len(sample)} claims "
            f"({source}), {args.retriever} over {len(corpus):,} passages, reward {probe.measure}, one search call per claim",
            "",
            markdown_table(
                ["scorer", "candidates/s", "ratio vs raw search"],
                [
                    ["retriever.search, raw (reference)", f"{raw_cps:,.0f}", "1.00"],
                    ["SearchEnvironment.rewards (cold cache)", f"{ours_cps:,.0f}", f"{ours_cps / raw_cps:.2f}"],
                ],
            ),
            "",
            f"Candidate generation (spaCy tagging + all valid edits, cold caches): "
            f"{n_cand / t_gen:,.0f} candidates/s ({len(sample) / t_gen:,.1f} claims/s).",
            "",
            f"### End-to-end BFS: {len(bfs_claims)} claims, depth {config.max_depth}, min gain "
            f"{config.min_gain:.0%}, random prune {config.random_prune:.0%}, frontier {config.max_frontier}, "
            f"top {config.top_n}{', plus keep-set search' if args.keep_set else ''}",
            "",
            markdown_table(["run", "candidates scored", "seconds", "candidates/s", "claims"], bfs_rows),
            "",
            f"Same output file with 1 and 2 workers: {'yes' if same else 'NO'}. Target: >= 1,000 candidates/s.",
            "",
            f"Machine: {machine()}. Reproduce: `{shlex.join(['python', 'benchmarks/bfs_speed.py', *sys.argv[1:]])}`",
        ]
    )
    name = (
        "bfs_speed"
        if args.retriever == "bm25" and not args.keep_set
        else f"bfs_speed_{args.retriever.replace('-', '_')}"
    )
    publish(
        name,
        text,
        {
            "benchmark": "bfs_speed",
            "retriever": args.retriever,
            "keep_set": args.keep_set,
            "candidates_per_s": round(ours_cps),
            "raw_search_per_s": round(raw_cps),
            "env_vs_raw": round(ours_cps / raw_cps, 3),
            "bfs_2_workers_candidates_per_s": round(e2e),
            "same_output_1_vs_2_workers": same,
        },
    )


if __name__ == "__main__":
    main()
