import datetime as dt

import pytest

from factscout.errors import InputError
from factscout.factchecks import FactCheckMemory, MatchModel

from .conftest import WordEncoder, fc


def test_search_finds_the_check_of_a_reworded_claim(memory):
    (best, *_) = memory.search("Video: a shark swimming on the highway in Houston after the flood", 3)
    assert best.record.fact_check_id == "fc-shark"


def test_matches_keep_only_checks_published_strictly_before_the_date(memory):
    text = "Do the vaccines contain microchips to track people?"
    ids = lambda day: {m.record.fact_check_id for m in memory.matches(text, published_before=day, threshold=0.0)}  # noqa: E731
    assert {"fc-vaccine", "fc-vaccine-2022"} <= ids(None)
    assert "fc-vaccine-2022" not in ids(dt.date(2021, 6, 1)) and "fc-vaccine" in ids(dt.date(2021, 6, 1))
    assert "fc-vaccine" in ids(dt.date(2021, 1, 11))  # published the day before: shown
    assert "fc-vaccine" not in ids(dt.date(2021, 1, 10)), "published that very day: not before the claim"
    assert ids(dt.date(2021, 1, 9)) <= {"fc-wall", "fc-shark"}
    assert "fc-gaga" not in ids(dt.date(2030, 1, 1))  # undated: nobody can say it was out before


def test_nothing_below_the_threshold_is_shown(memory):
    text = "Do the vaccines contain microchips to track people?"
    scores = [m.score for m in memory.search(text, 5)]
    assert all(m.score >= scores[1] for m in memory.matches(text, threshold=scores[1]))
    assert memory.matches(text, threshold=1.01) == []
    assert memory.threshold == memory.model.threshold > 0


def test_a_saved_memory_loads_the_same(memory, tmp_path):
    memory.save(tmp_path / "mem")
    again = FactCheckMemory.load(tmp_path / "mem")
    assert again.records == memory.records
    text = "the great wall seen from the moon"
    assert [m.record for m in again.search(text, 3)] == [m.record for m in memory.search(text, 3)]
    assert again.metadata()["threshold"] == memory.threshold


def test_k_must_be_positive(memory):
    with pytest.raises(InputError, match="k must be"):
        memory.search("x", 0)


def test_a_tweet_signature_date_prefers_the_check_published_soon_after():
    """Two checks of one rumour: the tweet's embed-signature date picks the one published days after it."""
    claim = "Vaccines contain microchips to track people."
    old, new = fc("old", claim, dt.date(2021, 1, 10)), fc("new", claim, dt.date(2022, 5, 1))
    memory = FactCheckMemory.build([old, new], model=MatchModel.load(), encoder=WordEncoder())
    tweet = "Vaccines contain microchips to track people! pic.twitter.com/x — Some One (@someone) {}"
    assert memory.search(tweet.format("April 28, 2022"), 1)[0].record.fact_check_id == "new"
    assert memory.search(tweet.format("January 5, 2021"), 1)[0].record.fact_check_id == "old"
    assert memory.search("Vaccines contain microchips", 1, date=dt.date(2022, 4, 30))[0].record.fact_check_id == "new"
