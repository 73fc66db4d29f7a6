"""The dataset registry, data-root lookup, the Dataset record and the shared readers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factscout.datasets import DATASETS, Dataset, data_root, load_dataset
from factscout.datasets import base as base_module
from factscout.datasets.base import fetch, read_delimited
from factscout.errors import DataNotFound, InputError, UnknownName
from factscout.records import Claim, Query

ALL_NAMES = [
    "anli",
    "averitec",
    "averitec_beir",
    "averitec_mini",
    "breaking_nli",
    "checkcovid",
    "checkthat2021_1a",
    "checkthat2021_1b",
    "checkthat2022",
    "checkthat2022_1a",
    "checkthat2022_1b",
    "citint",
    "claimbuster",
    "claimdecomp",
    "covidfact",
    "fever_symmetric",
    "healthver",
    "hover",
    "mnli",
    "multifc",
    "multifc_mini",
    "quantemp",
    "rte",
    "scifact",
    "scifact_mini",
    "sick",
    "snli",
    "snli_cf",
    "sufficient_facts",
    "wice",
]


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _tiny_scifact(root: Path) -> None:
    folder = root / "fixtures" / "scifact_mini"
    _write_jsonl(
        folder / "claims.jsonl",
        [
            {"id": 1, "claim": "Aspirin lowers fever.", "evidence": {"10": [{"sentences": [0], "label": "SUPPORT"}]},
             "cited_doc_ids": [10]},
            {"id": 2, "claim": "Aspirin cures colds.", "evidence": {}, "cited_doc_ids": [11]},
        ],
    )  # fmt: skip
    _write_jsonl(
        folder / "corpus.jsonl",
        [
            {"doc_id": 10, "title": "Aspirin", "abstract": ["Aspirin lowers fever.", "It is cheap."]},
            {"doc_id": 11, "title": "Colds", "abstract": ["Colds pass."]},
        ],
    )


def test_registry_knows_every_dataset():
    assert DATASETS.names() == ALL_NAMES


def test_unknown_dataset_lists_the_valid_names():
    with pytest.raises(UnknownName) as err:
        load_dataset("scifcat")
    message = str(err.value)
    assert "no dataset 'scifcat'" in message
    for name in ALL_NAMES:
        assert name in message


def test_bad_split_lists_the_valid_splits():
    with pytest.raises(
        InputError, match=r"dataset 'scifact' has no split 'validation'; valid splits: train, dev, test"
    ):
        load_dataset("scifact", "validation")
    with pytest.raises(InputError, match="dev-test"):
        load_dataset("checkthat2022", "test")


def test_default_split_is_used_when_none_given(tmp_path, monkeypatch):
    _tiny_scifact(tmp_path)
    monkeypatch.setenv("FACTSCOUT_DATA", str(tmp_path))
    assert load_dataset("scifact_mini").split == "train"
    assert DATASETS["hover"].default_split == "dev"
    assert DATASETS["quantemp"].splits == ("test", "taxonomy")


def test_factscout_data_overrides_the_data_root(tmp_path, monkeypatch):
    _tiny_scifact(tmp_path)
    monkeypatch.setenv("FACTSCOUT_DATA", str(tmp_path))
    assert data_root() == tmp_path
    ds = load_dataset("scifact_mini")
    assert [c.claim_id for c in ds.claims] == ["1", "2"]
    assert [p.passage_id for p in ds.corpus] == ["10", "11"]
    assert ds.corpus[0].text == "Aspirin lowers fever. It is cheap."
    assert ds.qrels == {"1": {"10": 1}, "2": {"11": 1}}
    assert [c.meta["label"] for c in ds.claims] == ["SUPPORT", "NEI"]


def test_explicit_root_wins_over_the_environment(tmp_path, monkeypatch):
    _tiny_scifact(tmp_path / "mine")
    monkeypatch.setenv("FACTSCOUT_DATA", str(tmp_path / "elsewhere-missing"))
    assert len(load_dataset("scifact_mini", root=tmp_path / "mine").claims) == 2


def test_factscout_data_pointing_nowhere_is_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("FACTSCOUT_DATA", str(tmp_path / "missing"))
    with pytest.raises(DataNotFound, match="FACTSCOUT_DATA"):
        data_root()


def test_no_data_folder_names_every_place_tried(tmp_path, monkeypatch):
    monkeypatch.delenv("FACTSCOUT_DATA", raising=False)
    places = [tmp_path / "a" / "shared" / "data", tmp_path / "b" / "shared" / "data"]
    monkeypatch.setattr(base_module, "_default_places", lambda: places)
    with pytest.raises(DataNotFound) as err:
        data_root()
    for place in places:
        assert str(place) in str(err.value)
    assert "FACTSCOUT_DATA" in str(err.value)


def test_missing_file_names_its_path(tmp_path):
    with pytest.raises(DataNotFound, match=str(tmp_path / "hover" / "hover_dev_release_v1.1.json")):
        load_dataset("hover", "dev", root=tmp_path)


def test_malformed_row_names_file_and_line(tmp_path):
    _tiny_scifact(tmp_path)
    claims = tmp_path / "fixtures" / "scifact_mini" / "claims.jsonl"
    claims.write_text(claims.read_text() + "{not json\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{claims}:3: malformed JSON"):
        load_dataset("scifact_mini", root=tmp_path)


def test_row_missing_a_field_names_file_and_line(tmp_path):
    _tiny_scifact(tmp_path)
    claims = tmp_path / "fixtures" / "scifact_mini" / "claims.jsonl"
    _write_jsonl(claims, [{"id": 1, "claim": "x", "evidence": {}, "cited_doc_ids": []}, {"claim": "no id"}])
    with pytest.raises(InputError, match=rf"{claims}:2: expected 'id' and 'claim'"):
        load_dataset("scifact_mini", root=tmp_path)


def test_dataset_queries_are_claim_only():
    claims = (Claim("c1", "The sky is green.", None), Claim("c2", "Water is dry."))
    ds = Dataset("toy", "test", claims)
    assert ds.queries() == [
        Query("c1", "c1", "The sky is green.", "claim"),
        Query("c2", "c2", "Water is dry.", "claim"),
    ]
    assert repr(ds) == "Dataset(name='toy', split='test', claims=2, corpus=0, qrels=0, skipped=0)"


def test_dataset_rejects_repeated_claim_ids():
    with pytest.raises(InputError, match="claim id 'c1' twice"):
        Dataset("toy", "test", (Claim("c1", "a"), Claim("c1", "b")))


def test_read_delimited_reports_the_starting_line_of_a_bad_record(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('claim@questions\nA@"Q1?\nNext Question: Q2?"\nB@x@y\n', encoding="utf-8")
    rows = read_delimited(path, "@", fields=2, header=True)
    assert next(rows) == (2, ["A", "Q1?\nNext Question: Q2?"])
    with pytest.raises(InputError, match=rf"{path}:4: expected 2 '@'-separated fields, got 3"):
        next(rows)


def test_fetch_writes_the_download_atomically(tmp_path):
    source = tmp_path / "remote.json"
    source.write_text('{"ok": true}', encoding="utf-8")
    dest = fetch(source.as_uri(), tmp_path / "out" / "local.json")
    assert dest.read_text(encoding="utf-8") == '{"ok": true}'
    assert sorted(p.name for p in dest.parent.iterdir()) == ["local.json"]


def test_failed_fetch_leaves_no_partial_file(tmp_path):
    with pytest.raises(OSError):
        fetch((tmp_path / "absent.json").as_uri(), tmp_path / "out" / "local.json")
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize("name", ALL_NAMES)
def test_every_dataset_names_its_source(name):
    import importlib

    module = importlib.import_module(DATASETS[name].read.__module__)
    source = module.SOURCE
    assert source.url.startswith("https://")
    assert source.license and source.citation
    assert callable(module.download)
