"""Start ``focuscrawl web serve`` in a subprocess and hand back its host -> address map."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def serve_web(python: str, web_dir: str, base_ip: str, timeout_s: float = 60.0,
              extra: tuple[str, ...] = ()) -> Iterator[dict[str, str]]:
    """``extra``: more options of ``focuscrawl web serve`` (``("--latency-ms", "50")``)."""
    map_file = os.path.join(tempfile.mkdtemp(), "hosts.json")
    server = subprocess.Popen([python, "-m", "focuscrawl.cli.main", "web", "serve", web_dir, "--port", "0",
                               "--base-ip", base_ip, "--map", map_file, *extra],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            if server.poll() is not None:
                raise RuntimeError(f"focuscrawl web serve exited with {server.returncode}")
            if os.path.exists(map_file):
                text = open(map_file).read().strip()
                if text.endswith("}"):
                    break
            if time.monotonic() > deadline:
                raise TimeoutError("the served web did not come up")
            time.sleep(0.1)
        yield json.loads(text)
    finally:
        server.terminate()
        server.wait()
