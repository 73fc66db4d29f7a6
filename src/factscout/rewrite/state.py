"""State encoders of the learned rewrite policies: a query's text -> the vector the policy sees.

``minilm`` is the offline MiniLM sentence encoder (the paper's choice of a sentence embedding);
``hashing`` is a model-free bag of hashed words for smoke runs and tests. Each is built once per
process (:func:`state_encoder`).
"""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Sequence
from typing import Protocol

import numpy as np

from factscout.registry import Registry


class StateEncoder(Protocol):
    name: str
    dimension: int

    def encode(self, texts: Sequence[str]) -> np.ndarray: ...


class MiniLmStateEncoder:
    """The offline MiniLM sentence encoder (:class:`factscout.text.encoder.Encoder`)."""

    name = "minilm"
    dimension = 384

    def __init__(self) -> None:
        from factscout.text.encoder import Encoder

        self.encoder = Encoder("minilm", max_seq_length=128)

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        return self.encoder.encode(list(texts))


class HashingStateEncoder:
    """A model-free state: L2-normalised counts of lower-cased words hashed (blake2b, stable
    across processes) into 384 buckets. For smoke runs and tests on machines without the
    encoder; it sees word identity only, no meaning."""

    name = "hashing"
    dimension = 384

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                digest = hashlib.blake2b(word.encode("utf-8"), digest_size=4).digest()
                out[i, int.from_bytes(digest, "little") % self.dimension] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-12)


STATE_ENCODERS: Registry[type[MiniLmStateEncoder] | type[HashingStateEncoder]] = Registry("state encoder")
STATE_ENCODERS.register("minilm")(MiniLmStateEncoder)
STATE_ENCODERS.register("hashing")(HashingStateEncoder)
_ENCODERS: dict[str, StateEncoder] = {}
_LOCK = threading.Lock()


def state_encoder(name: str) -> StateEncoder:
    """The state encoder registered as ``name``, built once per process."""
    cls = STATE_ENCODERS[name]
    with _LOCK:
        if name not in _ENCODERS:
            _ENCODERS[name] = cls()
        return _ENCODERS[name]
