"""What the web page shows for a report: a view over ``Report.to_dict()`` and the passage store
(the passages' sentences with the selected ones highlighted, each with its stance in words and its
probability; a source link where the passage's id or url is a URL, a DOI or a PubMed id; the
timeline's geometry). No pipeline logic: the report already holds the stances, counts and dates."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path
from typing import Any

from factscout.errors import MissingDependency
from factscout.records import STANCE_LABELS
from factscout.text.sentences import sentences_of

TEMPLATES = Path(__file__).parent / "templates"


def templates() -> Any:
    """The Jinja2 environment of the served page and the ``--html`` report: autoescaping on for
    every template."""
    try:
        from jinja2 import Environment, FileSystemLoader
    except ImportError:
        raise MissingDependency("the page and HTML reports need jinja2: pip install 'factscout[serve]'") from None
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False)


# the columns count passages (the verdict counts sentences): their titles say so
GROUPS = (
    ("supports", "Supporting passages"),
    ("refutes", "Refuting passages"),
    ("not enough info", "Neutral passages"),
)
MAX_SENTENCES = 40  # sentences of a passage shown around the highlighted ones
TIMELINE_WIDTH, TIMELINE_MARGIN = 800, 40


_DOI = re.compile(r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_PMID = re.compile(r"(?:pmid|pubmed)[:\s]\s*(\d{1,9})", re.IGNORECASE)


def source_link(url: str | None, doc_id: str | None = None) -> dict[str, str] | None:
    """Where a reader can open the passage's source: its ``url`` when it is ``http(s)``, else a DOI
    (``10.x/...``, ``doi:10.x/...``) or a PubMed id written as such (``PMID:123``, ``pubmed:123``)
    in its url or document id. A bare number is not taken for a PubMed id (SciFact's document ids
    are S2ORC ids): no link is better than a wrong one. ``{"href", "text"}`` or ``None``."""
    if url and url.strip().lower().startswith(("https://", "http://")) and not _DOI.fullmatch(url.strip()):
        href = url.strip()
        host = href.split("://", 1)[1].split("/", 1)[0]
        return {"href": href, "text": host or href}
    for value in (url, doc_id):
        text = (value or "").strip()
        if doi := _DOI.fullmatch(text):
            return {"href": "https://doi.org/" + doi.group(1), "text": "DOI " + doi.group(1)}
        if pmid := _PMID.fullmatch(text):
            return {"href": f"https://pubmed.ncbi.nlm.nih.gov/{pmid.group(1)}/", "text": "PubMed " + pmid.group(1)}
    return None


def sentence_view(sentence: dict[str, Any]) -> dict[str, Any]:
    """A highlighted sentence of the report: its text, stance and the probability of that stance."""
    stance = sentence["stance"]
    probabilities = sentence.get("probabilities") or ()
    i = STANCE_LABELS.index(stance)
    return {
        "text": sentence["text"],
        "stance": stance,
        "selected": True,
        "probability": float(probabilities[i]) if len(probabilities) > i else None,
    }


def evidence_view(report: dict[str, Any], store: Any) -> list[dict[str, Any]]:
    """The evidence groups: each passage's sentences, the selected ones marked with their stance
    and its probability; its source link; the text of the queries that found it. A passage missing
    from ``store`` shows only its highlighted sentences (a report read back without its index)."""
    query_text = {q["query_id"]: q["text"] for q in report["queries"]}
    groups = []
    for stance, title in GROUPS:
        items = []
        for e in report["evidence"]:
            if e["stance"] != stance:
                continue
            marked = {s["index"]: sentence_view(s) for s in e["sentences"]}
            if e["passage_id"] in store:
                plain = {"stance": None, "selected": False, "probability": None}
                text = store[e["passage_id"]].text
                sentences = [marked.get(i, {"text": s, **plain}) for i, s in enumerate(sentences_of(text))]
            else:
                sentences = list(marked.values())
            items.append(
                {
                    **e,
                    "passage_sentences": sentences[:MAX_SENTENCES],
                    "found_by_text": [query_text.get(q, q) for q in e["found_by"]],
                    "source": source_link(e.get("url"), e.get("doc_id")),
                }
            )
        groups.append({"stance": stance, "title": title, "passages": items})
    return groups


def checked_before_view(report: dict[str, Any]) -> dict[str, Any] | None:
    """The report's "Checked before" section with a link for each fact-check whose url is http(s)
    (``None`` when no fact-check memory was searched)."""
    section = report.get("checked_before")
    if not section:
        return None
    return {**section, "matches": [{**m, "link": source_link(m.get("url"))} for m in section["matches"]]}


def timeline_view(report: dict[str, Any]) -> dict[str, Any]:
    """Positions (x in an 800-wide SVG) of the dated evidence and the claim date."""
    claim_day = dt.date.fromisoformat(report["date"]) if report.get("date") else None
    stance_of = {e["passage_id"]: e["stance"] for e in report["evidence"]}
    rank_of = {e["passage_id"]: e["rank"] for e in report["evidence"]}
    points = [
        {**t, "day": dt.date.fromisoformat(t["published"]), "stance": stance_of.get(t["passage_id"])}
        for t in report["timeline"]
    ]
    days = [p["day"] for p in points] + ([claim_day] if claim_day else [])
    if not points:
        return {"points": [], "claim_x": None, "width": TIMELINE_WIDTH}
    lo, hi = min(days), max(days)
    span = max((hi - lo).days, 1)
    usable = TIMELINE_WIDTH - 2 * TIMELINE_MARGIN

    def x(day: dt.date) -> int:
        return TIMELINE_MARGIN + round(usable * (day - lo).days / span) if hi != lo else TIMELINE_WIDTH // 2

    for i, p in enumerate(points):
        p["x"] = x(p["day"])
        p["y"] = 30 + 14 * (i % 3)  # stagger close dates
        p["rank"] = rank_of.get(p["passage_id"])
    return {
        "points": points,
        "claim_x": x(claim_day) if claim_day else None,
        "claim_date": report.get("date"),
        "first": lo.isoformat(),
        "last": hi.isoformat(),
        "width": TIMELINE_WIDTH,
    }
