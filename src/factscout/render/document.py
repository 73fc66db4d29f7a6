"""A document report (:class:`~factscout.claims.report.DocumentReport`) in every view: the view
model (:func:`document_view`), the terminal (:func:`print_document`) and one self-contained HTML
file (:func:`render_document_html`), whose body the served page (``/documents/{job_id}``) draws too.

The document's text is shown as it is, with its check-worthy sentences highlighted in place: each
checked one links to its claim's report below it (and the report links back to the sentence), with
its number and verdict written beside it (colour is never the only cue); a check-worthy sentence
that was not checked (beyond ``top``) is marked, not linked. Each claim's report is drawn by the
report views of :mod:`factscout.render.view` (every section, as for a single claim). The HTML is
inert, as :mod:`factscout.render.html`'s: Jinja2 autoescaping (a ``<script>`` in the document is
text), the stylesheets inline, and a Content-Security-Policy that lets nothing load or run.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from factscout import __version__
from factscout.claims.report import DocumentClaim, DocumentReport
from factscout.errors import InputError
from factscout.render.html import CSP, CSS, EXTRA_CSS, templates, write_page
from factscout.render.terminal import print_report
from factscout.render.view import report_view
from factscout.report import VERDICTS

DOCUMENT_CSS = Path(__file__).resolve().parent / "static" / "document.css"  # /static/document.css on the page


def as_document(report: DocumentReport | Mapping[str, Any]) -> DocumentReport:
    """A document report, read back (and checked) when given as its ``to_dict()`` form."""
    if isinstance(report, DocumentReport):
        return report
    if isinstance(report, Mapping):
        return DocumentReport.from_dict(report)
    raise InputError(f"a {type(report).__name__} is not a factscout document report")


def _anchor(sentence_id: str) -> str:
    return f"claim-{sentence_id}"


def summary(document: DocumentReport) -> str:
    """One line: how many sentences, how many check-worthy, how many checked and their verdicts."""
    counted = Counter(c.report.verdict.label for c in document.claims if c.report is not None)
    verdicts = ", ".join(f"{counted[label]} {label}" for label in VERDICTS if counted[label])
    cut = (
        f"at least {document.min_score:g}"
        if document.min_score is not None
        else f"the threshold {document.threshold:g}"
    )
    checked = f"{len(document.claims)} checked (the most check-worthy, at most {document.top}, scoring {cut})"
    return (
        f"{len(document.sentences)} sentences ({document.document_format}, {document.chars:,} characters), "
        f"{document.checkworthy} check-worthy; {checked}" + (f": {verdicts}" if verdicts else "")
    )


def segments(document: DocumentReport) -> list[dict[str, Any]]:
    """The document's text in order as pieces: plain text (``sentence`` is ``None``) and its
    check-worthy or checked sentences, each with its claim's number, anchor and verdict when checked."""
    claims = {c.sentence_id: (n, c) for n, c in enumerate(document.claims, start=1)}
    text, at = document.text, 0
    out: list[dict[str, Any]] = []
    for s in sorted(document.sentences, key=lambda s: (s.start, s.end)):
        if not (s.checkworthy or s.checked) or s.start < at:  # spans never overlap; never drawn twice
            continue
        if s.start > at:
            out.append({"text": text[at : s.start], "sentence": None})
        number, claim = claims.get(s.sentence_id, (None, None))
        verdict = claim.report.verdict.label if claim is not None and claim.report is not None else None
        out.append(
            {
                "text": text[s.start : s.end],
                "sentence": {
                    "sentence_id": s.sentence_id,
                    "score": s.score,
                    "label": s.label,
                    "checked": claim is not None,
                    "number": number,
                    "anchor": _anchor(s.sentence_id) if claim is not None else None,
                    "verdict": verdict,
                    "verdict_class": (verdict or "unchecked").replace(" ", "-"),
                },
            }
        )
        at = s.end
    if at < len(text):
        out.append({"text": text[at:], "sentence": None})
    return out


def claim_view(number: int, claim: DocumentClaim, store: Any = None) -> dict[str, Any]:
    """One checked sentence: where it is, its check-worthiness, and its report's view model
    (:func:`~factscout.render.view.report_view`; ``None`` when its check failed)."""
    return {
        **claim.model_dump(mode="json", exclude={"report"}),
        "number": number,
        "anchor": _anchor(claim.sentence_id),
        "sentence_anchor": f"sentence-{claim.sentence_id}",
        "view": None if claim.report is None else report_view(claim.report, store),
    }


def document_view(report: DocumentReport | Mapping[str, Any], store: Any = None) -> dict[str, Any]:
    """What every view of a document report shows: the summary line, the text in :func:`segments`,
    and each checked sentence's :func:`claim_view` (``store``: passage id -> passage, for each
    evidence passage's full text), most check-worthy first."""
    document = as_document(report)
    return {
        "document": document,
        "summary": summary(document),
        "segments": segments(document),
        "claims": [claim_view(n, c, store) for n, c in enumerate(document.claims, start=1)],
    }


# ---------------------------------------------------------------------------- the terminal


def print_document(report: DocumentReport | Mapping[str, Any], console: Console, store: Any = None) -> None:
    """The summary, then each checked sentence under a header with its place and check-worthiness,
    followed by its report (:func:`~factscout.render.terminal.print_report`); text is escaped."""
    view = document_view(report, store)
    document: DocumentReport = view["document"]
    console.print(f"[bold]Document[/]: {escape(view['summary'])}", highlight=False, soft_wrap=True)
    if not document.claims:
        best = sorted(document.sentences, key=lambda s: s.rank)[:1]
        for s in best:
            console.print(
                f"no sentence reaches the cut; the most check-worthy: {s.sentence_id} ({s.score:.2f}) {escape(s.text)}",
                highlight=False,
                soft_wrap=True,
            )
    for c, claim in zip(view["claims"], document.claims, strict=True):
        where = f"characters {c['start']}-{c['end']}, line {c['line']}" + (f", {c['speaker']}" if c["speaker"] else "")
        console.print()
        console.rule(
            f"[bold]Claim {c['number']} of {len(document.claims)}[/]: {c['sentence_id']} ({escape(where)}; "
            f"check-worthiness {c['score']:.2f}, {escape(c['label'])})"
        )
        console.print(f"[bold]{escape(c['sentence'])}[/]", highlight=False, soft_wrap=True)
        if c["context_ids"]:
            console.print(
                f"[dim]checked with its context ({', '.join(c['context_ids'])}): {escape(c['claim'])}[/]",
                highlight=False,
                soft_wrap=True,
            )
        if claim.report is None:
            console.print("[red]not checked: its check failed[/]", highlight=False)
        else:
            print_report(claim.report, console, store)


# ---------------------------------------------------------------------------- one HTML file


def stylesheet() -> str:
    """The report's stylesheet and the document's, to inline."""
    css = CSS.read_text(encoding="utf-8") + EXTRA_CSS + DOCUMENT_CSS.read_text(encoding="utf-8")
    if "</style" in css.lower():
        raise InputError("a stylesheet closes its own <style> element; it cannot be inlined")
    return css


def render_document_html(
    report: DocumentReport | Mapping[str, Any], store: Any = None, *, generated: str | None = None
) -> str:
    """The self-contained page of a document report (``store`` as in :func:`document_view`)."""
    view = document_view(report, store)
    template = templates().get_template("document.html")
    return str(template.render(doc=view, css=stylesheet(), csp=CSP, version=__version__, generated=generated))


def write_document_html(
    path: str | os.PathLike[str],
    report: DocumentReport | Mapping[str, Any],
    store: Any = None,
    *,
    generated: str | None = None,
) -> Path:
    """Write :func:`render_document_html` to ``path`` (UTF-8, one file); returns the path."""
    return write_page(path, lambda: render_document_html(report, store, generated=generated), "document.html")


__all__ = [
    "as_document",
    "claim_view",
    "document_view",
    "print_document",
    "render_document_html",
    "segments",
    "summary",
    "write_document_html",
]
