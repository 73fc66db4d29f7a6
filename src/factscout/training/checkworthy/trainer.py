"""``factscout train checkworthy --out DIR``: train the linear model and/or the MiniLM fine-tune,
measure both on the same dev and test sets, ship the better by dev F1 as the default.

Recipe (seeded): the training, dev and test sets of :mod:`factscout.training.checkworthy.data`
(overlaps with dev and test removed from training); the linear model's L2 strength chosen on dev
(:data:`CheckworthyConfig.cs`); the fine-tune's best epoch and temperature on dev
(:mod:`.finetune`); each model's threshold = the one maximising the unweighted mean of the
check-worthy F1 over the three dev sets (tweets, transcripts, ClaimBuster groundtruth). The test
sets are scored once, after every choice. A run with one kind keeps the other kind's file and
figures already in ``DIR`` (so the fine-tune can run apart from the linear model), and the default
is re-chosen over both.

Written into ``DIR``: ``checkworthy_linear.npz`` / ``checkworthy_minilm.npz``, ``checkworthy.json``
(which is the default, every file's sha256), ``checkworthy_trained.npz`` (hashes of the training
sentences' overlap keys: the benchmark refuses a test file that shares them), ``metrics.json`` and
``CHECKWORTHY_CARD.md``.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.datasets.checkworthy import CheckworthySentence
from factscout.datasets.checkworthy_overlap import overlap_keys
from factscout.training.base import described
from factscout.training.checkworthy.card import FILES
from factscout.training.checkworthy.data import TRAIN_PARTS, build_splits, counts, embed
from factscout.training.checkworthy.evaluation import best_threshold, summary
from factscout.training.checkworthy.finetune import FinetuneConfig

Say = Callable[[str], None]
KINDS = ("linear", "minilm")
TRAINED_KEYS = "checkworthy_trained.npz"


@dataclass(frozen=True, slots=True)
class CheckworthyConfig:
    """The options of ``factscout train checkworthy`` (the CLI derives its options from them)."""

    kinds: tuple[str, ...] = described(KINDS, "comma-separated model kinds to train: linear, minilm")
    cs: tuple[float, ...] = described((0.3, 1.0, 3.0), "linear: L2 inverse strengths tried (chosen on dev F1)")
    ct21_1b_weight: float = described(0.3, "weight of a CheckThat! 2021 1B transcript line against other sentences")
    tweet_weight: float = described(1.0, "weight of a CheckThat! 2022 1B training tweet against other sentences")
    with_ct21_1b: bool = described(True, "train on CheckThat! 2021 1B train transcripts too")
    epochs: int = described(2, "minilm: epochs")
    lr: float = described(5e-5, "minilm: peak learning rate (about 5e-4 for lora)")
    finetune: str = described("full", "minilm: full (every weight but the vocabulary) or lora")
    max_train: int = described(16_000, "minilm: training sentences sampled per epoch, by part weight (0: all)")
    max_length: int = described(64, "minilm: tokens per sentence")
    limit: int = described(0, "at most this many sentences per data part (0: all; a smoke run)")
    seed: int = described(13, "random seed")


def part_weights(config: CheckworthyConfig) -> dict[str, float]:
    """The relative weight of a sentence of each training dataset (others: 1)."""
    return {"checkthat2021_1b": config.ct21_1b_weight, "checkthat2022_1b": config.tweet_weight}


def key_hash(key: str) -> int:
    """The 63-bit hash of an overlap key that ``checkworthy_trained.npz`` stores."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:8], "big") >> 1


def trained_hashes(sentences: Sequence[CheckworthySentence]) -> np.ndarray:
    return np.unique(np.array([key_hash(k) for s in sentences for k in overlap_keys(s)], dtype=np.int64))


def shared_with_training(sentences: Sequence[CheckworthySentence], keys_file: str | Path | None = None) -> list[str]:
    """Ids of the ``sentences`` that a model's training data holds (the same tweet or normalised
    text, by the hashes in ``keys_file``; default: the shipped ``checkworthy_trained.npz``)."""
    from factscout.claims.checkworthy import MODEL_DIR

    with np.load(Path(keys_file) if keys_file is not None else MODEL_DIR / TRAINED_KEYS) as data:
        known = set(data["keys"].tolist())
    return [s.sentence_id for s in sentences if any(key_hash(k) in known for k in overlap_keys(s))]


def refuse_trained(sentences: Sequence[CheckworthySentence], keys_file: str | Path | None = None) -> None:
    """An :class:`~factscout.datasets.checkworthy.Overlap` error when ``sentences`` (a set to
    score) share sentences with the model's training data."""
    from factscout.datasets.checkworthy_overlap import Overlap

    shared = shared_with_training(sentences, keys_file)
    if shared:
        raise Overlap(
            f"{len(shared)} of the {len(sentences)} sentences to score are in the model's training data "
            f"(e.g. {shared[:3]}): score another split, or leave them out"
        )


def _evaluate(
    probability: Callable[[list[CheckworthySentence]], np.ndarray],
    dev: dict[str, list[CheckworthySentence]],
    test: dict[str, list[CheckworthySentence]],
    threshold: float,
) -> dict[str, Any]:
    out: dict[str, Any] = {"threshold": threshold, "dev": {}, "test": {}}
    for part, sets in (("dev", dev), ("test", test)):
        for name, items in sets.items():
            out[part][name] = summary(
                items, probability(items), threshold, ranking="transcripts" in name or "1B" in name
            )
    out["dev mean F1"] = float(np.mean([v["F1"] for v in out["dev"].values()]))
    return out


def _linear(splits: Any, encoder: Any, config: CheckworthyConfig, out: Path, say: Say) -> dict[str, Any]:
    from factscout.claims.checkworthy import LinearCheckworthy
    from factscout.training.checkworthy.linear import fit_linear

    started = time.perf_counter()
    x_train = embed(encoder, splits.train)
    x_dev = {n: embed(encoder, v) for n, v in splits.dev.items()}
    embedded = time.perf_counter() - started
    say(f"linear: embedded {len(splits.train)} training sentences ({embedded:.0f}s)")
    weights = part_weights(config)
    gold = {n: [s.checkworthy for s in v] for n, v in splits.dev.items()}
    tried = []
    best: tuple[float, float, LinearCheckworthy] | None = None
    fit_started = time.perf_counter()
    for c in config.cs:
        model = fit_linear(splits.train, x_train, c=c, part_weights=weights, seed=config.seed)
        probs = {n: model.probabilities([s.text for s in v], x_dev[n])[:, -1] for n, v in splits.dev.items()}
        threshold, mean_f1, per = best_threshold(gold, probs)
        tried.append({"C": c, "dev mean F1": mean_f1, "threshold": threshold, "dev F1": per})
        say(f"linear C={c}: dev mean F1 {mean_f1:.3f} at {threshold:.3f}")
        if best is None or mean_f1 > best[1]:
            model.threshold = threshold
            best = (c, mean_f1, model)
    assert best is not None
    seconds = time.perf_counter() - fit_started
    model = best[2]
    model.info = {"C": best[0], "part weights": weights, "trained on": counts(splits.train)}
    path = model.save(out / FILES["linear"])
    shipped = LinearCheckworthy.load(path, encoder=encoder)

    def probability(items: list[CheckworthySentence]) -> np.ndarray:
        return shipped.probabilities([s.text for s in items], embed(encoder, items))[:, -1]

    result = _evaluate(probability, splits.dev, splits.test, shipped.threshold)
    result.update(
        {
            "C tried": tried,
            "C": best[0],
            "labels": list(shipped.labels),
            "fit seconds": seconds,
            "embed seconds": embedded,
            "encoder": getattr(encoder, "model_name", type(encoder).__name__),
        }
    )
    return result


def _minilm(splits: Any, config: CheckworthyConfig, out: Path, say: Say) -> dict[str, Any]:
    from factscout.claims.checkworthy_minilm import MinilmCheckworthy
    from factscout.nn.backend import cache_dir
    from factscout.training.checkworthy.finetune import finetune

    ft = FinetuneConfig(
        seed=config.seed,
        finetune=config.finetune,
        lr=config.lr,
        epochs=config.epochs,
        max_train=config.max_train,
        max_length=config.max_length,
    )
    model, log = finetune(
        splits.train,
        splits.dev,
        ft,
        work=cache_dir() / "train-checkworthy",  # checkpoints: a killed run resumes
        part_weights=part_weights(config),
        say=say,
    )
    model.info = {"trained on": counts(splits.train), "finetune": asdict(ft)}
    path = model.save(out / FILES["minilm"], config=log["network"])
    shipped = MinilmCheckworthy.load_int8(path)  # what load_checkworthy runs
    started = time.perf_counter()
    result = _evaluate(
        lambda items: shipped.probabilities([s.text for s in items])[:, -1], splits.dev, splits.test, shipped.threshold
    )
    scored = sum(len(v) for v in (*splits.dev.values(), *splits.test.values()))
    result.update(
        {
            "fit": log,
            "labels": list(shipped.labels),
            "int8 sentences per second": scored / max(time.perf_counter() - started, 1e-9),
            "fp32 dev mean F1": log["dev mean F1"],
        }
    )
    return result


def run(
    out: str | Path,
    config: CheckworthyConfig = CheckworthyConfig(),
    *,
    root: str | Path | None = None,
    say: Say = lambda _: None,
    command: str = "factscout train checkworthy",
) -> dict[str, Any]:
    """Train the kinds named in ``config``, write the models, the manifest, metrics and card into
    ``out``; returns the metrics."""
    from factscout.errors import InputError
    from factscout.hashing import file_sha256
    from factscout.text.onnx_encoder import int8_encoder
    from factscout.training.cards import write_card, write_metrics
    from factscout.training.checkworthy.card import model_card

    unknown = sorted(set(config.kinds) - set(KINDS))
    if unknown or not config.kinds:
        raise InputError(f"unknown model kinds {unknown or config.kinds}; known: {', '.join(KINDS)}")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    parts = TRAIN_PARTS if config.with_ct21_1b else tuple(p for p in TRAIN_PARTS if p[0] != "checkthat2021_1b")
    splits = build_splits(parts, root=root, limit=config.limit or None, say=say)
    metrics_file = out / "metrics.json"
    metrics: dict[str, Any] = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    metrics.setdefault("kinds", {})
    metrics.update(
        {
            "config": asdict(config),
            "command": command,
            "train": {"parts": [f"{d}:{s}" for d, s in parts], **counts(splits.train)},
            "removed for overlap": splits.removed,
            "dev sets": {n: counts(v) for n, v in splits.dev.items()},
            "test sets": {n: counts(v) for n, v in splits.test.items()},
        }
    )
    for kind in config.kinds:
        started = time.perf_counter()
        say(f"training {kind}")
        if kind == "linear":
            result = _linear(splits, int8_encoder(), config, out, say)
        else:
            result = _minilm(splits, config, out, say)
        result["seconds"] = time.perf_counter() - started
        result["command"] = command
        result["config"] = asdict(config)
        metrics["kinds"][kind] = result
        say(f"{kind}: dev mean F1 {result['dev mean F1']:.3f}, {result['seconds']:.0f}s")
    present = {k: v for k, v in metrics["kinds"].items() if (out / FILES[k]).is_file()}
    default = max(present, key=lambda k: present[k]["dev mean F1"])
    files = {k: FILES[k] for k in present}
    sha = {k: file_sha256(out / f) for k, f in files.items()}
    for k in present:
        metrics["kinds"][k]["sha256"] = sha[k]
        metrics["kinds"][k]["bytes"] = (out / files[k]).stat().st_size
    np.savez_compressed(out / TRAINED_KEYS, keys=trained_hashes(splits.train))
    metrics["default"] = default
    metrics["trained keys sha256"] = file_sha256(out / TRAINED_KEYS)
    (out / "checkworthy.json").write_text(
        json.dumps({"default": default, "files": files, "sha256": sha, "trained_keys": TRAINED_KEYS}, indent=2) + "\n"
    )
    write_metrics(out / "metrics.json", metrics)
    write_card(out / "CHECKWORTHY_CARD.md", model_card(metrics))
    say(f"default: {default} (dev mean F1 {present[default]['dev mean F1']:.3f}); wrote {out}")
    return metrics
