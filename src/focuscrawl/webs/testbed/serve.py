"""Serve a test bed on loopback: its web with ``focuscrawl web serve``, each application as its own real server
(tracd, ``datasette serve``, a static file server for the blog) on an address of its own.

``serve_testbed`` hands back one hosts map (host -> ``ip:port``) for ``focuscrawl crawl --hosts-map``: the
web's hosts and the applications' host names, so that a crawl keeps the URLs the applications generate.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from focuscrawl.webs.serve import allocate_addresses
from focuscrawl.webs.testbed.apps import apps_env
from focuscrawl.webs.testbed.build import MANIFEST_FILE

WEB_BASE_IP = "127.0.46.1"
APPS_BASE_IP = "127.0.47.1"


def read_manifest(testbed_dir: Path) -> dict:
    path = Path(testbed_dir) / MANIFEST_FILE
    if not path.exists():
        raise FileNotFoundError(f"{testbed_dir} is not a test bed (no {MANIFEST_FILE}; build one with "
                                "`focuscrawl web testbed build`)")
    return json.loads(path.read_text())


def free_port(ip: str) -> int:
    with socket.socket() as sock:
        sock.bind((ip, 0))
        return sock.getsockname()[1]


def app_argv(manifest: dict, testbed_dir: Path, app: str, ip: str, port: int) -> list[str]:
    python = manifest["apps_python"]
    values = {"python": python, "bin": str(Path(python).parent), "ip": ip, "port": str(port),
              "dir": str(Path(testbed_dir).resolve() / manifest["apps"][app]["dir"])}
    return [part.format(**values) for part in manifest["apps"][app]["argv"]]


@contextmanager
def process(argv: list[str], log: Path, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen]:
    with open(log, "ab") as out:
        proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    try:
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def wait_until_up(proc: subprocess.Popen, host: str, address: str, path: str, what: str, timeout_s: float) -> None:
    """Until ``http://address/path`` answers with ``Host: host`` (any status but a refused connection)."""
    deadline = time.monotonic() + timeout_s
    request = urllib.request.Request(f"http://{address}{path}", headers={"Host": host})
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{what} exited with {proc.returncode} (its log is in the test bed's logs/)")
        try:
            with urllib.request.urlopen(request, timeout=5):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} did not answer within {timeout_s:.0f} s") from None
            time.sleep(0.2)


@contextmanager
def serve_testbed(testbed_dir: str | Path, *, web_base_ip: str = WEB_BASE_IP, apps_base_ip: str = APPS_BASE_IP,
                  extra: tuple[str, ...] = (), timeout_s: float = 120.0) -> Iterator[dict[str, str]]:
    """Serve the test bed until the block ends; yields the hosts map. ``extra``: options of ``web serve``."""
    testbed_dir = Path(testbed_dir)
    manifest = read_manifest(testbed_dir)
    logs = testbed_dir / "logs"
    logs.mkdir(exist_ok=True)
    map_file = Path(tempfile.mkdtemp(prefix="testbed-map-")) / "hosts.json"
    with ExitStack() as stack:
        web = stack.enter_context(process(
            [sys.executable, "-m", "focuscrawl.cli.main", "web", "serve", str(testbed_dir / manifest["web"]),
             "--port", "0", "--base-ip", web_base_ip, "--map", str(map_file), *extra], logs / "web.log"))
        hosts: dict[str, str] = {}
        waiting = []
        for app, ip in zip(manifest["apps"], allocate_addresses(len(manifest["apps"]), apps_base_ip)):
            port = free_port(ip)
            entry = manifest["apps"][app]
            proc = stack.enter_context(process(app_argv(manifest, testbed_dir, app, ip, port), logs / f"{app}.log",
                                                apps_env()))
            hosts[entry["host"]] = f"{ip}:{port}"
            waiting.append((proc, entry["host"], f"{ip}:{port}", entry["front"].split(entry["host"], 1)[1], app))
        for proc, host, address, path, app in waiting:
            wait_until_up(proc, host, address, path, app, timeout_s)
        web_hosts = wait_for_map(web, map_file, timeout_s)
        yield {**web_hosts, **hosts}


def wait_for_map(web: subprocess.Popen, map_file: Path, timeout_s: float) -> dict[str, str]:
    deadline = time.monotonic() + timeout_s
    while True:
        if web.poll() is not None:
            raise RuntimeError(f"focuscrawl web serve exited with {web.returncode}")
        if map_file.exists():
            text = map_file.read_text().strip()
            if text.endswith("}"):
                os.unlink(map_file)
                return json.loads(text)
        if time.monotonic() > deadline:
            raise TimeoutError("the test bed's web did not come up")
        time.sleep(0.1)
