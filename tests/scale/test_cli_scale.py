"""``--shards`` and ``--ray`` through the command line, on the real scifact_mini fixture."""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.datasets import load_dataset
from factscout.formats.beir import write_corpus, write_queries

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    root = tmp_path_factory.mktemp("mini")
    ds = load_dataset("scifact_mini")
    write_corpus(root / "corpus.jsonl", ds.corpus)
    write_queries(root / "queries.jsonl", ds.queries())
    r = invoke("index", "--corpus", root / "corpus.jsonl", "--index", root / "bm25")
    assert r.exit_code == 0, r.output
    r = invoke("search", "--index", root / "bm25", "--queries", root / "queries.jsonl", "--run", root / "bm25.trec")
    assert r.exit_code == 0, r.output
    return root


def test_sharded_index_gives_the_single_index_run(mini, tmp_path):
    r = invoke("index", "--corpus", mini / "corpus.jsonl", "--index", tmp_path / "idx", "--shards", "3")
    assert r.exit_code == 0 and "with sharded" in r.output, r.output
    r = invoke("search", "--index", tmp_path / "idx", "--queries", mini / "queries.jsonl", "--run", tmp_path / "r.trec")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "r.trec").read_text() == (mini / "bm25.trec").read_text()


def test_ray_search_needs_a_sharded_index(mini):
    r = invoke("search", "--index", mini / "bm25", "--query", "vitamin", "--ray", "auto")
    assert r.exit_code == 2 and "--ray searches a sharded index" in r.output


def test_shards_need_bm25(mini, tmp_path):
    r = invoke(
        "index", "--corpus", mini / "corpus.jsonl", "--index", tmp_path / "i", "--retriever", "dense", "--shards", "2"
    )
    assert r.exit_code == 2 and "--shards N (N >= 1) shards a BM25 index" in r.output


@pytest.mark.ray
def test_index_and_search_on_ray(mini, tmp_path, ray_cluster):
    address = ray_cluster.address
    r = invoke(
        "index", "--corpus", mini / "corpus.jsonl", "--index", tmp_path / "idx", "--shards", "2", "--ray", address
    )
    assert r.exit_code == 0, r.output
    r = invoke(
        "search",
        "--index",
        tmp_path / "idx",
        "--queries",
        mini / "queries.jsonl",
        "--run",
        tmp_path / "r.trec",
        "--ray",
        address,
    )
    assert r.exit_code == 0 and "partial" not in r.output, r.output
    assert (tmp_path / "r.trec").read_text() == (mini / "bm25.trec").read_text()


@pytest.mark.ray
def test_check_on_ray_writes_the_single_process_reports(mini, tmp_path, ray_cluster):
    """Same claims, verdicts, evidence, ranks and sentences; model probabilities equal up to float
    rounding (Ray workers run ONNX Runtime and torch with their own thread counts)."""
    lines = (mini / "queries.jsonl").read_text().splitlines()[:4]
    (tmp_path / "claims.jsonl").write_text("\n".join(lines) + "\n")
    common = ["check", "--index", mini / "bm25", "--claims", tmp_path / "claims.jsonl", "--planner", "claim"]
    r = invoke(*common, "--passages", "2", "--out", tmp_path / "local.jsonl")
    assert r.exit_code == 0, r.output
    r = invoke(*common, "--passages", "2", "--out", tmp_path / "ray.jsonl", "--ray", ray_cluster.address)
    assert r.exit_code == 0, r.output
    local, remote = (
        [json.loads(x) for x in (tmp_path / f).read_text().splitlines()] for f in ("local.jsonl", "ray.jsonl")
    )
    assert len(local) == len(remote) == 4
    for a, b in zip(local, remote, strict=True):
        assert _close(a, b)


def _close(a: object, b: object) -> bool:
    """Equal, floats within 1e-5."""
    if isinstance(a, float) and isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-5)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    return a == b
