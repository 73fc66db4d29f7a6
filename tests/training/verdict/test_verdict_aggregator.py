"""The verdict aggregator's trainer: the pipeline pass and its cache, model choice on dev, the
temperature, the calibration error, the train-and-evaluate step on synthetic claims and the CLI."""

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from factscout.check import Checker, CheckSettings
from factscout.errors import InputError
from factscout.records import STANCE_LABELS, Claim, Hit, Ranking, Sentence, Stance
from factscout.retrieve import build_retriever
from factscout.text.sentences import sentences_of
from factscout.training.verdict.aggregator import (
    AggregatorConfig,
    choose_model,
    expected_calibration_error,
    fit_temperature,
    train_and_evaluate,
)
from factscout.training.verdict.aggregator_card import model_card
from factscout.training.verdict.evidence import (
    EVIDENCE_FORMAT,
    OOF_RECIPE,
    ClaimEvidence,
    pipeline_evidence,
    read_evidence,
    write_evidence,
)
from factscout.verify import CountRule
from factscout.verify.aggregate import VerdictAggregator, claim_features

RULE = CountRule(1, 0.4)
RANKING = Ranking("c", [Hit(f"p{i}", 5.0 - i) for i in range(5)])
PIPELINE = {"retriever": "bm25", "settings": {"stance": "head"}, "rule": {"min_evidence": 1, "min_confidence": 0.4}}


def stance(pid, index, label, p):
    rest = (1.0 - p) / 2
    probs = [rest, rest, rest]
    probs[STANCE_LABELS.index(label)] = p
    return Stance(pid, index, label, tuple(probs))


SCIFACT = {"supported": "SUPPORT", "refuted": "CONTRADICT", "not enough evidence": "NEI"}


def synthetic(n, seed):
    """``n`` claims per verdict with noisy stances: claim, evidence (side sentences are confident
    with probability 0.8, so neither the rule nor the model is always right)."""
    rng = np.random.default_rng(seed)
    claims, evidence = [], {}
    for verdict, side in (("supported", "supports"), ("refuted", "refutes"), ("not enough evidence", None)):
        for _ in range(n):
            cid = f"{seed}-{len(claims)}"
            stances = [stance(f"p{rng.integers(0, 5)}", i, "not enough info", rng.uniform(0.4, 0.9)) for i in range(3)]
            if side is not None:
                stances += [stance("p0", 9 + i, side, rng.uniform(0.5, 0.95)) for i in range(rng.integers(1, 4))
                            if rng.random() < 0.8]  # fmt: skip
            claims.append(Claim(cid, f"claim {cid} about {verdict}", meta={"label": SCIFACT[verdict]}))
            evidence[cid] = ClaimEvidence(
                tuple(stances), Ranking.from_scores(cid, {h.passage_id: h.score for h in RANKING.hits})
            )
    return claims, evidence


def test_evidence_cache_round_trip(tmp_path):
    _, evidence = synthetic(2, 0)
    path = write_evidence(tmp_path / "ev.jsonl", PIPELINE, evidence)
    again = read_evidence(path, json.loads(json.dumps(PIPELINE)))
    assert again.keys() == evidence.keys()
    for cid, ev in evidence.items():
        assert again[cid].stances == ev.stances
        assert [(h.passage_id, h.score) for h in again[cid].ranking.hits] == [
            (h.passage_id, h.score) for h in ev.ranking.hits
        ]
    assert json.loads(path.read_text().splitlines()[0]) == {"format": EVIDENCE_FORMAT, "pipeline": PIPELINE}


def test_a_cache_of_another_pipeline_or_a_bad_file_is_refused(tmp_path):
    _, evidence = synthetic(1, 0)
    path = write_evidence(tmp_path / "ev.jsonl", PIPELINE, evidence)
    with pytest.raises(InputError, match=r"made by another pipeline.*give another --features file"):
        read_evidence(path, {**PIPELINE, "settings": {"stance": "cross"}})
    headerless = tmp_path / "rows.jsonl"
    headerless.write_text("\n".join(path.read_text().splitlines()[1:]) + "\n")
    with pytest.raises(InputError, match=r"rows\.jsonl:1: not a verdict evidence file"):
        read_evidence(headerless, PIPELINE)
    broken = tmp_path / "broken.jsonl"
    broken.write_text(
        path.read_text().splitlines()[0]
        + '\n{"claim_id": "1", "stances": [["p", 0, "maybe", [1, 0, 0]]], "ranking": []}\n'
    )
    with pytest.raises(InputError, match=r"broken\.jsonl:2: bad evidence row"):
        read_evidence(broken, PIPELINE)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n")
    with pytest.raises(InputError, match="empty"):
        read_evidence(empty, PIPELINE)


class KeywordSelector:
    """Every sentence of the passage (no encoder: the checker then embeds nothing)."""

    encoder = object()

    def select_passage(self, claim, passage):
        return [Sentence(passage.passage_id, i, t, 1.0) for i, t in enumerate(sentences_of(passage.text))]


class WordStance:
    """'vaccine' supports, 'report' without it refutes."""

    def predict(self, claim, sentences):
        out = []
        for s in sentences:
            label = "supports" if "accine" in s.text else "refutes"
            out.append(stance(s.passage_id, s.index, label, 0.8))
        return out


def test_pipeline_evidence_keeps_what_check_hands_the_verdict_method(tiny_corpus):
    checker = Checker(build_retriever(tiny_corpus, "bm25"), CheckSettings(planner="claim", passages=2),
                      selector=KeywordSelector(), stance=WordStance(), rule=RULE)  # fmt: skip
    claims = [Claim("a", "vaccine trial efficacy"), Claim("b", "budget deficit report")]
    seen = pipeline_evidence(checker, claims, batch=1)
    assert set(seen) == {"a", "b"}
    reports = {c.claim_id: checker.check(c) for c in claims}
    for cid, ev in seen.items():
        top = [h.passage_id for h in ev.ranking.top(2).hits]
        assert [e.passage_id for e in reports[cid].evidence] == top
        assert len(ev.stances) == sum(len(e.sentences) for e in reports[cid].evidence)
        assert RULE(ev.stances).label == reports[cid].verdict.label
    assert all(s.label == "supports" for s in seen["a"].stances if s.passage_id == "p01")


def test_choose_model_keeps_the_best_dev_score_and_fits_a_temperature():
    claims, evidence = synthetic(30, 1)
    dev_claims, dev_evidence = synthetic(15, 2)

    def xy(cs, ev):
        return np.stack([claim_features(ev[c.claim_id].stances, ev[c.claim_id].ranking, RULE) for c in cs]), [
            {"SUPPORT": "supported", "CONTRADICT": "refuted", "NEI": "not enough evidence"}[c.meta["label"]] for c in cs
        ]

    (x, y), (xd, yd) = xy(claims, evidence), xy(dev_claims, dev_evidence)
    labels = ["supported", "refuted", "not enough evidence"]
    model, grid = choose_model(
        x, y, xd, yd, labels, k=10, rule=RULE, c_grid=(0.01, 1.0), class_weights=("balanced", None)
    )
    assert [(g["C"], g["class_weight"]) for g in grid] == [
        (0.01, "balanced"),
        (1.0, "balanced"),
        (0.01, "none"),
        (1.0, "none"),
    ]
    best = max(g["dev_macro_f1"] for g in grid)
    assert grid[[g["dev_macro_f1"] for g in grid].index(best)]["dev_macro_f1"] == best
    assert isinstance(model, VerdictAggregator) and 0.25 <= model.temperature <= 4.0
    assert best > 0.6  # the synthetic verdicts are learnable


def test_fit_temperature_recovers_the_scale_of_overconfident_logits():
    rng = np.random.default_rng(0)
    z = rng.normal(size=(4000, 3)) * 1.5
    p = np.exp(z) / np.exp(z).sum(axis=1, keepdims=True)
    gold = [int(rng.choice(3, p=row)) for row in p]  # labels drawn from softmax(z): calibrated at T = 1
    assert fit_temperature(z * 2.0, gold) == pytest.approx(2.0, rel=0.1)
    assert fit_temperature(z, gold) == pytest.approx(1.0, rel=0.1)
    with pytest.raises(InputError):
        fit_temperature(np.zeros((0, 3)), [])


def test_expected_calibration_error_by_hand():
    probs = np.array([[0.9, 0.1], [0.56, 0.44], [0.42, 0.58], [0.3, 0.7]])
    # (0.8, 0.9]: one right at 0.9 -> |1 - 0.9|; (0.5, 0.6]: 0.56 right and 0.58 wrong -> |0.5 - 0.57|, two of
    # four claims; (0.6, 0.7]: 0.7 wrong -> |0 - 0.7|
    expected = 0.25 * 0.1 + 0.5 * 0.07 + 0.25 * 0.7
    assert expected_calibration_error(probs, [0, 0, 0, 0]) == pytest.approx(expected)


def test_train_and_evaluate_writes_a_model_that_loads_and_a_card(tmp_path):
    fit, ev = synthetic(30, 3)
    dev, ev_dev = synthetic(12, 4)
    held, ev_held = synthetic(12, 5)
    evidence = {**ev, **ev_dev, **ev_held}
    about = {
        "pipeline": {"corpus": "tiny", "retriever": "bm25", "rule": {"min_evidence": 1, "min_confidence": 0.4},
                     "settings": {"planner": "claim", "fusion": "combsum-norm", "passages": 5, "selector": "threshold",
                                  "stance": "head"}},
        "stance_model": {"kind": "head"},
        "licence": "CC BY 4.0",
        "command": "factscout train verdict-aggregator --out X",
        "seconds": {"pipeline_pass": 0.0, "total": 1.0},
    }  # fmt: skip
    rng = np.random.default_rng(0)

    def embed(texts):
        return rng.normal(size=(len(texts), 8))

    config = AggregatorConfig(stance="head", bootstrap=200)
    report = train_and_evaluate(tmp_path, {"fit": fit, "dev": dev, "heldout": held}, evidence, RULE, config,
                                embed=embed, about=about)  # fmt: skip
    model = VerdictAggregator.load(tmp_path / "verdict_aggregator.json")
    assert model.labels == ("supported", "refuted", "not enough evidence") and model.info["stance"] == "head"
    assert set(report["heldout"]) == {"learned", "rule", "majority", "claim-only"}
    lo, hi = report["heldout_ci95"]["learned"]
    assert lo <= report["heldout"]["learned"]["macro_f1"] <= hi
    assert "learned - rule" in report["heldout_ci95"]
    assert report["heldout"]["learned"]["macro_f1"] > report["heldout"]["majority"]["macro_f1"]
    assert report["claims"] == {"fit": 90, "dev": 36, "heldout": 36}
    assert all(report["calibration"]["heldout"][k] >= 0 for k in ("ece", "ece_raw", "nll", "nll_raw"))
    card = model_card(report)
    assert (
        "| learned aggregator |" in card and report["sha256"] in card and "factscout train verdict-aggregator" in card
    )
    assert not math.isnan(report["heldout"]["claim-only"]["macro_f1"])
    assert "Caveat: a stance model trained on the fitting or dev claims" in card
    oof = {**report, "pipeline": {**report["pipeline"], "training_part_stances": OOF_RECIPE}}
    assert "out-of-fold stance heads" in model_card(oof) and "Caveat" not in model_card(oof)
    with pytest.raises(InputError, match="no pipeline output"):
        train_and_evaluate(
            tmp_path, {"fit": fit, "dev": dev, "heldout": held}, ev, RULE, config, embed=embed, about=about
        )


def test_cli_help_and_bad_options():
    from factscout.cli.main import app

    r = CliRunner().invoke(app, ["train", "verdict-aggregator", "--help"])
    assert r.exit_code == 0
    for option in ("--out", "--stance", "--k", "--features", "--limit-claims"):
        assert option in r.output
    r = CliRunner().invoke(app, ["train", "verdict-aggregator", "--out", "x", "--k", "0"])
    assert r.exit_code == 2 and "--k" in r.output and "greater than or equal to 1" in r.output


def test_train_and_evaluate_takes_a_four_way_label_set(tmp_path):
    labels = ("supported", "refuted", "not enough evidence", "conflicting")

    def part(n, seed):
        claims, evidence = synthetic(n, seed)
        claims = [Claim(c.claim_id, c.text, meta={"verdict": {"SUPPORT": "supported", "CONTRADICT": "refuted",
                  "NEI": "not enough evidence"}[c.meta["label"]]}) for c in claims]  # fmt: skip
        rng = np.random.default_rng(seed)
        for i in range(n):  # conflicting: confident sentences on both sides
            cid = f"{seed}-x{i}"
            both = [stance("p0", j, "supports", rng.uniform(0.7, 0.95)) for j in range(2)]
            both += [stance("p1", j, "refutes", rng.uniform(0.7, 0.95)) for j in range(2)]
            claims.append(Claim(cid, f"mixed claim {cid}", meta={"verdict": "conflicting"}))
            evidence[cid] = ClaimEvidence(tuple(both), RANKING)
        return claims, evidence

    (fit, ev1), (dev, ev2), (held, ev3) = part(25, 6), part(10, 7), part(10, 8)
    about = {"pipeline": {}, "stance_model": {}}
    report = train_and_evaluate(
        tmp_path, {"fit": fit, "dev": dev, "heldout": held}, {**ev1, **ev2, **ev3}, RULE,
        AggregatorConfig(bootstrap=100), embed=lambda texts: np.eye(len(texts), 4), about=about,
        labels=labels, gold_of=lambda c: c.meta["verdict"], data="synthetic",
    )  # fmt: skip
    model = VerdictAggregator.load(tmp_path / "verdict_aggregator.json")
    assert model.labels == labels and model.info["data"].startswith("synthetic")
    assert report["heldout"]["learned"]["f1"]["conflicting"] > 0.8
    assert report["heldout"]["rule"]["f1"]["conflicting"] == 0.0  # the count rule never says it
