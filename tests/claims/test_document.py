"""A document's sentences: spans that give the exact text back (CRLF, Unicode, HTML entities,
Markdown), transcripts with speakers, context pointers, and hostile input refused or escaped."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.claims.document import (
    MAX_DOCUMENT_CHARS,
    context_cue,
    decode,
    format_of,
    parse_document,
    read_document,
)
from factscout.claims.markdown import markdown_text
from factscout.errors import InputError
from factscout.inputs import MAX_CLAIM_CHARS


def texts(doc):
    return [s.text for s in doc.sentences]


def exact(doc):
    """Every sentence is its span of the document, a wrapped line's break read as spaces."""
    for s in doc.sentences:
        assert re.sub(r"[\r\n]", " ", doc.text[s.start : s.end]) == s.text
        assert s.text == s.text.strip() and s.text
    assert all(a.end <= b.start for a, b in zip(doc.sentences, doc.sentences[1:], strict=False))


# -- plain text ------------------------------------------------------------------------------------------


def test_plain_text_spans_give_the_sentences_back_with_crlf():
    text = "Sales doubled in Norway.\r\nThe minister spoke on Monday. He said it rose 40 % last\r\nyear.\r\n\r\nNext."
    doc = parse_document(text, "text")
    assert texts(doc) == [
        "Sales doubled in Norway.",
        "The minister spoke on Monday.",
        "He said it rose 40 % last  year.",  # the wrapped line's CRLF read as two spaces
        "Next.",
    ]
    assert [(s.start, s.end) for s in doc.sentences] == [(0, 24), (26, 55), (56, 88), (92, 97)]
    assert doc.text[56:88] == "He said it rose 40 % last\r\nyear."
    assert [s.line for s in doc.sentences] == [1, 2, 2, 5]
    exact(doc)


def test_a_line_break_before_a_capital_ends_a_sentence():
    doc = parse_document("Results\nThe economy grew\nby 3 %.\nOld title\n", "text")
    assert texts(doc) == ["Results", "The economy grew by 3 %.", "Old title"]


def test_unicode_spans_count_code_points():
    text = "Café prices rose 👍🏽 e\u0301 3 %. Families 👨‍👩‍👧: 12 %! 日本の人口は減った。\nÜnïcödé ends 🇳🇴."
    doc = parse_document(text, "text")
    exact(doc)
    assert texts(doc) == [
        "Café prices rose 👍🏽 e\u0301 3 %.",
        "Families 👨‍👩‍👧: 12 %! 日本の人口は減った。",  # the splitter splits before a capital or digit only
        "Ünïcödé ends 🇳🇴.",
    ]
    assert doc.sentences[1].start == len("Café prices rose 👍🏽 e\u0301 3 %. ")
    assert doc.sentences[2].end == len(text)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs", "Cc")) | st.sampled_from("\r\n\t .!?"), max_size=300))
def test_spans_are_exact_for_any_text(text):
    exact(parse_document(text, "text"))


# -- Markdown --------------------------------------------------------------------------------------------

MARKDOWN = """---
title: front matter is not prose
---
# Growth &amp; jobs #

The economy **grew 3&nbsp;%** in 2023, the [fastest](https://x.org/a_(b) "t") rate
since 1999. He said it rose *40 %* last year.

> Quoted `snake_case` text\r
> continues.

- [x] Exports fell &lt;5 %. ![chart](c.png)
1. Prices rose<!-- hidden. --> 2 %.

| Year | GDP |
|------|----:|
| 2023 | 3 % |

```python
print("Code is not prose.")
```
<script>alert("It rose 99 %.")</script>
2 * 3 is six and \\*literal\\*.
"""


def test_markdown_sentences_point_into_the_markdown():
    doc = parse_document(MARKDOWN, "markdown")
    spans = {s.text: doc.text[s.start : s.end] for s in doc.sentences}
    assert spans == {
        "Growth & jobs": "Growth &amp; jobs",
        "The economy grew 3\xa0% in 2023, the fastest rate since 1999.": (
            'The economy **grew 3&nbsp;%** in 2023, the [fastest](https://x.org/a_(b) "t") rate\nsince 1999.'
        ),
        "He said it rose 40 % last year.": "He said it rose *40 %* last year.",
        "Quoted snake_case text continues.": "Quoted `snake_case` text\r\n> continues.",
        "Exports fell <5 %.": "Exports fell &lt;5 %.",
        "Prices rose 2 %.": "Prices rose<!-- hidden. --> 2 %.",
        "Year": "Year",
        "GDP": "GDP",
        "2023": "2023",
        "3 %": "3 %",
        "2 * 3 is six and *literal*.": "2 * 3 is six and \\*literal\\*.",
    }
    assert not any("print" in t or "alert" in t or "front matter" in t for t in spans)


def test_markdown_characters_map_to_the_characters_they_stand_for():
    plain = markdown_text("A **b** &amp; [c](u) `d`")
    assert plain.text == "A b & c d\n"
    source = "A **b** &amp; [c](u) `d`"
    for i, ch in enumerate(plain.text.rstrip("\n")):
        piece = source[plain.starts[i] : plain.ends[i]]
        assert piece == ch or (ch == "&" and piece == "&amp;")


@pytest.mark.parametrize(
    "hostile",
    ["a*" * 50_000, "[a](" * 25_000, "[" * 100_000, "<!--" * 25_000, "<script>" * 12_500, "`" * 100_000,
     "# a" + " " * 100_000 + "#x", "---" + " " * 100_000 + "x", "&" * 100_000, "|" * 100_000 + "\n|-|\n"],
)  # fmt: skip
def test_markdown_reads_hostile_lines_in_linear_time(hostile):
    started = time.perf_counter()
    doc = parse_document(hostile, "markdown")
    assert time.perf_counter() - started < 5.0
    assert all(len(s.text) <= MAX_CLAIM_CHARS for s in doc.sentences)


# -- HTML ------------------------------------------------------------------------------------------------

HTML = """<html><head><title>Growth</title><script>alert("It rose 99 %."); var x = "<p>Not text.</p>";</script>
<style>p { color: red }</style></head><body><nav>Home | About</nav><article>
<p>The economy grew 3&nbsp;% &amp; more &mdash; caf&eacute; owners smiled &#x1F600;.</p>
<ul><li>It rose 40 % last year.</li></ul><script>document.write("Injected sentence.")</script>
<p>&lt;script&gt;alert(1)&lt;/script&gt; is text here.</p></article></body></html>"""


def test_html_spans_point_into_the_extracted_text_with_entities_decoded():
    doc = parse_document(HTML, "html")
    exact(doc)
    assert texts(doc) == [
        "The economy grew 3 % & more — café owners smiled 😀.",  # trafilatura makes &nbsp; a space
        "It rose 40 % last year.",
        "<script>alert(1)</script> is text here.",
    ]
    assert "Injected" not in doc.text and "99" not in doc.text
    assert doc.sentences[1].context == ("s1",)


def test_html_too_short_for_extraction_still_gives_its_text():
    assert texts(parse_document("<p>Hi.</p>", "html")) == ["Hi."]


# -- transcripts -----------------------------------------------------------------------------------------

TRANSCRIPT = (
    "1\tHOLT\tGood evening.\t0\r\n"
    "2\tTRUMP\tSales of electric cars doubled.\t0\r\n"
    "3\tTRUMP\tHe said it rose 40 % last year.\t1\r\n"
    "4\tSYSTEM\t[Applause]\t0\r\n"
    "5\tTRUMP\tThey know it. Our exports rose 12 % in 2016.\t1\r\n"
    "6\tCLINTON\tThat is wrong.\t0\r\n"
)


def test_transcript_gives_speakers_line_numbers_and_exact_spans():
    doc = parse_document(TRANSCRIPT, "transcript")
    exact(doc)
    rows = [(s.sentence_id, s.line, s.speaker, s.text, s.context) for s in doc.sentences]
    assert rows == [
        ("s1", 1, "HOLT", "Good evening.", ()),
        ("s2", 2, "TRUMP", "Sales of electric cars doubled.", ()),
        ("s3", 3, "TRUMP", "He said it rose 40 % last year.", ("s2",)),  # HOLT's turn is another
        ("s4", 4, "SYSTEM", "[Applause]", ()),
        ("s5", 5, "TRUMP", "They know it.", ("s2", "s3")),  # the applause neither ends the turn nor is context
        ("s6", 5, "TRUMP", "Our exports rose 12 % in 2016.", ()),
        ("s7", 6, "CLINTON", "That is wrong.", ()),  # a new turn: nothing before it in it
    ]
    assert doc.text[doc.sentences[5].start : doc.sentences[5].end] == "Our exports rose 12 % in 2016."


def test_transcript_forms_and_errors_name_the_line():
    two = parse_document("MODERATOR\tWelcome.\nSMITH\tIt grew.\n", "transcript")
    assert [(s.line, s.speaker) for s in two.sentences] == [(1, "MODERATOR"), (2, "SMITH")]
    header = parse_document("line\tspeaker\ttext\n7\tA\tHello there.\n", "transcript")
    assert [(s.line, s.text) for s in header.sentences] == [(7, "Hello there.")]
    with pytest.raises(InputError, match=r"transcript line 2: .*no tab"):
        parse_document("1\tA\tFine.\njust text\n", "transcript")
    with pytest.raises(InputError, match="transcript line 1: the first column is a line number"):
        parse_document("one\tA\tText.\n", "transcript")


def test_a_real_checkthat_transcript_reads_whole(tmp_path):
    from factscout.datasets.base import data_root

    path = data_root() / "checkworthy" / "ct21_1b_en_debates" / "test" / "20170803_Trump_WV.tsv"
    if not path.is_file():
        pytest.skip(f"{path} is not here")
    doc = read_document(path)
    exact(doc)
    rows = path.read_text(encoding="utf-8").splitlines()
    assert {s.line for s in doc.sentences} == set(range(1, len(rows) + 1))
    assert len(doc.sentences) > len(rows)  # line 73 holds 3,187 characters of many sentences: split
    fused = [s for s in doc.sentences if s.line == 73]
    assert len(fused) > 20 and all(s.speaker == "Donald Trump" for s in fused)


# -- context ---------------------------------------------------------------------------------------------


def test_a_sentence_that_needs_context_points_to_the_ones_before_and_carries_them_to_check():
    doc = parse_document("Exports of cars grew. Imports fell. The minister spoke. He said it rose 40 % last year.")
    he = doc.sentences[3]
    assert he.context == ("s2", "s3") and he.cue == "he"
    assert doc.claim_text(he) == "Imports fell. The minister spoke. He said it rose 40 % last year."
    claim = doc.claim(he, claim_id="doc1:s4")
    assert claim.claim_id == "doc1:s4" and claim.text == doc.claim_text(he)
    assert claim.meta["sentence"] == "He said it rose 40 % last year."
    assert claim.meta["context_ids"] == ["s2", "s3"] and claim.meta["span"] == [he.start, he.end]
    first = parse_document("He said it rose.").sentences[0]
    assert first.context == () and first.cue is None  # nothing before it to point to
    alone = doc.sentences[0]
    assert alone.context == () and doc.claim(alone).text == "Exports of cars grew."


@pytest.mark.parametrize(
    ("sentence", "cue"),
    [
        ("He said it rose 40 % last year.", "he"),
        ("The figure was the same in 2019.", "the same"),
        ("Unemployment fell 2 % last year.", "last year"),
        ("But unemployment fell.", "but"),
        ("Nobody thought that number was possible.", "that number"),
        ("You've seen that.", "that"),
        ("Unemployment in Ohio fell to 4.1 % in March 2019.", None),
        ("I think that we can win.", None),  # "that" opening a clause points nowhere
    ],
)
def test_context_cues(sentence, cue):
    assert context_cue(sentence) == cue


def test_context_is_dropped_oldest_first_to_fit_a_claim():
    long = "A" + "a" * 1_500 + "."
    doc = parse_document(f"{long} {long} It rose.")
    assert doc.sentences[2].context == ("s1", "s2")
    assert doc.claim_text(doc.sentences[2]) == f"{long} It rose."


# -- formats and hostile input ---------------------------------------------------------------------------


def test_format_from_the_suffix_or_named():
    assert [format_of(n) for n in ("a.txt", "b.MD", "c.htm", "d.tsv")] == ["text", "markdown", "html", "transcript"]
    assert format_of("notes.log", "markdown") == "markdown"
    with pytest.raises(InputError, match=r"suffix '\.pdf'.*text, markdown, html, transcript"):
        format_of("paper.pdf")
    with pytest.raises(InputError, match="no document format 'docx'; known: text, markdown, html, transcript"):
        format_of("a.txt", "docx")


def test_binary_and_control_characters_are_refused(tmp_path):
    with pytest.raises(InputError, match=r"looks binary \(a NUL byte at offset 3\)"):
        decode(b"abc\x00def")
    with pytest.raises(InputError, match=r"not UTF-8 text \(byte 0xff at offset 2\)"):
        decode(b"ab\xffcd")
    with pytest.raises(InputError, match="control character U\\+001B at character 4"):
        parse_document("Red \x1b[31m text.")
    assert decode("\ufeffIt rose.".encode()) == "It rose."  # the byte-order mark is dropped
    assert decode("It rose 40 %.".encode("utf-16")) == "It rose 40 %."
    png = tmp_path / "image.txt"
    png.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(InputError, match="looks binary"):
        read_document(png)


def test_documents_over_the_limit_are_refused_naming_it(tmp_path):
    with pytest.raises(InputError, match="11 characters: more than the 10 a document may have"):
        parse_document("a" * 11, max_chars=10)
    big = tmp_path / "big.txt"
    with big.open("wb") as f:  # sparse: refused from its size, never read
        f.truncate(4 * MAX_DOCUMENT_CHARS + 5)
    with pytest.raises(InputError, match=f"longer than the {MAX_DOCUMENT_CHARS:,} characters"):
        read_document(big)


@pytest.mark.parametrize("fmt", ["text", "markdown", "html", "transcript"])
def test_a_hostile_100000_character_document_is_escaped_quickly(fmt):
    hostile = {
        "text": "!" * 50_000 + "x" * 50_000,
        "markdown": "<script>" + "It rose. " * 11_111,
        "html": "<p>" + "<script>alert(1)</script>" * 3_000 + "x" * 20_000 + "</p>",
        "transcript": "1\tA\t" + "y" * 99_990 + "\n",
    }[fmt]
    assert len(hostile) >= 90_000
    started = time.perf_counter()
    doc = parse_document(hostile, fmt)
    assert time.perf_counter() - started < 10.0
    assert all(len(s.text) <= MAX_CLAIM_CHARS for s in doc.sentences)
    assert "alert" not in " ".join(texts(doc)) and "It rose" not in " ".join(texts(doc))
    if fmt in {"text", "transcript"}:
        exact(doc)
        assert sum(len(s.text) for s in doc.sentences) == len(hostile.strip().split("\t")[-1])


def test_an_overlong_sentence_is_cut_at_whitespace():
    words = " ".join(["word"] * 1_000) + "."  # 5,000 characters, no sentence end
    doc = parse_document(words)
    assert [len(s.text) for s in doc.sentences] == [1999, 1999, 1000]
    exact(doc)
