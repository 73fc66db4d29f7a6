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


# -- markers applied by where a test runs or what it needs (`make test-fast` deselects them) ----------

import inspect  # noqa: E402  (this section is appended; its imports stay with it)
import re  # noqa: E402

TESTS = Path(__file__).resolve().parent

_FULL_DATASET_CALL = re.compile(r"""\b(?:loaded|load_dataset)\(\s*["']([a-z0-9_]+)["'](?P<rest>[^)]*)\)""")
_HELPER_CALL = re.compile(r"\b(_?[a-z][a-z0-9_]*)\(")


def _full_dataset_names() -> set[str]:
    from factscout.datasets import DATASETS

    return {name for name in DATASETS.names() if not name.endswith("_mini")}


def _source(obj: object) -> str:
    try:
        return inspect.getsource(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _sources(item: pytest.Item) -> tuple[list[str], list[str]]:
    """The source of a test and of the helpers of its own module it calls, and the sources of the
    ``tests/`` fixtures it requests (directly or through other fixtures)."""
    function = getattr(item, "function", None)
    if function is None:
        return [], []
    own = [_source(function)]
    module = getattr(item, "module", None)
    for name in set(_HELPER_CALL.findall(own[0])):
        helper = getattr(module, name, None)
        if inspect.isfunction(helper) and helper.__module__ == getattr(module, "__name__", None):
            own.append(_source(helper))
    fixtures = []
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    for defs in fixtureinfo.name2fixturedefs.values() if fixtureinfo else ():
        for fixturedef in defs:
            code = getattr(fixturedef.func, "__code__", None)
            if code is not None and Path(code.co_filename).resolve().is_relative_to(TESTS):
                fixtures.append(_source(fixturedef.func))
    return own, fixtures


def _reads_full_dataset(own: list[str], fixtures: list[str], full: set[str]) -> bool:
    """True when the test, a helper of its own module it calls or a tests/ fixture it requests loads a
    full dataset from the shared data folder (the ``*_mini`` fixtures are small and stay fast)."""
    for text in own:
        if "data_root()" in text and not any(word in text for word in ("FACTSCOUT_DATA", "root=", '"fixtures"')):
            return True
    for text in own + fixtures:
        for match in _FULL_DATASET_CALL.finditer(text):
            if match.group(1) in full and "root=" not in match.group("rest"):
                return True
    return False


# what runs the real MiniLM sentence encoder: a Checker (selection and stance embed sentences), the demo,
# a dense or hybrid index, an encoder or a MiniLM-state rewrite policy built directly
_ENCODER_FIXTURES = {"checker"}
_ENCODER_CALL = re.compile(
    r"""\bChecker(?:\.from_index)?\(|["']check["']|run_demo\(|["']demo["']|\bEncoder\(\)|FINETUNED_ENCODER|"""
    r"""build_(?:index|retriever)\([^)]*["'](?:dense|hybrid)["']|--policy["'], ["']averitec-bm25-classifier"""
)


def _runs_the_encoder(item: pytest.Item, own: list[str], fixtures: list[str]) -> bool:
    params = getattr(getattr(item, "callspec", None), "params", {})
    if any(isinstance(v, str) and v.startswith(("dense", "hybrid")) for v in params.values()):
        return True
    if _ENCODER_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    return any(_ENCODER_CALL.search(text) for text in own + fixtures)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark tests by what they need, so no test file carries these markers by hand:
    ``browser`` (Chromium: tests/service/test_browser.py), ``postgres`` (a live server: the ``pg_server``
    fixture or a ``pg-*`` backend parameter), ``ray`` (the two-node cluster fixture), ``dataset`` (a full
    dataset from the shared data folder) and ``encoder`` (runs the real MiniLM sentence encoder)."""
    full = _full_dataset_names()
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        path = Path(str(item.path))
        if path.name == "test_browser.py" or "browser" in names:
            item.add_marker(pytest.mark.browser)
        params = getattr(getattr(item, "callspec", None), "params", {})
        if (
            "pg_server" in names
            or path.name == "test_postgres.py"
            or any(isinstance(v, str) and v.startswith("pg-") for v in params.values())
        ):
            item.add_marker(pytest.mark.postgres)
        if "ray_cluster" in names and not item.get_closest_marker("ray"):
            item.add_marker(pytest.mark.ray)
        own, fixtures = _sources(item)
        if _reads_full_dataset(own, fixtures, full):
            item.add_marker(pytest.mark.dataset)
        if _runs_the_encoder(item, own, fixtures):
            item.add_marker(pytest.mark.encoder)
