"""ClaimDecomp, HoVer, COVID-Fact and QuanTemp loaders against the real data."""

from __future__ import annotations

import collections
import datetime as dt
import json

from factscout.datasets import covidfact, quantemp


def test_claimdecomp_dev(loaded):
    ds = loaded("claimdecomp", "dev")
    assert len(ds.claims) == 200
    assert all(c.date is not None for c in ds.claims)
    assert all(len(c.meta["subquestions"]) == 2 and c.meta["questions"] for c in ds.claims)
    kinds = collections.Counter(q["kind"] for c in ds.claims for sub in c.meta["subquestions"] for q in sub)
    assert kinds == {"implied": 844, "literal": 223}
    claim = next(c for c in ds.claims if c.claim_id == "8057719209342304749")
    assert claim.date == dt.date(2020, 4, 7)
    assert claim.meta["label"] == "false"
    assert claim.meta["subquestions"][0][0] == {
        "question": "Is voting fraud widespread in the US?",
        "answer": "no",
        "kind": "implied",
        "statement": "Voting fraud is widespread in the US.",
        "statement_negated": "Voting fraud is not widespread in the US.",
    }
    assert claim.meta["justification"][-1] == "We rate the statement False."


def test_hover_dev_and_test(loaded):
    dev = loaded("hover", "dev")
    assert len(dev.claims) == 4000
    assert collections.Counter(c.meta["num_hops"] for c in dev.claims) == {3: 1835, 2: 1126, 4: 1039}
    assert collections.Counter(c.meta["label"] for c in dev.claims) == {"SUPPORTED": 2000, "NOT_SUPPORTED": 2000}
    assert dev.corpus == () and dev.qrels == {}
    first = dev.claims[0]
    assert first.claim_id == "042339bf-0374-4ab3-ab49-6df5f12d868e"
    assert first.meta["supporting_facts"] == [["Life Goes On (Fergie song)", 2], ["M.I.L.F. $", 1]]
    test = loaded("hover", "test")
    assert len(test.claims) == 4000 and all("label" not in c.meta for c in test.claims)


def test_covidfact_claims_pool_and_qrels(loaded):
    ds = loaded("covidfact")
    assert ds.split == "all"
    assert len(ds.claims) == 4086
    assert len(ds.corpus) == 3219
    assert collections.Counter(c.meta["label"] for c in ds.claims) == {"REFUTED": 2790, "SUPPORTED": 1296}
    by_id = {p.passage_id: p for p in ds.corpus}
    assert set(ds.qrels) == {c.claim_id for c in ds.claims}
    for claim in ds.claims:
        evidence = dict.fromkeys(claim.meta["evidence"])
        assert ds.qrels[claim.claim_id] == {covidfact.sentence_id(s): 1 for s in evidence}
        assert all(by_id[covidfact.sentence_id(s)].text == s for s in evidence)
    assert ds.claims[1].text.startswith("Measuring chs-cov-2")  # a generated counter-claim


def test_covidfact_beir_view_builder(tmp_path):
    folder = tmp_path / "covidfact"
    folder.mkdir()
    rows = [
        {
            "claim": "A works.",
            "label": "SUPPORTED",
            "evidence": ["s1.", "s2.", "s1."],
            "gold_source": "g",
            "flair": "f",
        },
        {"claim": "A fails.", "label": "REFUTED", "evidence": ["s1."], "gold_source": "g", "flair": "f"},
    ]
    (folder / covidfact.DATA_FILE).write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    covidfact.write_beir_view(folder)
    ds = covidfact.load(root=tmp_path)
    s1, s2 = covidfact.sentence_id("s1."), covidfact.sentence_id("s2.")
    assert ds.qrels == {"cf0": {s1: 1, s2: 1}, "cf1": {s1: 1}}
    assert sorted(p.text for p in ds.corpus) == ["s1.", "s2."]


def test_quantemp_test_claims_each_have_questions(loaded):
    ds = loaded("quantemp", "test")
    assert len(ds.claims) == 2495
    assert all(c.meta["questions"] for c in ds.claims)
    assert collections.Counter(len(c.meta["questions"]) for c in ds.claims) == {3: 2408, 4: 53, 5: 16, 1: 16, 6: 2}
    for claim in ds.claims:
        for q in claim.meta["questions"]:
            assert q == " ".join(q.split()) and "next question" not in q.lower() and not q.lower().startswith("claim")
    first = ds.claims[0]
    assert first.claim_id == "test-0"
    assert first.meta["questions"] == [
        "Did the Congressional Budget Office conclude that ObamaCare will cost the U.S. more than 800,000 jobs?",
        "Is the Congressional Budget Office considered a non-partisan entity?",
        "Is there evidence to support the claim that ObamaCare will cost the U.S. more than 800,000 jobs?",
    ]


def test_quantemp_taxonomy_deduplicates_repeated_rows(loaded):
    ds = loaded("quantemp", "taxonomy")
    assert len(ds.claims) == 157  # the file has 309 rows
    assert sum(len(c.meta["rows"]) for c in ds.claims) == 309
    assert set(c.meta["taxonomy"] for c in ds.claims) == set(quantemp.TAXONOMY)
    mixed = [c for c in ds.claims if len(set(c.meta["taxonomy_labels"])) > 1]
    assert [(c.text, c.meta["taxonomy"]) for c in mixed] == [
        ("Sri Lanka Olympic team resources stretched due to 60 accompanying officials", "temporal")
    ]
    assert ds.claims[0].claim_id == "taxonomy-0" and ds.claims[0].meta["rows"] == [0, 91, 104, 125]


def test_parse_questions_handles_the_separators_found_in_the_file():
    assert quantemp.parse_questions("Q1?\n \n\nNext Question: \nQ2? \n\nNext Question :  Q3?\n") == [
        "Q1?",
        "Q2?",
        "Q3?",
    ]
    assert quantemp.parse_questions("A?\nNext Questions: B?\n Next Question: C?") == ["A?", "B?", "C?"]
    run_on = 'A?\nNext Question: B?\nClaim: "Other claim."\nNext Question: C?'
    assert quantemp.parse_questions(run_on) == ["A?", "B?"]
    assert quantemp.parse_questions("1. A?\nNext Question: Question 2: Wrapped\nline?") == ["A?", "Wrapped line?"]
    assert quantemp.parse_questions("  ") == []
