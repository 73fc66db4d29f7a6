"""Normalise the date strings found in fact-checking data to ``datetime.date``.

Data sets write dates many ways: ISO (``2020-08-25``, ``2020-08-25T10:00:00Z``), AVeriTeC's
day-first ``25-8-2020``, Snopes' ``26 May 2015``. ``parse_date`` accepts those and returns
``None`` for empty values; anything else is an error naming the value, because silently
dropping a date would silently change what a published-before filter lets through.
"""

from __future__ import annotations

import datetime as dt
import re

from factscout.errors import InputError

_ISO = re.compile(r"^(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ].*)?$")
_DAY_FIRST = re.compile(r"^(\d{1,2})[-/.](\d{1,2})[-/.](\d{4})$")
_TEXT_FORMATS = ("%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y", "%Y%m%d")


def parse_date(value: object, *, field: str = "date") -> dt.date | None:
    """Parse ``value`` into a date; ``None``/empty gives ``None``; garbage raises InputError."""
    if value is None or isinstance(value, dt.datetime):
        return value.date() if isinstance(value, dt.datetime) else None
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        raise InputError(f"{field}: expected a date string, got {value!r}")
    text = value.strip()
    if not text or text.lower() in {"none", "null", "nan"}:
        return None
    try:
        if m := _ISO.match(text):
            return dt.date(int(m[1]), int(m[2]), int(m[3]))
        if m := _DAY_FIRST.match(text):
            return dt.date(int(m[3]), int(m[2]), int(m[1]))
    except ValueError as exc:
        raise InputError(f"{field}: {text!r} is not a valid date ({exc})") from None
    for fmt in _TEXT_FORMATS:
        try:
            return dt.datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise InputError(f"{field}: cannot read {text!r} as a date (use ISO YYYY-MM-DD)")


_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_URL_DATE = re.compile(
    r"/((?:19|20)\d{2})[/-](0?[1-9]|1[0-2]|jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*[/-](0?[1-9]|[12]\d|3[01])(?=[/_.-]|$)",
    re.IGNORECASE,
)
_ARCHIVE_PREFIX = re.compile(r"^https?://web\.archive\.org/web/\d+[a-z_]*/", re.IGNORECASE)


def date_from_url(url: str | None) -> dt.date | None:
    """The publication day written in a URL path (``/2020/08/26/``, ``/2020/aug/26/``,
    ``/2016-10-03-``), or None.

    Web-archive prefixes are removed first: their timestamp is when the page was captured, not
    when it was published. Only full year-month-day paths count; a bare year is too vague to
    filter on.
    """
    if not url:
        return None
    m = _URL_DATE.search(_ARCHIVE_PREFIX.sub("/", url))
    if not m:
        return None
    month = int(m[2]) if m[2].isdigit() else _MONTHS[m[2][:3].lower()]
    try:
        return dt.date(int(m[1]), month, int(m[3]))
    except ValueError:
        return None
