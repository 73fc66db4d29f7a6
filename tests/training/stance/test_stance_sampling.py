"""Label-balanced sampling, origin weights and reading the stance pair file (benchmarks/stance.py)."""

import json

import numpy as np
import pytest

from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS
from factscout.training.stance.data import LABEL_ID, read_stance_pairs
from factscout.training.stance.head import group_balanced_weights, label_balanced_sample
from factscout.training.stance.pairs import StancePair, write_stance_pairs

# the new pair set's shape in small: refutes the majority, supports the rarest
LABELS = [1] * 51 + [0] * 15 + [2] * 34


def test_label_balanced_sample_takes_the_rarest_labels_count_of_each_label():
    idx = label_balanced_sample(LABELS, seed=13)
    picked = np.asarray(LABELS)[idx]
    assert [int((picked == k).sum()) for k in range(3)] == [15, 15, 15]
    assert list(idx) == sorted(set(idx.tolist())) and idx.max() < len(LABELS)


def test_label_balanced_sample_is_deterministic_for_a_seed():
    assert np.array_equal(label_balanced_sample(LABELS, seed=13), label_balanced_sample(LABELS, seed=13))
    assert not np.array_equal(label_balanced_sample(LABELS, seed=13), label_balanced_sample(LABELS, seed=14))


def test_label_balanced_sample_keeps_every_pair_of_the_rarest_label_and_handles_empty_input():
    idx = label_balanced_sample(LABELS, seed=0)
    assert set(range(51, 66)) <= set(idx.tolist())  # all 15 supports
    assert label_balanced_sample([], seed=0).size == 0


def test_group_balanced_weights_give_each_group_the_same_total_with_mean_one():
    groups = ["covidfact"] * 6 + ["scifact"] * 2 + ["checkthat"] * 4
    w = group_balanced_weights(groups)
    totals = {g: w[[i for i, x in enumerate(groups) if x == g]].sum() for g in set(groups)}
    assert totals == pytest.approx({g: 4.0 for g in totals})
    assert w.mean() == pytest.approx(1.0)


def test_read_stance_pairs_reads_what_the_builder_writes(tmp_path):
    rows = [
        StancePair(
            "Vitamin D reduces falls.",
            "Vitamin D reduced falls by 20%.",
            SUPPORTS,
            "scifact",
            "CC BY 4.0",
            "7",
            "scifact",
        ),
        StancePair(
            "Vitamin D reduces falls.",
            "Vitamin D increased falls.",
            REFUTES,
            "aug:direction",
            "CC BY 4.0",
            "7",
            "scifact",
        ),
        StancePair("Masks work.", "The vote was on Tuesday.", NOT_ENOUGH_INFO, "checkthat", "terms", "t1", "checkthat"),
    ]
    path, _ = write_stance_pairs(tmp_path / "pairs.jsonl", rows)
    pairs, origins = read_stance_pairs(path)
    assert [(p.claim, p.sentence, p.label, p.source, p.claim_id) for p in pairs] == [
        (r.claim, r.sentence, LABEL_ID[r.label], r.source, r.claim_id) for r in rows
    ]
    assert origins == ["scifact", "scifact", "checkthat"]


def test_read_stance_pairs_names_file_and_line_of_a_bad_label(tmp_path):
    path = tmp_path / "pairs.jsonl"
    good = {"claim": "a", "sentence": "b", "label": SUPPORTS, "source": "scifact"}
    path.write_text(json.dumps(good) + "\n" + json.dumps({**good, "label": "SUPPORT"}) + "\n")
    with pytest.raises(InputError, match=r"pairs\.jsonl:2: label 'SUPPORT'"):
        read_stance_pairs(path)
