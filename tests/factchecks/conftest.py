"""A small fact-check memory with a deterministic bag-of-words encoder (no torch, no model files)."""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from collections.abc import Sequence

import numpy as np
import pytest

from factscout.factchecks import FactCheck, FactCheckMemory, MatchModel

DIM = 64


class WordEncoder:
    """Hashed bag of lower-cased words, L2-normalised: similar wording, similar vectors."""

    def encode(self, texts: Sequence[str], **_: object) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % DIM] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)

    def encode_cached(self, texts: Sequence[str], **_: object) -> np.ndarray:
        return self.encode(texts)


def fc(fid: str, claim: str, day: dt.date | None, publisher: str = "snopes.com", **kw: object) -> FactCheck:
    return FactCheck(fid, claim, publisher, date=day, sources=("test",), licenses=("CC0",), **kw)  # type: ignore[arg-type]


RECORDS = [
    fc("fc-vaccine", "COVID-19 vaccines contain microchips that track people.", dt.date(2021, 1, 10), verdict="False"),
    fc("fc-vaccine-2022", "Vaccines contain tracking microchips, a new video claims.", dt.date(2022, 5, 1)),
    fc("fc-shark", "A photograph shows a shark swimming on a flooded highway in Houston.", dt.date(2017, 8, 28)),
    fc("fc-gaga", "Oreo released Lady Gaga themed cookies.", None),
    fc("fc-wall", "The Great Wall of China is visible from the Moon with the naked eye.", dt.date(2010, 3, 3)),
]


@pytest.fixture
def memory(monkeypatch: pytest.MonkeyPatch) -> FactCheckMemory:
    monkeypatch.setattr("factscout.factchecks.memory._encoder", lambda name: WordEncoder())
    return FactCheckMemory.build(RECORDS, model=MatchModel.load(), encoder=WordEncoder())
