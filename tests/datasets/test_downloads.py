"""download(dest) code paths, run offline: ``fetch`` is replaced by a copy of a local file."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
import zipfile
from pathlib import Path

import pytest

from factscout.datasets import base, checkthat, claimdecomp, hover, load_dataset, quantemp, scifact


def _serve(monkeypatch, module, files: dict[str, Path], requested: list[str]) -> None:
    """Make ``module.fetch`` (and the shared ``fetch_all``) copy local files instead of downloading."""

    def fake_fetch(url: str, dest: Path, **_: object) -> Path:
        requested.append(url)
        dest.parent.mkdir(parents=True, exist_ok=True)
        source = files.get(url)
        if source is None:
            dest.write_text("{}", encoding="utf-8")
        else:
            shutil.copy(source, dest)
        return dest

    monkeypatch.setattr(base, "fetch", fake_fetch)
    if hasattr(module, "fetch"):
        monkeypatch.setattr(module, "fetch", fake_fetch)


def _tar(path: Path, members: dict[str, str]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in members.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def test_scifact_download_unpacks_the_release(tmp_path, monkeypatch):
    claims = json.dumps({"id": 3, "claim": "C.", "evidence": {}, "cited_doc_ids": [7]}) + "\n"
    corpus = json.dumps({"doc_id": 7, "title": "T", "abstract": ["A.", "B."]}) + "\n"
    archive = _tar(tmp_path / "data.tar.gz", {"data/claims_train.jsonl": claims, "data/corpus.jsonl": corpus})
    requested: list[str] = []
    _serve(monkeypatch, scifact, {scifact.SOURCE.url: archive}, requested)
    folder = scifact.download(tmp_path / "root")
    assert requested == ["https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz"]
    assert sorted(p.name for p in folder.iterdir()) == ["claims_train.jsonl", "corpus.jsonl"]
    ds = load_dataset("scifact", "train", root=tmp_path / "root")
    assert ds.qrels == {"3": {"7": 1}}


def test_checkthat_download_lays_out_the_task_files(tmp_path, monkeypatch):
    archive = tmp_path / "source.zip"
    top = "CLEFCheckThat2aSimBa-sha/data"
    with zipfile.ZipFile(archive, "w") as z:
        for split, (queries, qrels) in checkthat.FILES.items():
            z.writestr(f"{top}/original_twitter_data/x/{queries}", f"tweet-{split}\tA tweet.\n")
            z.writestr(f"{top}/original_twitter_data/x/{qrels}", f"tweet-{split}\t0\tvc-1\t1\n")
        z.writestr(f"{top}/vclaims/vc-1.json", json.dumps({"vclaim_id": "vc-1", "vclaim": "V.", "date": "1 May 2020"}))
    requested: list[str] = []
    _serve(monkeypatch, checkthat, {checkthat.SOURCE.url: archive}, requested)
    checkthat.download(tmp_path / "root")
    assert requested == [
        "https://github.com/Alihoe/CLEFCheckThat2aSimBa/archive/5d6917807a5a472e9f7c7867b09204899b08d721.zip"
    ]
    ds = load_dataset("checkthat2022", "dev-test", root=tmp_path / "root")
    assert ds.qrels == {"tweet-dev-test": {"vc-1": 1}}
    assert ds.corpus[0].published.isoformat() == "2020-05-01"


@pytest.mark.parametrize(
    ("module", "urls"),
    [
        (
            hover,
            [
                f"https://raw.githubusercontent.com/hover-nlp/hover/39b84697f196308f398a251a7aea9b82ae0f0562/"
                f"data/hover/hover_{s}_release_v1.1.json"
                for s in ("train", "dev", "test")
            ],
        ),
        (
            claimdecomp,
            [
                f"https://raw.githubusercontent.com/Jaswar/nlp-project/3d9a871b8e2d15244113ed48ea055090161c3e87/"
                f"ClaimDecomp/{s}.jsonl"
                for s in ("dev", "test")
            ],
        ),
        (
            quantemp,
            [
                "https://raw.githubusercontent.com/factiverse/QuanTemp/86278dbfac5fcbc1ce600052f9bcfc42aa75207a/" + path
                for path in (
                    "data/decomposed_questions/test/test_claimdecomp.csv",
                    "data/complex_num_facts_categorized_subset.csv",
                )
            ],
        ),
    ],
)
def test_plain_file_downloads_fetch_the_public_files(tmp_path, monkeypatch, module, urls):
    requested: list[str] = []
    _serve(monkeypatch, module, {}, requested)
    folder = module.download(tmp_path)
    assert requested == urls
    assert folder == tmp_path / module.FOLDER
    assert len(list(folder.iterdir())) == len(urls)
