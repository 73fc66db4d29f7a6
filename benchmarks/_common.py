"""Shared plumbing for the benchmark scripts: tables, result files, the final JSON line."""

from __future__ import annotations

import json
import os
import platform
import sys
from collections.abc import Sequence
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def quiet() -> None:
    """Benchmarks own the terminal like the CLI does: the same third-party silencing."""
    from factscout.cli.main import quiet_libraries

    quiet_libraries()


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(v: object) -> str:
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def publish(name: str, text: str, headline: dict) -> None:
    """Print the tables, write them to benchmarks/results/<name>.md, end with one JSON line."""
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{name}.md").write_text(text + "\n")
    sys.stdout.write(json.dumps(headline) + "\n")
