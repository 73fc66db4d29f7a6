"""Paper-scale BFS trajectories for query rewriting, run through the CLI.

Kazemi et al. ran BFS on 45,658 FEVER claims. This run gathers at least ``--target`` (20,000)
training claims for one BM25-family endpoint: every *training* claim of SciFact, AVeriTeC,
COVID-Fact and CheckThat 2022 2A (the held-out claims of ``benchmarks/rewriting.py`` are left
out), topped up with inverse-cloze pseudo-claims of each corpus (``factscout data
pseudo-claims``: the claim's sentence is cut out of a training copy of the corpus, which gets its
own index). Each part runs as a user would:

    factscout data pseudo-claims -i corpus.jsonl --n N --out ict/     (pseudo parts)
    factscout index -i corpus.jsonl --index index --retriever R --no-sentences
    factscout trajectories --claims queries.jsonl --qrels qrels.tsv --index index --out traj.jsonl --workers W

Everything lands under ``--work`` and every step resumes: a part whose files exist is not made
again, and ``factscout trajectories`` skips the claims its manifest already holds. ``--minutes``
stops the BFS after that much wall time (the claim in flight is dropped and redone next time),
so the run can be spread over several sittings; the table says how far it got. The reference in
the same run is the issue's throughput floor (1,000 candidates/s on 2 cores for BM25 endpoints):
each part's wall-clock rate is given as a ratio to it. CPU time is the BFS processes' own (user +
system, every descendant included, also the workers a ``--minutes`` stop leaves unreaped), so it
does not grow when other jobs share the cores.

Pseudo-claims are shared out by water-filling over what each corpus can give (its passages with
an eligible sentence; COVID-Fact's evidence is mostly single sentences: 1.3 % are eligible): the
corpora are taken from the smallest capacity up, each given an equal share of what is still
missing or all it has, so a small corpus's shortfall passes to the larger ones.

    python benchmarks/bfs_scale.py --retriever bm25-plain [--target 20000] [--workers 2] [--minutes 60]

Another split: ``--datasets custom --claims C --qrels Q --corpus P --heldout IDS``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import resource
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import psutil
from _common import ROOT, machine, markdown_table, publish, quiet
from rewriting import load_split

from factscout.formats.beir import read_corpus, write_claims, write_corpus
from factscout.formats.jsonl import read_lines
from factscout.formats.trec import write_qrels
from factscout.rewrite.trajectories import manifest_path
from factscout.training.rewrite.pseudo_claims import inverse_cloze

DATASETS = ("covidfact", "checkthat2022", "averitec", "scifact")
FLOOR = 1000.0  # candidates/s: the throughput target for BM25 endpoints


def cli(*args: str) -> list[str]:
    """The ``factscout`` command installed beside this Python, with ``args``."""
    return [str(Path(sys.executable).parent / "factscout"), *args]


class TreeCPU:
    """CPU seconds (user + system) of a process and all its descendants, sampled every
    ``every`` seconds in a thread. ``RUSAGE_CHILDREN`` counts only the descendants that were
    waited for: workers of a BFS stopped by ``--minutes`` die unreaped, so their CPU time would be
    lost. The last sample of each process is kept (up to ``every`` s of a process's end is missed,
    so the caller takes the larger of this and the rusage count)."""

    def __init__(self, pid: int, every: float = 2.0) -> None:
        self.pid, self.every = pid, every
        self.seen: dict[tuple[int, float], float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            tree = [root, *root.children(recursive=True)]
        except psutil.Error:
            return
        for proc in tree:
            with contextlib.suppress(psutil.Error):
                times = proc.cpu_times()
                self.seen[(proc.pid, proc.create_time())] = times.user + times.system

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.sample()

    def stop(self) -> float:
        self._stop.set()
        self._thread.join()
        return float(sum(self.seen.values()))


def run(cmd: list[str], timeout: float | None = None) -> tuple[bool, float, float]:
    """Run ``cmd``; (finished, wall seconds, CPU seconds of it and its descendants). On ``timeout``
    the process group is stopped (SIGINT, then SIGKILL) and ``finished`` is False; its CPU time
    is then what :class:`TreeCPU` saw (the stopped workers are never reaped)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.Popen(cmd, start_new_session=True)
    tree = TreeCPU(proc.pid)
    finished = True
    try:
        rc = proc.wait(timeout=timeout)
        if rc != 0:
            raise SystemExit(f"failed ({rc}): {shlex.join(cmd)}")
    except subprocess.TimeoutExpired:
        finished = False
        for sig, grace in ((signal.SIGINT, 30), (signal.SIGKILL, None)):
            try:
                import os

                os.killpg(proc.pid, sig)
                proc.wait(timeout=grace)
                break
            except (subprocess.TimeoutExpired, ProcessLookupError):
                continue
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    waited = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return finished, time.perf_counter() - t, max(waited, tree.stop())


def count_lines(path: Path) -> int:
    return sum(1 for _, line in read_lines(path) if line.strip()) if path.is_file() else 0


def real_part(dataset: str, folder: Path, args: argparse.Namespace) -> int:
    """Write the dataset's training claims, their qrels and its corpus under ``folder``."""
    if not (folder / "queries.jsonl").is_file():
        claims, qrels, corpus, held, _ = load_split(dataset, args)
        train = [c for c in claims if c.claim_id not in held and qrels.get(c.claim_id)]
        folder.mkdir(parents=True, exist_ok=True)
        write_corpus(folder / "corpus.jsonl", corpus)
        write_qrels(folder / "qrels.tsv", {c.claim_id: qrels[c.claim_id] for c in train})
        write_claims(folder / "queries.jsonl.tmp", train)
        (folder / "queries.jsonl.tmp").replace(folder / "queries.jsonl")  # written last: the part is complete
    return count_lines(folder / "queries.jsonl")


def pseudo_part(source: Path, folder: Path, n: int) -> int:
    """``factscout data pseudo-claims`` for ``n`` claims of ``source``'s corpus (once)."""
    if not (folder / "queries.jsonl").is_file() and n > 0:
        run(cli("data", "pseudo-claims", "-i", str(source / "corpus.jsonl"), "--n", str(n), "--out", str(folder)))
        (folder / "qrels" / "train.tsv").replace(folder / "qrels.tsv")
    return count_lines(folder / "queries.jsonl")


def pseudo_capacity(corpus: Path) -> int:
    """How many pseudo-claims ``corpus`` can give (its passages with an eligible sentence)."""
    return inverse_cloze(list(read_corpus(corpus)), 1).eligible


def water_fill(missing: int, capacity: dict[str, int]) -> dict[str, int]:
    """``missing`` shared over ``capacity``'s keys, smallest capacity first: each gets an equal
    share of what is still missing, or its capacity if that is less."""
    asks, left = {}, max(missing, 0)
    order = sorted(capacity, key=lambda d: (capacity[d], d))
    for i, d in enumerate(order):
        asks[d] = min(capacity[d], math.ceil(left / (len(order) - i)))
        left -= asks[d]
    return asks


def manifest(traj: Path) -> list[dict]:
    path = manifest_path(traj)
    rows = []
    for _, line in read_lines(path) if path.is_file() else ():
        with contextlib.suppress(json.JSONDecodeError):  # a line cut off by a stop: the next run repairs it
            rows.append(json.loads(line))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--retriever", default="bm25-plain", choices=("bm25-plain", "bm25", "bm25-and"))
    parser.add_argument("--target", type=int, default=20000, help="training claims in all (real + pseudo)")
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--depth", type=int, default=4)
    parser.add_argument("--minutes", type=float, help="stop the BFS after this much wall time (resume later)")
    parser.add_argument("--work", type=Path, help="work folder (default: .factscout/bfs_scale/<retriever>)")
    parser.add_argument("--name", help="results name (default: bfs_scale_<retriever>)")
    parser.add_argument("--claims", help="with --datasets custom: claims JSONL (BEIR queries)")
    parser.add_argument("--qrels", help="with --datasets custom: their qrels")
    parser.add_argument("--corpus", help="with --datasets custom: the corpus")
    parser.add_argument("--heldout", help="with --datasets custom: held-out claim ids (left out), one per line")
    args = parser.parse_args()
    quiet()
    work = args.work or ROOT / ".factscout" / "bfs_scale" / args.retriever
    datasets = [d.strip() for d in args.datasets.split(",") if d.strip()]
    unknown = sorted(set(datasets) - {*DATASETS, "custom"})
    if unknown:
        parser.error(f"unknown datasets {unknown}; choose from {', '.join(DATASETS)} or custom")
    if "custom" in datasets and not (args.claims and args.qrels and args.corpus and args.heldout):
        parser.error("--datasets custom needs --claims, --qrels, --corpus and --heldout")
    keep_set = args.retriever == "bm25-and"

    # --- the parts: real training claims, then pseudo-claims up to the target
    parts: list[tuple[str, str, Path, int]] = []
    for d in datasets:
        parts.append((d, "real", work / d / "real", real_part(d, work / d / "real", args)))
    missing = max(args.target - sum(p[3] for p in parts), 0)
    todo = [d for d in datasets if not (work / d / "ict" / "queries.jsonl").is_file()]
    capacity = {d: pseudo_capacity(work / d / "real" / "corpus.jsonl") for d in todo} if missing else {}
    asks = water_fill(missing - sum(count_lines(work / d / "ict" / "queries.jsonl") for d in datasets), capacity)
    for d in datasets:
        made = pseudo_part(work / d / "real", work / d / "ict", asks.get(d, 0))
        if made:
            parts.append((d, "pseudo", work / d / "ict", made))

    # --- index each part's corpus, then BFS (resumable; stops at the deadline)
    stats_file = work / "stats.json"
    stats = json.loads(stats_file.read_text()) if stats_file.is_file() else {}
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else None
    for dataset, kind, folder, n in parts:
        key = f"{dataset}/{kind}"
        entry = stats.setdefault(key, {"bfs_cpu_s": 0.0, "bfs_wall_s": 0.0, "index_s": 0.0})
        index = folder / f"index-{args.retriever}"
        if not index.exists():
            cmd = cli("index", "-i", str(folder / "corpus.jsonl"), "--index", str(index), "--retriever", args.retriever)
            _, wall, _ = run([*cmd, "--no-sentences"])
            entry["index_s"] = round(wall, 1)
            stats_file.write_text(json.dumps(stats, indent=1) + "\n")
        left = None if deadline is None else deadline - time.monotonic()
        if left is not None and left <= 0:
            break
        traj = folder / f"traj-{args.retriever}.jsonl"
        if len(manifest(traj)) >= n:
            continue  # searched in an earlier sitting: no start-up time added to its figures
        cmd = cli(
            "-q", "trajectories", "--claims", str(folder / "queries.jsonl"), "--qrels", str(folder / "qrels.tsv"),
            "--index", str(index), "--out", str(traj), "--workers", str(args.workers), "--depth", str(args.depth),
            "--keep-set" if keep_set else "--no-keep-set",
        )  # fmt: skip
        _, wall, cpu = run(cmd, timeout=left)
        entry["bfs_cpu_s"] += cpu
        entry["bfs_wall_s"] += wall
        stats_file.write_text(json.dumps(stats, indent=1) + "\n")

    # --- the table, from the manifests (what is on disk, whatever the sitting)
    rows, totals = [], Counter()
    for dataset, kind, folder, n in parts:
        done = manifest(folder / f"traj-{args.retriever}.jsonl")
        entry = stats.get(f"{dataset}/{kind}", {})
        cand, seqs = sum(r.get("candidates", 0) for r in done), sum(r.get("sequences", 0) for r in done)
        wall, cpu = entry.get("bfs_wall_s", 0.0), entry.get("bfs_cpu_s", 0.0)
        status = Counter(r.get("status") for r in done)
        rate = cand / wall if wall else 0.0
        rows.append([
            f"{dataset} {kind}", f"{n:,}", f"{len(done):,}", ", ".join(f"{k} {v}" for k, v in sorted(status.items())),
            f"{seqs:,}", f"{cand:,}", f"{cpu / 60:.1f}", f"{wall / 60:.1f}", f"{rate:,.0f}", f"{rate / FLOOR:.2f}",
        ])  # fmt: skip
        totals.update({"planned": n, "done": len(done), "candidates": cand, "sequences": seqs})
        totals.update({"real" if kind == "real" else "pseudo": len(done)})
        totals.update({"wall": wall, "cpu": cpu, **{f"status:{k}": v for k, v in status.items()}})
    rate = totals["candidates"] / totals["wall"] if totals["wall"] else 0.0
    rows.append([
        "**all**", f"{totals['planned']:,}", f"{totals['done']:,}", "", f"{totals['sequences']:,}",
        f"{totals['candidates']:,}", f"{totals['cpu'] / 60:.1f}", f"{totals['wall'] / 60:.1f}", f"{rate:,.0f}",
        f"{rate / FLOOR:.2f}",
    ])  # fmt: skip
    complete = totals["done"] >= totals["planned"] and totals["planned"] >= args.target
    progress = "complete" if complete else f"{totals['done']:,} searched so far"
    text = "\n".join(
        [
            f"### BFS at paper scale: `{args.retriever}`, {totals['planned']:,} training claims planned ({progress})",
            "",
            markdown_table(
                [
                    "part",
                    "claims",
                    "searched",
                    "outcome",
                    "sequences",
                    "candidates",
                    "CPU min",
                    "wall min",
                    "candidates/s (wall)",
                    "vs 1,000/s floor",
                ],
                rows,
            ),
            "",
            f"Real training claims searched: {totals['real']:,}; pseudo-claims: {totals['pseudo']:,}. BFS depth "
            f"{args.depth}, {args.workers} worker processes{', keep-set search' if keep_set else ''}, reward AP@50; "
            "pseudo-claims are searched in their own training copy of the corpus. CPU minutes are the BFS "
            "processes' own; wall minutes include sharing the 2 cores with other jobs.",
            "",
            f"Machine: {machine()}. Reproduce (resumes where it stopped): "
            f"`{shlex.join(['python', 'benchmarks/bfs_scale.py', *sys.argv[1:]])}`",
        ]
    )
    publish(
        args.name or f"bfs_scale_{args.retriever.replace('-', '_')}",
        text,
        {
            "benchmark": "bfs_scale",
            "retriever": args.retriever,
            "claims_planned": totals["planned"],
            "claims_searched": totals["done"],
            "real_claims": totals["real"],
            "pseudo_claims": totals["pseudo"],
            "candidates": totals["candidates"],
            "cpu_hours": round(totals["cpu"] / 3600, 2),
            "candidates_per_s": round(rate),
            "complete": complete,
        },
    )


if __name__ == "__main__":
    main()
