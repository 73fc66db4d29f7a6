"""``factscout data list`` and ``factscout data download NAME [--dir DIR]``: the registered datasets,
their sources and licences, and a checked download from each loader's real source URL."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import friendly

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
    from factscout.datasets.download import entries

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
    from factscout.datasets.download import download_dataset, known_checksums
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
