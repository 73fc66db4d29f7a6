"""``factscout train rewrite`` and ``factscout train rewrite-ranker``: the learned rewrite
policies. Their options come from the trainer's settings (``TrainSettings``, ``RankerSettings``)
and, for the network, from the policy's own config (``DtConfig``, ``PointerConfig``,
``RankerConfig``), whose defaults they show."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from factscout.cli.common import read_claims
from factscout.cli.train_app import trainer_summary
from factscout.cli.train_options import CommandSpec, field_default, option, setting
from factscout.errors import InputError, UnknownName
from factscout.rewrite.networks import ClassifierConfig, DtConfig
from factscout.rewrite.pointer import PointerConfig
from factscout.rewrite.ranker import RankerConfig

CLASSIFIER_LR = 1e-3
"""The learning rate of the classifier and pointer policies (the dt's is ``TrainSettings.lr``)."""


def _rewrite_base(given: Mapping[str, Any]) -> Any:
    from factscout.training.rewrite.trainer import TrainSettings

    return TrainSettings() if given["policy"] == "dt" else TrainSettings(lr=CLASSIFIER_LR)


def _rewrite(
    settings: Any,
    *,
    trajectories: Path,
    out: Path,
    policy: str,
    reward: str,
    history: int,
    target_return: float,
    encoder: str,
    finetune_encoder: bool,
    corpus: Path | None,
    layers: int,
    heads: int,
    hidden: int | None,
    max_steps: int | None,
    claims: Path | None,
    threads: int | None,
) -> None:
    from factscout.nn import require_torch
    from factscout.rewrite.policy import REWARD_MODES, save_policy
    from factscout.rewrite.trajectories import read_trajectories
    from factscout.training.rewrite.trainer import (
        POLICY_TRAINERS,
        TrainResult,
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
    result: TrainResult
    if policy == "pointer":
        from factscout.formats.beir import read_corpus
        from factscout.rewrite.keywords import IdfTable
        from factscout.training.rewrite.pointer import pointer_stop_claims, step_limit, train_pointer

        pconfig = PointerConfig(
            hidden=hidden or field_default(PointerConfig, "hidden"),
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
            hidden_size=hidden or field_default(DtConfig, "hidden_size"),
            n_layer=layers,
            n_head=heads,
            max_steps=max_steps or field_default(DtConfig, "max_steps"),
            reward=reward,  # type: ignore[arg-type]
            encoder=encoder,
            finetune_encoder=finetune_encoder,
        )
        result = train_decision_transformer(found, config, settings)
    else:
        cconfig = ClassifierConfig(
            hidden=field_default(ClassifierConfig, "hidden") if hidden is None else hidden,
            encoder=encoder,
            finetune_encoder=finetune_encoder,
        )
        result = train_classifier(found, cconfig, settings)
    folder = save_policy(result.policy, out)
    print(
        f"wrote {result.policy.name} policy to {folder}: {result.examples} training sequences, "
        f"loss {result.losses[0]:.4f} -> {result.losses[-1]:.4f} in {result.seconds:.1f}s"
    )


def _rewrite_ranker(
    settings: Any,
    *,
    claims: Path,
    qrels: Path,
    corpus: Path,
    out: Path,
    retriever: str,
    semantic: str,
    consensus: bool,
) -> None:
    from factscout.formats.beir import read_corpus
    from factscout.formats.trec import read_qrels
    from factscout.retrieve import build_retriever
    from factscout.rewrite.policy import save_policy
    from factscout.training.rewrite.ranker import train_ranker

    logging.basicConfig(level=logging.INFO, format="%(message)s")
    passages = list(read_corpus(corpus))
    endpoint = build_retriever(passages, retriever, show_progress=False)
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


_SEMANTIC = (
    "an encoder (minilm, minilm-int8, a sentence-transformers name or folder) with which the ranker also reads "
    "how close the returned passages are to the claim; lexical: by the words they share (for a dense endpoint, "
    "whose own scores are MiniLM's); lexical-idf: shared words weighted by their idf; '' for none"
)
_MAX_STEPS = (
    "dt: context (edits per trajectory, default 4); pointer: step limit (default: the 95th percentile of the "
    "trajectories' lengths)"
)
_CLAIMS = (
    "pointer: the claims JSONL the trajectories were made from; claims the manifest "
    "(<trajectories>.claims.jsonl) marks at_max / no_improvement with a reward > 0 teach it to stop"
)
SPECS: dict[str, CommandSpec] = {
    "rewrite": CommandSpec(
        (
            option("trajectories", Path, ..., help="BFS trajectories JSONL"),
            option("out", Path, ..., "--out", help="folder for policy.json + weights.safetensors"),
            option("policy", str, "dt", help="dt | classifier | pointer (token-pointing, learned stop)"),
            setting("reward", of=DtConfig, type=str, help="dense | sparse (dt, and pointer with --history)"),
            setting(
                "history",
                of=PointerConfig,
                help="pointer: a decision transformer over this many last steps drives the token-pointing head "
                "(0: none)",
            ),
            setting(
                "target_return",
                "--target-return",
                of=PointerConfig,
                help="pointer with --history: the return it is conditioned on",
            ),
            setting("seed"),
            setting("epochs"),
            setting("batch_size", "--batch-size"),
            setting("lr", override=True, parse=lambda lr: lr or None, help="default 1e-4 (dt), 1e-3 (classifier)"),
            setting("encoder", of=DtConfig, help="state encoder: minilm | hashing"),
            setting(
                "finetune_encoder", "--finetune-encoder", of=DtConfig, help="train MiniLM with the policy (slow on CPU)"
            ),
            option(
                "corpus",
                Path | None,
                None,
                "--corpus",
                help="pointer: the searched corpus (BEIR JSONL); its idf becomes a token feature",
            ),
            setting("n_layer", name="layers", of=DtConfig, help="dt layers"),
            setting("n_head", name="heads", of=DtConfig, help="dt attention heads"),
            option("hidden", int | None, None, help="dt width (768) or classifier hidden units (256)"),
            option("max_steps", int | None, None, "--max-steps", help=_MAX_STEPS),
            option("claims", Path | None, None, "--claims", help=_CLAIMS),
            option("threads", int | None, None, help="torch CPU threads (1 is fastest for small models on busy cores)"),
        ),
        _rewrite,
        f"Train {trainer_summary('rewrite')} (Kazemi et al., AACL 2023, Section 3.3).",
        base=_rewrite_base,
    ),
    "rewrite-ranker": CommandSpec(
        (
            option("claims", Path, ..., "--claims", "-i", "--input", help="training claims JSONL (BEIR queries)"),
            option("qrels", Path, ..., help="their qrels (BEIR TSV or TREC)"),
            option("corpus", Path, ..., help="the searched corpus (BEIR JSONL)"),
            option("out", Path, ..., "--out", "-o", "--output", help="folder for policy.json + ranker.npz"),
            option("retriever", str, "bm25-and", help="the endpoint: bm25-and | bm25-plain | bm25 | dense | ..."),
            setting("folds"),
            setting("semantic", of=RankerConfig, help=_SEMANTIC),
            setting("booster"),
            setting(
                "consensus",
                "--consensus/--no-consensus",
                of=RankerConfig,
                help="also read how each candidate's results agree with all the candidates' fused results",
            ),
            setting("seed"),
        ),
        _rewrite_ranker,
        f"Train {trainer_summary('rewrite-ranker')}: it searches the endpoint for candidate keyword queries "
        "and keeps the one its models predict best.",
    ),
}
