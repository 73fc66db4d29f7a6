"""Scale-out on a real two-node local Ray cluster (tests/scale/conftest.py): jobs and sharded
search give the single-process output, also after a worker or a shard actor is killed."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import time
from pathlib import Path

import pytest
from helpers import BFS_CLAIMS, bfs_environment

import factscout.scale  # noqa: F401  (registers the Ray backends the library calls below ask for)
from factscout.records import Query
from factscout.retrieve import build_retriever, load_index, save_index
from factscout.retrieve.index import read_manifest
from factscout.retrieve.sharded import shard_of
from factscout.rewrite import BfsConfig, generate_trajectories

CLAIMS, make_env = BFS_CLAIMS, bfs_environment

pytestmark = pytest.mark.ray

QUERIES = [
    Query("a", "a", "vaccine trial efficacy"),
    Query("b", "b", "report"),
    Query("c", "c", "unemployment jobs report"),
    Query("d", "d", "housing prices rise"),
]
DAY = dt.date(2021, 1, 15)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:  # gone between the two looks
        return False
    return state != "Z"


def _dies(pid: int, within: float = 30.0) -> bool:
    """The killed process is gone (or a zombie) within ``within`` seconds: SIGKILL is not instant
    when the process is in the kernel, and the job can finish first."""
    deadline = time.monotonic() + within
    while _alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def test_bfs_on_ray_survives_a_killed_worker_and_writes_the_single_process_file(ray_cluster, tmp_path):
    config = BfsConfig()
    claims = CLAIMS * 1
    generate_trajectories(claims, make_env(), tmp_path / "local.jsonl", config)
    killed: list[int] = []

    def kill_a_worker(_result: object) -> None:  # after the first claim: kill a busy or idle BFS actor
        if not killed:
            pid = ray_cluster.processes("ray::Worker")[0]
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)

    summary = generate_trajectories(
        claims, make_env(), tmp_path / "ray.jsonl", config, ray=ray_cluster.address, workers=2, on_claim=kill_a_worker
    )
    assert summary.claims == len(claims) and killed and _dies(killed[0])
    for name in ("ray.jsonl", "ray.claims.jsonl"):
        assert (tmp_path / name).read_bytes() == (tmp_path / name.replace("ray", "local")).read_bytes()


@pytest.fixture(scope="module")
def sharded_index(ray_cluster, tiny_corpus, tmp_path_factory):
    """A 3-shard index of the tiny corpus, its shards built as Ray tasks on the cluster."""
    path = tmp_path_factory.mktemp("sharded") / "idx"
    built = build_retriever(tiny_corpus, "sharded", {"sharded": {"shards": 3, "ray": ray_cluster.address}})
    save_index(built, path)
    return path


def test_shards_built_on_ray_equal_the_single_index(sharded_index, tiny_corpus):
    single = build_retriever(tiny_corpus, "bm25")
    local = load_index(sharded_index)
    for before in (None, DAY):
        assert local.search(QUERIES, 5, published_before=before) == single.search(QUERIES, 5, published_before=before)


def test_shard_actors_restart_and_a_shard_that_cannot_come_back_makes_results_partial(
    sharded_index, ray_cluster, tiny_corpus, tmp_path
):
    single = build_retriever(tiny_corpus, "bm25")
    copy = tmp_path / "idx"
    shutil.copytree(sharded_index, copy)
    remote = load_index(copy, ray=ray_cluster.address)
    expected = single.search(QUERIES, 6, published_before=DAY)
    assert remote.search(QUERIES, 6, published_before=DAY) == expected
    # a killed shard actor: Ray restarts it (it reloads its folder) and retries the query
    pids = remote.pool.pids()
    os.kill(pids[1], signal.SIGKILL)
    after = remote.search(QUERIES, 6, published_before=DAY)
    assert after == expected and not any(r.partial for r in after)
    assert remote.pool.pids()[1] not in (None, pids[1])
    # a shard whose folder is gone cannot restart: its hits are missing and every ranking says so
    full = single.search(QUERIES, 12)
    gen, _ = read_manifest(copy)
    shutil.rmtree(gen / "sharded" / "shard-002")
    os.kill(remote.pool.pids()[2], signal.SIGKILL)
    rankings = remote.search(QUERIES, 12)
    assert all(r.partial and r.missing_shards == ("shard-002",) for r in rankings)
    for got, whole in zip(rankings, full, strict=True):
        assert [h.passage_id for h in got.hits] == [h.passage_id for h in whole.hits if shard_of(h.passage_id, 3) != 2]
    assert len({shard_of(p.passage_id, 3) for p in tiny_corpus}) == 3  # every shard holds passages
    remote.pool.close()
