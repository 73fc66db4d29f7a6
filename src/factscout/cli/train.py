"""``factscout train <model>``: one typer sub-command per trainer (:data:`~factscout.training.base.TRAINERS`).

Each sub-command is generated (:mod:`factscout.cli.train_options`) from its ``TRAINERS`` entry's
config dataclass and the spec here: the options that are no config field and the body that
calls the trainer module (imported only when the sub-command runs; building the commands imports
the config dataclasses, never torch or the data). ``stance-cross`` and ``rerank`` are in
:mod:`factscout.cli.train_staged`, ``rewrite`` and ``rewrite-ranker`` in
:mod:`factscout.cli.train_rewrite`; ``stance-pairs`` (a data builder, no model) is written here.
"""

from __future__ import annotations

import enum
import logging
import time
from collections.abc import Mapping
from importlib import import_module
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from factscout.cli import train_rewrite, train_staged
from factscout.cli.common import friendly
from factscout.cli.train_app import OUT, app, command_line, say, set_torch_threads, trainer_summary
from factscout.cli.train_options import CommandSpec, add_command, comma_tuple, option, quick_or_full, setting
from factscout.plan.qgen import DEFAULT_MODEL_PATH
from factscout.training.base import TRAINERS
from factscout.training.stance.nli_data import EXTRA_SOURCES as EXTRA_PAIR_SOURCES
from factscout.training.stance.pairs import SOURCES as PAIR_SOURCES
from factscout.training.stance.sources import CONSISTENCY_CLAIMS, UNRELATED_OVERLAP, UNRELATED_PARTNERS


def _stance(config: Any, *, out: Path, sources: str, no_negation: bool, ablations: bool) -> None:
    from factscout.training.stance.head import run

    set_torch_threads(2)
    run(
        out,
        sources=list(comma_tuple(sources)),
        config=config,
        ablations=ablations,
        negation=not no_negation,
        seed=config.seed,
        say=say,
        command=command_line("stance"),
    )


def _selector_base(given: Mapping[str, Any]) -> Any:
    from factscout.training.selector.trainer import TrainConfig

    return TrainConfig(max_epochs=3) if given["quick"] else TrainConfig()


def _selector(config: Any, *, out: Path, quick: bool) -> None:
    from factscout.training.selector.trainer import run

    run(out, quick=quick, config=config)


def _classifier(config: Any, *, out: Path) -> None:
    from factscout.training.verdict.classifier import MODEL_NAME, train

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    metrics = train(out, folds=config.folds, seed=config.seed)
    best = metrics["cv"]["classifier (claim + top-3 evidence > 0.5)"]
    print(
        f"wrote {out / MODEL_NAME} ({metrics['bytes']} bytes, sha256 {metrics['sha256'][:12]}...): "
        f"CV 4-class macro-F1 {best['4-class']['macro-F1']:.3f}, 3-class {best['3-class']['macro-F1']:.3f}"
    )


def _qgen(config: None, *, out: str, data: str | None) -> None:
    from factscout.hashing import file_sha256
    from factscout.training.qgen.trainer import train_default

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = train_default(out, root=data)
    logging.getLogger("factscout.training.qgen.trainer").info("wrote %s (sha256 %s)", path, file_sha256(path))


class DenseStage(str, enum.Enum):
    ALL = "all"
    PREPARE = "prepare"
    FIT = "fit"
    ENCODE = "encode"
    REPORT = "report"


def _dense(
    config: Any,
    *,
    out: Path,
    quick: bool,
    stage: DenseStage,
    bundle: Path | None,
    embeddings: Path | None,
    base: bool,
    heldout: bool,
    adapter: Path | None,
    note_file: Path | None,
    device: str,
    backbone: str | None,
    threads: int,
) -> None:
    from factscout.formats.npz import save_npz
    from factscout.retrieve.adapter import MODEL_FILE
    from factscout.training.dense import trainer

    set_torch_threads(threads)
    command = command_line("dense")
    step = stage.value
    adapter_file = adapter or out / MODEL_FILE.name
    if step == "all":
        started = time.perf_counter()
        data = trainer.prepare(config, say)
        trainer.fit(data, config, out, say)
        trainer.report(data, adapter_file, out, command=command, say=say, total_seconds=time.perf_counter() - started)
        return
    if bundle is None:
        raise typer.BadParameter(f"--stage {step} needs --bundle")
    if step == "prepare":
        trainer.write_bundle(trainer.prepare(config, say), bundle)
        return
    data = trainer.read_bundle(bundle)
    if step == "fit":
        trainer.fit(data, config, out, say, device=device, backbone=backbone)
    elif step == "encode":
        if embeddings is None:
            raise typer.BadParameter("--stage encode needs --embeddings")
        found = trainer.encode(data, None if base else adapter_file, say, device=device, backbone=backbone)
        try:
            for split in ("dev", "heldout" if heldout else None):
                if split:
                    say(f"{split}: {trainer.score_embeddings(data, found, split)}")
        except ImportError as exc:  # a GPU machine without the evaluation library
            say(f"not scored here ({exc})")
        embeddings.parent.mkdir(parents=True, exist_ok=True)
        save_npz(embeddings, found, compressed=False)
    else:
        note = note_file.read_text().strip() if note_file else None
        trainer.report(data, adapter_file, out, command=command, say=say, embeddings=embeddings, note=note)


def _verdict_aggregator(config: Any, *, out: Path, features: Path | None) -> None:
    from factscout.training.verdict.aggregator import run

    set_torch_threads(2)
    run(out, config, features=features, say=say, command=command_line("verdict-aggregator"))


def _claim_match(config: Any, *, out: Path, data: Path | None) -> None:
    from factscout.training.claim_match.train import run

    set_torch_threads(2)
    run(out, config, root=data, say=say, command=command_line("claim-match"))


def _checkworthy(config: Any, *, out: Path, data: Path | None) -> None:
    from factscout.training.checkworthy.trainer import run

    set_torch_threads(2)
    run(out, config, root=data, say=say, command=command_line("checkworthy"))


def _floats(text: str) -> tuple[float, ...]:
    from factscout.errors import InputError

    try:
        return tuple(float(part) for part in comma_tuple(text))
    except ValueError:
        raise InputError(f"--cs must be comma-separated numbers, got {text!r}") from None


def _no_zero(value: int) -> int | None:
    """``--epochs 0`` means no override (the default of the run, quick or full)."""
    return value or None


SPECS: dict[str, CommandSpec] = {
    "stance": CommandSpec(
        (
            OUT,
            option("sources", str, "scifact", help="comma-separated, from scifact,covidfact,averitec"),
            setting("hidden"),
            setting("epochs"),
            setting("lr"),
            setting("seed"),
            option("no_negation", bool, False, "--no-negation", help="no negation-augmented refuting pairs"),
            option(
                "ablations",
                bool,
                False,
                "--ablations",
                help="also train the data-source / logistic-regression variants (slower)",
            ),
        ),
        _stance,
        f"Train {trainer_summary('stance')}; tune the Quin+ selector and count rule.",
    ),
    "selector": CommandSpec(
        (
            option("out", Path, ..., "--out", help="folder for the weights, MODEL_CARD.md, metrics.json"),
            option("quick", bool, False, "--quick", help="smoke run: few claims, 3 epochs (not for shipping)"),
            setting("max_epochs", name="epochs", override=True, parse=_no_zero),
        ),
        _selector,
        f"Train, evaluate and ship {trainer_summary('selector')}.",
        base=_selector_base,
    ),
    "classifier": CommandSpec(
        (
            option("out", Path, ..., "--out", help="folder for the weights, metrics and card"),
            setting("folds"),
            setting("seed"),
        ),
        _classifier,
        f"Train {trainer_summary('classifier')} on AVeriTeC train.",
    ),
    "qgen": CommandSpec(
        (
            option("out", str, str(DEFAULT_MODEL_PATH), help="where to write the model JSON"),
            option("data", str | None, None, help="data folder (default: $FACTSCOUT_DATA or ../shared/data)"),
        ),
        _qgen,
        f"Train {trainer_summary('qgen')} on AVeriTeC train + ClaimDecomp dev + QuanTemp test.",
    ),
    "dense": CommandSpec(
        (
            option("out", Path, ..., "--out", help="folder for the adapter, model card and metrics"),
            option("quick", bool, False, "--quick", help="seconds-long smoke run on the scifact_mini fixture"),
            setting("seed"),
            setting("epochs", override=True),
            setting("lr", override=True),
            setting("batch_size", "--batch-size", override=True),
            setting("hard_negatives", "--hard-negatives", override=True),
            setting("sources", type=str, override=True, parse=lambda text: comma_tuple(text) or None),
            option("stage", DenseStage, DenseStage.ALL),
            option("bundle", Path | None, None, help="the prepared data (.json.gz) the stages share"),
            option("embeddings", Path | None, None, help="encode: output .npz; report: fine-tuned corpus embeddings"),
            option("base", bool, False, "--base", help="encode: without the adapter"),
            option("heldout", bool, False, "--heldout", help="encode: also score the held-out claims"),
            option(
                "adapter",
                Path | None,
                None,
                help="encode/report: the adapter file (default: OUT/dense_minilm_lora.npz)",
            ),
            option("note_file", Path | None, None, "--note-file", help="report: a paragraph for the model card"),
            option("device", str, "cpu", help="torch device for fit and encode"),
            option("backbone", str | None, None, help="a folder holding the backbone (default: the package)"),
            option("threads", int, 2, help="torch CPU threads"),
        ),
        _dense,
        f"Fine-tune {trainer_summary('dense')} and measure it on held-out SciFact.",
        base=quick_or_full("factscout.training.dense.trainer"),
    ),
    "verdict-aggregator": CommandSpec(
        (
            OUT,
            setting("stance"),
            setting("k", "--k", min=1),
            option("features", Path | None, None, help="cache of the pipeline pass (JSONL): reused, else written"),
            setting("retriever"),
            setting("limit_claims", "--limit-claims", min=1),
            setting("oof_head", "--oof-head/--no-oof-head"),
            setting("seed"),
        ),
        _verdict_aggregator,
        "Train the learned verdict aggregator on SciFact claims run through `check`; "
        "held-out macro-F1 vs the count rule.",
    ),
    **train_staged.SPECS,
    **train_rewrite.SPECS,
    "claim-match": CommandSpec(
        (
            OUT,
            setting("cs", type=str, parse=_floats, to_cli=lambda cs: ",".join(f"{c:g}" for c in cs)),
            setting("depth"),
            setting("precision"),
            setting("seed"),
            option("data", Path | None, None, help="data folder (default: $FACTSCOUT_DATA or ../shared/data)"),
        ),
        _claim_match,
        f"Train, choose and write {trainer_summary('claim-match')}.",
    ),
    "checkworthy": CommandSpec(
        (
            option("out", Path, ..., "--out", help="folder for the models, manifest, metrics and card"),
            setting("kinds", type=str, parse=comma_tuple, to_cli=",".join),
            setting("cs", type=str, parse=_floats, to_cli=lambda cs: ",".join(f"{c:g}" for c in cs)),
            setting("ct21_1b_weight", "--ct21-1b-weight"),
            setting("tweet_weight", "--tweet-weight"),
            setting("with_ct21_1b", "--with-ct21-1b/--without-ct21-1b"),
            setting("epochs"),
            setting("lr"),
            setting("finetune"),
            setting("max_train", "--max-train"),
            setting("max_length", "--max-length"),
            setting("limit"),
            setting("seed"),
            option("data", Path | None, None, help="data folder (default: $FACTSCOUT_DATA or ../shared/data)"),
        ),
        _checkworthy,
        f"Train {trainer_summary('checkworthy')} on ClaimBuster + CheckThat! 2021/2022 task 1; ship the better "
        "by dev F1.",
    ),
}


def config_of(name: str) -> type | None:
    """The config dataclass that ``TRAINERS[name]`` names (None: the trainer has none)."""
    info = TRAINERS[name]
    return None if info.config is None else getattr(import_module(info.module), info.config)


for _name in TRAINERS:
    add_command(app, _name, SPECS[_name], config_of(_name))


@app.command("stance-pairs", help="Build the stance training pairs (every dataset, augmented) as JSONL.")
@friendly
def stance_pairs(
    out: Annotated[Path, typer.Option("--out", help="the pairs file (JSONL); counts go to <out>.counts.json")],
    sources: Annotated[
        str,
        typer.Option(
            help="comma-separated, from "
            + ",".join(PAIR_SOURCES)
            + " (the default) and "
            + ",".join(EXTRA_PAIR_SOURCES)
            + " (general NLI and claim-evidence sets; stage 0 of stance-cross "
            "trains on the general NLI ones)"
        ),
    ] = ",".join(PAIR_SOURCES),
    consistency: Annotated[
        int, typer.Option(help="claims per source paired with themselves and with an unrelated claim (0: none)")
    ] = CONSISTENCY_CLAIMS,
    unrelated_overlap: Annotated[
        float, typer.Option(help="most content-word overlap (Jaccard) of an unrelated claim; 0: no shared word")
    ] = UNRELATED_OVERLAP,
    unrelated_partners: Annotated[
        int, typer.Option(help="unrelated claims per consistency claim")
    ] = UNRELATED_PARTNERS,
    no_augment: Annotated[bool, typer.Option("--no-augment", help="no counterfactual pairs")] = False,
    augmentations: Annotated[
        str | None,
        typer.Option(
            help="comma-separated edits, from direction,association,negation,unnegation,number,antonym,subject,"
            "both,reflip (default: all but both,reflip)"
        ),
    ] = None,
    seed: Annotated[int, typer.Option()] = 0,
    data: Annotated[Path | None, typer.Option(help="the datasets folder (default: ../shared/data)")] = None,
    exclude: Annotated[
        Path | None,
        typer.Option(help="a file of claim ids (one a line) to leave out too, beside the SciFact held-out and dev"),
    ] = None,
) -> None:
    from rich.table import Table

    from factscout.errors import InputError
    from factscout.records import STANCE_LABELS
    from factscout.training.stance.pairs import build_stance_pairs, counts_of, default_exclusions, write_stance_pairs

    started = time.perf_counter()
    excluded = None
    if exclude is not None:
        if not exclude.is_file():
            raise InputError(f"--exclude: no such file: {exclude}")
        excluded = default_exclusions(data) | {ln.strip() for ln in exclude.read_text().splitlines() if ln.strip()}
    pairs = build_stance_pairs(
        data,
        sources=list(comma_tuple(sources)),
        augment=not no_augment,
        augmentations=None if augmentations is None else list(comma_tuple(augmentations)),
        seed=seed,
        exclude_claim_ids=excluded,
        consistency=consistency,
        unrelated_overlap=unrelated_overlap,
        unrelated_partners=unrelated_partners,
        say=say,
    )
    path, counts_path = write_stance_pairs(out, pairs)
    table = Table(title=f"{len(pairs)} stance pairs ({time.perf_counter() - started:.0f}s)")
    table.add_column("source")
    for label in (*STANCE_LABELS, "total"):
        table.add_column(label, justify="right")
    counts = counts_of(pairs)
    for source, row in counts.items():
        table.add_row(source, *(str(row[label]) for label in STANCE_LABELS), str(sum(row.values())))
    totals = [sum(row[label] for row in counts.values()) for label in STANCE_LABELS]
    table.add_row("total", *map(str, totals), str(sum(totals)), style="bold")
    Console().print(table)
    say(f"wrote {path} and {counts_path}")
