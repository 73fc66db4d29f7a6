"""What the MCP tools of :mod:`factscout.serve.mcp` say in words: a short text beside each tool's
structured content, for the LLM that called it. The structured content is the full record (a
``factscout-report/1`` report, a search's hits, matched fact-checks, a document report); the text is
its gist: the verdict and its confidence or why it was withheld, the strongest evidence sentences
with their sources, the published fact-checks of a claim, one line per hit. Quoted text is cut at
:data:`QUOTE_CHARS` characters and written as it is in the index (it is data, not instructions).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from factscout.claims.report import DocumentReport
from factscout.report import Report

TOP_SENTENCES = 3  # supporting and refuting sentences each in a check's text summary
TOP_FACT_CHECKS = 3
QUOTE_CHARS = 300  # a quoted sentence or passage is cut at this length in a summary


def report_summary(report: Mapping[str, Any]) -> str:
    """A check's report in a few lines an LLM reads: the verdict and its confidence (or why it was
    withheld), the top supporting and refuting sentences with their sources, the published
    fact-checks of the claim, and what the structured content holds."""
    r = Report.from_dict(report)
    lines = [f"Claim: {r.claim}" + (f" (made on {r.date.isoformat()}; evidence published before it)" if r.date else "")]
    lines.append(_verdict_line(r))
    for side, title in (("supports", "Supporting"), ("refutes", "Refuting")):
        quoted = _top_sentences(r, side)
        if quoted:
            lines.append(f"{title} evidence:")
            lines.extend(quoted)
    if not any(s.stance != "not enough info" for e in r.evidence for s in e.sentences):
        lines.append(f"No evidence sentence was counted for or against the claim ({len(r.evidence)} passages read).")
    if r.checked_before is not None:
        matches = r.checked_before.matches[:TOP_FACT_CHECKS]
        if matches:
            lines.append("Checked before (published fact-checks; the verdict above does not use them):")
            for m in matches:
                rating = f"'{m.verdict}' ({m.normalised_verdict})" if m.verdict else m.normalised_verdict
                day = m.date.isoformat() if m.date else "undated"
                lines.append(f"- {m.publisher}: {rating}, {day}, match {m.score:.2f}: {_cut(m.claim)} {m.url or ''}")
        else:
            lines.append("Checked before: no published fact-check of this claim in the memory.")
    lines.append(
        f"The structured content is the full factscout-report/1 report ({len(r.evidence)} evidence passages, "
        "each sentence's stance probabilities, the timeline, the provenance)."
    )
    return "\n".join(line.rstrip() for line in lines)


def _verdict_line(r: Report) -> str:
    """``Verdict: <label>`` with its confidence, or the call withheld and why, and the sentence counts."""
    v = r.verdict
    counts = f"{v.supporting} supporting, {v.refuting} refuting, {v.neutral} neutral sentences; {v.method}"
    if v.abstained:
        return f"Verdict: {v.label}: the call '{v.call}' was withheld ({v.abstention}) [{counts}]"
    if v.confidence is not None:
        return f"Verdict: {v.label}, confidence {v.confidence:.2f} [{counts}]"
    why = f" ({v.abstention})" if v.abstention else ""
    return f"Verdict: {v.label}{why} [{counts}]"


def document_summary(document: DocumentReport) -> str:
    """A document check in a few lines: how many sentences were check-worthy, then each checked one with
    its place, check-worthiness, verdict and strongest evidence sentence; the most check-worthy sentence
    when none was checked."""
    claims = document.claims
    lines = [
        f"Document ({document.document_format}): {_count(len(document.sentences), 'sentence')}, "
        f"{document.checkworthy} check-worthy (probability >= {document.threshold:g}); {len(claims)} checked, "
        "most check-worthy first."
    ]
    if not claims:
        lines.append("No sentence reaches the check-worthiness threshold: nothing was checked.")
        for s in sorted(document.sentences, key=lambda s: s.rank)[:1]:
            lines.append(f'The most check-worthy: {s.sentence_id} ({s.score:.2f}) "{_cut(s.text)}"')
    for i, c in enumerate(claims, start=1):
        speaker = f", {c.speaker}" if c.speaker else ""
        lines.append(
            f"{i}. {c.sentence_id} (check-worthiness {c.score:.2f}; characters {c.start}-{c.end}, "
            f'line {c.line}{speaker}): "{_cut(c.sentence)}"'
        )
        if c.context_ids:
            lines.append(f'   checked with its context ({", ".join(c.context_ids)}): "{_cut(c.claim)}"')
        if c.report is None:
            lines.append("   not checked: its check failed")
            continue
        lines.append("   " + _verdict_line(c.report))
        for side in ("supports", "refutes"):  # the strongest sentence each way
            lines.extend(f"   {side}: {line.removeprefix('- ')}" for line in _top_sentences(c.report, side)[:1])
    if claims:
        lines.append(
            "The structured content is the factscout-document-report/1 report: every sentence's span and "
            "check-worthiness, each checked sentence's full factscout-report/1 report."
        )
    return "\n".join(lines)


def _top_sentences(report: Report, side: str) -> list[str]:
    """The report's sentences counted for ``side``, most probable first, each with its source."""
    column = {"supports": 0, "refutes": 1}[side]
    found = [(s.probabilities[column], e, s) for e in report.evidence for s in e.sentences if s.stance == side]
    found.sort(key=lambda x: (-x[0], x[1].rank, x[2].index))
    return [f'- "{_cut(s.text)}" ({p:.2f}) from {_source(e)}' for p, e, s in found[:TOP_SENTENCES]]


def _source(e: Any) -> str:
    day = e.published.isoformat() if e.published else "undated"
    where = f", {e.url}" if e.url and e.url.lower().startswith(("https://", "http://")) else ""
    return f"{_cut(e.title or e.doc_id, 120)} ({day}{where}; passage {e.passage_id})"


def search_summary(result: Mapping[str, Any]) -> str:
    """A search's hits, one line each: rank, passage id, title, day, score and the start of its text."""
    before = f" published before {result['date']}" if result.get("date") else ""
    lines = [f"{len(result['hits'])} passages for {result['query']!r}{before}:"]
    for h in result["hits"]:
        day = h["published"] or "undated"
        lines.append(
            f"{h['rank']}. [{h['passage_id']}] {_cut(h['title'] or h['doc_id'], 120)} ({day}, score "
            f"{h['score']:.3f}): {_cut(h.get('text') or '', 200)}"
        )
    return "\n".join(lines)


def factchecks_summary(result: Mapping[str, Any]) -> str:
    """The matched fact-checks, one line each, and the threshold a report shows them at."""
    lines = [
        f"{len(result['matches'])} published fact-checks matched (a report shows those with match >= "
        f"{result['threshold']:g}, marked shown):"
    ]
    for m in result["matches"]:
        rating = f"'{m['verdict']}' ({m['normalised_verdict']})" if m["verdict"] else m["normalised_verdict"]
        shown = ", shown" if m["shown"] else ""
        lines.append(
            f"- {m['publisher']}: {rating}, {m['date'] or 'undated'}, match {m['score']:.2f}{shown}: "
            f"{_cut(m['claim'])} {m['url'] or ''}".rstrip()
        )
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _cut(text: str, limit: int = QUOTE_CHARS) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"
