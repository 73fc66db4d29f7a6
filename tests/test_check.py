"""The check pipeline end to end on the scifact_mini fixture, the Report record, and the CLI."""

import datetime as dt
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from factscout.check import Checker, CheckSettings
from factscout.cli.main import app
from factscout.datasets import load_dataset
from factscout.errors import InputError, UnknownName
from factscout.formats.beir import write_queries
from factscout.nn.encoding import CachedEncoder
from factscout.records import Claim, Passage
from factscout.report import FORMAT, VERDICTS, Report
from factscout.retrieve import build_index, build_retriever

runner = CliRunner()


@pytest.fixture(scope="module")
def mini():
    return load_dataset("scifact_mini")


@pytest.fixture(scope="module")
def index_dir(mini, tmp_path_factory):
    path = tmp_path_factory.mktemp("check") / "idx"
    build_index(mini.corpus, path, "bm25", show_progress=False)
    return path


@pytest.fixture(scope="module")
def checker(index_dir):
    return Checker.from_index(index_dir, CheckSettings(planner="claim", passages=3))


@pytest.fixture(scope="module")
def reports(checker, mini):
    return checker.check_many(mini.claims[:4])


def test_every_report_has_a_verdict_and_traceable_evidence(reports, mini):
    assert [r.claim_id for r in reports] == [c.claim_id for c in mini.claims[:4]]
    for r in reports:
        assert r.verdict.label in VERDICTS
        assert [q.query_id for q in r.queries] == [r.claim_id]
        assert 0 < len(r.evidence) <= 3
        assert [e.rank for e in r.evidence] == list(range(1, len(r.evidence) + 1))
        planned = {q.query_id for q in r.queries}
        assert all(e.found_by and set(e.found_by) <= planned for e in r.evidence)
        counted = sum(s.stance != "not enough info" for e in r.evidence for s in e.sentences)
        assert counted == r.verdict.supporting + r.verdict.refuting
        assert r.provenance["settings"]["planner"] == "claim"
    # the cited abstract of each fixture claim is among the evidence, so something is highlighted
    assert any(e.sentences for r in reports for e in r.evidence)


def test_report_json_is_stable_and_round_trips(reports):
    d = reports[0].to_dict()
    assert d["format"] == FORMAT
    assert list(d) == [
        "format",
        "claim_id",
        "claim",
        "date",
        "queries",
        "checked_before",
        "evidence",
        "verdict",
        "timeline",
        "leakage",
        "provenance",
    ]
    assert d["leakage"]["share"] == reports[0].leakage.share
    assert d["leakage"]["after_claim"] <= d["leakage"]["dated"] <= len(d["evidence"])
    assert set(d["verdict"]["counts"]) == {"supporting", "refuting", "neutral"}
    text = json.dumps(d)
    assert Report.from_dict(json.loads(text)).to_dict() == d
    with pytest.raises(InputError, match="not a factscout-report/1 record"):
        Report.from_dict({"claim_id": "x"})
    broken = {**d, "evidence": [{"passage_id": "p"}]}
    with pytest.raises(InputError, match="malformed"):
        Report.from_dict(broken)


def test_a_claim_with_no_evidence_is_not_enough_evidence(checker):
    report = checker.check("Zxqv plorbt wibble.")
    assert report.evidence == ()
    assert report.verdict.label == "not enough evidence"
    assert report.verdict.supporting == report.verdict.refuting == 0


def test_date_filter_keeps_evidence_before_the_claim_and_marks_the_timeline():
    corpus = [
        Passage(
            "old", "old", "Vitamin D", "Vitamin D supplements reduce fractures in older adults.", dt.date(2010, 1, 5)
        ),
        Passage(
            "new",
            "new",
            "Vitamin D",
            "Vitamin D supplements reduce fractures, a 2021 trial found.",
            dt.date(2021, 3, 1),
        ),
        Passage("undated", "undated", "Vitamin D", "Vitamin D supplements and fractures in adults."),
    ]
    retriever = build_retriever(corpus, "bm25", show_progress=False)
    claim = Claim("c", "Vitamin D supplements reduce fractures.", dt.date(2015, 6, 1))
    filtered = Checker(retriever, CheckSettings(planner="claim", passages=3)).check(claim)
    assert {e.passage_id for e in filtered.evidence} == {"old", "undated"}
    assert filtered.leakage.share == 0.0
    unfiltered = Checker(retriever, CheckSettings(planner="claim", passages=3, date_filter=False)).check(claim)
    late = next(e for e in unfiltered.evidence if e.passage_id == "new")
    assert late.after_claim and late.days_from_claim == (dt.date(2021, 3, 1) - dt.date(2015, 6, 1)).days
    timeline = unfiltered.to_dict()["timeline"]
    assert [t["passage_id"] for t in timeline] == ["old", "new"]  # dated evidence only, oldest first
    assert unfiltered.leakage.share == 0.5


@pytest.mark.slow
def test_the_shipped_reranker_plugs_into_check(index_dir, mini):
    plain = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=3))
    reranked = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=3, rerank=True, rerank_depth=5))
    claim = mini.claims[1]
    a, b = plain.retrieve([claim])[0], reranked.retrieve([claim])[0]
    assert sorted(a.ranking.passage_ids) == sorted(b.ranking.passage_ids)  # same hits, re-ordered at most
    assert a.ranking.passage_ids[5:] == b.ranking.passage_ids[5:]
    assert reranked.check(claim).verdict.label in VERDICTS


@pytest.mark.slow
def test_the_bio_tagger_can_select_the_evidence(index_dir, mini):
    checker = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=2, selector="bio"))
    report = checker.check(mini.claims[0])
    assert report.verdict.label in VERDICTS
    assert all(s.text for e in report.evidence for s in e.sentences)


@pytest.mark.slow
def test_the_classifier_verdict_names_its_method(index_dir, mini):
    checker = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=3, verdict="classifier"))
    report = checker.check(mini.claims[0])
    assert report.verdict.label in VERDICTS and report.verdict.method.startswith("quantemp++ classifier")
    assert "count rule alone" in report.verdict.reason
    assert Report.from_dict(report.to_dict()).verdict == report.verdict


@pytest.mark.slow
def test_the_stance_cross_encoder_plugs_into_check_with_its_own_rule(index_dir, mini):
    from factscout.verify.cross_stance import CrossStanceModel

    checker = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=2, stance="cross"))
    assert isinstance(checker.stance, CrossStanceModel)
    n, c, share = checker.stance.rule_thresholds
    assert (checker.rule.min_evidence, checker.rule.min_confidence, checker.rule.min_share) == (n, c, share)
    report = checker.check(mini.claims[0])
    assert report.verdict.label in VERDICTS
    assert report.provenance["stance_model"]["kind"] == "cross-int8"  # by default it runs in int8
    exact = Checker.from_index(index_dir, CheckSettings(planner="claim", passages=2, stance="cross", fast=False))
    assert exact.stance.rule_thresholds == (n, c, share) and exact.stance is not checker.stance
    assert exact.check(mini.claims[0]).provenance["stance_model"]["kind"] == "cross"
    mine = Checker.from_index(index_dir, CheckSettings(planner="claim", stance="cross", min_evidence=4))
    assert mine.rule.min_evidence == 4  # the user's setting wins over the tuned one
    mixed = Checker.from_index(index_dir, CheckSettings(planner="claim", stance="cross", min_share=0.7))
    assert mixed.rule.min_share == 0.7 and mixed.rule.min_evidence == n


def test_a_trained_cross_encoder_file_also_runs_int8_by_default():
    assert CheckSettings(stance="cross").stance_model_name == "cross-int8"
    assert CheckSettings(stance="cross:run/mine.npz").stance_model_name == "cross-int8:run/mine.npz"
    assert CheckSettings(stance="cross:run/mine.npz", fast=False).stance_model_name == "cross:run/mine.npz"
    assert CheckSettings(stance="head").stance_model_name == "head"
    both = "ensemble:cross=0.4+cross:run/mine.npz=0.6+head+cross-int8"
    assert CheckSettings(stance=both).stance_model_name == (
        "ensemble:cross-int8=0.4+cross-int8:run/mine.npz=0.6+head+cross-int8"
    )
    assert CheckSettings(stance=both, fast=False).stance_model_name == both
    with pytest.raises(InputError, match="two or more"):
        CheckSettings(stance="ensemble:cross")  # refused before any model loads


def test_settings_are_validated():
    with pytest.raises(InputError, match="depth must be a positive integer"):
        CheckSettings(depth=0)
    with pytest.raises(UnknownName, match="no verdict method 'vote'; known: classifier, learned, rule"):
        CheckSettings(verdict="vote")
    with pytest.raises(UnknownName, match="no selector 'regex'; known: bio, relevance, stance-relevance, threshold"):
        CheckSettings(selector="regex")
    with pytest.raises(UnknownName, match="no stance model 'bert'; known: cross, cross-int8, ensemble, head, nli"):
        CheckSettings(stance="bert")
    with pytest.raises(InputError, match="stance model 'nli' needs an argument"):
        CheckSettings(stance="nli")
    with pytest.raises(InputError, match="cannot exceed"):
        CheckSettings(depth=5, passages=10)


def test_duplicate_claim_ids_in_a_batch_are_an_error(checker):
    claim = Claim("same", "Vitamin D reduces fractures.")
    with pytest.raises(InputError, match="unique"):
        checker.check_many([claim, claim])


def test_cached_encoder_embeds_each_text_once():
    calls = []

    class Fake:
        def encode(self, texts):
            calls.append(list(texts))
            return np.array([[len(t), 1.0] for t in texts], dtype=np.float32)

    enc = CachedEncoder(Fake(), size=3)
    first = enc.encode(["a", "bb", "a"])
    again = enc.encode(["bb", "ccc"])
    assert calls == [["a", "bb"], ["ccc"]]
    assert first.shape == (3, 2) and again[0].tolist() == [2.0, 1.0]
    assert enc.encode([]).shape[0] == 0


def test_cli_check_one_claim_and_a_claims_file(index_dir, mini, tmp_path):
    r = runner.invoke(app, ["check", mini.claims[0].text, "--index", str(index_dir), "--planner", "claim", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["verdict"]["label"] in VERDICTS
    claims = tmp_path / "claims.jsonl"
    write_queries(claims, mini.queries()[:3])
    out = tmp_path / "reports.jsonl"
    args = ["check", "--claims", str(claims), "--index", str(index_dir), "--out", str(out), "--planner", "claim"]
    r = runner.invoke(app, args)
    assert r.exit_code == 0, r.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [row["claim_id"] for row in rows] == [q.query_id for q in mini.queries()[:3]]
    assert all(row["verdict"]["label"] in VERDICTS for row in rows)
    r = runner.invoke(app, ["check", "--index", str(index_dir)])
    assert r.exit_code != 0 and "exactly one" in r.output
    r = runner.invoke(app, ["check", "x", "--index", str(tmp_path / "missing")])
    assert r.exit_code == 2 and "error" in r.output


# -- calibrated, selective verdicts (issue 38) ----------------------------------------------------


def _trust_checker(tiny_corpus, p_supports, settings=None, **components):
    """A checker over the tiny corpus whose every sentence supports the claim with ``p_supports``
    (no model loads), with a confidence model whose confidence is that probability."""
    from factscout.records import Sentence, Stance
    from factscout.text.sentences import sentences_of
    from factscout.verify.confidence import FEATURE_NAMES, VerdictConfidence
    from factscout.verify.verdict import CountRule

    class EverySentence:
        encoder = object()  # brings its own: the checker embeds nothing

        def select_passage(self, claim, passage):
            return [Sentence(passage.passage_id, i, t, 1.0) for i, t in enumerate(sentences_of(passage.text)[:1])]

    class Supports:
        def predict(self, claim, sentences):
            p = (p_supports, 0.0, round(1 - p_supports, 6))
            return [Stance(s.passage_id, s.index, "supports", p) for s in sentences]

    n = len(FEATURE_NAMES)
    components.setdefault(
        "confidence",
        VerdictConfidence([1.0] + [0.0] * (n - 1), 0.0, [0.0] * n, [1.0] * n, method="isotonic", iso_x=[0, 1],
                          iso_y=[0, 1], threshold=0.55, fitted_with={"stance": "cross", "verdict": "rule"}),
    )  # fmt: skip
    settings = settings or CheckSettings(planner="claim", passages=2)
    return Checker(
        build_retriever(tiny_corpus, "bm25"),
        settings,
        selector=EverySentence(),
        stance=Supports(),
        rule=CountRule(1, 0.34),
        **components,
    )


def test_a_low_confidence_call_is_withheld_and_the_report_says_why(tiny_corpus):
    checker = _trust_checker(tiny_corpus, 0.41)
    assert checker.min_confidence == 0.55  # the model's stored threshold is the default
    report = checker.check(Claim("v", "vaccine trial efficacy report"))
    v = report.verdict
    assert (v.label, v.call, v.confidence) == ("not enough evidence", "supported", pytest.approx(0.41))
    assert v.abstention == "low confidence 0.41 (< 0.55): would have been supported" and v.abstained
    assert v.reason.startswith(v.abstention)
    d = report.to_dict()["verdict"]
    assert (d["label"], d["call"], d["abstention"]) == ("not enough evidence", "supported", v.abstention)
    assert d["confidence"] == pytest.approx(0.41)
    assert Report.from_dict(report.to_dict()).verdict == v
    assert report.provenance["verdict_confidence"]["min_confidence"] == 0.55


def test_a_confident_call_stands_and_a_given_threshold_wins(tiny_corpus):
    claim = Claim("v", "vaccine trial efficacy report")
    sure = _trust_checker(tiny_corpus, 0.8).check(claim).verdict
    assert (sure.label, sure.call, sure.abstention) == ("supported", "supported", None)
    assert sure.confidence == pytest.approx(0.8)
    strict = _trust_checker(tiny_corpus, 0.8, CheckSettings(planner="claim", passages=2, min_verdict_confidence=0.9))
    assert strict.check(claim).verdict.abstention == "low confidence 0.80 (< 0.9): would have been supported"
    off = _trust_checker(tiny_corpus, 0.41, CheckSettings(planner="claim", passages=2, min_verdict_confidence=0))
    assert off.check(claim).verdict.label == "supported"


def test_no_evidence_is_not_low_confidence(tiny_corpus):
    report = _trust_checker(tiny_corpus, 0.9).check(Claim("z", "Zxqv plorbt wibble."))
    v = report.verdict
    assert (v.label, v.abstention, v.confidence) == ("not enough evidence", "no evidence found", None)
    assert report.to_dict()["verdict"]["call"] == "not enough evidence"


def test_a_confidence_model_fitted_on_other_settings_is_not_used_by_default(tiny_corpus):
    head = CheckSettings(planner="claim", passages=2, stance="head")
    checker = _trust_checker(tiny_corpus, 0.41, head)
    assert checker.confidence is None and checker.min_confidence == 0.0
    assert "fitted on calls of stance 'cross'" in checker.provenance["verdict_confidence"]["unused"]
    assert checker.check(Claim("v", "vaccine trial efficacy report")).verdict.label == "supported"
    given = _trust_checker(tiny_corpus, 0.41, CheckSettings(planner="claim", stance="head", min_verdict_confidence=0.5))
    assert given.confidence is not None and any("miscalibrated" in w for w in given.provenance["warnings"])


def test_a_threshold_without_a_confidence_model_is_an_error(tiny_corpus, monkeypatch):
    import factscout.check

    monkeypatch.setattr(factscout.check, "shipped", lambda: None)
    with pytest.raises(InputError, match="needs a verdict confidence model"):
        _trust_checker(tiny_corpus, 0.5, CheckSettings(min_verdict_confidence=0.5), confidence=None)
    assert _trust_checker(tiny_corpus, 0.5, confidence=None).min_confidence == 0.0  # none shipped: never abstain


def test_old_reports_without_the_confidence_fields_read_back():
    d = {"format": FORMAT, "claim_id": "c", "claim": "x", "date": None, "queries": [], "evidence": [],
         "verdict": {"label": "supported", "method": "m", "reason": "r",
                     "counts": {"supporting": 1, "refuting": 0, "neutral": 0}}}  # fmt: skip
    v = Report.from_dict(d).verdict
    assert (v.confidence, v.call, v.abstention, v.abstained) == (None, "supported", None, False)


@pytest.mark.parametrize("bad", ["1.5", "-0.2"])
def test_cli_refuses_a_min_confidence_outside_0_1_before_loading_anything(tmp_path, bad):
    r = runner.invoke(app, ["check", "x", "--index", str(tmp_path / "missing"), "--min-confidence", bad])
    assert r.exit_code == 2
    assert "must be a number from 0 to 1" in r.output and "missing" not in r.output  # before the index is read
    assert len(r.output.strip().splitlines()) == 1, r.output
