"""The one file hash of factscout: sha256, hex, read in 1 MiB blocks (model cards pin shipped
weights with it, downloads are checked with it, manifests and provenance name files by it)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

_BLOCK = 1 << 20


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in blocks (a large file is never held in memory whole)."""
    digest = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(_BLOCK), b""):
            digest.update(block)
    return digest.hexdigest()


__all__ = ["file_sha256"]
