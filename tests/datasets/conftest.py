"""Shared fixtures for the dataset loader tests: real data loaded once per session."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from factscout.datasets import Dataset, data_root, load_dataset
from factscout.errors import DataNotFound


@pytest.fixture(scope="session")
def loaded() -> Callable[..., Dataset]:
    """``loaded(name, split=None)``: a dataset from the shared data folder, read once per session."""
    try:
        data_root()
    except DataNotFound as exc:
        pytest.skip(f"real data not available: {exc}")
    cache: dict[tuple[str, str | None], Dataset] = {}

    def get(name: str, split: str | None = None) -> Dataset:
        if (name, split) not in cache:
            cache[(name, split)] = load_dataset(name, split)
        return cache[(name, split)]

    return get
