"""Fuzzing the parsers (issue 19): date parsing, BM25 tokenising, sentence splitting, the edit
actions and the JSONL / BEIR / TREC readers may refuse an input only with a FactscoutError.

A bounded, derandomised number of inputs per target here (the same strategies as
``tools/fuzz.py``, which runs 10^5 per parser with a seed); the regressions of what the
fuzzer found are in ``test_regressions.py``.
"""

from __future__ import annotations

import importlib.util

import pytest
from hypothesis import HealthCheck, given, settings

from .targets import TARGETS, outcome

# inputs are cheap except spaCy parses (edit actions) and files on disk (readers)
EXAMPLES = {"edit actions": 40, "readers": 40}


@pytest.mark.parametrize("target", TARGETS, ids=[t.name for t in TARGETS])
def test_only_factscout_errors(target):
    if target.needs and importlib.util.find_spec(target.needs) is None:
        pytest.skip(f"needs {target.needs}")
    calls = 0

    @settings(
        max_examples=EXAMPLES.get(target.name, 150),
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(target.strategy)
    def run(value):
        nonlocal calls
        for parser, call in target.calls(value):
            calls += 1
            exc = outcome(call)
            if exc is not None:
                raise AssertionError(f"{parser} raised {type(exc).__name__}: {exc}") from exc

    run()
    assert calls >= 40
