import contextlib
import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from factscout.errors import InputError
from factscout.temporal.dates import parse_date


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
