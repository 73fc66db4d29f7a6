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


def test_a_prose_value_that_drifted_from_its_table_is_refilled_from_it():
    """``<!-- value:NAME|COLUMN|KEY=VALUE -->`` figures in the README and docs are cells of
    benchmarks/results/NAME.md: ``update_readme.py`` refills them, so ``--check`` fails on a drift."""
    sys.path.insert(0, str(ROOT / "tools"))
    import update_readme

    ref = "claim_matching|MAP@5|method=re-ranked (claim-match model)"
    shown = update_readme.cell("claim_matching", "MAP@5", method="re-ranked (claim-match model)")
    drifted = f"MAP@5 <!-- value:{ref} -->0.999<!-- /value --> and <!-- value:{ref}|number -->1<!-- /value -->."
    assert update_readme.fill_values(drifted) == drifted.replace("0.999", shown).replace("->1<", f"->{shown}<")
    prefix = "fast_queries|Δ vs fp32|search=dense|encoder^=int8 queries"  # "--fast" cannot go in a comment
    assert update_readme.ValueRef.parse(prefix).text() == update_readme.cell(
        "fast_queries", "Δ vs fp32", search="dense", encoder="int8 queries (--fast)"
    )


def test_the_prose_figures_issue_48_found_stale_are_read_from_their_tables():
    """usage.md and results.md said int8 stance was "3.1x cheaper" (its table: 2.47x), quoted the verdict
    CI [-0.051, +0.035] (table: [-0.047, +0.032]) and a hybrid delta of -0.0014 (table: -0.0022); demo.py
    said "1.7x ... 0.7323" (2.03x, 0.7336)."""
    pages = {p.name: p.read_text() for p in [README, *sorted((ROOT / "docs").glob("*.md"))]}
    for stale in ("3.1x cheaper", "[-0.051, +0.035]", "(-0.0014", "0.005 (CI excludes 0)", "now 3.0x"):
        assert not any(stale in text for text in pages.values()), stale
    assert "0.7323" not in (ROOT / "src" / "factscout" / "demo.py").read_text()
    assert "<!-- value:fast_stance|CPU ms / pair|model=int8 -->" in pages["usage.md"]
    assert "<!-- value:fast_queries|Δ vs fp32|search=hybrid|encoder^=int8 queries -->" in pages["results.md"]
