"""QuanTemp++ web collection on real search results, offline: what each filter removes, and replay.

MultiFC (Augenstein et al., EMNLP 2019) kept, for each claim, the Google results of its text:
title, snippet (led by the page's date when Google showed one) and URL. A loopback server
answers SerpAPI-shaped requests with exactly those results, so ``factscout.collect.collect``
runs as it would against the live API: planner ``claim`` (the claim text is what MultiFC
searched), no MMR (one query), and no crawling (MultiFC kept no pages, so documents are the
snippets). The date limit is the claim's date, which in MultiFC is the day its fact-check was
published.

Reported, in the same run:

* what happens to 100 results: removed as fact-check sites (leakage; the shipped list), removed
  as published on or after the claim date (the date post-filter; the server, like a provider
  without a date restriction, returns them all), below the relevance threshold (cosine(claim,
  snippet) < 0.45 with MiniLM), kept;
* the claim's own fact-check article among its results, and how many the list removes; results
  kept although their title says "fact check" (leakage the domain list misses);
* the share of results kept at other thresholds (from the recorded scores: no rerun);
* a live run (loopback server) vs a replay of its snapshot (server stopped): claims/s, their
  ratio, and whether corpus, qrels and manifest are byte-identical.

    python benchmarks/web_collection.py [--split dev | --claims claims.jsonl --snippets snippets.jsonl.gz]
        [--n-claims 200] [--threshold 0.45]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import tempfile
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from _common import machine, markdown_table, publish, quiet, write_predictions

from factscout.collect import CollectSettings, collect
from factscout.collect.relevance import default_embed
from factscout.datasets import load_dataset
from factscout.datasets.multifc import load_file
from factscout.records import Claim

_LEAD_DATE = re.compile(r"^\s*([A-Z][a-z]{2} \d{1,2}, \d{4})\s*\.\.\.\s*")
_FACT_CHECK_TITLE = re.compile(r"fact[- ]?check", re.IGNORECASE)
OUTPUTS = ("corpus.jsonl", "qrels.tsv", "records.jsonl", "snapshot/manifest.json")


class Serp(ThreadingHTTPServer):
    """SerpAPI's ``/search.json`` on 127.0.0.1, answering each claim text with its MultiFC results."""

    daemon_threads = True

    def __init__(self, answers: dict[str, list[dict[str, Any]]]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.answers = answers
        self.thread = threading.Thread(target=self.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()

    def stop(self) -> None:
        self.shutdown()
        self.thread.join()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Serp

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        params = {k: v[-1] for k, v in parse_qs(urlsplit(self.path).query).items()}
        results = self.server.answers.get(params.get("q", ""), [])[: int(params.get("num", 10))]
        body = json.dumps({"search_metadata": {"status": "Success"}, "organic_results": results}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def organic_results(claim: Claim, passages: dict[str, Any]) -> list[dict[str, Any]]:
    """The claim's MultiFC results as SerpAPI ``organic_results`` (a leading date moves to ``date``)."""
    rows = []
    for position, pid in enumerate(claim.meta.get("snippet_ids", []), 1):
        p = passages[pid]
        if not p.url:
            continue
        row = {"position": position, "title": p.title, "link": p.url, "snippet": p.text}
        if m := _LEAD_DATE.match(p.text):
            row |= {"date": m[1], "snippet": p.text[m.end() :]}
        rows.append(row)
    return rows


def _norm(url: str) -> str:
    parts = urlsplit(url.strip().lower())
    return parts.netloc.removeprefix("www.").removeprefix("mobile.") + parts.path.rstrip("/")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--split", default="dev", help="MultiFC split in the shared data (train | dev)")
    parser.add_argument("--claims", help="a MultiFC-layout claims JSONL instead of --split")
    parser.add_argument("--snippets", help="its snippets JSONL(.gz) (default: the shared MultiFC snippets)")
    parser.add_argument("--n-claims", type=int, default=200, help="first N claims with results (0: all)")
    parser.add_argument("--threshold", type=float, default=0.45)
    args = parser.parse_args()
    quiet()

    ds = load_file(args.claims, args.snippets) if args.claims else load_dataset("multifc", args.split)
    source = Path(args.claims).name if args.claims else f"MultiFC {args.split}"
    passages = {p.passage_id: p for p in ds.corpus}
    claims = [c for c in ds.claims if c.meta.get("snippet_ids")]
    if args.n_claims:
        claims = claims[: args.n_claims]
    answers = {c.text: organic_results(c, passages) for c in claims}
    n_results = sum(len(answers[c.text]) for c in claims)

    server = Serp(answers)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    settings = CollectSettings(
        provider="serpapi", planner="claim", mmr=False, crawl=False, threshold=args.threshold,
        base_url=base, min_interval=0.0,
    )  # fmt: skip
    os.environ.setdefault("SERPAPI_API_KEY", "benchmark")
    with tempfile.TemporaryDirectory() as tmp:
        out, again = Path(tmp) / "live", Path(tmp) / "replay"
        embed = default_embed()
        embed(["warm up the encoder"])
        start = time.perf_counter()
        report = collect(claims, out, settings, embed=embed)
        live_s = time.perf_counter() - start
        server.stop()
        start = time.perf_counter()
        collect(claims, again, settings, embed=embed, replay=out)
        replay_s = time.perf_counter() - start
        load = os.getloadavg()[0]
        identical = all((out / f).read_bytes() == (again / f).read_bytes() for f in OUTPUTS)
        rows = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]

    subs = [r for r in rows if r.get("role") == "sub-query" and "decision" in r]
    write_predictions(  # run file: what the collector decided for every search result
        "web_collection",
        "decisions",
        ({k: r.get(k) for k in ("claim_id", "url", "title", "published", "decision", "score")} for r in subs),
    )
    reasons = Counter(r["decision"].split(":")[0] for r in subs)
    by_claim = {c.claim_id: c for c in claims}
    own = [r for r in subs if _norm(r["url"]) == _norm(str(by_claim[r["claim_id"]].meta.get("claim_url") or ""))]
    own_removed = sum(r["decision"].startswith("fact-check site") for r in own)
    kept = [r for r in rows if r.get("decision") in ("relevant", "distractor")]
    titled = sum(bool(_FACT_CHECK_TITLE.search(r.get("title") or "")) for r in kept)
    scored = [
        r["score"] for r in subs if r["decision"] in ("relevant", "not relevant")
    ]  # past the site and date filters

    def pct(n: int, total: int) -> str:
        return f"{100.0 * n / max(total, 1):.1f}"

    filters = [
        ("fact-check site (leakage)", reasons["fact-check site"], pct(reasons["fact-check site"], len(subs))),
        ("published on or after the claim date", reasons["published on or after the claim date (search result date)"],
         pct(reasons["published on or after the claim date (search result date)"], len(subs))),
        (f"not relevant (cosine < {args.threshold:g})", reasons["not relevant"], pct(reasons["not relevant"], len(subs))),
        ("kept: relevant (qrels)", reasons["relevant"], pct(reasons["relevant"], len(subs))),
    ]  # fmt: skip
    sweep = [
        (f"{t:.2f}", pct(sum(s >= t for s in scored), len(scored))) for t in (0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6)
    ]
    timing = [
        ("live (loopback SerpAPI server)", f"{live_s:.1f}", f"{len(claims) / live_s:.1f}", "1.00"),
        (
            "replay (server stopped, no network)",
            f"{replay_s:.1f}",
            f"{len(claims) / replay_s:.1f}",
            f"{live_s / replay_s:.2f}",
        ),
    ]
    title = f"### Web collection on real Google results ({source}: {len(claims)} claims, {n_results} results, provider shape SerpAPI)"
    text = "\n\n".join(
        [
            title,
            markdown_table(["what happened to each result", "results", "% of results"], filters),
            f"The claim's own fact-check article was among its results {len(own)} time(s); the shipped list removed "
            f'{own_removed}. Results kept (relevant or distractor) whose title still says "fact check": {titled} of '
            f"{len(kept)} (fact-checks on general news sites, which a domain list cannot name). Documents: "
            f"{report.documents} ({report.relevant} relevant judgements for {report.claims_with_evidence} claims, "
            f"{report.distractors} distractors).",
            markdown_table(["relevance threshold", "% kept of the results past the site and date filters"], sweep),
            markdown_table(["run", "seconds", "claims/s", "speed vs live"], timing),
            f"Replay output byte-identical to the live run (corpus, qrels, records, manifest): {'yes' if identical else 'NO'}. "
            "Both runs embed every snippet with MiniLM (int8 ONNX), which is most of their time; a live run against a "
            "real provider adds the network and the 1 s rate limit per request. "
            f"Load average at the end: {load:.1f} (2 cores shared with other jobs: the encoder's speed varies with it).",
            f"Machine: {machine()}. Reproduce: `python benchmarks/web_collection.py"
            f"{' --split ' + args.split if args.split != 'dev' else ''}"
            f"{' --n-claims ' + str(args.n_claims) if args.n_claims != 200 else ''}`",
        ]
    )
    publish(
        "web_collection",
        text,
        {
            "claims": len(claims),
            "results": n_results,
            "factcheck_removed_pct": float(filters[0][2]),
            "late_removed_pct": float(filters[1][2]),
            "not_relevant_pct": float(filters[2][2]),
            "kept_pct": float(filters[3][2]),
            "own_factcheck_removed": f"{own_removed}/{len(own)}",
            "replay_identical": identical,
            "replay_speedup": round(live_s / replay_s, 2),
        },
    )


if __name__ == "__main__":
    main()
