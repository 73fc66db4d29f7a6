import json
import os
import re

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.demo import run_demo
from factscout.retrieve.sentences import load_sentence_data


def test_demo_on_the_mini_fixture_reuses_its_index(tmp_path):
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_index

    build_index(load_dataset("scifact_mini", "train").corpus, tmp_path / "idx", "bm25")  # without sentence vectors
    first = run_demo(retriever="bm25", index=tmp_path / "idx", n_claims=2, k=3, dataset="scifact_mini")
    assert first.n_queries == 30 and not first.built
    assert len(first.examples) == 2 and all(len(r) == 3 for _, r in first.examples)
    assert first.scores["nDCG@10"] > 0.8
    assert [r.claim_id for r in first.reports] == [c.claim_id for c, _ in first.examples]
    gen = sorted((tmp_path / "idx").glob("gen-*"))
    assert first.reports[0].provenance["index"] == str(tmp_path / "idx"), "the demo checks as `check` does"
    assert first.reports[0].provenance["generation"] == gen[-1].name
    assert all(r.verdict.label in {"supported", "refuted", "not enough evidence"} for r in first.reports)
    held = first.heldout  # the 4 fixture claims on the held-out list, checked for the closing scores
    assert held is not None and held.claims == 4 and 0.0 <= held.macro_f1 <= 1.0 and 0.0 <= held.ndcg10 <= 1.0
    assert held.definite.calls <= 4 and 0.0 <= held.definite.coverage <= 1.0
    # an index without sentence vectors is reused as it is: the checks embed the sentences they read
    assert not first.sentences_stored and first.reports[0].provenance["sentence_vectors"] == "per-claim"
    assert set(first.timings) == {"index", "search", "examples", "heldout"}
    again = run_demo(retriever="bm25", index=tmp_path / "idx", n_claims=2, k=3, dataset="scifact_mini", check=False)
    assert sorted((tmp_path / "idx").glob("gen-*")) == gen, "a matching index is reused, not rebuilt"
    assert again.scores == first.scores and again.heldout is None


def test_a_staged_demo_index_answers_from_its_passages_then_reads_the_sentence_vectors_added_later(tmp_path):
    from factscout.retrieve.index import add_sentences, read_manifest

    idx = tmp_path / "staged"
    first = run_demo(retriever="bm25", index=idx, n_claims=1, k=3, dataset="scifact_mini", heldout=0)
    gen, manifest = read_manifest(idx)
    assert first.built and not first.sentences_stored and manifest["sentences"] is False
    assert load_sentence_data(gen, 200) is None, "stage one stores the passages only"
    assert first.reports[0].provenance["sentence_vectors"] == "per-claim" and first.reports[0].evidence
    live, written = add_sentences(idx)
    assert written and live != gen and not gen.exists(), "stage two is a new generation; the old one goes"
    assert read_manifest(idx)[1]["sentences"] is True and load_sentence_data(live, 200) is not None
    assert add_sentences(idx) == (live, False), "nothing to add twice"
    second = run_demo(retriever="bm25", index=idx, n_claims=1, k=3, dataset="scifact_mini", heldout=0)
    assert not second.built and second.sentences_stored
    assert second.reports[0].provenance["sentence_vectors"] == "stored"
    assert second.reports[0].provenance["generation"] == live.name
    assert [e.passage_id for e in second.reports[0].evidence] == [e.passage_id for e in first.reports[0].evidence]


def test_adding_sentence_vectors_leaves_an_index_rebuilt_meanwhile_alone(tmp_path, monkeypatch):
    import factscout.retrieve.index as index_module
    from factscout.datasets import load_dataset
    from factscout.errors import InputError
    from factscout.retrieve import build_index

    corpus = load_dataset("scifact_mini", "train").corpus
    build_index(corpus, tmp_path / "idx", "bm25")
    real = index_module.index_sentences

    def rebuilt_meanwhile(passages, **kwargs):
        data = real(passages, **kwargs)
        build_index(corpus[:50], tmp_path / "idx", "bm25")  # someone rebuilds the index meanwhile
        return data

    monkeypatch.setattr(index_module, "index_sentences", rebuilt_meanwhile)
    with pytest.raises(InputError, match="rebuilt while its sentence vectors were made"):
        index_module.add_sentences(tmp_path / "idx")
    _, manifest = index_module.read_manifest(tmp_path / "idx")
    assert manifest["n_passages"] == 50 and not manifest["sentences"], "the rebuilt index stays live, untouched"
    assert len(list((tmp_path / "idx").glob("gen-*"))) == 1


def test_demo_command_answers_then_adds_the_sentence_vectors_in_the_background(tmp_path):
    from factscout.retrieve.index import SENTENCE_LOCK, read_manifest

    timings = tmp_path / "timings.json"
    args = ["demo", "--dataset", "scifact_mini", "--retriever", "bm25", "--index", str(tmp_path / "i"), "--claims", "1"]
    result = CliRunner().invoke(app, [*args, "--timings", str(timings)])
    assert result.exit_code == 0, result.output
    assert "Verdict" in result.output and "Searches" in result.output
    text = " ".join(result.output.split())  # the terminal wraps long lines
    assert "cited abstracts found by the claim query at rank" in text
    assert "nDCG@10" in text
    assert "held out from training" in text and "verdict macro-F1" in text
    assert "definite calls" in text and "precision" in text and "coverage" in text
    # the gold label in factscout's words beside its own verdict, SciFact's raw label in brackets
    assert re.search(
        r"gold verdict: (supported \(SciFact: SUPPORT\)|refuted \(SciFact: CONTRADICT\)|not enough evidence \(SciFact: NEI\))",
        text,
    )
    assert "passages only; the checks below embed the sentences they read" in text
    found = re.search(r"are now added to .* in the background \(process (\d+); log", text)
    assert found, result.output
    os.waitpid(int(found.group(1)), 0)  # the background stage, a child of this process
    log = (tmp_path / "i.sentences.log").read_text()
    assert "sentence vectors added to" in log, log
    assert read_manifest(tmp_path / "i")[1]["sentences"] is True and not (tmp_path / "i" / SENTENCE_LOCK).exists()
    recorded = json.loads(timings.read_text())
    assert recorded["built"] is True and recorded["sentences_stored"] is False and recorded["total"] > 0
    again = CliRunner().invoke(app, [*args, "--heldout", "0"])
    assert again.exit_code == 0, again.output
    assert "in the background" not in again.output and "index built" not in again.output


@pytest.mark.encoder
def test_the_demo_index_is_built_on_the_int8_path_when_onnx_runtime_is_installed(tmp_path):
    pytest.importorskip("onnxruntime")
    from factscout.demo import index_encoder
    from factscout.retrieve.index import add_sentences, read_manifest
    from factscout.text.onnx_encoder import INT8_NAME

    run_demo(retriever="hybrid", index=tmp_path / "h", dataset="scifact_mini", check=False)
    gen, _ = read_manifest(tmp_path / "h")
    assert index_encoder(gen, "hybrid") == "minilm-int8", "the demo's passages go through the int8 encoder"
    live, _ = add_sentences(tmp_path / "h")
    assert load_sentence_data(live, 200).encoder == INT8_NAME, "and so do its sentences"


def test_the_demo_encodes_its_corpus_in_int8_when_it_can(monkeypatch):
    import importlib.util

    from factscout.demo import demo_settings

    assert demo_settings("bm25") == {}
    if importlib.util.find_spec("onnxruntime") is not None:
        assert demo_settings("hybrid") == {"dense": {"encoder": "minilm-int8"}}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert demo_settings("hybrid") == {}, "without ONNX Runtime the demo falls back to fp32 MiniLM"


def test_index_add_sentences_refuses_a_corpus_or_a_missing_index(tmp_path):
    runner = CliRunner()
    both = runner.invoke(app, ["index", "--index", str(tmp_path), "--add-sentences", "--dataset", "scifact_mini"])
    assert both.exit_code != 0 and "give no --input or --dataset" in re.sub(r"[\s│]+", " ", both.output)
    missing = runner.invoke(app, ["index", "--index", str(tmp_path / "none"), "--add-sentences"])
    assert missing.exit_code != 0 and "no index at" in missing.output
