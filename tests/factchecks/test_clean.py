"""Tweet cleaning on real tweets of CheckThat! 2022 2A (copied from the dev-test and train files)."""

import pytest

from factscout.datasets.base import data_root
from factscout.datasets.checkthat import load
from factscout.factchecks.clean import clean_tweet, split_hashtag

REAL = [
    (
        "The news you’ve all been waiting for (and we couldn’t wait to reveal 😭)… OREO x LADY GAGA packs drop today! "
        "🎤🎶 pic.twitter.com/OPdkueC45h — OREO Cookie (@Oreo) January 28, 2021",
        "The news you’ve all been waiting for (and we couldn’t wait to reveal )… OREO x LADY GAGA packs drop today! "
        "OREO Cookie",
    ),
    (
        '". @JoeBiden in October: “I have this strange notion, we are a democracy … you can’t [legislate] by executive '
        'order unless you’re a dictator."" pic.twitter.com/7UotJCXSm3 — Tom Elliott (@tomselliott) January 26, 2021"',
        "Joe Biden in October: “I have this strange notion, we are a democracy … you can’t [legislate] by executive "
        'order unless you’re a dictator." Tom Elliott',
    ),
    (
        "How are butterflies surviving the #AustralianFires? Footage by Julie Favell pic.twitter.com/0eJtwJyS1J — "
        "Center for Bio Div (@CenterForBioDiv) January 14, 2020",
        "How are butterflies surviving the Australian Fires? Footage by Julie Favell Center for Bio Div",
    ),
]


@pytest.mark.parametrize(("tweet", "cleaned"), REAL)
def test_real_tweets_lose_links_handles_emoji_and_the_signature(tweet, cleaned):
    assert clean_tweet(tweet) == cleaned


def test_hashtags_split_into_words():
    assert split_hashtag("AustralianFires") == "Australian Fires"
    assert split_hashtag("COVID19") == "COVID 19"
    assert split_hashtag("USAToday") == "USA Today"


def test_furniture_only_keeps_the_original():
    assert clean_tweet("pic.twitter.com/abc") == "pic.twitter.com/abc"


def test_no_cleaned_tweet_of_the_real_files_keeps_furniture_or_is_empty():
    for split in ("train", "dev", "dev-test"):
        for claim in load(split, data_root()).claims:
            cleaned = clean_tweet(claim.text)
            assert cleaned.strip(), claim.claim_id
            assert "pic.twitter.com" not in cleaned and "http" not in cleaned, claim.claim_id
            assert "(@" not in cleaned, claim.claim_id


def test_the_signature_date_is_read_from_the_lab_tsv_quoting_too():
    import datetime as dt

    from factscout.factchecks.clean import signature_date

    quoted = (
        '"Sen. Mitch McConnell: ""As recently as October..."" pic.twitter.com/PYQKe9Geez — Forbes (@Forbes) '
        'January 28, 2021"'
    )
    assert signature_date(quoted) == dt.date(2021, 1, 28)
    assert signature_date(REAL[2][0]) == dt.date(2020, 1, 14)
    assert signature_date("No signature here.") is None
