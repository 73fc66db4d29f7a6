import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.errors import UnknownName
from factscout.temporal.rankings import (
    METHODS,
    claim_date_ranking,
    claim_distance_ranking,
    evidence_date_ranking,
    evidence_distance_ranking,
    medoid,
    temporal_scores,
)

PAPER = (-3, 0, -8791, 95)


def test_paper_worked_example():
    assert evidence_date_ranking(PAPER).scores == (2, 3, 1, 4)
    assert claim_date_ranking(PAPER).scores == (2, 3, 1, 0)
    assert claim_distance_ranking(PAPER).scores == (3, 4, 1, 2)
    assert evidence_distance_ranking(PAPER).scores == (4, 3, 1, 2)


def test_claim_based_masks_evidence_after_the_claim():
    assert claim_date_ranking(PAPER).mask == (True, True, True, False)
    assert evidence_date_ranking(PAPER).mask == (True,) * 4


def test_medoid_takes_the_first_on_ties():
    # -3 and 0 both sum to 8889 in the paper's example
    assert medoid(list(PAPER)) == 0
    assert medoid([5, 1]) == 0
    assert medoid([1, 5, 9]) == 1


def test_equal_deltas_get_equal_scores():
    deltas = (-10, -10, 4, -10, 4)
    assert evidence_date_ranking(deltas).scores == (1, 1, 2, 1, 2)
    assert claim_date_ranking(deltas).scores == (1, 1, 0, 1, 0)
    # |Δt| 10, 10, 4: closer to the claim ranks higher
    assert claim_distance_ranking(deltas).scores == (1, 1, 2, 1, 2)
    # medoid is -10 (first of the three): distance 0 for the -10s, 14 for the 4s
    assert evidence_distance_ranking(deltas).scores == (2, 2, 1, 2, 1)


def test_symmetric_distances_tie():
    assert claim_distance_ranking((-5, 5, 0)).scores == (1, 1, 2)


@pytest.mark.parametrize("method", METHODS)
def test_all_undated_evidence(method):
    out = temporal_scores(method, (None, None, None))
    assert out.scores == (0, 0, 0)
    assert out.mask == (False, False, False)
    assert temporal_scores(method, ()).scores == ()


@pytest.mark.parametrize("method", METHODS)
def test_undated_items_are_masked_and_the_rest_ranked_alone(method):
    with_gaps = temporal_scores(method, (None, -3, 0, None, -8791, 95))
    alone = temporal_scores(method, PAPER)
    assert with_gaps.mask[0] is False and with_gaps.mask[3] is False
    assert (with_gaps.scores[0], with_gaps.scores[3]) == (0, 0)
    assert tuple(with_gaps.scores[i] for i in (1, 2, 4, 5)) == alone.scores


def test_unknown_method_lists_the_known_ones():
    with pytest.raises(UnknownName, match="claim-centered distance"):
        temporal_scores("claim centred", (1,))


def test_non_integer_delta_is_rejected():
    with pytest.raises(ValueError, match="whole days"):
        evidence_date_ranking((1.5,))  # type: ignore[arg-type]


@given(st.lists(st.one_of(st.none(), st.integers(-20000, 20000)), max_size=12))
def test_scores_order_matches_the_definition(deltas):
    dated = [d for d in deltas if d is not None]
    ev = evidence_date_ranking(deltas)
    cc = claim_distance_ranking(deltas)
    for i, a in enumerate(deltas):
        for j, b in enumerate(deltas):
            if a is None or b is None:
                continue
            assert (ev.scores[i] > ev.scores[j]) == (a > b)
            assert (cc.scores[i] > cc.scores[j]) == (abs(a) < abs(b))
    ranked = [s for s, m in zip(ev.scores, ev.mask, strict=True) if m]
    assert sorted(set(ranked)) == list(range(1, len(set(dated)) + 1))
