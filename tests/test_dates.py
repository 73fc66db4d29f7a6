import contextlib
import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.dates import parse_date
from factscout.errors import InputError


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2020-08-25", dt.date(2020, 8, 25)),
        ("2020-08-25T10:00:00Z", dt.date(2020, 8, 25)),
        ("25-8-2020", dt.date(2020, 8, 25)),  # AVeriTeC claim_date is day-first
        ("26 May 2015", dt.date(2015, 5, 26)),  # Snopes
        ("May 26, 2015", dt.date(2015, 5, 26)),
        ("", None),
        (None, None),
        ("None", None),
    ],
)
def test_parse_date(text, expected):
    assert parse_date(text) == expected


@pytest.mark.parametrize("text", ["yesterday", "2020-13-45", "31-2-2020"])
def test_bad_dates_name_the_value(text):
    with pytest.raises(InputError, match=text):
        parse_date(text, field="published")


@given(st.text(max_size=40))
def test_parse_date_never_crashes(text):
    with contextlib.suppress(InputError):
        parse_date(text)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://www.politifact.com/factchecks/2020/jul/17/donald-trump/x/", dt.date(2020, 7, 17)),
        ("https://www.imf.org/en/News/Articles/2016/10/03/AM2016-NA100416-WEO", dt.date(2016, 10, 3)),
        ("https://x.org/2019-05-04-story", dt.date(2019, 5, 4)),
        # the archive timestamp is a capture date, not a publication date
        (
            "https://web.archive.org/web/20210113224448/https://www.usatoday.com/story/2020/06/10/b/1/",
            dt.date(2020, 6, 10),
        ),
        ("https://web.archive.org/web/20210113224448/https://example.com/about", None),
        ("https://x.org/2020/13/45/", None),
        ("https://x.org/2020/", None),
        (None, None),
    ],
)
def test_date_from_url(url, expected):
    from factscout.dates import date_from_url

    assert date_from_url(url) == expected
