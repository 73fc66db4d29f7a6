"""Shared plumbing for the benchmark scripts: tables, result files, run files and manifests, the
final JSON line.

Every benchmark is reproducible from what it leaves under ``benchmarks/results/<name>/``: its run
files (TREC runs of the rankings it scores, JSONL predictions of the labels it scores; written with
:func:`write_trec_run` / :func:`write_predictions`) and ``manifest.json`` (:class:`RunRecord`: package
versions, git commit and dirty flag, the sha256 of every data file the run read, machine, Python,
the exact command line, start and end time, the headline JSON), written by :func:`publish`.
Importing this module starts the run's record: from then on every file the process opens for
reading under the data folder (``$FACTSCOUT_DATA`` / ``../shared/data``), a file named on the
command line, or a shipped model file is noted, and hashed once when the manifest is written.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gzip
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# where tables, run files and manifests go; $FACTSCOUT_BENCHMARK_RESULTS redirects a run (the tests do)
RESULTS = Path(os.environ.get("FACTSCOUT_BENCHMARK_RESULTS") or Path(__file__).resolve().parent / "results")
MANIFEST_FORMAT = "factscout-benchmark-manifest/1"
# the distributions whose versions decide the figures (absent ones are listed as null)
KEY_PACKAGES = (
    "factscout", "numpy", "scipy", "scikit-learn", "torch", "transformers", "sentence-transformers",
    "onnxruntime", "faiss-cpu", "bm25s", "PyStemmer", "ir-measures", "pytrec-eval-terrier", "spacy",
    "nltk", "lemminflect", "dateparser", "htmldate", "rank-bm25", "tantivy", "ray", "fastapi",
    "uvicorn", "pydantic", "psycopg", "pgvector", "hypothesis", "schemathesis",
)  # fmt: skip
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def run_label(text: str) -> str:
    """A table row's name as a run file's name and TREC tag:
    ``"BM25 (k1=0.9, b=0.4; default)"`` -> ``"bm25-k1=0.9-b=0.4-default"``."""
    label = re.sub(r"[^a-z0-9.=@+_]+", "-", text.lower()).strip("-.")
    if not label:
        raise ValueError(f"run label {text!r} has no letters or digits")
    return label[:120]


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


class HashCache:
    """sha256 of files, computed once per (path, mtime, size) and kept on disk between runs
    (``$FACTSCOUT_HASH_CACHE``, default ``~/.cache/factscout/sha256.json``; ``""`` keeps it in memory)."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        default = Path.home() / ".cache" / "factscout" / "sha256.json"
        where = os.environ.get("FACTSCOUT_HASH_CACHE", str(default)) if path is None else str(path)
        self.path = Path(where) if where else None
        self.computed = 0  # files actually hashed by this object (the rest came from the cache)
        self._known: dict[str, str] = {}
        if self.path is not None and self.path.is_file():
            try:
                loaded = json.loads(self.path.read_text())
                self._known = {str(k): str(v) for k, v in loaded.items()} if isinstance(loaded, dict) else {}
            except (OSError, ValueError):
                self._known = {}

    def sha256(self, path: str | os.PathLike[str]) -> str:
        p = Path(path).resolve()
        st = p.stat()
        key = f"{p}|{st.st_mtime_ns}|{st.st_size}"
        if key not in self._known:
            from factscout.hashing import file_sha256

            self._known[key] = file_sha256(p)
            self.computed += 1
        return self._known[key]

    def save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(self._known, indent=0, sort_keys=True))
            os.replace(tmp, self.path)
        except OSError:  # a read-only home: the cache is an optimisation only
            pass


def _data_folder() -> Path | None:
    try:
        from factscout.datasets import data_root

        return data_root().resolve()
    except Exception:  # no data folder here: only files named on the command line count
        return None


def package_versions(names: Iterable[str] = KEY_PACKAGES) -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in names:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            found[name] = None
    return found


def git_state(root: Path = ROOT) -> dict[str, Any]:
    """The commit and whether tracked or new files differ from it (benchmarks/results aside: the
    run itself writes there)."""

    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=30)
        if done.returncode:
            raise OSError(done.stderr.strip())
        return done.stdout

    try:
        commit = git("rev-parse", "HEAD").strip()
        changed = [
            line[3:]
            for line in git("status", "--porcelain", "--untracked-files=normal").splitlines()
            if not line[3:].strip('"').startswith("benchmarks/results/")
        ]
    except (OSError, subprocess.SubprocessError) as exc:
        return {"commit": None, "dirty": None, "error": str(exc)}
    return {"commit": commit, "dirty": bool(changed), "changed": changed[:50]}


def machine_info() -> dict[str, Any]:
    cpu = platform.processor() or platform.machine()
    ram = None
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                ram = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    if ram is None and hasattr(os, "sysconf"):
        try:
            ram = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError):
            ram = None
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": cpu,
        "cores": os.cpu_count(),
        "cores_usable": usable,
        "ram_bytes": ram,
        "ram_gib": round(ram / 2**30, 1) if ram else None,
        "platform": platform.platform(),
    }


class RunRecord:
    """One benchmark process: when it started, what it ran, which data files it read, which run
    files it wrote. :data:`RUN` is this process's record, fed by an audit hook on ``open``."""

    def __init__(
        self,
        argv: Sequence[str] | None = None,
        data_folders: Iterable[Path] | None = None,
        cache: HashCache | None = None,
    ) -> None:
        self.started = _now()
        self.argv = list(sys.argv if argv is None else argv)
        self.git = git_state()
        folder = _data_folder()
        self.data_folders = [Path(f).resolve() for f in data_folders] if data_folders is not None else (
            [folder] if folder else []
        )  # fmt: skip
        self.named = {Path(a).resolve() for a in self.argv[1:] if a and not a.startswith("-") and Path(a).is_file()}
        self.package = ROOT / "src" / "factscout"  # its models/ folders hold the shipped weights
        self.read: dict[str, Path] = {}  # resolved path -> path, in first-read order
        self.run_files: dict[str, list[Path]] = {}  # result name -> files written
        self.cache = cache or HashCache()

    # -- what the run reads
    def note_open(self, path: Any, mode: Any, flags: Any) -> None:
        """The audit hook's callback: keep data files opened for reading."""
        if isinstance(mode, str) and any(c in mode for c in "wax+"):
            return
        if mode is None and isinstance(flags, int) and flags & _WRITE_FLAGS:
            return
        if isinstance(path, bytes):
            path = os.fsdecode(path)
        if not isinstance(path, str | os.PathLike):
            return
        resolved = os.path.realpath(path)
        if resolved in self.read:
            return
        p = Path(resolved)
        counted = (
            p in self.named
            or any(p.is_relative_to(f) for f in self.data_folders)
            or (
                p.is_relative_to(self.package)
                and "models" in p.relative_to(self.package).parts
                and p.suffix not in (".py", ".pyc")
            )
        )
        if counted and p.is_file():
            self.read[resolved] = p

    def data_files(self) -> list[dict[str, Any]]:
        rows = []
        for p in self.read.values():
            if not p.is_file():
                continue
            kind, shown = "file", str(p)
            for f in self.data_folders:
                if p.is_relative_to(f):
                    kind, shown = "data", str(p.relative_to(f))
                    break
            else:
                if p.is_relative_to(self.package):
                    kind, shown = "shipped", "src/factscout/" + str(p.relative_to(self.package))
            rows.append({"path": shown, "kind": kind, "bytes": p.stat().st_size, "sha256": self.cache.sha256(p)})
        return sorted(rows, key=lambda r: (r["kind"], r["path"]))

    # -- what the run writes
    def _target(self, name: str, file_name: str, results: Path | None) -> Path:
        folder = (results or RESULTS) / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / file_name
        self.run_files.setdefault(name, [])
        if path not in self.run_files[name]:
            self.run_files[name].append(path)
        return path

    @staticmethod
    def _write_gz(path: Path, lines: Iterable[str]) -> None:
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:  # same bytes each run
            for line in lines:
                f.write(line.encode("utf-8"))
        os.replace(tmp, path)

    def trec_run(self, name: str, label: str, rankings: Iterable[Any], *, results: Path | None = None) -> Path:
        tag = run_label(label)
        path = self._target(name, f"{tag}.trec.gz", results)
        from factscout.formats.trec import run_lines

        self._write_gz(path, run_lines(rankings, tag))
        return path

    def predictions(
        self, name: str, label: str, rows: Iterable[Mapping[str, Any]], *, results: Path | None = None
    ) -> Path:
        tag = run_label(label)
        path = self._target(name, f"{tag}.jsonl.gz", results)
        self._write_gz(path, (json.dumps(dict(r), ensure_ascii=False, sort_keys=True) + "\n" for r in rows))
        return path

    # -- the manifest
    def manifest(self, name: str, headline: Mapping[str, Any], *, results: Path | None = None) -> dict[str, Any]:
        folder = (results or RESULTS) / name
        finished = _now()
        data = self.data_files()
        self.cache.save()
        run_files = [
            {"path": p.name, "format": "trec" if p.name.endswith(".trec.gz") else "jsonl", "bytes": p.stat().st_size,
             "sha256": self.cache.sha256(p)}
            for p in self.run_files.get(name, []) if p.is_file() and p.parent == folder
        ]  # fmt: skip
        script = Path(self.argv[0]) if self.argv else Path("?")
        shown = script.resolve().relative_to(ROOT) if script.resolve().is_relative_to(ROOT) else script
        return {
            "format": MANIFEST_FORMAT,
            "name": name,
            "command": shlex.join(["python", str(shown), *self.argv[1:]]),
            "argv": self.argv,
            "started": self.started.isoformat(timespec="seconds"),
            "finished": finished.isoformat(timespec="seconds"),
            "seconds": round((finished - self.started).total_seconds(), 1),
            "python": {"version": platform.python_version(), "implementation": platform.python_implementation()},
            "packages": package_versions(),
            "git": self.git,
            "machine": machine_info(),
            "data": data,
            "run_files": run_files,
            "headline": dict(headline),
        }


def write_manifest(name: str, headline: Mapping[str, Any], *, results: Path | None = None) -> Path:
    """``<results>/<name>/manifest.json`` for this process's run (:data:`RUN`)."""
    folder = (results or RESULTS) / name
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "manifest.json"
    body = json.dumps(RUN.manifest(name, headline, results=results), indent=2, default=str) + "\n"
    path.write_text(body)
    return path


RUN = RunRecord()


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event == "open" and len(args) >= 3:
        with contextlib.suppress(Exception):  # never break the benchmark over its record
            RUN.note_open(args[0], args[1], args[2])


sys.addaudithook(_audit)


def quiet() -> None:
    """Benchmarks own the terminal like the CLI does: the same third-party silencing."""
    from factscout.cli.common import quiet_libraries

    quiet_libraries()


def timed(args: Sequence[str]) -> float:
    """Wall seconds of the command ``args`` run in a fresh process from the repository root; a
    failure stops the benchmark with the command's stderr."""
    started = time.perf_counter()
    done = subprocess.run(list(args), capture_output=True, text=True, cwd=ROOT)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args[3:])} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed


def markdown_table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    def cell(v: object) -> str:
        return f"{v:.4f}" if isinstance(v, float) else str(v)

    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def machine() -> str:
    return f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def publish(name: str, text: str, headline: dict, *, results: Path | None = None) -> Path:
    """Print the tables, write them to benchmarks/results/<name>.md and the run's manifest to
    benchmarks/results/<name>/manifest.json, end with one JSON line. Returns the manifest's path."""
    folder = results or RESULTS
    print(text)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text + "\n")
    manifest = write_manifest(name, headline, results=folder)
    sys.stdout.write(json.dumps(headline) + "\n")
    return manifest


def write_trec_run(name: str, label: str, rankings: Iterable[Any], *, results: Path | None = None) -> Path:
    """The rankings a benchmark scored, as ``<results>/<name>/<label>.trec.gz`` (TREC run format,
    ``qid Q0 docid rank score tag`` with ``label`` as the tag; factscout's ``read_run`` reads it)."""
    return RUN.trec_run(name, label, rankings, results=results)


def write_predictions(name: str, label: str, rows: Iterable[Mapping[str, Any]], *, results: Path | None = None) -> Path:
    """The labels a benchmark scored, one JSON object per line: ``<results>/<name>/<label>.jsonl.gz``."""
    return RUN.predictions(name, label, rows, results=results)


def add_data_flags(parser) -> None:  # type: ignore[no-untyped-def]
    """``--claims/--corpus/--qrels``: another split in BEIR form (read by :func:`claims_corpus_qrels`)."""
    parser.add_argument("--claims", help="claims JSONL (BEIR queries; default: SciFact train)")
    parser.add_argument("--corpus", help="BEIR corpus JSONL (default: the SciFact corpus)")
    parser.add_argument("--qrels", help="qrels TSV of those claims (default: SciFact train qrels)")


def claims_corpus_qrels(parser, args) -> tuple[list, list, dict, str]:  # type: ignore[no-untyped-def]
    """``--claims/--corpus/--qrels`` when given (all three), else SciFact train; only the claims
    with a relevant passage. Returns (claims, corpus, qrels, source name)."""
    from factscout.datasets import load_dataset
    from factscout.formats.beir import read_claims, read_corpus, read_qrels

    if args.claims or args.corpus or args.qrels:
        if not (args.claims and args.corpus and args.qrels):
            parser.error("--claims, --corpus and --qrels go together")
        claims, corpus = list(read_claims(args.claims)), list(read_corpus(args.corpus))
        qrels, source = read_qrels(args.qrels), Path(args.claims).name
    else:
        ds = load_dataset("scifact", "train")
        claims, corpus, qrels, source = list(ds.claims), list(ds.corpus), ds.qrels, "SciFact train"
    claims = [c for c in claims if any(r > 0 for r in qrels.get(c.claim_id, {}).values())]
    return claims, corpus, qrels, source
