import datetime as dt

import pytest

from factscout.errors import InputError, UnknownName
from factscout.records import Claim, Hit, Passage, Ranking
from factscout.report import Evidence, Report, VerdictCounts, VerdictSummary
from factscout.temporal.rerank import TimeAwareReranker, leakage

CLAIM_DAY = dt.date(2018, 3, 13)
# Δt = (-3, 0, -8791, 95) as in the paper, plus one undated passage
DATES = {
    "a": CLAIM_DAY - dt.timedelta(days=3),
    "b": CLAIM_DAY,
    "c": CLAIM_DAY - dt.timedelta(days=8791),
    "d": CLAIM_DAY + dt.timedelta(days=95),
    "e": None,
}


def claim_on(date: dt.date | None) -> Claim:
    return Claim("c", "a claim", date)


RANKING = Ranking("q", [Hit("a", 5.0), Hit("b", 4.0), Hit("c", 3.0), Hit("d", 2.0), Hit("e", 1.0)])


def test_weight_one_is_the_temporal_ranking_alone():
    out = TimeAwareReranker("claim-centered distance", 1.0).rerank(claim_on(CLAIM_DAY), RANKING, DATES)
    # claim-centered scores (3, 4, 1, 2) and 0 for the undated passage
    assert list(out.passage_ids) == ["b", "a", "d", "c", "e"]
    out = TimeAwareReranker("claim-based date", 1.0).rerank(claim_on(CLAIM_DAY), RANKING, DATES)
    # (2, 3, 1, 0): d is after the claim, so it ties with the undated e (tie rule: passage id)
    assert list(out.passage_ids) == ["b", "a", "c", "d", "e"]
    assert out.scores()["d"] == out.scores()["e"] == 0.0


def test_weight_zero_keeps_the_order_and_the_finders():
    ranking = Ranking("q", [Hit("a", 2.0, found_by=("q1",)), Hit("b", 1.0, found_by=("q2",))])
    out = TimeAwareReranker("evidence-based date", 0.0).rerank(claim_on(CLAIM_DAY), ranking, DATES)
    assert list(out.passage_ids) == ["a", "b"]
    assert [h.found_by for h in out.hits] == [("q1",), ("q2",)]


def test_mixing_score_by_hand():
    out = TimeAwareReranker("evidence-based date", 0.5).rerank(claim_on(CLAIM_DAY), RANKING, DATES)
    # minmax(score) of b = 0.75; evidence-based score of b = 3 of max 4
    assert out.scores()["b"] == pytest.approx(0.5 * 0.75 + 0.5 * 3 / 4)
    assert out.scores()["e"] == pytest.approx(0.0)


def test_no_claim_date_or_all_undated_leaves_the_ranking_alone():
    assert TimeAwareReranker().rerank(claim_on(None), RANKING, DATES) == RANKING
    undated = {k: None for k in DATES}
    out = TimeAwareReranker(weight=0.5).rerank(claim_on(CLAIM_DAY), RANKING, undated)
    assert list(out.passage_ids) == list(RANKING.passage_ids)


def test_accepts_passages_and_ignores_unknown_ids():
    passages = {k: Passage(k, k, "", "text", v) for k, v in DATES.items() if k != "e"}
    out = TimeAwareReranker("claim-centered distance", 1.0).rerank(claim_on(CLAIM_DAY), RANKING, passages)
    assert list(out.passage_ids)[:2] == ["b", "a"]


def test_bad_settings_are_errors():
    with pytest.raises(UnknownName, match="claim-centered distance"):
        TimeAwareReranker("newest")
    with pytest.raises(InputError, match=r"\[0, 1\]"):
        TimeAwareReranker(weight=1.5)


def test_leakage_matches_the_report_definition():
    # b (same day) and d (95 days later) of the four dated hits are on/after the claim date
    assert leakage(RANKING, DATES, CLAIM_DAY) == 0.5
    assert leakage(RANKING, DATES, None) == 0.0
    evidence = tuple(
        Evidence(passage_id=pid, doc_id=pid, title="", url=None, published=DATES[pid], rank=i, score=1.0,
                 found_by=(), stance="not enough info",
                 days_from_claim=None if DATES[pid] is None else (DATES[pid] - CLAIM_DAY).days)
        for i, pid in enumerate(RANKING.passage_ids, 1)
    )  # fmt: skip
    counts = VerdictCounts(supporting=0, refuting=0, neutral=0)
    verdict = VerdictSummary(label="supported", method="m", reason="r", counts=counts)
    report = Report(claim_id="c", claim="x", date=CLAIM_DAY, queries=(), evidence=evidence, verdict=verdict)
    assert report.leakage.share == 0.5
    assert report.to_dict()["leakage"] == {"dated": 4, "after_claim": 2, "share": 0.5}


def test_check_settings_validate_the_temporal_stage():
    from factscout.check import CheckSettings

    assert CheckSettings(temporal="claim-based date").temporal == "claim-based date"
    with pytest.raises(UnknownName, match="evidence-centered distance"):
        CheckSettings(temporal="recent first")
    with pytest.raises(InputError, match="weight"):
        CheckSettings(temporal="claim-based date", temporal_weight=-0.1)
