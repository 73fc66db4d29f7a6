"""A small served index: the scifact_mini abstracts plus a few dated passages, one of them hostile
(``<script>`` and ``<img onerror>`` in its title and text), and the fixture's qrels."""

from __future__ import annotations

import datetime as dt

import pytest

from factscout.check import Checker, CheckSettings
from factscout.datasets import load_dataset
from factscout.factchecks import FactCheck
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


# a fact-check memory for the "Checked before" section: the claim checked before it was made (shown), the
# same claim checked after it (shown only without the date filter), an unrelated one (never shown); the
# first one's title, publisher and url are hostile
HOSTILE_FC_TITLE = "Folate fact-check <img src=x onerror=\"window.__pwned = 'fc'\">"
HOSTILE_FC_PUBLISHER = "Example Checks <script>window.__pwned = 'publisher'</script>"
FOLATE_CLAIM = "A deficiency of folate increases blood levels of homocysteine."
FACTCHECKS = [
    FactCheck("fc-folate", FOLATE_CLAIM, HOSTILE_FC_PUBLISHER, verdict="True", normalised_verdict="supported",
              url="javascript:window.__pwned='fc-url'", date=dt.date(2014, 5, 1), title=HOSTILE_FC_TITLE,
              sources=("test",), licenses=("CC0",)),
    FactCheck("fc-folate-late", FOLATE_CLAIM, "Later Checks", verdict="Mostly true", normalised_verdict="supported",
              url="https://example.org/fc-late", date=dt.date(2017, 1, 1), sources=("test",), licenses=("CC0",)),
    FactCheck("fc-wall", "The Great Wall of China is visible from the Moon with the naked eye.", "Other Checks",
              verdict="False", normalised_verdict="refuted", date=dt.date(2010, 3, 3), sources=("test",),
              licenses=("CC0",)),
]  # fmt: skip


class _Cached:
    """The checker's encoder with the corpus-cache method a memory build calls."""

    def __init__(self, encoder):
        self.encoder = encoder

    def encode(self, texts):
        return self.encoder.encode(texts)

    def encode_cached(self, texts, **_):
        return self.encoder.encode(texts)


@pytest.fixture(scope="session")
def encoder():
    from factscout.text.onnx_encoder import OnnxEncoder

    # one ONNX thread, as `factscout serve` runs by default (faster when the cores are shared)
    return OnnxEncoder(threads=1)


@pytest.fixture(scope="session")
def factchecks_dir(encoder, tmp_path_factory):
    from factscout.factchecks import FactCheckMemory, MatchModel

    path = tmp_path_factory.mktemp("factchecks") / "memory"
    FactCheckMemory.build(FACTCHECKS, model=MatchModel.load(), encoder=_Cached(encoder)).save(path)
    return path


@pytest.fixture(scope="session")
def checker(served_index, factchecks_dir, encoder):
    settings = CheckSettings(planner="claim", passages=5, factchecks=str(factchecks_dir))
    return Checker.from_index(served_index, settings, encoder=encoder)
