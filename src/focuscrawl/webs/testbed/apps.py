"""The real applications of the test bed, in a virtualenv of their own.

Trac, Datasette and Pelican bring dependencies (Jinja2, click, docutils, ...) that must not meet the
project's (``requirements.lock``): they go into their own virtualenv, made once per cache folder and reused.
Every package is pinned (``PINS``: the applications and what they pulled in when this was written), so the
same test bed is built from the same code wherever it is built.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

# The applications and their dependencies, pinned (``pip freeze`` of a fresh install of the three).
PINS = """
Trac==1.6
datasette==0.65.5
pelican==4.12.0
django-scheduler==0.12.0
aiofiles==25.1.0
anyio==4.16.0
asgi-csrf==0.11
asgiref==3.13.0
blinker==1.9.0
certifi==2026.10.19.post1
click==8.5.1
click-default-group==1.2.4
Django==5.2.19
docutils==0.23
feedgenerator==2.2.1
flexcache==0.3
flexparser==0.4
h11==0.16.0
httpcore==1.0.9
httpx==0.28.1
hupper==1.12.1
icalendar==7.3.2
idna==3.20
itsdangerous==2.2.0
janus==2.0.0
Jinja2==3.1.6
markdown-it-py==4.3.0
MarkupSafe==3.0.4
mdurl==0.1.2
mergedeep==1.3.4
ordered-set==4.1.0
platformdirs==4.14.8
pluggy==1.7.0
Pygments==2.19.2
python-dateutil==4.0.0
python-multipart==0.0.34
pytz==2026.6
PyYAML==6.0.4
rich==15.0.0
sqlparse==0.6.1
typing_extensions==4.16.0
tzdata==2026.6
Unidecode==1.4.0
uvicorn==0.54.0
watchfiles==1.3.0
""".split()
APPLICATIONS = PINS[:4]
READY_FILE = "testbed-apps.txt"  # written last: the pins a finished install holds


def default_apps_dir() -> Path:
    """Where the applications' virtualenv lives unless told otherwise: a user cache, shared by test beds."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "focuscrawl" / "testbed-apps"


def apps_python(apps_dir: Path) -> Path:
    return apps_dir / "bin" / "python"


def ensure_apps(apps_dir: Path | None = None, log=print) -> Path:
    """The applications' virtualenv in ``apps_dir`` (made and filled when missing or stale): its Python.

    A virtualenv that holds an earlier, smaller set of these pins (an application added since) gets the
    missing packages installed into it, so that test beds already built with it keep running; any other
    difference makes it anew."""
    apps_dir = Path(apps_dir or default_apps_dir())
    ready = apps_dir / READY_FILE
    held = ready.read_text().split() if ready.exists() and apps_python(apps_dir).exists() else []
    if held == PINS:
        return apps_python(apps_dir)
    started = time.monotonic()
    anew, wanted = install_plan(held)
    log(f"installing {', '.join(wanted)} into {apps_dir} ...")
    ready.unlink(missing_ok=True)
    if anew:
        run([sys.executable, "-m", "venv", "--clear", str(apps_dir)], "making the applications' virtualenv")
    constraints = apps_dir / "constraints.txt"
    constraints.write_text("\n".join(PINS) + "\n")
    run([str(apps_python(apps_dir)), "-m", "pip", "install", "-q", "--disable-pip-version-check",
         "-c", str(constraints), *wanted], "installing the applications")
    ready.write_text("\n".join(PINS) + "\n")
    log(f"installed in {time.monotonic() - started:.0f} s")
    return apps_python(apps_dir)


def install_plan(held: list[str]) -> tuple[bool, list[str]]:
    """(make the virtualenv anew?, applications to install) for a virtualenv that holds ``held`` pins: only
    the missing applications when it holds an earlier subset of ``PINS``, all of them in a new one else."""
    if held and set(held) < set(PINS):
        return False, [name for name in APPLICATIONS if name not in held]
    return True, list(APPLICATIONS)


def apps_env() -> dict[str, str]:
    """The environment the applications run in: focuscrawl's PYTHONPATH left out, so that they import their
    own packages only."""
    return {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}


def run(argv: list[str], what: str) -> subprocess.CompletedProcess:
    """Run ``argv``; a failure is one error naming ``what`` and the last line the command printed."""
    done = subprocess.run(argv, capture_output=True, text=True, env=apps_env())
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"{what} failed (exit {done.returncode}): {lines[-1] if lines else 'no output'}")
    return done
