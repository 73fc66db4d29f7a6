"""Text pieces every stage shares: the sentence splitter (``sentences.py``) and the sentence
encoders (``encoder.py``: MiniLM on sentence-transformers with the on-disk embedding cache;
``onnx_encoder.py``: the same model on ONNX Runtime, int8).

A leaf package: it imports only the standard library, third-party libraries, ``errors``,
``registry`` and ``nn/`` (the torch import, the cache folder, ONNX quantisation), so retrieval,
selection, stance, the dataset loaders and the service all build on it without reaching into
each other. The encoders load their models on first use; importing this package is cheap.
"""

from factscout.text.sentences import sentence_spans, sentences_of

__all__ = ["sentence_spans", "sentences_of"]
