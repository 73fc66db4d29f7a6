"""The search endpoints fact-checkers face, with the whole claim as the query.

Three BM25 endpoints over the SciFact corpus: the tuned ``bm25`` (stop words removed, Snowball
stems, k1=0.9, b=0.4), ``bm25-plain`` (Elasticsearch's defaults: the standard analyzer, k1=1.2,
b=0.75) and ``bm25-and`` (the same, but only passages containing every query term). Each claim
is sent as it is, the "original claim" baseline that query rewriting has to beat.

Evaluation sets: the SciFact train claims with a cited abstract, as ``retrieval_quality.py`` scores
them, and the 202 of them held out by the rewriting benchmark (``rewriting.py``; ids in
``src/factscout/verify/models/scifact_heldout_ids.txt``). Nothing is tuned here. Another split in
BEIR form: ``--claims C --corpus P --qrels Q`` (then one evaluation set).

Besides nDCG@10, R@100 and AP@50 (the rewriting reward), the table gives the share of claims for
which an endpoint returns nothing at all, the median number of hits (up to the depth of 100), and
single-process search throughput (one batch of all claims, and one batch of three-word queries
drawn from each claim, the length rewritten queries have).

    python benchmarks/endpoints.py [--claims C --corpus P --qrels Q]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from pathlib import Path

from _common import add_data_flags, claims_corpus_qrels, machine, markdown_table, publish, quiet, write_trec_run

import factscout
from factscout.evaluate import compare, evaluate
from factscout.records import Query
from factscout.retrieve import build_retriever
from factscout.retrieve.standard_analyzer import standard_tokens

ENDPOINTS = {
    "bm25": "bm25 (tuned: stop words, Snowball, k1=0.9, b=0.4)",
    "bm25-plain": "bm25-plain (Elasticsearch defaults, k1=1.2, b=0.75)",
    "bm25-and": "bm25-and (every term must appear; ranked as bm25-plain)",
}
MEASURES = ["nDCG@10", "R@100", "AP@50"]
DEPTH = 100
HELDOUT = Path(factscout.__file__).parent / "verify" / "models" / "scifact_heldout_ids.txt"  # rewriting.py's split


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_data_flags(parser)
    args = parser.parse_args()
    quiet()

    claims, corpus, qrels, source = claims_corpus_qrels(parser, args)
    queries = [Query(c.claim_id, c.claim_id, c.text, "claim") for c in claims]
    sets = {f"{source} ({len(claims)} claims)": {c.claim_id for c in claims}}
    if source == "SciFact train":
        held = set(HELDOUT.read_text().split()) & sets[next(iter(sets))]
        sets[f"SciFact held-out ({len(held)} claims, rewriting.py's split)"] = held

    # short queries, as rewriting makes them: three distinct words of each claim (seeded), for speed
    rng = random.Random(0)
    short = []
    for c in claims:
        words = list(dict.fromkeys(standard_tokens(c.text)))
        short.append(Query(c.claim_id, c.claim_id, " ".join(rng.sample(words, min(3, len(words)))), "words"))
    build_s, search_s, short_s, runs = {}, {}, {}, {}
    for name in ENDPOINTS:
        t0 = time.perf_counter()
        retriever = build_retriever(corpus, name)
        build_s[name] = time.perf_counter() - t0
        t0 = time.perf_counter()
        runs[name] = retriever.search(queries, DEPTH)
        search_s[name] = time.perf_counter() - t0
        t0 = time.perf_counter()
        retriever.search(short, DEPTH)
        short_s[name] = time.perf_counter() - t0
        write_trec_run("endpoints", name, runs[name])

    sections, headline = [], {"benchmark": "endpoints", "eval": source}
    for set_name, ids in sets.items():
        sub_qrels = {q: docs for q, docs in qrels.items() if q in ids}
        results = {
            name: evaluate(sub_qrels, [r for r in run if r.query_id in ids], MEASURES) for name, run in runs.items()
        }
        base = results["bm25"]
        rows = []
        for name, label in ENDPOINTS.items():
            run = [r for r in runs[name] if r.query_id in ids]
            empty = sum(len(r) == 0 for r in run) / len(run)
            hits = statistics.median(len(r) for r in run)
            res = results[name]
            p = "—" if name == "bm25" else f"{compare(base, res, 'nDCG@10').randomization_p:.3g}"
            rows.append([label, *[res.mean(m) for m in MEASURES], f"{100 * empty:.1f}%", f"{hits:g}", p])
            if set_name == next(iter(sets)):
                key = name.replace("-", "_")
                headline |= {
                    f"{key}_ndcg@10": round(res.mean("nDCG@10"), 4),
                    f"{key}_r@100": round(res.mean("R@100"), 4),
                }
                if name == "bm25-and":
                    headline["bm25_and_empty_share"] = round(empty, 4)
        sections += [
            f"#### {set_name}",
            "",
            markdown_table(
                [
                    "endpoint (whole claim as query)",
                    *MEASURES,
                    "claims with no hit",
                    "median hits",
                    "p vs bm25 (nDCG@10)",
                ],
                rows,
            ),
            "",
        ]
    speed = ", ".join(
        f"{name} {len(queries) / search_s[name]:,.0f} claims/s and {len(short) / short_s[name]:,.0f} three-word "
        f"queries/s (index {build_s[name]:.1f} s)"
        for name in ENDPOINTS
    )
    text = "\n".join(
        [
            f"### Search endpoints with the whole claim as query, {source} claims, {len(corpus)} passages",
            "",
            *sections,
            f"Search at depth {DEPTH}, one batch of {len(queries)} claims, one process on {machine()}: {speed}. "
            "p: paired randomisation test against the tuned bm25 on nDCG@10.",
            "Reproduce: `python benchmarks/endpoints.py`",
        ]
    )
    publish("endpoints", text, headline)


if __name__ == "__main__":
    main()
