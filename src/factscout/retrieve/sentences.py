"""Sentence data stored with an index: each passage split into sentences once, at index time,
with every sentence's character offsets and its embedding.

Quin+ (Samarinas et al. 2021) is fast because sentence-level work happens once, at index time.
``check`` selects evidence sentences by their similarity to the claim, and before this store it
split and embedded every sentence of the passages it read for every claim: about half a claim's
CPU time. Here ``factscout index`` splits every passage with the project's one splitter
(:func:`~factscout.text.sentences.sentences_of`) and embeds each distinct sentence once with
the encoder ``check`` selects with (:func:`~factscout.select.base.default_encoder`). At query time
the stored vectors are handed to the checker's encoder cache, so only the claim and its queries
are encoded and selection is a matrix product over stored vectors.

Layout, inside the index's generation folder (written before the generation goes live, so a
crash mid-build leaves the previous index whole)::

    sentences/sentences.json   encoder name, dimension, splitter, counts
    sentences/pointers.npy     (n_passages + 1,) int64: passage i owns rows pointers[i]:pointers[i+1]
    sentences/spans.npy        (n_sentences, 2) int32: [start, end) character offsets in passage.text
    sentences/vectors.npy      (n_sentences, dim) float16, L2-normalised, memory-mapped on load

Written by hand because it is a few numpy arrays: offsets in CSR form and one ``np.save`` matrix
that ``np.load(mmap_mode="r")`` maps without reading it; no vector database does this better.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadIndex
from factscout.nn.encoding import CachedEncoder, CorpusEncoder, NamedEncoder
from factscout.records import Passage
from factscout.text.sentences import sentence_spans, sentences_of

log = logging.getLogger(__name__)

FOLDER = "sentences"
FORMAT_VERSION = 1
ENCODE_BATCH = 512  # sentences per encoder call while indexing


def encoder_name(encoder: Any) -> str:
    """The name a stored sentence matrix records for ``encoder`` (its ``model_name``, through a
    :class:`~factscout.nn.encoding.CachedEncoder`), compared before stored vectors are used."""
    inner = getattr(encoder, "encoder", encoder)
    name = inner.model_name if isinstance(inner, NamedEncoder) else None
    return str(name) if name else type(inner).__name__


@dataclass(frozen=True, slots=True)
class SentenceData:
    """Every passage's sentences (as offsets) and their vectors, rows in passage-store order."""

    pointers: np.ndarray
    spans: np.ndarray
    vectors: np.ndarray
    encoder: str
    splitter: str = "sentences_of"

    def __post_init__(self) -> None:
        n = len(self.spans)
        if self.pointers.ndim != 1 or len(self.pointers) < 1 or self.pointers[0] != 0 or self.pointers[-1] != n:
            raise BadIndex("sentence pointers do not cover the sentence rows; rebuild the index")
        if self.vectors.ndim != 2 or len(self.vectors) != n or self.spans.shape != (n, 2):
            raise BadIndex(f"sentence arrays disagree: {n} spans, vectors {self.vectors.shape}; rebuild the index")

    @property
    def n_passages(self) -> int:
        return len(self.pointers) - 1

    def rows(self, position: int) -> range:
        """The sentence rows of the passage at store ``position``."""
        return range(int(self.pointers[position]), int(self.pointers[position + 1]))

    def sentences(self, position: int, text: str) -> list[str]:
        """The passage's sentences, cut from its ``text`` by the stored offsets."""
        return [text[a:b] for a, b in self.spans[self.pointers[position] : self.pointers[position + 1]].tolist()]

    def vectors_of(self, position: int) -> np.ndarray:
        """The passage's sentence vectors as float32 (read from the memory map)."""
        return np.asarray(self.vectors[self.pointers[position] : self.pointers[position + 1]], dtype=np.float32)


def fits(data: SentenceData | None, store: Any, encoder: Any) -> bool:
    """Whether ``data`` (an index's stored sentence vectors) can stand in for ``encoder``: the same
    model built them and the store knows each passage's position (a warning says when not)."""
    if data is None or not hasattr(store, "position"):
        return False
    if encoder_name(encoder) != data.encoder:
        log.warning(
            "the index's sentence vectors come from %s, this check embeds with %s: embedding per claim",
            data.encoder,
            encoder_name(encoder),
        )
        return False
    return True


def prime_encoder(
    encoder: CachedEncoder, data: SentenceData | None, store: Any, passage_ids: Iterable[str], texts: Sequence[str]
) -> None:
    """Embed ``texts`` and the sentences of the passages ``passage_ids`` in one encoder call (the
    encoder is far faster on one large batch than on many small ones), each text once; a passage
    whose sentence vectors ``data`` stores (when it :func:`fits`) is primed from there instead."""
    todo = list(texts)
    for passage_id in passage_ids:
        passage = store[passage_id]
        position = store.position.get(passage_id) if data is not None else None
        if data is not None and position is not None:
            encoder.prime(data.sentences(position, passage.text), data.vectors_of(position))
        else:
            todo += sentences_of(passage.text)
    encoder.encode(list(dict.fromkeys(todo)))


def build_sentence_data(
    passages: Sequence[Passage],
    encoder: Any,
    *,
    encode: Callable[[list[str]], np.ndarray] | None = None,
    show_progress: bool = False,
) -> SentenceData:
    """Split ``passages`` and embed each distinct sentence once with ``encoder`` (or with
    ``encode``, e.g. the same encoder on Ray), stored as float16."""
    pointers = np.zeros(len(passages) + 1, dtype=np.int64)
    spans: list[tuple[int, int]] = []
    row_text: list[int] = []
    distinct: dict[str, int] = {}
    for i, p in enumerate(passages):
        for a, b in sentence_spans(p.text):
            spans.append((a, b))
            row_text.append(distinct.setdefault(p.text[a:b], len(distinct)))
        pointers[i + 1] = len(spans)
    texts = list(distinct)
    log.info("embedding %d distinct sentences of %d passages (%d sentence rows)", len(texts), len(passages), len(spans))
    if encode is not None:
        unique = np.asarray(encode(texts), dtype=np.float32) if texts else None
    elif texts:
        if isinstance(encoder, CorpusEncoder):  # batched, with a progress bar; else plain encode
            unique = np.asarray(
                encoder.encode_corpus(texts, batch=ENCODE_BATCH, show_progress=show_progress), dtype=np.float32
            )
        else:
            unique = np.asarray(encoder.encode(texts), dtype=np.float32)
    else:
        unique = None
    dim = unique.shape[1] if unique is not None else int(getattr(encoder, "dimension", 0) or 0)
    if unique is None or not spans:
        vectors = np.zeros((0, dim), dtype=np.float16)
    else:
        vectors = unique.astype(np.float16)[np.asarray(row_text, dtype=np.int64)]
    return SentenceData(
        pointers=pointers,
        spans=np.asarray(spans, dtype=np.int32).reshape(-1, 2),
        vectors=vectors,
        encoder=encoder_name(encoder),
    )


def save_sentence_data(data: SentenceData, generation: str | os.PathLike[str]) -> Path:
    """Write ``data`` under ``generation/sentences`` (the caller makes the generation live)."""
    folder = Path(generation) / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "pointers.npy", data.pointers)
    np.save(folder / "spans.npy", data.spans)
    np.save(folder / "vectors.npy", np.ascontiguousarray(data.vectors, dtype=np.float16))
    meta = {
        "format_version": FORMAT_VERSION,
        "encoder": data.encoder,
        "splitter": data.splitter,
        "dimension": int(data.vectors.shape[1]),
        "n_passages": data.n_passages,
        "n_sentences": len(data.spans),
    }
    (folder / "sentences.json").write_text(json.dumps(meta, indent=1))
    return folder


def load_sentence_data(generation: str | os.PathLike[str], n_passages: int | None = None) -> SentenceData | None:
    """The sentence data of an index generation, vectors memory-mapped; ``None`` for an index
    built without it (or before it existed)."""
    folder = Path(generation) / FOLDER
    if not (folder / "sentences.json").is_file():
        return None
    try:
        meta = json.loads((folder / "sentences.json").read_text())
        data = SentenceData(
            pointers=np.load(folder / "pointers.npy"),
            spans=np.load(folder / "spans.npy"),
            vectors=np.load(folder / "vectors.npy", mmap_mode="r"),
            encoder=str(meta["encoder"]),
            splitter=str(meta.get("splitter", "sentences_of")),
        )
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise BadIndex(f"sentence data in {folder} is unreadable ({exc}); rebuild the index") from None
    if meta.get("format_version") != FORMAT_VERSION:
        raise BadIndex(f"sentence data in {folder} has format {meta.get('format_version')}, expected {FORMAT_VERSION}")
    if n_passages is not None and data.n_passages != n_passages:
        raise BadIndex(f"sentence data in {folder} covers {data.n_passages} passages, the index {n_passages}")
    return data


__all__ = [
    "FOLDER",
    "SentenceData",
    "build_sentence_data",
    "encoder_name",
    "load_sentence_data",
    "save_sentence_data",
]
