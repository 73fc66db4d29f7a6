"""Which training schedule the time-aware benchmark's headline uses, chosen on validation only.

Reads the tables ``benchmarks/temporal.py`` wrote for each schedule (``--files``; default the
MultiFC recipe ``temporal.md`` and the light schedule ``temporal_light.md``), and picks the
schedule whose ``base`` scores highest on the validation split of MultiFC train (the ``validation``
column); the scored-split columns are shown beside it but never read by the choice.

    python benchmarks/temporal_schedule.py [--files temporal.md temporal_light.md] [--name NAME]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from _common import markdown_table, publish

RESULTS = Path(__file__).resolve().parent / "results"


def table(path: Path) -> dict[str, dict[str, str]]:
    """``{method: {column: cell}}`` of the first table with a ``validation`` column."""
    header: list[str] = []
    rows: dict[str, dict[str, str]] = {}
    for line in path.read_text().splitlines():
        if not line.startswith("|"):
            if rows:
                break
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif set(line) <= set("|- ") or "validation" not in header:
            continue
        else:
            rows[cells[0]] = dict(zip(header, cells, strict=True))
    if "base" not in rows:
        raise SystemExit(f"{path} has no base row with a validation column: is it a temporal.py results file?")
    return rows


def reproduce_line(path: Path) -> str:
    return next((line for line in path.read_text().splitlines() if line.startswith("Reproduce:")), "")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", nargs="+", default=["temporal.md", "temporal_light.md"])
    parser.add_argument("--name", default="temporal_schedule", help="results name (temporal_minilm_schedule: MiniLM)")
    args = parser.parse_args()
    tables = {name: table(RESULTS / name) for name in args.files}
    chosen = max(args.files, key=lambda n: float(tables[n]["base"]["validation"]))
    methods = [m for m in tables[args.files[0]] if all(m in t for t in tables.values())]
    rows = [
        [m, *(f"{tables[n][m]['validation']} / {tables[n][m]['mean micro-F1']}" for n in args.files)] for m in methods
    ]
    text = "\n".join(
        [
            "### Time-aware benchmark: training schedule chosen on validation",
            "",
            f"Chosen: `{chosen}` (highest base micro-F1 on the validation split of MultiFC train). "
            "Cells: validation / scored (MultiFC dev) domain-averaged micro-F1, mean of the seeds; only the "
            "validation figure of base decides.",
            "",
            markdown_table(["method", *args.files], rows),
            "",
            "Schedules: "
            + "; ".join(f"`{n}`: {reproduce_line(RESULTS / n).removeprefix('Reproduce: ')}" for n in args.files),
            "",
            f"Reproduce: `python benchmarks/temporal_schedule.py --files {' '.join(args.files)}"
            + (f" --name {args.name}`" if args.name != "temporal_schedule" else "`"),
        ]
    )
    publish(
        args.name,
        text,
        {
            "chosen": chosen,
            "validation_base_micro_f1": {n: float(t["base"]["validation"]) for n, t in tables.items()},
        },
    )


if __name__ == "__main__":
    main()
