"""The shared vector cache and the cached sentence encoder."""

import numpy as np

from factscout.nn.encoding import CachedEncoder, SentenceEncoder, VectorCache


def test_lookup_computes_only_missing_keys_once_and_drops_the_least_recently_used():
    calls = []

    def compute(keys):
        calls.append(list(keys))
        return [[float(len(k))] for k in keys]

    cache: VectorCache[str] = VectorCache(2)
    rows = cache.lookup(["a", "bb", "a"], compute)
    assert [r.tolist() for r in rows] == [[1.0], [2.0], [1.0]]
    assert rows[0].dtype == np.float32
    cache.lookup(["a"], compute)  # "a" is now the most recently used
    cache.lookup(["ccc"], compute)  # over size 2: "bb" goes
    assert calls == [["a", "bb"], ["ccc"]]
    assert "bb" not in cache and "a" in cache and len(cache) == 2


def test_unbounded_cache_and_update():
    cache: VectorCache[tuple[str, str]] = VectorCache(None)
    cache.update(((str(i), "x"), np.zeros(3)) for i in range(100))
    assert len(cache) == 100 and cache.missing([("1", "x"), ("z", "x"), ("z", "x")]) == [("z", "x")]
    cache.clear()
    assert len(cache) == 0


def test_cached_encoder_is_a_sentence_encoder_and_exposes_the_model():
    class Fake:
        model = "st-model"

        def encode(self, texts):
            return np.ones((len(texts), 2), dtype=np.float32)

    enc = CachedEncoder(Fake())
    assert isinstance(enc, SentenceEncoder)
    assert enc.model == "st-model"
    assert enc.encode(["x", "y"]).shape == (2, 2)
