"""The shipped list of fact-checking sites and how URLs match it."""

from __future__ import annotations

import pytest

from factscout.collect.factcheck import FactCheckSites, shipped_entries
from factscout.errors import InputError


@pytest.fixture(scope="module")
def sites() -> FactCheckSites:
    return FactCheckSites.load()


def test_the_list_ships_with_the_package():
    entries = shipped_entries()
    assert {"politifact.com", "snopes.com", "factcheck.org", "fullfact.org", "reuters.com/fact-check"} <= set(entries)
    assert len(entries) == len(set(entries)) > 60


@pytest.mark.parametrize(
    ("url", "entry"),
    [
        ("https://www.snopes.com/fact-check/unemployment/", "snopes.com"),
        ("http://snopes.com/", "snopes.com"),
        ("https://www.politifact.com/factchecks/2019/jan/20/x/", "politifact.com"),
        ("https://factcheck.afp.com/http%3A%2F%2Fdoc.afp.com%2F123", "factcheck.afp.com"),
        ("https://www.reuters.com/fact-check/germany-renewables-idUSL1N2", "reuters.com/fact-check"),
        ("https://www.reuters.com/article/factcheck-germany-idUSL1N2", "reuters.com/article/factcheck"),
        ("https://apnews.com/article/fact-check-unemployment-123", "apnews.com/article/fact-check"),
        ("https://www.washingtonpost.com/news/fact-checker/wp/2019/05/10/x/", "washingtonpost.com/news/fact-checker"),
        ("https://mobile.abc.net.au/news/2015-10-28/fact-check-direct-action/6847234", "abc.net.au/news/*/fact-check*"),
    ],
)
def test_fact_check_pages_match(sites, url, entry):
    assert sites.match(url) == entry


@pytest.mark.parametrize(
    "url",
    [
        "https://www.reuters.com/world/europe/germany-renewables-2019-01-03/",
        "https://notsnopes.com/page",
        "https://snopes.com.evil.example/page",
        "https://apnews.com/article/unemployment-rate-falls",
        "https://www.abc.net.au/news/2015-10-28/direct-action-explained/6847234",
        "https://www.bls.gov/news.release/empsit.nr0.htm",
        "not a url",
    ],
)
def test_other_pages_do_not(sites, url):
    assert sites.match(url) is None


def test_extra_entries_and_validation():
    sites = FactCheckSites.load(["https://www.example.org/checks/"], shipped=False)
    assert len(sites) == 1
    assert sites.match("https://news.example.org/checks/a") == "example.org/checks"
    assert sites.match("https://example.org/news/a") is None
    for bad in ["", "localhost", "two words.org"]:
        with pytest.raises(InputError):
            FactCheckSites.load([bad], shipped=False)
