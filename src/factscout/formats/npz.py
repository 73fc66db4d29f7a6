"""NumPy ``.npz`` files written the same way every time.

``numpy.savez_compressed`` stamps every member with the time of writing, so saving the same model
twice gives different bytes (and a different sha256 for a model card to record). :func:`save_npz`
writes the same zip layout that ``numpy.load`` reads, with a fixed member time, and replaces the
file only once it is whole, so a crash halfway leaves the previous file usable.
"""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from factscout.formats.jsonl import atomic_output

_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip header can hold


def save_npz(path: str | os.PathLike[str], arrays: Mapping[str, Any], *, compressed: bool = True) -> Path:
    """Write ``arrays`` (name -> array) to ``path`` as an ``.npz`` archive, byte-identical for equal
    arrays; no pickled objects (``numpy.load`` reads it without ``allow_pickle``)."""
    p = Path(path)
    method = zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED
    # 0644: mkstemp makes it 0600, and a model file is for everyone to read
    with atomic_output(p, "wb", permissions=0o644) as f, zipfile.ZipFile(f, "w", compression=method) as zf:
        for name, value in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=_EPOCH)
            info.compress_type = method
            info.external_attr = 0o644 << 16
            with zf.open(info, "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)
    return p
