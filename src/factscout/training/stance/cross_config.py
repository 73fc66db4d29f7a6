"""What the stages of ``factscout train stance-cross`` share (:mod:`factscout.training.stance.cross`
prepares and fits, :mod:`factscout.training.stance.cross_report` reports): the settings
(:class:`CrossConfig`), the names of the files the stages write, and the SciFact claims split into
fitting, dev and held-out parts with their pairs and claim-sentence cosines (:func:`scifact_parts`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from factscout.errors import InputError
from factscout.nn.backbone import FINETUNE_MODES
from factscout.nn.lora import LORA_TARGETS
from factscout.records import Claim
from factscout.training.base import described
from factscout.training.splits import SEED, split_scifact
from factscout.training.stance.data import Embeddings, Pair, scifact_pairs
from factscout.verify.stance import STANCE_LABELS

Say = Callable[[str], None]
CARD_FILE = "STANCE_CROSS_CARD.md"
METRICS_FILE = "stance_cross_metrics.json"
FIT_LOG = "stance_cross_fit.json"


def quiet(_: str) -> None:
    """The default ``say``: progress goes nowhere."""
    return None


@dataclass(frozen=True, slots=True)
class CrossConfig:
    """Data and optimisation settings of the stance cross-encoder."""

    seed: int = SEED
    epochs: int = 2
    lr: float | None = described(None, "default: 1e-3 with LoRA, 3e-5 for --finetune full")
    batch_size: int = 16
    max_length: int = 96
    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    warmup: float = 0.1
    weight_decay: float = 0.01
    hard_nei: int = 2
    random_nei: int = 1
    negation_share: float = 0.5
    covidfact: int = described(800, "COVID-Fact pairs of the built-in recipe (0: none)")
    dev_fraction: float = 0.15
    max_steps: int | None = described(None, "stop after this many steps (smoke runs)")
    limit_claims: int | None = described(None, "only N claims per part (smoke runs)")
    finetune: str = described("lora", "lora: adapters only; full: every weight but the vocabulary table")
    pairs: str | None = described(None, "train on a `factscout train stance-pairs` file instead of the recipe")
    max_pairs: int | None = described(None, "a label-balanced sample of that many training pairs")
    origins: tuple[str, ...] | None = described(
        None, "fit only on pairs from (or edited from) these datasets, comma-separated"
    )
    init: str | None = described(
        None, "fit: start from this stance cross-encoder file or stage 0's stance_nli.pt (same --finetune)"
    )
    calibrate: bool = described(True, "fit a temperature on the dev pairs")
    soup: tuple[int, ...] | None = described(
        None, "fit once per seed (comma-separated, e.g. 13,14,15) and average the fits' weights"
    )
    domains: bool = True  # choose the epoch on the mean dev macro-F1 of every domain (stance_domains), not SciFact's

    def __post_init__(self) -> None:
        if self.finetune not in FINETUNE_MODES:
            raise InputError(f"finetune {self.finetune!r} is not one of {', '.join(FINETUNE_MODES)}")

    @property
    def learning_rate(self) -> float:
        if self.lr is not None:
            return self.lr
        return 1e-3 if self.finetune == "lora" else 3e-5

    def network(self, backbone: str = "minilm") -> dict[str, Any]:
        """The network part of the config (what the model file needs to rebuild the network)."""
        return {
            "backbone": backbone,
            "finetune": self.finetune,
            "rank": self.rank,
            "alpha": self.alpha,
            "dropout": self.dropout,
            "targets": list(LORA_TARGETS),
            "num_labels": len(STANCE_LABELS),
        }


@dataclass(slots=True)
class Parts:
    """The SciFact claims split three ways, their pairs (every sentence of the cited abstracts)
    and the claim-sentence cosines of those pairs."""

    fit: list[Claim]
    dev: list[Claim]
    heldout: list[Claim]
    pairs: dict[str, list[Pair]]
    cosines: dict[str, np.ndarray]
    embeddings: Embeddings


def scifact_parts(config: CrossConfig, say: Say) -> Parts:
    """SciFact train split as the stance head splits it (held-out claims apart), the rest split again
    into fitting and dev parts (``config.dev_fraction``, seed + 1), each part's pairs embedded once."""
    from factscout.datasets import load_abstract_sentences, load_dataset
    from factscout.text.encoder import Encoder

    claims = list(load_dataset("scifact", "train").claims)
    abstracts = load_abstract_sentences()
    train, heldout = split_scifact(claims, seed=config.seed)
    fit, dev = split_scifact(train, heldout_fraction=config.dev_fraction, seed=config.seed + 1)
    if config.limit_claims is not None:
        fit, dev, heldout = fit[: config.limit_claims], dev[: config.limit_claims], heldout[: config.limit_claims]
    say(f"SciFact: {len(fit)} fitting, {len(dev)} dev, {len(heldout)} held-out claims")
    pairs = {name: scifact_pairs(part, abstracts) for name, part in (("fit", fit), ("dev", dev), ("heldout", heldout))}
    emb = Embeddings(Encoder())
    for group in pairs.values():
        emb.add([p.claim for p in group] + [p.sentence for p in group])
    cosines = {name: emb.cosines(group) for name, group in pairs.items()}
    return Parts(fit, dev, heldout, pairs, cosines, emb)
