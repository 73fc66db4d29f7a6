"""The NLI and claim-evidence loaders added for a first NLI stage (MultiNLI, SNLI, counterfactual
SNLI, Breaking NLI, FEVER-Symmetric, SufficientFacts, WiCE, RTE): counts, labels, licences and one
concrete pair each on the real files; the label rules; bad rows named by file and line; the
download URLs."""

from __future__ import annotations

import collections
import json
import zipfile
from pathlib import Path

import pytest

from factscout.datasets import load_dataset
from factscout.errors import InputError
from factscout.training.cards import licence_of

NEW = ["mnli", "snli", "snli_cf", "breaking_nli", "fever_symmetric", "sufficient_facts", "wice", "rte"]


def _stances(ds) -> dict[str, int]:
    return dict(collections.Counter(c.meta["stance"] for c in ds.claims))


def test_mnli_dev_matched_and_contradicting(loaded):
    dev, contra = loaded("mnli", "dev_matched"), loaded("mnli", "contradicting")
    assert len(dev.claims) == 9815 and len(contra.claims) == 261 and len(loaded("mnli", "all").claims) == 10076
    assert collections.Counter(c.meta["label"] for c in dev.claims) == {
        "entailment": 3479,
        "contradiction": 3213,
        "neutral": 3123,
    }
    assert collections.Counter(c.meta["label"] for c in contra.claims) == {"contradiction": 179, "neutral": 82}
    first = dev.claims[0]
    assert first.claim_id == "mnli-0" and first.text == "Everyone really likes the newest benefits"
    assert first.meta["premise"] == "The new rights are nice enough"
    assert first.meta["stance"] == "not enough info" and first.meta["difficulty"] == "easy"
    assert contra.claims[0].text == "I am keeping back facts." and contra.claims[0].meta["stance"] == "refutes"
    assert collections.Counter(c.meta["difficulty"] for c in dev.claims) == {"easy": 7563, "hard": 1460, "medium": 792}
    assert licence_of("mnli").startswith("OANC licence")


def test_snli_dev_test_with_explanations(loaded):
    dev, test = loaded("snli", "dev"), loaded("snli", "test")
    assert len(dev.claims) == 9842 and len(test.claims) == 9824  # the pairs with a gold label
    assert _stances(dev) == {"supports": 3329, "refutes": 3278, "not enough info": 3235}
    assert _stances(test) == {"supports": 3368, "refutes": 3237, "not enough info": 3219}
    first = dev.claims[0]
    assert first.claim_id == "snli-dev-1"
    assert first.text == "The sisters are hugging goodbye while holding to go packages after just eating lunch ."
    assert first.meta["premise"] == "Two women are embracing while holding to go packages ."
    assert first.meta["explanation"] == "the to go packages may not be from lunch ."
    assert licence_of("snli") == "CC BY-SA 4.0 (SNLI); e-SNLI explanations MIT"


def test_snli_counterfactual_splits(loaded):
    sizes = {s: len(loaded("snli_cf", s).claims) for s in ("train", "dev", "test")}
    assert sizes == {"train": 8330, "dev": 1000, "test": 2000}
    assert _stances(loaded("snli_cf", "test")) == {"supports": 654, "refutes": 669, "not enough info": 677}
    first = loaded("snli_cf", "train").claims[0]
    assert first.claim_id == "snli_cf-train-2" and first.text == "A man rides his motorcyle with his won."
    assert first.meta["premise"].startswith("A man is riding a red motorcycle") and first.meta["label"] == "neutral"
    assert licence_of("snli_cf").startswith("Apache-2.0")


def test_breaking_nli_read_from_the_zip(loaded):
    ds = loaded("breaking_nli", "test")
    assert len(ds.claims) == 8193
    assert _stances(ds) == {"refutes": 7164, "supports": 982, "not enough info": 47}
    assert len({c.meta["category"] for c in ds.claims}) == 14
    first = ds.claims[0]
    assert first.claim_id == "breaking_nli-3107" and first.text.endswith("near the red line.")
    assert first.meta["premise"].endswith("near the yellow line.") and first.meta["category"] == "colors"
    assert licence_of("breaking_nli") == "CC BY-SA 4.0"


def test_fever_symmetric_splits_and_training_claims(loaded):
    from factscout.datasets.fever_symmetric import training_claims

    sizes = {s: len(loaded("fever_symmetric", s).claims) for s in ("dev", "test", "full", "generated")}
    assert sizes == {"dev": 708, "test": 712, "full": 956, "generated": 717}
    assert _stances(loaded("fever_symmetric", "dev")) == {"supports": 354, "refutes": 354}
    first = loaded("fever_symmetric", "dev").claims[0]
    assert first.claim_id == "fever_symmetric-dev-54253" and first.meta["stance"] == "refutes"
    assert first.text == "Daggering is associated with the genre of death metal ."
    telemundo = loaded("fever_symmetric", "full").claims[0]
    assert telemundo.meta["premise"].startswith("Telemundo ( [ teleˈmundo ] ) is an American")  # -LRB- -> (
    train = training_claims()
    test = loaded("fever_symmetric", "test").claims
    assert len(train) == 705  # dev less the 3 pairs equal to a test pair; full / generated add nothing else
    assert not {c.meta["fever_id"] for c in train} & {c.meta["fever_id"] for c in test}
    key = lambda c: (c.text.lower(), c.meta["premise"].lower())  # noqa: E731
    assert not {key(c) for c in train} & {key(c) for c in test}
    assert "CC BY-SA 3.0" in licence_of("fever_symmetric")


def test_fever_symmetric_reads_another_file_in_its_layout(tmp_path):
    from factscout.datasets import data_root
    from factscout.datasets.fever_symmetric import load_file

    same = load_file(data_root() / "fever-symmetric" / "fever_symmetric_test.jsonl", split="test")
    assert [c.meta["premise"] for c in same.claims[:3]] == [
        c.meta["premise"] for c in load_dataset("fever_symmetric", "test").claims[:3]
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": 1, "claim": "x", "evidence": "y", "label": "NOT ENOUGH INFO"}\n')
    with pytest.raises(InputError, match=r"bad\.jsonl:1"):
        load_file(bad)


def test_sufficient_facts_label_rule(loaded):
    parts = {s: loaded("sufficient_facts", s) for s in ("fever", "hover", "vitaminc")}
    assert {s: len(ds.claims) for s, ds in parts.items()} == {"fever": 1200, "hover": 1200, "vitaminc": 600}
    assert _stances(parts["fever"]) == {"not enough info": 841, "supports": 179, "refutes": 180}
    assert _stances(parts["hover"]) == {"not enough info": 948, "supports": 252}  # HoVer: SUPPORTED read as SUPPORTS
    for ds in parts.values():
        for c in ds.claims:
            before = "supports" if c.meta["label_before"] in ("SUPPORTS", "SUPPORTED") else "refutes"
            expected = "not enough info" if c.meta["label"] == "NOT ENOUGH" else before
            assert c.meta["stance"] == expected
    first = parts["fever"].claims[0]
    assert first.text == "Unison (Celine Dion album) was originally released by Atlantic Records."
    assert first.meta["premise"] == "The album was originally released on 2 April 1990 ."
    assert first.meta["titles"] == ["Unison (Celine Dion album)"] and first.meta["removed"] == ["by Columbia Records"]
    assert licence_of("sufficient_facts").startswith("none stated")


def test_sufficient_facts_stance_of():
    from factscout.datasets.sufficient_facts import stance_of

    assert stance_of("REFUTES", "ENOUGH -- REPEATED") == "refutes"
    assert stance_of("SUPPORTED", "ENOUGH -- IRRELEVANT") == "supports"
    assert stance_of("SUPPORTS", "NOT ENOUGH") == "not enough info"
    assert stance_of("REFUTES", "CHANGED INFO") is None and stance_of("NEI", "NOT ENOUGH") is None


def test_wice_premises_and_partial_support(loaded):
    dev, test = loaded("wice", "dev"), loaded("wice", "test")
    assert len(dev.claims) == 349 and len(test.claims) == 358
    assert collections.Counter(c.meta["label"] for c in dev.claims) == {
        "partially_supported": 191,
        "supported": 115,
        "not_supported": 43,
    }
    assert _stances(dev) == {None: 191, "supports": 115, "not enough info": 43}  # partial: no stance
    assert all(c.meta["partial"] == (c.meta["label"] == "partially_supported") for c in dev.claims)
    by_id = {c.claim_id: c for c in dev.claims}
    supported = by_id["wice-dev00866"]
    assert supported.meta["supporting_sentences"] == [[2, 29], [8, 29], [2, 8, 29]]
    assert supported.meta["premise_sentences"] == [2, 29]  # the shortest supporting set
    assert supported.meta["premise"].endswith("eMOTIVe hits stores on Election Day, November 2.")
    for c in dev.claims + test.claims:
        if c.meta["label"] == "not_supported":
            assert 1 <= len(c.meta["premise_sentences"]) <= 3
            assert len(c.meta["premise_sentences"]) == 1 or len(c.meta["premise"]) <= 600
    assert licence_of("wice").startswith("ODC-BY 1.0")


def test_rte_two_way(loaded):
    train, dev = loaded("rte", "train"), loaded("rte", "dev")
    assert len(train.claims) == 2490 and len(dev.claims) == 277
    assert collections.Counter(c.meta["two_way"] for c in train.claims) == {"entailment": 1249, "not_entailment": 1241}
    assert all((c.meta["stance"] == "supports") == (c.meta["label"] == 0) for c in train.claims)
    assert all(c.meta["stance"] is None for c in train.claims if c.meta["label"] == 1)
    first = train.claims[0]
    assert first.claim_id == "rte-train-0" and first.text == "Weapons of Mass Destruction Found in Iraq."
    assert first.meta["premise"] == "No Weapons of Mass Destruction Found in Iraq Yet."
    assert licence_of("rte").startswith("none stated")


@pytest.mark.parametrize("name", NEW)
def test_listed_in_the_catalogue(name):
    from factscout.datasets.catalogue import entry, known_checksums

    e = entry(name)
    assert e.url.startswith("https://raw.githubusercontent.com/") and e.downloads_as == name
    assert e.url in known_checksums(name)


# -- bad input: a malformed row names its file and line ------------------------------------------


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


MNLI_HEADER = "index\tpremise\thypothesis\tgold_label\tnumber of correct responses (out of 100)\n"


@pytest.mark.parametrize(
    ("name", "split", "files", "where"),
    [
        ("mnli", "dev_matched",
         {"mnli-dev-matched/mnli_development_set_number_of_correct_responses.txt":
          MNLI_HEADER + '0\tA "quoted" cat.\tA cat.\tentailment\t99\n1\tA dog.\tA cat.\tmaybe\t50\n'},
         "mnli_development_set_number_of_correct_responses.txt:3"),
        ("mnli", "contradicting",
         {"mnli-dev-matched/mnli_contradicting_examples": "I am.\tI am not.\tcontradiction\nI am.\tI am not.\n"},
         "mnli_contradicting_examples:2"),
        ("snli", "dev",
         {"snli-devtest/s1.dev": "A .\nB .\n", "snli-devtest/s2.dev": "C .\nD .\n",
          "snli-devtest/labels.dev": "neutral\n-\n", "snli-devtest/preproc1_expl_1.dev": "x\ny\n"},
         "labels.dev:2"),
        ("snli_cf", "train",
         {"snli-counterfactual/train.tsv": "sentence1\tsentence2\tgold_label\nA cat.\tcontradiction\n"},
         "train.tsv:2"),
        ("fever_symmetric", "dev",
         {"fever-symmetric/fever_symmetric_dev.jsonl":
          json.dumps({"id": "1", "claim": "C.", "evidence": "E.", "label": "NOT ENOUGH INFO"}) + "\n"},
         "fever_symmetric_dev.jsonl:1"),
        ("sufficient_facts", "vitaminc",
         {"sufficient-facts/vitaminc_sufficient_facts.jsonl":
          json.dumps({"claim": "C.", "evidence": [["T", "S."]], "label_before": "SUPPORTS", "label_after": "NOT ENOUGH"})
          + "\n"
          + json.dumps({"claim": "C.", "evidence": [["T", "S."]], "label_before": "SUPPORTS", "label_after": "MAYBE"})
          + "\n"},
         "vitaminc_sufficient_facts.jsonl:2"),
        ("wice", "dev",
         {"wice/dev.jsonl": json.dumps({"label": "supported", "claim": "C.", "evidence": ["S one two three four."],
                                        "supporting_sentences": [[3]], "meta": {"id": "dev1"}}) + "\n"},
         "dev.jsonl:1"),
        ("rte", "dev",
         {"glue-rte/dev.tsv": 'sentence1\tsentence2\tlabel\tidx\nSays "hi.\tHi.\t0\t0\nA.\tB.\t2\t1\n'},
         "dev.tsv:3"),
    ],
)  # fmt: skip
def test_a_malformed_row_names_file_and_line(tmp_path, name, split, files, where):
    for rel, text in files.items():
        _write(tmp_path / rel, text)
    with pytest.raises(InputError, match=where.replace(".", r"\.")):
        load_dataset(name, split, root=tmp_path)


def test_tsv_quotes_are_plain_characters(tmp_path):
    _write(tmp_path / "glue-rte/dev.tsv", 'sentence1\tsentence2\tlabel\tidx\nSays "hi.\tHi.\t0\t0\n')
    (claim,) = load_dataset("rte", "dev", root=tmp_path).claims
    assert claim.meta["premise"] == 'Says "hi.' and claim.meta["stance"] == "supports"


def test_snli_files_must_align(tmp_path):
    for part, text in {
        "s1": "A .\nB .\n",
        "s2": "C .\n",
        "labels": "neutral\nneutral\n",
        "preproc1_expl_1": "x\ny",
    }.items():
        _write(tmp_path / f"snli-devtest/{part}.test", text)
    with pytest.raises(InputError, match=r"s2\.test: 1 lines, but s1\.test has 2"):
        load_dataset("snli", "test", root=tmp_path)


def test_breaking_nli_bad_line_inside_the_zip(tmp_path):
    good = {"sentence1": "A red car.", "sentence2": "A blue car.", "gold_label": "contradiction", "pairID": 7,
            "category": "colors", "annotator_labels": ["contradiction"]}  # fmt: skip
    folder = tmp_path / "breaking-nli"
    folder.mkdir()
    with zipfile.ZipFile(folder / "breaking_nli_dataset.zip", "w") as z:
        z.writestr("data/dataset.jsonl", json.dumps(good) + "\n{not json\n")
    with pytest.raises(InputError, match=r"breaking_nli_dataset\.zip:data/dataset\.jsonl:2: malformed JSON"):
        load_dataset("breaking_nli", "test", root=tmp_path)
    with zipfile.ZipFile(folder / "breaking_nli_dataset.zip", "w") as z:
        z.writestr("data/dataset.jsonl", json.dumps(good) + "\n")
    (claim,) = load_dataset("breaking_nli", "test", root=tmp_path).claims
    assert claim.claim_id == "breaking_nli-7" and claim.meta["stance"] == "refutes"


def test_wice_not_supported_premise_is_the_most_overlapping_sentences():
    from factscout.datasets.wice import overlapping_sentences

    sentences = [
        "(meta data) TITLE: The river Ouse and its bridges",
        "Skip to content",
        "The river Ouse flows through the city of York.",
        "Tickets are sold at the door every single day.",
        "York has many bridges over the river Ouse today.",
    ]
    claim = "The Ouse river in York has seven bridges."
    assert overlapping_sentences(claim, sentences) == [2, 4]  # sentence 3 shares no word
    assert overlapping_sentences(claim, sentences, limit=1) == [4]
    assert overlapping_sentences("Tuesday's weather was dull.", sentences, limit=2) == [2, 3]  # no overlap: the first


# -- downloads: the commit-pinned URLs, the files where the loaders look for them ---------------------------------


@pytest.mark.parametrize("name", NEW)
def test_download_fetches_commit_pinned_files(tmp_path, monkeypatch, name):
    import importlib

    from factscout.datasets import base

    module = importlib.import_module(f"factscout.datasets.{name}")
    requested: dict[str, Path] = {}

    def fake_fetch(url: str, dest: Path, **_: object) -> Path:
        requested[url] = dest
        return dest

    monkeypatch.setattr(base, "fetch", fake_fetch)
    if hasattr(module, "fetch"):
        monkeypatch.setattr(module, "fetch", fake_fetch)
    folder = module.download(tmp_path)
    assert folder == tmp_path / module.FOLDER
    assert requested and all(dest.parent == folder for dest in requested.values())
    assert set(module.SHA256) == set(requested)  # every fetched file is checked against SOURCE.txt's sha256
    assert all(url.startswith("https://raw.githubusercontent.com/") for url in requested)
