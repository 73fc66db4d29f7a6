"""axe-core (Deque's accessibility engine, from npm) run inside a Playwright page.

``make setup`` installs the pinned ``axe-core`` package into ``.venv/axe`` (``npm install
--prefix``); ``$FACTSCOUT_AXE`` may name another ``axe.min.js``. Without it the accessibility
tests skip, saying how to install it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
CANDIDATES = (
    ROOT / ".venv" / "axe" / "node_modules" / "axe-core" / "axe.min.js",
    ROOT / "node_modules" / "axe-core" / "axe.min.js",
)
BLOCKING = ("serious", "critical")


def axe_source() -> str:
    """The text of ``axe.min.js``, or a skip that says how to install it."""
    given = os.environ.get("FACTSCOUT_AXE")
    for path in (Path(given),) if given else CANDIDATES:
        if path.is_file():
            return path.read_text(encoding="utf-8")
    pytest.skip("axe-core is not installed: `make setup` installs it (npm install --prefix .venv/axe axe-core)")


def violations(page: Any, source: str) -> list[dict[str, Any]]:
    """axe's violations of impact serious or critical on the page, every ``<details>`` opened first
    so that what sits under "Advanced" is checked too (WCAG 2.x A/AA rules and axe's best
    practices). The script is added with ``add_script_tag(content=)``, which a page whose
    Content-Security-Policy forbids inline scripts refuses: the caller opens the page in a context
    with ``bypass_csp=True``."""
    page.evaluate("() => document.querySelectorAll('details').forEach((d) => { d.open = true; })")
    page.add_script_tag(content=source)
    result = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    assert result["passes"], "axe ran no rule that passed: it did not check the page"
    return [v for v in result["violations"] if v.get("impact") in BLOCKING]


def describe(found: list[dict[str, Any]]) -> str:
    """One line per violation and up to three of its elements, for an assertion message."""
    lines = []
    for v in found:
        lines.append(f"{v['impact']} {v['id']}: {v['help']} ({len(v['nodes'])} elements)")
        for node in v["nodes"][:3]:
            lines.append(
                f"    {' '.join(map(str, node['target']))}: {node.get('failureSummary', '').splitlines()[-1:]}"
            )
    return "\n".join(lines)
