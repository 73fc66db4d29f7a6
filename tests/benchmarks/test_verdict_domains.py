"""``benchmarks/verdict_domains.py`` (issue 38, item 2): the definite-call figures by hand, and the
script end to end on three Check-COVID claims given as a file (BM25 closed pool, the stance head),
publishing its table, predictions and manifest into a temporary results folder."""

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

import verdict_domains  # noqa: E402  (benchmarks/ is not a package)

S, R, N = "supported", "refuted", "not enough evidence"


def test_definite_calls_count_precision_over_calls_and_coverage_over_gold_definite_claims():
    gold = [S, R, N, S, N]
    pred = [S, S, R, N, N]  # calls: right on claim 1, wrong on 2, a call on a gold NEI claim (3)
    assert verdict_domains.definite_calls(gold, pred) == (3, pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert verdict_domains.definite_calls([S, N], [N, N]) == (0, None, 0.0)
    assert verdict_domains.definite_calls([N], [S]) == (1, 0.0, 0.0)  # no gold-definite claim to cover


def test_k_lists_parse_sorted_and_reject_bad_values():
    assert verdict_domains.parse_ks("5") == [5]
    assert verdict_domains.parse_ks("5,1, 3,5") == [1, 3, 5]
    for bad in ("", "0", "a,3"):
        with pytest.raises(SystemExit):
            verdict_domains.parse_ks(bad)


@pytest.mark.slow
@pytest.mark.dataset
@pytest.mark.encoder
def test_the_script_checks_a_claims_file_against_the_closed_pool_and_publishes(tmp_path):
    from factscout.datasets import data_root

    dev = data_root() / "check-covid" / "dev" / "covidCheck_dev_composed+extracted.json"
    rows = dev.read_text().splitlines()[:4]
    (tmp_path / "claims.json").write_text("\n".join(rows) + "\n")
    results = tmp_path / "results"
    env = {**os.environ, "FACTSCOUT_BENCHMARK_RESULTS": str(results), "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "verdict_domains.py"), "--domains", "checkcovid"]
    cmd += ["--checkcovid-claims", str(tmp_path / "claims.json"), "--limit", "3", "--retriever", "bm25"]
    cmd += ["--stance", "head", "--k", "1,3", "--cache", str(tmp_path / "cache"), "--name", "vd"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    headline = json.loads(done.stdout.strip().splitlines()[-1])
    assert headline["claims"] == {"checkcovid": 3} and headline["k"] == [1, 3]
    assert set(headline["macro_f1"]["checkcovid"]) == {"majority", "head@1", "head@3"}
    assert all(0.0 <= f <= 1.0 for f in headline["macro_f1"]["checkcovid"].values())
    table = (results / "vd.md").read_text()
    assert "### Check-COVID claims.json: 3 claims" in table and "347 passages, bm25 index built" in table
    assert "| factscout check, stance `head` | 3 |" in table and "Reproduce:" in table
    with gzip.open(results / "vd" / "checkcovid-head-k3.jsonl.gz", "rt") as f:
        predicted = [json.loads(line) for line in f]
    assert [p["claim_id"] for p in predicted] == [json.loads(r)["id"] for r in rows[:3]]
    manifest = json.loads((results / "vd" / "manifest.json").read_text())
    assert manifest["headline"] == headline
    assert (tmp_path / "cache" / "checkcovid-bm25" / "CURRENT").is_file()
