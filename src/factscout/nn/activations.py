"""Numpy activations the inference heads share (no torch needed)."""

from __future__ import annotations

import numpy as np


def softmax(z: np.ndarray) -> np.ndarray:
    """Softmax over the last axis, shifted by the row maximum so large logits do not overflow."""
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    out: np.ndarray = e / e.sum(axis=-1, keepdims=True)
    return out


__all__ = ["softmax"]
