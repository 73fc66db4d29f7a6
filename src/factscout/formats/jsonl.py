"""JSON Lines reading that reports the file and line of every bad row."""

from __future__ import annotations

import gzip
import io
import json
import os
import tempfile
from collections.abc import Iterable, Iterator
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


def read_jsonl(path: str | os.PathLike[str]) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line_number, object)`` for each non-blank line; bad JSON names its line."""
    with open_text(path) as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{lineno}: malformed JSON ({exc.msg})") from None
            if not isinstance(row, dict):
                raise InputError(f"{path}:{lineno}: expected a JSON object, got {type(row).__name__}")
            yield lineno, row


def write_atomic(path: str | os.PathLike[str], lines: Iterable[str]) -> None:
    """Write text lines to ``path`` through a temporary file and a rename."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", dir=p.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for line in lines:
                f.write(line)
        os.replace(tmp, p)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[dict[str, Any]]) -> None:
    write_atomic(path, (json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
