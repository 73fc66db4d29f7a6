"""What a user types, checked the same way by the CLI and the HTTP API (one set of rules, one
length limit): claim and query texts (:func:`clean_text`) and days (:func:`parse_iso_day`, strict
ISO 8601 ``YYYY-MM-DD``). Errors are ``ValueError`` with a message that names the problem; the CLI
turns them into ``InputError`` naming the option or the file and line, the API into a 422 naming
the field. Nothing here imports more than the standard library, so input is checked before any
model loads.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from typing import Any

MAX_CLAIM_CHARS = 2_000
# A lone surrogate, or a C0/C1 control character other than tab, line feed and carriage return.
_FORBIDDEN = re.compile("[\ud800-\udfff\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# Characters that draw nothing: whitespace aside, the format characters (zero-width space and
# joiners, BOM, bidi marks, soft hyphen, word joiner...), combining marks with nothing to combine
# with, and the blank "letters" (Hangul fillers, braille blank).
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Mn", "Me", "Zs", "Zl", "Zp"})
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0\u2800")
_ISO_DAY = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def parse_iso_day(value: Any) -> dt.date | None:
    """``YYYY-MM-DD`` (or empty: no date) to a date; anything else is a ``ValueError`` that says so."""
    if value is None or value == "":
        return None
    if isinstance(value, dt.date) and not isinstance(value, dt.datetime):
        return value
    if not isinstance(value, str) or not _ISO_DAY.match(value):  # fromisoformat alone takes 2019-W01-1
        raise ValueError(f"must be an ISO date YYYY-MM-DD, got {value!r}")
    try:
        return dt.date.fromisoformat(value)
    except ValueError:
        raise ValueError(f"must be an ISO date YYYY-MM-DD, got {value!r}") from None


_ISO_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})?$")


def parse_iso_date_or_time(value: Any) -> dt.date | None:
    """A date field of a file a user gives (``"date"`` of a claims or queries file): ISO 8601, a
    day ``YYYY-MM-DD`` or a date-time ``YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z|+HH:MM]`` (its day is
    kept); empty or ``null``: no date. ``06/01/2019`` is refused, never guessed."""
    if isinstance(value, str) and _ISO_DATE_TIME.match(value.strip()):
        try:
            return dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00")).date()
        except ValueError:
            raise ValueError(f"{value!r} is not a valid ISO 8601 date-time") from None
    try:
        return parse_iso_day(value.strip() if isinstance(value, str) else value)
    except ValueError:
        raise ValueError(f"must be an ISO 8601 date (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS), got {value!r}") from None


def _invisible(ch: str) -> bool:
    return ch.isspace() or ch in _BLANK_LETTERS or unicodedata.category(ch) in _INVISIBLE_CATEGORIES


def char_kind(ch: str) -> str:
    """How :func:`clean_text` treats the one character ``ch``: ``"forbidden"`` (refused),
    ``"invisible"`` (stripped from the ends; its NFC form is all invisible) or ``"visible"``;
    what the API schema's text pattern (``serve/patterns.py``) is built from."""
    if _FORBIDDEN.match(ch):
        return "forbidden"
    return "invisible" if all(_invisible(c) for c in unicodedata.normalize("NFC", ch)) else "visible"


def clean_text(value: Any, max_chars: int = MAX_CLAIM_CHARS) -> str:
    """A text field: refuse lone surrogates and control characters (other than tab, line feed,
    carriage return), normalise to NFC, strip whitespace and invisible characters from both ends;
    1 to ``max_chars`` characters must be left. Errors are ``ValueError`` naming the character."""
    if not isinstance(value, str):
        raise ValueError("must be a string")
    if bad := _FORBIDDEN.search(value):
        ch = bad.group()
        what = "a lone surrogate" if "\ud800" <= ch <= "\udfff" else "the control character"
        raise ValueError(f"contains {what} U+{ord(ch):04X} at character {bad.start()}: send valid Unicode text")
    text = unicodedata.normalize("NFC", value)
    start, end = 0, len(text)
    while start < end and _invisible(text[start]):
        start += 1
    while end > start and _invisible(text[end - 1]):
        end -= 1
    if start == end:
        raise ValueError(f"must be 1 to {max_chars} characters: it is empty (only whitespace or invisible characters)")
    text = text[start:end]
    if len(text) > max_chars:
        raise ValueError(f"must be 1 to {max_chars} characters (got {len(text)} after stripping whitespace)")
    return text


def clean_claim(value: Any) -> str:
    """A claim or query text: :func:`clean_text` with at most 2,000 characters."""
    return clean_text(value, MAX_CLAIM_CHARS)
