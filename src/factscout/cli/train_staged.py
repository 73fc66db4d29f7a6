"""``factscout train stance-cross`` and ``factscout train rerank``: the trainers whose stages
(prepare, fit, score, report) can run one at a time through a bundle file, so that the fit
can run on a GPU machine that holds neither the datasets nor the installed backbone package."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Any

import typer

from factscout.cli.train_app import OUT, command_line, say, set_torch_threads, trainer_summary
from factscout.cli.train_options import CommandSpec, comma_tuple, option, quick_or_full, setting


class Stage(str, enum.Enum):
    ALL = "all"
    PREPARE = "prepare"
    FIT = "fit"
    REPORT = "report"
    NLI = "nli"


class Finetune(str, enum.Enum):
    LORA = "lora"
    FULL = "full"


def _stance_cross(
    config: Any,
    *,
    out: Path,
    stage: Stage,
    bundle: Path | None,
    device: str,
    backbone: str | None,
    note_file: Path | None,
) -> None:
    import json

    from factscout.training.stance import cross as trainer

    set_torch_threads(2)
    command = command_line("stance-cross")
    if stage is Stage.ALL:
        trainer.run(out, config, say=say, command=command)
        return
    if stage is Stage.NLI:
        from factscout.training.stance import nli_stage

        nli_stage.run(out, config, say=say, device=device, backbone=backbone)
        return
    if stage is Stage.REPORT:
        from factscout.training.stance.cross_report import report

        note = note_file.read_text().strip() if note_file else None
        report(out / trainer.MODEL_FILE.name, config, out, say=say, command=command, note=note, device=device)
        return
    if bundle is None:
        raise typer.BadParameter(f"--stage {stage.value} needs --bundle")
    if stage is Stage.PREPARE:
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_text(json.dumps(trainer.prepare(config, say)))
        return
    trainer.fit(json.loads(bundle.read_text()), config, out, say, device=device, backbone=backbone)


def _seeds(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        raise typer.BadParameter(f"--soup takes comma-separated integer seeds, not {text!r}") from None


class RerankStage(str, enum.Enum):
    ALL = "all"
    PREPARE = "prepare"
    FIT = "fit"
    SCORE = "score"
    REPORT = "report"


def _rerank(
    config: Any,
    *,
    out: Path,
    quick: bool,
    stage: RerankStage,
    bundle: Path | None,
    scores: Path | None,
    splits: str,
    note_file: Path | None,
    device: str,
    backbone: str | None,
) -> None:
    import json

    import numpy as np

    from factscout.formats.npz import save_npz
    from factscout.rerank.cross_encoder import MODEL_FILE
    from factscout.training.rerank import trainer

    set_torch_threads(2)
    command = command_line("rerank")
    step = stage.value
    if step == "all":
        trainer.run(out, config, say=say, command=command)
        return
    if bundle is None:
        raise typer.BadParameter(f"--stage {step} needs --bundle")
    weights = out / MODEL_FILE.name
    if step == "prepare":
        bundle.parent.mkdir(parents=True, exist_ok=True)
        bundle.write_text(json.dumps(trainer.prepare(config, say)))
        return
    data = json.loads(bundle.read_text())
    if step == "fit":
        trainer.fit(data, config, out, say, device=device, backbone=backbone)
    elif step == "score":
        if scores is None:
            raise typer.BadParameter("--stage score needs --scores")
        wanted = [s.strip() for s in splits.split(",") if s.strip()]
        found = trainer.score(data, weights, config.top_n, say, splits=wanted, device=device, backbone=backbone)
        save_npz(scores, found, compressed=False)
    else:
        if scores is None:
            raise typer.BadParameter("--stage report needs --scores")
        with np.load(scores, allow_pickle=False) as npz:
            found = {k: np.asarray(npz[k]) for k in npz}
        note = note_file.read_text().strip() if note_file else None
        trainer.report(data, weights, found, out, command=command, say=say, note=note)


_STAGE_HELP = (
    "run one stage through --bundle (fit needs only torch, e.g. on a GPU machine); nli: stage 0, NLI "
    "pre-training on the general NLI pairs (resumes from --out's checkpoint; then --init OUT/stance_nli.pt)"
)
_NOTE_HELP = "report: a paragraph for the model card (how the stages ran)"
SPECS: dict[str, CommandSpec] = {
    "stance-cross": CommandSpec(
        (
            OUT,
            setting("epochs"),
            setting("lr"),
            setting("max_length", "--max-length"),
            setting("batch_size", "--batch-size"),
            setting("covidfact"),
            setting("finetune", type=Finetune, to_cli=Finetune),
            setting("pairs", type=Path | None, parse=str),
            setting("max_pairs", "--max-pairs"),
            setting("calibrate"),
            setting("origins", type=str | None, parse=lambda text: comma_tuple(text) or None),
            setting("init", type=Path | None, parse=str),
            setting("max_steps", "--max-steps"),
            setting("limit_claims", "--limit-claims"),
            setting("seed"),
            setting("soup", type=str | None, parse=_seeds),
            option("stage", Stage, Stage.ALL, help=_STAGE_HELP),
            option("bundle", Path | None, None, help="the prepared data (JSON) the stages share"),
            option("device", str, "cpu", help="torch device for fit and report (cpu, cuda, mps)"),
            option(
                "backbone", str | None, None, help="fit: a folder holding the backbone (default: the installed package)"
            ),
            option("note_file", Path | None, None, "--note-file", help=_NOTE_HELP),
        ),
        _stance_cross,
        f"Train {trainer_summary('stance-cross')}.",
    ),
    "rerank": CommandSpec(
        (
            OUT,
            option("quick", bool, False, "--quick", help="seconds-long smoke run on the scifact_mini fixture"),
            setting("seed"),
            setting("epochs", override=True),
            setting("negatives", override=True),
            setting("max_length", "--max-length", override=True),
            setting("lr", override=True),
            option(
                "stage",
                RerankStage,
                RerankStage.ALL,
                help="run one stage through --bundle (fit and score need only torch, e.g. on a GPU machine)",
            ),
            option("bundle", Path | None, None, help="the prepared data (JSON) the stages share"),
            option("scores", Path | None, None, help="cross-encoder scores (.npz) written by score, read by report"),
            option("splits", str, "dev,heldout", help="what the score stage scores"),
            option("note_file", Path | None, None, "--note-file", help=_NOTE_HELP),
            option("device", str, "cpu", help="torch device for fit and score"),
            option("backbone", str | None, None, help="a folder holding the backbone (default: the installed package)"),
        ),
        _rerank,
        f"Train, evaluate and ship {trainer_summary('rerank')}.",
        base=quick_or_full("factscout.training.rerank.trainer"),
    ),
}
