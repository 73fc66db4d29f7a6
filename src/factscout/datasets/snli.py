"""SNLI dev and test, with the e-SNLI explanation of each label.

Bowman, Angeli, Potts & Manning, 2015, "A large annotated corpus for learning natural language
inference", EMNLP 2015 (https://aclanthology.org/D15-1075); read from the copy Camburu et al.
published with e-SNLI ("e-SNLI: Natural Language Inference with Natural Language Explanations",
NeurIPS 2018): line-aligned ``s1.<split>`` (premise), ``s2.<split>`` (hypothesis),
``labels.<split>`` and ``preproc1_expl_1.<split>`` (the first annotator's explanation), tokenised
as published ("packages ." with a space before the full stop). Image captions (Flickr30k) and
sentences written about them. The pairs without a gold label (SNLI's ``-``: no majority among
the five annotators; 158 of dev's 10,000 and 176 of test's) are not in these files, hence 9,842 and
9,824 pairs.

As a stance dataset: the hypothesis is the claim, the premise the evidence (entailment ->
supports, contradiction -> refutes, neutral -> not enough info). Splits ``dev``, ``test``; ids
``snli-<split>-<line>``. ``meta``: ``premise``, ``label``, ``stance``, ``explanation``. Licence:
SNLI CC BY-SA 4.0; the e-SNLI explanations MIT.
"""

from __future__ import annotations

from pathlib import Path

from factscout.datasets.base import Dataset, DatasetSource, fetch_all, github_raw, register_loader, require_file
from factscout.errors import InputError
from factscout.formats.jsonl import read_lines
from factscout.records import NOT_ENOUGH_INFO, REFUTES, SUPPORTS, Claim

_REPO, _COMMIT = "OanaMariaCamburu/e-SNLI", "7b585a3f077fdea899780eb0473940522ae44a2e"
_DIR = "dataset/eSNLI"
SOURCE = DatasetSource(
    name="SNLI dev/test (e-SNLI copy)",
    url=github_raw(_REPO, _COMMIT, f"{_DIR}/s1.dev"),
    license="CC BY-SA 4.0 (SNLI); e-SNLI explanations MIT",
    citation="Bowman, Angeli, Potts, Manning. A large annotated corpus for learning natural language inference. "
    "EMNLP 2015. Camburu, Rocktaeschel, Lukasiewicz, Blunsom. e-SNLI: Natural Language Inference with Natural "
    "Language Explanations. NeurIPS 2018.",
)
FOLDER = "snli-devtest"
PARTS = ("s1", "s2", "labels", "preproc1_expl_1")
SPLITS = ("dev", "test")
STANCE = {"entailment": SUPPORTS, "contradiction": REFUTES, "neutral": NOT_ENOUGH_INFO}
SHA256 = {  # from the data folder's SOURCE.txt
    github_raw(_REPO, _COMMIT, f"{_DIR}/{name}"): digest
    for name, digest in {
        "labels.dev": "d164d72435c3289fe53cb01e983f7c06e104bf192c0cae9caf2e99bf2e15f974",
        "labels.test": "e25c363e5cc70d5494d6e6555d8053eced22dca836e0f03067530eaad3d4f5f5",
        "preproc1_expl_1.dev": "55a502fdb187ea76c9e48282116f2d2c4a7bd57750addcdf1a8640cb2a0df28c",
        "preproc1_expl_1.test": "44c87e2cb429c3e077c8030e067a9ebb1f7a642b3a0d6fea0996655af431c50b",
        "s1.dev": "28a398b5478b10b4b851d4bb5b2e5767171519add6586015ed50b9436df11d00",
        "s1.test": "62cb8107dc3c56a4376e5e521842be24e0d61c92c346b94917da2bbf2a47d8be",
        "s2.dev": "a8c59709630b64ba103f7784c0cb7104a6baf23234562487264d9634714f5d2b",
        "s2.test": "1174f3ad30a3c30fc0f9eeffc1b3b6a79e0514026c5a658968a8e2a324b311a1",
    }.items()
}


def _lines(path: Path) -> list[str]:
    return [" ".join(line.split()) for _, line in read_lines(require_file(path, "snli"))]


@register_loader("snli", SPLITS)
def load(split: str, root: Path) -> Dataset:
    """SNLI ``dev`` (9,842 pairs) or ``test`` (9,824), each with its explanation."""
    paths = [root / FOLDER / f"{part}.{split}" for part in PARTS]
    premises, hypotheses, labels, explanations = (_lines(p) for p in paths)
    for path, lines in zip(paths[1:], (hypotheses, labels, explanations), strict=True):
        if len(lines) != len(premises):
            raise InputError(f"{path}: {len(lines)} lines, but {paths[0].name} has {len(premises)}")
    claims = []
    for i, (premise, hypothesis, label, explanation) in enumerate(
        zip(premises, hypotheses, labels, explanations, strict=True), start=1
    ):
        if label not in STANCE:
            raise InputError(f"{paths[2]}:{i}: expected a label of {', '.join(STANCE)}, got {label!r}")
        if not premise or not hypothesis:
            raise InputError(f"{paths[0 if not premise else 1]}:{i}: empty sentence")
        meta = {"premise": premise, "label": label, "stance": STANCE[label], "explanation": explanation}
        claims.append(Claim(f"snli-{split}-{i}", hypothesis, None, meta))
    return Dataset("snli", split, tuple(claims), source=SOURCE)


def download(dest: str | Path) -> Path:
    """Fetch the eight e-SNLI files into ``dest/snli-devtest``."""
    names = [f"{part}.{split}" for split in SPLITS for part in PARTS]
    return fetch_all({n: github_raw(_REPO, _COMMIT, f"{_DIR}/{n}") for n in names}, Path(dest) / FOLDER)
