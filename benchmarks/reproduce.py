"""Reproduce the figures the README and docs show: run the commands of ``benchmarks/specs.toml`` and
compare what they print with what the pages say.

    python benchmarks/reproduce.py [NAME ...] [--max-minutes M] [--longer-than M] [--list] [--dry-run]
    python benchmarks/reproduce.py --check      # the static check tests/test_specs.py runs (no benchmark)

``benchmarks/specs.toml`` has one table per result NAME (``benchmarks/results/NAME.md``, the file a
``<!-- results:NAME -->`` block copies and the README's headline rows read):

* ``command``: the benchmark invocation that writes ``NAME.md`` and its run record and ends by printing
  one JSON line of headline figures; ``before``: commands it needs first (say, a training-pairs file);
  ``after``: specs whose output it reads (run first when both are selected); ``requires``: inputs that
  are not in the repository, checked before the run; ``device = "gpu"``: run only with ``--gpu``.
* ``minutes``: the estimated run time on the 2-core reference machine (``make bench`` runs the specs of
  at most 60 minutes, ``make bench-headline`` the longer ones).
* ``figures``: each one names the cell it reproduces (``column`` and ``where``, as
  ``tools/update_readme.py`` reads cells), the ``key`` of the JSON line that holds it (a path list for
  nested objects; ``scale`` when the table shows a fraction as a percentage; no key: the cell is read
  from the tables the command prints), the ``expected`` value (what the table, and so the page, shows
  now) and a tolerance, ``abs`` or ``rel``: tight for seeded quality figures, wide for timings.
* ``quoted``: figures of a README headline row that no command here measures (a target, an earlier
  measurement, a published baseline), each with the reason.

:func:`check` is the spec checker: every headline row and every results block or prose value marker of
README.md and docs/*.md has a spec, every command's script exists, and every expected value agrees with
the table the pages show (and with the JSON line of the run record beside it). The runner ends with one
JSON line, ``{"specs": n, "passed": k, "failed": [...], "skipped": [...]}``, and exits 1 on a failure.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "benchmarks" / "specs.toml"
RESULTS = ROOT / "benchmarks" / "results"
README = ROOT / "README.md"
DOCS = ROOT / "docs"
LOGS = ROOT / ".factscout" / "reproduce"
sys.path.insert(0, str(ROOT / "tools"))

import update_readme  # noqa: E402  (tools/ is not a package)

# the figures of a table cell: "0.7335", "98.8%", "2.72x", "1,000,000", "0.5022 [0.451, 0.551]" (two more),
# "stop-word removal 0.2884; top-8 IDF 0.2809" (two: a number inside a word, "top-8", "p99", is not a figure)
_NUMBER = re.compile(r"(?<![\w@.\-])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?=x\b|[^\w.]|\.(?!\d)|$)")
# a number written into a headline row's text rather than read from a table ("target <= 2x idle")
_LITERAL = re.compile(r"(?<![\w@.\-])[-+]?\d+(?:,\d{3})*(?:\.\d+)?(?:x|%)?(?![\w])")
# an absolute path in a command ("/tmp/x", "--vectors-from=/work/...", "cross:/work/...")
_ABSOLUTE = re.compile(r"(?:^|[:=,+])/")
_SPEC_KEYS = {"command", "minutes", "figures", "before", "after", "requires", "device", "quoted", "note"}
_FIGURE_KEYS = {"column", "where", "part", "expected", "key", "abs", "rel", "scale"}


def numbers(text: str) -> list[float]:
    """The figures of a table cell in order (``"1,000,000"`` -> 1e6, ``"-0.0022"`` -> -0.0022)."""
    return [float(m.group().replace(",", "")) for m in _NUMBER.finditer(text)]


def number(text: str, part: int = 0) -> float | None:
    """The ``part``-th figure of a table cell (the first by default), or None."""
    found = numbers(text)
    return found[part] if -len(found) <= part < len(found) else None


@dataclass(frozen=True)
class Figure:
    """One reproduced figure: a cell of ``benchmarks/results/<spec>.md`` and the JSON key that holds it."""

    column: str
    where: dict[str, str]
    expected: float
    key: tuple[str | int, ...] | None = None
    part: int = 0  # which figure of the cell, when it holds several
    abs: float | None = None
    rel: float | None = None
    scale: float = 1.0

    @property
    def tolerance(self) -> float:
        return self.abs if self.abs is not None else (self.rel or 0.0) * abs(self.expected)

    @property
    def tolerance_text(self) -> str:
        return f"±{self.abs:g}" if self.abs is not None else f"±{(self.rel or 0.0) * 100:g}%"

    @property
    def key_text(self) -> str:
        if self.key is None:
            return f"table {self.cell_text}"
        return ".".join(str(k) for k in self.key)

    def agrees(self, value: float) -> bool:
        return math.isfinite(value) and abs(value - self.expected) <= self.tolerance + 1e-9 * max(1.0, abs(value))

    def same_cell(self, column: str, where: Mapping[str, str]) -> bool:
        return self.column == column and self.where == dict(where)

    @property
    def cell_text(self) -> str:
        part = f" (figure {self.part + 1})" if self.part else ""
        return f"{self.column!r} @ " + ", ".join(f"{k}={v}" for k, v in self.where.items()) + part

    def from_json(self, headline: Mapping[str, Any]) -> float | None:
        """The figure in a benchmark's JSON line (times ``scale``), or None when the key is missing."""
        value: Any = headline
        for part in self.key or ():
            in_object = isinstance(value, Mapping) and part in value
            in_list = isinstance(value, list) and isinstance(part, int) and -len(value) <= part < len(value)
            if not (in_object or in_list):
                return None
            value = value[part]
        if isinstance(value, bool) or not isinstance(value, int | float):
            return None
        return float(value) * self.scale


@dataclass(frozen=True)
class Spec:
    """How to reproduce ``benchmarks/results/<name>.md`` and which of its figures to compare."""

    name: str
    command: str
    minutes: float
    figures: tuple[Figure, ...]
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()
    device: str = "cpu"
    quoted: dict[str, str] = field(default_factory=dict)
    note: str = ""

    def commands(self) -> list[str]:
        return [*self.before, self.command]


def _figure(name: str, raw: Mapping[str, Any]) -> Figure:
    unknown = set(raw) - _FIGURE_KEYS
    if unknown:
        raise ValueError(f"spec {name}: unknown figure fields {sorted(unknown)}; known: {sorted(_FIGURE_KEYS)}")
    key = raw.get("key")
    return Figure(
        column=str(raw["column"]),
        where={str(k): str(v) for k, v in raw.get("where", {}).items()},
        expected=float(raw["expected"]),
        key=None if key is None else tuple([key] if isinstance(key, str) else key),
        part=int(raw.get("part", 0)),
        abs=None if raw.get("abs") is None else float(raw["abs"]),
        rel=None if raw.get("rel") is None else float(raw["rel"]),
        scale=float(raw.get("scale", 1.0)),
    )


def parse_specs(data: Mapping[str, Any]) -> dict[str, Spec]:
    """Specs from the parsed TOML (one table per result name)."""
    specs = {}
    for name, raw in data.items():
        unknown = set(raw) - _SPEC_KEYS
        if unknown:
            raise ValueError(f"spec {name}: unknown fields {sorted(unknown)}; known: {sorted(_SPEC_KEYS)}")
        specs[name] = Spec(
            name=name,
            command=str(raw["command"]),
            minutes=float(raw["minutes"]),
            figures=tuple(_figure(name, f) for f in raw.get("figures", [])),
            before=tuple(raw.get("before", ())),
            after=tuple(raw.get("after", ())),
            requires=tuple(raw.get("requires", ())),
            device=str(raw.get("device", "cpu")),
            quoted=dict(raw.get("quoted", {})),
            note=str(raw.get("note", "")),
        )
    return specs


def load_specs(path: Path = SPECS) -> dict[str, Spec]:
    return parse_specs(tomllib.loads(path.read_text()))


# -- the spec checker ---------------------------------------------------------------------------------------


def _scripts(command: str) -> list[str]:
    """Problems with the programs a shell command line names: a missing script or module, an absolute path."""
    problems = []
    for part in re.split(r"&&|\|\||;|\|", command):
        words = shlex.split(part)
        if not words:
            continue
        problems += [f"names an absolute path {w!r} (not reproducible elsewhere)" for w in words if _ABSOLUTE.search(w)]
        if words[0] not in ("python", "python3") or len(words) < 2:
            continue
        if words[1] == "-m" and len(words) > 2:
            module = Path("src", *words[2].split("."))
            if not ((ROOT / module).with_suffix(".py").is_file() or (ROOT / module / "__init__.py").is_file()):
                problems.append(f"runs module {words[2]}, which is not in src/")
        elif not words[1].startswith("-") and not (ROOT / words[1]).is_file():
            problems.append(f"runs {words[1]}, which does not exist")
    return sorted(set(problems))


def _headline_rows(readme: str) -> list[str]:
    block = re.search(r"<!-- generated:headline -->(.*?)<!-- /generated:headline -->", readme, re.S)
    if not block:
        return []
    return [cells[0] for cells in (_row(line) for line in block.group(1).splitlines()) if cells]


def _row(line: str) -> list[str] | None:
    line = line.strip()
    if not line.startswith("|") or re.fullmatch(r"\|(\s*:?-+:?\s*\|)+", line):
        return None
    cells = [c.strip() for c in line.strip("|").split("|")]
    return None if cells[0] == "what" else cells


def _has_figure(
    specs: Mapping[str, Spec], result: str, column: str, where: Mapping[str, str], results: Path = RESULTS
) -> bool:
    """Whether a spec of ``result`` has a figure for that cell: the same column and where, or the same
    row of the same table (two spellings of one row, say a prefix ``key^``)."""
    spec = specs.get(result)
    if spec is None:
        return False
    if any(f.same_cell(column, where) for f in spec.figures):
        return True
    path = results / f"{result}.md"
    text = path.read_text() if path.is_file() else ""
    found = update_readme.locate(text, column, where)
    return found is not None and any(
        f.column == column and update_readme.locate(text, f.column, f.where) == found for f in spec.figures
    )


def check_spec(spec: Spec, specs: Mapping[str, Spec], results: Path = RESULTS) -> list[str]:
    """Problems with one spec: its commands, its figures against the table and the run record."""
    problems = [f"spec {spec.name}: command {p}" for c in spec.commands() for p in _scripts(c)]
    problems += [f"spec {spec.name}: after {a!r}, which has no spec" for a in spec.after if a not in specs]
    if spec.minutes <= 0:
        problems.append(f"spec {spec.name}: minutes must be > 0")
    if spec.device not in ("cpu", "gpu"):
        problems.append(f"spec {spec.name}: device {spec.device!r}; known: cpu, gpu")
    if not spec.figures:
        problems.append(f"spec {spec.name}: no figures")
    table = results / f"{spec.name}.md"
    manifest = results / spec.name / "manifest.json"
    headline = json.loads(manifest.read_text()).get("headline", {}) if manifest.is_file() else None
    for figure in spec.figures:
        where = figure.cell_text
        if (figure.abs is None) == (figure.rel is None):
            problems.append(f"spec {spec.name}: figure {where} needs one tolerance, abs or rel")
        if not table.is_file():
            problems.append(f"spec {spec.name}: no benchmarks/results/{spec.name}.md")
            break
        shown = update_readme.table_cell(table.read_text(), figure.column, figure.where)
        value = None if shown is None else number(shown, figure.part)
        if value is None:
            problems.append(f"spec {spec.name}: {spec.name}.md has no number in {where} ({shown!r})")
        elif not figure.agrees(value):
            problems.append(
                f"spec {spec.name}: expected {figure.expected:g} {figure.tolerance_text} for {where}, "
                f"but the table shows {shown}"
            )
        if headline is not None and figure.key is not None:
            recorded = figure.from_json(headline)
            if recorded is None:
                problems.append(f"spec {spec.name}: key {figure.key_text} is not in the run record's JSON line")
            elif not figure.agrees(recorded):
                problems.append(
                    f"spec {spec.name}: expected {figure.expected:g} {figure.tolerance_text} for {where}, "
                    f"but the run record's {figure.key_text} is {recorded:g}"
                )
    return problems


def check(
    specs: Mapping[str, Spec],
    readme: str,
    docs: Mapping[str, str],
    *,
    results: Path = RESULTS,
    headlines: Sequence[update_readme.Headline] | None = None,
) -> list[str]:
    """Every figure the pages show without a spec behind it, and every spec that is wrong.

    ``readme`` is README.md's text and ``docs`` maps a page name to its text. A README headline row
    needs a :data:`update_readme.HEADLINES` entry (it reads each figure from a table) whose every cell
    is a figure of a spec, and each number written into the row's text a ``quoted`` reason; a
    ``<!-- results:NAME -->`` block needs a spec NAME; a ``<!-- value:... -->`` marker a spec figure
    of that cell. Then :func:`check_spec` on every spec."""
    headlines = update_readme.HEADLINES if headlines is None else headlines
    by_what = {h.what: h for h in headlines}
    problems = []
    for what in _headline_rows(readme):
        headline = by_what.get(what)
        if headline is None:
            problems.append(f"README headline row {what!r}: no spec (no HEADLINES entry reads it from a table)")
            continue
        cells = [c for c in headline.cells.values() if isinstance(c, update_readme.Cell)]
        if len(cells) < len(headline.cells):
            problems.append(f"README headline row {what!r}: a figure is not read from a results table")
        for c in cells:
            if not _has_figure(specs, c.result, c.column, c.conditions, results):
                problems.append(
                    f"README headline row {what!r}: no spec figure for {c.result} {c.column!r} @ {c.conditions}"
                )
        quoted = [q for c in cells if c.result in specs for q in specs[c.result].quoted]
        for template in (headline.result, headline.against):
            literal = re.sub(r"\{[^}]*\}", " ", template)
            for found in _LITERAL.findall(literal):
                if not any(found in q and q in literal for q in quoted):
                    problems.append(
                        f"README headline row {what!r}: {found!r} is written, not measured: quote it in a spec"
                    )
    pages = {"README.md": readme, **{f"docs/{k}" if "/" not in k else k: v for k, v in docs.items()}}
    for page, text in pages.items():
        for name in re.findall(r"<!-- results:([\w.-]+) -->.*?<!-- /results:\1 -->", text, re.S):
            if name not in specs:
                problems.append(f"{page}: results block {name} has no spec (add one to benchmarks/specs.toml)")
        for marker in update_readme.VALUE.finditer(text):
            try:
                ref = update_readme.ValueRef.parse(marker["ref"])
            except ValueError as exc:
                problems.append(f"{page}: {exc}")
                continue
            if not _has_figure(specs, ref.result, ref.column, ref.where, results):
                problems.append(
                    f"{page}: value {marker['text']!r} ({ref.result} {ref.column!r} @ {ref.where}) has no spec figure"
                )
    for spec in specs.values():
        problems += check_spec(spec, specs, results)
    return problems


def check_repository(specs_path: Path = SPECS) -> list[str]:
    """:func:`check` on this checkout's specs, README.md and docs/*.md."""
    docs = {p.name: p.read_text() for p in sorted(DOCS.glob("*.md"))}
    return check(load_specs(specs_path), README.read_text(), docs)


# -- the runner ----------------------------------------------------------------------------------------------


def last_json(stdout: str) -> dict[str, Any] | None:
    """The last line of a benchmark's output that is a JSON object (its headline figures)."""
    for line in reversed(stdout.splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except ValueError:
                continue
            if isinstance(found, dict):
                return found
    return None


@dataclass
class Outcome:
    spec: Spec
    rows: list[list[str]]
    ok: bool
    reason: str = ""
    seconds: float = 0.0


def measure(spec: Spec, stdout: str) -> tuple[list[list[str]], bool]:
    """Rows (name, key, expected, measured, tolerance, ok) comparing a run's output with the spec."""
    headline = last_json(stdout) or {}
    rows, ok = [], True
    for figure in spec.figures:
        if figure.key is not None:
            value = figure.from_json(headline)
        else:
            shown = update_readme.table_cell(stdout, figure.column, figure.where)
            value = None if shown is None else number(shown, figure.part)
        good = value is not None and figure.agrees(value)
        ok &= good
        measured = "missing" if value is None else f"{value:g}"
        row = [spec.name, figure.key_text, f"{figure.expected:g}", measured, figure.tolerance_text]
        rows.append([*row, "yes" if good else "NO"])
    return rows, ok


def ordered(specs: Iterable[Spec]) -> list[Spec]:
    """The specs with each one after the selected specs it reads from (``after``), else in file order."""
    chosen = {s.name: s for s in specs}
    done: dict[str, Spec] = {}

    def visit(spec: Spec, path: tuple[str, ...]) -> None:
        if spec.name in done:
            return
        if spec.name in path:
            raise SystemExit(f"specs read each other in a circle: {' -> '.join([*path, spec.name])}")
        for name in spec.after:
            if name in chosen:
                visit(chosen[name], (*path, spec.name))
        done[spec.name] = spec

    for spec in chosen.values():
        visit(spec, ())
    return list(done.values())


def run(spec: Spec, logs: Path, env: Mapping[str, str]) -> Outcome:
    missing = [r for r in spec.requires if not (ROOT / r).exists()]
    if missing:
        return Outcome(spec, [], False, f"missing input {', '.join(missing)} (see its spec's note)")
    logs.mkdir(parents=True, exist_ok=True)
    log = logs / f"{spec.name}.log"
    t0 = time.perf_counter()
    stdout = ""
    with log.open("w") as out:
        for command in spec.commands():
            out.write(f"$ {command}\n")
            out.flush()
            done = subprocess.run(
                ["bash", "-c", command], cwd=ROOT, env=dict(env), stdout=subprocess.PIPE, stderr=out, text=True
            )
            out.write(done.stdout)
            stdout = done.stdout
            if done.returncode != 0:
                reason = f"`{command}` exited {done.returncode} (log: {log})"
                return Outcome(spec, [], False, reason, time.perf_counter() - t0)
    rows, ok = measure(spec, stdout)
    reason = "" if ok else f"a figure moved beyond its tolerance (log: {log})"
    return Outcome(spec, rows, ok, reason, time.perf_counter() - t0)


def table(rows: Sequence[Sequence[str]]) -> str:
    header = ["name", "key", "expected", "measured", "tolerance", "ok"]
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    return "\n".join("  ".join(str(c).ljust(w) for c, w in zip(r, widths, strict=True)) for r in [header, *rows])


def select(specs: Mapping[str, Spec], args: argparse.Namespace, parser: argparse.ArgumentParser) -> list[Spec]:
    unknown = [n for n in args.names if n not in specs]
    if unknown:
        parser.error(f"no spec {', '.join(unknown)}; known: {', '.join(sorted(specs))}")
    chosen = [specs[n] for n in args.names] if args.names else list(specs.values())
    if args.max_minutes is not None:
        chosen = [s for s in chosen if s.minutes <= args.max_minutes]
    if args.longer_than is not None:
        chosen = [s for s in chosen if s.minutes > args.longer_than]
    return ordered(chosen)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="NAME", help="specs to run (default: all that the filters keep)")
    parser.add_argument("--max-minutes", type=float, help="only specs estimated at most this long")
    parser.add_argument("--longer-than", type=float, help="only specs estimated longer than this many minutes")
    parser.add_argument("--list", action="store_true", help="list the selected specs and stop")
    parser.add_argument("--dry-run", action="store_true", help="print the commands that would run and stop")
    parser.add_argument(
        "--check", action="store_true", help="check the specs against the pages and tables; run nothing"
    )
    parser.add_argument("--gpu", action="store_true", help="also run the specs that need a GPU")
    parser.add_argument("--specs", type=Path, default=SPECS, help="the spec file (default: benchmarks/specs.toml)")
    parser.add_argument(
        "--logs", type=Path, default=LOGS, help="where each run's output goes (default: .factscout/reproduce)"
    )
    parser.add_argument(
        "--results", type=Path, help="write the runs' tables and run records here instead of benchmarks/results"
    )
    args = parser.parse_args(argv)
    if args.check:
        problems = check_repository(args.specs)
        print(
            "\n".join(problems)
            or f"{len(load_specs(args.specs))} specs: every figure has one and agrees with its table"
        )
        return 1 if problems else 0
    specs = load_specs(args.specs)
    chosen = select(specs, args, parser)
    if args.list or args.dry_run:
        for spec in chosen:
            gpu = " [gpu]" if spec.device == "gpu" else ""
            print(f"{spec.name}: ~{spec.minutes:g} min{gpu}, {len(spec.figures)} figure(s)")
            if args.dry_run:
                print("\n".join(f"    {c}" for c in spec.commands()))
        print(f"{len(chosen)} specs, ~{sum(s.minutes for s in chosen):g} min estimated")
        return 0
    env = dict(os.environ)
    env["PATH"] = (
        f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `python`, `factscout`: this venv's
    )
    if args.results:
        env["FACTSCOUT_BENCHMARK_RESULTS"] = str(args.results.resolve())
    outcomes, skipped = [], []
    for spec in chosen:
        if spec.device == "gpu" and not args.gpu:
            skipped.append(spec.name)
            print(f"{spec.name}: skipped (needs a GPU; --gpu runs it)", flush=True)
            continue
        print(f"{spec.name}: {spec.command} (~{spec.minutes:g} min)", flush=True)
        outcome = run(spec, args.logs, env)
        outcomes.append(outcome)
        print(
            f"{spec.name}: {'ok' if outcome.ok else 'FAILED: ' + outcome.reason} in {outcome.seconds / 60:.1f} min",
            flush=True,
        )
    rows = [r for o in outcomes for r in o.rows]
    if rows:
        print(table(rows))
    failed = [o.spec.name for o in outcomes if not o.ok]
    passed = len(outcomes) - len(failed)
    print(json.dumps({"specs": len(chosen), "passed": passed, "failed": failed, "skipped": skipped}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
