"""Dense corpus encoding on Ray Data: the embeddings of one process, computed by a pool of actors.

The corpus is cut into the fixed batches of ``Encoder.encode_corpus`` (``batch`` passages in
corpus order); each batch is one row of a Ray Dataset (``from_items``), and ``map_batches``
hands one row at a time (``batch_size=1``) to a callable class, :class:`BatchEncoder`, that
loads the encoder once per actor (``concurrency`` actors of one CPU each) and encodes the row's
passages with one ``encode`` call, exactly as the in-process loop does. A row per encoding batch,
rather than a row per passage, is what fixes the batches: Ray Data cuts ``batch_size`` rows from
blocks whose boundaries it chooses, and an embedding depends in its last bits on the passages it
was padded with. Thread counts do not change the bits (measured: MiniLM on 1 and 2 torch threads
encodes the same batches to the same bytes), so the actors keep Ray's one thread per CPU.

Results come back with ``preserve_order`` set on the Ray Data context (blocks in input order)
and each carries its passages' positions; they are placed by position, and a missing or doubled
position is an error, never a silent reorder. An actor that dies is restarted and its batch
retried by Ray Data itself (its actor pools default to ``max_restarts=-1``, ``max_task_retries=-1``;
factscout's tests kill BFS and shard actors, not encoding actors). The driver reads and writes the
embedding cache as in-process (``Encoder.encode_cached``): a cached corpus is not re-encoded.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from factscout.errors import InputError
from factscout.scale.cluster import cluster_cpus, init_ray
from factscout.text.encoder import CORPUS_BATCH, CORPUS_ENCODERS, Encoder, corpus_batches

log = logging.getLogger(__name__)


class BatchEncoder:
    """The Ray Data callable class: loads the encoder at construction (once per actor), then
    encodes one encoding batch per call."""

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        _ = encoder.model  # load now, not inside the first batch

    def __call__(self, rows: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        (start,), (texts,) = rows["start"], rows["texts"]
        vectors = self.encoder.encode([str(t) for t in texts])
        return {"position": np.arange(int(start), int(start) + len(vectors)), "vector": vectors}


def encode_on_ray(
    encoder: Encoder,
    texts: Sequence[str],
    *,
    address: str,
    batch: int = CORPUS_BATCH,
    workers: int | None = None,
    show_progress: bool = False,
) -> np.ndarray:
    """``encoder.encode_corpus(texts, batch=batch)`` on ``workers`` Ray Data actors (default and
    at most: the cluster's CPUs): the same ``(len(texts), dim)`` float32 embeddings."""
    batches = corpus_batches(texts, batch)
    if workers is not None and (not isinstance(workers, int) or workers < 1):
        raise InputError(f"workers must be a positive integer, got {workers!r}")
    if not batches:
        return encoder.encode_corpus(texts, batch=batch)
    ray = init_ray(address)
    from ray.data import DataContext

    cpus = cluster_cpus(ray)
    n = min(workers or cpus, cpus, len(batches))  # an actor that cannot get a CPU would never start
    context = DataContext.get_current()
    saved = context.execution_options.preserve_order, context.enable_progress_bars
    context.execution_options.preserve_order = True
    context.enable_progress_bars = show_progress
    try:
        dataset = ray.data.from_items([{"start": start, "texts": chunk} for start, chunk in batches]).map_batches(
            BatchEncoder,
            fn_constructor_args=(encoder,),
            batch_size=1,
            batch_format="numpy",
            concurrency=n,
            num_cpus=1,
        )
        log.info("encoding %d passages in %d batches on %d Ray Data actors", len(texts), len(batches), n)
        out: np.ndarray | None = None
        seen = np.zeros(len(texts), dtype=np.int64)
        for part in dataset.iter_batches(batch_size=None, batch_format="numpy"):
            positions, vectors = part["position"], np.asarray(part["vector"], dtype=np.float32)
            if out is None:
                out = np.zeros((len(texts), vectors.shape[1]), dtype=np.float32)
            out[positions] = vectors
            np.add.at(seen, positions, 1)
    finally:
        context.execution_options.preserve_order, context.enable_progress_bars = saved
    if out is None or not np.all(seen == 1):
        raise RuntimeError(f"Ray Data returned {int(seen.sum())} embeddings for {len(texts)} passages")
    return out


@CORPUS_ENCODERS.register("ray")
def encode_registered(
    encoder: Encoder, texts: Sequence[str], *, batch: int, address: str | None, show_progress: bool = False
) -> np.ndarray:
    """:func:`encode_on_ray` as the ``ray`` corpus encoder of :mod:`factscout.retrieve`."""
    return encode_on_ray(
        encoder, texts, address="auto" if address is None else address, batch=batch, show_progress=show_progress
    )
