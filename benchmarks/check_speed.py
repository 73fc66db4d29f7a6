"""CPU per claim of ``factscout check`` against the path before sentence work moved to index time
(every sentence of every passage read embedded per claim, fp32 models), in one run:

1. *before*: an index without sentence data, ``--no-fast`` (fp32 query encoder and stance);
2. the same index with stored sentence vectors, ``--no-fast``: the fp32 path, whose reports must
   equal row 1's (same verdict and the same evidence passages and sentences, stance
   probabilities within 1e-3: stored vectors are float16);
3. stored sentence vectors with the default int8 inference (the stance cross-encoder, and a
   hybrid index's queries: ``CheckSettings.fast=None``), compared with row 2 the same way.

Both indexes hold the same passages and retriever files; the second generation adds the sentence
data (``factscout index`` stores it by default). Each row is the real CLI in a fresh process, over
``--small`` and over ``--large`` claims; CPU seconds per claim is
(CPU(large) - CPU(small)) / (large - small), so start-up and model loading cancel out.

    python benchmarks/check_speed.py [--index .factscout/scifact-index] [--claims FILE]
        [--small 20] [--large 300]

``--index`` is an existing index (the demo's hybrid SciFact index by default, built when missing);
``--claims`` a BEIR queries JSONL of another split (default: SciFact train claims).
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from _common import markdown_table, publish, quiet

ROOT = Path(__file__).resolve().parents[1]


def cpu_of_children() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_check(index: Path, claims: Path, out: Path, *extra: str) -> tuple[float, float]:
    """CPU and wall seconds of one ``factscout check -i claims -o out`` process."""
    cmd = [sys.executable, "-c", "from factscout.cli.main import app; app()", "-q", "check"]
    cmd += ["--index", str(index), "--input", str(claims), "--output", str(out), *extra]
    cpu, wall = cpu_of_children(), time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return cpu_of_children() - cpu, time.perf_counter() - wall


def compare(slow: list[dict], fast: list[dict]) -> dict[str, float]:
    """Share of claims whose verdict, evidence (passages and sentences) and stances agree."""
    same_label = same_evidence = 0
    max_diff = 0.0
    for a, b in zip(slow, fast, strict=True):
        same_label += a["verdict"]["label"] == b["verdict"]["label"]

        def key(report: dict) -> list:
            return [(e["passage_id"], [(s["index"], s["stance"]) for s in e["sentences"]]) for e in report["evidence"]]

        same_evidence += key(a) == key(b)
        if key(a) == key(b):
            for ea, eb in zip(a["evidence"], b["evidence"], strict=True):
                for sa, sb in zip(ea["sentences"], eb["sentences"], strict=True):
                    diffs = [abs(x - y) for x, y in zip(sa["probabilities"], sb["probabilities"], strict=True)]
                    max_diff = max([max_diff, *diffs])
    n = len(slow)
    return {"same_verdict": same_label / n, "same_evidence": same_evidence / n, "max_probability_diff": max_diff}


def used_vectors(reports: list[dict]) -> str:
    """The sentence vectors a path's reports say they read (``provenance.sentence_vectors``), counted."""
    counts = Counter(str(r.get("provenance", {}).get("sentence_vectors", "not recorded")) for r in reports)
    return ", ".join(f"{name} ({n})" if len(counts) > 1 else name for name, n in counts.most_common())


def main() -> None:
    quiet()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, default=ROOT / ".factscout" / "scifact-index")
    parser.add_argument("--claims", type=Path, help="BEIR queries JSONL (default: SciFact train claims)")
    parser.add_argument("--small", type=int, default=20)
    parser.add_argument("--large", type=int, default=300)
    args = parser.parse_args()
    from factscout.datasets import load_dataset
    from factscout.formats.beir import read_queries, write_queries
    from factscout.retrieve import build_index, load_index, save_index
    from factscout.retrieve.index import index_sentences, read_manifest
    from factscout.retrieve.sentences import load_sentence_data

    if not args.index.exists():
        build_index(load_dataset("scifact", "train").corpus, args.index, "hybrid", show_progress=True)
    queries = list(read_queries(args.claims)) if args.claims else load_dataset("scifact", "train").queries()
    if len(queries) < args.large or not 0 < args.small < args.large:
        raise SystemExit(f"need 0 < --small < --large <= {len(queries)} claims")
    work = Path(tempfile.mkdtemp(prefix="check-speed-"))
    try:
        gen, manifest = read_manifest(args.index)
        retriever = load_index(args.index)
        old, new = work / "without-sentences", work / "with-sentences"
        save_index(retriever, old, source=manifest.get("source"))
        stored = load_sentence_data(gen, len(retriever.store))
        t0 = time.perf_counter()
        if stored is None:
            stored = index_sentences(retriever.store.passages, show_progress=True)
        build_s = time.perf_counter() - t0
        save_index(retriever, new, source=manifest.get("source"), sentences=stored)
        files = {}
        for n in (args.small, args.large):
            files[n] = work / f"claims-{n}.jsonl"
            write_queries(files[n], queries[:n])
        cpu: dict[str, dict[int, tuple[float, float]]] = {}
        reports: dict[str, list[dict]] = {}
        for name, index, extra in (
            ("without", old, ["--no-fast"]),
            ("with", new, ["--no-fast"]),
            ("int8", new, []),
        ):
            cpu[name] = {}
            for n in (args.small, args.large):
                out = work / f"{name}-{n}.jsonl"
                cpu[name][n] = run_check(index, files[n], out, *extra)
                print(f"{name} sentence data, {n} claims: {cpu[name][n][0]:.1f} s CPU", file=sys.stderr, flush=True)
            reports[name] = [
                json.loads(line) for line in (work / f"{name}-{args.large}.jsonl").read_text().splitlines()
            ]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    span = args.large - args.small
    per = {k: (v[args.large][0] - v[args.small][0]) / span for k, v in cpu.items()}
    wall = {k: (v[args.large][1] - v[args.small][1]) / span for k, v in cpu.items()}
    agree = compare(reports["without"], reports["with"])
    agree8 = compare(reports["with"], reports["int8"])
    used = {name: used_vectors(rs) for name, rs in reports.items()}  # what each path's reports say they read
    rows = [
        ["sentences embedded per claim, fp32 (before)", used["without"], f"{per['without']:.3f}",
         f"{wall['without']:.3f}", "1.00"],
        ["stored sentence vectors, fp32 (`--no-fast`)", used["with"], f"{per['with']:.3f}", f"{wall['with']:.3f}"],
        ["stored sentence vectors, int8 default", used["int8"], f"{per['int8']:.3f}", f"{wall['int8']:.3f}"],
    ]  # fmt: skip
    for row, name in zip(rows[1:], ("with", "int8"), strict=True):
        row.append(f"{per[name] / per['without']:.3f}")
    n_sent = len(stored.spans)
    text = "\n".join(
        [
            f"### check CPU per claim ({len(retriever.store):,} passages, {n_sent:,} stored sentences;"
            f" claims {args.small} -> {args.large})",
            "",
            markdown_table(
                ["path", "sentence vectors read", "CPU s / claim", "wall s / claim", "ratio to before"], rows
            ),
            "",
            "An index stores its sentence vectors from the int8 encoder (what the default path embeds with); the fp32"
            " path (`--no-fast`) cannot read them, as its reports' provenance says, and embeds each claim's sentences"
            " as before.",
            "",
            f"Reports with stored vectors vs embedded per claim, over {args.large} claims: same verdict"
            f" {agree['same_verdict']:.1%}, same evidence and stances {agree['same_evidence']:.1%}, largest stance"
            f" probability difference {agree['max_probability_diff']:.2g}. Int8 default vs fp32, both with stored"
            f" vectors: same verdict {agree8['same_verdict']:.1%}, same evidence and stances"
            f" {agree8['same_evidence']:.1%}, largest stance probability difference"
            f" {agree8['max_probability_diff']:.2g} (quality: `benchmarks/fast_stance.py`). Sentence data build:"
            f" {build_s:.0f} s (0 when the index already had it).",
        ]
    )
    headline = {
        "cpu_per_claim_before": round(per["without"], 4),
        "cpu_per_claim_stored_sentences": round(per["with"], 4),
        "cpu_per_claim_int8_default": round(per["int8"], 4),
        "ratio": round(per["with"] / per["without"], 3),
        "ratio_int8_default": round(per["int8"] / per["without"], 3),
        **{k: round(v, 4) for k, v in agree.items()},
        **{f"int8_{k}": round(v, 4) for k, v in agree8.items()},
        "passages": len(retriever.store),
        "sentences": n_sent,
    }
    publish("check_speed", text, headline)


if __name__ == "__main__":
    main()
