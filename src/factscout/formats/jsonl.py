"""JSON Lines reading that reports the file and line of every bad row."""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
import zlib
from collections.abc import Generator, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

from factscout.errors import DataNotFound, InputError


def open_text(path: str | os.PathLike[str]) -> IO[str]:
    """Open a text file for reading, transparently gunzipping ``*.gz``."""
    p = Path(path)
    if not p.is_file():
        raise DataNotFound(f"no such file: {p}")
    if p.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(p, "rb"), encoding="utf-8")
    return p.open(encoding="utf-8")


def read_lines(path: str | os.PathLike[str]) -> Generator[tuple[int, str], None, None]:
    """Yield ``(line_number, line)`` of a UTF-8 text file (``*.gz`` gunzipped), lines split as
    text mode splits them (``\\n``, ``\\r\\n`` or ``\\r``, each given back as ``\\n``). A line that
    is not UTF-8, and a corrupt or truncated gzip file, are an InputError naming the file (and line)."""
    p = Path(path)
    if not p.is_file():
        raise DataNotFound(f"no such file: {p}")
    lineno = 0
    with gzip.open(p, "rb") if p.suffix == ".gz" else p.open("rb") as f:
        try:
            for raw in f:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise InputError(
                        f"{path}:{lineno + 1}: not UTF-8 text ({exc.reason} at byte {exc.start + 1} of the line)"
                    ) from None
                pieces = text.replace("\r\n", "\n").split("\r")
                for i, piece in enumerate(pieces):
                    line = piece + "\n" if i < len(pieces) - 1 else piece
                    if line:
                        lineno += 1
                        yield lineno, line
        except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"{path}: not a readable gzip file ({exc or type(exc).__name__})") from None


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; bad JSON names its line."""
    for lineno, line in read_lines(path):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from None
        except RecursionError:
            raise InputError(f"{path}:{lineno}: JSON nested too deeply") from None
        if not isinstance(row, dict):
            raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
        yield lineno, row


@contextmanager
def atomic_output(
    path: str | os.PathLike[str], mode: str = "w", *, permissions: int | None = None
) -> Iterator[IO[Any]]:
    """A file to write ``path`` through: a temporary file beside it (text ``mode`` in UTF-8, or
    ``"wb"``), renamed over ``path`` only when the block ends without an error, and removed when
    it does not, so a crash halfway leaves the previous file as it was. ``permissions`` (e.g.
    ``0o644``) replace the temporary file's 0600 before the rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, mode, encoding=None if "b" in mode else "utf-8") as f:
            yield f
        if permissions is not None:
            os.chmod(tmp, permissions)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_atomic(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Write text lines to ``path`` through a temporary file and a rename."""
    with atomic_output(path) as f:
        for line in lines:
            f.write(line)


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> None:
    write_atomic(path, (json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
