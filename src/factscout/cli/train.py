"""``factscout train <model>``: one typer sub-command per trainer (:data:`~factscout.training.base.TRAINERS`).

Each sub-command parses its options and calls its trainer module, imported only when the
sub-command runs (``factscout train --help`` needs neither torch nor the data). Option
defaults are written here as literals so the help needs no trainer import;
``tests/cli/test_train.py`` checks they equal each trainer's config defaults.
"""

from __future__ import annotations

import enum
import logging
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from factscout.cli import train_staged  # noqa: F401  (registers stance-cross and rerank)
from factscout.cli.common import friendly, read_claims
from factscout.cli.train_app import Out, app, command_line, override, say, set_torch_threads, trainer_summary
from factscout.errors import InputError, UnknownName

# training.stance_pairs.SOURCES and the consistency defaults as literals (a test keeps them in step)
PAIR_SOURCES = ("scifact", "covidfact", "averitec", "checkthat", "checkcovid", "citint", "healthver", "anli", "sick")
CONSISTENCY_CLAIMS = 800
UNRELATED_OVERLAP = 0.1
UNRELATED_PARTNERS = 2


@app.command("stance", help=f"Train {trainer_summary('stance')}; tune the Quin+ selector and count rule.")
@friendly
def stance(
    out: Out,
    sources: Annotated[str, typer.Option(help="comma-separated, from scifact,covidfact,averitec")] = "scifact",
    hidden: Annotated[int, typer.Option(help="hidden units (0: logistic regression)")] = 256,
    epochs: Annotated[int, typer.Option()] = 20,
    lr: Annotated[float, typer.Option()] = 3e-3,
    seed: Annotated[int, typer.Option()] = 13,
    no_negation: Annotated[bool, typer.Option("--no-negation", help="no negation-augmented refuting pairs")] = False,
    ablations: Annotated[
        bool, typer.Option("--ablations", help="also train the data-source / logistic-regression variants (slower)")
    ] = False,
) -> None:
    from factscout.training.stance.head import HeadConfig, run

    set_torch_threads(2)
    config = HeadConfig(hidden=hidden, epochs=epochs, lr=lr, seed=seed)
    run(
        out,
        sources=[s.strip() for s in sources.split(",") if s.strip()],
        config=config,
        ablations=ablations,
        negation=not no_negation,
        seed=seed,
        say=say,
        command=command_line("stance"),
    )


@app.command("selector", help=f"Train, evaluate and ship {trainer_summary('selector')}.")
@friendly
def selector(
    out: Annotated[Path, typer.Option("--out", help="folder for the weights, MODEL_CARD.md, metrics.json")],
    quick: Annotated[bool, typer.Option("--quick", help="smoke run: few claims, 3 epochs (not for shipping)")] = False,
    epochs: Annotated[int | None, typer.Option(help="maximum epochs for model selection")] = None,
) -> None:
    from factscout.training.selector.trainer import MAX_EPOCHS, TrainConfig, run

    config = TrainConfig(max_epochs=epochs or (3 if quick else MAX_EPOCHS))
    run(out, quick=quick, config=config)


@app.command("classifier", help=f"Train {trainer_summary('classifier')} on AVeriTeC train.")
@friendly
def classifier(
    out: Annotated[Path, typer.Option("--out", help="folder for the weights, metrics and card")],
    folds: Annotated[int, typer.Option()] = 5,
    seed: Annotated[int, typer.Option()] = 13,
) -> None:
    from factscout.training.verdict.classifier import MODEL_NAME, train

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    metrics = train(out, folds=folds, seed=seed)
    best = metrics["cv"]["classifier (claim + top-3 evidence > 0.5)"]
    print(
        f"wrote {out / MODEL_NAME} ({metrics['bytes']} bytes, sha256 {metrics['sha256'][:12]}...): "
        f"CV 4-class macro-F1 {best['4-class']['macro-F1']:.3f}, 3-class {best['3-class']['macro-F1']:.3f}"
    )


_QGEN_MODEL = str(Path(__file__).parent.parent / "plan" / "models" / "qgen.json")  # plan.qgen.DEFAULT_MODEL_PATH


@app.command("qgen", help=f"Train {trainer_summary('qgen')} on AVeriTeC train + ClaimDecomp dev + QuanTemp test.")
@friendly
def qgen(
    out: Annotated[str, typer.Option(help="where to write the model JSON")] = _QGEN_MODEL,
    data: Annotated[str | None, typer.Option(help="data folder (default: $FACTSCOUT_DATA or ../shared/data)")] = None,
) -> None:
    from factscout.nn import sha256_of
    from factscout.training.qgen.trainer import train_default

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    path = train_default(out, root=data)
    logging.getLogger("factscout.training.qgen.trainer").info("wrote %s (sha256 %s)", path, sha256_of(path))


class DenseStage(str, enum.Enum):
    ALL = "all"
    PREPARE = "prepare"
    FIT = "fit"
    ENCODE = "encode"
    REPORT = "report"


@app.command("dense", help=f"Fine-tune {trainer_summary('dense')} and measure it on held-out SciFact.")
@friendly
def dense(
    out: Annotated[Path, typer.Option("--out", help="folder for the adapter, model card and metrics")],
    quick: Annotated[bool, typer.Option("--quick", help="seconds-long smoke run on the scifact_mini fixture")] = False,
    seed: Annotated[int, typer.Option()] = 13,
    epochs: Annotated[int | None, typer.Option()] = None,
    lr: Annotated[float | None, typer.Option()] = None,
    batch_size: Annotated[int | None, typer.Option("--batch-size")] = None,
    hard_negatives: Annotated[int | None, typer.Option("--hard-negatives")] = None,
    sources: Annotated[str | None, typer.Option(help="comma-separated: scifact[,covidfact][,averitec_beir]")] = None,
    stage: Annotated[DenseStage, typer.Option()] = DenseStage.ALL,
    bundle: Annotated[Path | None, typer.Option(help="the prepared data (.json.gz) the stages share")] = None,
    embeddings: Annotated[
        Path | None, typer.Option(help="encode: output .npz; report: fine-tuned corpus embeddings")
    ] = None,
    base: Annotated[bool, typer.Option("--base", help="encode: without the adapter")] = False,
    heldout: Annotated[bool, typer.Option("--heldout", help="encode: also score the held-out claims")] = False,
    adapter: Annotated[
        Path | None, typer.Option(help="encode/report: the adapter file (default: OUT/dense_minilm_lora.npz)")
    ] = None,
    note_file: Annotated[
        Path | None, typer.Option("--note-file", help="report: a paragraph for the model card")
    ] = None,
    device: Annotated[str, typer.Option(help="torch device for fit and encode")] = "cpu",
    backbone: Annotated[str | None, typer.Option(help="a folder holding the backbone (default: the package)")] = None,
    threads: Annotated[int, typer.Option(help="torch CPU threads")] = 2,
) -> None:
    from dataclasses import replace

    from factscout.formats.npz import save_npz
    from factscout.retrieve.adapter import MODEL_FILE
    from factscout.training.dense import trainer

    config = replace(trainer.QUICK if quick else trainer.TrainConfig(), seed=seed)
    config = override(config, epochs=epochs, lr=lr, batch_size=batch_size, hard_negatives=hard_negatives)
    if sources:
        config = replace(config, sources=tuple(s.strip() for s in sources.split(",") if s.strip()))
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


@app.command("rewrite", help=f"Train {trainer_summary('rewrite')} (Kazemi et al., AACL 2023, Section 3.3).")
@friendly
def rewrite(
    trajectories: Annotated[Path, typer.Option(help="BFS trajectories JSONL")],
    out: Annotated[Path, typer.Option("--out", help="folder for policy.json + weights.safetensors")],
    policy: Annotated[str, typer.Option(help="dt | classifier | pointer (token-pointing, learned stop)")] = "dt",
    reward: Annotated[str, typer.Option(help="dense | sparse (dt, and pointer with --history)")] = "dense",
    history: Annotated[
        int,
        typer.Option(
            help="pointer: a decision transformer over this many last steps drives the token-pointing head (0: none)"
        ),
    ] = 0,
    target_return: Annotated[
        float, typer.Option("--target-return", help="pointer with --history: the return it is conditioned on")
    ] = 0.5,
    seed: Annotated[int, typer.Option()] = 0,
    epochs: Annotated[int, typer.Option()] = 30,
    batch_size: Annotated[int, typer.Option("--batch-size")] = 32,
    lr: Annotated[float | None, typer.Option(help="default 1e-4 (dt), 1e-3 (classifier)")] = None,
    encoder: Annotated[str, typer.Option(help="state encoder: minilm | hashing")] = "minilm",
    finetune_encoder: Annotated[
        bool, typer.Option("--finetune-encoder", help="train MiniLM with the policy (slow on CPU)")
    ] = False,
    corpus: Annotated[
        Path | None,
        typer.Option("--corpus", help="pointer: the searched corpus (BEIR JSONL); its idf becomes a token feature"),
    ] = None,
    layers: Annotated[int, typer.Option(help="dt layers")] = 6,
    heads: Annotated[int, typer.Option(help="dt attention heads")] = 8,
    hidden: Annotated[int | None, typer.Option(help="dt width (768) or classifier hidden units (256)")] = None,
    max_steps: Annotated[
        int | None,
        typer.Option(
            "--max-steps",
            help="dt: context (edits per trajectory, default 4); pointer: step limit (default: the 95th "
            "percentile of the trajectories' lengths)",
        ),
    ] = None,
    claims: Annotated[
        Path | None,
        typer.Option(
            "--claims",
            help="pointer: the claims JSONL the trajectories were made from; claims the manifest "
            "(<trajectories>.claims.jsonl) marks at_max / no_improvement with a reward > 0 teach it to stop",
        ),
    ] = None,
    threads: Annotated[
        int | None, typer.Option(help="torch CPU threads (1 is fastest for small models on busy cores)")
    ] = None,
) -> None:
    from factscout.nn import require_torch
    from factscout.rewrite.pointer import PointerConfig
    from factscout.rewrite.policy import REWARD_MODES, ClassifierConfig, DtConfig, save_policy
    from factscout.rewrite.trajectories import read_trajectories
    from factscout.training.rewrite.trainer import (
        POLICY_TRAINERS,
        TrainResult,
        TrainSettings,
        train_classifier,
        train_decision_transformer,
    )

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    if threads:
        require_torch("learned rewrite policies").set_num_threads(threads)
    if policy not in (*POLICY_TRAINERS, "pointer"):
        raise UnknownName("trainable rewrite policy", policy, (*POLICY_TRAINERS, "pointer"))
    if reward not in REWARD_MODES:
        raise UnknownName("reward mode", reward, REWARD_MODES)
    found = read_trajectories(trajectories) if trajectories.is_file() else None
    if found is None:
        raise InputError(f"no trajectories file at {trajectories}")
    if not found:
        raise InputError(f"{trajectories} holds no trajectories")
    default_lr = 1e-4 if policy == "dt" else 1e-3
    settings = TrainSettings(epochs=epochs, batch_size=batch_size, lr=lr or default_lr, seed=seed)
    result: TrainResult
    if policy == "pointer":
        from factscout.formats.beir import read_corpus
        from factscout.rewrite.keywords import IdfTable
        from factscout.training.rewrite.pointer import pointer_stop_claims, step_limit, train_pointer

        pconfig = PointerConfig(
            hidden=hidden or 128,
            max_steps=max_steps or step_limit(found),
            encoder=encoder,
            finetune_encoder=finetune_encoder,
            idf=corpus is not None,
            history=history,
            reward=reward,  # type: ignore[arg-type]
            target_return=target_return,
        )
        stops = pointer_stop_claims(trajectories, read_claims(claims)) if claims else []
        idf = IdfTable.from_passages(read_corpus(corpus)) if corpus else None
        result = train_pointer(found, stops, pconfig, settings, idf=idf)
    elif policy == "dt":
        config = DtConfig(
            hidden_size=hidden or 768,
            n_layer=layers,
            n_head=heads,
            max_steps=max_steps or 4,
            reward=reward,  # type: ignore[arg-type]
            encoder=encoder,
            finetune_encoder=finetune_encoder,
        )
        result = train_decision_transformer(found, config, settings)
    else:
        cconfig = ClassifierConfig(
            hidden=256 if hidden is None else hidden, encoder=encoder, finetune_encoder=finetune_encoder
        )
        result = train_classifier(found, cconfig, settings)
    folder = save_policy(result.policy, out)
    print(
        f"wrote {result.policy.name} policy to {folder}: {result.examples} training sequences, "
        f"loss {result.losses[0]:.4f} -> {result.losses[-1]:.4f} in {result.seconds:.1f}s"
    )


@app.command(
    "rewrite-ranker",
    help=f"Train {trainer_summary('rewrite-ranker')}: it searches the endpoint for candidate keyword queries "
    "and keeps the one its models predict best.",
)
@friendly
def rewrite_ranker(
    claims: Annotated[Path, typer.Option("--claims", "-i", "--input", help="training claims JSONL (BEIR queries)")],
    qrels: Annotated[Path, typer.Option(help="their qrels (BEIR TSV or TREC)")],
    corpus: Annotated[Path, typer.Option(help="the searched corpus (BEIR JSONL)")],
    out: Annotated[Path, typer.Option("--out", "-o", "--output", help="folder for policy.json + ranker.npz")],
    retriever: Annotated[
        str, typer.Option(help="the endpoint: bm25-and | bm25-plain | bm25 | dense | ...")
    ] = "bm25-and",
    folds: Annotated[int, typer.Option(help="cross-validation folds (out-of-fold features; target and margin)")] = 5,
    semantic: Annotated[
        str,
        typer.Option(
            help="an encoder (minilm, minilm-int8, a sentence-transformers name or folder) with which the ranker "
            "also reads how close the returned passages are to the claim; lexical: by the words they share "
            "(for a dense endpoint, whose own scores are MiniLM's); lexical-idf: shared words weighted by their idf; "
            "'' for none"
        ),
    ] = "",
    booster: Annotated[
        str, typer.Option(help="exact (GradientBoostingRegressor) | hist (histogram boosting, ~10x faster)")
    ] = "exact",
    consensus: Annotated[
        bool,
        typer.Option(
            "--consensus/--no-consensus",
            help="also read how each candidate's results agree with all the candidates' fused results",
        ),
    ] = False,
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    from factscout.formats.beir import read_corpus
    from factscout.formats.trec import read_qrels
    from factscout.retrieve import build_retriever
    from factscout.rewrite.policy import save_policy
    from factscout.rewrite.ranker import RankerConfig
    from factscout.training.rewrite.ranker import RankerSettings, train_ranker

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    passages = list(read_corpus(corpus))
    endpoint = build_retriever(passages, retriever, show_progress=False)
    settings = RankerSettings(folds=folds, seed=seed, booster=booster)
    config = RankerConfig(retriever=retriever, semantic=semantic, consensus=consensus)
    policy = train_ranker(
        read_claims(claims), read_qrels(qrels), {p.passage_id: p for p in passages}, endpoint, config, settings
    )
    folder = save_policy(policy, out)
    t = policy.training
    print(
        f"wrote the ranker policy to {folder}: {t['claims']} claims, {t['candidates']} candidates; "
        f"cross-validated AP@50 {t['cross-validated AP@50']} (the claim {t['claim AP@50']}, "
        f"the oracle over the candidates {t['oracle AP@50 over the candidates']}) in {t['seconds']} s"
    )


@app.command("stance-pairs", help="Build the stance training pairs (every dataset, augmented) as JSONL.")
@friendly
def stance_pairs(
    out: Annotated[Path, typer.Option("--out", help="the pairs file (JSONL); counts go to <out>.counts.json")],
    sources: Annotated[
        str,
        typer.Option(help="comma-separated, from " + ",".join(PAIR_SOURCES) + " (default: all)"),
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
        sources=[s.strip() for s in sources.split(",") if s.strip()],
        augment=not no_augment,
        augmentations=None if augmentations is None else [a.strip() for a in augmentations.split(",") if a.strip()],
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


# --- verdict-aggregator (the verdict method `learned`; one block, kept at the end) ---
_AGG = (
    "Train the learned verdict aggregator on SciFact claims run through `check`; held-out macro-F1 vs the count rule."
)
_OOF = "with the stance head: the training part's stances from out-of-fold heads"


@app.command("verdict-aggregator", help=_AGG)
@friendly
def verdict_aggregator(
    out: Out,
    stance: Annotated[str | None, typer.Option(help="stance model (default: check's default)")] = None,
    k: Annotated[int, typer.Option("--k", min=1, help="stances read per claim (top-k by passage rank)")] = 10,
    features: Annotated[
        Path | None, typer.Option(help="cache of the pipeline pass (JSONL): reused, else written")
    ] = None,
    retriever: Annotated[str, typer.Option(help="retriever over the SciFact corpus")] = "bm25",
    limit_claims: Annotated[int | None, typer.Option("--limit-claims", min=1, help="N claims per part")] = None,
    oof_head: Annotated[bool, typer.Option("--oof-head/--no-oof-head", help=_OOF)] = True,
    seed: Annotated[int, typer.Option()] = 13,
) -> None:
    from factscout.training.verdict.aggregator import AggregatorConfig, run

    set_torch_threads(2)
    config = AggregatorConfig(seed, k, stance, retriever, oof_head=oof_head, limit_claims=limit_claims)
    run(out, config, features=features, say=say, command=command_line("verdict-aggregator"))
