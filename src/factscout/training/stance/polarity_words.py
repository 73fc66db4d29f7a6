"""The direction and polarity words :func:`factscout.training.stance.augment.swap_direction` swaps
("reduced" -> "increased", "higher" -> "lower"): a word table, kept apart from the edits."""

from __future__ import annotations

# Direction verbs, every inflection written out (base, 3rd person, past, gerund); each pair swaps
# both ways, "reduce" only one way (its opposite is "increase", whose own opposite is "decrease").
Forms = tuple[str, str, str, str]
_VERB_PAIRS: tuple[tuple[Forms, Forms], ...] = (
    (("increase", "increases", "increased", "increasing"), ("decrease", "decreases", "decreased", "decreasing")),
    (("raise", "raises", "raised", "raising"), ("lower", "lowers", "lowered", "lowering")),
    (("prevent", "prevents", "prevented", "preventing"), ("cause", "causes", "caused", "causing")),
    (("improve", "improves", "improved", "improving"), ("worsen", "worsens", "worsened", "worsening")),
    (("promote", "promotes", "promoted", "promoting"), ("inhibit", "inhibits", "inhibited", "inhibiting")),
    (("enhance", "enhances", "enhanced", "enhancing"), ("impair", "impairs", "impaired", "impairing")),
    (("activate", "activates", "activated", "activating"), ("suppress", "suppresses", "suppressed", "suppressing")),
    (
        ("upregulate", "upregulates", "upregulated", "upregulating"),
        ("downregulate", "downregulates", "downregulated", "downregulating"),
    ),
)
_VERB_ONE_WAY: tuple[tuple[Forms, Forms], ...] = (
    (("reduce", "reduces", "reduced", "reducing"), ("increase", "increases", "increased", "increasing")),
)
_WORD_SWAPS = {
    "higher": "lower",
    # "lower" is taken by the verb table: its base form swaps to "raise" only as a verb (below)
    "more": "less",
    "less": "more",
    "fewer": "more",
    "greater": "smaller",
    "smaller": "greater",
    "larger": "smaller",
    "highest": "lowest",
    "lowest": "highest",
    "better": "worse",
    "worse": "better",
    "positively": "negatively",
    "negatively": "positively",
    "beneficial": "harmful",
    "harmful": "beneficial",
    "elevated": "reduced",
    "upregulation": "downregulation",
    "downregulation": "upregulation",
    "increase": "decrease",  # also the noun ("an increase in")
    "decrease": "increase",
    "reduction": "increase",
    "gain": "loss",
    "loss": "gain",
}


def _direction_table() -> dict[str, str]:
    table = dict(_WORD_SWAPS)
    swaps = [*_VERB_PAIRS, *((b, a) for a, b in _VERB_PAIRS), *_VERB_ONE_WAY]
    for forms, swapped in swaps:
        for form, new in zip(forms, swapped, strict=True):
            table.setdefault(form, new)
    table["lower"] = "higher"  # the comparative is far more frequent than the verb's base form
    return table


DIRECTION = _direction_table()
