"""Dense retrieval: encoder embeddings in a faiss index (Johnson et al. 2019).

Below ``exact_below`` passages the index is exact inner-product search (``IndexFlatIP``);
above it an HNSW graph (Malkov & Yashunin 2018). Embeddings are L2-normalised, so inner
product is cosine similarity. ``published_before`` is applied as a faiss ID selector inside
the search; when an HNSW search under a selective filter returns fewer than ``k`` allowed
hits, the query falls back to exact scoring over the allowed passages, so the contract's
"k hits when k passages are allowed" holds for every index type.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import BadIndex, InputError, MissingDependency
from factscout.records import Query, Ranking
from factscout.registry import where_to_run
from factscout.retrieve.adapter import FINETUNED_ENCODER, INT8_ENCODER, FineTunedEncoder, is_shipped, make_encoder
from factscout.retrieve.base import PassageStore, check_k, check_undated, rankings_from_arrays
from factscout.text.encoder import CORPUS_BATCH, CORPUS_ENCODERS, DEFAULT_ENCODER, Encoder


def _faiss():  # type: ignore[no-untyped-def]
    try:
        import faiss
    except ImportError:
        raise MissingDependency("dense retrieval needs faiss: pip install 'factscout[dense]'") from None
    return faiss


QUERY_ENCODERS = ("model", "int8")
MINILM_ENCODERS = (DEFAULT_ENCODER, INT8_ENCODER)  # the plain all-MiniLM-L6-v2, fp32 or int8


@dataclass(frozen=True, slots=True)
class DenseConfig:
    """``encoder``: ``minilm``, ``minilm-ft`` (minilm + factscout's fine-tuned adapter) or a
    sentence-transformers name/path; ``adapter``: a LoRA adapter file of one's own for it.
    ``adapter_sha256`` is recorded at build time; loading checks the adapter file against it.
    ``encode_batch``: passages per encode call when the corpus is encoded (in-process and on Ray
    alike, so both give the same embeddings). ``query_encoder``: ``model`` embeds queries with the
    index's own encoder; ``int8`` with all-MiniLM-L6-v2 dynamically quantised to int8
    (:class:`~factscout.text.onnx_encoder.Int8Encoder`, ``--fast``), for a plain ``minilm``
    or ``minilm-int8`` index only; a load-time choice, never stored."""

    encoder: str = DEFAULT_ENCODER
    max_seq_length: int = 256
    exact_below: int = 200_000
    hnsw_m: int = 32
    ef_search: int = 128
    undated: str = "keep"
    adapter: str | None = None
    adapter_sha256: str | None = None
    encode_batch: int = CORPUS_BATCH
    query_encoder: str = "model"

    def __post_init__(self) -> None:
        if self.query_encoder not in QUERY_ENCODERS:
            raise InputError(f"query_encoder must be one of {', '.join(QUERY_ENCODERS)}, got {self.query_encoder!r}")
        if self.query_encoder == "int8" and (self.encoder not in MINILM_ENCODERS or self.adapter is not None):
            raise InputError(
                f"the int8 query encoder is all-MiniLM-L6-v2 itself: it fits only an index built with the plain"
                f" {DEFAULT_ENCODER!r} encoder, not {self.encoder!r}" + (" with an adapter" if self.adapter else "")
            )
        if self.exact_below < 0 or self.hnsw_m < 2 or self.ef_search < 1 or self.encode_batch < 1:
            raise InputError(f"bad dense index settings: {self}")
        check_undated(self.undated)


def encode_store(
    store: PassageStore,
    config: DenseConfig | None = None,
    *,
    encoder: Encoder | None = None,
    show_progress: bool = False,
    ray: str | None = None,
) -> tuple[np.ndarray, DenseConfig, Encoder]:
    """Embed every passage of ``store`` (through the embedding cache) in the fixed batches of
    ``Encoder.encode_corpus``, in this process or, with ``ray`` (``auto`` or a cluster address),
    on Ray Data actors (the same batches: the same embeddings); also returns the config as the
    index must record it (the encoder that built it) and the encoder itself."""
    config = config or DenseConfig()
    encoder = encoder or make_encoder(config.encoder, adapter=config.adapter, max_seq_length=config.max_seq_length)
    if isinstance(encoder, FineTunedEncoder):  # the index records the encoder that built it
        shipped = is_shipped(encoder.adapter_path) and encoder.model_name == DEFAULT_ENCODER
        config = replace(
            config,
            encoder=FINETUNED_ENCODER if shipped else encoder.model_name,
            adapter=None if shipped else str(encoder.adapter_path),
            adapter_sha256=encoder.adapter_sha256,
        )
    elif config.adapter_sha256 is not None:
        config = replace(config, adapter_sha256=None)
    encode = functools.partial(where_to_run(CORPUS_ENCODERS, ray), encoder, batch=config.encode_batch, address=ray)
    vectors = encoder.encode_cached([p.contents for p in store.passages], show_progress=show_progress, encode=encode)
    if len(vectors) == 0:
        vectors = np.zeros((0, encoder.dimension), dtype=np.float32)
    return vectors, config, encoder


class DenseRetriever:
    """Cosine-similarity search over passage embeddings; ``search`` follows the contract."""

    name = "dense"

    def __init__(self, store: PassageStore, vectors: np.ndarray, index, config: DenseConfig, encoder: Encoder):  # type: ignore[no-untyped-def]
        self.store, self.vectors, self.index, self.config, self.encoder = store, vectors, index, config, encoder
        self._int8: Encoder | None = None  # the int8 query encoder, built on first use

    @staticmethod
    def _make_index(vectors: np.ndarray, config: DenseConfig):  # type: ignore[no-untyped-def]
        faiss = _faiss()
        dim = vectors.shape[1]
        if len(vectors) < config.exact_below:
            index = faiss.IndexFlatIP(dim)
        else:
            index = faiss.IndexHNSWFlat(dim, config.hnsw_m, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 200
        index.add(vectors)
        return index

    @classmethod
    def build(
        cls,
        store: PassageStore,
        config: DenseConfig | None = None,
        *,
        encoder: Encoder | None = None,
        show_progress: bool = False,
        ray: str | None = None,
    ) -> DenseRetriever:
        """Encode the corpus (on Ray with ``ray``: see :func:`encode_store`) and index it."""
        vectors, config, encoder = encode_store(store, config, encoder=encoder, show_progress=show_progress, ray=ray)
        return cls(store, vectors, cls._make_index(vectors, config), config, encoder)

    @property
    def query_encoder(self) -> Any:
        """What embeds queries: the index's encoder, or its int8 build (``query_encoder="int8"``)."""
        if self.config.query_encoder == "model" or self.config.encoder == INT8_ENCODER:
            return self.encoder
        if self._int8 is None:
            from factscout.text.onnx_encoder import Int8Encoder

            self._int8 = Int8Encoder(max_seq_length=self.config.max_seq_length)
        return self._int8

    def search(self, queries: Sequence[Query], k: int, *, published_before: dt.date | None = None) -> list[Ranking]:
        check_k(k)
        if not queries or not len(self.store):
            return [Ranking(q.query_id) for q in queries]
        q_vecs = self.query_encoder.encode([q.text for q in queries])
        return self.search_vectors(queries, q_vecs, k, published_before=published_before)

    def search_vectors(
        self, queries: Sequence[Query], q_vecs: np.ndarray, k: int, *, published_before: dt.date | None = None
    ) -> list[Ranking]:
        """Search with query embeddings already computed (hybrid search and benchmarks)."""
        faiss = _faiss()
        stats, allowed, params = None, None, None
        if published_before is not None:
            allowed, stats = self.store.date_mask(published_before, self.config.undated)
            selector = faiss.IDSelectorBatch(np.flatnonzero(allowed).astype(np.int64))
            hnsw = isinstance(self.index, faiss.IndexHNSWFlat)
            params = (
                faiss.SearchParametersHNSW(sel=selector, efSearch=self.config.ef_search)
                if hnsw
                else (faiss.SearchParameters(sel=selector))
            )
        elif isinstance(self.index, faiss.IndexHNSWFlat):
            params = faiss.SearchParametersHNSW(efSearch=self.config.ef_search)
        depth = min(k, len(self.store) if stats is None else stats.allowed)
        if depth == 0:
            return [Ranking(q.query_id, (), stats) for q in queries]
        scores, docs = self.index.search(q_vecs, depth, params=params)
        out = rankings_from_arrays(queries, docs, scores, docs >= 0, self.store, stats)
        for i, q in enumerate(queries):
            if len(out[i]) < depth:  # approximate search under a selective filter: score exactly
                out[i] = Ranking.from_scores(q.query_id, self._exact(q_vecs[i], depth, allowed), date_filter=stats)
        return out

    def _exact(self, q_vec: np.ndarray, k: int, allowed: np.ndarray | None) -> list[tuple[str, float]]:
        positions = np.arange(len(self.store)) if allowed is None else np.flatnonzero(allowed)
        sims = self.vectors[positions] @ q_vec
        top = np.argsort(-sims, kind="stable")[:k]
        return [(self.store.ids[positions[t]], float(sims[t])) for t in top]

    def save(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        np.save(directory / "embeddings.npy", self.vectors)
        _faiss().write_index(self.index, str(directory / "faiss.index"))
        stored = {k: v for k, v in asdict(self.config).items() if k != "query_encoder"}  # a load-time choice
        (directory / "dense.json").write_text(json.dumps(stored))

    @classmethod
    def load(cls, store: PassageStore, directory: Path, **overrides: object) -> DenseRetriever:
        faiss = _faiss()
        try:
            config = DenseConfig(**{**json.loads((directory / "dense.json").read_text()), **overrides})
            vectors = np.load(directory / "embeddings.npy", mmap_mode="r")
            index = faiss.read_index(str(directory / "faiss.index"))
        except (OSError, ValueError, KeyError, TypeError, RuntimeError) as exc:
            raise BadIndex(
                f"dense index in {directory} is unreadable ({exc}); rebuild it with 'factscout index'"
            ) from None
        if index.ntotal != len(store) or vectors.shape[0] != len(store):
            raise BadIndex(f"dense index in {directory} has {index.ntotal} vectors but the store has {len(store)}")
        return cls(store, vectors, index, config, load_encoder(config, directory))


def load_encoder(config: DenseConfig, directory: Path) -> Encoder:
    """The encoder an index was built with, checked against the adapter hash it recorded."""
    encoder = make_encoder(config.encoder, adapter=config.adapter, max_seq_length=config.max_seq_length)
    adapted = encoder if isinstance(encoder, FineTunedEncoder) else None
    found = adapted.adapter_sha256 if adapted is not None else None
    if found != config.adapter_sha256:
        where = adapted.adapter_path if adapted is not None else "no adapter"
        raise BadIndex(
            f"dense index in {directory} was built with encoder adapter sha256 {config.adapter_sha256}, but"
            f" {where} has {found}; rebuild it with 'factscout index'"
        )
    return encoder
