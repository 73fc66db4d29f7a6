"""MultiFC loaders against the real data (Augenstein et al. 2019; Allein et al. 2023 copy)."""

from __future__ import annotations

import datetime as dt
import gzip
import json

import pytest

from factscout.datasets import multifc
from factscout.datasets.base import data_root


@pytest.mark.slow
def test_dev_claims_are_dated_and_have_their_snippets(loaded):
    ds = loaded("multifc", "dev")
    assert len(ds.claims) == 1952  # 1,953 rows; vees-00410 has an empty claim text
    assert len(ds.skipped) == 1 and "vees-00410" in ds.skipped[0]
    assert sum(1 for c in ds.claims if c.date) == 1927
    assert len(ds.corpus) == 17825
    assert ds.qrels == {}
    assert len({p.passage_id for p in ds.corpus}) == len(ds.corpus)
    passage_ids = [pid for c in ds.claims for pid in c.meta["snippet_ids"]]
    assert sorted(passage_ids) == sorted(p.passage_id for p in ds.corpus)
    assert sum(1 for c in ds.claims if c.meta["snippet_ids"]) == 1935


@pytest.mark.slow
def test_snippets_are_dated_exactly_where_the_file_has_a_date(loaded):
    ds = loaded("multifc", "dev")
    wanted = {c.claim_id for c in ds.claims}
    expected = {}
    with gzip.open(data_root() / "multifc" / "snippets.jsonl.gz", "rt", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if row["claimID"] in wanted:
                expected.setdefault(f"{row['claimID']}:{row['rank']}", row["snippet_date_iso"])
    by_id = {p.passage_id: p for p in ds.corpus}
    assert set(expected) == set(by_id)
    for pid, iso in expected.items():
        published = by_id[pid].published
        assert (published.isoformat() if published else None) == iso
    assert sum(1 for p in ds.corpus if p.published) == 11850


@pytest.mark.slow
def test_train_drops_repeated_rows_and_renames_repeated_ranks(loaded):
    ds = loaded("multifc", "train")
    assert len(ds.claims) == 15627  # 15,631 rows: 3 exact repeats, 1 empty claim
    assert len(ds.skipped) == 4
    assert sum("identical row" in s for s in ds.skipped) == 3
    ids = {p.passage_id for p in ds.corpus}
    assert {"afck-00121:2", "afck-00121:2.1"} <= ids  # rank 2 appears twice in the snippets file
    assert len(ids) == len(ds.corpus) == 141888


def test_claim_metadata(loaded):
    claim = next(c for c in loaded("multifc_mini").claims if c.claim_id == "abbc-00114")
    assert claim.date == dt.date(2018, 9, 6)
    assert claim.meta["label"] == "in-the-green"
    assert claim.meta["domain"] == "abbc"
    assert claim.meta["categories"] == ["crime", "crime-prevention", "immigration", "vic"]
    assert claim.meta["publish_date"] == "Thu 6 Sep 2018, 7:11am"
    assert "speaker" not in claim.meta  # "None" in the data
    assert claim.meta["snippet_ids"][0] == "abbc-00114:2"


def test_mini_fixture(loaded):
    ds = loaded("multifc_mini")
    assert (ds.split, len(ds.claims), len(ds.corpus)) == ("dev", 40, 377)
    assert all(c.date is not None for c in ds.claims)
    for claim in ds.claims:
        dated = [
            pid for pid in claim.meta["snippet_ids"] if next(p for p in ds.corpus if p.passage_id == pid).published
        ]
        assert len(dated) >= 5
    passage = next(p for p in ds.corpus if p.passage_id == "abbc-00114:2")
    assert passage.doc_id == "abbc-00114:2"
    assert passage.published == dt.date(2018, 1, 5)
    assert passage.url.startswith("https://www.theguardian.com/")


def test_list_fields():
    assert multifc._list("['a', 'b']") == ["a", "b"]
    assert multifc._list("Fact check,Marawi city crisis") == ["Fact check", "Marawi city crisis"]
    assert multifc._list("None") == multifc._list("['None']") == []


def test_build_from_source(tmp_path):
    pytest.importorskip("dateutil")
    src = tmp_path / "src"
    (src / "dev").mkdir(parents=True)
    (src / "snippets").mkdir()
    row = ["abcd-00001", "The claim.", "false", "http://u", "r", "['x']", "None", "None", "None", "T",
           "Thu 3 Mar 2016, 6:04am", "None", "['None']"]  # fmt: skip
    (src / "dev" / "dev-abcd.tsv").write_text("\t".join(row) + "\n", encoding="utf-8")
    (src / "dev" / "dev-1000.tsv").write_text("\t".join(row) + "\n", encoding="utf-8")  # not a domain file
    (src / "snippets" / "abcd-00001").write_text(
        "1\tA title\tSep 4, 2018 ... some text\thttp://a\n2\tB\tno date here\thttp://b\n", encoding="utf-8"
    )
    multifc.build_from_source(src, tmp_path / "multifc")
    ds = multifc.load("dev", root=tmp_path)
    assert [(c.claim_id, c.date) for c in ds.claims] == [("abcd-00001", dt.date(2016, 3, 3))]
    assert [(p.passage_id, p.published) for p in ds.corpus] == [
        ("abcd-00001:1", dt.date(2018, 9, 4)),
        ("abcd-00001:2", None),
    ]


def test_load_file_reads_any_claims_file_with_its_snippets():
    from factscout.datasets import load_dataset
    from factscout.datasets.base import data_root
    from factscout.datasets.multifc import load_file

    folder = data_root() / "fixtures" / "multifc_mini"
    ds = load_file(folder / "claims.jsonl", folder / "snippets.jsonl", split="test")
    mini = load_dataset("multifc_mini", "dev")
    assert ds.split == "test"
    assert [c.claim_id for c in ds.claims] == [c.claim_id for c in mini.claims]
    assert ds.corpus == mini.corpus
