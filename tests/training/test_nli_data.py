"""The fixed NLI check set, the general NLI training pairs kept apart from it, and the stance-pair
sources offered beside the default set (on the real files, and the filtering rules on tiny ones)."""

from __future__ import annotations

import collections
from pathlib import Path

import pytest

from factscout.records import Claim
from factscout.training.stance.data import LABEL_ID
from factscout.training.stance.nli_data import (
    GENERAL_NLI,
    NLI_SOURCES_CLEAN,
    counts,
    licences,
    nli_check_set,
    nli_training_pairs,
    pair_key,
    stratified_sample,
    text_key,
)


@pytest.fixture(scope="module")
def real():
    from factscout.datasets import data_root
    from factscout.errors import DataNotFound

    try:
        data_root()
    except DataNotFound as exc:
        pytest.skip(f"real data not available: {exc}")
    check = nli_check_set()
    return check, nli_training_pairs(check=check)


@pytest.mark.dataset
def test_check_set_is_fixed(real):
    check, _ = real
    assert len(check) == 4000
    assert collections.Counter(p.source for p in check) == {"check:mnli": 2000, "check:snli_cf": 2000}
    assert nli_check_set() == check  # seeded: the same pairs, in the same order
    assert len({p.claim_id for p in check}) == 4000
    assert all(p.claim_id.startswith("snli_cf-test-") for p in check if p.source == "check:snli_cf")


@pytest.mark.dataset
def test_check_set_is_stratified(real):
    from factscout.datasets import load_dataset

    check, _ = real
    mnli = load_dataset("mnli", "dev_matched").claims
    chosen = {p.claim_id for p in check if p.source == "check:mnli"}
    picked = [c for c in mnli if c.claim_id in chosen]
    for key in ("label", "difficulty"):  # the copy has no genre: difficulty is the second stratum
        total = collections.Counter(c.meta[key] for c in mnli)
        got = collections.Counter(c.meta[key] for c in picked)
        assert set(got) == set(total)
        assert all(abs(got[k] - 2000 * total[k] / len(mnli)) <= 2 for k in total), (got, total)
    strata = collections.Counter((c.meta["difficulty"], c.meta["label"]) for c in mnli)
    got = collections.Counter((c.meta["difficulty"], c.meta["label"]) for c in picked)
    assert all(abs(got[k] - 2000 * n / len(mnli)) < 1 for k, n in strata.items())


def test_stratified_sample_uses_genre_when_there_is_one():
    from factscout.training.stance.nli_data import _stratum

    genres = {"fiction": 50, "travel": 30, "slate": 15, "telephone": 5}
    claims = [
        Claim(f"c{g}{i}", "h", None, {"genre": g, "label": ("entailment", "neutral")[i % 2], "difficulty": "easy"})
        for g, n in genres.items()
        for i in range(n)
    ]
    sample = stratified_sample(claims, 20, _stratum, seed=0)
    assert len(sample) == 20 and sample == stratified_sample(claims, 20, _stratum, seed=0)
    assert collections.Counter(c.meta["genre"] for c in sample) == {
        "fiction": 10,
        "travel": 6,
        "slate": 3,
        "telephone": 1,
    }
    assert sample != stratified_sample(claims, 20, _stratum, seed=1)


@pytest.mark.dataset
def test_training_pairs_never_meet_the_check_set(real):
    check, train = real
    assert {p.source for p in train} == set(GENERAL_NLI)
    assert not {p.claim_id for p in train} & {p.claim_id for p in check}
    keys = {pair_key(p) for p in train}
    assert not keys & {pair_key(p) for p in check}
    assert not keys & {pair_key(p)[::-1] for p in check}  # nor the other way round
    assert len(keys) == len(train)  # no duplicates
    assert not any(p.claim_id.startswith("snli_cf-test-") for p in train)
    c = counts(train)
    assert sum(c["mnli"].values()) == 8065  # 10,076 less the 2,000 check pairs, 1 duplicate, 10 ambiguous
    assert sum(c["snli"].values()) == 19245  # 19,666 less 418 pairs that are counterfactual-SNLI test pairs
    assert sum(c["snli_cf"].values()) == 9046
    assert sum(c["breaking_nli"].values()) == 8180 and sum(c["anli"].values()) == 3198
    assert all(len(p.sentence) <= 600 for p in train)


def test_clean_licences_leave_out_the_non_commercial_sets():
    assert set(NLI_SOURCES_CLEAN) == {"mnli", "snli", "snli_cf", "breaking_nli"}
    found = licences()
    assert set(found) == set(GENERAL_NLI)
    assert all("-NC" not in found[s] for s in NLI_SOURCES_CLEAN)  # BY-NC, BY-NC-SA
    assert "-NC" in found["sick"] and "-NC" in found["anli"]


def test_text_key_meets_tokenised_text():
    assert text_key("A man does n't run .") == text_key("A man doesn't run.")
    assert text_key("A man runs.") != text_key("A woman runs.")


def _tiny_root(root: Path) -> None:
    header = "index\tpremise\thypothesis\tgold_label\tnumber of correct responses (out of 100)\n"
    rows = [
        ("A dog runs.", "An animal runs.", "entailment", 100),  # mnli-0: a check-set id
        ("A cat sleeps.", "A cat is awake.", "contradiction", 90),  # mnli-1: a check-set pair's text
        ("A man sings.", "A man sings loudly.", "neutral", 40),
    ]
    mnli = root / "mnli-dev-matched"
    mnli.mkdir(parents=True)
    text = header + "".join(f"{i}\t{p}\t{h}\t{label}\t{n}\n" for i, (p, h, label, n) in enumerate(rows))
    (mnli / "mnli_development_set_number_of_correct_responses.txt").write_text(text)
    (mnli / "mnli_contradicting_examples").write_text(
        "A cat is awake.\tA cat sleeps.\tcontradiction\n"  # the check pair the other way round
        "A man sings .\tA man sings loudly .\tneutral\n"  # a duplicate of mnli-2 once normalised
    )
    cf = root / "snli-counterfactual"
    cf.mkdir()
    (cf / "train.tsv").write_text(
        "sentence1\tsentence2\tgold_label\n"
        "A bird flies.\tA bird is flying.\tentailment\n"
        "A bird flies.\tA bird is flying.\tneutral\n"  # the same pair with another label: both dropped
        "Two kids play.\tKids play.\tentailment\n"
    )
    (cf / "dev.tsv").write_text(  # a duplicate of mnli-2 (MultiNLI comes first: its copy is kept)
        "sentence1\tsentence2\tgold_label\na man sings\ta man sings loudly\tneutral\n"
    )


def test_training_pairs_rules_on_tiny_files(tmp_path):
    from factscout.training.stance.data import Pair

    _tiny_root(tmp_path)
    check = [
        Pair("check:mnli", "mnli-0", "Another text.", "Another premise.", LABEL_ID["supports"]),  # by id
        Pair("check:x", "x-1", "A cat is awake.", "A cat sleeps.", LABEL_ID["refutes"]),  # by text, both orders
    ]
    kept = nli_training_pairs(("snli_cf", "mnli"), tmp_path, check=check)
    assert [(p.source, p.claim_id) for p in kept] == [("mnli", "mnli-2"), ("snli_cf", "snli_cf-train-4")]
    assert kept[0].claim == "A man sings loudly." and kept[0].sentence == "A man sings."
    assert kept[0].label == LABEL_ID["not enough info"]


@pytest.mark.dataset
def test_named_sources_beside_the_default_set(real):
    from factscout.datasets import load_dataset
    from factscout.training.cards import licence_of
    from factscout.training.stance.pairs import ALL_SOURCES, NLI_SOURCES, SOURCES, build_stance_pairs

    assert SOURCES == (
        "scifact", "covidfact", "averitec", "checkthat", "checkcovid", "citint", "healthver", "anli", "sick"
    )  # fmt: skip
    extra = ["mnli", "snli_cf", "fever_symmetric", "sufficient_facts", "wice", "rte"]
    assert set(extra) <= set(ALL_SOURCES) and {"mnli", "snli_cf", "rte"} <= set(NLI_SOURCES)
    pairs = build_stance_pairs(sources=extra, augment=False, consistency=0, exclude_claim_ids=set())
    by = collections.defaultdict(list)
    for p in pairs:
        by[p.source].append(p)
    assert {s: len(v) for s, v in by.items()} == {
        "mnli": 8065,
        "snli_cf": 9250,  # without SNLI in the set, the originals it shares with SNLI stay
        "fever_symmetric": 705,
        "sufficient_facts": 3000,
        "wice": 155,
        "rte": 1249,
    }
    assert all(p.origin == p.source for p in pairs)
    assert {p.licence for p in by["wice"]} == {licence_of("wice")} and {p.licence for p in by["rte"]} == {
        licence_of("rte")
    }
    check, _ = real
    check_keys = {pair_key(p) for p in check}
    assert not any((text_key(p.sentence), text_key(p.claim)) in check_keys for p in by["mnli"] + by["snli_cf"])
    test = load_dataset("fever_symmetric", "test").claims
    test_keys = {(text_key(c.meta["premise"]), text_key(c.text)) for c in test}
    assert not any((text_key(p.sentence), text_key(p.claim)) in test_keys for p in by["fever_symmetric"])
    assert not any(p.claim_id.startswith("fever_symmetric-test-") for p in pairs)
    assert all(p.claim_id.startswith("wice-dev") for p in by["wice"])
    partial = {c.claim_id for c in load_dataset("wice", "dev").claims if c.meta["partial"]}
    assert not partial & {p.claim_id for p in by["wice"]}
    assert {p.label for p in by["rte"]} == {"supports"}
    assert collections.Counter(p.label for p in by["sufficient_facts"]) == {
        "not enough info": 2225,
        "supports": 533,
        "refutes": 242,
    }
