"""``benchmarks/scale_check.py`` (issue 18, item 5) at tiny sizes, so the script cannot rot: it builds
BM25 and hybrid indexes over 200 and 400 passages (100 SciFact abstracts, 100 MultiFC snippets and
200 perturbed copies), runs the real ``check`` CLI on them and publishes the table, the rows, the
manifest and the plot into a temporary results folder."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import scale_check  # noqa: E402  (benchmarks/ is not a package)

pytestmark = pytest.mark.slow


def test_a_copy_shuffles_sentences_and_drops_words_but_keeps_each_sentence_end():
    import random

    from factscout.records import Passage

    original = Passage("d1", "d1", "T", "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu.")
    copy, perm = scale_check.perturbed(original, 2, random.Random(0))
    assert copy.passage_id == "d1#copy2" and copy.title == "T"
    assert sorted(perm) == [0, 1, 2]
    assert {w for w in copy.text.split()} <= {w for w in original.text.split()}
    for end in ("delta.", "theta.", "mu."):
        assert end in copy.text.split()
    # the sentence order follows perm
    ends = [w for w in copy.text.split() if w.endswith(".")]
    assert ends == [["delta.", "theta.", "mu."][j] for j in perm]


def test_noisy_copies_are_unit_vectors_near_their_source():
    import numpy as np

    rng = np.random.default_rng(0)
    v = rng.standard_normal((50, 384)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    out = scale_check.noisy(v, 0.5, rng)
    assert np.allclose(np.linalg.norm(out, axis=1), 1, atol=1e-5)
    cos = (out * v).sum(axis=1)
    assert 0.8 < cos.mean() < 0.95  # 1 / sqrt(1 + 0.5**2) = 0.894
    assert not np.allclose(out, v)


def test_hnsw_estimate_scales_n_log_n_from_the_largest_build():
    rows = [
        {"index_type": "flat", "faiss_cpu_s": 1.0, "passages": 5000},
        {"index_type": "HNSW", "faiss_cpu_s": 100.0, "passages": 200_000},
    ]
    est = scale_check.hnsw_estimate(rows, 1_000_000)
    assert est == pytest.approx(100 * 5 * (13.8155 / 12.2061), rel=1e-3)
    assert scale_check.hnsw_estimate(rows[:1], 1_000_000) is None


@pytest.mark.dataset
def test_the_script_runs_at_tiny_sizes_and_publishes_table_rows_manifest_and_plot(tmp_path):
    results, plot = tmp_path / "results", tmp_path / "scale.png"
    env = {**os.environ, "FACTSCOUT_BENCHMARK_RESULTS": str(results), "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "scale_check.py"), "--sizes", "200,400", "--originals", "100"]
    cmd += ["--encode-sample", "6", "--small", "1", "--large", "2", "--vectors-from", str(tmp_path / "none")]
    cmd += ["--work", str(tmp_path / "work"), "--plot", str(plot)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    headline = json.loads(done.stdout.strip().splitlines()[-1])
    assert headline["sizes"] == [200, 400]
    assert headline["bm25"]["largest"] == 400 and headline["hybrid"]["largest"] == 400
    table = (results / "scale_check.md").read_text()
    assert "| 400 | hybrid (flat) |" in table and "| 200 | bm25 |" in table
    with gzip.open(results / "scale_check" / "rows.jsonl.gz", "rt") as f:
        rows = [json.loads(line) for line in f]
    assert [(r["passages"], r["kind"]) for r in rows] == [
        (200, "bm25"),
        (200, "hybrid"),
        (400, "bm25"),
        (400, "hybrid"),
    ]
    for r in rows:
        assert r["disk_bytes"] > 0 and r["build_cpu_s"] > 0 and r["loaded_rss"] > 0
        assert r["check_cpu_large"] > 0 and r["check_peak_rss"] > 100 * 2**20  # the check process's own peak
        assert r["copies"] == (200 if r["passages"] == 400 else 0)
        # 6 real vectors per source, every other one synthetic
        assert r["synthetic_sentence_vectors"] < r["sentences"]
    hybrid = [r for r in rows if r["kind"] == "hybrid"]
    assert [r["synthetic_passage_vectors"] for r in hybrid] == [200 - 12, 400 - 12]
    assert all(r["index_type"] == "flat" for r in hybrid)
    manifest = json.loads((results / "scale_check" / "manifest.json").read_text())
    assert manifest["headline"]["sizes"] == [200, 400]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not (tmp_path / "work" / "bm25-400").exists()  # indexes are deleted once measured
