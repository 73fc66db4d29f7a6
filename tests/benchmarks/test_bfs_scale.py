"""``benchmarks/bfs_scale.py`` runs the CLI steps on a tiny split, tops the real claims up with
pseudo-claims, resumes, and publishes its table."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ranker_world

from factscout.formats.beir import read_claims, write_corpus, write_queries
from factscout.records import Passage, Query

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a benchmark script run end to end (over 20 s): kept out of make test-fast
def test_bfs_scale_on_a_tiny_split_resumes_and_counts_every_part(tmp_path):
    passages, claims, qrels = ranker_world()
    topics = ["vitamin D", "aspirin", "statins", "metformin", "zinc", "coffee"]
    studies = [  # passages of two claim-like sentences: the ones pseudo-claims can come from
        Passage(
            f"s{i}",
            f"s{i}",
            "",
            f"Daily {t} intake lowers the risk of heart failure in adults over sixty years old. "
            f"Patients taking {t} reported fewer hospital visits than the control group did in cohort {i}.",
        )
        for i, t in enumerate(topics)
    ]
    write_corpus(tmp_path / "corpus.jsonl", [*passages, *studies])
    write_queries(tmp_path / "claims.jsonl", [Query(c.claim_id, c.claim_id, c.text) for c in claims])
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, ps in qrels.items() for p in ps)
    )
    held = {c.claim_id for c in claims[30:]}
    (tmp_path / "held.txt").write_text("\n".join(sorted(held)))
    work, results = tmp_path / "work", tmp_path / "results"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FACTSCOUT_BENCHMARK_RESULTS": str(results)}
    args = ["--datasets", "custom", "--claims", tmp_path / "claims.jsonl", "--corpus", tmp_path / "corpus.jsonl",
            "--qrels", tmp_path / "qrels.tsv", "--heldout", tmp_path / "held.txt", "--work", work,
            "--target", "34", "--workers", "1", "--depth", "2"]  # fmt: skip

    def bench() -> dict:
        done = subprocess.run(
            [sys.executable, str(ROOT / "benchmarks" / "bfs_scale.py"), *map(str, args)],
            env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
        return json.loads(done.stdout.strip().splitlines()[-1])

    first = bench()
    real = [c.claim_id for c in read_claims(work / "custom" / "real" / "queries.jsonl")]
    assert len(real) == 30 and not held & set(real)  # held-out claims are never searched
    pseudo = list(read_claims(work / "custom" / "ict" / "queries.jsonl"))
    assert first["real_claims"] == 30 and first["pseudo_claims"] == len(pseudo) > 0
    assert first["claims_planned"] == 30 + len(pseudo) and first["candidates"] > 0
    assert first["complete"] == (first["claims_planned"] >= 34)
    manifest = work / "custom" / "real" / "traj-bm25-plain.claims.jsonl"
    lines = manifest.read_text().splitlines()
    assert len(lines) == 30
    again = bench()  # everything is on disk: nothing is searched twice
    assert manifest.read_text().splitlines() == lines
    assert {k: again[k] for k in ("claims_searched", "candidates")} == {
        k: first[k] for k in ("claims_searched", "candidates")
    }
    table = (results / "bfs_scale_bm25_plain.md").read_text()
    assert "| custom real | 30 | 30 |" in table and "| custom pseudo |" in table and "Reproduce" in table


def test_water_fill_passes_a_small_corpus_shortfall_to_the_larger_ones(monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bfs_scale import water_fill

    capacity = {"covidfact": 41, "checkthat2022": 12929, "averitec": 2184, "scifact": 5101}
    asks = water_fill(12430, capacity)
    assert asks == {"covidfact": 41, "averitec": 2184, "scifact": 5101, "checkthat2022": 5104}
    assert sum(asks.values()) == 12430
    assert water_fill(10**6, {"a": 3, "b": 4}) == {"a": 3, "b": 4}  # short of the target: all there is
    assert water_fill(0, {"a": 5}) == {"a": 0}


def test_a_stopped_run_counts_the_cpu_of_workers_nobody_reaps(monkeypatch):
    """A BFS stopped by ``--minutes`` leaves its workers unreaped: ``RUSAGE_CHILDREN`` misses their
    CPU time, the sampled process tree does not."""
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    from bfs_scale import run

    burn = "import time\nt = time.process_time()\nwhile time.process_time() - t < 30: pass"
    parent = f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {burn!r}])\ntime.sleep(60)"
    finished, wall, cpu = run([sys.executable, "-c", parent], timeout=5)
    assert not finished and 5 <= wall < 60
    assert cpu >= 1.0  # the orphaned worker burned CPU for ~5 s; only the parent (~0.05 s) is reaped
