"""Crash-safe generations of an on-disk store (an index, a fact-check memory).

A store folder holds generations ``DIR/gen-<time>-<random>/`` and ``DIR/CURRENT`` naming the live
one. A writer fills a new generation and then replaces ``CURRENT`` with one atomic rename; only
after that are older generations removed. A crash at any point leaves the previous generation
live and whole, and a reader never sees a half-written one. Generic storage, so it lives here and
not with any one store (``retrieve.index`` and ``factchecks.memory`` both use it).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from factscout.errors import InputError


@contextlib.contextmanager
def new_generation(directory: str | os.PathLike[str], what: str) -> Iterator[Path]:
    """A new generation folder of the ``what`` (an index, a fact-check memory) at ``directory`` to
    write into; when the block ends without an error ``CURRENT`` names it (one atomic rename) and
    the older generations go, else it is removed and the live one stays untouched."""
    root = Path(directory)
    if root.exists() and not root.is_dir():
        raise InputError(f"{what} path {root} exists and is not a directory")
    if root.is_dir() and any(root.iterdir()) and not (root / "CURRENT").is_file():
        raise InputError(f"{root} is a non-empty directory that is not a {what}; refusing to write there")
    root.mkdir(parents=True, exist_ok=True)
    gen = Path(tempfile.mkdtemp(prefix=f"gen-{time.strftime('%Y%m%dT%H%M%S')}-", dir=root))
    try:
        yield gen
        fd, tmp = tempfile.mkstemp(prefix=".CURRENT.", dir=root)
        with os.fdopen(fd, "w") as f:
            f.write(gen.name + "\n")
        os.replace(tmp, root / "CURRENT")
    except BaseException:
        shutil.rmtree(gen, ignore_errors=True)
        raise
    for old in root.glob("gen-*"):
        if old != gen:
            shutil.rmtree(old, ignore_errors=True)


__all__ = ["new_generation"]
