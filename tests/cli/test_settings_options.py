"""``factscout check`` and ``factscout serve`` take their check options from the fields of
``CheckSettings`` (flag, help, default written once), and ``check --server`` refuses exactly the
settings a server decides."""

from __future__ import annotations

import dataclasses
from typing import Any

import typer.main

from factscout.cli.main import app
from factscout.cli.settings import server_decides
from factscout.settings import PER_REQUEST, CheckSettings
from factscout.verify import STANCE_MODELS
from factscout.verify.base import HasInt8Form


def _params(command: str) -> dict[str, Any]:
    group = typer.main.get_command(app)
    return {p.name: p for p in group.commands[command].params if p.name}  # type: ignore[attr-defined]


def test_every_setting_is_an_option_of_check_and_serve_with_its_default():
    check, serve = _params("check"), _params("serve")
    for f in dataclasses.fields(CheckSettings):
        assert f.name in check, f.name
        assert check[f.name].default == f.default, f.name
        if f.name != "date_filter":  # each API request says whether to filter by date
            assert serve[f.name].default == f.default, f.name
            assert serve[f.name].opts == check[f.name].opts and serve[f.name].help == check[f.name].help


def test_the_documented_flags_stay():
    check = _params("check")
    # each setting is named as its flag (issue 48); --min-confidence stays as an alias others call
    assert check["min_verdict_confidence"].opts == ["--min-verdict-confidence", "--min-confidence"]
    assert check["min_stance_confidence"].opts == ["--min-stance-confidence"]
    assert check["rerank"].opts == ["--rerank"] and not check["rerank"].secondary_opts
    assert check["fast"].secondary_opts == ["--no-fast"]
    assert check["date_filter"].secondary_opts == ["--no-date-filter"]


def test_server_decides_every_setting_but_the_per_request_ones():
    changed = {f.name: object() for f in dataclasses.fields(CheckSettings)}
    refused = server_decides(changed)
    assert len(refused) == len(changed) - len(PER_REQUEST)
    assert "--min-verdict-confidence" in refused and "--fast" in refused and "--planner" not in refused
    assert server_decides({f.name: f.default for f in dataclasses.fields(CheckSettings)}) == []


def test_the_int8_form_is_named_by_the_stance_models_entry():
    assert isinstance(STANCE_MODELS["cross"], HasInt8Form) and STANCE_MODELS["cross"].int8 == "cross-int8"
    assert not isinstance(STANCE_MODELS["head"], HasInt8Form)

    def name(stance: str) -> str:
        return CheckSettings(stance=stance).stance_model_name

    assert name("cross:model.npz") == "cross-int8:model.npz"
    assert name("head") == "head" and name("nli:some/model") == "nli:some/model"
    assert CheckSettings(stance="ensemble:cross+head=0.5").stance_model_name == "ensemble:cross-int8+head=0.5"
    assert CheckSettings(stance="cross", fast=False).stance_model_name == "cross"
