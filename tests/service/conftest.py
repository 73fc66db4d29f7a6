"""A small served index: the scifact_mini abstracts plus a few dated passages, one of them hostile
(``<script>`` and ``<img onerror>`` in its title and text), and the fixture's qrels."""

from __future__ import annotations

import datetime as dt

import pytest

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.records import Passage
from factscout.retrieve import build_index

CLAIM_ID = "34"  # scifact_mini: "A deficiency of folate increases blood levels of homocysteine."
CLAIM_DATE = dt.date(2016, 6, 1)
HOSTILE_TITLE = "Folate and homocysteine <script>window.__pwned = 'title'</script>"
HOSTILE_SCRIPT = "<script>window.__pwned = 'text'; alert('xss')</script>"
HOSTILE_IMG = "<img src=x onerror=\"window.__pwned = 'img'; alert('img')\">"
HOSTILE = Passage(
    "hostile",
    "hostile-doc",
    HOSTILE_TITLE,
    f"Folate deficiency increases blood levels of homocysteine in adults. {HOSTILE_SCRIPT} "
    f"Low folate intake raised homocysteine in the trial {HOSTILE_IMG} of older adults.",
    dt.date(2015, 3, 2),
    "javascript:window.__pwned='url'",
)
EXTRA = [
    HOSTILE,
    Passage(
        "late-folate",
        "late-doc",
        "Homocysteine after folate deficiency, a later study",
        "A deficiency of folate increases blood levels of homocysteine, a 2018 cohort study found.",
        dt.date(2018, 9, 14),
        "https://example.org/late",
    ),
    Passage(
        "early-folate",
        "early-doc",
        "Folate status and plasma homocysteine",
        "Plasma homocysteine levels did not depend on folate status in this small sample of adults.",
        dt.date(2012, 1, 20),
    ),
]


@pytest.fixture(scope="session")
def mini():
    return load_dataset("scifact_mini")


@pytest.fixture(scope="session")
def served_index(mini, tmp_path_factory):
    path = tmp_path_factory.mktemp("serve") / "idx"
    build_index([*mini.corpus, *EXTRA], path, "bm25", show_progress=False)
    return path


@pytest.fixture(scope="session")
def checker(served_index):
    from factscout.text.onnx_encoder import OnnxEncoder

    # one ONNX thread, as `factscout serve` runs by default (faster when the cores are shared)
    return Checker.from_index(served_index, CheckSettings(planner="claim", passages=5), encoder=OnnxEncoder(threads=1))
