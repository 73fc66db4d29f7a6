"""``factscout check``: plan, retrieve, fuse, select, classify stance and judge one claim or a file;
with ``--document``, the most check-worthy sentences of a document, into one document report."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factscout.cli.common import (
    INPUT,
    OUTPUT,
    RayOption,
    claim_text,
    counted,
    err,
    friendly,
    input_path,
    out,
    output_path,
    parse_day,
    print_report,
    quiet_libraries,
    read_claims,
    status,
)
from factscout.cli.settings import server_decides, with_settings
from factscout.records import Claim
from factscout.settings import CheckSettings

if TYPE_CHECKING:
    from factscout.check import Checker
    from factscout.claims.document import Document

_DEFAULT_INDEX = Path(".factscout/scifact-index")
_FORMATS = "text | markdown | html | transcript"


@friendly
@with_settings()
def check(
    claim: Annotated[str | None, typer.Argument(help="the claim to check (or give --input FILE)")] = None,
    index: Annotated[
        Path, typer.Option("--index", help="index directory built with `factscout index`")
    ] = _DEFAULT_INDEX,
    date: Annotated[
        str | None, typer.Option(help="the claim's date (YYYY-MM-DD): evidence must predate it (see --date-filter)")
    ] = None,
    claims: Annotated[
        Path | None, typer.Option(*INPUT, "--claims", help="claims JSONL in BEIR query form (_id, text, date?)")
    ] = None,
    out_path: Annotated[
        Path | None, typer.Option(*OUTPUT, "--out", help="reports JSONL to write (with --input)")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the report as JSON (one claim)")] = False,
    html: Annotated[
        Path | None, typer.Option("--html", help="also write the report(s) as one self-contained HTML page")
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            metavar="URL",
            help="send the claim(s) to a running `factscout serve` at URL (its index and settings; models stay"
            " loaded there, so each check takes about a second); bearer token from $FACTSCOUT_TOKEN",
        ),
    ] = None,
    ray: RayOption = None,
    workers: Annotated[int | None, typer.Option(help="with --ray: checker actors (default: one per CPU)")] = None,
    document: Annotated[
        Path | None,
        typer.Option(
            "--document",
            help="check a document instead: its most check-worthy sentences, each with the sentences before it"
            " that it needs, into one document report (.txt, .md, .html or a .tsv transcript: line, speaker, text)",
        ),
    ] = None,
    document_format: Annotated[
        str | None,
        typer.Option("--format", help=f"with --document: its format, {_FORMATS} (default: from its suffix)"),
    ] = None,
    top: Annotated[
        int | None,
        typer.Option(min=1, help="with --document: check at most the N most check-worthy sentences (default 5)"),
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="with --document: check the sentences whose check-worthiness is at least this (default: the"
            " model's threshold)",
        ),
    ] = None,
    *,
    settings: dict[str, Any],
) -> None:
    """Check a claim: plan, retrieve, fuse, select evidence sentences, classify stance, give a verdict.

    A claim with a date finds only evidence published before it unless --no-date-filter is given.
    With --document FILE, the document's most check-worthy sentences are checked (--top, --min-score;
    --date: the document's) and written as one report: on the terminal, as JSON (--json, --output) or
    as an HTML page with the sentences highlighted in the text (--html).
    """
    quiet_libraries()
    # everything the user gave is checked first, before the index or any model loads
    if sum(x is not None for x in (claim, claims, document)) != 1:
        raise typer.BadParameter("give exactly one of a CLAIM argument, --input FILE (--claims) or --document FILE")
    if document is None:
        given = [flag for flag, value in (("--format", document_format), ("--top", top), ("--min-score", min_score))
                 if value is not None]  # fmt: skip
        if given:
            raise typer.BadParameter(f"{', '.join(given)} apply to --document FILE")
    else:
        given = [flag for flag, value in (("--server", server), ("--ray", ray), ("--workers", workers))
                 if value is not None]  # fmt: skip
        if given:
            raise typer.BadParameter(f"--document is checked here: drop {', '.join(given)}")
        _check_document(
            document, document_format, top, min_score, index, date, out_path, as_json, html, CheckSettings(**settings)
        )
        return
    if claims is not None and out_path is None and html is None:
        raise typer.BadParameter("--input FILE (--claims) needs --output FILE (--out) for the reports (or --html FILE)")
    if ray is not None and claims is None:
        raise typer.BadParameter("--ray checks an --input FILE (--claims, with --output or --html)")
    output_path(out_path, "--output")
    output_path(html, "--html")
    text = claim_text(claim) if claim is not None else None
    day = parse_day(date, "--date")
    items: list[Claim] = []
    if claims is not None:
        input_path(claims, "--input")
        items = read_claims(claims)
    from factscout.retrieve.index import read_manifest

    checked = CheckSettings(**settings)  # unknown names are reported (with the known ones) before anything loads
    if server is not None:
        from factscout.cli.remote import check_remote

        local = [flag for flag, given in (("--index", index != _DEFAULT_INDEX), ("--ray", ray), ("--workers", workers))
                 if given]  # fmt: skip
        if local := local + server_decides(settings):
            raise typer.BadParameter(
                f"with --server the server's settings apply: drop {', '.join(local)} (or check locally)"
            )
        todo = [Claim("claim", text, day)] if text is not None else items
        _show(
            check_remote(server, todo, checked.planner, checked.date_filter),
            text is not None,
            as_json,
            out_path,
            html,
            None,
        )
        return
    read_manifest(index)  # a missing or broken index is named before anything loads
    if ray is not None:
        from factscout.scale.jobs import check_on_ray

        reports = check_on_ray(index, checked, items, address=ray, workers=workers)
        _write_reports(out_path, reports, len(items), html)
        return
    from factscout.check import Checker

    checker = Checker.from_index(index, checked)
    if text is not None:
        with status("checking the claim"):
            report = checker.check(Claim("claim", text, day))
        _show([report], True, as_json, out_path, html, checker.store)
        return
    _write_reports(out_path, checker.iter_check(items, batch_size=32), len(items), html, checker.store)


def _show(reports: Any, one: bool, as_json: bool, out_path: Path | None, html: Path | None, store: Any) -> None:
    """One claim: printed (or as JSON), and written with --html; a file's reports: written."""
    if not one:
        reports = list(reports)
        _write_reports(out_path, reports, len(reports), html, store)
        return
    report = next(iter(reports))
    if as_json:
        out.print_json(json.dumps(report.to_dict()))
    else:
        print_report(report)
    if html is not None:
        _write_html(html, [report.to_dict()], store)


def _write_reports(
    out_path: Path | None, reports: Any, total: int, html: Path | None = None, store: Any = None
) -> None:
    from factscout.cli.stats import CheckStats
    from factscout.formats.jsonl import write_jsonl

    stats = CheckStats()
    kept: list[dict[str, Any]] = []
    with counted("checking claims", total) as bar:

        def rows() -> Any:
            for report in reports:
                stats.add(report)
                bar.advance()
                row = report.to_dict()
                if html is not None:
                    kept.append(row)
                yield row

        if out_path is not None:
            write_jsonl(out_path, rows())
        else:
            for _ in rows():
                pass
    verdicts = ", ".join(f"{n} {label}" for label, n in sorted(stats.verdicts.items()))
    where = f"wrote {stats.claims} reports to {out_path}" if out_path else f"checked {stats.claims} claims"
    err.print(f"{where} ({verdicts})")
    if html is not None:
        _write_html(html, kept, store)


def _write_html(path: Path, reports: list[dict[str, Any]], store: Any) -> None:
    """``--html``: the reports as one self-contained page (:mod:`factscout.render.html`)."""
    import datetime as dt

    from factscout.render.html import write_html

    stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    err.print(f"wrote {write_html(path, reports, store, generated=stamp)} ({len(reports)} claims)")


# ---------------------------------------------------------------------------- --document


def _check_document(
    path: Path,
    document_format: str | None,
    top: int | None,
    min_score: float | None,
    index: Path,
    date: str | None,
    out_path: Path | None,
    as_json: bool,
    html: Path | None,
    settings: CheckSettings,
) -> None:
    """``check --document``: read and split the document (before anything loads), score its
    sentences, check the top ones (:func:`factscout.claims.check.check_document`), show and write
    the one document report."""
    from factscout.check import Checker
    from factscout.claims.check import DEFAULT_TOP, check_document
    from factscout.claims.checkworthy import load_checkworthy
    from factscout.claims.document import read_document
    from factscout.retrieve.index import read_manifest

    output_path(out_path, "--output")
    output_path(html, "--html")
    input_path(path, "--document")
    day = parse_day(date, "--date")
    doc = read_document(path, document_format)  # binary, over-long or malformed: refused here
    read_manifest(index)  # a missing or broken index is named before anything loads
    with status("loading the check-worthiness model"):
        model = load_checkworthy()
    checker = Checker.from_index(index, settings)
    with _Progress() as progress:
        report = check_document(
            checker, doc, top=top or DEFAULT_TOP, min_score=min_score, date=day, model=model, progress=progress
        )
    _show_document(report, doc, checker, out_path=out_path, as_json=as_json, html=html)


def _show_document(
    report: Any, doc: Document, checker: Checker, *, out_path: Path | None, as_json: bool, html: Path | None
) -> None:
    import datetime as dt

    from factscout.render.document import print_document, summary, write_document_html

    row = report.to_dict()
    if as_json:  # written as it is: a long document's JSON is not worth colouring
        out.file.write(json.dumps(row, ensure_ascii=False, indent=1) + "\n")
        out.file.flush()
    else:
        print_document(report, out, checker.store)
    if out_path is not None:
        out_path.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
        err.print(f"wrote the document report to {out_path}", highlight=False, soft_wrap=True)
    if html is not None:
        stamp = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        written = write_document_html(html, report, checker.store, generated=stamp)
        err.print(f"wrote {written}", highlight=False, soft_wrap=True)
    err.print(summary(report), highlight=False, soft_wrap=True)


class _Progress:
    """``progress(step, done, total)`` of :func:`~factscout.claims.check.check_document` as counted
    bars on stderr: one for scoring the sentences, then one for checking the claims."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        self._step: str | None = None
        self._bar: Any = None

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stack.close()

    def __call__(self, step: str, done: int, total: int) -> None:
        if step != self._step:
            self._stack.close()
            self._stack = ExitStack()
            what = "scoring sentences" if step == "scoring" else "checking claims"
            self._bar, self._step = self._stack.enter_context(counted(what, total)), step
        self._bar.advance(done - self._bar.completed)
