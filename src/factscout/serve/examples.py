"""Example claims for the page's empty state: real claims of the datasets factscout ships
indexes for, each with the passages its dataset cites as its evidence. The page offers only the
examples whose evidence is in the served index, so an example always has something to find (a
SciFact index gets SciFact claims, an AVeriTeC one AVeriTeC claims, any other index none)."""

from __future__ import annotations

from collections.abc import Container, Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Example:
    """A claim to try, the date it was made (``YYYY-MM-DD`` or ``None``) and the passage ids that
    hold its evidence in its dataset."""

    claim: str
    date: str | None
    evidence: tuple[str, ...]


EXAMPLES: tuple[Example, ...] = (
    # SciFact train claims (claim ids 30, 40, 60, 69), cited abstracts by S2ORC id
    Example(
        "A breast cancer patient's capacity to metabolize tamoxifen influences treatment outcome.", None, ("24341590",)
    ),
    Example(
        "A diminished ovarian reserve is a very strong indicator of infertility, even in an a priori "
        "non-infertile population.",
        None,
        ("13497630",),
    ),
    Example("ART has no effect on the infectiveness of HIV-positive people.", None, ("13899137", "13901073")),
    Example("Activation of PPM1D enhances p53 function.", None, ("5956380", "4414547")),
    # AVeriTeC train claims (train-128, train-75, train-84), their gold answers' passages
    Example("COVID-19 virus is airborne.", "2020-08-10", ("train-128-q0-a0",)),
    Example("Drinking vodka protects an individual against COVID-19.", "2020-08-17", ("train-75-q0-a0",)),
    Example(
        "Nigeria is the largest producer of rice in Africa, ranking 14th in the world.",
        "2020-08-17",
        ("train-84-q0-a0",),
    ),
)
MAX_SHOWN = 4


def examples_for(store: Container[str], examples: Sequence[Example] = EXAMPLES) -> list[Example]:
    """The examples (at most :data:`MAX_SHOWN`) with all their evidence passages in ``store``
    (passage ids: a passage store or any container of ids)."""
    return [x for x in examples if all(pid in store for pid in x.evidence)][:MAX_SHOWN]
