"""The shared splits: folds are deterministic, keep claim groups whole, stratify by label; the
held-out split and the dev split keep claims that share evidence on one side."""

from collections import Counter

import numpy as np
from sklearn.model_selection import StratifiedKFold

from factscout.records import Claim
from factscout.training.splits import (
    HELDOUT_FILE,
    claim_groups,
    folds_of,
    read_heldout_ids,
    split_dev,
    split_scifact,
    train_test_indices,
)


def _claims(n: int = 40) -> list[Claim]:
    # claims 2k and 2k+1 cite the same abstract: one group each
    return [Claim(str(i), f"claim {i}", meta={"cited_doc_ids": [f"d{i // 2}"]}) for i in range(n)]


def test_claims_citing_a_common_abstract_form_one_group():
    groups = claim_groups(_claims(6))
    assert groups["0"] == groups["1"] != groups["2"] == groups["3"]


def test_group_folds_are_deterministic_and_keep_groups_whole():
    claims = _claims()
    folds = folds_of(claims, 5, 13)
    assert folds == folds_of(claims, 5, 13)
    assert folds != folds_of(claims, 5, 14)
    assert sorted(c.claim_id for f in folds for c in f) == sorted(c.claim_id for c in claims)
    assert [len(f) for f in folds] == [8] * 5
    fold_of = {c.claim_id: k for k, f in enumerate(folds) for c in f}
    assert all(fold_of[str(i)] == fold_of[str(i + 1)] for i in range(0, 40, 2))


def test_label_folds_are_stratified_and_match_scikit_learn():
    labels = ["a"] * 20 + ["b"] * 10 + ["c"] * 5
    folds = folds_of(list(range(len(labels))), 5, 13, by="label", labels=labels)
    assert folds == folds_of(list(range(len(labels))), 5, 13, by="label", labels=labels)
    for fold in folds:
        assert Counter(labels[i] for i in fold) == {"a": 4, "b": 2, "c": 1}
    reference = StratifiedKFold(n_splits=5, shuffle=True, random_state=13).split(np.zeros(len(labels)), labels)
    for (train, test), (ref_train, ref_test) in zip(train_test_indices(folds), reference, strict=True):
        assert np.array_equal(train, ref_train) and np.array_equal(test, ref_test)


def test_shuffle_folds_deal_ids_round_robin():
    ids = [f"c{i}" for i in range(10)]
    folds = folds_of(ids, 3, 0, by="shuffle")
    assert [len(f) for f in folds] == [4, 3, 3]
    assert folds == folds_of(ids, 3, 0, by="shuffle")
    assert all(f == sorted(f, key=ids.index) for f in folds)  # input order inside a fold


def test_heldout_split_keeps_groups_together_and_the_shipped_list_is_its_output():
    claims = _claims()
    train, held = split_scifact(claims, heldout_fraction=0.25, seed=13)
    assert len(held) == 10 and not {c.claim_id for c in train} & {c.claim_id for c in held}
    held_ids = {c.claim_id for c in held}
    assert all((str(i) in held_ids) == (str(i + 1) in held_ids) for i in range(0, 40, 2))
    assert len(read_heldout_ids()) == len(HELDOUT_FILE.read_text().split()) > 0


def test_dev_split_keeps_claims_citing_a_common_abstract_together():
    claims = tuple(Claim(str(i), f"claim {i}") for i in range(10))
    qrels = {str(i): {f"d{i // 2}": 1} for i in range(10)}  # claims 2k and 2k+1 cite the same abstract
    train, dev = split_dev(qrels, [c.claim_id for c in claims], 0.3, seed=13)
    assert sorted(train + dev, key=int) == [str(i) for i in range(10)]
    assert not set(train) & set(dev)
    for i in range(0, 10, 2):
        assert (str(i) in dev) == (str(i + 1) in dev)
    assert split_dev(qrels, [c.claim_id for c in claims], 0.3, seed=13) == (train, dev)


def test_folds_are_the_ones_each_trainer_had_before_the_harness():
    """Regression: the stance trainer's greedy group folds and qgen's round-robin cross-fitting
    folds, as they were written before ``folds_of`` unified them."""
    import random

    claims = [*_claims(37), Claim("x1", "lone claim"), Claim("x2", "another", meta={"cited_doc_ids": ["d0", "d9"]})]

    def stance_folds(claims, k, seed):  # the former verify/train_stance.py folds_of
        groups = claim_groups(claims)
        members = {}
        for c in claims:
            members.setdefault(groups[c.claim_id], []).append(c)
        order = sorted(members, key=lambda g: members[g][0].claim_id)
        random.Random(seed).shuffle(order)
        order.sort(key=lambda g: -len(members[g]))
        folds = [[] for _ in range(k)]
        for g in order:
            min(folds, key=len).extend(members[g])
        return folds

    def qgen_folds(claims, k, seed):  # the former plan/qgen.py cross_fitted_plans folds
        order = [c.claim_id for c in claims]
        random.Random(seed).shuffle(order)
        fold_of = {cid: i % k for i, cid in enumerate(order)}
        return [[c for c in claims if fold_of[c.claim_id] == f] for f in range(k)]

    for seed in (0, 13, 14):
        assert folds_of(claims, 5, seed) == stance_folds(claims, 5, seed)
        assert folds_of(claims, 5, seed, by="shuffle", key=[c.claim_id for c in claims]) == qgen_folds(claims, 5, seed)
