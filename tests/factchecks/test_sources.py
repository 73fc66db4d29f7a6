"""Each loader on the real files: counts, dates, verdicts, licences."""

import collections
import datetime as dt

import pytest

from factscout.datasets.base import data_root
from factscout.factchecks import load_source, merge_duplicates
from factscout.factchecks.sources import publisher_of, url_date

pytestmark = pytest.mark.slow  # reads every source in full (about 5 s)


@pytest.fixture(scope="module")
def loaded():
    root = data_root()
    return {name: load_source(name, root) for name in ("checkthat2022", "multifc", "averitec", "claimdecomp")}


def test_checkthat_gives_every_snopes_verified_claim_under_its_lab_id(loaded):
    records = loaded["checkthat2022"]
    assert len(records) == 14231 and len({r.fact_check_id for r in records}) == 14231
    assert all(r.fact_check_id.startswith("vclaim-sno-") and r.publisher == "snopes.com" for r in records)
    assert sum(r.date is not None for r in records) == 14231 - 290
    # the file publishes no rating: said so, not guessed
    assert {(r.verdict, r.normalised_verdict) for r in records} == {("", "unknown")}
    assert "CC BY-SA 3.0 DE" in records[0].licenses[0]


def test_multifc_keeps_26_sites_labels_dates_and_urls(loaded):
    records = loaded["multifc"]
    assert len(records) == 17579  # of 17,584 rows: the loader skips empty claim texts and repeated ids
    assert (
        len({r.fact_check_id.split("-")[0] for r in records}) == 25
    )  # the 26 sites less PolitiFact (not in this copy)
    assert sum(r.url is not None for r in records) == len(records)
    assert collections.Counter(r.publisher for r in records)["snopes.com"] > 5000
    assert sum(r.date is not None for r in records) > 17000
    verdicts = collections.Counter(r.normalised_verdict for r in records)
    assert verdicts["refuted"] > verdicts["supported"] > verdicts["mixed"] > 1000
    assert records[0].licenses == ("none stated (research use); snippets are Google search results",)


def test_averitec_and_claimdecomp_carry_their_verdicts_and_licences(loaded):
    averitec, claimdecomp = loaded["averitec"], loaded["claimdecomp"]
    assert len(averitec) == 3068 - 1 and len(claimdecomp) == 200
    assert collections.Counter(r.verdict for r in averitec)["Refuted"] == 1742
    assert {r.licenses for r in averitec} == {("CC BY-NC 4.0",)}
    assert {r.publisher for r in claimdecomp} == {"politifact.com"}
    assert all(r.date is not None for r in claimdecomp)
    assert {r.normalised_verdict for r in claimdecomp} == {"supported", "refuted", "mixed"}


def test_all_sources_merge_their_duplicates(loaded):
    everything = [r for records in loaded.values() for r in records]
    merged = merge_duplicates(everything)
    assert len(merged) < len(everything) - 5000
    both = [r for r in merged if r.sources == ("checkthat2022", "multifc")]
    assert len(both) > 5000 and all(r.fact_check_id.startswith("vclaim-sno-") for r in both)
    assert sum(r.normalised_verdict != "unknown" for r in both) > 4000


def test_publisher_and_date_come_from_the_url():
    url = "https://web.archive.org/web/20210111003633/https://www.politifact.com/article/2020/aug/26/x/"
    assert publisher_of(url) == "politifact.com" and url_date(url) == dt.date(2020, 8, 26)
    assert url_date("https://www.snopes.com/fact-check/x/") is None
