"""``factscout data list`` and ``factscout data download NAME [--dir DIR]``: the registered datasets,
their sources and licences, and a checked download from each loader's real source URL;
``factscout data pseudo-claims``: inverse-cloze pseudo-claims from a corpus, as BEIR files that
``factscout index`` and ``factscout trajectories`` read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import INPUT, OUTPUT, friendly

app = typer.Typer(no_args_is_help=True, help="List the datasets and download them from their sources.")

CHECKSUMS_FILE = "DOWNLOADS.sha256.json"


def _root(directory: Path | None) -> Path | None:
    from factscout.datasets.base import data_root
    from factscout.errors import DataNotFound

    if directory is not None:
        return directory
    try:
        return data_root()
    except DataNotFound:
        return None


@app.command("list")
@friendly
def list_(
    directory: Annotated[
        Path | None, typer.Option("--dir", help="data root to look in (default: $FACTSCOUT_DATA or ../shared/data)")
    ] = None,
) -> None:
    """Every registered dataset: name, source URL, licence and whether it is under the data root."""
    from factscout.datasets.catalogue import entries

    root = _root(directory)
    typer.echo(f"data root: {root if root is not None else '(none found; set $FACTSCOUT_DATA)'}")
    for e in entries():
        present = root is not None and (root / e.folder).exists()
        how = "" if e.downloads_as else "  (fixture/derived; not downloaded)"
        typer.echo(f"{e.name}\t{'present' if present else 'missing'}\t{e.license}\t{e.url}{how}")


@app.command()
@friendly
def download(
    name: Annotated[str, typer.Argument(help="dataset name, as `factscout data list` shows it")],
    directory: Annotated[
        Path | None, typer.Option("--dir", help="data root to download into (default: the data root)")
    ] = None,
    sha256: Annotated[
        str | None, typer.Option(help="expected sha256 of the dataset's source URL (refused if it differs)")
    ] = None,
) -> None:
    """Download dataset NAME from its source URL, check its sha256 and place it under the data root."""
    from factscout.datasets.catalogue import download_dataset, known_checksums
    from factscout.errors import DataNotFound

    root = _root(directory)
    if root is None:
        raise DataNotFound("no data root found: pass --dir DIR or set $FACTSCOUT_DATA")
    any_known = bool(known_checksums(name)) or sha256 is not None
    done = download_dataset(name, root, sha256=sha256)
    for url, digest in sorted(done.fetched.items()):
        note = "verified" if url in done.verified else "no known checksum; computed"
        typer.echo(f"{url}\tsha256 {digest}\t({note})")
    if not any_known:
        typer.echo("no checksum is known for this dataset: the computed ones above are recorded")
    record = root / CHECKSUMS_FILE
    kept = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    kept.update(done.fetched)
    tmp = record.with_suffix(".tmp")
    tmp.write_text(json.dumps(kept, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(record)
    typer.echo(f"{name}: downloaded into {done.folder}; checksums recorded in {record}")


PSEUDO_FILES = ("corpus.jsonl", "queries.jsonl", "qrels/train.tsv")


@app.command("pseudo-claims")
@friendly
def pseudo_claims(
    out: Annotated[Path, typer.Option(*OUTPUT, "--out", help="folder to write corpus.jsonl, queries.jsonl, qrels/")],
    n: Annotated[int, typer.Option("--n", help="pseudo-claims to make (at most one per passage)")],
    corpus: Annotated[Path | None, typer.Option(*INPUT, "--corpus", help="BEIR JSONL corpus; .gz ok")] = None,
    dataset: Annotated[str | None, typer.Option(help="instead of --input: a dataset's passage pool")] = None,
    data: Annotated[Path | None, typer.Option(help="with --dataset: the data root")] = None,
    seed: Annotated[int, typer.Option(help="seed of the passage and sentence choice")] = 0,
) -> None:
    """Pseudo-claims by the inverse cloze task: one claim-like sentence cut out of each chosen
    passage is the claim, the rest of the passage its relevant one. Writes the *training copy* of
    the corpus (every passage, the cut sentences removed): index that copy, never the original, then
    run `factscout trajectories --claims OUT/queries.jsonl --qrels OUT/qrels/train.tsv`."""
    from factscout.cli.index import dataset_passages, read_passages
    from factscout.errors import InputError
    from factscout.formats.beir import write_claims, write_corpus, write_qrels
    from factscout.training.rewrite.pseudo_claims import inverse_cloze

    if (corpus is None) == (dataset is None):
        raise typer.BadParameter("give exactly one of --input FILE (--corpus) or --dataset NAME")
    there = [name for name in PSEUDO_FILES if (out / name).exists()]
    if there:
        raise InputError(f"{out} already holds {', '.join(there)}: choose an empty folder (nothing is overwritten)")
    passages = read_passages(corpus) if corpus is not None else dataset_passages(str(dataset), data)
    made = inverse_cloze(passages, n, seed=seed)
    (out / "qrels").mkdir(parents=True, exist_ok=True)
    write_corpus(out / "corpus.jsonl", made.corpus)
    write_claims(out / "queries.jsonl", made.claims)
    write_qrels(out / "qrels" / "train.tsv", made.qrels)
    typer.echo(
        f"{len(made.claims)} pseudo-claims ({made.eligible} of {len(passages)} passages eligible, "
        f"{made.eligible_share:.1%}; {made.shortfall} short of {n}) -> {out}"
    )
