"""Seeded splits every trainer shares: the held-out SciFact claims (one file, one path) and
cross-validation folds (one :func:`folds_of`).

The held-out part is written once by ``factscout train stance`` to
:data:`HELDOUT_FILE` and read by every other trainer, so no model is ever fitted or tuned on
a claim another model is evaluated on. Claims that cite a common abstract stay on the same side
of every split (SciFact writes several claims, often negations of each other, from one
citation; a claim-level split alone would put the same rationale sentence on both sides).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, TypeVar

import numpy as np

from factscout.errors import InputError
from factscout.records import Claim

T = TypeVar("T")

SEED = 13
HELDOUT_FRACTION = 0.25
CV_FOLDS = 5
HELDOUT_NAME = "scifact_heldout_ids.txt"
HELDOUT_FILE = Path(__file__).resolve().parents[1] / "verify" / "models" / HELDOUT_NAME
FoldBy = Literal["group", "label", "shuffle"]


def read_heldout_ids(path: Path = HELDOUT_FILE) -> set[str]:
    """The held-out SciFact claim ids (one per line)."""
    if not path.is_file():
        raise InputError(f"no held-out claim list at {path} (written by factscout train stance)")
    return {line.strip() for line in path.read_text().splitlines() if line.strip()}


def write_heldout_ids(folder: Path, heldout: Sequence[Claim]) -> Path:
    """Write the held-out claim ids (numeric order) to ``folder``/:data:`HELDOUT_NAME`."""
    path = folder / HELDOUT_NAME
    path.write_text("\n".join(sorted((c.claim_id for c in heldout), key=int)) + "\n")
    return path


def claim_groups(claims: Sequence[Claim]) -> dict[str, str]:
    """Claim id -> group id, claims citing a common abstract in one group (union-find)."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        parent.setdefault(x, x)
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for c in claims:
        docs = [f"doc:{d}" for d in c.meta.get("cited_doc_ids", [])] or [f"claim:{c.claim_id}"]
        for d in docs[1:]:
            parent[find(d)] = find(docs[0])
        find(docs[0])
    return {
        c.claim_id: find((([f"doc:{d}" for d in c.meta.get("cited_doc_ids", [])]) or [f"claim:{c.claim_id}"])[0])
        for c in claims
    }


def split_scifact(
    claims: Sequence[Claim], *, heldout_fraction: float = HELDOUT_FRACTION, seed: int = SEED
) -> tuple[list[Claim], list[Claim]]:
    """(training part, held-out part) of SciFact claims: seeded shuffle of claim groups
    (:func:`claim_groups`) filled into the held-out part up to ``heldout_fraction`` of the claims."""
    if not 0 < heldout_fraction < 1:
        raise InputError(f"heldout_fraction must be in (0, 1), got {heldout_fraction}")
    groups = claim_groups(claims)
    members: dict[str, list[str]] = {}
    for c in sorted(claims, key=lambda c: int(c.claim_id) if c.claim_id.isdigit() else c.claim_id):
        members.setdefault(groups[c.claim_id], []).append(c.claim_id)
    order = sorted(members, key=lambda g: members[g][0])
    random.Random(seed).shuffle(order)
    target = round(heldout_fraction * len(claims))
    held: set[str] = set()
    for g in order:
        if len(held) >= target:
            break
        held.update(members[g])
    return [c for c in claims if c.claim_id not in held], [c for c in claims if c.claim_id in held]


def positives(qrels: Mapping[str, Mapping[str, int]], claim_id: str) -> list[str]:
    """The passages judged relevant to ``claim_id``, sorted."""
    return sorted(d for d, r in qrels.get(claim_id, {}).items() if r > 0)


def split_dev(
    qrels: Mapping[str, Mapping[str, int]], claim_ids: Sequence[str], fraction: float, seed: int
) -> tuple[list[str], list[str]]:
    """Seeded (train, dev) split of ``claim_ids``; claims that share a relevant passage stay together."""
    parent = {c: c for c in claim_ids}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    by_doc: dict[str, str] = {}
    for c in claim_ids:
        for d in positives(qrels, c):
            if d in by_doc:
                parent[find(c)] = find(by_doc[d])
            else:
                by_doc[d] = c
    groups: dict[str, list[str]] = {}
    for c in claim_ids:
        groups.setdefault(find(c), []).append(c)
    ordered = sorted(groups.values(), key=lambda g: min(g))
    rng = np.random.default_rng(seed)
    dev: list[str] = []
    target = max(1, round(fraction * len(claim_ids)))
    for i in rng.permutation(len(ordered)):
        if len(dev) >= target:
            break
        dev.extend(ordered[int(i)])
    dev_set = set(dev)
    return [c for c in claim_ids if c not in dev_set], sorted(dev_set)


def folds_of(
    items: Sequence[T],
    k: int = CV_FOLDS,
    seed: int = SEED,
    *,
    by: FoldBy = "group",
    labels: Sequence[str] | None = None,
    key: Sequence[str] | None = None,
) -> list[list[T]]:
    """``k`` seeded folds of ``items`` (each fold is the part held out in one round).

    ``by="group"``: ``items`` are claims; whole claim groups (:func:`claim_groups`) per fold,
    filled greedily, largest groups first (the stance head, selector and verdict rule).
    ``by="label"``: stratified by ``labels`` (one per item; scikit-learn's shuffled
    ``StratifiedKFold``), items in input order (the verdict classifier).
    ``by="shuffle"``: ``key`` (one id per item, default the items themselves) is shuffled and
    dealt round-robin; an item goes to the fold of its id, items in input order (qgen's
    cross-fitting).
    """
    if by == "group":
        claims: Sequence[Claim] = items  # type: ignore[assignment]
        groups = claim_groups(claims)
        members: dict[str, list[T]] = {}
        for item, c in zip(items, claims, strict=True):
            members.setdefault(groups[c.claim_id], []).append(item)
        order = sorted(members, key=lambda g: members[g][0].claim_id)  # type: ignore[attr-defined]
        random.Random(seed).shuffle(order)
        order.sort(key=lambda g: -len(members[g]))
        folds: list[list[T]] = [[] for _ in range(k)]
        for g in order:
            min(folds, key=len).extend(members[g])
        return folds
    if by == "label":
        from sklearn.model_selection import StratifiedKFold

        if labels is None or len(labels) != len(items):
            raise InputError("stratified folds need one label per item")
        splitter = StratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
        return [[items[int(i)] for i in test] for _, test in splitter.split(np.zeros(len(labels)), list(labels))]
    if by == "shuffle":
        ids = list(key) if key is not None else [str(x) for x in items]
        order_ids = ids[:]
        random.Random(seed).shuffle(order_ids)
        fold_of = {cid: i % k for i, cid in enumerate(order_ids)}
        return [[item for item, cid in zip(items, ids, strict=True) if fold_of[cid] == f] for f in range(k)]
    raise InputError(f"folds by {by!r}: known: group, label, shuffle")


def train_test_indices(folds: Sequence[Sequence[int]]) -> list[tuple[np.ndarray, np.ndarray]]:
    """(training indices, held-out indices) per fold of index folds, both ascending."""
    n = sum(len(f) for f in folds)
    out = []
    for fold in folds:
        test = np.asarray(sorted(fold), dtype=np.int64)
        mask = np.ones(n, dtype=bool)
        mask[test] = False
        out.append((np.flatnonzero(mask).astype(np.int64), test))
    return out
