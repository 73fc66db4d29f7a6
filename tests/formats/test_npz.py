import os
import time
import zipfile

import numpy as np
import pytest

from factscout.formats.npz import save_npz


def _arrays():
    return {
        "w": np.arange(12, dtype=np.float16).reshape(3, 4),
        "names": np.array(["alpha", "beta"], dtype=str),
        "scalar": np.array(3.5),
    }


@pytest.mark.parametrize("compressed", [True, False])
def test_round_trip_and_same_bytes_later(tmp_path, compressed):
    first = save_npz(tmp_path / "a.npz", _arrays(), compressed=compressed).read_bytes()
    time.sleep(2.1)  # zip times have a resolution of 2 s
    second = save_npz(tmp_path / "b.npz", _arrays(), compressed=compressed).read_bytes()
    assert first == second
    with np.load(tmp_path / "a.npz", allow_pickle=False) as npz:
        assert list(npz.keys()) == ["w", "names", "scalar"]
        for name, value in _arrays().items():
            assert npz[name].dtype == value.dtype
            np.testing.assert_array_equal(npz[name], value)
    with zipfile.ZipFile(tmp_path / "a.npz") as zf:
        assert {i.date_time for i in zf.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        assert {i.compress_type for i in zf.infolist()} == {zipfile.ZIP_DEFLATED if compressed else zipfile.ZIP_STORED}
    assert os.stat(tmp_path / "a.npz").st_mode & 0o777 == 0o644


def test_object_arrays_are_refused_and_the_old_file_survives(tmp_path):
    path = save_npz(tmp_path / "m.npz", _arrays())
    before = path.read_bytes()
    with pytest.raises(ValueError):
        save_npz(path, {"ok": np.zeros(2), "bad": np.array([{"a": 1}], dtype=object)})
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.npz"]  # no temporary file left behind
