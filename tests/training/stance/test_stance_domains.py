"""The per-domain stance evaluation pairs (real files) and their scoring."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from factscout.training.stance.domains import domain_rows, healthver_rows, mean_macro_f1, score_rows


def test_score_rows_and_mean():
    rows = [("c", "s", 0), ("c", "t", 1), ("c", "u", 2), ("c", "v", 2)]

    def perfect(claims, sentences):
        return np.eye(3)[[r[2] for r in rows]]

    scored = score_rows(perfect, rows)
    assert scored["macro_f1"] == 1.0 and scored["f1"] == {"supports": 1.0, "refutes": 1.0, "not enough info": 1.0}

    def always_nei(claims, sentences):
        return np.tile([0.0, 0.0, 1.0], (len(claims), 1))

    nei = score_rows(always_nei, rows)
    assert nei["f1"]["supports"] == 0.0 and round(nei["macro_f1"], 4) == round((2 / 3) / 3, 4)
    assert mean_macro_f1({"a": scored, "b": nei}) == pytest.approx((1.0 + nei["macro_f1"]) / 2)
    assert score_rows(perfect, [])["pairs"] == 0


@pytest.mark.dataset
def test_dev_rows_of_the_three_domains():
    from factscout.datasets import data_root
    from factscout.errors import DataNotFound

    try:
        data_root()
    except DataNotFound as exc:
        pytest.skip(str(exc))
    rows = domain_rows()
    sizes = {k: len(v) for k, v in rows.items()}
    assert sizes == {"healthver": 867, "checkcovid": 468, "citint": 922}
    assert collections.Counter(r[2] for r in rows["checkcovid"]) == {2: 275, 0: 97, 1: 96}


@pytest.mark.dataset
def test_another_split_in_the_same_format(tmp_path):
    from factscout.datasets import data_root
    from factscout.errors import DataNotFound, InputError

    try:
        root = data_root()
    except DataNotFound as exc:
        pytest.skip(str(exc))
    lines = (root / "healthver" / "healthver_dev.csv").read_text().splitlines(keepends=True)
    part = tmp_path / "part.csv"
    part.write_text("".join(lines[:1] + lines[1:4]))
    assert len(healthver_rows(part)) == 3
    with pytest.raises(InputError, match="no such file"):
        healthver_rows(tmp_path / "missing.csv")
