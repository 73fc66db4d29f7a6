"""Stance evaluation pairs of every domain factscout is chosen on, and their scores.

A stance model is chosen on the mean macro-F1 over four domains' dev pairs, never on SciFact
alone (:data:`DEV_DOMAINS`):

``scifact``
    the 92 SciFact dev claims' evaluation pairs (gold rationales + the 2 most claim-similar
    other sentences per claim: :func:`~factscout.training.stance.evaluation.stance_eval_set`); the
    stance cross-encoder's bundle carries them, since they need the MiniLM cosines.
``healthver``
    the rows of HealthVer's dev part (:func:`factscout.datasets.healthver.dev_part_ids`: 40% of
    the topics, never trained on): claim, evidence text, label.
``checkcovid``
    Check-COVID dev: each claim's evidence sentences by its label (an NEI claim's annotated
    on-topic sentences: not enough info) and the other sentence of its abstract sharing most
    content words with it (not enough info).
``citint``
    Citation-Integrity dev: rationale sentences by label and the 2 other sentences of the cited
    abstract sharing most content words with the claim (not enough info).

The same builders take another split in the same format (a path), so the kept-aside test splits
score the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from factscout.records import STANCE_LABELS

DEV_DOMAINS = ("scifact", "healthver", "checkcovid", "citint")
Rows = list[tuple[str, str, int]]
"""Evaluation pairs as ``(claim, sentence, label index into STANCE_LABELS)``."""


def _rows(pairs: Sequence[Any]) -> Rows:
    return [(p.claim, p.sentence, int(p.label)) for p in pairs]


def healthver_rows(path: str | Path | None = None, *, root: str | Path | None = None) -> Rows:
    """HealthVer evaluation pairs: the dev part of the dev file, or every row of ``path`` (a CSV in
    HealthVer's columns, e.g. its test split)."""
    from factscout.datasets import load_dataset
    from factscout.datasets.healthver import dev_part_ids
    from factscout.training.stance.sources import row_stance_pairs

    if path is None:
        keep = dev_part_ids(root)
        claims = [c for c in load_dataset("healthver", "dev", root).claims if c.claim_id in keep]
    else:
        claims = list(load_split_file("healthver", path).claims)
    return _rows(row_stance_pairs("healthver", claims, "evidence"))


def checkcovid_rows(path: str | Path | None = None, *, root: str | Path | None = None) -> Rows:
    """Check-COVID evaluation pairs of the dev split, or of ``path`` (a claims file in its format)."""
    from factscout.datasets import checkcovid, load_dataset
    from factscout.training.stance.sources import evidence_stance_pairs

    claims = (
        load_dataset("checkcovid", "dev", root).claims if path is None else load_split_file("checkcovid", path).claims
    )
    return _rows(evidence_stance_pairs("checkcovid", claims, checkcovid.load_abstract_sentences(root), other_nei=1))


def citint_rows(path: str | Path | None = None, *, root: str | Path | None = None) -> Rows:
    """Citation-Integrity evaluation pairs of the dev split, or of ``path`` (SciFact-format claims)."""
    from factscout.datasets import citint, load_dataset
    from factscout.training.stance.sources import evidence_stance_pairs

    claims = load_dataset("citint", "dev", root).claims if path is None else load_split_file("citint", path).claims
    return _rows(evidence_stance_pairs("citint", claims, citint.load_abstract_sentences(root), other_nei=2))


def load_split_file(dataset: str, path: str | Path) -> Any:
    """Another split of ``dataset`` (``healthver``, ``checkcovid``, ``citint``) given as a file in its
    own format, read by the loader's ``load_file``."""
    import importlib

    from factscout.errors import InputError

    if not Path(path).is_file():
        raise InputError(f"no such file: {path}")
    return importlib.import_module(f"factscout.datasets.{dataset}").load_file(path)


BUILDERS: Mapping[str, Callable[..., Rows]] = {
    "healthver": healthver_rows,
    "checkcovid": checkcovid_rows,
    "citint": citint_rows,
}


def domain_rows(paths: Mapping[str, str | Path | None] | None = None) -> dict[str, Rows]:
    """The evaluation pairs of HealthVer, Check-COVID and Citation-Integrity (dev, or the file
    ``paths[name]`` where given); SciFact's come with the stance bundle."""
    paths = paths or {}
    return {name: build(paths.get(name)) for name, build in BUILDERS.items()}


def score_rows(predict: Callable[[list[str], list[str]], Any], rows: Rows) -> dict[str, Any]:
    """Stance macro-F1, accuracy and per-class F1 of ``predict(claims, sentences) -> probabilities``."""
    import numpy as np

    from factscout.evaluate.classification import accuracy, macro_f1

    if not rows:
        return {"pairs": 0, "macro_f1": float("nan")}
    probs = np.asarray(predict([r[0] for r in rows], [r[1] for r in rows]))
    gold = [r[2] for r in rows]
    pred = [int(i) for i in probs.argmax(axis=1)]
    labels = range(len(STANCE_LABELS))
    per_class = {
        STANCE_LABELS[k]: round(macro_f1([g == k for g in gold], [p == k for p in pred], [True]), 4) for k in labels
    }
    return {
        "pairs": len(rows),
        "macro_f1": round(macro_f1(gold, pred, labels), 4),
        "accuracy": round(accuracy(gold, pred), 4),
        "f1": per_class,
    }


def mean_macro_f1(scores: Mapping[str, Mapping[str, Any]]) -> float:
    """The mean macro-F1 over the domains scored (what chooses a model)."""
    values = [float(s["macro_f1"]) for s in scores.values() if s.get("pairs")]
    return sum(values) / len(values) if values else float("nan")
