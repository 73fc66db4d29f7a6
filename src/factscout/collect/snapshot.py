"""Frozen, replayable collection runs: every response stored by content hash, and a manifest.

A web collection cannot be rerun: search engines reorder, pages change or vanish. So every
response a run reads is kept in a *snapshot*:

``snapshot/blobs/ab/ab12...``
    the exact bytes of one response (a provider's JSON answer, a crawled page, a claim's plan),
    named by their sha256; identical bytes are stored once.
``snapshot/manifest.json``
    ``{"format": "factscout-snapshot/1", "entries": [...]}``, one entry per request, sorted by
    ``(kind, key)``: ``kind`` (``plan``, ``search``, ``page``), ``key`` (the sha256 of the
    canonical request), ``request`` (that request: the provider, query, result count and date
    limit, or the page URL; never an API key), ``blob`` (the sha256 of the response bytes, or
    null when there were none) and what was learned fetching it (HTTP status, content type, the
    final URL after redirects, the fetch time, ``outcome`` ``ok``/``skipped``/``error`` with a
    ``reason``, and for searches the result URLs in rank order).

A :class:`Session` sits between the pipeline and the network. Live, it runs the fetch and
records the entry; in replay it answers from an earlier snapshot and never calls the fetch, so a
replay makes no network call at all, and a request the snapshot lacks is an error
(:class:`SnapshotMiss`) rather than a silent live fetch. A replay writes the entries it used into
its own snapshot, so the same claims and settings give a byte-identical manifest (and, since
everything downstream is a deterministic function of these bytes, byte-identical corpus and
qrels).

:func:`compare_snapshots` reports the drift between two runs: per search request, the result
URLs added and removed; per page, changed content or a changed outcome.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import os
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from factscout.errors import DataNotFound, FactscoutError, InputError

FORMAT = "factscout-snapshot/1"
MANIFEST = "manifest.json"
BLOBS = "blobs"
KINDS = ("plan", "search", "page")


class SnapshotMiss(FactscoutError):
    """A replay asked for a request the snapshot does not hold."""


class CorruptSnapshot(FactscoutError):
    """A snapshot's manifest or a stored response does not match its hash or format."""


def utc_now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def stamp(when: dt.datetime) -> str:
    """A fetch time as recorded in entries: UTC, whole seconds, ``2026-11-22T10:04:05Z``."""
    if when.tzinfo is not None:
        when = when.astimezone(dt.timezone.utc)
    return when.replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(obj: Any) -> bytes:
    """The canonical JSON bytes of ``obj`` (sorted keys, no spaces): what keys are hashed from."""
    return json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def request_key(kind: str, request: Mapping[str, Any]) -> str:
    """The sha256 naming a request of ``kind`` (its canonical JSON)."""
    if kind not in KINDS:
        raise InputError(f"snapshot entry kind must be one of {', '.join(KINDS)}, got {kind!r}")
    return sha256(canonical({"kind": kind, "request": dict(request)}))


@dataclass(frozen=True)
class Entry:
    """One request in a snapshot and what came back (see the module docstring)."""

    kind: str
    key: str
    request: Mapping[str, Any]
    blob: str | None
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> str:
        return str(self.meta.get("outcome", "ok"))

    @property
    def reason(self) -> str:
        return str(self.meta.get("reason", ""))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "key": self.key, "request": dict(self.request), "blob": self.blob, **self.meta}

    @classmethod
    def from_dict(cls, row: Mapping[str, Any]) -> Entry:
        try:
            kind, key, request, blob = row["kind"], row["key"], row["request"], row.get("blob")
        except (KeyError, TypeError):
            raise CorruptSnapshot(f"snapshot entry lacks kind/key/request: {str(row)[:200]}") from None
        meta = {k: v for k, v in row.items() if k not in {"kind", "key", "request", "blob"}}
        return cls(str(kind), str(key), dict(request), blob, meta)


def snapshot_dir(path: str | os.PathLike[str]) -> Path:
    """The snapshot folder of ``path``: the folder itself when it holds a manifest, else
    ``path/snapshot`` (so a collect output folder can be named directly)."""
    p = Path(path)
    if (p / MANIFEST).is_file():
        return p
    if (p / "snapshot" / MANIFEST).is_file():
        return p / "snapshot"
    raise DataNotFound(f"no snapshot at {p}: expected {p / MANIFEST} or {p / 'snapshot' / MANIFEST}")


class Snapshot:
    """A content-addressed response store with a manifest of entries keyed by ``(kind, key)``."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.entries: dict[tuple[str, str], Entry] = {}

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> Snapshot:
        """Read an existing snapshot (a snapshot folder, or a collect output folder holding one)."""
        root = snapshot_dir(path)
        snap = cls(root)
        try:
            data = json.loads((root / MANIFEST).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CorruptSnapshot(f"{root / MANIFEST}: unreadable manifest ({exc})") from None
        if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), list):
            raise CorruptSnapshot(f"{root / MANIFEST}: not a {FORMAT} manifest")
        for row in data["entries"]:
            entry = Entry.from_dict(row)
            snap.entries[(entry.kind, entry.key)] = entry
        return snap

    def blob_path(self, digest: str) -> Path:
        return self.root / BLOBS / digest[:2] / digest

    def put_blob(self, data: bytes) -> str:
        digest = sha256(data)
        path = self.blob_path(digest)
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=".blob.", dir=path.parent)
            try:
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        return digest

    def get_blob(self, digest: str) -> bytes:
        path = self.blob_path(digest)
        try:
            data = path.read_bytes()
        except OSError:
            raise CorruptSnapshot(f"snapshot {self.root} lacks the stored response {digest}") from None
        if sha256(data) != digest:
            raise CorruptSnapshot(f"stored response {path} does not match its sha256 (edited or truncated)")
        return data

    def lookup(self, kind: str, request: Mapping[str, Any]) -> Entry | None:
        return self.entries.get((kind, request_key(kind, request)))

    def add(self, entry: Entry) -> None:
        self.entries[(entry.kind, entry.key)] = entry

    def record(self, kind: str, request: Mapping[str, Any], body: bytes | None, meta: Mapping[str, Any]) -> Entry:
        entry = Entry(
            kind,
            request_key(kind, request),
            dict(request),
            self.put_blob(body) if body is not None else None,
            dict(meta),
        )
        self.add(entry)
        return entry

    def write_manifest(self) -> Path:
        """Write the manifest (entries sorted by kind and key) atomically; returns its path."""
        rows = [self.entries[k].to_dict() for k in sorted(self.entries)]
        text = json.dumps({"format": FORMAT, "entries": rows}, sort_keys=True, ensure_ascii=False, indent=1) + "\n"
        self.root.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".manifest.", dir=self.root)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, self.root / MANIFEST)
        return self.root / MANIFEST


@dataclass(frozen=True)
class Capture:
    """What a live fetch returns to the session: the body (or None) and what to record about it."""

    body: bytes | None
    meta: Mapping[str, Any]


class Session:
    """Live: fetch and record into ``out``. Replay (``source`` given): answer from ``source``,
    copy what was used into ``out``, never fetch."""

    def __init__(self, out: Snapshot, source: Snapshot | None = None) -> None:
        self.out = out
        self.source = source

    @property
    def replaying(self) -> bool:
        return self.source is not None

    def lookup(self, kind: str, request: Mapping[str, Any]) -> tuple[Entry, bytes | None]:
        """The recorded entry for a request (replay only); :class:`SnapshotMiss` when absent."""
        if self.source is None:
            raise SnapshotMiss(f"not replaying: no snapshot to look up a {kind} entry in")
        entry = self.source.lookup(kind, request)
        if entry is None:
            shown = json.dumps(dict(request), ensure_ascii=False, sort_keys=True)
            raise SnapshotMiss(
                f"the snapshot {self.source.root} has no {kind} entry for {shown}; "
                "replay needs the same claims and settings as the recorded run (or run live)"
            )
        body = self.source.get_blob(entry.blob) if entry.blob else None
        if self.source.root != self.out.root and body is not None:
            self.out.put_blob(body)
        self.out.add(entry)
        return entry, body

    def record(self, kind: str, request: Mapping[str, Any], capture: Capture) -> tuple[Entry, bytes | None]:
        return self.out.record(kind, request, capture.body, capture.meta), capture.body

    def get(self, kind: str, request: Mapping[str, Any], fetch: Callable[[], Capture]) -> tuple[Entry, bytes | None]:
        """Replay the request from the source snapshot, or fetch it live and record it. A request
        made twice in one run (a sub-query equal to the claim) is answered once."""
        if self.replaying:
            return self.lookup(kind, request)
        done = self.out.lookup(kind, request)
        if done is not None:
            return done, self.out.get_blob(done.blob) if done.blob else None
        return self.record(kind, request, fetch())


# drift --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SearchDrift:
    """How one search request's results differ between two runs."""

    request: Mapping[str, Any]
    added: tuple[str, ...]
    removed: tuple[str, ...]
    reordered: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": dict(self.request),
            "added": list(self.added),
            "removed": list(self.removed),
            "reordered": self.reordered,
        }


@dataclass(frozen=True)
class Drift:
    """The differences between two snapshots of the same collection (``old`` -> ``new``)."""

    searches_compared: int
    searches: tuple[SearchDrift, ...]
    pages_compared: int
    pages_changed: tuple[str, ...]
    outcomes_changed: tuple[tuple[str, str, str], ...]
    only_old: tuple[Mapping[str, Any], ...]
    only_new: tuple[Mapping[str, Any], ...]

    @property
    def urls_added(self) -> int:
        return sum(len(s.added) for s in self.searches)

    @property
    def urls_removed(self) -> int:
        return sum(len(s.removed) for s in self.searches)

    @property
    def unchanged(self) -> bool:
        return not (self.searches or self.pages_changed or self.outcomes_changed or self.only_old or self.only_new)

    def summary(self) -> str:
        if self.unchanged:
            return f"no drift: {self.searches_compared} searches and {self.pages_compared} pages identical"
        changed = sum(bool(s.added or s.removed) for s in self.searches)
        return (
            f"{changed} of {self.searches_compared} searches returned other URLs ({self.urls_added} added, "
            f"{self.urls_removed} removed; {sum(s.reordered for s in self.searches)} reordered); "
            f"{len(self.pages_changed)} of {self.pages_compared} pages changed content, "
            f"{len(self.outcomes_changed)} changed outcome; requests only in the old run: {len(self.only_old)}, "
            f"only in the new run: {len(self.only_new)}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "summary": self.summary(),
            "searches_compared": self.searches_compared,
            "searches": [s.to_dict() for s in self.searches],
            "pages_compared": self.pages_compared,
            "pages_changed": list(self.pages_changed),
            "outcomes_changed": [{"url": u, "old": o, "new": n} for u, o, n in self.outcomes_changed],
            "only_old": [dict(r) for r in self.only_old],
            "only_new": [dict(r) for r in self.only_new],
        }


def _by_kind(snap: Snapshot, kind: str) -> dict[str, Entry]:
    return {key: e for (k, key), e in snap.entries.items() if k == kind}


def _urls(entry: Entry) -> list[str]:
    urls = entry.meta.get("urls") or []
    return [str(u) for u in urls] if isinstance(urls, list) else []


def compare_snapshots(old: Snapshot | str | os.PathLike[str], new: Snapshot | str | os.PathLike[str]) -> Drift:
    """The drift from ``old`` to ``new``: per search request (same provider, query, count and date
    limit) the result URLs added and removed and whether the common ones were reordered; per
    page fetched in both, whether its bytes or its outcome changed; and the requests one run made
    and the other did not."""
    a = old if isinstance(old, Snapshot) else Snapshot.open(old)
    b = new if isinstance(new, Snapshot) else Snapshot.open(new)
    searches: list[SearchDrift] = []
    only_old: list[Mapping[str, Any]] = []
    only_new: list[Mapping[str, Any]] = []
    compared = {"search": 0, "page": 0}
    pages_changed: list[str] = []
    outcomes: list[tuple[str, str, str]] = []
    for kind in ("search", "page"):
        old_entries, new_entries = _by_kind(a, kind), _by_kind(b, kind)
        only_old += [old_entries[k].request for k in sorted(old_entries.keys() - new_entries.keys())]
        only_new += [new_entries[k].request for k in sorted(new_entries.keys() - old_entries.keys())]
        for key in sorted(old_entries.keys() & new_entries.keys()):
            x, y = old_entries[key], new_entries[key]
            compared[kind] += 1
            if kind == "search":
                ux, uy = _urls(x), _urls(y)
                added = tuple(u for u in uy if u not in set(ux))
                removed = tuple(u for u in ux if u not in set(uy))
                common_x = [u for u in ux if u in set(uy)]
                common_y = [u for u in uy if u in set(ux)]
                if added or removed or common_x != common_y or x.outcome != y.outcome:
                    searches.append(SearchDrift(x.request, added, removed, common_x != common_y))
            else:
                url = str(x.request.get("url"))
                if x.outcome != y.outcome:
                    outcomes.append((url, x.outcome, y.outcome))
                elif x.blob != y.blob:
                    pages_changed.append(url)
    return Drift(
        compared["search"], tuple(searches), compared["page"], tuple(pages_changed), tuple(outcomes),
        tuple(only_old), tuple(only_new),
    )  # fmt: skip
