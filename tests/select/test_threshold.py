"""The Quin+ threshold selector with a fake embedding function, and hand-checked sentence P/R/F1."""

import numpy as np
import pytest

from factscout.errors import InputError
from factscout.records import Claim, Passage
from factscout.select.threshold import (
    ScoredAbstract,
    ThresholdSelector,
    best_threshold,
    cross_validate_threshold,
    score_abstracts,
    sentence_prf,
    tune_threshold,
)
from factscout.verify.stance import Sentence

# 2-d fake embeddings: the claim points along x; each sentence's angle fixes its cosine.
VECTORS = {
    "claim": (1.0, 0.0),
    "same": (2.0, 0.0),  # cosine 1.0 (norm is ignored)
    "close": (0.8, 0.6),  # cosine 0.8
    "half": (0.5, np.sqrt(0.75)),  # cosine 0.5
    "far": (0.0, 1.0),  # cosine 0.0
    "opposite": (-1.0, 0.0),  # cosine -1.0
}


def fake_embed(texts):
    return np.array([VECTORS[t] for t in texts], dtype=np.float32)


def test_selector_keeps_sentences_at_or_above_threshold_in_passage_order():
    sel = ThresholdSelector(0.5, encoder=fake_embed)
    got = sel.select("claim", "p1", ["far", "close", "half", "opposite", "same"])
    assert [s.index for s in got] == [1, 2, 4]
    assert [s.text for s in got] == ["close", "half", "same"]
    assert all(isinstance(s, Sentence) and s.passage_id == "p1" for s in got)
    assert [s.score for s in got] == pytest.approx([0.8, 0.5, 1.0], abs=1e-6)


def test_threshold_moves_the_cut():
    sentences = ["far", "close", "half"]
    assert [s.text for s in ThresholdSelector(0.9, encoder=fake_embed).select("claim", "p", sentences)] == []
    assert len(ThresholdSelector(-1.0, encoder=fake_embed).select("claim", "p", sentences)) == 3
    assert ThresholdSelector(0.0, encoder=fake_embed).select("claim", "p", []) == []


def test_encoder_object_with_encode_method():
    class Enc:
        def encode(self, texts):
            return fake_embed(texts)

    assert [s.text for s in ThresholdSelector(0.7, encoder=Enc()).select("claim", "p", ["close", "far"])] == ["close"]


def test_select_passage_splits_sentences():
    def embed(texts):
        return np.array([(1.0, 0.0) if "vaccine" in t.lower() else (0.0, 1.0) for t in texts], dtype=np.float32)

    passage = Passage("p9", "d9", "t", "The vaccine works. Rain fell today. Vaccine uptake rose.")
    got = ThresholdSelector(0.5, encoder=embed).select_passage(Claim("c", "vaccine claim"), passage)
    assert [(s.index, s.text) for s in got] == [(0, "The vaccine works."), (2, "Vaccine uptake rose.")]


@pytest.mark.parametrize("bad", [1.5, -2, "0.5"])
def test_bad_threshold_raises(bad):
    with pytest.raises(InputError):
        ThresholdSelector(bad)


def test_bad_input_raises():
    sel = ThresholdSelector(0.5, encoder=fake_embed)
    with pytest.raises(InputError):
        sel.select("", "p", ["far"])
    with pytest.raises(InputError):
        sel.select("claim", "p", "far")


def test_sentence_prf_by_hand():
    prf = sentence_prf([("c1", 1), ("c1", 2), ("c2", 0), ("c2", 0)], [("c1", 1), ("c2", 0), ("c2", 5)])
    # tp = 2 of 3 predicted (duplicate counts once) and 3 gold
    assert prf.precision == pytest.approx(2 / 3)
    assert prf.recall == pytest.approx(2 / 3)
    assert prf.f1 == pytest.approx(2 / 3)
    assert sentence_prf([], [1]) == sentence_prf([1], []) == sentence_prf([1], [2])
    assert sentence_prf([], [1]).f1 == 0.0
    assert sentence_prf([1, 2, 3, 4], [1]).f1 == pytest.approx(2 * 0.25 * 1 / 1.25)


def test_best_threshold_by_hand():
    scored = [
        ScoredAbstract("c1", "d1", (0.9, 0.6, 0.2), frozenset({0})),
        ScoredAbstract("c2", "d2", (0.7, 0.4), frozenset({0, 1})),
    ]
    # t=0.4: 4 predicted, 3 tp -> P .75 R 1 F1 .857; t=0.7: 2 tp of 2, R 2/3 -> F1 .8; t=0.3 same as 0.4
    fit = best_threshold(scored, [0.3, 0.4, 0.7, 0.95])
    assert fit.threshold == 0.3  # ties go to the lowest threshold
    assert fit.f1 == pytest.approx(2 * 0.75 / 1.75)
    assert best_threshold(scored, [0.7, 0.95]).f1 == pytest.approx(0.8)
    with pytest.raises(InputError):
        best_threshold([], [0.5])


def test_tune_and_cross_validate_on_scifact_style_claims():
    abstracts = {"d1": ["same", "far"], "d2": ["close", "opposite", "half"], "d3": ["far"]}
    claims = [
        Claim(
            "1", "claim", meta={"evidence": {"d1": [{"sentences": [0], "label": "SUPPORT"}]}, "cited_doc_ids": ["d1"]}
        ),
        Claim(
            "2",
            "claim",
            meta={"evidence": {"d2": [{"sentences": [0, 2], "label": "CONTRADICT"}]}, "cited_doc_ids": ["d2", "d3"]},
        ),
        Claim("3", "claim", meta={"evidence": {}, "cited_doc_ids": ["d3"]}),  # NEI: skipped
    ]
    scored = score_abstracts(claims, abstracts, encoder=fake_embed)
    assert [(a.claim_id, a.doc_id, a.gold) for a in scored] == [
        ("1", "d1", frozenset({0})),
        ("2", "d2", frozenset({0, 2})),
        ("2", "d3", frozenset()),
    ]
    fit = tune_threshold(claims, abstracts, encoder=fake_embed, grid=[0.1, 0.5, 0.9])
    assert (fit.threshold, fit.f1) == (0.1, 1.0)  # the three rationales have cosine >= .5, the rest <= 0
    cv = cross_validate_threshold(scored, seed=0, grid=[0.1, 0.5, 0.9])
    assert cv.mean_f1 == pytest.approx(sum(cv.f1) / 2)
    assert len(cv.thresholds) == 2
