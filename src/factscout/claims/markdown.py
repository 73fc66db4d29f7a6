"""Markdown to the plain text a reader sees, with every character's place in the Markdown source.

The sentence splitter needs prose, and a highlighter needs the sentence's place in the file the
user gave: :func:`markdown_text` returns both, the plain text and, for each of its characters, the
``[start, end)`` range of the source characters it stands for. Most characters stand for
themselves; a decoded entity (``&amp;`` → ``&``) stands for the whole entity, and a line break
or table pipe turned into a space or a sentence break stands for that break or pipe.

What is read, after CommonMark and GitHub Flavored Markdown, with a line-based scanner whose time is
linear in the text (no regular expression that can backtrack over a whole document):

- dropped: fenced code blocks, YAML front matter, HTML comments, ``<script>``/``<style>`` elements
  with their contents (never run, never read as prose), HTML tags, images, footnote references,
  link reference definitions, thematic breaks, setext underlines and table separator rows;
- kept without their markup: headings (``#``), block quotes (``>``), list items (``-``, ``1.``,
  task boxes), emphasis and strike-through delimiters (``*``, ``_``, ``~~``), code spans, link
  text (``[text](url)``, ``[text][ref]``), autolinks (``<https://...>``), backslash escapes;
  entities are decoded (``&amp;``, ``&#160;``, ``&#x1F600;``);
- a paragraph's line breaks become spaces (a sentence may run over several lines); every other
  block boundary, and each table cell, becomes a line break, which always ends a sentence.

NUL characters (which :func:`~factscout.claims.document.parse_document` refuses) are dropped. Not a
full CommonMark parser: emphasis delimiters are dropped by their flanking alone (never
matched in pairs), and indented code blocks read as prose.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_right
from dataclasses import dataclass

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}#{1,6}(?=[ \t]|$)[ \t]*")
_THEMATIC = re.compile(r" {0,3}([-*_])(?:[ \t]*+\1){2,}+[ \t]*+$")
_SETEXT = re.compile(r" {0,3}(?:=+|-+)[ \t]*$")
_QUOTE = re.compile(r"(?: {0,3}>[ \t]?)+")
_ITEM = re.compile(r"[ \t]*(?:[-*+]|\d{1,9}[.)])(?:[ \t]+|$)(?:\[[ xX]\][ \t]+)?")
_REF_DEFINITION = re.compile(r" {0,3}\[[^\]]{1,999}\]:[ \t]*\S")
_TABLE_SEPARATOR = re.compile(r"[ \t]*+\|?+[ \t]*+:?+-++:?+[ \t]*+(?:\|[ \t]*+:?+-++:?+[ \t]*+)*+\|?+[ \t]*+$")
_ENTITY = re.compile(r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});")
_TAG = re.compile(r"</?([A-Za-z][A-Za-z0-9-]{0,40})(?:\s[^<>]{0,2000})?/?>")
_AUTOLINK = re.compile(r"<((?:[A-Za-z][A-Za-z0-9+.-]{1,31}:[^\s<>]{1,2000})|(?:[^\s<>@]{1,200}@[^\s<>@]{1,200}))>")
_RAW_ELEMENT = re.compile(r"<(script|style)\b", re.IGNORECASE)
_SPECIAL = re.compile(r"[\\`*_~\[!<&|\x00]")
_HIDDEN = re.compile(r"\x00+")
_RUN = {ch: re.compile(re.escape(ch) + "+") for ch in "`*_~"}
# A link's destination: (url), (<url>), ("title" after the url), one level of parentheses inside
# the url; or a reference label [ref]. Possessive: a line of hostile brackets is read in linear time.
_DESTINATION = re.compile(
    r"""\[[^\[\]]*+\]|\([ \t]*+(?:<[^<>]*+>|(?:[^()\s\\]++|\\.|\([^()\s]*+\))*+)"""
    r"""(?:[ \t]++(?:"[^"]*+"|'[^']*+'|\([^()]*+\)))?+[ \t]*+\)"""
)
# How far a link's text and destination are looked for (a bound keeps hostile lines linear).
_LINK_REACH = 2_000
_BLANK = " \t\x00"  # a line of only these is blank (NUL: a hidden comment or script)
_ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")
# Tags whose place is a block boundary: a line break in the plain text (the rest vanish).
_BLOCK_TAGS = frozenset(
    {"br", "p", "div", "li", "ul", "ol", "tr", "td", "th", "table", "h1", "h2", "h3", "h4", "h5", "h6", "hr"}
    | {"blockquote", "section", "article", "header", "footer", "pre", "dl", "dt", "dd"}
)


@dataclass(frozen=True, slots=True)
class PlainText:
    """The plain text of a Markdown source, and for each of its characters (``starts[i]``,
    ``ends[i]``) the range of the source it stands for."""

    text: str
    starts: tuple[int, ...]
    ends: tuple[int, ...]

    def source_span(self, start: int, end: int) -> tuple[int, int]:
        """The source range of the plain characters ``[start, end)`` (``end > start``)."""
        return self.starts[start], self.ends[end - 1]


class _Builder:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.starts: list[int] = []
        self.ends: list[int] = []

    def keep(self, source: str, a: int, b: int) -> None:
        """``source[a:b]`` verbatim, each character standing for itself."""
        if b > a:
            self.parts.append(source[a:b])
            self.starts.extend(range(a, b))
            self.ends.extend(range(a + 1, b + 1))

    def put(self, text: str, a: int, b: int) -> None:
        """``text`` standing for ``source[a:b]``."""
        self.parts.append(text)
        self.starts.extend([a] * len(text))
        self.ends.extend([b] * len(text))


def _hidden_ranges(source: str) -> list[tuple[int, int]]:
    """HTML comments and ``<script>``/``<style>`` elements (contents included); one left open runs
    to the end. Each kind of opening is looked for again only once passed, so the scan is linear."""
    found: list[tuple[int, int]] = []
    pos, comment, raw = 0, source.find("<!--"), _RAW_ELEMENT.search(source)
    while comment >= 0 or raw is not None:
        if raw is None or (0 <= comment < raw.start()):
            close = source.find("-->", comment + 4)
            start, pos = comment, len(source) if close < 0 else close + 3
        else:
            closing = re.compile(rf"</{raw.group(1)}\s*>", re.IGNORECASE).search(source, raw.end())
            start, pos = raw.start(), len(source) if closing is None else closing.end()
        found.append((start, pos))
        if 0 <= comment < pos:
            comment = source.find("<!--", pos)
        if raw is not None and raw.start() < pos:
            raw = _RAW_ELEMENT.search(source, pos)
    return found


def _blank(source: str, ranges: list[tuple[int, int]]) -> str:
    """``source`` with the characters of ``ranges`` turned to NUL (dropped by the inline pass), line
    breaks kept: the same length, so offsets stay those of the source."""
    if not ranges:
        return source
    pieces, pos = [], 0
    for a, b in ranges:
        pieces.append(source[pos:a])
        pieces.append(re.sub(r"[^\r\n]", "\x00", source[a:b]))
        pos = b
    pieces.append(source[pos:])
    return "".join(pieces)


def _front_matter_end(work: str) -> int:
    """Where YAML front matter (``---`` on the first line, up to a closing ``---`` or ``...``) ends; 0 if none."""
    first = _LINE.match(work)
    if first is None or first.group().rstrip("\r\n") != "---":
        return 0
    for m in _LINE.finditer(work, first.end()):
        if not m.group():
            break
        if m.group().rstrip("\r\n").rstrip() in {"---", "..."}:
            return m.end()
    return 0


class _Inline:
    """Inline markup of one line range: what is kept, what is dropped."""

    def __init__(self, work: str, out: _Builder) -> None:
        self.work, self.out = work, out

    def run(self, a: int, b: int) -> None:
        work, out = self.work, self.out
        ticks = self._backtick_runs(a, b)
        pos = a
        while pos < b:
            m = _SPECIAL.search(work, pos, b)
            if m is None:
                break
            i = m.start()
            out.keep(work, pos, i)
            pos = self._special(i, b, ticks)
        out.keep(work, pos, b)

    def _backtick_runs(self, a: int, b: int) -> dict[int, list[int]]:
        """Start offsets of the backtick runs in ``[a, b)``, by run length."""
        runs: dict[int, list[int]] = {}
        for m in re.finditer(r"`+", self.work[a:b]):
            runs.setdefault(len(m.group()), []).append(a + m.start())
        return runs

    def _special(self, i: int, b: int, ticks: dict[int, list[int]]) -> int:
        """Handle the markup character at ``i``; return where to go on."""
        work, out = self.work, self.out
        ch = work[i]
        if ch == "\\":
            if i + 1 < b and work[i + 1] in _ASCII_PUNCTUATION:
                out.keep(work, i + 1, i + 2)  # the escaped character, the backslash dropped
                return i + 2
            out.keep(work, i, i + 1)
            return i + 1
        if ch == "`":
            n = _run_length(work, i, b)
            starts = ticks.get(n, [])
            k = bisect_right(starts, i)
            if k < len(starts):  # the next run of the same length closes the code span
                close = starts[k]
                out.keep(work, i + n, close)
                return close + n
            out.keep(work, i, i + n)
            return i + n
        if ch in "*_~":
            n = _run_length(work, i, b)
            before = work[i - 1] if i > 0 else " "
            after = work[i + n] if i + n < b else " "
            intraword = before.isalnum() and after.isalnum()
            loose = before.isspace() and after.isspace()
            if loose or (ch == "~" and n < 2) or (intraword and (ch == "_" or before.isdigit())):
                out.keep(work, i, i + n)  # "2 * 3", "snake_case", "~5 %", "3*4": not emphasis
            return i + n
        if ch == "\x00":  # a comment or script, blanked before
            hidden = _HIDDEN.match(work, i, b)
            return hidden.end() if hidden else i + 1
        if ch == "|":  # a pipe outside a table row is prose
            out.keep(work, i, i + 1)
            return i + 1
        if ch == "&":
            m = _ENTITY.match(work, i, b)
            if m is not None and (decoded := html.unescape(m.group())) != m.group():
                out.put(decoded, i, m.end())
                return m.end()
            out.keep(work, i, i + 1)
            return i + 1
        if ch == "<":
            return self._angle(i, b)
        return self._bracket(i, b)

    def _angle(self, i: int, b: int) -> int:
        work, out = self.work, self.out
        if (m := _AUTOLINK.match(work, i, b)) is not None:
            out.keep(work, i + 1, m.end() - 1)
            return m.end()
        if (m := _TAG.match(work, i, b)) is not None:
            if m.group(1).lower() in _BLOCK_TAGS:
                out.put("\n", i, m.end())
            return m.end()
        out.keep(work, i, i + 1)  # "< 5 %"
        return i + 1

    def _bracket(self, i: int, b: int) -> int:
        """``[text](url)``, ``[text][ref]``, ``![alt](src)`` (dropped whole), ``[^note]`` (dropped)."""
        work, out = self.work, self.out
        image = work[i] == "!"
        open_at = i + 1 if image else i
        if open_at >= b or work[open_at] != "[":
            out.keep(work, i, i + 1)
            return i + 1
        close = work.find("]", open_at + 1, min(b, open_at + _LINK_REACH))
        if close < 0:
            out.keep(work, i, open_at + 1)
            return open_at + 1
        end = self._destination(close + 1, b)
        if work.startswith("^", open_at + 1) and end is None:
            return close + 1  # a footnote reference
        if end is None:
            out.keep(work, i, open_at + 1)  # plain brackets: "[sic]"
            return open_at + 1
        if not image:
            self.run(open_at + 1, close)
        return end

    def _destination(self, j: int, b: int) -> int | None:
        """The end of ``(url "title")`` or ``[ref]`` right after a link's text, or None."""
        m = _DESTINATION.match(self.work, j, min(b, j + _LINK_REACH))
        return None if m is None else m.end()


def _run_length(work: str, i: int, b: int) -> int:
    """The length of the run of ``work[i]`` (a backtick or emphasis character) from ``i``, within ``b``."""
    m = _RUN[work[i]].match(work, i, b)
    return m.end() - i if m else 1


def _heading_end(work: str, a: int, b: int) -> int:
    """Where an ATX heading's text in ``[a, b)`` ends: before an optional closing run of ``#``."""
    text = work[a:b].rstrip(" \t")
    bare = text.rstrip("#")
    if bare == text or (bare and bare[-1] not in " \t"):
        return a + len(text)
    return a + len(bare.rstrip(" \t"))


def _table_cells(work: str, a: int, b: int, inline: _Inline, out: _Builder) -> None:
    """A table row: each cell's text, the unescaped pipes between them made line breaks."""
    line = work[a:b]
    stripped_left = len(line) - len(line.lstrip())
    lo, hi = a + stripped_left, a + len(line.rstrip())
    if lo < hi and work[lo] == "|":
        lo += 1
    if hi > lo and work[hi - 1] == "|" and work[hi - 2 : hi - 1] != "\\":
        hi -= 1
    cell = lo
    k = lo
    while k < hi:
        if work[k] == "\\":
            k += 2
            continue
        if work[k] == "|":
            inline.run(cell, k)
            out.put("\n", k, k + 1)
            cell = k + 1
        k += 1
    inline.run(cell, hi)


def markdown_text(source: str) -> PlainText:
    """The plain text of a Markdown ``source`` and where each of its characters comes from
    (see the module docstring for what is kept and what is dropped)."""
    work = _blank(source, _hidden_ranges(source))
    out = _Builder()
    inline = _Inline(work, out)
    lines = [(m.start(), m.start() + len(m.group().rstrip("\r\n")), m.end()) for m in _LINE.finditer(work) if m.group()]
    skip_to = _front_matter_end(work)
    fence: str | None = None
    pending: tuple[int, int] | None = None  # the line break after a paragraph line: a space or a line break
    in_table = False
    for n, (start, stop, end) in enumerate(lines):
        line = work[start:stop]
        if start < skip_to:
            continue
        if fence is not None:  # inside a fenced code block: dropped up to the closing fence
            stripped = line.strip()
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = None
            continue
        if (m := _FENCE.match(line)) is not None:
            fence = m.group(1)
            _flush(out, pending)
            pending = None
            continue
        if not line.strip(_BLANK) or _THEMATIC.match(line) or _REF_DEFINITION.match(line):
            in_table = False
            _flush(out, pending)
            pending = None
            continue
        if _SETEXT.match(line) and pending is not None:  # the paragraph above was a heading
            _flush(out, pending)
            pending = None
            continue
        content = start
        if (m := _QUOTE.match(line)) is not None:
            content += m.end()
        rest = work[content:stop]
        next_line = work[lines[n + 1][0] : lines[n + 1][1]] if n + 1 < len(lines) else ""
        if "|" in rest and (in_table or (_TABLE_SEPARATOR.match(next_line) is not None and "-" in next_line)):
            in_table = True
            _flush(out, pending)
            pending = None
            if not (_TABLE_SEPARATOR.match(rest) and "-" in rest):
                _table_cells(work, content, stop, inline, out)
                out.put("\n", stop, end)
            continue
        in_table = False
        if (m := _HEADING.match(rest)) is not None:
            _flush(out, pending)
            pending = None
            content += m.end()
            inline.run(content, _heading_end(work, content, stop))
            out.put("\n", stop, end)
            continue
        if (m := _ITEM.match(rest)) is not None:
            _flush(out, pending)
            pending = None
            content += m.end()
        elif pending is not None:
            out.put(" ", *pending)  # a soft line break inside a paragraph
            pending = None
        inline.run(content, stop)
        pending = (stop, end)
    _flush(out, pending)
    return PlainText("".join(out.parts), tuple(out.starts), tuple(out.ends))


def _flush(out: _Builder, pending: tuple[int, int] | None) -> None:
    """End the paragraph whose last line break is ``pending``: a line break in the plain text."""
    if pending is not None:
        out.put("\n", *pending)


__all__ = ["PlainText", "markdown_text"]
