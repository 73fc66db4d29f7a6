"""Frozen MiniLM embeddings of claims and snippets for the joint models, cached per text.

The MiniLM-encoder variant of the joint veracity + evidence-ranking model trains on frozen
sentence embeddings, so every claim and snippet is encoded once. MultiFC has about 175,000
distinct snippet and claim texts (minutes to encode in int8 on 2 cores:
``benchmarks/temporal_encoding.py``), so the cache is kept per text and in shards: an interrupted run keeps what it encoded, a different split (the test claims) only
encodes the texts it has not seen, and a background job can fill the cache ahead of training.

The in-memory side is the shared :class:`~factscout.nn.encoding.VectorCache` (unbounded here:
training reads every vector each epoch). Shards live under ``$FACTSCOUT_CACHE/temporal-embeddings/<encoder>/`` as ``.npz`` files with
``keys`` (sha1 of each text) and ``vectors`` (float32, L2-normalised).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import MissingDependency
from factscout.nn.backend import cache_dir
from factscout.nn.encoding import NamedEncoder, VectorCache

log = logging.getLogger(__name__)

MAX_SEQ_LENGTH = 64  # MultiFC snippets are one or two sentences; 64 word pieces keep almost all of them


def text_key(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()


def default_encoder() -> Any:
    """all-MiniLM-L6-v2 dynamically quantised to int8 on ONNX Runtime when installed
    (``factscout[fast]``; several times faster on short texts), else fp32."""
    from factscout.text.onnx_encoder import Int8Encoder

    try:
        return Int8Encoder(max_seq_length=MAX_SEQ_LENGTH)
    except MissingDependency:
        from factscout.text.encoder import Encoder

        return Encoder(max_seq_length=MAX_SEQ_LENGTH)


class EmbeddingStore:
    """Per-text embedding cache in shards; :meth:`embed` encodes only the texts it lacks."""

    def __init__(self, encoder: Any = None, *, folder: str | Path | None = None, shard_size: int = 2000) -> None:
        self._encoder = encoder = encoder if encoder is not None else default_encoder()
        name = (encoder.model_name if isinstance(encoder, NamedEncoder) else None) or type(encoder).__name__
        safe = re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{name}-{MAX_SEQ_LENGTH}")
        self.folder = Path(folder) if folder else cache_dir() / "temporal-embeddings" / safe
        self.shard_size = shard_size
        self._index: VectorCache[str] | None = None

    @property
    def encoder(self) -> Any:
        return self._encoder

    def _load(self) -> VectorCache[str]:
        if self._index is None:
            index: VectorCache[str] = VectorCache(None)
            for path in sorted(self.folder.glob("*.npz")) if self.folder.is_dir() else []:
                try:
                    with np.load(path) as z:
                        index.update((str(key), vec) for key, vec in zip(z["keys"].tolist(), z["vectors"], strict=True))
                except (OSError, ValueError, KeyError):
                    log.warning("ignoring unreadable embedding shard %s", path)
            self._index = index
        return self._index

    def missing(self, texts: Sequence[str]) -> list[str]:
        index = self._load()
        seen: set[str] = set()
        out = []
        for t in texts:
            k = text_key(t)
            if k not in index and k not in seen:
                seen.add(k)
                out.append(t)
        return out

    def _save(self, keys: list[str], vectors: np.ndarray) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = hashlib.sha1("".join(keys).encode()).hexdigest()[:20]
        fd, tmp = tempfile.mkstemp(prefix=".shard.", suffix=".npz", dir=self.folder)
        with os.fdopen(fd, "wb") as f:
            np.savez(f, keys=np.array(keys), vectors=vectors.astype(np.float32))
        os.replace(tmp, self.folder / f"{name}.npz")

    def fill(self, texts: Sequence[str], progress: Callable[[int, int], None] | None = None) -> int:
        """Encode and store the texts not yet cached, one shard at a time; returns how many."""
        todo = self.missing(texts)
        index = self._load()
        for start in range(0, len(todo), self.shard_size):
            chunk = todo[start : start + self.shard_size]
            vectors = np.asarray(self.encoder.encode(chunk), dtype=np.float32)
            keys = [text_key(t) for t in chunk]
            self._save(keys, vectors)
            index.update(zip(keys, vectors, strict=True))
            if progress:
                progress(start + len(chunk), len(todo))
        return len(todo)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """``(len(texts), d)`` float32 embeddings, encoding what the cache lacks."""
        self.fill(texts)
        index = self._load()
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.stack([index[text_key(t)] for t in texts]).astype(np.float32)
