"""The relevance gate of benchmarks/stance_domains.py: chosen on the dev mean, lowest g on ties."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import stance_domains  # noqa: E402  (benchmarks/ is not a package)


class FakeEncoder:
    """Unit vectors whose cosine is the number written at the end of the text."""

    def encode(self, texts):
        out = []
        for t in texts:
            c = float(t.rsplit(" ", 1)[-1]) if t[-1].isdigit() else 1.0
            out.append([c, np.sqrt(max(0.0, 1 - c * c))] if not t.startswith("claim") else [1.0, 0.0])
        return np.array(out)


def test_the_gate_turns_low_cosine_calls_into_not_enough_info(monkeypatch):
    import factscout.text.encoder as enc

    monkeypatch.setattr(enc, "Encoder", FakeEncoder)
    # the model calls every pair supports; the unrelated ones (cosine 0.1) are gold not enough info
    rows = [("claim a", "related 0.9", 0), ("claim b", "related 0.8", 0), ("claim c", "unrelated 0.1", 2)]

    def always_supports(claims, sentences):
        return np.tile([1.0, 0.0, 0.0], (len(claims), 1))

    got = stance_domains.gate_search(always_supports, {"d": rows}, rows)
    assert got["threshold"] == 0.15  # the lowest g that sends the 0.1 pair to not enough info
    # every pair right; macro-F1 over the three labels counts the absent "refutes" as 0
    assert got["mean_dev"] == round(2 / 3, 4) and got["scifact_heldout"] == round(2 / 3, 4)

    nothing_to_gain = [("claim a", "related 0.9", 0), ("claim c", "unrelated 0.1", 0)]
    assert stance_domains.gate_search(always_supports, {"d": nothing_to_gain}, nothing_to_gain)["threshold"] == 0.0
