"""The optimisation pieces the torch trainers share: the settings every LoRA fine-tune of the
MiniLM backbone starts from, AdamW with a linear warm-up and decay, and one optimizer step (zero
the gradients, back-propagate, clip, step, advance the schedule)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from factscout.nn import require_torch
from factscout.nn.backbone import DEFAULT_BACKBONE
from factscout.nn.lora import LORA_TARGETS
from factscout.training.splits import SEED


@dataclass(frozen=True)
class LoraTrainConfig:
    """The first settings of every LoRA trainer's config (a subclass adds its own after them, so
    a saved config keeps this order): seed, backbone and the adapters' shape."""

    seed: int = SEED
    backbone: str = DEFAULT_BACKBONE
    rank: int = 8
    alpha: float = 16.0
    dropout: float = 0.05
    targets: tuple[str, ...] = LORA_TARGETS


def adamw_with_warmup(params: Any, *, lr: float, weight_decay: float, steps: int, warmup: float) -> tuple[Any, Any]:
    """(AdamW, scheduler): linear warm-up over the first ``warmup`` share of ``steps``, then linear
    decay to 0 (the usual BERT fine-tuning schedule); call ``scheduler.step()`` after each step."""
    torch = require_torch("the cross-encoder re-ranker")
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    warm = max(1, round(warmup * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm)))
    )
    return optimizer, scheduler


def optimizer_step(
    loss: Any, optimizer: Any, *, scheduler: Any = None, clip: Iterable[Any] | None = None, max_norm: float = 1.0
) -> None:
    """One step: zero the gradients, back-propagate ``loss``, clip the gradient norm of ``clip``
    (when given) to ``max_norm``, step the optimizer, then the ``scheduler`` (when given)."""
    torch = require_torch("training")
    optimizer.zero_grad()
    loss.backward()
    if clip is not None:
        torch.nn.utils.clip_grad_norm_(clip, max_norm)
    optimizer.step()
    if scheduler is not None:
        scheduler.step()


CHUNK_BATCHES = 50  # batches per length-sorted chunk: similar lengths in a batch, a varied order across batches


def length_batches(lengths: Sequence[int], batch_size: int, seed: int) -> list[list[int]]:
    """Batches of indices of similar length: the indices shuffled (``seed``), sorted by length
    within chunks of :data:`CHUNK_BATCHES` batches, cut into batches, the batches shuffled."""
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * CHUNK_BATCHES
    batches: list[list[int]] = []
    for start in range(0, len(order), chunk):
        part = sorted(order[start : start + chunk], key=lambda i: lengths[i])
        batches.extend(part[b : b + batch_size] for b in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


# --- seeding: the same seed gives the same model ---------------------------------------------


def seed_everything(seed: int, *, threads: int | None = 1, deterministic: bool = True) -> None:
    """Seed every global random source a trainer may touch: python ``random``, numpy's global
    state and torch's default generator (which torch >= 2.x seeds at random in every process);
    with ``deterministic`` turn on ``torch.use_deterministic_algorithms`` (an op without a
    deterministic kernel then raises instead of silently varying); with ``threads`` fix torch's
    intra-op thread count (a float reduction split over another number of threads adds in
    another order, so its last bits, and after a few thousand steps the trained model, differ).
    Prefer :class:`deterministic_training`, which puts all of this back when training ends."""
    import random

    import numpy as np

    from factscout.errors import InputError

    torch = require_torch("training")
    if threads is not None:
        if threads < 1:
            raise InputError(f"threads must be at least 1, got {threads}")
        torch.set_num_threads(threads)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(deterministic)


class deterministic_training:
    """Train inside ``with deterministic_training(seed):`` for the same model from the same seed.

    Applies :func:`seed_everything` on entry; on exit restores the python, numpy and torch
    random states, the deterministic-algorithms flag and the thread count the caller had, so
    seeding a trainer never changes the randomness or the speed of the code around it. Bitwise
    equality holds for one machine, torch build and thread count: other CPUs (AVX2 vs AVX-512
    kernels), BLAS builds or thread counts round differently."""

    def __init__(self, seed: int, *, threads: int | None = 1) -> None:
        self.seed, self.threads = seed, threads

    def __enter__(self) -> deterministic_training:
        import random

        import numpy as np

        torch = require_torch("training")
        self._saved = (
            random.getstate(),
            np.random.get_state(),
            torch.random.get_rng_state(),
            torch.get_num_threads(),
            torch.are_deterministic_algorithms_enabled(),
            torch.is_deterministic_algorithms_warn_only_enabled(),
        )
        try:
            seed_everything(self.seed, threads=self.threads)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        import random

        import numpy as np

        torch = require_torch("training")
        py_state, np_state, torch_state, threads, flag, warn_only = self._saved
        torch.use_deterministic_algorithms(flag, warn_only=warn_only)
        torch.set_num_threads(threads)
        torch.random.set_rng_state(torch_state)
        random.setstate(py_state)
        np.random.set_state(np_state)


def derive_seed(seed: int, *keys: int | str) -> int:
    """A seed for one stage of a training run (``derive_seed(seed, "finetune", "snes")``): the
    keys are mixed into ``seed`` by numpy's ``SeedSequence`` (strings through crc32, never
    python's ``hash``, which changes from one process to the next), so stages and seeds get
    unrelated streams where ``seed + i`` would make seed 1's first domain replay seed 0's second."""
    import zlib

    import numpy as np

    spawn = tuple(zlib.crc32(k.encode("utf-8")) if isinstance(k, str) else int(k) for k in keys)
    return int(np.random.SeedSequence(seed, spawn_key=spawn).generate_state(1, dtype=np.uint64)[0] >> 1)
