"""``benchmarks/rewriting_grid.py`` runs end to end on a tiny split and publishes its table."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ranker_world

from factscout.formats.beir import write_corpus, write_queries
from factscout.records import Query

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # a benchmark script run end to end (over 20 s): kept out of make test-fast
def test_grid_on_a_tiny_split(tmp_path):
    passages, claims, qrels = ranker_world()
    write_corpus(tmp_path / "corpus.jsonl", passages)
    write_queries(tmp_path / "claims.jsonl", [Query(c.claim_id, c.claim_id, c.text) for c in claims])
    (tmp_path / "qrels.tsv").write_text(
        "query-id\tcorpus-id\tscore\n" + "".join(f"{q}\t{p}\t1\n" for q, ps in qrels.items() for p in ps)
    )
    (tmp_path / "held.txt").write_text("\n".join(c.claim_id for c in claims[30:]))
    results = tmp_path / "results"
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "FACTSCOUT_BENCHMARK_RESULTS": str(results)}
    args = ["--claims", tmp_path / "claims.jsonl", "--corpus", tmp_path / "corpus.jsonl", "--qrels",
            tmp_path / "qrels.tsv", "--heldout", tmp_path / "held.txt", "--retrievers", "bm25-and,bm25-plain", "--trees", "20"]  # fmt: skip
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "rewriting_grid.py"), *map(str, args)],
        env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    headline = json.loads(done.stdout.strip().splitlines()[-1])
    assert headline["custom_bm25-and_claim"] == 0.0  # the whole claim matches nothing
    assert headline["custom_bm25-and_ranker"] >= 0.9
    assert headline["custom_bm25-and_candidate_oracle"] >= headline["custom_bm25-and_ranker"]
    assert "custom_bm25-plain_ranker" in headline
    assert {"custom_bm25-and_random_edit", "custom_bm25-and_stopwords"} <= set(headline)
    assert headline["custom_bm25-and_best_keyword"] >= headline["custom_bm25-and_stopwords"]
    table = (results / "rewriting_grid.md").read_text()
    assert "| custom | bm25-and |" in table and "Reproduce:" in table
    assert "stop-word removal 0." in table and "random edit (1 edit, seed 0)" in table

    baselines = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "rewriting_grid.py"), *map(str, args), "--no-ranker",
         "--name", "grid_baselines"],
        env=env, capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    assert baselines.returncode == 0, baselines.stderr[-3000:]
    only = json.loads(baselines.stdout.strip().splitlines()[-1])
    assert not any(k.endswith(("_ranker", "_candidate_oracle")) for k in only)
    for k in ("claim", "random_edit", "stopwords", "best_keyword"):  # the same claims, the same baselines
        assert only[f"custom_bm25-and_{k}"] == headline[f"custom_bm25-and_{k}"]
    assert "Baselines only" in (results / "grid_baselines.md").read_text()
