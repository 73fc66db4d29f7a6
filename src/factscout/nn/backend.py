"""The torch import (an optional dependency, with the install hint), model-file hashes and the
cache folder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from factscout.errors import MissingDependency

INSTALL_HINT = "pip install torch==2.13.0 && pip install 'factscout[dense]'"


def cache_dir() -> Path:
    """Where factscout caches what it computes (embeddings, int8 model files, ...):
    ``$FACTSCOUT_CACHE``, default ``~/.cache/factscout``."""
    return Path(os.environ.get("FACTSCOUT_CACHE") or Path.home() / ".cache" / "factscout")


def require_torch(what: str = "this model") -> Any:
    """``torch``, or a :class:`MissingDependency` naming ``what`` needs it and how to install it."""
    try:
        import torch
    except ImportError:
        raise MissingDependency(f"{what} needs torch: {INSTALL_HINT}") from None
    return torch
