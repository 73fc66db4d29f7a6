"""SICK: sentence pairs rich in negation, quantifiers and word order, with entailment labels.

Marelli, Menini, Baroni, Bentivogli, Bernardi & Zamparelli, 2014, "A SICK cure for the evaluation
of compositional distributional semantic models", LREC 2014
(http://www.lrec-conf.org/proceedings/lrec2014/pdf/363_Paper.pdf); read from the processed copy
with both directions' labels (Kalouli et al.). About 9,840 pairs of image-caption sentences.

As a stance dataset each pair gives two claims, one per direction, since entailment is not
symmetric: claim ``<pair_ID>ab`` is sentence B judged against premise A (``entailment_AB``),
``<pair_ID>ba`` is sentence A against premise B (``entailment_BA``); entails -> supports,
contradicts -> refutes, neutral -> not enough info. Splits ``train`` / ``trial`` / ``test`` are
the SemEval-2014 ones (``SemEval_set``), ``all`` is every pair. ``meta``: ``premise``,
``label`` (entails / contradicts / neutral), ``stance``, ``relatedness``. Licence CC BY-NC-SA 3.0.
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import (
    Dataset,
    DatasetSource,
    fetch,
    github_raw,
    read_delimited,
    register_loader,
    require_file,
)
from factscout.errors import InputError
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "kkalouli/SICK-processing", "0848f4aec60870122a4ca18de08ba0e25f6f9a75"
SOURCE = DatasetSource(
    name="SICK",
    url=github_raw(_REPO, _COMMIT, "SICK.txt"),
    license="CC BY-NC-SA 3.0",
    citation="Marelli, Menini, Baroni, Bentivogli, Bernardi, Zamparelli. A SICK cure for the evaluation of "
    "compositional distributional semantic models. LREC 2014.",
)
FOLDER = "sick"
DATA_FILE = "SICK.txt"
STANCE = {"entails": SUPPORTS, "contradicts": REFUTES, "neutral": NOT_ENOUGH_INFO}
SPLITS = {"train": "TRAIN", "trial": "TRIAL", "test": "TEST"}


def _relation(value: str, first: str, second: str, where: str) -> str:
    """``A_entails_B`` -> ``entails`` (checking the direction the column promises)."""
    parts = value.split("_")
    if len(parts) != 3 or parts[0] != first or parts[2] != second or parts[1] not in STANCE:
        raise InputError(f"{where}: unexpected entailment value {value!r}")
    return parts[1]


@register_loader("sick", ("all", "train", "trial", "test"))
def load(split: str, root: Path) -> Dataset:
    """SICK's pairs of ``split`` (``all``: every pair), two directed claims per pair."""
    path = require_file(root / FOLDER / DATA_FILE, "sick")
    claims = []
    for lineno, row in read_delimited(path, "\t", fields=12, header=True):
        pair_id, a, b, _, relatedness, ab, ba, *_, semeval = row
        if split != "all" and semeval != SPLITS[split]:
            continue
        where = f"{path}:{lineno}"
        for suffix, premise, claim, rel in (
            ("ab", a, b, _relation(ab, "A", "B", where)),
            ("ba", b, a, _relation(ba, "B", "A", where)),
        ):
            meta = {"premise": premise, "label": rel, "stance": STANCE[rel], "relatedness": float(relatedness)}
            claims.append(Claim(f"sick{pair_id}{suffix}", claim, None, meta))
    return Dataset("sick", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch ``SICK.txt`` into ``dest/sick``."""
    folder = Path(dest) / FOLDER
    fetch(SOURCE.url, folder / DATA_FILE)
    return folder
