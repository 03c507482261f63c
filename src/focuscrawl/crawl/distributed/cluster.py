"""Ray, for a distributed crawl: importing it (an optional extra), checking a cluster's address, starting a runtime."""

from __future__ import annotations

import logging
import os
import socket
from typing import Any

from focuscrawl.extras import MissingExtra

INSTALL_HINT = "pip install 'focuscrawl[distributed]'"


def require_ray():
    """``import ray``, or the one line saying how to install it."""
    try:
        import ray
    except ImportError:
        raise MissingExtra(f"--workers and --ray-address need the 'distributed' extra ({INSTALL_HINT}): ray is not "
                           "installed") from None
    return ray


class ClusterUnreachable(ValueError):
    """``--ray-address`` names no Ray cluster that answers."""


def check_reachable(address: str, timeout_s: float = 5.0) -> None:
    """Fail in seconds, with the address, when nothing listens at ``--ray-address HOST:PORT``: ``ray.init``
    itself retries for minutes, printing its own warnings. Other forms (``auto``, ``ray://``) go to Ray as given."""
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit() or address.startswith("ray://"):
        return
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=timeout_s).close()
    except OSError as exc:
        raise ClusterUnreachable(f"no Ray cluster answers at {address} ({exc.strerror or exc}): start one with "
                                 "`ray start --head` and give the address it prints") from None


def start_ray(address: str | None, workers: int) -> bool:
    """Join the cluster at ``address``, or start a private local runtime for ``workers`` shards, unless this process
    is connected to Ray already (a test's runtime, a notebook's). Returns whether it started one (and so shuts it
    down at the end)."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"logging_level": logging.ERROR, "log_to_driver": False, "include_dashboard": False,
                               "configure_logging": True}
    if address:
        # the cluster's workers import focuscrawl as installed on their node; a PYTHONPATH of the driver
        # (a source checkout on a shared filesystem) goes with the job
        path = os.environ.get("PYTHONPATH")
        runtime_env = {"env_vars": {"PYTHONPATH": path}} if path else None
        ray.init(address=address, runtime_env=runtime_env, **options)
    else:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        # "local": a private runtime even when `ray start` left a cluster running on this machine
        ray.init(address="local", num_cpus=max(workers + 1, os.cpu_count() or 1), **options)
    return True
