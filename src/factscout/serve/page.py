"""What the served page shows for a report: the view model of :mod:`factscout.render.view` (the
one every view reads) with the page's own templates (``templates/index.html``) in front of the
report macros of :mod:`factscout.render` (``_views.html``). No pipeline logic and no wording of
its own: the report already holds the stances, counts and dates, and the view model words them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from factscout.render.html import CSS
from factscout.render.html import templates as report_templates
from factscout.render.view import report_view

TEMPLATES = Path(__file__).parent / "templates"
STYLESHEET = CSS  # served at /static/app.css: the page and the HTML report share one stylesheet


def templates() -> Any:
    """The Jinja2 environment of the served page: its templates, then the report views'."""
    return report_templates(TEMPLATES)


def page_context(report: dict[str, Any], store: Any) -> dict[str, Any]:
    """What ``index.html`` needs to show ``report``: every section of the view model, by name."""
    view = report_view(report, store)
    return {
        "report": view["report"],
        "view": view,
        "query_text": {q["query_id"]: q["text"] for q in report["queries"]},
    }
