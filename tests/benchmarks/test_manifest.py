"""Reproducible benchmarks (issue 19, item 7): ``benchmarks/_common.py`` records every run (package
versions, git commit, data sha256s, machine, command, times, headline) beside its run files, and
``tools/update_readme.py`` links only the manifests that exist. A real benchmark (``endpoints.py``) runs
on a tiny BEIR fixture in a subprocess and its TREC runs reproduce the figures it published."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from factscout.evaluate import evaluate
from factscout.formats.jsonl import read_jsonl
from factscout.formats.trec import read_run
from factscout.records import Hit, Ranking

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ROOT / "benchmarks"
sys.path.insert(0, str(BENCHMARKS))
sys.path.insert(0, str(ROOT / "tools"))

import _common  # noqa: E402  (benchmarks/ is not a package)
import update_readme  # noqa: E402  (tools/ is not a package either)

FIELDS = {
    "format", "name", "command", "argv", "started", "finished", "seconds", "python", "packages", "git",
    "machine", "data", "run_files", "headline",
}  # fmt: skip


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def record(tmp_path, monkeypatch):
    """A fresh run record fed by the real audit hook, over a private data folder."""
    data = tmp_path / "data"
    (data / "set").mkdir(parents=True)
    run = _common.RunRecord(
        argv=["benchmarks/fake.py", "--flag", "x y"], data_folders=[data], cache=_common.HashCache("")
    )
    monkeypatch.setattr(_common, "RUN", run)
    return run, data, tmp_path / "results"


def test_the_manifest_has_every_field_and_hashes_each_data_file_read(record):
    _, data, results = record
    corpus, unused = data / "set" / "corpus.jsonl", data / "set" / "unused.jsonl"
    corpus.write_text('{"_id": "d1", "text": "a"}\n')
    unused.write_text("{}\n")
    with open(corpus, encoding="utf-8") as f:  # read: recorded by the audit hook
        f.read()
    for _ in range(2):  # written (the second time over an existing file), never read: not a data file
        with open(data / "set" / "written.txt", "w") as f:
            f.write("x")
    fd = os.open(data / "set" / "written.txt", os.O_WRONLY | os.O_APPEND)
    os.close(fd)
    with gzip.open(data / "set" / "packed.jsonl.gz", "wt") as f:
        f.write("{}\n")
    with gzip.open(data / "set" / "packed.jsonl.gz", "rt") as f:
        f.read()
    _common.write_trec_run("fake", "BM25 (k1=0.9, b=0.4)", [Ranking("q1", (Hit("d1", 2.0, 1),))], results=results)
    path = _common.publish("fake", "| a |\n|---|\n| 1 |", {"benchmark": "fake", "score": 0.5}, results=results)

    assert path == results / "fake" / "manifest.json"
    assert (results / "fake.md").read_text().startswith("| a |")
    m = json.loads(path.read_text())
    assert set(m) == FIELDS and m["format"] == "factscout-benchmark-manifest/1"
    assert m["command"] == "python benchmarks/fake.py --flag 'x y'" and m["argv"][1:] == ["--flag", "x y"]
    assert m["started"] <= m["finished"] and m["seconds"] >= 0
    assert m["python"]["version"].count(".") == 2
    assert m["packages"]["numpy"] and "ir-measures" in m["packages"]
    assert len(m["git"]["commit"]) == 40 and isinstance(m["git"]["dirty"], bool)
    assert m["machine"]["cores"] >= 1 and m["machine"]["ram_bytes"] > 2**20 and m["machine"]["cpu"]
    assert m["data"] == [
        {"path": "set/corpus.jsonl", "kind": "data", "bytes": corpus.stat().st_size, "sha256": sha256(corpus)},
        {
            "path": "set/packed.jsonl.gz",
            "kind": "data",
            "bytes": (data / "set" / "packed.jsonl.gz").stat().st_size,
            "sha256": sha256(data / "set" / "packed.jsonl.gz"),
        },
    ]
    trec = results / "fake" / "bm25-k1=0.9-b=0.4.trec.gz"
    assert m["run_files"] == [
        {"path": trec.name, "format": "trec", "bytes": trec.stat().st_size, "sha256": sha256(trec)}
    ]
    assert m["headline"] == {"benchmark": "fake", "score": 0.5}


def test_data_files_are_hashed_once_per_path_mtime_and_size(tmp_path):
    cache_file = tmp_path / "cache.json"
    f = tmp_path / "a.txt"
    f.write_text("one")
    cache = _common.HashCache(cache_file)
    assert cache.sha256(f) == cache.sha256(f) == hashlib.sha256(b"one").hexdigest()
    assert cache.computed == 1
    cache.save()
    again = _common.HashCache(cache_file)
    assert again.sha256(f) == hashlib.sha256(b"one").hexdigest() and again.computed == 0  # from the disk cache
    f.write_text("changed")
    os.utime(f, ns=(f.stat().st_atime_ns, f.stat().st_mtime_ns + 10**9))
    assert again.sha256(f) == hashlib.sha256(b"changed").hexdigest() and again.computed == 1


def test_run_files_are_valid_trec_and_jsonl(record):
    _, _, results = record
    rankings = [Ranking("q1", (Hit("d2", 3.5, 1), Hit("d1", 1.25, 2))), Ranking("q2", (Hit("d9", 0.5, 1),))]
    trec = _common.write_trec_run("fake", "bm25", rankings, results=results)
    lines = gzip.decompress(trec.read_bytes()).decode().splitlines()
    assert lines[0] == "q1 Q0 d2 1 3.500000 bm25" and len(lines) == 3
    assert all(len(line.split()) == 6 and line.split()[1] == "Q0" for line in lines)
    assert read_run(trec) == rankings  # factscout's TREC reader reads it back
    assert trec.read_bytes() == _common.write_trec_run("fake", "bm25", rankings, results=results).read_bytes()

    rows = [{"claim_id": "c1", "gold": "supported", "predicted": "refuted"}, {"claim_id": "c2", "predicted": None}]
    pred = _common.write_predictions("fake", "check k=5", rows, results=results)
    assert pred.name == "check-k=5.jsonl.gz"
    assert [row for _, row in read_jsonl(pred)] == rows
    with pytest.raises(ValueError, match="no letters or digits"):
        _common.run_label(" (); ")


def _tiny_beir(folder: Path) -> tuple[Path, Path, Path]:
    folder.mkdir(parents=True)
    docs = {
        "d1": "Folate deficiency raises homocysteine levels in the blood.",
        "d2": "Vitamin D supplements do not prevent falls in older adults.",
        "d3": "Aspirin lowers the risk of a second heart attack.",
        "d4": "Homocysteine and folate intake in a cohort of adults.",
        "d5": "Falls in the elderly and vitamin D levels: a trial.",
    }
    claims = {
        "c1": "Folate deficiency increases homocysteine",
        "c2": "Vitamin D prevents falls in the elderly",
        "c3": "Aspirin prevents heart attacks",
    }
    corpus, queries, qrels = folder / "corpus.jsonl", folder / "queries.jsonl", folder / "qrels.tsv"
    corpus.write_text("".join(json.dumps({"_id": d, "title": "", "text": t}) + "\n" for d, t in docs.items()))
    queries.write_text("".join(json.dumps({"_id": c, "text": t}) + "\n" for c, t in claims.items()))
    qrels.write_text("query-id\tcorpus-id\tscore\nc1\td1\t1\nc1\td4\t1\nc2\td2\t1\nc3\td3\t1\n")
    return queries, corpus, qrels


def test_a_benchmark_run_on_a_tiny_fixture_writes_its_manifest_and_runs(tmp_path):
    data, results = tmp_path / "data", tmp_path / "results"
    queries, corpus, qrels = _tiny_beir(data / "tiny")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        "FACTSCOUT_BENCHMARK_RESULTS": str(results),
        "FACTSCOUT_DATA": str(data),
        "FACTSCOUT_HASH_CACHE": "",
    }
    args = ["--claims", str(queries), "--corpus", str(corpus), "--qrels", str(qrels)]
    done = subprocess.run(
        [sys.executable, str(BENCHMARKS / "endpoints.py"), *args],
        env=env, capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    headline = json.loads(done.stdout.strip().splitlines()[-1])
    m = json.loads((results / "endpoints" / "manifest.json").read_text())
    assert set(m) == FIELDS and m["headline"] == headline
    assert m["command"] == "python benchmarks/endpoints.py " + " ".join(args)
    assert {(d["path"], d["sha256"]) for d in m["data"]} == {
        (f"tiny/{p.name}", sha256(p)) for p in (queries, corpus, qrels)
    }
    names = {f["path"] for f in m["run_files"]}
    assert names == {"bm25.trec.gz", "bm25-plain.trec.gz", "bm25-and.trec.gz"}
    for f in m["run_files"]:
        assert sha256(results / "endpoints" / f["path"]) == f["sha256"]
    # the run file gives back the published figure
    from factscout.formats.beir import read_qrels

    run = read_run(results / "endpoints" / "bm25.trec.gz")
    assert {r.query_id for r in run} == {"c1", "c2", "c3"}
    assert round(evaluate(read_qrels(qrels), run, ["nDCG@10"]).mean("nDCG@10"), 4) == headline["bm25_ndcg@10"]
    assert (results / "endpoints.md").is_file() and not (BENCHMARKS / "results" / "tiny").exists()


def test_update_readme_links_a_manifest_only_when_it_exists(tmp_path, monkeypatch):
    monkeypatch.setattr(update_readme, "RESULTS", tmp_path / "benchmarks" / "results")
    page = tmp_path / "docs" / "results.md"
    text = "| a |\n|---|\n| 1 |\n"
    assert update_readme.manifest_link("demo", page) is None
    assert update_readme.with_run_record("demo", text, page) == text  # no run record yet: no link
    (tmp_path / "benchmarks" / "results" / "demo").mkdir(parents=True)
    (tmp_path / "benchmarks" / "results" / "demo" / "manifest.json").write_text("{}")
    linked = update_readme.with_run_record("demo", text, page)
    assert "[manifest](../benchmarks/results/demo/manifest.json)" in linked
    assert update_readme.manifest_link("demo", tmp_path / "README.md") == "benchmarks/results/demo/manifest.json"
    headline = update_readme.Headline("w", "d", "{x}", "{x}", "results.md#a", {"x": update_readme._c("demo", "a")})
    monkeypatch.setattr(update_readme, "README", tmp_path / "README.md")
    monkeypatch.setattr(update_readme, "cell", lambda result, column, **where: "1")
    assert "[run record](benchmarks/results/demo/manifest.json)" in headline.row()


def test_every_linked_manifest_in_the_docs_exists_and_is_complete():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for link in update_readme.re.findall(r"\]\(([^)\s]*manifest\.json)\)", page.read_text()):
            manifest = (page.parent / link).resolve()
            assert manifest.is_file(), f"{page.name} links {link}, which does not exist"
            m = json.loads(manifest.read_text())
            assert set(m) == FIELDS
            for f in m["run_files"]:  # run files are not committed (git-ignored): checked where a run left them
                assert f["path"] and len(f["sha256"]) == 64
                if (manifest.parent / f["path"]).is_file():
                    assert sha256(manifest.parent / f["path"]) == f["sha256"], f"{manifest.parent.name}/{f['path']}"
