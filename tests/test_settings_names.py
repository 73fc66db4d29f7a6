"""A setting's field is named as its flag (issue 48): the renamed ``min_confidence`` is read as
``min_stance_confidence`` with a deprecation warning, never silently dropped."""

from __future__ import annotations

import pytest

from factscout.errors import InputError
from factscout.settings import CheckSettings


def test_the_old_name_is_read_as_the_new_one_with_a_warning():
    with pytest.warns(DeprecationWarning, match="min_stance_confidence"):
        settings = CheckSettings.from_mapping({"min_confidence": 0.6, "planner": "claim"})
    assert settings.min_stance_confidence == 0.6 and settings.planner == "claim"
    with pytest.warns(DeprecationWarning):
        assert settings.min_confidence == 0.6


def test_both_names_or_an_unknown_name_are_refused():
    with pytest.raises(InputError, match="not both"), pytest.warns(DeprecationWarning):
        CheckSettings.from_mapping({"min_confidence": 0.6, "min_stance_confidence": 0.7})
    with pytest.raises(InputError, match=r"unknown setting .min_confidance.; known: .*min_stance_confidence"):
        CheckSettings.from_mapping({"min_confidance": 0.6})
