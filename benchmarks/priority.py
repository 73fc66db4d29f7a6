"""Interactive checks while a batch job runs: ``POST /v1/check`` latency with and without a
200-claim ``POST /v1/checks`` job in the same server, in the same run.

The server is ``factscout serve`` over the hybrid SciFact index (as ``benchmarks/load.py``); a few
interactive clients (default 2, closed loop) check claims for ``--seconds``, first on an idle
server, then again right after a batch job of ``--batch-claims`` other claims was submitted. The
batch job's progress during the second window is counted too (claims finished per second), and the
job is then awaited to its end: interactive priority must not starve it. The target of issue 47:
interactive p99 under a batch <= 2x the idle p99.

    python benchmarks/priority.py [--index .factscout/scifact-index] [--clients 2] [--seconds 60]
        [--batch-claims 200]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from pathlib import Path
from typing import Any

import httpx
from _common import machine, markdown_table, publish, quiet
from load import Server, ensure_index, run_load

from factscout.datasets import load_dataset
from factscout.serve.schemas import MAX_JOB_CLAIMS

ROOT = Path(__file__).resolve().parents[1]


async def jobs_state(base: str, job_ids: list[str]) -> tuple[int, list[dict[str, Any]]]:
    """Claims finished over the jobs, and each job's state."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        bodies = [(await client.get(f"/v1/checks/{job_id}")).json() for job_id in job_ids]
    return sum(int(b["done"]) for b in bodies), bodies


async def under_batch(
    base: str, interactive: list[dict[str, Any]], batch: list[dict[str, Any]], clients: int, seconds: float
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Submit the batch (in jobs of at most MAX_JOB_CLAIMS claims, the API's limit), run the
    interactive load beside it, then wait for the jobs to end."""
    job_ids = []
    async with httpx.AsyncClient(base_url=base, timeout=60) as client:
        for start in range(0, len(batch), MAX_JOB_CLAIMS):
            r = await client.post("/v1/checks", json={"claims": batch[start : start + MAX_JOB_CLAIMS]})
            r.raise_for_status()
            job_ids.append(r.json()["id"])
    t0 = time.perf_counter()
    load = await run_load(base, "/v1/check", interactive, clients, seconds)
    done_in_window, _ = await jobs_state(base, job_ids)
    window = time.perf_counter() - t0
    while True:
        _, bodies = await jobs_state(base, job_ids)
        if all(b["status"] in ("done", "failed") for b in bodies):
            break
        await asyncio.sleep(0.5)
    job = {
        "claims": len(batch),
        "jobs": len(job_ids),
        "done_in_window": done_in_window,
        "window_s": window,
        "finished_s": time.perf_counter() - t0,
        "status": "done" if all(b["status"] == "done" for b in bodies) else "failed",
        "errors": sum(int(b["failed"]) for b in bodies),
    }
    return load, job


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--clients", type=int, default=2, help="interactive clients (closed loop)")
    parser.add_argument("--seconds", type=float, default=60, help="each interactive window")
    parser.add_argument("--batch-claims", type=int, default=200, help="claims in the batch job")
    parser.add_argument("--planner", default="decompose")
    args = parser.parse_args()
    quiet()
    retriever = ensure_index(args.index, "hybrid")
    claims = load_dataset("scifact", "train").claims
    if len(claims) < args.batch_claims + 50:
        raise SystemExit(f"--batch-claims {args.batch_claims}: SciFact train has {len(claims)} claims")
    # the batch checks other claims than the interactive clients (the server caches repeated claims)
    batch = [{"claim": c.text, "claim_id": f"batch-{c.claim_id}"} for c in claims[: args.batch_claims]]
    idle_bodies = [{"claim": c.text} for c in claims[args.batch_claims :][::2]]
    busy_bodies = [{"claim": c.text} for c in claims[args.batch_claims :][1::2]]
    with Server(args.index, args.planner) as server:
        idle = asyncio.run(run_load(server.base, "/v1/check", idle_bodies, args.clients, args.seconds))
        busy, job = asyncio.run(under_batch(server.base, busy_bodies, batch, args.clients, args.seconds))
    ratio = busy["p99"] / idle["p99"] if idle["p99"] else float("inf")
    rows = [
        [name, r["ok"], r["errors"], f"{r['throughput']:.2f}", f"{r['p50']:.3f}", f"{r['p99']:.3f}", f"{r['max']:.3f}"]
        for name, r in (("idle server", idle), (f"beside a {len(batch)}-claim batch job", busy))
    ]
    text = "\n".join(
        [
            f"### Interactive checks beside a batch job: {args.clients} clients, {args.seconds:.0f} s each",
            "",
            markdown_table(["/v1/check", "ok", "errors", "checks/s", "p50 s", "p99 s", "max s"], rows),
            "",
            f"Interactive p99 beside the batch job / idle p99: **{ratio:.2f}x** (target <= 2x). The batch "
            f"({job['jobs']} jobs of at most {MAX_JOB_CLAIMS} claims, the API's limit) finished {job['done_in_window']} of its {job['claims']} claims during the {job['window_s']:.0f} s "
            f"window and all of them {job['finished_s']:.0f} s after it was submitted (status {job['status']}, "
            f"{job['errors']} errors): interactive requests go first, batch claims run in small batches between "
            f"them and are never starved (`serve/runner.py`, queue order).",
            "",
            f"Server: `factscout serve` over SciFact's {server.info['passages']} abstracts ({retriever} index, "
            f"default settings, planner {args.planner}); clients: httpx in this process, closed loop, SciFact train "
            f"claims the batch job does not hold. {machine()}.",
            "",
            "Reproduce: `python benchmarks/priority.py`",
        ]
    )
    headline = {
        "idle_p50": idle["p50"],
        "idle_p99": idle["p99"],
        "busy_p50": busy["p50"],
        "busy_p99": busy["p99"],
        "p99_ratio": ratio,
        "batch_done_in_window": job["done_in_window"],
        "batch_finished_s": job["finished_s"],
        "batch_status": job["status"],
    }
    publish("priority", text, headline)


if __name__ == "__main__":
    main()
