"""The API's input rules as JSON-schema ``pattern``s, so that ``/openapi.json`` says what the
server accepts and a client (or a fuzzer such as schemathesis) can tell valid input from invalid.

* :func:`text_pattern`: :func:`factscout.inputs.clean_text` as one regular expression. The
  character classes are read off ``clean_text``'s own rules (:func:`factscout.inputs.char_kind`),
  one code point at a time (so they follow the running Python's Unicode tables): *forbidden* (refused: C0/C1 control characters other than
  tab, line feed and carriage return), *invisible* (stripped from both ends: whitespace, format
  characters, lone combining marks, blank letters) and *visible* (every other one). A text is
  accepted when it has no forbidden character and, between its first and its last visible
  character, at most ``max_chars`` characters. Two things no pattern can say are left to the
  field's description: a lone surrogate is refused (JSON can carry one, a regular expression over
  Unicode scalar values cannot name it), and the length is counted after NFC normalisation (which
  may compose ``e`` + combining acute into one ``é``).
* :data:`DAY_PATTERN`: the ``YYYY-MM-DD`` form of ``format: date`` without the year 0000, which
  Python's dates (and so the server) do not have.

The patterns use only what ECMA-262 (with the ``u`` flag), Python's ``re`` and Rust's ``regex``
read alike: ``\\uXXXX`` escapes for the Basic Multilingual Plane, the characters themselves above it.
"""

from __future__ import annotations

from functools import lru_cache

from factscout.inputs import char_kind

_MAX_CODE_POINT = 0x10FFFF
_SURROGATES = range(0xD800, 0xE000)  # no Unicode scalar value: left out of every class

DAY_PATTERN = r"^(?:[0-9]{3}[1-9]|[0-9]{2}[1-9][0-9]|[0-9][1-9][0-9]{2}|[1-9][0-9]{3})-[0-9]{2}-[0-9]{2}$"
"""``YYYY-MM-DD`` with a year from 0001 (the calendar check is ``format: date``'s)."""


def _escape(code_point: int) -> str:
    return chr(code_point) if code_point > 0xFFFF else f"\\u{code_point:04X}"


def _class_body(code_points: list[int]) -> str:
    """Sorted code points as the inside of a character class, runs written as ranges."""
    parts: list[str] = []
    i = 0
    while i < len(code_points):
        j = i
        while j + 1 < len(code_points) and code_points[j + 1] == code_points[j] + 1:
            j += 1
        first, last = code_points[i], code_points[j]
        parts.append(_escape(first) if first == last else f"{_escape(first)}-{_escape(last)}")
        i = j + 1
    return "".join(parts)


@lru_cache(maxsize=1)
def _classes() -> tuple[str, str]:
    """The forbidden and the invisible characters as character-class bodies (about a second)."""
    kinds: dict[str, list[int]] = {"forbidden": [], "invisible": []}
    for code_point in range(_MAX_CODE_POINT + 1):
        if code_point in _SURROGATES:
            continue
        kind = char_kind(chr(code_point))
        if kind != "visible":
            kinds[kind].append(code_point)
    return _class_body(kinds["forbidden"]), _class_body(kinds["invisible"])


@lru_cache(maxsize=8)
def text_pattern(max_chars: int) -> str:
    """The texts :func:`clean_text` accepts with at most ``max_chars`` characters (up to NFC; see
    the module docstring): invisible characters, a visible one, then optionally up to
    ``max_chars - 2`` allowed characters and a second visible one, then invisible characters."""
    if max_chars < 2:
        raise ValueError(f"max_chars must be >= 2, got {max_chars}")
    forbidden, invisible = _classes()
    visible = f"[^{forbidden}{invisible}]"
    return f"^[{invisible}]*{visible}(?:[^{forbidden}]{{0,{max_chars - 2}}}{visible})?[{invisible}]*$"
