"""benchmarks/stance_ablation.py's pieces: rows named NAME=SPEC, FEVER-Symmetric's two-way macro-F1
(a not-enough-info answer is wrong), the consistency and choice scores."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import stance_ablation  # noqa: E402  (benchmarks/ is not a package)


def test_models_are_named_rows_in_order():
    got = stance_ablation.parse_models(["today=cross", "stage0=cross:x/stance_nli.npz", "head"])
    assert list(got.items()) == [("today", "cross"), ("stage0", "cross:x/stance_nli.npz"), ("head", "head")]
    assert stance_ablation.parse_models(None) == {"today": "cross"}
    with pytest.raises(SystemExit, match="used once"):
        stance_ablation.parse_models(["a=cross", "a=head"])


def test_two_way_macro_f1_counts_not_enough_info_as_wrong():
    rows = [("c", "s", 0), ("c", "s", 0), ("c", "s", 1), ("c", "s", 1)]
    right = np.array([[1, 0, 0], [1, 0, 0], [0, 1, 0], [0, 1, 0]], dtype=float)
    assert stance_ablation.two_way_macro_f1(rows, right) == 1.0
    unsure = right.copy()
    unsure[3] = [0, 0, 1]  # one refutes pair called not enough info: refutes recall 1/2
    # supports: P 1, R 1 -> 1; refutes: P 1, R 0.5 -> 2/3
    assert stance_ablation.two_way_macro_f1(rows, unsure) == round((1 + 2 / 3) / 2, 4)


def test_choice_weighs_each_dev_domain_and_consistency_alike():
    rates = {"self": 1.0, "unrelated": 0.9, "negation": 0.8, "subject": 0.1}
    assert stance_ablation.consistency_score(rates) == pytest.approx(0.9)
    dev = {"scifact": 0.5, "healthver": 0.4, "checkcovid": 0.6, "citint": 0.5}
    assert stance_ablation.choice_score(dev, 0.9) == pytest.approx((0.5 + 0.4 + 0.6 + 0.5 + 0.9) / 5)
