"""Train stance cross-encoders on a lent GPU within a fixed time: one prepared run, its results
brought back as files (``python -m factscout.training.stance_gpu``).

A GPU machine here is lent for about 15 minutes, start-up and transfers counted, and carries at
most 64 MiB each way. So everything it needs travels in one folder made on this machine by
``scripts/gpu-stance.sh prepare``: the stance bundle (``factscout train stance-cross --stage
prepare``, gzipped) and all-MiniLM-L6-v2 in fp16 (the package's safetensors rounded; 45 MB, read
through ``$FACTSCOUT_MINILM_DIR``). The deltas each model file stores are taken from that fp16
copy; read against the package's fp32 weights they differ from the trained network by the fp16
rounding of the backbone (at most 2^-11 of each weight), far below the int4 rounding of the
deltas themselves.

The plan is a list of jobs run in order until the deadline: a job whose estimated time (from the
pairs per second measured so far) no longer fits is skipped and logged, so what comes back is
always whole. Each job is a full fine-tune (:func:`factscout.training.stance.cross.fit`) in one
stage or two (all the pairs, then the in-domain origins from the first stage's weights), with a
filter on the pairs (leave one origin or one source out, a label-balanced sample). Every epoch
is scored on each domain's dev pairs (:mod:`factscout.training.stance.domains`) and the best
epoch of the mean is kept. ``--dry-run`` runs the same plan on the CPU on a few pairs and steps
(the test's way to check the script before a GPU is at hand).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

IN_DOMAIN = ("scifact", "checkcovid", "citint", "healthver")
"""The origins of stage 2: claims checked against scientific or health evidence, the job of ``check``."""


@dataclass(frozen=True)
class Job:
    """One model to train: ``stage1`` on the filtered pairs, then (``stage2``) on the in-domain ones."""

    name: str
    max_length: int = 128
    stage1_epochs: int = 1
    stage2_epochs: int = 2
    stage2: bool = True
    leave_out: str | None = None  # an origin, or a source prefix such as "consistency"
    max_pairs: int | None = None
    keep: bool = True  # bring the model file back (else only its log)
    extra: dict[str, Any] = field(default_factory=dict)


LOSO = ("none", "scifact", "covidfact", "averitec", "checkthat", "checkcovid", "citint", "healthver", "anli", "sick",
        "consistency")  # fmt: skip
"""What the leave-one-out jobs leave out: an origin (with its edits and consistency pairs), or the
consistency pairs of every origin; ``none`` is the reference fit on the same budget."""
DEFAULT_PLAN = (
    Job("main128", max_length=128),
    Job("main256", max_length=256),
    *(Job(f"loso-{x}", stage2=False, leave_out=x, max_pairs=16000, keep=False, extra={"batch_size": 64}) for x in LOSO),
)
"""In order of need: the two candidate models (inputs cut at 128 and 256 tokens), then the
leave-one-source-out fits (one stage, a label-balanced sample of 16,000 pairs each)."""


def _filtered(bundle: dict[str, Any], job: Job) -> dict[str, Any]:
    rows = bundle["pairs"]
    x = job.leave_out
    if x and x != "none":
        rows = [r for r in rows if r[4] != x and not str(r[3]).startswith(f"{x}:")]
    return {**bundle, "pairs": rows}


def run_plan(
    bundle: dict[str, Any],
    plan: Sequence[Job],
    out: Path,
    *,
    deadline: float,
    device: str,
    dry_run: bool = False,
    say: Any = print,
) -> dict[str, Any]:
    """Run ``plan`` until ``deadline`` (a ``time.monotonic()`` value); write kept models as
    ``out/<job>.npz`` and every job's log to ``out/logs.json`` (rewritten after each job)."""
    import tempfile

    from factscout.training.stance.cross import FIT_LOG, CrossConfig, fit

    work = Path(tempfile.mkdtemp(prefix="stance-gpu-"))  # not under out: only whole results travel back
    out.mkdir(parents=True, exist_ok=True)
    logs: dict[str, Any] = {"jobs": {}, "skipped": [], "device": device}
    rate: float | None = None  # pair-epochs per second, measured
    for job in plan:
        data = _filtered(bundle, job)
        n = len(data["pairs"]) if job.max_pairs is None else min(job.max_pairs, len(data["pairs"]))
        n2 = sum(1 for r in data["pairs"] if r[4] in IN_DOMAIN) if job.stage2 else 0
        work_units = (n * job.stage1_epochs + n2 * job.stage2_epochs) * (job.max_length / 128) ** 0.5
        left = deadline - time.monotonic()
        if rate is not None and work_units / rate * 1.15 + 10 > left:
            logs["skipped"].append({"job": job.name, "estimated_s": round(work_units / rate), "left_s": round(left)})
            say(f"{job.name}: skipped (needs about {work_units / rate:.0f} s, {left:.0f} s left)")
            continue
        started = time.monotonic()
        steps = {"max_steps": 3} if dry_run else {}
        base = CrossConfig(**{"finetune": "full", "batch_size": 32, "max_length": job.max_length, **steps, **job.extra})
        s1 = replace(base, epochs=job.stage1_epochs, max_pairs=job.max_pairs)
        say(f"{job.name}: stage 1 on {n} pairs")
        w1 = fit(data, s1, work / f"{job.name}-s1", say, device=device)
        log = {"stage1": json.loads((work / f"{job.name}-s1" / FIT_LOG).read_text())}
        final = w1
        if job.stage2:
            present = tuple(o for o in IN_DOMAIN if any(r[4] == o for r in data["pairs"]))
            s2 = replace(base, epochs=job.stage2_epochs, lr=2e-5, origins=present, init=str(w1))
            say(f"{job.name}: stage 2 on {n2} in-domain pairs")
            final = fit(data, s2, work / f"{job.name}-s2", say, device=device)
            log["stage2"] = json.loads((work / f"{job.name}-s2" / FIT_LOG).read_text())
        seconds = time.monotonic() - started
        rate = work_units / max(seconds, 1e-6) if not dry_run else rate
        log |= {"seconds": round(seconds, 1), "job": job.__dict__}
        logs["jobs"][job.name] = log
        if job.keep:
            shutil.copy(final, out / f"{job.name}.npz")
            if job.stage2:
                shutil.copy(w1, out / f"{job.name}-s1.npz")
        (out / "logs.json").write_text(json.dumps(logs, indent=1, default=str) + "\n")
        say(f"{job.name}: done in {seconds:.0f} s")
    shutil.rmtree(work, ignore_errors=True)
    (out / "logs.json").write_text(json.dumps(logs, indent=1, default=str) + "\n")
    return logs


def loso_table(logs: dict[str, Any]) -> str:
    """The leave-one-out jobs of a run's ``logs.json`` as a markdown table: dev macro-F1 per domain
    and the mean, with each job's difference from the reference fit (``loso-none``)."""
    jobs = {k.removeprefix("loso-"): v["stage1"] for k, v in logs["jobs"].items() if k.startswith("loso-")}
    if "none" not in jobs:
        return ""
    best = {name: max(log["dev_per_domain"], key=lambda d: sum(d.values())) for name, log in jobs.items()}
    domains = list(best["none"])
    ref = sum(best["none"].values()) / len(domains)
    lines = [
        "| left out | pairs | " + " | ".join(domains) + " | mean | vs all |",
        "|---|---:|" + "---:|" * (len(domains) + 2),
    ]
    for name, scores in best.items():
        mean = sum(scores.values()) / len(domains)
        label = "nothing (reference)" if name == "none" else name
        cells = " | ".join(f"{scores[d]:.4f}" for d in domains)
        lines.append(f"| {label} | {jobs[name]['pairs']:,} | {cells} | {mean:.4f} | {mean - ref:+.4f} |")
    return "\n".join(lines)


def read_bundle(path: Path) -> dict[str, Any]:
    """A stance bundle, gzipped (``.gz``) or not."""
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as f:
        return dict(json.load(f))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bundle", type=Path)
    parser.add_argument("--table", type=Path, help="print the leave-one-out table of a run's logs.json and stop")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--seconds", type=float, default=480.0, help="stop starting jobs after this long")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--jobs", default="", help="comma-separated job names of the default plan (default: all)")
    parser.add_argument("--dry-run", action="store_true", help="3 steps a stage on a few pairs (a CPU check)")
    args = parser.parse_args(argv)
    if args.table is not None:
        print(loso_table(json.loads(args.table.read_text())))
        return 0
    if args.bundle is None:
        parser.error("--bundle is required")
    deadline = time.monotonic() + args.seconds
    bundle = read_bundle(args.bundle)
    plan = [j for j in DEFAULT_PLAN if not args.jobs or j.name in args.jobs.split(",")]
    if args.dry_run:
        plan = [replace(j, max_pairs=64, max_length=32) for j in plan]
    if args.out is None:
        parser.error("--out is required")
    args.out.mkdir(parents=True, exist_ok=True)
    run_plan(bundle, plan, args.out, deadline=deadline, device=args.device, dry_run=args.dry_run)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
