"""The view model of a report: what every view shows, computed once from ``Report.to_dict()``.

:func:`report_view` turns a report (and, optionally, the passage store, for each passage's full
text around its highlighted sentences) into plain dictionaries, one per :data:`SECTIONS` entry:
the terminal (:mod:`factscout.render.terminal`), the self-contained HTML file
(:mod:`factscout.render.html`) and the served page read the same dictionaries, so a section
shown in one is shown in all (``tests/render/test_sections.py`` fails when a section of the report
schema is missing from a view). No pipeline logic: the report already holds the stances, counts
and dates; this module only words them.

Words for a sentence: ``stance`` is the side the verdict rule **counted** it for (``not enough
info`` when it did not count it), ``model_label`` the stance model's own label (its most probable
class, what ``factscout stance`` writes), with that label's probability; they differ when the model
leans one way but not by enough for the rule (``--min-stance-confidence``).
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from factscout.records import STANCE_LABELS
from factscout.report import Report
from factscout.text.sentences import sentences_of


@dataclass(frozen=True, slots=True)
class Section:
    """A part of every view: its ``name`` (the key of :func:`report_view` and the ``data-section``
    of the HTML views), its ``title`` as printed, and the top-level keys of the report schema it shows."""

    name: str
    title: str
    keys: tuple[str, ...]


# the order every view shows them in; every key of the report schema belongs to one section
SECTIONS: tuple[Section, ...] = (
    Section("claim", "Claim", ("format", "claim_id", "claim", "date")),
    Section("checked_before", "Checked before", ("checked_before",)),  # published fact-checks first
    Section("verdict", "Verdict", ("verdict",)),
    Section("notes", "Partial results", ()),  # from the provenance: missing shards, a failed planner, warnings
    Section("queries", "Searches", ("queries",)),
    Section("timeline", "Timeline of evidence dates", ("timeline", "leakage")),
    Section("evidence", "Evidence", ("evidence",)),
    Section("provenance", "Provenance", ("provenance",)),
)

# the columns count passages (the verdict counts sentences): their titles say so
GROUPS = (
    ("supports", "Supporting passages"),
    ("refutes", "Refuting passages"),
    ("not enough info", "Neutral passages"),
)
MAX_SENTENCES = 40  # sentences of a passage shown around the highlighted ones
TIMELINE_WIDTH, TIMELINE_MARGIN = 800, 40
RULE_METHOD = "quin+ count rule"  # the verdict method whose counts the report's counts are

_DOI = re.compile(r"(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S+)", re.IGNORECASE)
_PMID = re.compile(r"(?:pmid|pubmed)[:\s]\s*(\d{1,9})", re.IGNORECASE)


def as_dict(report: Report | Mapping[str, Any]) -> dict[str, Any]:
    """A report as its ``factscout-report/1`` dictionary, checked (a dictionary is read back)."""
    return report.to_dict() if isinstance(report, Report) else Report.from_dict(report).to_dict()


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


def sentence_view(sentence: Mapping[str, Any]) -> dict[str, Any]:
    """A highlighted sentence of ``Report.to_dict()``: its text; ``stance``, the side the rule
    counted it for, with that side's probability; ``counted``; ``model_label``, the stance model's
    most probable label, with its probability; and the three probabilities by label."""
    probabilities = dict(zip(STANCE_LABELS, map(float, sentence["probabilities"]), strict=True))
    return {
        "text": sentence["text"],
        "stance": sentence["stance"],
        "selected": True,
        "probability": probabilities[sentence["stance"]],
        "counted": sentence["counted"],
        "model_label": sentence["model_label"],
        "model_probability": probabilities[sentence["model_label"]],
        "probabilities": probabilities,
    }


def evidence_view(report: Mapping[str, Any], store: Any) -> list[dict[str, Any]]:
    """The evidence groups: each passage's sentences, the selected ones marked (:func:`sentence_view`);
    its source link; the text of the queries that found it. A passage missing from ``store`` shows
    only its highlighted sentences (a report read back without its index)."""
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
                    "highlighted": list(marked.values()),
                    "found_by_text": [query_text.get(q, q) for q in e["found_by"]],
                    "source": source_link(e.get("url"), e.get("doc_id")),
                }
            )
        groups.append({"stance": stance, "title": title, "passages": items})
    return groups


def checked_before_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """The report's "Checked before" section with a link for each fact-check whose url is http(s)
    (``None`` when no fact-check memory was searched)."""
    section = report.get("checked_before")
    if not section:
        return None
    return {**section, "matches": [{**m, "link": source_link(m.get("url"))} for m in section["matches"]]}


def timeline_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """Positions (x in an 800-wide SVG) of the dated evidence and the claim date, and the leakage
    count (dated evidence published on or after the claim date)."""
    claim_day = dt.date.fromisoformat(report["date"]) if report.get("date") else None
    stance_of = {e["passage_id"]: e["stance"] for e in report["evidence"]}
    rank_of = {e["passage_id"]: e["rank"] for e in report["evidence"]}
    points = [
        {**t, "day": dt.date.fromisoformat(t["published"]), "stance": stance_of.get(t["passage_id"])}
        for t in report["timeline"]
    ]
    leakage = report.get("leakage") or {"dated": len(points), "after_claim": 0, "share": 0.0}
    days = [p["day"] for p in points] + ([claim_day] if claim_day else [])
    if not points:
        return {"points": [], "claim_x": None, "width": TIMELINE_WIDTH, "leakage": leakage}
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
        "leakage": leakage,
    }


def confidence_words(report: Mapping[str, Any]) -> str | None:
    """What the verdict's confidence is, in words, or ``None`` when the report has none. It is
    called *calibrated* only when its model's calibration lowered the expected calibration error on
    dev claims (``provenance.verdict_confidence.calibrated``, from the shipped model's record)."""
    v = report["verdict"]
    if v.get("confidence") is None:
        return None
    about = (report.get("provenance") or {}).get("verdict_confidence") or {}
    ece = about.get("dev_ece") or {}
    measured = f" (dev ECE {ece['before']:.3f} -> {ece['after']:.3f})" if {"before", "after"} <= ece.keys() else ""
    if about.get("calibrated") is True:
        return f"calibrated probability that this call is right{measured}"
    if about.get("calibrated") is False:
        return f"the confidence model's probability that this call is right; not calibrated: on dev it did not lower the calibration error{measured}"
    return "the confidence model's probability that this call is right (its calibration on dev is not recorded)"


def verdict_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """The verdict with its confidence in words and, when another method than the count rule
    decided the label, a note that the counts shown are the count rule's."""
    v = report["verdict"]
    by_rule = v.get("method") == RULE_METHOD
    counts_note = (
        None if by_rule else f"counted by the {RULE_METHOD} for reference; the label is the {v.get('method')}'s"
    )
    return {**v, "confidence_words": confidence_words(report), "counts_note": counts_note}


def notes_view(report: Mapping[str, Any]) -> list[str]:
    """What makes the report partial or less sure, from its provenance: shards of a sharded index
    that did not answer, a query planner that failed, and the checker's warnings."""
    provenance = report.get("provenance") or {}
    notes = []
    if shards := provenance.get("missing_shards"):
        notes.append(f"shards {', '.join(map(str, shards))} did not answer: their evidence is missing from this report")
    if error := provenance.get("planner_error"):
        notes.append(f"the query planner failed ({error}): only the claim itself was searched")
    notes += [str(w) for w in provenance.get("warnings") or ()]
    return notes


def provenance_view(report: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The provenance as (key, value) lines, values that are not text as indented JSON."""

    def shown(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True, default=str)

    return [(str(key), shown(value)) for key, value in sorted((report.get("provenance") or {}).items())]


def report_view(report: Report | Mapping[str, Any], store: Any = None) -> dict[str, Any]:
    """Every section of :data:`SECTIONS` for one report, by name, plus ``report`` (the dictionary)
    and ``shown``: the names of the sections this report has (``checked_before`` only when a
    fact-check memory was searched, ``notes`` only when something was partial)."""
    d = as_dict(report)
    view = {
        "report": d,
        "claim": {"claim_id": d["claim_id"], "text": d["claim"], "date": d.get("date"), "format": d["format"]},
        "verdict": verdict_view(d),
        "checked_before": checked_before_view(d),
        "notes": notes_view(d),
        "queries": d["queries"],
        "timeline": timeline_view(d),
        "evidence": evidence_view(d, store if store is not None else {}),
        "provenance": provenance_view(d),
    }
    view["shown"] = [s.name for s in SECTIONS if view[s.name] or s.name not in ("checked_before", "notes")]
    return view


__all__ = [
    "GROUPS",
    "SECTIONS",
    "Section",
    "as_dict",
    "checked_before_view",
    "confidence_words",
    "evidence_view",
    "notes_view",
    "provenance_view",
    "report_view",
    "sentence_view",
    "source_link",
    "timeline_view",
    "verdict_view",
]
