"""``benchmarks/verdict_loss.py``: the decomposition's pure functions on hand-made claims and
stances whose figures are known, and the script end to end on five Check-COVID claims given as a
file (BM25 closed pool, the default stance model), publishing into a temporary results folder."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import verdict_loss as vl  # noqa: E402  (benchmarks/ is not a package)

from factscout.records import NOT_ENOUGH_INFO, SUPPORTS, Claim, Stance  # noqa: E402
from factscout.verify.verdict import CountRule  # noqa: E402

S, R, N = "supported", "refuted", "not enough evidence"
ABSTRACTS = {
    "d1": ["Background", "Drug A lowers blood pressure.", "It was safe. Nobody died."],
    "d2": ["Drug A raises blood pressure.", "Other text."],
}


def claim(cid: str, label: str, evidence: dict | None = None, **meta: object) -> Claim:
    return Claim(cid, f"claim {cid}", None, {"label": label, "evidence": evidence or {}, **meta})


def stance(pid: str, i: int, p: tuple[float, float, float]) -> Stance:
    from factscout.verify.stance import to_stance

    return to_stance(pid, i, p)


def test_gold_sentences_are_the_rationales_or_an_nei_claims_annotated_sentences():
    sup = claim("1", "SUPPORT", {"d1": [{"sentences": [2, 1], "label": "SUPPORT"}]}, cited_doc_ids=["d1"])
    got = vl.gold_sentences(sup, ABSTRACTS)
    assert [(g.passage_id, g.index, g.stance) for g in got] == [("d1", 1, SUPPORTS), ("d1", 2, SUPPORTS)]
    assert got[0].text == "Drug A lowers blood pressure."
    two_docs = claim(
        "2",
        "CONTRADICT",
        {"d2": [{"sentences": [0], "label": "CONTRADICT"}], "d1": [{"sentences": [1], "label": "CONTRADICT"}]},
    )
    assert [(g.passage_id, g.index) for g in vl.gold_sentences(two_docs, ABSTRACTS)] == [("d1", 1), ("d2", 0)]
    nei = claim("3", "NEI", cited_doc_ids=["d2"], nei_sentences=[1])
    assert [(g.passage_id, g.index, g.stance) for g in vl.gold_sentences(nei, ABSTRACTS)] == [
        ("d2", 1, NOT_ENOUGH_INFO)
    ]
    assert vl.rationale(vl.gold_sentences(nei, ABSTRACTS)) == []
    assert vl.gold_sentences(claim("4", "NEI", cited_doc_ids=["d1"]), ABSTRACTS) == []  # SciFact NEI: none


def test_the_rule_ceiling_on_gold_stances_is_the_gold_verdict_unless_min_evidence_asks_for_more():
    claims = [
        claim("1", "SUPPORT", {"d1": [{"sentences": [1, 2], "label": "SUPPORT"}]}),
        claim("2", "CONTRADICT", {"d2": [{"sentences": [0], "label": "CONTRADICT"}]}),
        claim("3", "NEI", cited_doc_ids=["d2"], nei_sentences=[1]),
        claim("4", "NEI", cited_doc_ids=["d1"]),
    ]
    gold_stances = [[g.as_stance() for g in vl.gold_sentences(c, ABSTRACTS)] for c in claims]
    assert vl.rule_verdicts(gold_stances, CountRule(1, 0.34)) == [S, R, N, N]
    ceiling = vl.verdict_scores([S, R, N, N], vl.rule_verdicts(gold_stances, CountRule(1, 0.34)))
    assert ceiling["macro_f1"] == 1.0 and ceiling["nei_decision"]["f1"] == 1.0
    # a rule that needs two sentences: the one-rationale refuted claim becomes not enough evidence
    assert vl.rule_verdicts(gold_stances, CountRule(2, 0.9)) == [S, N, N, N]


def test_direction_counts_confident_sentences_then_breaks_ties_by_probability():
    rule = CountRule(1, 0.5)
    sup, ref = stance("d", 0, (0.8, 0.1, 0.1)), stance("d", 1, (0.1, 0.8, 0.1))
    assert vl.direction([sup, sup, ref], rule) == S
    assert vl.direction([ref], rule) == R
    # no confident side (all not enough info): the summed probabilities decide
    assert vl.direction([stance("d", 0, (0.3, 0.1, 0.6)), stance("d", 1, (0.2, 0.2, 0.6))], rule) == S
    assert vl.direction([sup, ref], rule) is None  # an exact tie
    assert vl.direction([], rule) is None
    verdicts, undecided = vl.oracle_nei([S, N, R, S], [[ref], [sup], [ref], []], rule)
    assert verdicts == [R, N, R, N] and undecided == 1


def test_scores_of_a_known_decomposition():
    gold = [S, R, N, S]
    nei_only = (0.3, 0.1, 0.6)  # argmax not enough info, leaning to supports
    on_gold = [
        [stance("d", 0, (0.9, 0.05, 0.05))],
        [stance("d", 1, (0.7, 0.2, 0.1))],  # refuted claim read as supported
        [stance("d", 2, (0.1, 0.1, 0.8))],
        [stance("d", 3, nei_only)],  # supported claim read as not enough info
    ]
    rule = CountRule(1, 0.5)
    pred = vl.rule_verdicts(on_gold, rule)
    assert pred == [S, S, N, N]
    s = vl.verdict_scores(gold, pred)
    # supported P 1/2 R 1/2 F1 1/2; refuted 0; NEI P 1/2 R 1 F1 2/3
    assert s["macro_f1"] == pytest.approx((0.5 + 0 + 2 / 3) / 3)
    assert s["accuracy"] == 0.5
    assert s["per_class"][N] == pytest.approx(
        {"precision": 0.5, "recall": 1.0, "f1": 2 / 3, "predicted": 2, "gold": 1, "right": 1}
    )
    assert s["confusion"][R] == {S: 1, R: 0, N: 0} and s["confusion"][S] == {S: 1, R: 0, N: 1}
    assert s["nei_decision"]["precision"] == 0.5 and s["nei_decision"]["recall"] == 1.0
    assert s["direction"] == {"calls": 2, "right": 1, "accuracy": 0.5}
    oracle, undecided = vl.oracle_nei(gold, on_gold, rule)
    assert oracle == [S, S, N, S] and undecided == 0
    o = vl.verdict_scores(gold, oracle)
    assert o["macro_f1"] == pytest.approx((0.8 + 0 + 1) / 3)
    ceiling = vl.verdict_scores(gold, gold)
    parts = {"gold_sentences": s, "gold_sentences_oracle": o, "check": s, "check_oracle": o}
    rows = vl.decomposition(ceiling, {"cross": parts})
    assert [r[0] for r in rows] == [
        "1. rule ceiling: gold sentences, gold stances",
        "2. gold sentences, stance `cross`",
        "2'. row 2, NEI by oracle",
        "3. check (retrieved, selected), stance `cross`",
        "3'. row 3, NEI by oracle",
    ]
    assert [r[2] for r in rows] == ["-", "-0.6111 vs row 1", "+0.2111 vs row 2", "+0.0000 vs row 2", "+0.2111 vs row 3"]
    assert rows[1][1] == pytest.approx(0.3889, abs=1e-4) and rows[1][-1] == 0.5
    assert "0.611 is lost on the gold sentences" in vl.summary(ceiling, "cross", parts)


def test_split_map_follows_checks_own_sentence_split():
    # "Background" has no full stop: check's splitter joins it to the next sentence; the last
    # abstract sentence is split in two
    assert vl.split_map(ABSTRACTS["d1"]) == [{0}, {0}, {1, 2}]
    assert vl.split_map(ABSTRACTS["d2"]) == [{0}, {1}]


def test_evidence_recall_counts_rationale_sentences_claims_and_abstracts_read():
    maps = {d: vl.split_map(a) for d, a in ABSTRACTS.items()}
    claims = [
        claim("1", "SUPPORT", {"d1": [{"sentences": [1, 2], "label": "SUPPORT"}]}),
        claim("2", "CONTRADICT", {"d2": [{"sentences": [0], "label": "CONTRADICT"}]}),
        claim("3", "NEI", cited_doc_ids=["d2"], nei_sentences=[1]),  # no rationale: not counted
    ]
    golds = [vl.gold_sentences(c, ABSTRACTS) for c in claims]
    selected = [{"d1": {2}}, {"d2": {1}, "d1": {0}}, {"d2": {1}}]  # claim 1 reaches sentence 2 only
    read = [{"d1"}, {"d1", "d2"}, {"d2"}]
    r = vl.evidence_recall(golds, selected, read, maps)
    assert r == {
        "claims": 2,
        "sentences": 3,
        "sentences_reached": 1,
        "sentence_recall": pytest.approx(1 / 3),
        "claims_reached": 1,
        "claim_recall": 0.5,
        "claims_abstract_read": 2,
        "abstract_recall": 1.0,
    }
    rows = vl.claim_rows(claims, [S, R, N], {"check": [S, S, N]}, golds, selected, maps)
    assert [(x["rationale_reached"], x["selected_sentences"], x["check"]) for x in rows] == [
        (1, 1, S),
        (0, 2, S),
        (0, 1, N),
    ]


@pytest.mark.slow
@pytest.mark.dataset
@pytest.mark.encoder
def test_the_script_decomposes_five_checkcovid_claims_and_publishes(tmp_path):
    from factscout.datasets import data_root

    dev = data_root() / "check-covid" / "dev" / "covidCheck_dev_composed+extracted.json"
    rows = dev.read_text().splitlines()[:6]
    (tmp_path / "claims.json").write_text("\n".join(rows) + "\n")
    results = tmp_path / "results"
    env = {**os.environ, "FACTSCOUT_BENCHMARK_RESULTS": str(results), "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "verdict_loss.py"), "--domains", "checkcovid"]
    cmd += ["--checkcovid", str(tmp_path / "claims.json"), "--limit", "5", "--retriever", "bm25"]
    cmd += ["--cache", str(tmp_path / "cache"), "--name", "vl"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    headline = json.loads(done.stdout.strip().splitlines()[-1])
    assert headline["claims"] == {"checkcovid": 5} and headline["stance"] == ["cross"]
    figures = headline["macro_f1"]["checkcovid"]
    assert set(figures) == {"ceiling", "gold_sentences", "check", "oracle_nei"}
    assert figures["ceiling"] == 1.0  # gold stances through the rule give the gold verdicts
    assert all(0.0 <= figures[k]["cross"] <= 1.0 for k in ("gold_sentences", "check", "oracle_nei"))
    table = (results / "vl.md").read_text()
    assert "### Check-COVID claims.json: 5 claims" in table and "| 3'. row 3, NEI by oracle |" in table
    assert "gold rationale reaching the stance model" in table and "Reproduce:" in table
    scores = json.loads((results / "vl" / "scores.json").read_text())
    check = scores["domains"]["checkcovid"]["models"]["cross"]["check"]
    assert sum(sum(row.values()) for row in check["confusion"].values()) == 5
    with gzip.open(results / "vl" / "checkcovid-cross.jsonl.gz", "rt") as f:
        predicted = [json.loads(line) for line in f]
    assert [p["claim_id"] for p in predicted] == [json.loads(r)["id"] for r in rows[:5]]
    assert {"ceiling", "gold_sentences", "check", "check_oracle", "rationale_reached"} <= set(predicted[0])
    manifest = json.loads((results / "vl" / "manifest.json").read_text())
    assert manifest["headline"] == headline
