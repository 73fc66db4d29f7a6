"""The stance trainer's negation augmentation on real sentences (spaCy's parser, loaded once)."""

from factscout.records import REFUTES, SUPPORTS
from factscout.training.stance.data import LABEL_ID, Pair, negation_pairs


def test_negation_pairs_negate_each_side_of_a_supporting_pair_and_label_it_refutes():
    claim = "Vitamin D reduces falls."
    sentence = "Supplementation reduces the risk of falls."
    made = negation_pairs([Pair("scifact", "c1", claim, sentence, LABEL_ID[SUPPORTS])])
    assert {(p.claim, p.sentence) for p in made} == {
        (claim, "Supplementation does not reduce the risk of falls."),
        ("Vitamin D does not reduce falls.", sentence),
    }
    assert {p.label for p in made} == {LABEL_ID[REFUTES]} and {p.source for p in made} == {"negation"}


def test_negation_pairs_leave_non_supporting_pairs_alone():
    refuting = Pair("scifact", "c1", "Vitamin D reduces falls.", "It raises them.", LABEL_ID[REFUTES])
    assert negation_pairs([refuting]) == []
