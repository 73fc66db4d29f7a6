"""End to end through the command line, on the real scifact_mini fixture."""

import json

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.datasets import load_dataset
from factscout.formats.beir import write_corpus, write_qrels, write_queries

runner = CliRunner()


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """scifact_mini written in BEIR form: corpus, claims as queries (some dated), qrels."""
    root = tmp_path_factory.mktemp("mini")
    ds = load_dataset("scifact_mini")
    write_corpus(root / "corpus.jsonl", ds.corpus)
    write_queries(root / "queries.jsonl", ds.queries())
    write_qrels(root / "qrels.tsv", ds.qrels)
    return root, ds


def invoke(*args: str):
    result = runner.invoke(app, [str(a) for a in args])
    return result


@pytest.mark.slow
@pytest.mark.parametrize("retriever", ["bm25", "hybrid"])
def test_index_search_evaluate(mini, tmp_path, retriever):
    root, ds = mini
    r = invoke("index", "--corpus", root / "corpus.jsonl", "--index", tmp_path / "idx", "--retriever", retriever)
    assert r.exit_code == 0, r.output
    assert f"indexed {len(ds.corpus)} passages" in r.output
    r = invoke(
        "search",
        "--index",
        tmp_path / "idx",
        "--queries",
        root / "queries.jsonl",
        "--k",
        "100",
        "--run",
        tmp_path / "run.trec",
    )
    assert r.exit_code == 0, r.output
    lines = (tmp_path / "run.trec").read_text().splitlines()
    assert len({line.split()[0] for line in lines}) == len(ds.claims)
    r = invoke(
        "evaluate",
        "--qrels",
        root / "qrels.tsv",
        "--run",
        tmp_path / "run.trec",
        "--metrics",
        "ndcg@10",
        "recall@100",
        "mrr@10",
        "--json",
    )
    assert r.exit_code == 0, r.output
    means = json.loads(r.output)["means"]
    assert set(means) == {"nDCG@10", "R@100", "MRR@10"}
    assert means["nDCG@10"] > 0.6  # 30 claims over 200 abstracts: an easy pool


def test_single_query_table(mini, tmp_path):
    root, _ = mini
    invoke("index", "--corpus", root / "corpus.jsonl", "--index", tmp_path / "idx")
    r = invoke("search", "--index", tmp_path / "idx", "--query", "folic acid vitamin B12 kidney disease", "--k", "3")
    assert r.exit_code == 0, r.output
    assert "33409100" in r.output


def test_date_filter_flag(tmp_path, tiny_corpus):
    """A dated query is filtered unless --no-date-filter (the same default as check)."""
    write_corpus(tmp_path / "c.jsonl", tiny_corpus)
    (tmp_path / "q.jsonl").write_text(
        json.dumps({"_id": "c1", "text": "vaccine microchip myths", "date": "2021-02-01"}) + "\n"
    )
    invoke("index", "--corpus", tmp_path / "c.jsonl", "--index", tmp_path / "idx")
    for flag, expect_p04 in (([], False), (["--date-filter"], False), (["--no-date-filter"], True)):
        r = invoke(
            "search",
            "--index",
            tmp_path / "idx",
            "--queries",
            tmp_path / "q.jsonl",
            "--k",
            "5",
            "--run",
            tmp_path / "r.trec",
            *flag,
        )
        assert r.exit_code == 0, r.output
        found = {line.split()[2] for line in (tmp_path / "r.trec").read_text().splitlines()}
        assert ("p04" in found) is expect_p04


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["index", "--corpus", "/nope/corpus.jsonl", "--index", "IDX"], "no such file: /nope/corpus.jsonl"),
        (["index", "--corpus", "BAD", "--index", "IDX"], "BAD.jsonl:2: malformed JSON"),
        (
            ["index", "--corpus", "GOOD", "--index", "IDX", "--retriever", "splade"],
            "no retriever 'splade'; known: bm25, bm25-and, bm25-plain, dense, hybrid",
        ),
        (["search", "--index", "/nope/idx", "--query", "x"], "no index at /nope/idx"),
        (["evaluate", "--qrels", "/nope/q.tsv", "--run", "/nope/r.trec"], "no such file"),
        (
            ["evaluate", "--qrels", "GOODQRELS", "--run", "GOODRUN", "--metrics", "ndcg@10", "bleu"],
            "unknown measure 'bleu'",
        ),
    ],
)
def test_bad_input_gives_one_clear_line(tmp_path, args, message):
    (tmp_path / "BAD.jsonl").write_text('{"_id": "a", "text": "x"}\n{"_id": "b", "text": \n')
    (tmp_path / "GOOD.jsonl").write_text('{"_id": "a", "text": "x"}\n')
    (tmp_path / "GOODQRELS").write_text("q 0 a 1\n")
    (tmp_path / "GOODRUN").write_text("q Q0 a 1 1.0 t\n")
    subst = {
        "BAD": tmp_path / "BAD.jsonl",
        "GOOD": tmp_path / "GOOD.jsonl",
        "IDX": tmp_path / "idx",
        "GOODQRELS": tmp_path / "GOODQRELS",
        "GOODRUN": tmp_path / "GOODRUN",
    }
    r = invoke(*[subst.get(a, a) for a in args])
    assert r.exit_code == 2
    assert message in r.output
    assert "Traceback" not in r.output


def test_windows_and_doc_level_run(mini, tmp_path):
    root, ds = mini
    r = invoke(
        "index", "--corpus", root / "corpus.jsonl", "--index", tmp_path / "idx", "--window", "3", "--stride", "2"
    )
    assert r.exit_code == 0, r.output
    n_passages = int(r.output.split("indexed ")[1].split()[0])
    assert n_passages > len(ds.corpus)
    r = invoke(
        "search",
        "--index",
        tmp_path / "idx",
        "--queries",
        root / "queries.jsonl",
        "--k",
        "10",
        "--run",
        tmp_path / "run.trec",
        "--by-doc",
    )
    assert r.exit_code == 0, r.output
    doc_ids = {p.passage_id for p in ds.corpus}
    rows = [line.split() for line in (tmp_path / "run.trec").read_text().splitlines()]
    assert rows and all(row[2] in doc_ids for row in rows)
    per_query = {}
    for row in rows:
        per_query.setdefault(row[0], []).append(row[2])
    assert all(len(v) == len(set(v)) <= 10 for v in per_query.values())


def test_plan_then_fused_search(tmp_path):
    from factscout.formats.beir import write_claims

    ds = load_dataset("averitec_mini")
    write_claims(tmp_path / "claims.jsonl", ds.claims)
    with open(tmp_path / "claims.jsonl", "a") as f:
        f.write('{"_id": "broken", "text": ""}\n')
    r = invoke("plan", "--claims", tmp_path / "claims.jsonl", "--planner", "oracle", "--out", tmp_path / "q.jsonl")
    assert r.exit_code == 0, r.output
    assert "skipped" in r.output and "broken" not in (tmp_path / "q.jsonl").read_text()
    rows = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert {"_id", "claim_id", "text", "origin", "date"} <= set(rows[0])
    assert len(rows) > len(ds.claims)
    # the claims' own gold answers plus every 20th other answer as distractors
    beir = load_dataset("averitec_beir", "train")
    keep = {c.claim_id for c in ds.claims}
    pool = [p for i, p in enumerate(beir.corpus) if p.passage_id.rsplit("-q", 1)[0] in keep or i % 20 == 0]
    write_corpus(tmp_path / "corpus.jsonl", pool)
    invoke("index", "--corpus", tmp_path / "corpus.jsonl", "--index", tmp_path / "idx")
    r = invoke(
        "search",
        "--index",
        tmp_path / "idx",
        "--queries",
        tmp_path / "q.jsonl",
        "--k",
        "20",
        "--fusion",
        "combmax-norm",
        "--run",
        tmp_path / "run.trec",
        "--date-filter",
    )
    assert r.exit_code == 0, r.output
    run_ids = {line.split()[0] for line in (tmp_path / "run.trec").read_text().splitlines()}
    assert run_ids == {row["claim_id"] for row in rows}
    r = invoke(
        "search",
        "--index",
        tmp_path / "idx",
        "--queries",
        tmp_path / "q.jsonl",
        "--fusion",
        "combmx",
        "--run",
        tmp_path / "x",
    )
    assert r.exit_code == 2 and "no fusion 'combmx'; known:" in r.output


def test_train_dispatches_to_the_trainers_and_names_the_known_ones():
    r = invoke("train", "stance", "--help")
    assert r.exit_code == 0 and "--out" in r.output
    r = invoke("train", "nope")
    assert r.exit_code == 2 and "no trainer 'nope'; known:" in r.output and "stance" in r.output


def test_trajectories_then_rewrite_with_a_baseline_policy(mini, tmp_path):
    root, ds = mini
    r = invoke("index", "--corpus", root / "corpus.jsonl", "--index", tmp_path / "idx")
    assert r.exit_code == 0, r.output
    claims = tmp_path / "claims.jsonl"
    write_queries(claims, ds.queries()[:4])
    out = tmp_path / "bfs.jsonl"
    args = ["trajectories", "--claims", claims, "--qrels", root / "qrels.tsv", "--index", tmp_path / "idx"]
    r = invoke(*args, "--out", out, "--depth", "2")
    assert r.exit_code == 0, r.output
    assert "4 claims (0 already done)" in r.output
    again = invoke(*args, "--out", out, "--depth", "2")
    assert again.exit_code == 0 and "4 claims (4 already done)" in again.output
    r = invoke(
        "rewrite",
        "--claims",
        claims,
        "--index",
        tmp_path / "idx",
        "--policy",
        "original",
        "--out",
        tmp_path / "q.jsonl",
    )
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in (tmp_path / "q.jsonl").read_text().splitlines()]
    assert [row["text"] for row in rows] == [q.text for q in ds.queries()[:4]]
