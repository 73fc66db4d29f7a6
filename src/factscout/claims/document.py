"""A document → its sentences, each with its exact place in the document, its speaker where known,
a stable id, and the sentences before it that it needs to be understood.

Four formats (:data:`FORMATS`), told by the file's suffix (:func:`format_of`) unless named:

- ``text``: plain text. A line break ends a sentence, except a single one followed by a
  lower-case letter (a line wrapped inside a sentence).
- ``markdown``: the text a reader sees (:mod:`factscout.claims.markdown`: markup, code blocks,
  HTML comments and ``<script>`` dropped, entities decoded); spans still point into the Markdown.
- ``html``: the main text trafilatura extracts (Barbaresi 2021): boilerplate, ``<script>`` and
  ``<style>`` are dropped and never run, entities decoded. Spans point into that extracted text
  (:attr:`Document.text`), not into the HTML.
- ``transcript``: a debate transcript as the CheckThat! 2021 task 1B files (Shaar et al. 2021):
  ``line_number<TAB>speaker<TAB>text[<TAB>label]`` a line (``speaker<TAB>text`` also reads); each
  line's text is split too, so a line holding several sentences gives several.

Spans are ``[start, end)`` offsets in Python characters (code points, not bytes or UTF-16 units)
into :attr:`Document.text`: the decoded file (a byte-order mark dropped; CRLF kept as it is) or,
for HTML, the extracted text. Sentences never start or end with whitespace. For ``text``,
``transcript`` and ``html``, ``document.text[start:end]`` is the sentence itself, except that a
wrapped line's break reads as spaces in :attr:`DocumentSentence.text` (the same length either
way); for ``markdown`` the span runs from the sentence's first to its last visible character, the
markup between them included, and the sentence is the text without it. A "sentence" longer than a
claim may be (:data:`~factscout.inputs.MAX_CLAIM_CHARS`) is cut at whitespace into pieces.

Context: a sentence that leans on what came before it (a third-person or demonstrative pronoun,
"last year", "the same", "since then", an opening "But"; :func:`context_cue`) keeps the ids of
up to :data:`CONTEXT_SENTENCES` sentences before it, in the same speaker turn for a transcript,
and :meth:`Document.claim` gives ``check`` a claim that carries them: the context travels with the
sentence instead of the sentence being rewritten to stand alone (the decontextualisation of Choi
et al. 2021, "Decontextualization: Making Sentences Stand-Alone", TACL).

Hostile input is refused, not guessed at: binary data (a NUL byte, not UTF-8/UTF-16), control
characters other than whitespace, and documents over :data:`MAX_DOCUMENT_CHARS` characters are an
:class:`~factscout.errors.InputError` naming the reason; the scanners are linear in the input.
"""

from __future__ import annotations

import codecs
import datetime as dt
import re
import unicodedata
from bisect import bisect_right
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from factscout.errors import InputError, MissingDependency
from factscout.inputs import MAX_CLAIM_CHARS
from factscout.records import Claim
from factscout.text.sentences import sentence_spans

DocumentFormat = Literal["text", "markdown", "html", "transcript"]
FORMATS: tuple[DocumentFormat, ...] = get_args(DocumentFormat)
SUFFIXES: dict[str, DocumentFormat] = {
    ".txt": "text",
    ".text": "text",
    ".md": "markdown",
    ".markdown": "markdown",
    ".mdown": "markdown",
    ".mkd": "markdown",
    ".html": "html",
    ".htm": "html",
    ".xhtml": "html",
    ".tsv": "transcript",
}
MAX_DOCUMENT_CHARS = 500_000
"""The longest document read, in characters (HTML counted before extraction): three times the
longest CheckThat! 2021 debate transcript; a longer one is refused, never cut silently."""
MAX_SENTENCE_CHARS = MAX_CLAIM_CHARS
CONTEXT_SENTENCES = 2
"""How many sentences before it a sentence that needs context points to."""

# Control characters other than tab, line feed, vertical tab, form feed and carriage return; lone surrogates.
_FORBIDDEN = re.compile("[\x00-\x08\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
# A single line break inside a paragraph, followed by a letter (checked lower-case): a wrapped line.
_WRAP = re.compile(r"(?<=\S)[ \t]*+(?:\r\n|\r|\n)[ \t]*+(?=[^\W\d_])")
# A transcript line that is all one bracketed stage direction ("[Cheers]", "(APPLAUSE)"): it neither
# ends a speaker's turn nor serves as context.
_ASIDE = re.compile(r"\s*+(?:\[[^\[\]]*+\]|\([^()]*+\))\s*+")
_PAGE = re.compile(r"<(?:html|body)\b", re.IGNORECASE)
_BULLET = re.compile(r"^- ", re.MULTILINE)  # trafilatura's list items
_CUE = re.compile(
    r"\b(?:(?:last|next|this|that|the same|the previous|the following|the prior)"
    r" (?:years?|months?|weeks?|quarters?|decades?|days?|times?|periods?)"
    r"|(?:since|by|back|until|till) then|at the time|the same|the former|the latter|the above"
    r"|he|she|it|they|him|her|them|his|hers|its|their|theirs|himself|herself|itself|themselves"
    r"|this|these|those|that(?:'s|’s| is| was| number| figure)|that(?=[ \t]*[.!?,;:]|$)|such an?|so did)\b"
    r"|^(?:that|but|and|so|also|however|yet|still|instead|meanwhile|therefore|otherwise)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True, slots=True)
class DocumentSentence:
    """One sentence of a document.

    ``sentence_id``: ``s1``, ``s2``... in document order (the same document always gives the same
    ids); ``start``/``end``: its span in :attr:`Document.text` (module docstring); ``line``: the
    transcript's own line number, else the 1-based line of :attr:`Document.text` it starts on;
    ``context``: the ids of the sentences before it that it needs (empty when it stands alone);
    ``cue``: the words that made it need them.
    """

    sentence_id: str
    text: str
    start: int
    end: int
    line: int
    speaker: str | None = None
    context: tuple[str, ...] = ()
    cue: str | None = None


@dataclass(frozen=True, slots=True)
class Document:
    """A document's text (what the spans index: the decoded file, or HTML's extracted text), its
    format and its sentences in document order."""

    text: str
    format: DocumentFormat
    sentences: tuple[DocumentSentence, ...]

    def sentence(self, sentence_id: str) -> DocumentSentence:
        """The sentence with this id (``s<n>`` is the n-th)."""
        n = int(sentence_id[1:]) if sentence_id[:1] == "s" and sentence_id[1:].isdigit() else 0
        if 0 < n <= len(self.sentences) and self.sentences[n - 1].sentence_id == sentence_id:
            return self.sentences[n - 1]
        raise InputError(f"no sentence {sentence_id!r} in this document ({len(self.sentences)} sentences)")

    def context_of(self, sentence: DocumentSentence) -> tuple[DocumentSentence, ...]:
        """The sentences ``sentence`` needs, in document order."""
        return tuple(self.sentence(i) for i in sentence.context)

    def claim_text(self, sentence: DocumentSentence) -> str:
        """The sentence with its context before it, as one text: what ``check`` should read. The
        oldest context sentences are left out when the whole would be longer than a claim may be."""
        context = [c.text for c in self.context_of(sentence)]
        while context and len(" ".join([*context, sentence.text])) > MAX_CLAIM_CHARS:
            context.pop(0)
        return " ".join([*context, sentence.text])

    def claim(self, sentence: DocumentSentence, *, claim_id: str | None = None, date: dt.date | None = None) -> Claim:
        """The claim ``check`` gets for ``sentence``: :meth:`claim_text` (the context carried in
        the text, so retrieval and stance see who "he" is), the sentence alone and its context in
        ``meta`` (``sentence``, ``context``, ``context_ids``, ``speaker``, ``span``, ``line``)."""
        context = self.context_of(sentence)
        meta: dict[str, Any] = {
            "sentence_id": sentence.sentence_id,
            "sentence": sentence.text,
            "context": " ".join(c.text for c in context),
            "context_ids": [c.sentence_id for c in context],
            "span": [sentence.start, sentence.end],
            "line": sentence.line,
        }
        if sentence.speaker:
            meta["speaker"] = sentence.speaker
        return Claim(claim_id or sentence.sentence_id, self.claim_text(sentence), date, meta)


def context_cue(text: str) -> str | None:
    """The words of ``text`` that point outside it (a pronoun, a demonstrative, a relative time
    such as "last year", "the same", an opening connective), lower-cased; None if it stands alone."""
    m = _CUE.search(text)
    return m.group().lower() if m else None


def format_of(path: str | Path, format: str | None = None) -> DocumentFormat:
    """The format named (``format``), else the one the file's suffix says (:data:`SUFFIXES`)."""
    if format is not None:
        name = format.strip().lower()
        for known in FORMATS:
            if name == known:
                return known
        raise InputError(f"no document format {format!r}; known: {', '.join(FORMATS)}")
    suffix = Path(path).suffix.lower()
    if suffix in SUFFIXES:
        return SUFFIXES[suffix]
    raise InputError(
        f"cannot tell the format of {path} from its suffix {suffix or '(none)'!r} "
        f"(known: {', '.join(SUFFIXES)}): name one of {', '.join(FORMATS)}"
    )


def read_document(path: str | Path, format: str | None = None, *, max_chars: int = MAX_DOCUMENT_CHARS) -> Document:
    """Read and split the document in ``path`` (format: ``format``, else from the suffix).
    UTF-8 (a byte-order mark dropped) or UTF-16 with a byte-order mark; anything else is refused."""
    p = Path(path)
    fmt = format_of(p, format)
    if not p.is_file():
        raise InputError(f"{p}: " + ("is a folder, not a file" if p.is_dir() else "no such file"))
    size = p.stat().st_size
    if size > 4 * max_chars + 4:  # no UTF-8 or UTF-16 text of max_chars characters is larger
        raise InputError(f"{p} is {size:,} bytes: longer than the {max_chars:,} characters a document may have")
    return parse_document(decode(p.read_bytes(), str(p)), fmt, max_chars=max_chars)


def decode(data: bytes, name: str = "the document") -> str:
    """Bytes of a text file to its text: UTF-16 when a byte-order mark says so, else UTF-8 (its
    byte-order mark dropped). Binary data (a NUL byte, bytes that are not UTF-8) is refused."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise InputError(f"{name} is not UTF-16 text ({exc.reason} at byte {exc.start})") from None
    if (nul := data.find(b"\x00")) >= 0:
        raise InputError(f"{name} looks binary (a NUL byte at offset {nul}): give a text, Markdown, HTML or TSV file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        bad = data[exc.start : exc.start + 1].hex()
        raise InputError(
            f"{name} is not UTF-8 text (byte 0x{bad} at offset {exc.start}): binary files are refused"
        ) from None


def parse_document(text: str, format: str = "text", *, max_chars: int = MAX_DOCUMENT_CHARS) -> Document:
    """Split ``text`` of the given format (:data:`FORMATS`) into its sentences."""
    fmt = format_of("", format)
    if not isinstance(text, str):
        raise InputError(f"a document is a string, got {type(text).__name__}")
    if len(text) > max_chars:
        raise InputError(f"the document is {len(text):,} characters: more than the {max_chars:,} a document may have")
    if bad := _FORBIDDEN.search(text):
        ch = bad.group()
        what = "a NUL byte (binary data)" if ch == "\x00" else f"the control character U+{ord(ch):04X}"
        raise InputError(f"the document contains {what} at character {bad.start()}: give text")
    if fmt == "transcript":
        return Document(text, fmt, tuple(_with_context(_transcript(text))))
    if fmt == "markdown":
        from factscout.claims.markdown import markdown_text

        plain = markdown_text(text)
        pieces = [(a, b, plain.text[a:b]) for a, b in _spans(plain.text)]
        mapped = [(*plain.source_span(a, b), s) for a, b, s in pieces]
        return Document(text, fmt, tuple(_with_context(_numbered(text, mapped))))
    if fmt == "html":
        text = _html_text(text)
        view = _BULLET.sub("  ", text)
    else:
        view = _WRAP.sub(_unwrap, text)
    mapped = [(a, b, view[a:b]) for a, b in _spans(view)]
    return Document(text, fmt, tuple(_with_context(_numbered(text, mapped))))


# -- splitting ------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Piece:
    start: int
    end: int
    text: str
    line: int
    speaker: str | None = None
    turn: int = 0  # sentences of one speaker turn share it; -1: a transcript's stage direction


def _unwrap(m: re.Match[str]) -> str:
    """A wrapped line's break as spaces of the same length, when the next line starts lower-case."""
    after = m.string[m.end() : m.end() + 1]
    return re.sub(r"[\r\n]", " ", m.group()) if after.islower() else m.group()


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """The splitter's sentence spans of ``text``, each at most :data:`MAX_SENTENCE_CHARS` long."""
    for start, end in sentence_spans(text):
        while end - start > MAX_SENTENCE_CHARS:
            cut = _cut(text, start, start + MAX_SENTENCE_CHARS)
            yield start, cut
            start = cut
            while start < end and text[start].isspace():
                start += 1
        yield start, end


def _cut(text: str, start: int, limit: int) -> int:
    """Where to cut an over-long sentence before ``limit``: after its last whitespace in the second
    half, else before a character that does not combine with the one before it."""
    space = max(text.rfind(" ", start + (limit - start) // 2, limit), text.rfind("\t", start, limit))
    if space > start:
        end = space
        while end > start and text[end - 1].isspace():
            end -= 1
        if end > start:
            return end
    cut = limit
    while cut > start + 1 and (unicodedata.combining(text[cut]) or unicodedata.category(text[cut]) in {"Me", "Cf"}):
        cut -= 1  # never between a letter and its accent, or inside an emoji sequence
    return cut


def _line_of(text: str) -> Callable[[int], int]:
    """A function from an offset in ``text`` to its 1-based line."""
    starts = [m.start() for m in _LINE.finditer(text) if m.group()] or [0]
    return lambda offset: bisect_right(starts, offset)


def _numbered(text: str, mapped: list[tuple[int, int, str]]) -> Iterator[_Piece]:
    line = _line_of(text)
    for start, end, sentence in mapped:
        yield _Piece(start, end, sentence, line(start))


def _transcript(text: str) -> Iterator[_Piece]:
    """The sentences of a ``line_number<TAB>speaker<TAB>text[<TAB>label]`` transcript."""
    turn, last_speaker = 0, None
    for number, m in enumerate((m for m in _LINE.finditer(text) if m.group()), start=1):
        row = m.group().rstrip("\r\n")
        if not row.strip():
            continue
        fields = row.split("\t")
        if number == 1 and len(fields) >= 3 and fields[1].strip().lower() == "speaker":
            continue  # a header
        if len(fields) < 2:
            raise InputError(
                f"transcript line {number}: expected 'line_number<TAB>speaker<TAB>text[<TAB>label]' "
                f"(or 'speaker<TAB>text'), got no tab in {row[:60]!r}"
            )
        if len(fields) == 2:
            own, speaker, first, last = number, fields[0], 1, 2
        else:
            try:
                own = int(fields[0])
            except ValueError:
                raise InputError(
                    f"transcript line {number}: the first column is a line number, got {fields[0][:30]!r}"
                ) from None
            speaker, first = fields[1], 2
            last = len(fields) - 1 if len(fields) >= 4 and fields[-1].strip() in {"0", "1"} else len(fields)
        start = m.start() + sum(len(f) + 1 for f in fields[:first])
        end = start + len("\t".join(fields[first:last]))
        who = " ".join(speaker.split()) or None
        aside = _ASIDE.fullmatch(text, start, end) is not None
        if who != last_speaker and not aside:
            turn, last_speaker = turn + 1, who
        for a, b in _spans(text[start:end]):
            yield _Piece(start + a, start + b, text[start + a : start + b], own, who, -1 if aside else turn)


def _with_context(pieces: Iterator[_Piece]) -> Iterator[DocumentSentence]:
    """Number the sentences and point each one that needs context to those before it in its turn."""
    before: list[tuple[str, int]] = []  # (id, turn) of the last CONTEXT_SENTENCES sentences
    for n, piece in enumerate(pieces, start=1):
        sentence_id = f"s{n}"
        cue = context_cue(piece.text)
        context = tuple(i for i, turn in before if turn == piece.turn) if cue and piece.turn >= 0 else ()
        yield DocumentSentence(
            sentence_id,
            piece.text,
            piece.start,
            piece.end,
            piece.line,
            piece.speaker,
            context,
            cue if context else None,
        )
        if piece.turn >= 0:  # a stage direction is never context
            before = [*before, (sentence_id, piece.turn)][-CONTEXT_SENTENCES:]


def _html_text(html: str) -> str:
    """The main text of an HTML page (trafilatura, recall first, short pages kept), or, when it
    finds none, every text node but scripts and styles."""
    try:
        import trafilatura
        from trafilatura.settings import use_config
    except ImportError:
        raise MissingDependency("reading HTML needs trafilatura: pip install 'factscout[collect]'") from None
    if not _PAGE.search(html):  # a fragment: lxml reads it only inside a page
        html = f"<html><body>{html}</body></html>"
    config = use_config()
    config.set("DEFAULT", "MIN_EXTRACTED_SIZE", "1")
    config.set("DEFAULT", "MIN_FILE_SIZE", "1")
    extracted = trafilatura.extract(
        html, favor_recall=True, include_comments=False, include_tables=True, include_images=False, config=config
    )
    return extracted if extracted and extracted.strip() else (trafilatura.html2txt(html) or "")


__all__ = [
    "CONTEXT_SENTENCES",
    "FORMATS",
    "MAX_DOCUMENT_CHARS",
    "SUFFIXES",
    "Document",
    "DocumentFormat",
    "DocumentSentence",
    "context_cue",
    "decode",
    "format_of",
    "parse_document",
    "read_document",
]
