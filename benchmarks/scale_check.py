"""The cost of ``factscout check`` as the corpus grows: CPU per claim and memory of the check process,
index build time, on-disk size and loaded memory, for BM25 and hybrid indexes of 5k to 1M passages.

Passages: the SciFact abstracts, then the MultiFC snippets (as ``verdict.py``'s ``latency_corpus``
reads them, without AVeriTeC), then perturbed copies of those originals in turn (sentence order
shuffled, each word but a sentence's last dropped with probability 0.15, a new id ``<id>#copy<n>``),
so BM25 statistics are not those of identical copies. Every size is a prefix of the next.

Indexes are built through the project's own API and written in its index format with
:func:`~factscout.retrieve.index.save_index` (passages, BM25, dense faiss index, stored sentence
offsets and vectors), so ``check`` reads them as any index. Only the *encoding* is skipped, because
MiniLM manages some tens of texts a second on 2 cores: passage and sentence vectors are real for
the passages that have them (all SciFact abstracts when ``--vectors-from`` names the demo's hybrid
SciFact index, and ``--encode-sample`` MultiFC snippets encoded in this run) and synthetic for the
rest: a real vector of the same source (the passage's own original for a copy, else one drawn by
position) plus Gaussian noise of norm ``--noise``, renormalised. Sentence vectors follow the same
rule sentence by sentence (a copy's sentence j copies its source sentence). Sentence offsets are
real (the project's splitter on the actual text). Encoding time is reported apart, estimated from
the rates measured on the encoded samples.

CPU per claim: the real CLI in fresh processes over ``--small`` and ``--large`` SciFact train
claims (or ``--claims``), (CPU(large) - CPU(small)) / (large - small), start-up and model loading
excluded (``check_speed.py``'s method); peak RSS is the large run's. Loaded memory: RSS growth of a
fresh process while it loads the index as ``check`` does (``load_index`` and the stored sentence
data; memory-mapped files count only as far as they are touched).

    python benchmarks/scale_check.py [--sizes 5000,50000,200000,1000000] [--kinds bm25,hybrid]
        [--claims FILE] [--small 20] [--large 120] [--work DIR] [--vectors-from .factscout/scifact-index]
        [--keep-rows] [--max-hnsw-minutes 30] [--plot docs/scale_check.png]

``--keep-rows`` keeps the rows of an earlier run (``results/scale_check/rows.jsonl.gz``) for the
(size, kind) pairs this run does not measure, so a large size can be added in a later run; each
row says when it was measured.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from _common import RESULTS, machine, markdown_table, publish, quiet, write_predictions

ROOT = Path(__file__).resolve().parents[1]
NAME = "scale_check"
KINDS = ("bm25", "hybrid")
DROPOUT = 0.15


# -- the corpus ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a corpus passage comes from: ``source`` (scifact | multifc), the position of its
    original among the originals, and for a copy the order of the original's sentences."""

    source: str
    original: int
    perm: tuple[int, ...] | None = None


def originals(limit: int | None = None) -> tuple[list[Any], list[str]]:
    """SciFact abstracts then MultiFC snippets (ids ``mfc:<n>``, as in ``latency_corpus``); at most
    ``limit`` of each (tiny runs)."""
    from factscout.datasets import data_root, load_dataset
    from factscout.formats.jsonl import read_jsonl
    from factscout.records import Passage

    passages = list(load_dataset("scifact", "train").corpus)[:limit]
    sources = ["scifact"] * len(passages)
    for n, (_, row) in enumerate(read_jsonl(data_root() / "multifc" / "snippets.jsonl.gz")):
        if limit is not None and n >= limit:
            break
        passages.append(Passage(f"mfc:{n}", str(row["claimID"]), row.get("title") or "", row.get("snippet") or ""))
        sources.append("multifc")
    return passages, sources


def perturbed(passage: Any, copy: int, rng: random.Random) -> tuple[Any, tuple[int, ...]]:
    """A copy of ``passage`` with its sentences shuffled and words dropped (never a sentence's
    last word, so sentence ends stay), id ``<id>#copy<copy>``; also the sentence order used."""
    from factscout.records import Passage
    from factscout.text.sentences import sentence_spans

    sentences = [passage.text[a:b] for a, b in sentence_spans(passage.text)]
    perm = list(range(len(sentences)))
    rng.shuffle(perm)
    out = []
    for j in perm:
        words = sentences[j].split()
        kept = [w for w in words[:-1] if rng.random() >= DROPOUT] + words[-1:]
        out.append(" ".join(kept))
    text = " ".join(out)
    return Passage(f"{passage.passage_id}#copy{copy}", passage.doc_id, passage.title, text), tuple(perm)


def make_corpus(size: int, seed: int, limit: int | None = None) -> tuple[list[Any], list[Origin]]:
    """The first ``size`` passages: the originals, then perturbed copies of them in turn."""
    base, sources = originals(limit)
    passages = base[:size]
    origins = [Origin(sources[i], i) for i in range(len(passages))]
    rng = random.Random(seed)
    k = 0
    while len(passages) < size:
        i = k % len(base)
        copy, perm = perturbed(base[i], k // len(base) + 1, rng)
        passages.append(copy)
        origins.append(Origin(sources[i], i, perm))
        k += 1
    return passages, origins


# -- real vectors and their synthetic copies -------------------------------------------------------


@dataclass
class Pool:
    """Real vectors of some passages of one source: passage vectors (float32) and their
    sentence data (offsets + float16 vectors)."""

    ids: list[str]
    vectors: np.ndarray
    sentences: Any  # SentenceData
    row: dict[str, int]
    passage_rate: float | None = None  # passages/s and sentences/s when encoded in this run
    sentence_rate: float | None = None


def encode_pool(passages: Sequence[Any], encoder: Any, sentence_encoder: Any) -> Pool:
    """Encode ``passages`` for real: passage vectors with the dense index's encoder, sentences with
    ``check``'s selection encoder (what ``factscout index`` does), timed in CPU seconds (all
    threads) once the models are loaded."""
    from factscout.retrieve.index import index_sentences

    encoder.encode(["warm-up"])
    sentence_encoder.encode(["warm-up"])
    t = time.process_time()
    vectors = np.asarray(encoder.encode([p.contents for p in passages]), dtype=np.float32)
    p_rate = len(passages) / max(time.process_time() - t, 1e-9)
    t = time.process_time()
    sentences = index_sentences(passages, encoder=sentence_encoder)
    s_rate = len(sentences.spans) / max(time.process_time() - t, 1e-9)
    ids = [p.passage_id for p in passages]
    return Pool(ids, vectors, sentences, {pid: i for i, pid in enumerate(ids)}, p_rate, s_rate)


def index_pool(directory: Path, passages: Sequence[Any]) -> Pool | None:
    """The real vectors of an existing hybrid index with stored sentences (the demo's SciFact
    index), when it holds exactly ``passages``' ids in order."""
    from factscout.formats.beir import read_corpus
    from factscout.retrieve.index import read_manifest
    from factscout.retrieve.sentences import load_sentence_data

    gen, manifest = read_manifest(directory)
    if manifest.get("retriever") != "hybrid" or not manifest.get("sentences"):
        return None
    ids = [p.passage_id for p in read_corpus(gen / "passages.jsonl")]
    if ids != [p.passage_id for p in passages]:
        return None
    dense = json.loads((gen / "hybrid" / "dense" / "dense.json").read_text())
    if dense.get("encoder") != "minilm" or dense.get("adapter"):
        return None
    vectors = np.load(gen / "hybrid" / "dense" / "embeddings.npy").astype(np.float32)
    sentences = load_sentence_data(gen, len(ids))
    return Pool(ids, vectors, sentences, {pid: i for i, pid in enumerate(ids)})


def noisy(vectors: np.ndarray, noise: float, rng: np.random.Generator) -> np.ndarray:
    """``vectors`` plus Gaussian noise of expected norm ``noise``, renormalised (float32)."""
    out = vectors.astype(np.float32, copy=True)
    out += rng.standard_normal(out.shape, dtype=np.float32) * np.float32(noise / math.sqrt(out.shape[1]))
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def vector_plan(
    passages: Sequence[Any], origins: Sequence[Origin], pools: dict[str, Pool], spans: Sequence[Sequence[Any]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """For every passage and every sentence: the row of the real vector it is (or copies) in the
    pools' concatenated matrices, and whether it is synthetic."""
    offsets, s_offsets, start, s_start = {}, {}, 0, 0
    for name, pool in pools.items():
        offsets[name], s_offsets[name] = start, s_start
        start += len(pool.ids)
        s_start += len(pool.sentences.spans)
    p_rows = np.empty(len(passages), dtype=np.int64)
    p_synth = np.ones(len(passages), dtype=bool)
    s_rows: list[int] = []
    s_synth: list[bool] = []
    for i, (p, o) in enumerate(zip(passages, origins, strict=True)):
        pool = pools[o.source]
        original_id = p.passage_id.split("#copy")[0]
        t = pool.row.get(original_id)
        own = t is not None
        if t is None:
            t = o.original % len(pool.ids)
        p_rows[i] = offsets[o.source] + t
        template = pool.sentences.rows(t)
        n = len(spans[i])
        real = own and o.perm is None
        p_synth[i] = not real
        for j in range(n):
            if real and n == len(template):
                src = j
            elif o.perm is not None and len(o.perm) == n and len(template) == n:
                src = o.perm[j]
            else:
                src = j % len(template) if len(template) else -1
            if src < 0:  # a template without sentences: any real sentence of the source
                s_rows.append(s_offsets[o.source] + (i % max(len(pool.sentences.spans), 1)))
            else:
                s_rows.append(s_offsets[o.source] + template.start + src)
            s_synth.append(not (real and n == len(template)))
    return p_rows, p_synth, np.asarray(s_rows, dtype=np.int64), np.asarray(s_synth, dtype=bool)


def realise(
    matrix: np.ndarray, rows: np.ndarray, synth: np.ndarray, noise: float, rng: np.random.Generator, dtype: Any
) -> np.ndarray:
    """``matrix[rows]`` with the synthetic rows perturbed, in chunks (1M x 384 float32 is 1.5 GB)."""
    out = np.empty((len(rows), matrix.shape[1]), dtype=dtype)
    chunk = 200_000
    for a in range(0, len(rows), chunk):
        block = np.asarray(matrix[rows[a : a + chunk]], dtype=np.float32)
        mask = synth[a : a + chunk]
        if mask.any():
            block[mask] = noisy(block[mask], noise, rng)
        out[a : a + chunk] = block.astype(dtype)
    return out


# -- measuring -----------------------------------------------------------------------------------


def disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def child(cmd: list[str]) -> tuple[float, float, int, str]:
    """Run ``cmd``; its own CPU seconds (``wait4``), wall seconds, peak RSS in bytes and stdout.
    The peak is the child's ``VmHWM`` at exit (written by :data:`PEAK`): ``ru_maxrss`` would not do,
    as Linux carries the parent's high-water mark over fork and exec."""
    with tempfile.TemporaryDirectory() as tmp:
        peak_file = Path(tmp) / "peak"
        env = {**os.environ, "SCALE_CHECK_PEAK": str(peak_file)}
        with open(Path(tmp) / "out", "w+b") as out, open(Path(tmp) / "err", "w+b") as err:
            wall = time.perf_counter()
            proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=err)
            _, status, usage = os.wait4(proc.pid, 0)
            wall = time.perf_counter() - wall
            code = os.waitstatus_to_exitcode(status)
            proc.returncode = code  # reaped here: Popen must not wait for it again
            out.seek(0)
            err.seek(0)
            text, problem = out.read().decode(), err.read().decode()
        if code:
            raise SystemExit(f"{' '.join(cmd[3:6])} failed ({code}): {problem[-2000:]}")
        peak = int(peak_file.read_text()) * 1024
    return usage.ru_utime + usage.ru_stime, wall, peak, text


# every child writes its peak RSS (kB) at exit
PEAK = (
    "import atexit, os\n"
    "def _peak():\n"
    "    kb = next(line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:'))\n"
    "    open(os.environ['SCALE_CHECK_PEAK'], 'w').write(kb)\n"
    "atexit.register(_peak)\n"
)
CHECK = PEAK + "from factscout.cli.main import app\napp()\n"
# what loading an index costs in memory: the retriever and the stored sentence data, as check loads them
LOAD = (
    PEAK
    + """
import json, sys
import bm25s, faiss, numpy
import factscout.retrieve.bm25, factscout.retrieve.dense, factscout.retrieve.hybrid
from factscout.retrieve import load_index
from factscout.retrieve.index import read_manifest
from factscout.retrieve.sentences import load_sentence_data
def rss():
    return next(int(line.split()[1]) * 1024 for line in open('/proc/self/status') if line.startswith('VmRSS:'))
before = rss()
gen, _ = read_manifest(sys.argv[1])
retriever = load_index(sys.argv[1])
sentences = load_sentence_data(gen, len(retriever.store))
print(json.dumps({'before': before, 'after': rss(), 'passages': len(retriever.store)}))
"""
)


def measure_check(index: Path, claims: dict[int, Path], work: Path) -> dict[str, float]:
    runs = {}
    for n, path in claims.items():
        cmd = [sys.executable, "-c", CHECK, "-q", "check", "--index", str(index), "--input", str(path)]
        cmd += ["--output", str(work / f"reports-{n}.jsonl")]
        runs[n] = child(cmd)
    small, large = sorted(claims)
    span = large - small
    return {
        "cpu_per_claim": (runs[large][0] - runs[small][0]) / span,
        "wall_per_claim": (runs[large][1] - runs[small][1]) / span,
        "check_peak_rss": runs[large][2],
        "check_cpu_small": runs[small][0],
        "check_cpu_large": runs[large][0],
    }


def measure_load(index: Path) -> dict[str, float]:
    cpu, _, peak, out = child([sys.executable, "-c", LOAD, str(index)])
    got = json.loads(out.strip().splitlines()[-1])
    return {"loaded_rss": got["after"] - got["before"], "load_cpu": cpu, "load_peak_rss": peak}


# -- the run -------------------------------------------------------------------------------------


def hnsw_estimate(rows: Sequence[dict], n: int) -> float | None:
    """Seconds an HNSW build of ``n`` vectors should take, from the largest one measured
    (n log n scaling), or None when none was measured."""
    done = [r for r in rows if r.get("index_type") == "HNSW" and r.get("faiss_cpu_s")]
    if not done:
        return None
    r = max(done, key=lambda r: r["passages"])
    m = r["passages"]
    return r["faiss_cpu_s"] * (n / m) * (math.log(n) / math.log(m))


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="5000,50000,200000,1000000")
    parser.add_argument("--kinds", default="bm25,hybrid")
    parser.add_argument("--claims", type=Path, help="BEIR queries JSONL (default: SciFact train claims)")
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=120)
    parser.add_argument("--work", type=Path, help="where indexes go (default: a temporary folder)")
    parser.add_argument("--vectors-from", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--encode-sample", type=int, default=200, help="passages encoded for real per source")
    parser.add_argument("--noise", type=float, default=0.5, help="norm of the noise on synthetic vectors")
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--originals", type=int, help="at most this many originals per source (tiny runs)")
    parser.add_argument("--max-hnsw-minutes", type=float, default=30.0)
    parser.add_argument("--keep-rows", action="store_true", help="keep an earlier run's rows for other sizes")
    parser.add_argument("--plot", type=Path, default=ROOT / "docs" / "scale_check.png")
    parser.add_argument("--plot-only", action="store_true", help="only redraw the plot from the last run's rows")
    args = parser.parse_args()
    if args.plot_only:  # redraw the plot from the rows of the last run
        with gzip.open(RESULTS / NAME / "rows.jsonl.gz", "rt") as f:
            plot([json.loads(line) for line in f], args.plot)
        return
    try:
        sizes = sorted({int(s) for s in args.sizes.split(",") if s.strip()})
    except ValueError:
        parser.error(f"--sizes must be comma-separated integers, got {args.sizes!r}")
    kinds = [k.strip() for k in args.kinds.split(",") if k.strip()]
    if not sizes or min(sizes) < 1 or not kinds or set(kinds) - set(KINDS):
        parser.error(f"--sizes must be positive and --kinds among {', '.join(KINDS)}")
    if not 0 < args.small < args.large:
        parser.error("need 0 < --small < --large")
    from factscout.datasets import load_dataset
    from factscout.formats.beir import read_queries, write_queries
    from factscout.retrieve import save_index
    from factscout.retrieve.adapter import make_encoder
    from factscout.retrieve.base import PassageStore
    from factscout.retrieve.bm25 import Bm25Config, Bm25Retriever
    from factscout.retrieve.dense import DenseConfig, DenseRetriever
    from factscout.retrieve.hybrid import HybridConfig, HybridRetriever
    from factscout.retrieve.sentences import SentenceData
    from factscout.text.onnx_encoder import fp32_onnx_encoder
    from factscout.text.sentences import sentence_spans

    queries = list(read_queries(args.claims)) if args.claims else load_dataset("scifact", "train").queries()
    if len(queries) < args.large:
        parser.error(f"--large {args.large} exceeds the {len(queries)} claims")
    previous: list[dict] = []
    rows_file = RESULTS / NAME / "rows.jsonl.gz"
    if args.keep_rows and rows_file.is_file():
        with gzip.open(rows_file, "rt") as f:
            previous = [json.loads(line) for line in f]

    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    t0 = time.process_time()
    passages, origins = make_corpus(max(sizes), args.seed, args.originals)
    corpus_cpu = time.process_time() - t0
    print(f"corpus of {len(passages):,} passages in {corpus_cpu:.0f} s CPU", file=sys.stderr, flush=True)

    # real vectors: the demo index's SciFact vectors when given, and encoded samples of each source
    encoder = make_encoder(DenseConfig().encoder)
    sentence_encoder = fp32_onnx_encoder()  # what index_sentences embeds sentences with by default
    pools: dict[str, Pool] = {}
    rates: dict[str, tuple[float, float]] = {}
    for source in ("scifact", "multifc"):
        members = [i for i, o in enumerate(origins) if o.source == source and o.perm is None]
        if not members:
            continue
        step = max(1, len(members) // args.encode_sample)
        sample = [passages[i] for i in members[::step][: args.encode_sample]]
        encoded = encode_pool(sample, encoder, sentence_encoder)
        rates[source] = (encoded.passage_rate or 0.0, encoded.sentence_rate or 0.0)
        pools[source] = encoded
        if source == "scifact" and args.vectors_from and args.vectors_from.exists():
            scifact = [passages[i] for i in members]
            full = index_pool(args.vectors_from, scifact) if len(members) == 5183 else None
            if full is not None:
                full.passage_rate, full.sentence_rate = encoded.passage_rate, encoded.sentence_rate
                pools[source] = full
        print(
            f"{source}: {len(pools[source].ids)} real passage vectors; encoding rate {rates[source][0]:.1f}"
            f" passages/s, {rates[source][1]:.1f} sentences/s (CPU)",
            file=sys.stderr,
            flush=True,
        )
    names = list(pools)
    p_matrix = np.concatenate([pools[n].vectors for n in names])
    s_matrix = np.concatenate([np.asarray(pools[n].sentences.vectors, dtype=np.float16) for n in names])
    pools = {n: pools[n] for n in names}
    sentence_encoder = pools[names[0]].sentences.encoder
    if any(pools[n].sentences.encoder != sentence_encoder for n in names):
        raise SystemExit("the pools' sentence vectors come from different encoders")

    work = args.work or Path(tempfile.mkdtemp(prefix="scale-check-"))
    work.mkdir(parents=True, exist_ok=True)
    claim_files = {}
    for n in (args.small, args.large):
        claim_files[n] = work / f"claims-{n}.jsonl"
        write_queries(claim_files[n], queries[:n])
    rows: list[dict] = []
    try:
        for size in sizes:
            part, part_origins = passages[:size], origins[:size]
            rng = np.random.default_rng((args.seed, size))  # both kinds of a size share its vectors
            t = time.process_time()
            store = PassageStore(part)
            store_cpu = time.process_time() - t
            t = time.process_time()
            bm25 = Bm25Retriever.build(store, Bm25Config())
            bm25_cpu = time.process_time() - t
            t = time.process_time()
            spans = [sentence_spans(p.text) for p in part]
            split_cpu = time.process_time() - t
            p_rows, p_synth, s_rows, s_synth = vector_plan(part, part_origins, pools, spans)
            pointers = np.zeros(size + 1, dtype=np.int64)
            pointers[1:] = np.cumsum([len(s) for s in spans])
            flat = [ab for s in spans for ab in s]
            sentence_data = SentenceData(
                pointers=pointers,
                spans=np.asarray(flat, dtype=np.int32).reshape(-1, 2),
                vectors=realise(s_matrix, s_rows, s_synth, args.noise, rng, np.float16),
                encoder=sentence_encoder,
            )
            del flat, spans
            n_sentences = len(s_rows)
            by_source = {s: sum(o.source == s for o in part_origins) for s in pools}
            s_by_source: dict[str, int] = {}
            for o, a, b in zip(part_origins, pointers[:-1], pointers[1:], strict=True):
                s_by_source[o.source] = s_by_source.get(o.source, 0) + int(b - a)
            sentence_encode_est = sum(s_by_source.get(s, 0) / rates[s][1] for s in rates)
            passage_encode_est = sum(by_source[s] / rates[s][0] for s in rates)
            common = {
                "passages": size,
                "sentences": n_sentences,
                "synthetic_passage_vectors": int(p_synth.sum()),
                "synthetic_sentence_vectors": int(s_synth.sum()),
                "copies": sum(o.perm is not None for o in part_origins),
                "measured": started,
                "claims": [args.small, args.large],
                "noise": args.noise,
            }
            for kind in kinds:
                row = {**common, "kind": kind}
                est = hnsw_estimate(rows + previous, size) if kind == "hybrid" else None
                if kind == "hybrid" and size >= DenseConfig().exact_below and est and est > args.max_hnsw_minutes * 60:
                    rate = size / est
                    row["skipped"] = (
                        f"HNSW build estimated at {est / 60:.0f} min CPU ({rate:,.0f} vectors/s, n log n from the"
                        f" largest HNSW build measured) > {args.max_hnsw_minutes:.0f} min"
                    )
                    rows.append(row)
                    print(f"{size:,} {kind}: {row['skipped']}", file=sys.stderr, flush=True)
                    continue
                build_cpu = store_cpu + bm25_cpu + split_cpu
                retriever: Any = bm25
                encode_est = sentence_encode_est
                if kind == "hybrid":
                    config = DenseConfig()
                    vectors = realise(p_matrix, p_rows, p_synth, args.noise, rng, np.float32)
                    t, w = time.process_time(), time.perf_counter()
                    index = DenseRetriever._make_index(vectors, config)
                    row["faiss_cpu_s"] = time.process_time() - t
                    row["faiss_wall_s"] = time.perf_counter() - w
                    row["index_type"] = "HNSW" if size >= config.exact_below else "flat"
                    build_cpu += row["faiss_cpu_s"]
                    encode_est += passage_encode_est
                    dense = DenseRetriever(store, vectors, index, config, encoder)
                    retriever = HybridRetriever(bm25, dense, HybridConfig())
                target = work / f"{kind}-{size}"
                t = time.process_time()
                save_index(retriever, target, sentences=sentence_data)
                row["save_cpu_s"] = time.process_time() - t
                row["build_cpu_s"] = build_cpu + row["save_cpu_s"]
                row["bm25_cpu_s"] = bm25_cpu
                row["split_cpu_s"] = split_cpu
                row["encode_estimate_s"] = encode_est
                row["disk_bytes"] = disk_bytes(target)
                retriever = index = vectors = dense = None  # free before the child processes load it
                row.update(measure_load(target))
                row.update(measure_check(target, claim_files, work))
                shutil.rmtree(target, ignore_errors=True)
                rows.append(row)
                print(
                    f"{size:,} {kind}: build {row['build_cpu_s']:.0f} s CPU, {row['disk_bytes'] / 2**20:,.0f} MiB,"
                    f" loaded {row['loaded_rss'] / 2**20:,.0f} MiB, check {row['cpu_per_claim']:.3f} s CPU/claim,"
                    f" peak {row['check_peak_rss'] / 2**20:,.0f} MiB",
                    file=sys.stderr,
                    flush=True,
                )
            del store, sentence_data
    finally:
        if args.work is None:
            shutil.rmtree(work, ignore_errors=True)
    measured = {(r["passages"], r["kind"]) for r in rows}
    kept = [r for r in previous if (r["passages"], r["kind"]) not in measured]
    all_rows = sorted(kept + rows, key=lambda r: (r["passages"], KINDS.index(r["kind"])))
    write_predictions(NAME, "rows", all_rows)
    base = {s: sum(o.source == s and o.perm is None for o in origins) for s in ("scifact", "multifc")}
    text, headline = report(all_rows, args, rates, {n: len(p.ids) for n, p in pools.items()}, base, corpus_cpu)
    plot(all_rows, args.plot)
    headline["plot"] = str(args.plot.relative_to(ROOT)) if args.plot.is_relative_to(ROOT) else str(args.plot)
    publish(NAME, text, headline)


def report(
    rows: list[dict],
    args: argparse.Namespace,
    rates: dict,
    real: dict[str, int],
    base: dict[str, int],
    corpus_cpu: float,
) -> tuple[str, dict]:
    mib, gib = 2**20, 2**30
    table = []
    for r in rows:
        n = r["passages"]
        if "skipped" in r:
            table.append([f"{n:,}", r["kind"], *["-"] * 9, f"not run: {r['skipped']}"])
            continue
        index = r["kind"] if r["kind"] == "bm25" else f"hybrid ({r['index_type']})"
        table.append(
            [
                f"{n:,}",
                index,
                f"{r['cpu_per_claim']:.3f}",
                f"{r['wall_per_claim']:.3f}",
                f"{r['check_peak_rss'] / mib:,.0f}",
                f"{r['build_cpu_s']:,.0f}",
                f"{r['build_cpu_s'] / n * 1e6:,.0f}",
                f"{r['encode_estimate_s'] / 3600:,.1f}",
                f"{r['disk_bytes'] / gib:.2f} ({r['disk_bytes'] / n * 1e6 / gib:.2f})",
                f"{r['loaded_rss'] / mib:,.0f} ({r['loaded_rss'] / n * 1e6 / gib:.2f})",
                f"{r['synthetic_passage_vectors'] if r['kind'] == 'hybrid' else 0:,} / "
                f"{r['synthetic_sentence_vectors']:,} of {r['sentences']:,}",
                f"{r['copies']:,} perturbed copies; measured {r['measured']}",
            ]
        )
    header = [
        "passages",
        "index",
        "check CPU s / claim",
        "wall s / claim",
        "check peak RSS MiB",
        "build CPU s (no encoding)",
        "build CPU s per 1M",
        "encoding h at measured rate (est.)",
        "disk GiB (per 1M)",
        "loaded MiB (GiB per 1M)",
        "synthetic passage / sentence vectors",
        "notes",
    ]
    claims = args.claims.name if args.claims else "SciFact train claims"
    rate_text = "; ".join(f"{s} {p:.1f} passages/s and {q:.1f} sentences/s" for s, (p, q) in rates.items())
    sizes = ",".join(str(r["passages"]) for r in rows if r["kind"] == rows[0]["kind"])
    text = "\n".join(
        [
            "### Cost of `check` as the corpus grows (BM25 and hybrid indexes, 2 cores)",
            "",
            markdown_table(header, table),
            "",
            f"Passages: the {base.get('scifact', 0):,} SciFact abstracts, then the {base.get('multifc', 0):,} MultiFC"
            " snippets, then perturbed copies of those originals in turn (sentence order shuffled, each word but a sentence's last dropped with"
            f" probability {DROPOUT}, new ids): every size is a prefix of the next. Indexes are built with the"
            " project's API and written in its index format (passages, BM25, faiss, stored sentence offsets and"
            " float16 vectors; `factscout index` stores sentences for both kinds). **What is synthetic:** only"
            " vectors. Real ones: "
            + ", ".join(f"{v:,} {k} passages" for k, v in real.items())
            + " (SciFact: the demo hybrid index's vectors when all 5,183 are there; MultiFC: a sample encoded in"
            " this run); every other passage vector, and the sentence vectors of every other passage, is a"
            f" real vector of the same source (a copy's own original, else one drawn by position) plus Gaussian"
            f" noise of norm {args.noise}, renormalised. Sentence offsets, BM25, the faiss index (flat below"
            " 200,000 vectors, HNSW M=32, efConstruction 200 from 200,000: `DenseConfig.exact_below`) and every"
            " search are real. Build CPU covers the passage store, BM25, sentence splitting, faiss and saving;"
            " the encoding it skips is estimated separately from the CPU rates measured here on real samples"
            f" ({rate_text}; passage vectors with the index's MiniLM, sentences with check's int8 MiniLM).",
            "",
            f"check CPU per claim: the real CLI (`factscout check`, default settings) in fresh processes over the"
            f" first {args.small} and {args.large} {claims}, (CPU({args.large}) - CPU({args.small})) /"
            f" {args.large - args.small}, so start-up and model loading cancel out; wall likewise (the machine is"
            " shared: wall is noisier than CPU); peak RSS is the larger run's. Loaded memory: the RSS growth of a"
            " fresh process while it loads the index as `check` does (`load_index` and the stored sentence data;"
            " the memory-mapped sentence vectors count only as far as they are touched, i.e. not at all here).",
            "",
            *earlier(rows),
            f"On {machine()}; the corpus took {corpus_cpu:.0f} s CPU to assemble. Plot: `docs/scale_check.png`."
            f" Reproduce: `python benchmarks/scale_check.py --sizes {sizes} --kinds {args.kinds}"
            f" --small {args.small} --large {args.large}`.",
        ]
    )
    headline: dict[str, Any] = {"benchmark": NAME, "sizes": sorted({r["passages"] for r in rows})}
    for kind in KINDS:
        done = [r for r in rows if r["kind"] == kind and "skipped" not in r]
        if not done:
            continue
        top = max(done, key=lambda r: r["passages"])
        low = min(done, key=lambda r: r["passages"])
        headline[kind] = {
            "largest": top["passages"],
            "cpu_per_claim": round(top["cpu_per_claim"], 4),
            "cpu_per_claim_smallest": round(low["cpu_per_claim"], 4),
            "check_peak_rss_mib": round(top["check_peak_rss"] / mib),
            "disk_gib_per_million": round(top["disk_bytes"] / top["passages"] * 1e6 / gib, 3),
            "loaded_gib_per_million": round(top["loaded_rss"] / top["passages"] * 1e6 / gib, 3),
            "build_cpu_s_per_million": round(top["build_cpu_s"] / top["passages"] * 1e6),
        }
        skipped = [r for r in rows if r["kind"] == kind and "skipped" in r]
        if skipped:
            headline[kind]["skipped"] = {str(r["passages"]): r["skipped"] for r in skipped}
    return text, headline


def earlier(rows: list[dict]) -> list[str]:
    """A line naming the rows kept from earlier runs (``--keep-rows``), if any."""
    latest = max(r["measured"] for r in rows)
    old = [r for r in rows if r["measured"] != latest]
    if not old:
        return []
    listed = ", ".join(
        f"{r['passages']:,} {r['kind']} ({r['measured']}"
        + (f"; claims {r['claims'][0]} -> {r['claims'][1]}, noise {r['noise']})" if "claims" in r else ")")
        for r in old
    )
    return [f"Rows kept from an earlier run of this script (`--keep-rows`): {listed}.", ""]


def plot(rows: list[dict], path: Path) -> None:
    """Log-log panels: check CPU per claim, memory, build time and disk size against passages."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mib = 2**20
    panels = [
        ("check CPU s per claim (start-up excluded)", [("", lambda r: r["cpu_per_claim"])]),
        (
            "memory, MiB",
            [
                (" check peak RSS", lambda r: r["check_peak_rss"] / mib),
                (" index loaded", lambda r: r["loaded_rss"] / mib),
            ],
        ),
        ("index build CPU s (encoding excluded)", [("", lambda r: r["build_cpu_s"])]),
        ("index on disk, MiB", [("", lambda r: r["disk_bytes"] / mib)]),
    ]
    colours = {"bm25": "tab:blue", "hybrid": "tab:orange"}
    fig, axes = plt.subplots(2, 2, figsize=(9.5, 7.5))
    for ax, (title, series) in zip(axes.flat, panels, strict=True):
        for kind in KINDS:
            done = sorted((r for r in rows if r["kind"] == kind and "skipped" not in r), key=lambda r: r["passages"])
            if not done:
                continue
            xs = [r["passages"] for r in done]
            for (label, value), style in zip(series, ("o-", "s:"), strict=False):
                ys = [max(value(r), 1e-6) for r in done]
                ax.plot(xs, ys, style, color=colours[kind], label=kind + label)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("passages in the index")
        ax.set_title(title, fontsize=10)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(
        "factscout check cost vs corpus size (2 shared cores; hybrid: flat faiss below 200k, HNSW from 200k)",
        fontsize=10,
    )
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


if __name__ == "__main__":
    main()
