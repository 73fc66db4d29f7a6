"""One CLI vocabulary (issue 19): --input/-i and --output/-o with the old names as aliases, the date
filter on by default in search and check, and counted progress bars that never reach stdout."""

import io
import json
import re

import pytest
from rich.console import Console
from typer.testing import CliRunner

from factscout.cli import common
from factscout.cli.main import app
from factscout.datasets import load_dataset
from factscout.formats.beir import write_corpus, write_qrels, write_queries

runner = CliRunner()


def invoke(*args: object):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def mini(tmp_path_factory):
    """scifact_mini in BEIR form (corpus, claims, qrels) and a BM25 index over it."""
    root = tmp_path_factory.mktemp("vocab")
    ds = load_dataset("scifact_mini")
    write_corpus(root / "corpus.jsonl", ds.corpus)
    write_queries(root / "claims.jsonl", ds.queries())
    write_qrels(root / "qrels.tsv", ds.qrels)
    r = invoke("index", "-i", root / "corpus.jsonl", "-o", root / "idx")
    assert r.exit_code == 0, r.output
    return root


def test_index_names_its_input_and_output_both_ways(mini, tmp_path):
    old = invoke("index", "--corpus", mini / "corpus.jsonl", "--index", tmp_path / "old")
    new = invoke("index", "--input", mini / "corpus.jsonl", "--output", tmp_path / "new")
    assert old.exit_code == new.exit_code == 0, old.output + new.output

    def same(text: str, name: str) -> str:  # the folder's name and the generation's timestamped name differ
        return re.sub(r"\(gen-[^)]*\)", "", text.replace(str(tmp_path / name), "IDX"))

    assert "indexed 200 passages" in old.stdout and same(old.stdout, "old") == same(new.stdout, "new")


def test_search_aliases_write_the_same_run(mini, tmp_path):
    runs = {}
    for name, flags in {"old": ("--queries", "--run"), "long": ("--input", "--output"), "short": ("-i", "-o")}.items():
        r = invoke("search", "--index", mini / "idx", flags[0], mini / "claims.jsonl", "--k", "20", flags[1],
                   tmp_path / f"{name}.trec")  # fmt: skip
        assert r.exit_code == 0, r.output
        runs[name] = (tmp_path / f"{name}.trec").read_text()
    assert runs["old"] and runs["old"] == runs["long"] == runs["short"]
    assert len({line.split()[0] for line in runs["old"].splitlines()}) == 30  # a ranking for each of the 30 claims


def test_evaluate_reads_the_run_as_input(mini, tmp_path):
    invoke("search", "--index", mini / "idx", "-i", mini / "claims.jsonl", "-o", tmp_path / "r.trec")
    old = invoke("evaluate", "--qrels", mini / "qrels.tsv", "--run", tmp_path / "r.trec", "--json")
    new = invoke("evaluate", "--qrels", mini / "qrels.tsv", "-i", tmp_path / "r.trec", "--json")
    assert old.exit_code == new.exit_code == 0, old.output + new.output
    assert json.loads(old.stdout)["means"] == json.loads(new.stdout)["means"]


def test_plan_aliases_write_the_same_queries(mini, tmp_path):
    outputs = []
    for i, flags in enumerate((("--claims", "--out"), ("--input", "--output"), ("-i", "-o"))):
        r = invoke("plan", flags[0], mini / "claims.jsonl", "--planner", "claim", flags[1], tmp_path / f"{i}.jsonl")
        assert r.exit_code == 0, r.output
        assert "wrote 30 queries for 30 claims" in r.stdout
        outputs.append((tmp_path / f"{i}.jsonl").read_text())
    assert outputs[0] == outputs[1] == outputs[2]


def test_rewrite_aliases_write_the_same_queries(mini, tmp_path):
    outputs = []
    for i, flags in enumerate((("--claims", "--out"), ("-i", "-o"))):
        r = invoke("rewrite", flags[0], mini / "claims.jsonl", "--index", mini / "idx", "--policy", "random",
                   "--qrels", mini / "qrels.tsv", flags[1], tmp_path / f"{i}.jsonl")  # fmt: skip
        assert r.exit_code == 0, r.output
        outputs.append((tmp_path / f"{i}.jsonl").read_text())
    assert outputs[0] and outputs[0] == outputs[1]


def test_trajectories_aliases_write_the_same_sequences_and_count_the_claims_left(mini, tmp_path, monkeypatch):
    rows = (mini / "claims.jsonl").read_text().splitlines()[:2]
    (tmp_path / "claims.jsonl").write_text("\n".join(rows) + "\n")
    common_args = ("--qrels", mini / "qrels.tsv", "--index", mini / "idx", "--depth", "2")
    screen = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=screen, force_terminal=True, width=100))
    outputs = []
    for i, flags in enumerate((("--claims", "--out"), ("-i", "-o"))):
        r = invoke("trajectories", flags[0], tmp_path / "claims.jsonl", flags[1], tmp_path / f"{i}.jsonl", *common_args)
        assert r.exit_code == 0, r.output
        outputs.append([json.loads(line) for line in (tmp_path / f"{i}.jsonl").read_text().splitlines()])
    assert outputs[0] and outputs[0] == outputs[1]
    assert "BFS trajectories" in screen.getvalue() and "/2" in screen.getvalue()
    screen.truncate(0)
    again = invoke("trajectories", "-i", tmp_path / "claims.jsonl", "-o", tmp_path / "0.jsonl", *common_args)
    assert again.exit_code == 0 and "2 claims (2 already done)" in again.stderr
    assert "/2" not in screen.getvalue()  # a rerun resumes: nothing left to count


def test_check_aliases_write_the_same_reports(mini, tmp_path):
    rows = (mini / "claims.jsonl").read_text().splitlines()[:3]
    (tmp_path / "claims.jsonl").write_text("\n".join(rows) + "\n")
    reports = []
    for i, flags in enumerate((("--claims", "--out"), ("-i", "-o"))):
        r = invoke("check", flags[0], tmp_path / "claims.jsonl", "--index", mini / "idx", "--planner", "claim",
                   "--passages", "2", flags[1], tmp_path / f"{i}.jsonl")  # fmt: skip
        assert r.exit_code == 0, r.output
        assert "wrote 3 reports" in r.stderr
        reports.append([json.loads(line) for line in (tmp_path / f"{i}.jsonl").read_text().splitlines()])
    for report in reports[0] + reports[1]:
        report.pop("provenance", None)  # timings and the run's time differ between runs
    assert len(reports[0]) == 3 and reports[0] == reports[1]


def test_a_file_and_a_claim_together_name_both_spellings(mini):
    args = ["check", "a claim", "-i", str(mini / "claims.jsonl"), "--index", str(mini / "idx")]
    r = runner.invoke(app, args, env={"COLUMNS": "400"})
    assert r.exit_code == 2 and "--input FILE (--claims)" in r.output


# -- the date filter: on by default in both commands, for claims and queries that have a date -----------


@pytest.fixture(scope="module")
def tiny_index(tmp_path_factory, tiny_corpus):
    """The dated tiny corpus of tests/conftest.py: p04 "A fact-check report debunks vaccine microchip
    myths." was published 2021-06-30."""
    root = tmp_path_factory.mktemp("tiny")
    write_corpus(root / "c.jsonl", tiny_corpus)
    r = invoke("index", "-i", root / "c.jsonl", "-o", root / "idx")
    assert r.exit_code == 0, r.output
    return root / "idx"


@pytest.mark.parametrize("command", ["search", "check"])
def test_help_says_the_date_filter_is_on_for_dated_claims(command):
    text = " ".join(runner.invoke(app, [command, "--help"], env={"COLUMNS": "400"}).output.split())
    assert "--date-filter --no-date-filter" in text or "--date-filter/--no-date-filter" in text
    assert "On by default" in text and "a claim or query without a date is not filtered" in text


def test_search_one_dated_query_is_filtered_unless_told(tiny_index):
    late = "p04"  # published 2021-06-30, after the query's date
    query = ("search", "--index", tiny_index, "--query", "vaccine microchip myths", "--k", "12")
    assert late not in invoke(*query, "--date", "2021-02-01").stdout
    assert late not in invoke(*query, "--date", "2021-02-01", "--date-filter").stdout
    assert late in invoke(*query, "--date", "2021-02-01", "--no-date-filter").stdout
    assert late in invoke(*query).stdout  # no date: nothing to filter by


def _evidence(tiny_index, *args: str) -> set[str]:
    r = invoke("check", "A fact-check report debunks vaccine microchip myths", "--index", tiny_index,
               "--planner", "claim", "--passages", "12", "--json", *args)  # fmt: skip
    assert r.exit_code == 0, r.output
    return {e["passage_id"] for e in json.loads(r.stdout)["evidence"]}


def test_check_dated_claim_is_filtered_unless_told(tiny_index):
    late = "p04"
    assert late not in _evidence(tiny_index, "--date", "2021-02-01")
    assert late not in _evidence(tiny_index, "--date", "2021-02-01", "--date-filter")
    assert late in _evidence(tiny_index, "--date", "2021-02-01", "--no-date-filter")
    assert late in _evidence(tiny_index)  # an undated claim is not filtered


# -- progress bars ------------------------------------------------------------------------------------


def test_counted_counts_and_draws_a_total_and_eta_on_a_terminal():
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    with common.counted("reading", 5, console=console) as bar:
        bar.advance()
        bar.advance(3)
        assert bar.completed == 4
        bar.advance()
        assert bar.completed == 5
    drawn = screen.getvalue()
    assert "reading" in drawn and "5/5" in drawn and "eta" in drawn


def test_counted_draws_nothing_off_a_terminal_or_when_quiet(monkeypatch):
    screen = io.StringIO()
    with common.counted("reading", 3, console=Console(file=screen, force_terminal=False)) as bar:
        bar.advance(3)
        assert bar.completed == 3
    assert screen.getvalue() == ""
    monkeypatch.setitem(common._QUIET, "on", True)
    terminal = io.StringIO()
    with common.counted("reading", 3, console=Console(file=terminal, force_terminal=True)) as bar:
        bar.advance(3)
        assert bar.completed == 3
    assert terminal.getvalue() == ""


def test_bars_go_to_stderr_and_stdout_stays_a_trec_run(mini, monkeypatch):
    """With stderr a terminal the bar is drawn there, counted; `search` without --output still prints
    only TREC lines on stdout."""
    screen = io.StringIO()
    monkeypatch.setattr(common, "err", Console(file=screen, force_terminal=True, width=100))
    r = invoke("search", "--index", mini / "idx", "-i", mini / "claims.jsonl", "--k", "3")
    assert r.exit_code == 0, r.output
    assert "searching" in screen.getvalue() and "/30" in screen.getvalue()
    lines = r.stdout.splitlines()
    assert lines and all(len(line.split()) == 6 and line.split()[1] == "Q0" for line in lines)
    assert len({line.split()[0] for line in lines}) == 30


def test_quiet_flag_is_accepted_and_keeps_the_output(mini, tmp_path):
    r = invoke("-q", "plan", "-i", mini / "claims.jsonl", "--planner", "claim", "-o", tmp_path / "q.jsonl")
    assert r.exit_code == 0, r.output
    assert "wrote 30 queries" in r.stdout


def test_index_a_registered_dataset_by_name(tmp_path):
    r = invoke("index", "--dataset", "scifact_mini", "-o", tmp_path / "idx")
    assert r.exit_code == 0, r.output
    assert "indexed 200 passages" in r.stdout
    r = invoke("search", "--index", tmp_path / "idx", "--query", "folic acid vitamin B12 kidney disease", "--k", "3")
    assert r.exit_code == 0 and "33409100" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--dataset", "scifact_mini", "-i", "corpus.jsonl"],
            "give exactly one of --input FILE (--corpus) or --dataset",
        ),
        ([], "give exactly one of --input FILE (--corpus) or --dataset"),
        (["--dataset", "scifakt"], "no dataset 'scifakt'; known:"),
        (["--dataset", "scifact_mini", "--data", "/nope"], "no such file: /nope/fixtures/scifact_mini"),
    ],
)
def test_index_input_errors_name_the_problem(tmp_path, args, message):
    r = runner.invoke(app, ["index", "-o", str(tmp_path / "idx"), *args], env={"COLUMNS": "400"})
    assert r.exit_code == 2 and message in " ".join(r.output.split()), r.output
