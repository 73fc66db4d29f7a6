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
