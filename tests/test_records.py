import datetime as dt

import pytest

from factscout.errors import InputError
from factscout.records import Claim, Hit, Passage, Query, Ranking


def test_ranking_sorts_by_score_then_passage_id_and_assigns_ranks():
    r = Ranking("q", (Hit("b", 1.0), Hit("c", 2.0), Hit("a", 1.0)))
    assert [(h.passage_id, h.rank) for h in r.hits] == [("c", 1), ("a", 2), ("b", 3)]


def test_ranking_rejects_duplicates():
    with pytest.raises(InputError, match="twice"):
        Ranking("q", (Hit("a", 1.0), Hit("a", 0.5)))


def test_from_scores_top_k_respects_tie_rule():
    r = Ranking.from_scores("q", {"z": 1.0, "y": 1.0, "x": 0.5}, k=1)
    assert [h.passage_id for h in r.hits] == ["y"]
    assert r.hits[0].found_by == ("q",)


def test_records_are_frozen():
    c = Claim("c1", "The sky is green.")
    with pytest.raises(AttributeError):
        c.text = "x"  # type: ignore[misc]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Claim("", "text"),
        lambda: Claim("c", "   "),
        lambda: Claim("c", "t", date="2020-01-01"),  # type: ignore[arg-type]
        lambda: Passage("p", "", "", "t"),
        lambda: Query("q", "c", ""),
    ],
)
def test_bad_records_raise_input_error(make):
    with pytest.raises(InputError):
        make()


def test_query_for_claim_carries_date():
    c = Claim("c1", "text", dt.date(2020, 1, 1))
    q = Query.for_claim(c)
    assert (q.query_id, q.claim_id, q.text, q.date) == ("c1", "c1", "text", dt.date(2020, 1, 1))


def test_passage_contents():
    assert Passage("p", "d", "Title", "Body").contents == "Title\nBody"
    assert Passage("p", "d", "", "Body").contents == "Body"


def test_ranking_scores_are_read_through_public_accessors():
    r = Ranking.from_scores("q", {"b": 1.0, "a": 1.0, "c": 3.0})
    assert r.passage_ids == ("c", "a", "b")
    assert r.scores_in_order() == (3.0, 1.0, 1.0)
    assert r.score_of("a") == 1.0
    assert r.top(2).passage_ids == ("c", "a")
    with pytest.raises(InputError, match="not in ranking"):
        r.score_of("z")


def test_label_vocabularies_are_defined_once():
    from factscout import records, report
    from factscout.verify import classifier, stance, verdict

    assert records.STANCE_LABELS == ("supports", "refutes", "not enough info")
    assert records.VERDICT_LABELS == ("supported", "refuted", "not enough evidence", "conflicting")
    assert stance.STANCE_LABELS is records.STANCE_LABELS and report.STANCES is records.STANCE_LABELS
    assert report.VERDICTS is records.VERDICT_LABELS and verdict.VERDICT_LABELS is records.RULE_VERDICT_LABELS
    assert set(classifier.CLASSIFIER_LABELS) == set(records.VERDICT_LABELS)
    assert stance.Stance is records.Stance and verdict.Verdict is records.Verdict
