"""The sentence-encoder contract and the one in-memory cache of vectors computed from text.

Every step that embeds text (sentence selection, the stance head, the verdict classifier, the
temporal joint models) takes a :class:`SentenceEncoder`: ``encode(texts) -> (n, d)`` float
array, one row per text. What some encoders offer besides, each a small protocol checked with
``isinstance``: :class:`CachingEncoder` (``encode_cached``, through the on-disk embedding cache),
:class:`CorpusEncoder` (``encode_corpus``, in fixed batches with a progress bar) and
:class:`NamedEncoder` (``model_name``, recorded beside stored vectors). Work done for one step is reused by the next: :class:`CachedEncoder`
wraps any encoder so each text is embedded once while it stays among the last ``size`` texts
used, and :class:`VectorCache`, the least-recently-used store behind it, also keeps the stance
cross-encoder's per-pair probabilities and the in-memory side of the temporal models' on-disk
embedding shards.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from typing import Any, Generic, Protocol, TypeVar, runtime_checkable

import numpy as np

K = TypeVar("K", bound=Hashable)


@runtime_checkable
class SentenceEncoder(Protocol):
    """Anything that embeds texts: one row per text, in input order."""

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


@runtime_checkable
class CachingEncoder(SentenceEncoder, Protocol):
    """An encoder that reads and writes the on-disk corpus embedding cache; on a miss
    ``encode(texts, show_progress=...)`` (default: its own) computes the vectors."""

    def encode_cached(
        self, texts: Sequence[str], *, show_progress: bool = False, encode: Callable[..., np.ndarray] | None = None
    ) -> np.ndarray: ...


@runtime_checkable
class CorpusEncoder(SentenceEncoder, Protocol):
    """An encoder that embeds a corpus in fixed batches of ``batch`` texts, stacked in order."""

    def encode_corpus(self, texts: Sequence[str], *, batch: int = ..., show_progress: bool = False) -> np.ndarray: ...


@runtime_checkable
class NamedEncoder(Protocol):
    """An encoder that names its model (what stored vectors record, so they are reused only
    with the same model)."""

    model_name: str


class VectorCache(Generic[K]):
    """Vectors by key, the least recently used dropped beyond ``size`` (``None``: unbounded).

    :meth:`lookup` computes only the keys it lacks (each once, in first-seen order) and returns
    the rows of every key asked for.
    """

    def __init__(self, size: int | None = 50_000) -> None:
        self.size = size
        self._items: OrderedDict[K, np.ndarray] = OrderedDict()

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def __len__(self) -> int:
        return len(self._items)

    def __getitem__(self, key: K) -> np.ndarray:
        return self._items[key]

    def __iter__(self) -> Iterator[K]:
        return iter(self._items)

    def missing(self, keys: Iterable[K]) -> list[K]:
        """The keys not cached, each once, in first-seen order."""
        return list(dict.fromkeys(k for k in keys if k not in self._items))

    def update(self, items: Iterable[tuple[K, np.ndarray]]) -> None:
        """Store vectors (newest last); the oldest go once the cache is over ``size``."""
        self._items.update(items)
        self._trim()

    def clear(self) -> None:
        self._items.clear()

    def lookup(
        self, keys: Sequence[K], compute: Callable[[list[K]], Iterable[Any]], *, dtype: Any = np.float32
    ) -> list[np.ndarray]:
        """The vector of each key (computing the missing ones with ``compute(missing_keys)``),
        marked as just used; then the cache is trimmed to ``size``."""
        todo = self.missing(keys)
        if todo:
            self._items.update((k, np.asarray(v, dtype=dtype)) for k, v in zip(todo, compute(todo), strict=True))
        rows = []
        for k in keys:
            self._items.move_to_end(k)
            rows.append(self._items[k])
        self._trim()
        return rows

    def _trim(self) -> None:
        if self.size is not None:
            while len(self._items) > self.size:
                self._items.popitem(last=False)


class CachedEncoder:
    """Wraps an encoder so the selector, the stance model and the verdict classifier embed each
    text once (per claim batch and while it stays among the last ``size`` texts)."""

    def __init__(self, encoder: Any, size: int = 50_000) -> None:
        self.encoder, self.size = encoder, size
        self._cache: VectorCache[str] = VectorCache(size)

    @property
    def model(self) -> Any:
        """The wrapped sentence-transformers model (the BIO tagger reads its token states)."""
        return getattr(self.encoder, "model", self.encoder)

    def prime(self, texts: Sequence[str], vectors: np.ndarray) -> None:
        """Hold precomputed ``vectors`` of ``texts`` (e.g. an index's stored sentence vectors) so
        :meth:`encode` returns them instead of encoding; a text already held keeps its vector."""
        if len(texts) != len(vectors):
            raise ValueError(f"{len(texts)} texts but {len(vectors)} vectors")
        rows = np.asarray(vectors, dtype=np.float32)
        self._cache.update((t, rows[i]) for i, t in enumerate(texts) if t not in self._cache)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        rows = self._cache.lookup(texts, self.encoder.encode)
        dim = rows[0].shape[0] if rows else 0
        return np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)


__all__ = [
    "CachedEncoder",
    "CachingEncoder",
    "CorpusEncoder",
    "NamedEncoder",
    "SentenceEncoder",
    "VectorCache",
]
