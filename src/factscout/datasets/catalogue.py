"""The dataset catalogue: what ``factscout data list`` shows (:func:`entries`: each registered
dataset's source, licence and folder under the data root) and what ``data download`` runs
(:func:`download_dataset`: the dataset module's ``download(dest)`` with every fetch checked
against the module's published checksums, see :mod:`factscout.datasets.download`)."""

from __future__ import annotations

import importlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from factscout.datasets.base import DATASETS
from factscout.datasets.download import checking
from factscout.errors import FactscoutError, UnknownName


@dataclass(frozen=True, slots=True)
class Entry:
    """One registered dataset: its source, where it lives under the data root, and the dataset
    ``download`` fetches for it (``None`` for a fixture or derived layout that is not downloaded)."""

    name: str
    url: str
    license: str
    folder: str
    downloads_as: str | None


def _module_of(name: str) -> object:
    importlib.import_module("factscout.datasets")  # registers every loader
    return importlib.import_module(DATASETS[name].read.__module__)


def entries() -> list[Entry]:
    """Every registered dataset, sorted by name."""
    importlib.import_module("factscout.datasets")
    out = []
    for name in sorted(DATASETS.names()):
        module = _module_of(name)
        source = getattr(module, "SOURCES", {}).get(name) or module.SOURCE  # type: ignore[attr-defined]  # one module, several datasets (checkworthy)
        folder: str = module.FOLDER  # type: ignore[attr-defined]
        downloads_as: str | None = name
        if name.endswith("_mini"):
            folder = module.MINI_FOLDER  # type: ignore[attr-defined]
            downloads_as = None
        elif name.endswith("_beir"):
            folder, downloads_as = f"{folder}/beir", None
        out.append(Entry(name, source.url, source.license, folder, downloads_as))
    return out


def entry(name: str) -> Entry:
    """The catalogue entry of ``name`` (UnknownName lists the registered datasets)."""
    for e in entries():
        if e.name == name:
            return e
    raise UnknownName("dataset", name, [e.name for e in entries()])


@dataclass(frozen=True, slots=True)
class Downloaded:
    """What one ``data download`` did: the folder it filled and each fetched URL's sha256,
    with the URLs whose checksum was known beforehand (and so verified)."""

    folder: Path
    fetched: dict[str, str]
    verified: frozenset[str]


def known_checksums(name: str) -> dict[str, str]:
    """The checksums the dataset's module publishes (``SHA256 = {url: hex}``), if any."""
    return dict(getattr(_module_of(name), "SHA256", {}) or {})


def download_dataset(name: str, dest: Path, *, sha256: str | None = None) -> Downloaded:
    """Run dataset ``name``'s ``download(dest)`` with every fetch checked.

    The expected checksums are the module's ``SHA256`` and, when given, ``sha256`` for the
    dataset's source URL.
    """
    item = entry(name)
    if item.downloads_as is None:
        raise FactscoutError(
            f"dataset {name!r} is a fixture or a layout built from another dataset, not a download; "
            f"download {name.rsplit('_', 1)[0]!r} instead"
        )
    module = _module_of(name)
    expected = known_checksums(name)
    if sha256:
        expected[item.url] = sha256
    dest = Path(dest)
    # on failure, remove what this download created (and only that)
    created = next((p for p in (dest, dest / item.folder) if not p.exists()), None)
    try:
        with checking(expected) as session:
            folder = Path(module.download(dest))  # type: ignore[attr-defined]
    except BaseException:
        if created is not None:
            shutil.rmtree(created, ignore_errors=True)
        raise
    return Downloaded(folder, dict(session.fetched), frozenset(u for u in session.fetched if u in session.expected))
