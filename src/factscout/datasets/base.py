"""What every dataset loader shares: where the data lives, the :class:`Dataset` record, the
``dataset`` registry, and the few readers and download helpers the loaders build on.

A loader is registered under a name with the splits it knows; ``load_dataset(name, split)``
looks it up (an unknown name lists the known ones, an unknown split lists the valid splits)
and reads the split from ``root`` (default :func:`data_root`). Loaders never download: each
dataset module has an explicit ``download(dest)`` for users with internet access.
"""

from __future__ import annotations

import csv
import importlib
import json
import logging
import os
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factscout.errors import DataNotFound, InputError
from factscout.formats.beir import Qrels
from factscout.formats.jsonl import open_text
from factscout.records import Claim, Passage, Query
from factscout.registry import Registry

log = logging.getLogger(__name__)

ENV_VAR = "FACTSCOUT_DATA"


def _default_places() -> list[Path]:
    repo = Path(__file__).resolve().parents[3]
    return [repo.parent / "shared" / "data", Path.cwd().parent / "shared" / "data"]


def data_root() -> Path:
    """The folder that holds the dataset folders (``scifact/``, ``averitec/``...).

    ``$FACTSCOUT_DATA`` when set (it must then exist), else the first existing of
    ``<repo>/../shared/data`` and ``./../shared/data``.
    """
    env = os.environ.get(ENV_VAR)
    if env:
        path = Path(env).expanduser()
        if not path.is_dir():
            raise DataNotFound(f"{ENV_VAR}={env!r} is not a folder")
        return path
    tried = _default_places()
    for path in tried:
        if path.is_dir():
            return path
    places = ", ".join(str(p) for p in tried)
    raise DataNotFound(f"no data folder found (tried {places}); set {ENV_VAR} to the folder holding the datasets")


@dataclass(frozen=True, slots=True)
class DatasetSource:
    """Where a dataset comes from: its public download location, licence and paper."""

    name: str
    url: str
    license: str
    citation: str


@dataclass(frozen=True)
class Dataset:
    """One split of a dataset: its claims and, where the dataset has one, a passage pool and qrels.

    ``qrels`` maps ``claim_id -> {passage_id: relevance}``. ``skipped`` records the rows that
    could not become a :class:`Claim` (e.g. an empty claim text) as ``"file:line: reason"``.
    """

    name: str
    split: str
    claims: tuple[Claim, ...] = field(repr=False)
    corpus: tuple[Passage, ...] = field(default=(), repr=False)
    qrels: Qrels = field(default_factory=dict, repr=False)
    source: DatasetSource | None = field(default=None, repr=False)
    skipped: tuple[str, ...] = field(default=(), repr=False)

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for claim in self.claims:
            if claim.claim_id in seen:
                raise InputError(f"dataset {self.name!r} split {self.split!r} has claim id {claim.claim_id!r} twice")
            seen.add(claim.claim_id)

    def __repr__(self) -> str:
        return (
            f"Dataset(name={self.name!r}, split={self.split!r}, claims={len(self.claims)}, "
            f"corpus={len(self.corpus)}, qrels={len(self.qrels)}, skipped={len(self.skipped)})"
        )

    def queries(self) -> list[Query]:
        """One claim-only query per claim, in claim order."""
        return [Query.for_claim(c) for c in self.claims]


@dataclass(frozen=True, slots=True)
class Loader:
    """A registered dataset reader: ``loader(split=None, root=None) -> Dataset``."""

    name: str
    splits: tuple[str, ...]
    default_split: str
    read: Callable[[str, Path], Dataset] = field(repr=False)

    def __call__(self, split: str | None = None, root: str | os.PathLike[str] | None = None) -> Dataset:
        split = self.default_split if split is None else split
        if split not in self.splits:
            raise InputError(f"dataset {self.name!r} has no split {split!r}; valid splits: {', '.join(self.splits)}")
        return self.read(split, Path(root) if root is not None else data_root())


DATASETS: Registry[Loader] = Registry("dataset")


def register_loader(name: str, splits: tuple[str, ...]) -> Callable[[Callable[[str, Path], Dataset]], Loader]:
    """Register ``read(split, root) -> Dataset`` as the loader ``name``; the first split is the default."""

    def wrap(read: Callable[[str, Path], Dataset]) -> Loader:
        return DATASETS.register(name)(Loader(name, splits, splits[0], read))

    return wrap


def load_dataset(name: str, split: str | None = None, root: str | os.PathLike[str] | None = None) -> Dataset:
    """Load split ``split`` (default: the dataset's default split) of dataset ``name``."""
    importlib.import_module("factscout.datasets")  # registers every loader
    return DATASETS[name](split, root)


# --- reading helpers shared by the loaders ---------------------------------------------------


def require_file(path: Path, dataset_name: str) -> Path:
    """``path`` if it is a file, else DataNotFound naming it and how to get it."""
    if not path.is_file():
        download = dataset_name.removesuffix("_mini").removesuffix("_beir")  # fixtures / views of a download
        raise DataNotFound(
            f"{dataset_name}: no such file: {path} (set {ENV_VAR} to the folder holding the datasets, "
            f"or fetch it with `factscout data download {download}` on a machine with internet access)"
        )
    return path


def read_json(path: Path) -> Any:
    """A whole JSON document; malformed JSON names the file and line."""
    with open_text(path) as f:
        try:
            return json.load(f)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{exc.lineno}: malformed JSON ({exc.msg})") from None


def read_delimited(
    path: Path, delimiter: str, *, fields: int, header: bool, quoted: bool = True
) -> Iterator[tuple[int, list[str]]]:
    """Yield ``(line_number, row)`` of a delimited text file with quoted fields.

    ``line_number`` is the line the record starts on (quoted fields may span lines). A record
    with the wrong number of fields is an InputError naming its line. ``quoted=False``: a quote
    is an ordinary character (TSV files whose texts hold unbalanced ``"``, one record a line).
    """
    with open_text(path) as f:
        reader = (
            csv.reader(f, delimiter=delimiter) if quoted else csv.reader(f, delimiter=delimiter, quoting=csv.QUOTE_NONE)
        )
        start = 1
        for row in reader:
            lineno, start = start, reader.line_num + 1
            if header and lineno == 1:
                continue
            if not row or not any(cell.strip() for cell in row):
                continue
            if len(row) != fields:
                raise InputError(f"{path}:{lineno}: expected {fields} {delimiter!r}-separated fields, got {len(row)}")
            yield lineno, row


def keep_qrels(qrels: Qrels, claims: tuple[Claim, ...]) -> Qrels:
    """The qrels of the given claims only (rows of skipped claims are dropped)."""
    ids = {c.claim_id for c in claims}
    return {q: docs for q, docs in qrels.items() if q in ids}


def meta_dict(**values: Any) -> dict[str, Any]:
    """Claim metadata without the ``None`` values."""
    return {k: v for k, v in values.items() if v is not None}


# --- downloading (only ever called explicitly by a user) -------------------------------------


def fetch(url: str, dest: Path, *, timeout: float = 120.0) -> Path:
    """Download ``url`` to ``dest`` through a temporary file, a sha256 check and a rename; return ``dest``.

    See :func:`factscout.datasets.download.fetch_checked` (the expected checksums and the record
    of the fetched ones).
    """
    from factscout.datasets.download import fetch_checked

    return fetch_checked(url, dest, timeout=timeout)


def fetch_all(urls: Mapping[str, str], folder: Path) -> Path:
    """Download each ``{file_name: url}`` into ``folder``; return ``folder``."""
    for name, url in urls.items():
        fetch(url, folder / name)
    return folder


def github_raw(repo: str, commit: str, path: str) -> str:
    """The raw.githubusercontent.com address of one file of a public repository at a commit."""
    return f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"


def github_archive(repo: str, commit: str) -> str:
    """The zip archive of a public GitHub repository at a commit."""
    return f"https://github.com/{repo}/archive/{commit}.zip"
