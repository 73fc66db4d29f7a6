"""Shareable reports: one or many check reports as a single self-contained HTML file.

``factscout check ... --html report.html`` writes what the served page shows for a claim, every
section of :data:`factscout.render.view.SECTIONS` (the verdict with its confidence or why it is
not definite, the checked-before fact-checks, what made the report partial, the planned queries,
the timeline of evidence dates, the evidence grouped by stance with the deciding sentences
highlighted and labelled, and the provenance), for one claim or a whole ``--claims`` file, as a
page that needs no server. It is drawn from the view model of :mod:`factscout.render.view` with
the served page's own Jinja macros (``templates/_views.html``) and stylesheet (``static/app.css``,
read at run time and inlined). The served page's only script is its query editor, which calls
the server's ``/v1/rewrite``; a report has no server, so it has no script at all.

Self-contained and inert: no external asset of any kind (stylesheet inline, no fonts, images or
scripts), and a Content-Security-Policy in the page itself (``default-src 'none'``: no script, no
request) on top of Jinja2's autoescaping, so hostile passage text stays text even if opened from
a mail attachment. Links to the evidence's sources are plain ``http(s)`` anchors only
(:func:`factscout.render.view.source_link`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from factscout import __version__
from factscout.errors import InputError, MissingDependency
from factscout.render.view import report_view
from factscout.report import VERDICTS, Report

HERE = Path(__file__).resolve().parent
TEMPLATES = HERE / "templates"
CSS = HERE / "static" / "app.css"  # the served page's stylesheet too (/static/app.css)
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


def templates(*folders: Path) -> Any:
    """The Jinja2 environment of the report views (autoescaping on for every template): this
    package's templates (``_views.html``, ``report.html``) and any ``folders`` before them (the
    served page's)."""
    try:
        from jinja2 import ChoiceLoader, Environment, FileSystemLoader
    except ImportError:
        raise MissingDependency("the page and HTML reports need jinja2: pip install 'factscout[serve]'") from None
    loader = ChoiceLoader([FileSystemLoader(f) for f in (*folders, TEMPLATES)])
    return Environment(loader=loader, autoescape=True, auto_reload=False)


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
    claims = []
    for i, r in enumerate(reports):
        if not isinstance(r, Report | Mapping):
            raise InputError(f"report {i + 1} is a {type(r).__name__}, not a factscout report")
        claims.append({**report_view(r, store), "anchor": f"claim-{i + 1}"})
    if not claims:
        raise InputError("no reports to render: give at least one claim")
    dicts = [c["report"] for c in claims]
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
    return write_page(path, lambda: render_html(reports, store, generated=generated), "report.html")


def write_page(path: str | os.PathLike[str], render: Callable[[], str], example: str) -> Path:
    """Write the page ``render()`` draws to ``path`` (UTF-8), refusing a directory before any
    drawing (``example``: the file name the error suggests); returns the path."""
    target = Path(path)
    if target.is_dir():
        raise InputError(f"--html {target} is a directory; give a file name such as {example}")
    html = render()
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(html, encoding="utf-8")
    return target
