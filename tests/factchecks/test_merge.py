import datetime as dt

from factscout.factchecks import FactCheck, merge_duplicates


def test_the_same_check_in_two_sources_is_one_record_keeping_both():
    a = FactCheck("vclaim-sno-x", "A shark swims on a Houston highway.", "snopes.com", date=dt.date(2017, 8, 28),
                  title="Shark?", sources=("checkthat2022",), licenses=("lab terms",))  # fmt: skip
    b = FactCheck("snes-1", "A SHARK swims on a Houston highway!", "snopes.com", "false", "refuted",
                  "https://www.snopes.com/fact-check/shark/", sources=("multifc",), licenses=("none stated",))  # fmt: skip
    (merged,) = merge_duplicates([a, b])
    assert merged.fact_check_id == "vclaim-sno-x"
    assert (merged.verdict, merged.normalised_verdict, merged.url) == ("false", "refuted", b.url)
    assert merged.date == dt.date(2017, 8, 28) and merged.title == "Shark?"
    assert merged.sources == ("checkthat2022", "multifc") and merged.licenses == ("lab terms", "none stated")


def test_same_url_merges_across_publishers_spelling_and_archives():
    a = FactCheck("a", "Claim one.", "politifact.com", url="https://www.politifact.com/factchecks/2020/apr/09/x/",
                  sources=("averitec",), licenses=("CC BY-NC 4.0",))  # fmt: skip
    b = FactCheck("b", "Claim 1 worded otherwise.", "politifact.com",
                  url="https://web.archive.org/web/2021/http://politifact.com/factchecks/2020/apr/09/x",
                  sources=("claimdecomp",), licenses=("none",))  # fmt: skip
    assert [r.fact_check_id for r in merge_duplicates([a, b])] == ["a"]


def test_other_publishers_and_one_sources_own_near_duplicates_stay_apart():
    a = FactCheck("a", "The moon is made of cheese.", "snopes.com", sources=("multifc",), licenses=("x",))
    b = FactCheck("b", "The moon is made of cheese.", "politifact.com", sources=("multifc",), licenses=("x",))
    c = FactCheck("c", "The moon is made of cheese!", "snopes.com", sources=("multifc",), licenses=("x",))
    assert [r.fact_check_id for r in merge_duplicates([a, b, c])] == ["a", "b", "c"]
