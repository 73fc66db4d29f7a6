"""Checked dataset downloads: every file a loader's ``download(dest)`` fetches goes through
:func:`fetch_checked`, which streams it to a temporary file beside its destination, computes its
sha256, refuses it (deleting the temporary file) when it differs from the expected checksum, and
only then renames it into place. An unreachable network is a :class:`NetworkUnreachable` naming
the URL.

:func:`checking` opens a session: the expected checksums (``{url: sha256}``) the fetches are held
to, and a record of the sha256 of each file actually fetched, so a caller can report (and keep)
the checksums of files that had none known.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import logging
import os
import tempfile
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from factscout.errors import FactscoutError

log = logging.getLogger(__name__)

_CHUNK = 1 << 16


class NetworkUnreachable(FactscoutError, OSError):
    """A download URL could not be reached; the message names the URL."""


class ChecksumMismatch(FactscoutError):
    """A downloaded file's sha256 differs from the expected one; the file was deleted."""


@dataclass
class Session:
    """The expected checksums of one download and the checksums of the files it fetched."""

    expected: dict[str, str] = field(default_factory=dict)
    fetched: dict[str, str] = field(default_factory=dict)


_SESSION: contextvars.ContextVar[Session | None] = contextvars.ContextVar("factscout_download", default=None)


@contextlib.contextmanager
def checking(expected: Mapping[str, str] | None = None) -> Iterator[Session]:
    """Hold every :func:`fetch_checked` inside the block to ``expected`` (``{url: sha256}``)."""
    session = Session({url: _hex(url, value) for url, value in (expected or {}).items()})
    token = _SESSION.set(session)
    try:
        yield session
    finally:
        _SESSION.reset(token)


def _hex(url: str, value: str) -> str:
    value = value.strip().lower()
    if len(value) != 64 or any(c not in "0123456789abcdef" for c in value):
        raise FactscoutError(f"expected sha256 for {url} is not 64 hex digits: {value!r}")
    return value


def fetch_checked(url: str, dest: Path, *, sha256: str | None = None, timeout: float = 120.0) -> Path:
    """Download ``url`` to ``dest`` through a temporary file, a sha256 check and a rename.

    The expected checksum is ``sha256`` or, inside :func:`checking`, the session's one for
    ``url``; without either, the file is accepted and its checksum recorded in the session.
    """
    session = _SESSION.get()
    expected = _hex(url, sha256) if sha256 else (session.expected.get(url) if session else None)
    dest.parent.mkdir(parents=True, exist_ok=True)
    log.info("downloading %s -> %s", url, dest)
    request = urllib.request.Request(url, headers={"User-Agent": "factscout (dataset download)"})
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        try:
            with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as response:
                for chunk in iter(lambda: response.read(_CHUNK), b""):
                    digest.update(chunk)
                    out.write(chunk)
        except urllib.error.HTTPError as exc:
            raise NetworkUnreachable(
                f"cannot download {url}: the server answered HTTP {exc.code} {exc.reason}"
            ) from None
        except (TimeoutError, urllib.error.URLError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise NetworkUnreachable(
                f"cannot download {url}: the network is unreachable from here ({reason}); "
                "download it on a machine with internet access and copy it under the data folder"
            ) from None
        got = digest.hexdigest()
        if expected is not None and got != expected:
            raise ChecksumMismatch(
                f"refused {url}: its sha256 is {got}, expected {expected}; nothing was written to {dest}"
            )
        os.replace(tmp, dest)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    if session is not None:
        session.fetched[url] = got
    return dest
