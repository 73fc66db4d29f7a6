"""Load test of the HTTP service on loopback: N concurrent clients for T seconds against
``POST /v1/check``, ``POST /v1/search`` (on the hybrid index, then on a BM25 index of the same
corpus) and, as a reference for the HTTP stack and the client alone, ``GET /v1/health``.

The server is ``factscout serve`` started as a separate process over an index of a real corpus
(default: SciFact's 5,183 abstracts, hybrid BM25 + MiniLM, built here if the folder is missing);
the clients are httpx AsyncClients in this process, one per simulated user (one keep-alive
connection each), each sending its next request as soon as the previous one returns (closed
loop). Claims are SciFact's 809 train claims, in turn; search queries are the same texts with
k=10. Every non-200 answer or transport error counts as an error. Latency is client-side wall
clock per request (queueing in the server included).

One shared httpx client with a 50-connection pool was the bottleneck in a first version: on these
2 cores it spent about 4x the server's CPU time, and /v1/health alone came out at 95 requests/s
with p99 2.3 s; one client per user gave 216 requests/s and p99 0.47 s on the same machine
(httpcore scans the whole pool on every request start and finish: encode/httpx#3215).

    python benchmarks/load.py [--index .factscout/scifact-index] [--clients 50] [--seconds 60]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from _common import machine, markdown_table, publish, quiet

from factscout.datasets import load_dataset

ROOT = Path(__file__).resolve().parents[1]


def ensure_index(path: Path, retriever: str) -> str:
    """Build a SciFact index with ``retriever`` at ``path`` unless one is there; its retriever."""
    if not (path / "CURRENT").exists():
        from factscout.retrieve import build_index

        build_index(load_dataset("scifact", "train").corpus, path, retriever, show_progress=False)
    from factscout.retrieve.index import read_manifest

    _, manifest = read_manifest(path)
    return str(manifest.get("retriever"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(index: Path, port: int, planner: str, *extra: str) -> subprocess.Popen[bytes]:
    code = "from factscout.cli.main import app; app()"
    args = [sys.executable, "-c", code, "serve", "--index", str(index), "--port", str(port), "--planner", planner]
    args += extra
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 300) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    async with httpx.AsyncClient() as client:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise SystemExit(f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}")
            try:
                r = await client.get(base + "/v1/health")
                if r.status_code == 200:
                    return dict(r.json())
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.5)
    raise SystemExit("server did not start")


async def run_load(
    base: str, path: str, bodies: list[dict[str, Any]] | None, clients: int, seconds: float
) -> dict[str, Any]:
    """Closed loop: each client POSTs the next body (GETs ``path`` when ``bodies`` is None) as soon
    as its previous request returns, until ``seconds`` have passed."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    counter = itertools.count()

    async def one_client(client: httpx.AsyncClient, stop: float) -> None:
        while time.perf_counter() < stop:
            n = next(counter)
            t = time.perf_counter()
            try:
                r = await (client.get(path) if bodies is None else client.post(path, json=bodies[n % len(bodies)]))
                if r.status_code != 200:
                    errors[str(r.status_code)] = errors.get(str(r.status_code), 0) + 1
                    continue
            except httpx.HTTPError as exc:
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            latencies.append(time.perf_counter() - t)

    # one client (one keep-alive connection) per simulated user: httpx's shared pool costs far more
    # CPU per request as its connection count grows, and the load generator shares the cores
    clients_ = [
        httpx.AsyncClient(base_url=base, timeout=300, limits=httpx.Limits(max_connections=1)) for _ in range(clients)
    ]
    try:
        start = time.perf_counter()
        await asyncio.gather(*(one_client(c, start + seconds) for c in clients_))
        elapsed = time.perf_counter() - start
        health = (await clients_[0].get("/v1/health")).json()
    finally:
        for c in clients_:
            await c.aclose()
    lat = np.array(latencies) if latencies else np.zeros(1)
    return {
        "endpoint": path,
        "requests": len(latencies) + sum(errors.values()),
        "ok": len(latencies),
        "errors": sum(errors.values()),
        "error_kinds": errors,
        "seconds": elapsed,
        "throughput": len(latencies) / elapsed,
        "p50": float(np.percentile(lat, 50)),
        "p95": float(np.percentile(lat, 95)),
        "p99": float(np.percentile(lat, 99)),
        "max": float(lat.max()),
        "largest_batch": health.get("largest_batch"),
        "load_average": os.getloadavg()[0],
    }


class Server:
    """``factscout serve`` in a child process for the duration of a ``with`` block."""

    def __init__(self, index: Path, planner: str, *extra: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.index, self.planner, self.extra = index, planner, extra

    def __enter__(self) -> Server:
        t0 = time.perf_counter()
        self.proc = start_server(self.index, self.port, self.planner, *self.extra)
        self.info = asyncio.run(wait_ready(self.base, self.proc))
        self.startup = time.perf_counter() - t0
        return self

    def __exit__(self, *_: object) -> None:
        self.proc.terminate()
        self.proc.wait(30)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--bm25-index", type=Path, default=ROOT / ".factscout" / "scifact-bm25")
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--planner", default="decompose")
    parser.add_argument("--only", choices=["check", "search"], help="one endpoint (a quick look; writes no results)")
    args = parser.parse_args()
    quiet()
    retriever = ensure_index(args.index, "hybrid")
    ensure_index(args.bm25_index, "bm25")
    claims = load_dataset("scifact", "train").claims
    bodies = {"check": [{"claim": c.text} for c in claims], "search": [{"query": c.text, "k": 10} for c in claims]}
    with Server(args.index, args.planner) as server:
        if args.only:
            print(asyncio.run(run_load(server.base, f"/v1/{args.only}", bodies[args.only], args.clients, args.seconds)))
            return
        check = asyncio.run(run_load(server.base, "/v1/check", bodies["check"], args.clients, args.seconds))
        search = asyncio.run(run_load(server.base, "/v1/search", bodies["search"], args.clients, args.seconds))
        # reference: the same HTTP stack and client with no core work at all
        health = asyncio.run(run_load(server.base, "/v1/health", None, args.clients, args.seconds))
    with Server(args.bm25_index, args.planner) as bm25_server:
        bm25 = asyncio.run(run_load(bm25_server.base, "/v1/search", bodies["search"], args.clients, args.seconds))
    # reference: the fp32 path (no int8 stance or query encoder), as before the int8 quantisation
    with Server(args.index, args.planner, "--no-fast") as fp32_server:
        fp32 = asyncio.run(run_load(fp32_server.base, "/v1/check", bodies["check"], args.clients, args.seconds))
    runs = (
        (retriever, check),
        (f"{retriever}, `--no-fast` (fp32 reference)", fp32),
        (retriever, search),
        ("bm25", bm25),
        ("- (reference: no core work)", health),
    )
    rows = [
        [
            r["endpoint"],
            name,
            r["requests"],
            r["errors"],
            f"{r['throughput']:.1f}",
            f"{r['p50']:.3f}",
            f"{r['p95']:.3f}",
            f"{r['p99']:.3f}",
            f"{r['max']:.3f}",
            r["largest_batch"],
            f"{r['load_average']:.1f}",
        ]
        for name, r in runs
    ]
    header = ["endpoint", "index", "requests", "errors", "requests/s", "p50 s", "p95 s", "p99 s", "max s"]
    header += ["largest batch", "load average"]
    text = "\n".join(
        [
            f"### Service load: {args.clients} concurrent clients for {args.seconds:.0f} s per endpoint, loopback",
            "",
            markdown_table(header, rows),
            "",
            f"Server: `factscout serve` over SciFact's {server.info['passages']} abstracts ({retriever} index, int8"
            f" stance and queries by default; the second row the same server with `--no-fast`, the fp32 path; the"
            f" fourth row a BM25 index of the same corpus; the last row GETs /v1/health, the HTTP stack and client "
            f"alone), planner {args.planner} for /v1/check, k=10 for /v1/search; "
            f"up in {server.startup:.0f} s (models loaded once). Clients: httpx in a second process on the same "
            f"machine, closed loop, SciFact's {len(claims)} train claims in turn. Latency is per request as the "
            f"client sees it, queueing included; the load average is the machine's at the end of each run (2 cores "
            f"shared with the client and, here, with other jobs). {machine()}.",
            "",
            "Reproduce: `python benchmarks/load.py`",
        ]
    )
    headline = {
        name: {k: r[k] for k in ("p50", "p99", "throughput", "errors", "requests")}
        for name, r in (
            ("check", check),
            ("check_fp32", fp32),
            ("search", search),
            ("search_bm25", bm25),
            ("health", health),
        )
    }
    publish("load", text, {"clients": args.clients, "seconds": args.seconds, "index": retriever, **headline})


if __name__ == "__main__":
    main()
