"""Network pieces several models share: the torch import with its install hint, model-file
hashing, and (see the modules) the numpy softmax, LoRA layers, backbone loading, adapter files
and pair batching.

spaCy's ``ml/`` is the model: runtime packages (``verify/``, ``select/``, ``rerank/``,
``retrieve/``) and the trainers in ``training/`` both build on these; ``nn/`` imports nothing
from either.
"""

from factscout.nn.backend import require_torch

__all__ = ["require_torch"]
