"""Claim matching (CheckThat! 2022 task 2A, English): BM25, dense, fused and re-ranked, plus the
shown-match threshold and the added latency of a fact-check lookup.

Default split: dev-test (202 tweets; train fits the claim-match model, dev chooses it). The pool
is the 14,231 Snopes verified claims, as in the lab. Methods, all scored with MAP@1, MAP@5 and
R@5 (trec_eval map_cut semantics through factscout.evaluate):

* BM25 (reference): ``factscout index`` + ``search`` defaults over title + claim + subtitle, the raw
  tweet as the query;
* BM25 on the cleaned tweet (:func:`factscout.factchecks.clean_tweet`);
* dense: MiniLM cosine, cleaned tweet;
* fused: CombSUM of min-max BM25 and cosine (the memory's fallback without a model);
* re-ranked: the shipped claim-match model (learned fusion) on the same candidates;
* the same model with every source in the memory (30k fact-checks: other sources' records can
  outrank the Snopes answer).

Then the precision and coverage of the top-1 matches shown at the shipped threshold, and the
p50/p95 latency of ``FactCheckMemory.matches`` for one claim with every source loaded (2 torch
threads), the cost ``check`` pays per claim for a "Checked before" section.

    python benchmarks/claim_matching.py [--queries Q.tsv|Q.jsonl --qrels QRELS.tsv] [--latency-claims N]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time
from pathlib import Path

from _common import machine, markdown_table, publish, quiet, write_trec_run

from factscout.datasets.base import data_root
from factscout.datasets.checkthat import load
from factscout.evaluate import evaluate
from factscout.factchecks import FactCheckMemory, MatchModel, available_sources, load_source
from factscout.factchecks.match import score_candidates
from factscout.formats.trec import read_qrels
from factscout.records import Claim, Query, Ranking
from factscout.retrieve.base import PassageStore
from factscout.retrieve.bm25 import Bm25Retriever

MEASURES = ["AP@1", "AP@5", "R@5"]
LABELS = ("bm25-raw", "bm25-clean", "dense-minilm", "fused-combsum", "reranked", "reranked-all-sources")
NAMES = {"AP@1": "MAP@1", "AP@5": "MAP@5", "R@5": "R@5"}


def read_split(queries: str, qrels: str) -> tuple[list[Claim], dict]:
    """Tweets (TSV ``id<TAB>text`` as the lab ships them, or BEIR JSONL) and TREC qrels."""
    from factscout.formats.beir import read_queries

    if queries.endswith(".jsonl"):
        claims = [Claim(q.query_id, q.text) for q in read_queries(queries)]
    else:
        claims = []
        for line in Path(queries).read_text(encoding="utf-8").splitlines():
            qid, _, text = line.partition("\t")
            if qid.strip() and text.strip() and qid.strip().lower() not in {"iclaim_id", "tweet_id", "id", "qid"}:
                claims.append(Claim(qid.strip(), text.strip()))
    return claims, read_qrels(qrels)


def rank_by(
    memory: FactCheckMemory, claims: list[Claim], cands: list, column_or_model: int | MatchModel
) -> list[Ranking]:
    out = []
    for claim, (rows, X) in zip(claims, cands, strict=True):
        if isinstance(column_or_model, int):
            scores = X[:, column_or_model] if len(X) else []
            keep = [i for i, s in enumerate(scores) if column_or_model != 1 or s > 0]
        else:
            scores = score_candidates(column_or_model, X)
            keep = list(range(len(rows)))
        out.append(
            Ranking.from_scores(claim.claim_id, {memory.records[rows[i]].fact_check_id: float(scores[i]) for i in keep})
        )
    return out


def shown(rankings: list[Ranking], qrels: dict, threshold: float) -> tuple[float, float]:
    top = [(r.hits[0].score, qrels.get(r.query_id, {}).get(r.hits[0].passage_id, 0) > 0) for r in rankings if r.hits]
    picked = [rel for s, rel in top if s >= threshold]
    return (sum(picked) / len(picked) if picked else 1.0), len(picked) / max(1, len(rankings))


def check_with_memory(memory: FactCheckMemory, claims: list[Claim], qrels: dict, index: str, n: int) -> dict:
    """What ``check --factchecks`` does with ``memory``: its MAP@5 and shown precision with the
    checker's int8 MiniLM embedding the claims, and ``check``'s p50 with and without the memory
    on ``index`` (the same claims, alternating, after one warm-up each)."""
    import tempfile

    from factscout.check import Checker, CheckSettings
    from factscout.nn.encoding import CachedEncoder
    from factscout.text.onnx_encoder import int8_encoder

    with tempfile.TemporaryDirectory() as tmp:
        memory.save(tmp)
        int8 = FactCheckMemory.load(tmp, encoder=CachedEncoder(int8_encoder()))
        found = int8.search_many([c.text for c in claims], 10)
        rankings = [Ranking.from_scores(c.claim_id, {m.record.fact_check_id: m.score for m in ms})
                    for c, ms in zip(claims, found, strict=True)]  # fmt: skip
        quality = evaluate(qrels, rankings, ("AP@5",)).mean("AP@5")
        precision, coverage = shown(rankings, qrels, memory.threshold)
        text = (f"With check's int8 MiniLM embedding the claims (all sources): MAP@5 {quality:.3f}, shown precision "
                f"{precision:.3f}, coverage {coverage:.3f}.")  # fmt: skip
        headline: dict = {"check_int8_map@5": round(quality, 4), "check_int8_shown_precision": round(precision, 4)}
        if not Path(index).is_dir():
            return {"text": text + f" (`check` not timed: no index at {index})", "headline": headline}
        plain = Checker.from_index(index)
        with_memory = Checker.from_index(index, CheckSettings(factchecks=tmp), encoder=plain.encoder)
        texts = [c.text for c in claims][:n]
        times: dict[str, list[float]] = {"without": [], "with": []}
        for checker in (plain, with_memory):
            checker.check(texts[0])  # models and memory load once
        for text_ in texts:
            for name, checker in (("without", plain), ("with", with_memory)):
                t = time.perf_counter()
                checker.check(text_)
                times[name].append(time.perf_counter() - t)
    p50 = {name: statistics.median(ts) for name, ts in times.items()}
    grows = p50["with"] - p50["without"]
    text += (f" `check` on {index}, {len(texts)} claims: p50 {p50['without']:.3f} s without the memory, "
             f"{p50['with']:.3f} s with it (+{grows:.3f} s; target <= 0.1 s).")  # fmt: skip
    headline |= {"check_p50_s": round(p50["without"], 4), "check_p50_with_memory_s": round(p50["with"], 4),
                 "check_p50_growth_s": round(grows, 4)}  # fmt: skip
    return {"text": text, "headline": headline}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", help="tweets: the lab's TSV (id, text) or BEIR JSONL (default: dev-test)")
    parser.add_argument("--qrels", help="TREC qrels of those tweets")
    parser.add_argument("--latency-claims", type=int, default=100, help="claims timed one at a time")
    parser.add_argument(
        "--check-index",
        default=".factscout/scifact-index",
        help="index to time `check` on with and without the memory (skipped when missing)",
    )
    parser.add_argument("--check-claims", type=int, default=30, help="claims checked with and without the memory")
    args = parser.parse_args()
    if bool(args.queries) != bool(args.qrels):
        parser.error("--queries and --qrels go together")
    quiet()
    import torch

    torch.set_num_threads(2)
    root = data_root()
    if args.queries:
        claims, qrels = read_split(args.queries, args.qrels)
        split = Path(args.queries).name
    else:
        data = load("dev-test", root)
        claims, qrels, split = list(data.claims), dict(data.qrels), "CheckThat 2022 2A dev-test"
    corpus = load("dev", root).corpus
    shipped = MatchModel.load()
    fallback = dataclasses.replace(MatchModel(), depth=shipped.depth, threshold=shipped.threshold)

    t0 = time.perf_counter()
    bm25 = Bm25Retriever.build(PassageStore(corpus))
    reference = bm25.search([Query(c.claim_id, c.claim_id, c.text) for c in claims], 100)
    ct_memory = FactCheckMemory.build(load_source("checkthat2022", root), model=shipped)
    cands = ct_memory.candidates([c.text for c in claims])
    runs = {
        "BM25, raw tweet (reference: factscout index + search)": reference,
        "BM25, cleaned tweet": rank_by(ct_memory, claims, cands, 1),
        "dense MiniLM, cleaned tweet": rank_by(ct_memory, claims, cands, 2),
        "fused (CombSUM min-max, 0.3 BM25)": rank_by(ct_memory, claims, cands, fallback),
        "re-ranked (claim-match model)": rank_by(ct_memory, claims, cands, shipped),
    }
    sources = available_sources(root)
    all_memory = FactCheckMemory.build([r for s in sources for r in load_source(s, root)], model=shipped)
    runs[f"re-ranked, memory of all sources ({len(all_memory)})"] = all_memory_runs = [
        Ranking.from_scores(c.claim_id, {m.record.fact_check_id: m.score for m in ms})
        for c, ms in zip(claims, all_memory.search_many([c.text for c in claims], 10), strict=True)
    ]
    build_s = time.perf_counter() - t0
    results = {name: evaluate(qrels, rk, MEASURES) for name, rk in runs.items()}
    for label, rk in zip(LABELS, runs.values(), strict=True):
        write_trec_run("claim_matching", label, rk)
    rows = [[name, *(r.mean(m) for m in MEASURES)] for name, r in results.items()]

    p_ct, cov_ct = shown(runs["re-ranked (claim-match model)"], qrels, shipped.threshold)
    p_all, cov_all = shown(all_memory_runs, qrels, shipped.threshold)

    texts = [c.text for c in claims][: args.latency_claims]
    all_memory.matches(texts[0])  # warm: the encoder is loaded once per process
    times = []
    for text in texts:
        t = time.perf_counter()
        all_memory.matches(text)
        times.append(time.perf_counter() - t)
    p50 = statistics.median(times)
    p95 = sorted(times)[int(0.95 * (len(times) - 1))]
    in_check = check_with_memory(all_memory, claims, qrels, args.check_index, args.check_claims)
    ref, best = results[next(iter(results))], results["re-ranked (claim-match model)"]
    text = "\n".join(
        [
            f"### Claim matching on {split} ({len(claims)} tweets), pool: {len(ct_memory)} Snopes verified claims",
            "",
            markdown_table(["method", *(NAMES[m] for m in MEASURES)], rows),
            "",
            f"Shown matches (top-1 at or above the shipped threshold {shipped.threshold:.4f}): precision "
            f"{p_ct:.3f}, coverage {cov_ct:.3f} (CheckThat memory); precision {p_all:.3f}, coverage {cov_all:.3f} "
            f"(all sources).",
            "",
            f"Memory lookup per claim (`FactCheckMemory.matches`, {len(all_memory)} fact-checks from "
            f"{', '.join(sources)}, 2 torch threads, {len(times)} claims one at a time): p50 {p50 * 1000:.0f} ms, "
            f"p95 {p95 * 1000:.0f} ms. Setup {build_s:.0f} s on {machine()} (MiniLM vectors from the cache).",
            in_check["text"],
            "Reproduce: `python benchmarks/claim_matching.py`",
        ]
    )
    headline = {
        "benchmark": "claim_matching",
        "eval": split,
        "bm25_map@5": round(ref.mean("AP@5"), 4),
        "dense_map@5": round(results["dense MiniLM, cleaned tweet"].mean("AP@5"), 4),
        "fused_map@5": round(results["fused (CombSUM min-max, 0.3 BM25)"].mean("AP@5"), 4),
        "reranked_map@5": round(best.mean("AP@5"), 4),
        "reranked_map@1": round(best.mean("AP@1"), 4),
        "reranked_r@5": round(best.mean("R@5"), 4),
        "threshold": shipped.threshold,
        "shown_precision": round(p_ct, 4),
        "shown_coverage": round(cov_ct, 4),
        "lookup_p50_s": round(p50, 4),
        "lookup_p95_s": round(p95, 4),
        **in_check["headline"],
    }
    publish("claim_matching", text, headline)


if __name__ == "__main__":
    main()
