"""What the web page shows for a report: a view over ``Report.to_dict()`` and the passage store
(the passages' sentences with the selected ones highlighted, the timeline's geometry). No
pipeline logic: the report already holds the stances, counts and dates."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from factscout.datasets.passages import sentences_of
from factscout.errors import MissingDependency

TEMPLATES = Path(__file__).parent / "templates"


def templates() -> Any:
    """The Jinja2 environment of the served page and the ``--html`` report: autoescaping on for
    every template."""
    try:
        from jinja2 import Environment, FileSystemLoader
    except ImportError:
        raise MissingDependency("the page and HTML reports need jinja2: pip install 'factscout[serve]'") from None
    return Environment(loader=FileSystemLoader(TEMPLATES), autoescape=True, auto_reload=False)


GROUPS = (("supports", "Supporting"), ("refutes", "Refuting"), ("not enough info", "Neutral"))
MAX_SENTENCES = 40  # sentences of a passage shown around the highlighted ones
TIMELINE_WIDTH, TIMELINE_MARGIN = 800, 40


def evidence_view(report: dict[str, Any], store: Any) -> list[dict[str, Any]]:
    """The evidence groups: each passage's sentences, the selected ones marked with their stance."""
    query_text = {q["query_id"]: q["text"] for q in report["queries"]}
    groups = []
    for stance, title in GROUPS:
        items = []
        for e in report["evidence"]:
            if e["stance"] != stance:
                continue
            marked = {s["index"]: s for s in e["sentences"]}
            text = store[e["passage_id"]].text if e["passage_id"] in store else ""
            sentences = [
                {"text": s, "stance": marked[i]["stance"] if i in marked else None, "selected": i in marked}
                for i, s in enumerate(sentences_of(text))
            ][:MAX_SENTENCES]
            items.append(
                {
                    **e,
                    "passage_sentences": sentences,
                    "found_by_text": [query_text.get(q, q) for q in e["found_by"]],
                }
            )
        groups.append({"stance": stance, "title": title, "passages": items})
    return groups


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
