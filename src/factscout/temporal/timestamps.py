"""Evidence timestamps: the date a snippet, a text or an HTML page was published.

Google result snippets (MultiFC's evidence) lead with their date, ``"Mar 13, 2018 ... text"``,
or, for recent pages, a relative one, ``"2 days ago ... text"``, which only has a day once the
day of the search is known (``reference``). :func:`snippet_date` reads both.
:func:`extract_date` is the general extractor for other short texts (an explicit date near the
start: ISO, "13 March 2018", "March 13, 2018", relative phrases; then ``dateparser`` on the
leading segment when installed), and :func:`html_date` asks ``htmldate`` for a web page's
publication date. All of them return ``None`` rather than raising on text they cannot read,
because evidence without a date is common and must not stop a run.

Δt (:func:`delta_days`) is ``published - claim date`` in days: negative for evidence published
before the claim (Allein et al. 2021, "Time-aware evidence ranking for fact-checking").
"""

from __future__ import annotations

import datetime as dt
import logging
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from factscout.errors import MissingDependency
from factscout.records import Claim, Passage

log = logging.getLogger(__name__)

_MONTHS = {
    m: i for i, m in enumerate(("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)
}
_MON = r"(jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?"
_LEAD_MDY = re.compile(rf"^\s*{_MON}\s+(\d{{1,2}}),?\s+(\d{{4}})\b", re.IGNORECASE)
_LEAD_DMY = re.compile(rf"^\s*(\d{{1,2}})\s+{_MON},?\s+(\d{{4}})\b", re.IGNORECASE)
_LEAD_ISO = re.compile(r"^\s*(\d{4})-(\d{1,2})-(\d{1,2})(?!\d)")
_LEAD_RELATIVE = re.compile(
    r"^\s*(\d{1,4}|an?|one)\s+(second|minute|hour|day|week|month|year)s?\s+ago\b", re.IGNORECASE
)
_ANY_MDY = re.compile(rf"\b{_MON}\s+(\d{{1,2}}),?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_ANY_DMY = re.compile(rf"\b(\d{{1,2}})\s+{_MON},?\s+((?:19|20)\d\d)\b", re.IGNORECASE)
_ANY_ISO = re.compile(r"\b((?:19|20)\d\d)-(\d{2})-(\d{2})(?!\d)")
_DAYS = {"second": 0, "minute": 0, "hour": 0, "day": 1, "week": 7, "month": 30, "year": 365}


def _day(year: int, month: int, day: int) -> dt.date | None:
    try:
        return dt.date(year, month, day)
    except (ValueError, OverflowError):
        return None


def _month(name: str) -> int:
    return _MONTHS[name[:3].lower()]


def _relative(m: re.Match[str], reference: dt.date | None) -> dt.date | None:
    if reference is None:
        return None
    n = 1 if m[1].lower() in {"a", "an", "one"} else int(m[1])
    try:
        return reference - dt.timedelta(days=n * _DAYS[m[2].lower()])
    except OverflowError:
        return None


def snippet_date(text: object, *, reference: dt.date | None = None) -> dt.date | None:
    """The date leading a search-result snippet (``"Mar 13, 2018 ..."``, ``"13 Mar 2018 ..."``,
    ``"2018-03-13 ..."``, ``"2 days ago ..."`` counted back from ``reference``), or ``None``."""
    if not isinstance(text, str):
        return None
    if m := _LEAD_MDY.match(text):
        return _day(int(m[3]), _month(m[1]), int(m[2]))
    if m := _LEAD_DMY.match(text):
        return _day(int(m[3]), _month(m[2]), int(m[1]))
    if m := _LEAD_ISO.match(text):
        return _day(int(m[1]), int(m[2]), int(m[3]))
    if m := _LEAD_RELATIVE.match(text):
        return _relative(m, reference)
    return None


def extract_date(text: object, *, reference: dt.date | None = None, use_dateparser: bool = True) -> dt.date | None:
    """The publication date of a short text: a leading date (:func:`snippet_date`), else the first
    explicit full date in its first 200 characters, else ``dateparser`` on the segment before the
    first ``...`` (when installed). ``None`` when nothing reads as a date; never raises."""
    if not isinstance(text, str):
        return None
    if found := snippet_date(text, reference=reference):
        return found
    head = text[:200]
    candidates = []
    for pattern, order in ((_ANY_MDY, "mdy"), (_ANY_DMY, "dmy"), (_ANY_ISO, "iso")):
        m = pattern.search(head)
        if not m:
            continue
        if order == "mdy":
            day = _day(int(m[3]), _month(m[1]), int(m[2]))
        elif order == "dmy":
            day = _day(int(m[3]), _month(m[2]), int(m[1]))
        else:
            day = _day(int(m[1]), int(m[2]), int(m[3]))
        if day:
            candidates.append((m.start(), day))
    if candidates:
        return min(candidates, key=lambda t: t[0])[1]
    if use_dateparser:
        lead = head.split("...")[0].strip()
        if 0 < len(lead) <= 40 and re.search(r"\d", lead):
            return _dateparser(lead, reference)
    return None


def _dateparser(text: str, reference: dt.date | None) -> dt.date | None:
    try:
        import dateparser
    except ImportError:
        return None
    settings: dict[str, object] = {"PREFER_DAY_OF_MONTH": "first", "STRICT_PARSING": True}
    if reference is not None:
        settings["RELATIVE_BASE"] = dt.datetime(reference.year, reference.month, reference.day)
    try:
        parsed = dateparser.parse(text, languages=["en"], settings=settings)  # type: ignore[arg-type]
    except Exception:  # dateparser raises assorted errors on odd input; undated is the answer
        log.debug("dateparser failed on %r", text)
        return None
    return parsed.date() if parsed is not None else None


def html_date(html: str, *, url: str | None = None) -> dt.date | None:
    """A web page's original publication date as found by ``htmldate`` (meta tags, structured
    data, URL, visible text), or ``None``."""
    try:
        from htmldate import find_date
    except ImportError:
        raise MissingDependency("html_date needs htmldate: pip install 'factscout[temporal]'") from None
    try:
        found = find_date(html, url=url, original_date=True, outputformat="%Y-%m-%d")
    except Exception:  # htmldate parses arbitrary HTML; a failure means undated
        log.debug("htmldate failed on a page from %s", url)
        return None
    return dt.date.fromisoformat(found) if found else None


def delta_days(published: dt.date | None, claim_date: dt.date | None) -> int | None:
    """Δt = ``published - claim_date`` in days (negative: published before the claim); ``None``
    when either date is unknown."""
    return (published - claim_date).days if published is not None and claim_date is not None else None


@dataclass(frozen=True, slots=True)
class DateCoverage:
    """How much of one domain's evidence has a date, and how much of it is later than its claim."""

    domain: str
    claims: int
    claims_dated: int
    evidence: int
    evidence_dated: int
    evidence_after_claim: int
    evidence_with_delta: int

    @property
    def share_dated(self) -> float:
        return self.evidence_dated / self.evidence if self.evidence else 0.0

    @property
    def share_after_claim(self) -> float:
        """Of the evidence with a Δt, the share published after the claim date (leakage)."""
        return self.evidence_after_claim / self.evidence_with_delta if self.evidence_with_delta else 0.0


def date_coverage(claims: Iterable[Claim], passages: Mapping[str, Passage]) -> list[DateCoverage]:
    """Per-domain date coverage of each claim's evidence (``meta['snippet_ids']``, MultiFC's layout)."""
    counts: dict[str, Counter[str]] = {}
    for claim in claims:
        domain = str(claim.meta.get("domain") or claim.claim_id.split("-")[0])
        c = counts.setdefault(domain, Counter())
        c["claims"] += 1
        c["claims_dated"] += claim.date is not None
        for pid in claim.meta.get("snippet_ids", ()):
            published = passages[pid].published
            delta = delta_days(published, claim.date)
            c["evidence"] += 1
            c["evidence_dated"] += published is not None
            c["with_delta"] += delta is not None
            c["after"] += delta is not None and delta > 0
    return [
        DateCoverage(d, c["claims"], c["claims_dated"], c["evidence"], c["evidence_dated"], c["after"], c["with_delta"])
        for d, c in sorted(counts.items())
    ]
