"""``factscout factchecks index / search / add`` end to end on a small CheckThat-shaped data folder."""

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app

from .conftest import WordEncoder

runner = CliRunner()
VCLAIMS = [
    (
        "vclaim-sno-shark",
        "Shark on a Highway?",
        "A photograph shows a shark swimming on a flooded Houston highway.",
        "2017-08-28",
    ),
    ("vclaim-sno-wall", "Great Wall From Space", "The Great Wall of China is visible from the Moon.", "2010-03-03"),
    ("vclaim-sno-oreo", "Lady Gaga Oreos", "Oreo released cookies themed on Lady Gaga.", "2021-01-29"),
]


@pytest.fixture
def data(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr("factscout.factchecks.memory._encoder", lambda name: WordEncoder())
    folder = tmp_path / "data" / "checkthat2022-2a"
    folder.mkdir(parents=True)
    rows = [{"vclaim_id": i, "title": t, "vclaim": v, "subtitle": "", "date_iso": d} for i, t, v, d in VCLAIMS]
    (folder / "vclaims.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (folder / "CT2022-Task2A-EN-Train-Dev_Queries.tsv").write_text("tweet-sno-0\tA shark on the highway!\n")
    (folder / "CT2022-Task2A-EN-Train_QRELs.tsv").write_text("tweet-sno-0\t0\tvclaim-sno-shark\t1\n")
    return tmp_path / "data"


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_index_then_search_writes_a_trec_run_of_record_ids(data, tmp_path):
    mem = tmp_path / "mem"
    result = runner.invoke(app, ["factchecks", "index", "--data", str(data), "--output", str(mem)])
    assert result.exit_code == 0, result.output
    assert "3 fact-checks" in result.output
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        json.dumps({"_id": "t1", "text": "Look: a shark swimming on a Houston highway pic.twitter.com/x — A (@a) May 1, 2020"})
        + "\n" + json.dumps({"_id": "t2", "text": "OREO x LADY GAGA cookies 🎤"}) + "\n"
    )  # fmt: skip
    run = tmp_path / "run.trec"
    result = runner.invoke(
        app, ["factchecks", "search", "--index", str(mem), "-i", str(queries), "-o", str(run), "--k", "2"]
    )
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in run.read_text().splitlines()]
    assert [(q, doc, rank) for q, _, doc, rank, *_ in lines if rank == "1"] == [
        ("t1", "vclaim-sno-shark", "1"),
        ("t2", "vclaim-sno-oreo", "1"),
    ]


def test_add_appends_and_a_bad_row_leaves_the_memory_byte_identical(data, tmp_path):
    mem = tmp_path / "mem"
    assert runner.invoke(app, ["factchecks", "index", "--data", str(data), "-o", str(mem)]).exit_code == 0
    mine = tmp_path / "mine.jsonl"
    good = {"fact_check_id": "me-1", "claim": "Drinking bleach cures COVID-19.", "publisher": "my-desk.example",
            "verdict": "False", "date": "2020-04-24"}  # fmt: skip
    bad = {"fact_check_id": "me-2", "claim": "x", "publisher": "my-desk.example", "date": "24/04/2020"}
    mine.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    before = snapshot(mem)
    result = runner.invoke(app, ["factchecks", "add", "-i", str(mine), "--index", str(mem)])
    assert result.exit_code == 2
    assert f"{mine}:2" in result.output and "date" in result.output
    assert snapshot(mem) == before
    mine.write_text(json.dumps(good) + "\n")
    result = runner.invoke(app, ["factchecks", "add", "-i", str(mine), "--index", str(mem)])
    assert result.exit_code == 0, result.output
    from factscout.factchecks import FactCheckMemory

    memory = FactCheckMemory.load(mem)
    added = next(r for r in memory.records if r.fact_check_id == "me-1")
    assert added.sources == ("user",) and added.normalised_verdict == "refuted"
    assert len(memory) == 4 and memory.search("does bleach cure covid", 1)[0].record.fact_check_id == "me-1"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ('{"_id": "a", "text": "ok"}\n{"_id": "b"}\n', ":2"),
        ('{"_id": "a", "text": "ok"}\nnot json\n', ":2: malformed JSON"),
    ],
)
def test_bad_queries_name_file_and_line(data, tmp_path, content, problem):
    mem = tmp_path / "mem"
    assert runner.invoke(app, ["factchecks", "index", "--data", str(data), "-o", str(mem)]).exit_code == 0
    queries = tmp_path / "q.jsonl"
    queries.write_text(content)
    result = runner.invoke(
        app, ["factchecks", "search", "--index", str(mem), "-i", str(queries), "-o", str(tmp_path / "r")]
    )
    assert result.exit_code == 2
    assert f"{queries}{problem}" in " ".join(result.output.split())


def test_unknown_source_lists_the_known_ones(data, tmp_path):
    result = runner.invoke(
        app, ["factchecks", "index", "--data", str(data), "--source", "snopes", "-o", str(tmp_path / "m")]
    )
    assert result.exit_code == 2 and "checkthat2022" in result.output and "multifc" in result.output


def test_search_on_a_folder_that_is_no_memory_says_so(tmp_path):
    queries = tmp_path / "q.jsonl"
    queries.write_text('{"_id": "a", "text": "ok"}\n')
    result = runner.invoke(
        app, ["factchecks", "search", "--index", str(tmp_path), "-i", str(queries), "-o", str(tmp_path / "r")]
    )
    assert result.exit_code == 2 and "not a fact-check memory" in result.output
