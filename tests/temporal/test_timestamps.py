import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from factscout.datasets import load_dataset
from factscout.temporal.timestamps import date_coverage, delta_days, extract_date, html_date, snippet_date

REF = dt.date(2018, 3, 20)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("Mar 13, 2018 ... The Senate passed the bill", dt.date(2018, 3, 13)),
        ("Sep 4, 2018 ... THOUSANDS of people joined", dt.date(2018, 9, 4)),
        ("13 Mar 2018 ... text", dt.date(2018, 3, 13)),
        ("2018-03-13 ... text", dt.date(2018, 3, 13)),
        ("2 days ago ... Police said", dt.date(2018, 3, 18)),
        ("1 day ago ... Police said", dt.date(2018, 3, 19)),
        ("5 hours ago ... breaking", REF),
        ("3 weeks ago ... x", dt.date(2018, 2, 27)),
        ("The Queensland Council for Civil Liberties (QCCL) is a voluntary organisation", None),
        ("Feb 30, 2018 ... impossible day", None),
        ("", None),
    ],
)
def test_snippet_prefixes(text, want):
    assert snippet_date(text, reference=REF) == want


def test_relative_date_needs_a_reference():
    assert snippet_date("2 days ago ... Police said") is None


def test_extract_date_finds_a_date_inside_short_text():
    assert extract_date("Posted by admin on March 13, 2018 in News") == dt.date(2018, 3, 13)
    assert extract_date("Updated 2019-07-01T10:00 | Reuters") == dt.date(2019, 7, 1)
    assert extract_date("no date at all here", use_dateparser=False) is None


def test_extract_date_agrees_with_the_multifc_snippet_dates():
    """The dates the MultiFC file parsed from its snippets are what ``snippet_date`` reads."""
    ds = load_dataset("multifc_mini", "dev")
    dated = [p for p in ds.corpus if p.published]
    assert len(dated) >= 250
    for p in ds.corpus:
        got = snippet_date(p.text)
        if p.published is not None:
            assert got == p.published, p.text[:40]


def test_html_date_reads_meta_tags():
    pytest.importorskip("htmldate")
    page = '<html><head><meta property="article:published_time" content="2017-05-02T08:00:00Z"></head><body>x</body></html>'
    assert html_date(page) == dt.date(2017, 5, 2)
    assert html_date("<html><body>nothing</body></html>") is None


def test_delta_days_sign():
    assert delta_days(dt.date(2018, 3, 10), dt.date(2018, 3, 13)) == -3
    assert delta_days(dt.date(2018, 3, 13), dt.date(2018, 3, 13)) == 0
    assert delta_days(None, dt.date(2018, 3, 13)) is None
    assert delta_days(dt.date(2018, 3, 13), None) is None


def test_date_coverage_per_domain():
    ds = load_dataset("multifc_mini", "dev")
    cov = {c.domain: c for c in date_coverage(ds.claims, {p.passage_id: p for p in ds.corpus})}
    assert sum(c.evidence for c in cov.values()) == len(ds.corpus)
    assert sum(c.evidence_dated for c in cov.values()) == sum(p.published is not None for p in ds.corpus)
    for c in cov.values():
        assert 0.0 <= c.share_dated <= 1.0 and 0.0 <= c.share_after_claim <= 1.0
        assert c.evidence_after_claim <= c.evidence_with_delta <= c.evidence_dated


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.one_of(st.none(), st.dates()))
def test_never_crashes_on_arbitrary_text(text, reference):
    for fn in (snippet_date, extract_date):
        out = fn(text, reference=reference)
        assert out is None or isinstance(out, dt.date)


@settings(max_examples=200, deadline=None)
@given(
    st.from_regex(r"\A(\d{1,6}|a|an) (second|minute|hour|day|week|month|year)s? ago \.\.\. .{0,40}\Z"),
    st.dates(),
)
def test_relative_prefixes_never_crash_near_date_limits(text, reference):
    out = snippet_date(text, reference=reference)
    assert out is None or out <= reference
