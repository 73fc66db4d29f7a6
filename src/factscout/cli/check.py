"""``factscout check``: plan, retrieve, fuse, select, classify stance and judge one claim or a file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

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

_DEFAULT_INDEX = Path(".factscout/scifact-index")


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
    *,
    settings: dict[str, Any],
) -> None:
    """Check a claim: plan, retrieve, fuse, select evidence sentences, classify stance, give a verdict.

    A claim with a date finds only evidence published before it unless --no-date-filter is given.
    """
    quiet_libraries()
    # everything the user gave is checked first, before the index or any model loads
    if (claim is None) == (claims is None):
        raise typer.BadParameter("give exactly one of a CLAIM argument or --input FILE (--claims)")
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
    from factscout.settings import CheckSettings

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
