"""Shareable reports: one or many check reports as a single self-contained HTML file.

``factscout check ... --html report.html`` writes what the served page shows for a claim (the
verdict with its calibrated confidence or why it is not definite, its sentence counts, the planned
queries, the timeline of evidence dates, the evidence grouped by stance with the deciding sentences
highlighted and labelled with their stance and its probability under a legend, a source link where
the passage has a URL, DOI or PubMed id, and the queries that found each passage) plus each
report's provenance, for one claim or a whole ``--claims`` file, as a page that needs no
server. It is drawn with the served page's own pieces: the view functions of
:mod:`factscout.serve.page` and the page's stylesheet ``serve/static/app.css``, read at run time and
inlined, under the same markup and class names (``templates/report.html``). The served page's only
script is its query editor, which calls the server's ``/v1/rewrite``; a report has no server, so it
has no script at all.

Self-contained and inert: no external asset of any kind (stylesheet inline, no fonts, images or
scripts), and a Content-Security-Policy in the page itself (``default-src 'none'``: no script, no
request) on top of Jinja2's autoescaping, so hostile passage text stays text even if opened from
a mail attachment. Links to the evidence's sources are plain ``http(s)`` anchors only
(:func:`factscout.serve.page.source_link`).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from factscout import __version__
from factscout.errors import InputError
from factscout.report import VERDICTS, Report
from factscout.serve.page import checked_before_view, evidence_view, templates, timeline_view

HERE = Path(__file__).resolve().parent
CSS = HERE / "static" / "app.css"
# styles only the report needs (several claims on one page, the provenance block)
EXTRA_CSS = """
.claim-report { border-top: 3px solid #20333f; margin: 28px 0 0; padding-top: 4px; }
main > .claim-report:first-child { border-top: 0; margin-top: 0; }
.claim-text { font-size: 17px; font-weight: 600; margin: 4px 0; }
.claim-date { color: #666; font-weight: 400; }
.queries ol { margin: 0; padding-left: 22px; }
#contents ol { padding-left: 22px; }
.totals .total, .verdict-tag { font-size: 12px; }
.verdict-tag { border-radius: 8px; padding: 0 6px; background: #ececec; }
.verdict-tag.supported { background: #d7f0dd; } .verdict-tag.refuted { background: #f8d9d6; }
.provenance { font-size: 12px; margin: 10px 0; }
.provenance dt { font-weight: 600; margin-top: 4px; }
.provenance pre { margin: 0; white-space: pre-wrap; overflow-wrap: anywhere; }
"""
# nothing may load or run: styles inline only, images only as data: URIs
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"


def _as_dict(report: Report | Mapping[str, Any], position: int) -> dict[str, Any]:
    """A report as its ``factscout-report/1`` dictionary, checked (a dictionary is read back)."""
    if isinstance(report, Report):
        return report.to_dict()
    if not isinstance(report, Mapping):
        raise InputError(f"report {position + 1} is a {type(report).__name__}, not a factscout report")
    return Report.from_dict(report).to_dict()


def _provenance(report: dict[str, Any]) -> list[tuple[str, str]]:
    def shown(value: Any) -> str:
        return value if isinstance(value, str) else json.dumps(value, indent=1, sort_keys=True, default=str)

    return [(str(key), shown(value)) for key, value in sorted(report.get("provenance", {}).items())]


def render_html(
    reports: Iterable[Report | Mapping[str, Any]],
    store: Mapping[str, Any] | None = None,
    *,
    generated: str | None = None,
) -> str:
    """The self-contained page for ``reports`` (:class:`~factscout.report.Report` objects or their
    ``to_dict()`` form). ``store`` (passage id -> passage, e.g. ``Checker.store``) gives each
    passage's full text around the highlighted sentences; without it only those sentences show.
    ``generated`` is an optional date/time line for the header."""
    dicts = [_as_dict(r, i) for i, r in enumerate(reports)]
    if not dicts:
        raise InputError("no reports to render: give at least one claim")
    claims = [
        {
            "report": d,
            "anchor": f"claim-{i + 1}",
            "groups": evidence_view(d, store if store is not None else {}),
            "timeline": timeline_view(d),
            "checked_before": checked_before_view(d),
            "provenance": _provenance(d),
        }
        for i, d in enumerate(dicts)
    ]
    counted = Counter(d["verdict"]["label"] for d in dicts)
    totals = [(label, counted[label]) for label in VERDICTS if counted[label]]
    css = CSS.read_text(encoding="utf-8") + EXTRA_CSS
    if "</style" in css.lower():
        raise InputError(f"{CSS} closes its own <style> element; it cannot be inlined")
    template = templates().get_template("report.html")
    return str(
        template.render(claims=claims, totals=totals, css=css, csp=CSP, version=__version__, generated=generated)
    )


def write_html(
    path: str | os.PathLike[str],
    reports: Iterable[Report | Mapping[str, Any]],
    store: Mapping[str, Any] | None = None,
    *,
    generated: str | None = None,
) -> Path:
    """Write :func:`render_html` to ``path`` (UTF-8, one file); returns the path."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"--html {target} is a directory; give a file name such as report.html")
    html = render_html(reports, store, generated=generated)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return target
