"""The content-addressed snapshot: storage, replay, misses, corruption, drift."""

from __future__ import annotations

import json

import pytest

from factscout.collect.snapshot import (
    Capture,
    CorruptSnapshot,
    Session,
    Snapshot,
    SnapshotMiss,
    compare_snapshots,
    request_key,
    sha256,
)
from factscout.errors import DataNotFound


def test_blobs_are_stored_once_by_content(tmp_path):
    snap = Snapshot(tmp_path)
    a = snap.put_blob(b"hello")
    assert a == sha256(b"hello") and snap.put_blob(b"hello") == a
    assert snap.blob_path(a) == tmp_path / "blobs" / a[:2] / a
    assert snap.get_blob(a) == b"hello"


def test_an_edited_blob_is_reported(tmp_path):
    snap = Snapshot(tmp_path)
    digest = snap.put_blob(b"original")
    snap.blob_path(digest).write_bytes(b"edited")
    with pytest.raises(CorruptSnapshot, match="does not match its sha256"):
        snap.get_blob(digest)


def test_request_keys_are_canonical():
    assert request_key("search", {"query": "q", "count": 10}) == request_key("search", {"count": 10, "query": "q"})
    assert request_key("search", {"query": "q"}) != request_key("page", {"query": "q"})


def test_manifest_round_trip_is_sorted_and_stable(tmp_path):
    snap = Snapshot(tmp_path / "s")
    snap.record("page", {"url": "https://b.example/"}, b"<html>b</html>", {"outcome": "ok", "status": 200})
    snap.record("search", {"provider": "brave", "query": "q"}, b"{}", {"outcome": "ok", "urls": []})
    snap.record(
        "page", {"url": "https://a.example/"}, None, {"outcome": "skipped", "reason": "robots.txt disallows it"}
    )
    first = snap.write_manifest().read_bytes()
    again = Snapshot.open(tmp_path / "s")
    assert again.write_manifest().read_bytes() == first
    kinds = [row["kind"] for row in json.loads(first)["entries"]]
    assert kinds == sorted(kinds)
    assert again.lookup("page", {"url": "https://a.example/"}).reason == "robots.txt disallows it"


def test_open_accepts_an_output_folder_and_names_what_is_missing(tmp_path):
    Snapshot(tmp_path / "out" / "snapshot").write_manifest()
    assert Snapshot.open(tmp_path / "out").root == tmp_path / "out" / "snapshot"
    with pytest.raises(DataNotFound, match="no snapshot"):
        Snapshot.open(tmp_path / "elsewhere")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(CorruptSnapshot):
        Snapshot.open(tmp_path / "bad")


def test_replay_never_fetches_and_misses_are_errors(tmp_path):
    live = Session(Snapshot(tmp_path / "live"))
    live.get("page", {"url": "https://a.example/"}, lambda: Capture(b"<html>a</html>", {"outcome": "ok"}))
    live.out.write_manifest()

    def no_fetch() -> Capture:
        raise AssertionError("a replay must not fetch")

    replay = Session(Snapshot(tmp_path / "replay"), Snapshot.open(tmp_path / "live"))
    entry, body = replay.get("page", {"url": "https://a.example/"}, no_fetch)
    assert body == b"<html>a</html>" and entry.outcome == "ok"
    replay.out.write_manifest()
    assert (tmp_path / "replay" / "manifest.json").read_bytes() == (tmp_path / "live" / "manifest.json").read_bytes()
    assert replay.out.get_blob(entry.blob) == body  # copied into the new snapshot
    with pytest.raises(SnapshotMiss, match=r"https://b\.example/"):
        replay.get("page", {"url": "https://b.example/"}, no_fetch)


def test_a_request_is_fetched_once_per_run(tmp_path):
    session = Session(Snapshot(tmp_path))
    calls: list[int] = []

    def fetch() -> Capture:
        calls.append(1)
        return Capture(b"answer", {"outcome": "ok"})

    first = session.get("search", {"query": "q"}, fetch)
    again = session.get("search", {"query": "q"}, fetch)
    assert first == again and calls == [1]


def _run(path, urls: list[str], pages: dict[str, bytes | None]) -> Snapshot:
    snap = Snapshot(path)
    snap.record("search", {"provider": "p", "query": "q"}, json.dumps(urls).encode(), {"outcome": "ok", "urls": urls})
    for url, body in pages.items():
        outcome = {"outcome": "ok"} if body is not None else {"outcome": "skipped", "reason": "HTTP 404"}
        snap.record("page", {"url": url}, body, outcome)
    snap.write_manifest()
    return snap


def test_drift_between_two_runs(tmp_path):
    old = _run(tmp_path / "old", ["u1", "u2", "u3"], {"u1": b"one", "u2": b"two", "u4": b"four"})
    new = _run(tmp_path / "new", ["u3", "u1", "u5"], {"u1": b"one v2", "u2": None, "u5": b"five"})
    drift = compare_snapshots(tmp_path / "old", new)
    (search,) = drift.searches
    assert search.added == ("u5",) and search.removed == ("u2",) and search.reordered
    assert drift.pages_changed == ("u1",)
    assert drift.outcomes_changed == (("u2", "ok", "skipped"),)
    assert [r["url"] for r in drift.only_old] == ["u4"] and [r["url"] for r in drift.only_new] == ["u5"]
    assert "1 of 1 searches returned other URLs (1 added, 1 removed; 1 reordered)" in drift.summary()
    assert json.loads(json.dumps(drift.to_dict()))["searches"][0]["added"] == ["u5"]
    assert compare_snapshots(old, old).unchanged
