"""The Quin+ count rule, its tuning, and the majority baseline, on hand-made stances."""

import pytest

from factscout.errors import InputError
from factscout.verify.stance import Stance
from factscout.verify.verdict import (
    DEFAULT_MIN_CONFIDENCE,
    DEFAULT_MIN_EVIDENCE,
    NOT_ENOUGH_EVIDENCE,
    REFUTED,
    SUPPORTED,
    CountRule,
    Verdict,
    count_rule,
    majority_baseline,
    majority_label,
    tune_rule,
)


def sup(p: float, i: int = 0) -> Stance:
    return Stance("d", i, "supports", (p, (1 - p) / 2, (1 - p) / 2))


def ref(p: float, i: int = 0) -> Stance:
    return Stance("d", i, "refutes", ((1 - p) / 2, p, (1 - p) / 2))


def nei(p: float, i: int = 0) -> Stance:
    return Stance("d", i, "not enough info", ((1 - p) / 2, (1 - p) / 2, p))


def test_no_evidence_is_not_enough_evidence():
    v = count_rule([], min_evidence=1, min_confidence=0.5)
    assert v.label == NOT_ENOUGH_EVIDENCE
    assert v.supporting == v.refuting == v.neutral == ()
    assert "fewer than 1" in v.reason


def test_majority_side_wins():
    v = count_rule([sup(0.9, 0), sup(0.8, 1), ref(0.9, 2), nei(0.9, 3)], min_evidence=1, min_confidence=0.5)
    assert v.label == SUPPORTED
    assert [s.sentence_index for s in v.supporting] == [0, 1]
    assert [s.sentence_index for s in v.refuting] == [2]
    assert [s.sentence_index for s in v.neutral] == [3]
    assert "2 supporting, 1 refuting, 1 neutral" in v.reason
    assert count_rule([ref(0.9), ref(0.7), sup(0.6)], min_evidence=1, min_confidence=0.5).label == REFUTED


def test_tie_is_not_enough_evidence():
    v = count_rule([sup(0.9, 0), ref(0.9, 1)], min_evidence=1, min_confidence=0.5)
    assert v.label == NOT_ENOUGH_EVIDENCE
    assert "as many supporting as refuting" in v.reason


def test_unconfident_stances_do_not_count():
    stances = [sup(0.55, 0), sup(0.9, 1), ref(0.6, 2), ref(0.65, 3)]
    # at 0.5 all four count: 2 vs 2 -> tie; at 0.7 only the 0.9 supporter counts
    assert count_rule(stances, min_evidence=1, min_confidence=0.5).label == NOT_ENOUGH_EVIDENCE
    v = count_rule(stances, min_evidence=1, min_confidence=0.7)
    assert v.label == SUPPORTED
    assert len(v.neutral) == 3


def test_min_evidence_threshold():
    assert count_rule([sup(0.9)], min_evidence=2, min_confidence=0.5).label == NOT_ENOUGH_EVIDENCE
    assert count_rule([sup(0.9), sup(0.8, 1)], min_evidence=2, min_confidence=0.5).label == SUPPORTED
    # one supporter and one refuter reach min_evidence=2 but tie
    assert count_rule([sup(0.9), ref(0.8, 1)], min_evidence=2, min_confidence=0.5).label == NOT_ENOUGH_EVIDENCE


def test_count_rule_object_and_defaults():
    rule = CountRule()
    assert (rule.min_evidence, rule.min_confidence) == (DEFAULT_MIN_EVIDENCE, DEFAULT_MIN_CONFIDENCE)
    assert isinstance(rule([sup(0.99)]), Verdict)
    assert rule([sup(0.99)]).label == SUPPORTED
    assert "CountRule(min_evidence=" in repr(rule)


def test_min_share_turns_mixed_evidence_into_not_enough_evidence():
    mixed = [ref(0.9, 0), ref(0.8, 1), ref(0.7, 2), sup(0.9, 3), sup(0.8, 4)]  # 3 refuting of 5: a share of 0.6
    assert count_rule(mixed, min_evidence=1, min_confidence=0.5).label == REFUTED  # Quin+: more wins
    assert count_rule(mixed, min_evidence=1, min_confidence=0.5, min_share=0.55).label == REFUTED
    v = count_rule(mixed, min_evidence=1, min_confidence=0.5, min_share=0.6)  # must be more than 0.6
    assert v.label == NOT_ENOUGH_EVIDENCE and "mixed evidence" in v.reason and len(v.refuting) == 3
    clear = [ref(0.9, 0), ref(0.8, 1), ref(0.7, 2), sup(0.9, 3)]  # 0.75
    assert count_rule(clear, min_evidence=1, min_confidence=0.5, min_share=0.7).label == REFUTED
    assert count_rule([sup(0.9)], min_evidence=1, min_confidence=0.5, min_share=0.95).label == SUPPORTED
    rule = CountRule(1, 0.5, 0.6)
    assert rule(mixed).label == NOT_ENOUGH_EVIDENCE and "min_share=0.6" in repr(rule)
    assert "min_share" not in repr(CountRule(1, 0.5))  # Quin+'s rule reads as before


@pytest.mark.parametrize(
    "kwargs",
    [{"min_evidence": 0}, {"min_confidence": 1.5}, {"min_evidence": 1.5}, {"min_share": 0.4}, {"min_share": 1.0}],
)
def test_bad_parameters_raise(kwargs):
    with pytest.raises(InputError):
        CountRule(**kwargs)


def test_bad_records_raise():
    with pytest.raises(InputError):
        Stance("d", 0, "maybe", (0.3, 0.3, 0.4))
    with pytest.raises(InputError):
        Verdict("true", (), (), (), "")


def test_tune_rule_finds_the_separating_confidence():
    # gold supported claims have confident supporters; NEE claims only weak (0.6) supporters
    claims = [[sup(0.9)], [sup(0.95), sup(0.85, 1)], [sup(0.6)], [sup(0.6), nei(0.9, 1)], [ref(0.9)]]
    gold = [SUPPORTED, SUPPORTED, NOT_ENOUGH_EVIDENCE, NOT_ENOUGH_EVIDENCE, REFUTED]
    fit = tune_rule(claims, gold, min_evidence_grid=(1, 2), min_confidence_grid=(0.5, 0.7, 0.95))
    assert (fit.min_evidence, fit.min_confidence) == (1, 0.7)
    assert fit.macro_f1 == 1.0 and fit.accuracy == 1.0
    assert fit.rule()([sup(0.8)]).label == SUPPORTED


def test_tune_rule_checks_input():
    with pytest.raises(InputError):
        tune_rule([[sup(0.9)]], [SUPPORTED, REFUTED])
    with pytest.raises(InputError):
        tune_rule([[sup(0.9)]], ["SUPPORT"])


def test_majority_baseline():
    assert majority_label(["refuted", "supported", "refuted"]) == "refuted"
    assert majority_label(["b", "a"]) == "a"  # tie -> alphabetical
    label, acc, f1 = majority_baseline([SUPPORTED, SUPPORTED, REFUTED], [SUPPORTED, REFUTED, NOT_ENOUGH_EVIDENCE])
    assert label == SUPPORTED
    assert acc == pytest.approx(1 / 3)
    assert f1 == pytest.approx((2 * 1 / (3 + 1)) / 3)  # only 'supported' scores: F1 = 1/2
