"""``factscout data list`` / ``data download``, against a loopback HTTP server serving a small archive."""

from __future__ import annotations

import dataclasses
import hashlib
import http.server
import io
import json
import socket
import tarfile
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from factscout.cli.main import app
from factscout.datasets import load_dataset, scifact
from factscout.datasets.download import ChecksumMismatch, NetworkUnreachable, fetch_checked

runner = CliRunner()


def _archive() -> bytes:
    claims = json.dumps({"id": 3, "claim": "C.", "evidence": {}, "cited_doc_ids": [7]}) + "\n"
    corpus = json.dumps({"doc_id": 7, "title": "T", "abstract": ["A.", "B."]}) + "\n"
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, text in {"data/claims_train.jsonl": claims, "data/corpus.jsonl": corpus}.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


ARCHIVE = _archive()
ARCHIVE_SHA = hashlib.sha256(ARCHIVE).hexdigest()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path != "/release/data.tar.gz":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(ARCHIVE)))
            self.end_headers()
            self.wfile.write(ARCHIVE)

        def log_message(self, *args: object) -> None:
            pass

    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.fixture
def loopback_scifact(server: str, monkeypatch: pytest.MonkeyPatch) -> str:
    url = f"{server}/release/data.tar.gz"
    monkeypatch.setattr(scifact, "SOURCE", dataclasses.replace(scifact.SOURCE, url=url))
    return url


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_download_fetches_checks_and_unpacks(tmp_path: Path, loopback_scifact: str) -> None:
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    assert f"{loopback_scifact}\tsha256 {ARCHIVE_SHA}\t(no known checksum; computed)" in result.output
    assert "no checksum is known" in result.output
    assert sorted(p.name for p in (tmp_path / "scifact").iterdir()) == ["claims_train.jsonl", "corpus.jsonl"]
    assert load_dataset("scifact", "train", root=tmp_path).qrels == {"3": {"7": 1}}
    recorded = json.loads((tmp_path / "DOWNLOADS.sha256.json").read_text())
    assert recorded == {loopback_scifact: ARCHIVE_SHA}


def test_download_with_the_right_checksum_is_verified(tmp_path: Path, loopback_scifact: str) -> None:
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(tmp_path), "--sha256", ARCHIVE_SHA])
    assert result.exit_code == 0, result.output
    assert "(verified)" in result.output
    assert "no checksum is known" not in result.output


def test_wrong_checksum_is_refused_and_leaves_nothing(tmp_path: Path, loopback_scifact: str) -> None:
    root = tmp_path / "root"
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(root), "--sha256", "0" * 64])
    assert result.exit_code == 2
    assert "refused" in result.output and ARCHIVE_SHA in result.output
    assert not root.exists()


def test_wrong_checksum_in_an_existing_root_leaves_it_as_it_was(tmp_path: Path, loopback_scifact: str) -> None:
    (tmp_path / "keep.txt").write_text("x")
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(tmp_path), "--sha256", "f" * 64])
    assert result.exit_code == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_fetch_checked_refuses_a_mismatch_without_a_temporary_file(tmp_path: Path, loopback_scifact: str) -> None:
    with pytest.raises(ChecksumMismatch, match=r"expected 0{64}"):
        fetch_checked(loopback_scifact, tmp_path / "a.tar.gz", sha256="0" * 64)
    assert list(tmp_path.iterdir()) == []


def test_unreachable_url_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    url = f"http://127.0.0.1:{_closed_port()}/data.tar.gz"
    monkeypatch.setattr(scifact, "SOURCE", dataclasses.replace(scifact.SOURCE, url=url))
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(tmp_path / "root")])
    assert result.exit_code == 2
    assert url in result.output and "network is unreachable" in result.output
    assert not (tmp_path / "root").exists()
    with pytest.raises(NetworkUnreachable, match="network is unreachable"):
        fetch_checked(url, tmp_path / "x")


def test_http_error_names_the_status(tmp_path: Path, server: str) -> None:
    with pytest.raises(NetworkUnreachable, match="HTTP 404"):
        fetch_checked(f"{server}/missing", tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


def test_bad_checksum_text_and_fixture_names_are_refused(tmp_path: Path) -> None:
    result = runner.invoke(app, ["data", "download", "scifact", "--dir", str(tmp_path), "--sha256", "abc"])
    assert result.exit_code == 2 and "64 hex digits" in result.output
    result = runner.invoke(app, ["data", "download", "scifact_mini", "--dir", str(tmp_path)])
    assert result.exit_code == 2 and "download 'scifact' instead" in result.output
    result = runner.invoke(app, ["data", "download", "nope", "--dir", str(tmp_path)])
    assert result.exit_code == 2 and "no dataset 'nope'; known:" in result.output


def test_list_shows_every_dataset_with_source_licence_and_presence(tmp_path: Path) -> None:
    (tmp_path / "hover").mkdir()
    result = runner.invoke(app, ["data", "list", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    rows = {line.split("\t")[0]: line.split("\t") for line in result.output.splitlines()[1:]}
    assert set(rows) >= {"scifact", "averitec", "checkthat2022", "claimdecomp", "covidfact", "hover", "multifc"}
    assert rows["hover"][1] == "present" and rows["scifact"][1] == "missing"
    assert rows["scifact"][3] == "https://scifact.s3-us-west-2.amazonaws.com/release/latest/data.tar.gz"
    assert all(row[2] and row[3].startswith("https://") for row in rows.values())


def test_averitec_known_checksum_is_the_pinned_train_file() -> None:
    from factscout.datasets import averitec
    from factscout.datasets.catalogue import known_checksums

    assert known_checksums("averitec") == {averitec.SOURCE.url: averitec.SHA256[averitec.SOURCE.url]}
    assert known_checksums("scifact") == {}


def test_averitec_known_checksum_matches_the_shared_copy() -> None:
    from factscout.datasets import averitec
    from factscout.datasets.base import data_root
    from factscout.errors import DataNotFound
    from factscout.hashing import file_sha256

    try:
        path = data_root() / "averitec" / "train.json"
    except DataNotFound:
        pytest.skip("no data folder")
    if not path.is_file():
        pytest.skip("averitec/train.json is not in the data folder")
    assert file_sha256(path) == averitec.SHA256[averitec.SOURCE.url]


def test_pseudo_claims_writes_beir_files_whose_claims_are_cut_out_of_the_training_copy(tmp_path):
    from factscout.formats.beir import read_claims, read_corpus, write_corpus
    from factscout.formats.trec import read_qrels
    from factscout.records import Passage

    topics = ["vitamin D", "aspirin", "statins", "metformin", "zinc", "coffee"]
    corpus = [
        Passage(
            f"p{i}",
            f"p{i}",
            f"Study {i}",
            f"Daily {t} intake lowers the risk of heart failure in adults over sixty years old. "
            f"Patients taking {t} reported fewer hospital visits than the control group did in cohort {i}.",
        )
        for i, t in enumerate(topics)
    ]
    source = tmp_path / "corpus.jsonl"
    write_corpus(source, corpus)
    out = tmp_path / "ict"
    result = runner.invoke(app, ["data", "pseudo-claims", "-i", str(source), "--n", "4", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 pseudo-claims (6 of 6 passages eligible" in result.output
    claims = list(read_claims(out / "queries.jsonl"))
    qrels = read_qrels(out / "qrels" / "train.tsv")
    training = {p.passage_id: p for p in read_corpus(out / "corpus.jsonl")}
    assert len(claims) == 4 and len(training) == 6
    original = {p.passage_id: p.text for p in corpus}
    for claim in claims:
        (pid,) = qrels[claim.claim_id]
        assert claim.claim_id == f"ict:{pid}" and claim.text in original[pid]
        assert claim.text not in training[pid].text and training[pid].text.strip()
    # an existing output is never overwritten; the two inputs exclude each other
    again = runner.invoke(app, ["data", "pseudo-claims", "-i", str(source), "--n", "4", "--out", str(out)])
    assert again.exit_code != 0 and "already holds corpus.jsonl" in again.output
    both = runner.invoke(
        app,
        ["data", "pseudo-claims", "-i", str(source), "--dataset", "scifact", "--n", "1", "--out", str(tmp_path / "x")],
    )
    assert both.exit_code != 0 and "exactly one of" in both.output
