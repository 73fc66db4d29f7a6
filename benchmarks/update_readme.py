"""Copy the tables in benchmarks/results/*.md into README.md between their markers.

A README section ``<!-- results:NAME -->`` ... ``<!-- /results:NAME -->`` is replaced by the
content of ``benchmarks/results/NAME.md``; run after the benchmark scripts (``make bench``).
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    readme = ROOT / "README.md"
    text = readme.read_text()
    for result in sorted((ROOT / "benchmarks" / "results").glob("*.md")):
        name = result.stem
        block = f"<!-- results:{name} -->\n{result.read_text().strip()}\n<!-- /results:{name} -->"
        pattern = re.compile(rf"<!-- results:{re.escape(name)} -->.*?<!-- /results:{re.escape(name)} -->", re.S)
        text, n = pattern.subn(lambda _, block=block: block, text)
        if n == 0:
            print(f"README has no marker for {name}; skipped")
    readme.write_text(text)


if __name__ == "__main__":
    main()
