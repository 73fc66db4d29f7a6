"""``factscout train stance-cross`` and ``factscout train rerank``: the trainers whose stages
(prepare, fit, score, report) can run one at a time through a bundle file, so that the fit
can run on a GPU machine that holds neither the datasets nor the installed backbone package."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from factscout.cli.common import friendly
from factscout.cli.train_app import Out, app, command_line, override, say, set_torch_threads, trainer_summary


class Stage(str, enum.Enum):
    ALL = "all"
    PREPARE = "prepare"
    FIT = "fit"
    REPORT = "report"


class Finetune(str, enum.Enum):
    LORA = "lora"
    FULL = "full"


@app.command("stance-cross", help=f"Train {trainer_summary('stance-cross')}.")
@friendly
def stance_cross(
    out: Out,
    epochs: Annotated[int, typer.Option()] = 2,
    lr: Annotated[float | None, typer.Option(help="default: 1e-3 with LoRA, 3e-5 for --finetune full")] = None,
    max_length: Annotated[int, typer.Option("--max-length")] = 96,
    batch_size: Annotated[int, typer.Option("--batch-size")] = 16,
    covidfact: Annotated[int, typer.Option(help="COVID-Fact pairs of the built-in recipe (0: none)")] = 800,
    finetune: Annotated[
        Finetune, typer.Option(help="lora: adapters only; full: every weight but the vocabulary table")
    ] = Finetune.LORA,
    pairs: Annotated[
        Path | None, typer.Option(help="train on a `factscout train stance-pairs` file instead of the recipe")
    ] = None,
    max_pairs: Annotated[
        int | None, typer.Option("--max-pairs", help="a label-balanced sample of that many training pairs")
    ] = None,
    calibrate: Annotated[bool, typer.Option(help="fit a temperature on the dev pairs")] = True,
    origins: Annotated[
        str | None, typer.Option(help="fit only on pairs from (or edited from) these datasets, comma-separated")
    ] = None,
    init: Annotated[
        Path | None, typer.Option(help="fit: start from this stance cross-encoder file (same --finetune)")
    ] = None,
    max_steps: Annotated[
        int | None, typer.Option("--max-steps", help="stop after this many steps (smoke runs)")
    ] = None,
    limit_claims: Annotated[
        int | None, typer.Option("--limit-claims", help="only N claims per part (smoke runs)")
    ] = None,
    seed: Annotated[int, typer.Option()] = 13,
    soup: Annotated[
        str | None,
        typer.Option(help="fit once per seed (comma-separated, e.g. 13,14,15) and average the fits' weights"),
    ] = None,
    stage: Annotated[
        Stage, typer.Option(help="run one stage through --bundle (fit needs only torch, e.g. on a GPU machine)")
    ] = Stage.ALL,
    bundle: Annotated[Path | None, typer.Option(help="the prepared data (JSON) the stages share")] = None,
    device: Annotated[str, typer.Option(help="torch device for fit and report (cpu, cuda, mps)")] = "cpu",
    backbone: Annotated[
        str | None, typer.Option(help="fit: a folder holding the backbone (default: the installed package)")
    ] = None,
    note_file: Annotated[
        Path | None, typer.Option("--note-file", help="report: a paragraph for the model card (how the stages ran)")
    ] = None,
) -> None:
    import json

    from factscout.training.stance import cross as trainer

    set_torch_threads(2)
    config = trainer.CrossConfig(
        seed=seed,
        epochs=epochs,
        lr=lr,
        batch_size=batch_size,
        max_length=max_length,
        covidfact=covidfact,
        max_steps=max_steps,
        limit_claims=limit_claims,
        finetune=finetune.value,
        pairs=str(pairs) if pairs is not None else None,
        max_pairs=max_pairs,
        calibrate=calibrate,
        origins=tuple(o.strip() for o in origins.split(",") if o.strip()) if origins else None,
        init=str(init) if init is not None else None,
        soup=_seeds(soup),
    )
    command = command_line("stance-cross")
    if stage is Stage.ALL:
        trainer.run(out, config, say=say, command=command)
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


@app.command("rerank", help=f"Train, evaluate and ship {trainer_summary('rerank')}.")
@friendly
def rerank(
    out: Out,
    quick: Annotated[bool, typer.Option("--quick", help="seconds-long smoke run on the scifact_mini fixture")] = False,
    seed: Annotated[int, typer.Option()] = 13,
    epochs: Annotated[float | None, typer.Option()] = None,
    negatives: Annotated[int | None, typer.Option()] = None,
    max_length: Annotated[int | None, typer.Option("--max-length")] = None,
    lr: Annotated[float | None, typer.Option()] = None,
    stage: Annotated[
        RerankStage,
        typer.Option(help="run one stage through --bundle (fit and score need only torch, e.g. on a GPU machine)"),
    ] = RerankStage.ALL,
    bundle: Annotated[Path | None, typer.Option(help="the prepared data (JSON) the stages share")] = None,
    scores: Annotated[
        Path | None, typer.Option(help="cross-encoder scores (.npz) written by score, read by report")
    ] = None,
    splits: Annotated[str, typer.Option(help="what the score stage scores")] = "dev,heldout",
    note_file: Annotated[
        Path | None, typer.Option("--note-file", help="report: a paragraph for the model card (how the stages ran)")
    ] = None,
    device: Annotated[str, typer.Option(help="torch device for fit and score")] = "cpu",
    backbone: Annotated[
        str | None, typer.Option(help="a folder holding the backbone (default: the installed package)")
    ] = None,
) -> None:
    import json
    from dataclasses import replace

    import numpy as np

    from factscout.formats.npz import save_npz
    from factscout.rerank.cross_encoder import MODEL_FILE
    from factscout.training.rerank import trainer

    config = replace(trainer.QUICK if quick else trainer.TrainConfig(), seed=seed)
    config = override(config, epochs=epochs, negatives=negatives, max_length=max_length, lr=lr)
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
