"""``factscout claims``: the sentences of a document worth fact-checking, ranked; or the
check-worthiness of sentences split already (``--sentences IN.jsonl --output OUT.jsonl``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from factscout.cli.common import OUTPUT, counted, err, friendly, input_path, out, output_path, quiet_libraries, status

if TYPE_CHECKING:
    from factscout.claims.checkworthy import CheckworthyModel
    from factscout.claims.document import Document
    from factscout.claims.ranking import RankedSentence

_FORMATS = "text | markdown | html | transcript"
_SHOWN = 10  # rows of the table on the terminal


@friendly
def claims(
    document: Annotated[
        Path | None,
        typer.Argument(help="the document: .txt, .md, .html or a .tsv transcript (line, speaker, text[, label])"),
    ] = None,
    sentences: Annotated[
        Path | None,
        typer.Option(
            "--sentences",
            help='score sentences split already, one {"id": ..., "text": ...} a line (never split again); '
            'writes {"id", "score", "checkworthy"} a line, in input order',
        ),
    ] = None,
    out_path: Annotated[Path | None, typer.Option(*OUTPUT, help="JSONL to write (default: standard output)")] = None,
    document_format: Annotated[
        str | None, typer.Option("--format", help=f"the document's format, {_FORMATS} (default: from its suffix)")
    ] = None,
    min_score: Annotated[
        float | None,
        typer.Option(min=0.0, max=1.0, help="keep the sentences whose check-worthiness is at least this"),
    ] = None,
    top: Annotated[int | None, typer.Option(min=1, help="keep the N most check-worthy sentences")] = None,
    model: Annotated[
        Path | None,
        typer.Option("--model", help="a check-worthiness model file (factscout train checkworthy; default: shipped)"),
    ] = None,
    batch_size: Annotated[int, typer.Option(min=1, help="sentences scored at a time")] = 64,
) -> None:
    """Find the sentences worth fact-checking in a document: each with its span, speaker, the
    sentences before it that it needs (context) and its check-worthiness, most check-worthy first.

    With --sentences IN.jsonl, score sentences that are split already instead, in input order;
    "checkworthy" is the score at or above the model's shipped threshold.
    """
    quiet_libraries()
    # everything the user gave is checked before any model loads
    if (document is None) == (sentences is None):
        raise typer.BadParameter("give exactly one of a DOCUMENT argument or --sentences FILE")
    if sentences is not None:
        options = (("--format", document_format), ("--min-score", min_score), ("--top", top))
        given = [flag for flag, value in options if value is not None]
        if given:
            raise typer.BadParameter(f"{', '.join(given)} apply to a DOCUMENT, not to --sentences (all are scored)")
    output_path(out_path, "--output")
    input_path(model, "--model")
    if sentences is not None:
        input_path(sentences, "--sentences")
        _score_split(sentences, out_path, model, batch_size)
    elif document is not None:
        input_path(document, "DOCUMENT")
        _rank(document, document_format, out_path, model, batch_size, top=top, min_score=min_score)


def _rank(
    document: Path,
    document_format: str | None,
    out_path: Path | None,
    model: Path | None,
    batch_size: int,
    *,
    top: int | None,
    min_score: float | None,
) -> None:
    from factscout.claims.document import read_document
    from factscout.claims.ranking import rank_document, ranked_row

    doc = read_document(document, document_format)  # read and split whole before the model loads
    scorer = _load(model)
    with counted("scoring sentences", len(doc.sentences)) as bar:
        ranked = rank_document(doc, scorer, top=top, min_score=min_score, batch_size=batch_size, progress=bar.advance)
    _write(out_path, [ranked_row(doc, r) for r in ranked])
    _show(doc, ranked, scorer.threshold)
    where = f" to {out_path}" if out_path else ""
    err.print(
        f"{len(ranked)} of {len(doc.sentences)} sentences{where} ({sum(r.checkworthy for r in ranked)} check-worthy "
        f"at the threshold {scorer.threshold:g}; {doc.format})",
        highlight=False,
        soft_wrap=True,
    )


def _score_split(path: Path, out_path: Path | None, model: Path | None, batch_size: int) -> None:
    from factscout.claims.ranking import read_sentences, score_sentences

    rows = read_sentences(path)  # every line checked before the model loads
    scorer = _load(model)
    with counted("scoring sentences", len(rows)) as bar:
        scored = score_sentences(scorer, rows, batch_size=batch_size, progress=bar.advance)
    _write(out_path, scored)
    if out_path is not None:
        worthy = sum(r["checkworthy"] for r in scored)
        err.print(f"wrote {len(scored)} sentences to {out_path} ({worthy} check-worthy)", highlight=False)


def _load(path: Path | None) -> CheckworthyModel:
    from factscout.claims.checkworthy import load_checkworthy

    with status("loading the check-worthiness model"):
        return load_checkworthy(path)


def _write(path: Path | None, rows: list[dict[str, Any]]) -> None:
    if path is None:
        for row in rows:
            out.file.write(json.dumps(row, ensure_ascii=False) + "\n")
        out.file.flush()
        return
    from factscout.formats.jsonl import write_jsonl

    write_jsonl(path, rows)


def _show(doc: Document, ranked: list[RankedSentence], threshold: float) -> None:
    """The first rows of the ranking as a table on stderr (texts shown as text, never as markup)."""
    from rich.table import Table
    from rich.text import Text

    if not ranked:
        return
    table = Table(title=f"most check-worthy sentences (threshold {threshold:g})", title_justify="left")
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("score", justify="right", no_wrap=True)
    table.add_column("id", no_wrap=True)
    table.add_column("speaker", no_wrap=True)
    table.add_column("sentence", ratio=1)
    table.add_column("context", no_wrap=True)
    for r in ranked[:_SHOWN]:
        s = r.sentence
        score = Text(f"{r.score.probability:.2f}", style="bold" if r.checkworthy else "dim")
        table.add_row(str(r.rank), score, s.sentence_id, Text(s.speaker or ""), Text(s.text), " ".join(s.context))
    err.print(table)
    if len(ranked) > _SHOWN:
        err.print(f"... {len(ranked) - _SHOWN} more in the JSONL", highlight=False)
