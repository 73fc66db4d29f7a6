"""Connecting to Ray: ``--ray auto`` or ``--ray ADDRESS``.

``auto`` joins the cluster named by ``RAY_ADDRESS`` or the one last started on this machine
(``ray start --head``), and otherwise starts a local Ray instance in this process (Ray's own
resolution, ``ray.init()``); an address (``10.0.0.5:6379``, ``ray://head:10001``) joins that
cluster. The nodes need factscout installed (``pip install 'factscout[ray]'``), like the driver.
"""

from __future__ import annotations

import os
from typing import Any

from factscout.errors import InputError, MissingDependency


def require_ray() -> Any:
    """The ``ray`` module, or a clear install hint."""
    try:
        import ray
    except ImportError:
        raise MissingDependency("running on Ray needs ray: pip install 'factscout[ray]'") from None
    return ray


def init_ray(address: str) -> Any:
    """Connect this process to Ray once (``auto`` or a cluster address); returns the module."""
    if not isinstance(address, str) or not address.strip():
        raise InputError(f"--ray takes 'auto' or a cluster address (host:port), got {address!r}")
    ray = require_ray()
    if ray.is_initialized():
        return ray
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no telemetry unless the user opts in
    try:
        if address == "auto":
            ray.init()
        else:
            ray.init(address=address)
    except ConnectionError as exc:
        raise InputError(f"cannot reach a Ray cluster at {address!r}: {exc}") from None
    return ray


def cluster_cpus(ray: Any) -> int:
    """CPUs of the connected cluster (at least 1)."""
    return max(1, int(ray.cluster_resources().get("CPU", 1)))
