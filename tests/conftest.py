import datetime as dt
import os
import sys
from pathlib import Path

import pytest

from factscout.records import Passage

sys.path.insert(0, str(Path(__file__).parent))  # the shared test helpers: `import helpers`


@pytest.fixture(scope="session", autouse=True)
def _isolated_cache(tmp_path_factory):
    """Embeddings computed by tests go to a per-session folder, never the user's cache."""
    os.environ["FACTSCOUT_CACHE"] = str(tmp_path_factory.mktemp("cache"))
    os.environ["HF_HUB_OFFLINE"] = "1"
    yield


def data_path(*parts: str) -> Path:
    from factscout.datasets.base import data_root

    return data_root().joinpath(*parts)


D = dt.date
# A tiny dated corpus: every passage mentions "report", five mention vaccines.
TINY = [
    Passage(
        "p01", "d01", "Vaccine trial", "A vaccine trial report shows 95% efficacy against the virus.", D(2020, 11, 9)
    ),
    Passage(
        "p02", "d02", "Vaccine safety", "Report: vaccine safety monitoring found rare side effects.", D(2021, 1, 15)
    ),
    Passage("p03", "d03", "Vaccine doses", "Report on vaccine doses delivered in the spring.", D(2021, 4, 1)),
    Passage("p04", "d04", "Vaccine myths", "A fact-check report debunks vaccine microchip myths.", D(2021, 6, 30)),
    Passage("p05", "d05", "Vaccine uptake", "Vaccine uptake report for older adults.", None),
    Passage("p06", "d06", "Budget", "The budget report shows a deficit of 3 billion.", D(2019, 3, 1)),
    Passage("p07", "d07", "Jobs", "Jobs report: unemployment fell to 4 percent.", D(2019, 6, 7)),
    Passage("p08", "d08", "Climate", "Climate report warns of rising sea levels.", D(2018, 10, 8)),
    Passage("p09", "d09", "Elections", "Election turnout report for the 2020 vote.", D(2020, 11, 20)),
    Passage("p10", "d10", "Football", "Match report: the home team won 2-1.", None),
    Passage("p11", "d11", "Housing", "Housing prices report shows a 10% rise.", D(2021, 1, 15)),
    Passage("p12", "d12", "Schools", "Report on school reopening plans.", D(2020, 8, 1)),
]


@pytest.fixture(scope="session")
def tiny_corpus() -> list[Passage]:
    return list(TINY)
