"""A report on the terminal (rich), section by section from :func:`factscout.render.view.report_view`:
the same sections, in the same order, as the HTML report and the served page."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape

from factscout.render.view import SECTIONS, report_view
from factscout.report import Report

TITLES = {s.name: s.title for s in SECTIONS}
PROVENANCE_WIDTH = 100  # a provenance value longer than this is cut on the terminal (the JSON has it whole)


def print_report(report: Report | Mapping[str, Any], console: Console, store: Any = None) -> None:
    """Every section of ``report`` that it has (:data:`~factscout.render.view.SECTIONS`), each under
    its title; text from the report is escaped (a passage's ``[bold]`` stays text)."""
    view = report_view(report, store)
    for name in view["shown"]:
        if name == "claim":
            claim = view["claim"]
            day = f" (claimed {claim['date']})" if claim["date"] else ""
            console.rule(f"[bold]{escape(claim['text'])}[/]{escape(day)}")
            continue
        console.print(f"\n[bold]{TITLES[name]}[/]", highlight=False)
        PRINTERS[name](view[name], console)


def _say(console: Console, text: str) -> None:
    console.print(text, highlight=False, soft_wrap=True)


def _verdict(v: dict[str, Any], console: Console) -> None:
    colour = {"supported": "green", "refuted": "red"}.get(v["label"], "yellow")
    c = v["counts"]
    _say(console, f"  [bold {colour}]{v['label']}[/]  ({c['supporting']} supporting, {c['refuting']} refuting, "
                  f"{c['neutral']} neutral sentences; {escape(v['method'])})")  # fmt: skip
    if v["counts_note"]:
        _say(console, f"  [dim]sentence counts: {escape(v['counts_note'])}[/]")
    if v["confidence_words"] and v["call"] == v["label"]:
        _say(console, f"  confidence: {v['confidence']:.2f} ({escape(v['confidence_words'])})")
    if v.get("abstention"):
        _say(console, f"  why not a definite call: {escape(v['abstention'])}")
    _say(console, f"  why: {escape(v['reason'])}")


def _checked_before(section: dict[str, Any], console: Console) -> None:
    before = f", published before {section['published_before']}" if section["published_before"] else ""
    _say(console, f"  {len(section['matches'])} in memory {escape(section['memory'])}{before}")
    if not section["matches"]:
        _say(console, f"  no published fact-check reaches the match threshold {section['threshold']:g}")
    for m in section["matches"]:
        rating = f"{m['verdict']} ({m['normalised_verdict']})" if m["verdict"] else m["normalised_verdict"]
        line = f"{m['publisher']}: {rating}"
        details = f"{m['date'] or 'undated'}, match {m['score']:.2f}"
        _say(console, f"  {escape(line)} [dim]{details}[/] {escape(m['title'] or m['claim'])} {escape(m['url'] or '')}")
    _say(console, f"  [dim]{escape(section['note'])}[/]")


def _notes(notes: list[str], console: Console) -> None:
    for note in notes:
        _say(console, f"  [yellow]![/] {escape(note)}")


def _queries(queries: list[dict[str, Any]], console: Console) -> None:
    for q in queries:
        _say(console, f"  {escape(q['query_id'])} [dim]({escape(q['origin'])})[/] {escape(q['text'])}")


def _timeline(timeline: dict[str, Any], console: Console) -> None:
    leakage = timeline["leakage"]
    if not timeline["points"]:
        _say(console, "  no dated evidence")
        return
    _say(console, f"  {leakage['dated']} dated passages, {leakage['after_claim']} published on or after the claim date")
    for p in timeline["points"]:
        late = " [red](after the claim)[/]" if p["after_claim"] else ""
        days = f", {p['days_from_claim']} days from the claim" if p["days_from_claim"] is not None else ""
        _say(console, f"  {p['published']} #{p['rank']} {p['stance']}{days}{late}")


def _evidence(groups: list[dict[str, Any]], console: Console) -> None:
    for group in groups:
        if not group["passages"]:
            continue
        _say(console, f"  [bold]{group['title']}[/] ({len(group['passages'])})")
        for e in group["passages"]:
            date = e["published"] or "undated"
            late = " [red](after the claim)[/]" if e["after_claim"] else ""
            found = ", ".join(e["found_by"])
            _say(
                console,
                f"   #{e['rank']} {escape(e['title'] or e['doc_id'])} [dim]{date}{late} found by {escape(found)}[/]",
            )
            for s in e["highlighted"]:
                _say(console, f"     > {escape(s['text'])} [dim]({sentence_label(s)})[/]")


def sentence_label(s: dict[str, Any]) -> str:
    """How a highlighted sentence reads: the side the rule counted it for (or that it was not
    counted), the model's own label when that differs, and the three probabilities."""
    p = s["probabilities"]
    if s["counted"]:
        said = f"counted: {s['stance']}"
    elif s["model_label"] != s["stance"]:
        said = f"not counted; model: {s['model_label']} {s['model_probability']:.2f}"
    else:
        said = "not counted; model: not enough info"
    return f"{said}; S {p['supports']:.2f} / R {p['refutes']:.2f} / N {p['not enough info']:.2f}"


def _provenance(lines: list[tuple[str, str]], console: Console) -> None:
    for key, value in lines:
        flat = " ".join(value.split())
        cut = flat if len(flat) <= PROVENANCE_WIDTH else flat[: PROVENANCE_WIDTH - 1] + "…"
        _say(console, f"  [dim]{escape(key)}: {escape(cut)}[/]")


PRINTERS: dict[str, Callable[[Any, Console], None]] = {
    "verdict": _verdict,
    "checked_before": _checked_before,
    "notes": _notes,
    "queries": _queries,
    "timeline": _timeline,
    "evidence": _evidence,
    "provenance": _provenance,
}

__all__ = ["print_report", "sentence_label"]
