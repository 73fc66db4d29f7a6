"""The runtime packages never import factscout.scale: importing it registers the Ray backends,
and asking for Ray without it says what to import."""

from __future__ import annotations

import pytest

from factscout.errors import InputError
from factscout.registry import Registry, where_to_run


def test_an_unregistered_ray_backend_says_to_import_factscout_scale():
    with pytest.raises(InputError, match=r"import factscout\.scale"):
        where_to_run(Registry("shard backend"), "auto")


def test_local_is_built_in_and_chosen_without_ray():
    from factscout.retrieve.sharded import SHARD_BACKENDS
    from factscout.rewrite.generate import BFS_POOLS
    from factscout.text.encoder import CORPUS_ENCODERS

    for registry in (SHARD_BACKENDS, CORPUS_ENCODERS, BFS_POOLS):
        assert where_to_run(registry, None) is registry["local"]


def test_importing_factscout_scale_registers_ray_everywhere():
    import factscout.scale  # noqa: F401
    from factscout.retrieve.sharded import SHARD_BACKENDS
    from factscout.rewrite.generate import BFS_POOLS
    from factscout.text.encoder import CORPUS_ENCODERS

    for registry in (SHARD_BACKENDS, CORPUS_ENCODERS, BFS_POOLS):
        assert where_to_run(registry, "auto") is registry["ray"]
