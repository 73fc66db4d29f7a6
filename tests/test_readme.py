"""The README is a front door: short, its generated tables up to date, its links pointing at pages that exist."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    return {slug(line.lstrip("#")) for line in page.read_text().splitlines() if re.match(r"#{1,6} ", line)}


def local_links(page: Path) -> list[tuple[Path, str]]:
    found = []
    for target in LINK.findall(page.read_text()):
        if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
            continue
        path, _, anchor = target.partition("#")
        found.append(((page.parent / path).resolve() if path else page, anchor))
    return found


def test_readme_is_at_most_200_lines():
    assert len(README.read_text().splitlines()) <= 200


def test_every_link_of_the_readme_and_docs_points_at_a_page_and_heading_that_exist():
    pages = [README, *sorted((ROOT / "docs").glob("*.md"))]
    for page in pages:
        for path, anchor in local_links(page):
            assert path.exists(), f"{page.name} links to {path}, which does not exist"
            if anchor and path.suffix == ".md":
                assert anchor in anchors(path), f"{page.name} links to {path.name}#{anchor}: no such heading"
    readme_docs = {path.name for path, _ in local_links(README) if path.parent == ROOT / "docs"}
    assert readme_docs >= {p.name for p in (ROOT / "docs").glob("*.md")}, "every docs/ page is linked from the README"


def test_generated_tables_are_up_to_date():
    """README's headline and components tables and docs/results.md match benchmarks/results and the
    registries (run ``python tools/update_readme.py`` after changing either)."""
    run = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "update_readme.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert run.returncode == 0, run.stdout + run.stderr
