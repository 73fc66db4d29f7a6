"""docs/design.md's worked example runs as written: the new selector file registers one name, and
the pipeline's lookup, the check settings and the selector contract accept it."""

from __future__ import annotations

import re
import types
from pathlib import Path

import pytest

from factscout.check import CheckSettings
from factscout.records import Claim, Passage
from factscout.select import SELECTORS, Selector, make_selector

DESIGN = Path(__file__).resolve().parents[1] / "docs" / "design.md"


@pytest.fixture
def overlap_module():
    text = DESIGN.read_text()
    section = text[text.index("## Worked example") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    module = types.ModuleType("factscout.select.overlap")
    exec(compile(code, str(DESIGN), "exec"), module.__dict__)
    yield module
    SELECTORS._items.pop("overlap", None)  # the example registered it for this test only


def test_the_worked_example_selector_is_one_file_and_works(overlap_module):
    assert "overlap" in SELECTORS
    selector = make_selector("overlap", min_shared=2)
    assert isinstance(selector, Selector)
    claim = Claim("c1", "Vitamin D reduces falls in older adults")
    passage = Passage("p1", "d1", "", "Bees dance. Vitamin D reduces falls in older adults. Rain falls.")
    assert [(s.index, s.text) for s in selector.select_passage(claim, passage)] == [
        (1, "Vitamin D reduces falls in older adults.")
    ]
    assert CheckSettings(selector="overlap").selector == "overlap"
