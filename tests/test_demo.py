from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.demo import run_demo
from factscout.retrieve.sentences import load_sentence_data


def test_demo_on_the_mini_fixture_reuses_its_index(tmp_path):
    from factscout.datasets import load_dataset
    from factscout.retrieve import build_index

    build_index(load_dataset("scifact_mini", "train").corpus, tmp_path / "idx", "bm25")  # without sentence vectors
    first = run_demo(retriever="bm25", index=tmp_path / "idx", n_claims=2, k=3, dataset="scifact_mini")
    assert first.n_queries == 30
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
    gen = sorted((tmp_path / "idx").glob("gen-*"))
    stored = load_sentence_data(gen[0], len(first.retriever.store))
    assert stored is not None and len(stored.spans) > 0, (
        "the demo index is made for checking: it stores sentence vectors"
    )
    again = run_demo(retriever="bm25", index=tmp_path / "idx", n_claims=2, k=3, dataset="scifact_mini", check=False)
    assert sorted((tmp_path / "idx").glob("gen-*")) == gen, "a matching index is reused, not rebuilt"
    assert again.scores == first.scores and again.heldout is None


def test_demo_command(tmp_path):
    result = CliRunner().invoke(
        app,
        ["demo", "--dataset", "scifact_mini", "--retriever", "bm25", "--index", str(tmp_path / "i"), "--claims", "1"],
    )
    assert result.exit_code == 0, result.output
    assert "verdict:" in result.output and "queries:" in result.output
    assert "cited abstracts found by the claim query at rank" in result.output
    assert "nDCG@10" in result.output
    assert "held out from training" in result.output and "verdict macro-F1" in result.output
    assert "definite calls" in result.output and "precision" in result.output and "coverage" in result.output


def test_the_demo_encodes_its_corpus_in_int8_when_it_can(monkeypatch):
    import importlib.util

    from factscout.demo import demo_settings

    assert demo_settings("bm25") == {}
    if importlib.util.find_spec("onnxruntime") is not None:
        assert demo_settings("hybrid") == {"dense": {"encoder": "minilm-int8"}}
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    assert demo_settings("hybrid") == {}, "without ONNX Runtime the demo falls back to fp32 MiniLM"
