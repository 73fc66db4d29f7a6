"""What every trainer writes beside its weights: a metrics file and a model card.

Dataset licences in model cards come from the dataset loader's ``SOURCE``
(:class:`factscout.datasets.DatasetSource`), never from a trainer's own table, so a card
always says what the loader says.
"""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any


def source_of(dataset: str) -> Any:
    """The :class:`~factscout.datasets.DatasetSource` of registered dataset ``dataset``
    (the ``SOURCE`` of the module its loader lives in)."""
    importlib.import_module("factscout.datasets")  # registers every loader
    from factscout.datasets import DATASETS

    loader = DATASETS[dataset]
    return sys.modules[loader.read.__module__].SOURCE


def licence_of(dataset: str) -> str:
    """The licence of ``dataset`` as its loader's ``SOURCE`` states it."""
    return str(source_of(dataset).license)


def write_metrics(path: Path, metrics: Mapping[str, Any], *, indent: int = 2) -> Path:
    """Write ``metrics`` as JSON (``indent`` as each trainer always wrote it) plus a newline."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(metrics, indent=indent) + "\n")
    return path


def write_card(path: Path, text: str) -> Path:
    """Write a model card's Markdown ``text``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
