"""How the rendering browser is started: with Chromium's sandbox on, as an unprivileged user, and its flags.

``crawl --render`` runs untrusted page scripts; Chromium's sandbox is what keeps a script that breaks the
renderer from the crawler's files and processes. Debian's chromium has no setuid sandbox helper: the sandbox is
built from user namespaces (each renderer in a user and PID namespace of its own, under a seccomp filter), which
Chromium refuses to do as root ("Running as root without --no-sandbox is not supported"). So:

* as an ordinary user the browser runs as that user, sandbox on;
* as root (CI, containers) it runs as ``fetch.render_user`` (``nobody`` by default): Playwright starts a small
  launcher (written here, readable by root only) that drops to that account and execs the browser with a
  profile and HOME of its own, a folder only that account can write, removed when the renderer closes;
* where the sandbox cannot be built (no such account, user namespaces disabled for it) rendering is refused
  with one line that names the opt-out, ``--render-no-sandbox`` (``fetch.render_sandbox=false``).

Whether the sandbox can be built is asked of the kernel, as the account the browser will run as, by the very
call Chromium makes (``unshare`` of a user, PID and network namespace), before the crawl starts.
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.extras import MissingExtra

PURPOSE = "JavaScript rendering (--render)"
DEFAULT_RENDER_USER = "nobody"
OPT_OUT = "--render-no-sandbox (-s fetch.render_sandbox=false)"

# Debian's chromium, as the project's other browser tests start it. Playwright adds --headless and a fresh
# --user-data-dir of its own (it refuses one here; the root launcher swaps it for a folder its account can write).
CHROMIUM_FLAGS = (
    "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
    # No name or address resolves: the page's document comes from memory, and nothing else may leave.
    "--host-resolver-rules=MAP * ~NOTFOUND",
    # WebRTC gathers no candidate and sends no STUN packet: its UDP goes to address literals, which neither
    # request interception nor the resolver rule above sees (tests/test_render_safety.py sends one to loopback
    # without this flag). The --force- spelling some guides give is not read by this Chromium.
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
)

# The namespaces Chromium's sandbox makes for each renderer (linux/sched.h): a user, a PID and a network namespace.
_CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = 0x10000000, 0x20000000, 0x40000000
# Run by this Python (as root, it may not be the account's to run: a virtualenv under /root), which then drops to
# the account given (uid gid) before it asks.
_NAMESPACE_PROBE = (
    "import ctypes, os, sys\n"
    "if len(sys.argv) > 1:\n"
    "    os.setgroups([]); os.setgid(int(sys.argv[2])); os.setuid(int(sys.argv[1]))\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    f"if libc.unshare({_CLONE_NEWUSER | _CLONE_NEWPID | _CLONE_NEWNET}) != 0:\n"
    "    sys.exit(os.strerror(ctypes.get_errno()))\n")


class SandboxUnavailable(MissingExtra):
    """Chromium's sandbox cannot run on this machine: rendering is refused unless the user opts out."""


@dataclass(frozen=True)
class BrowserAccount:
    """The unprivileged account a browser started by root runs as."""

    name: str
    uid: int
    gid: int


def find_browser(executable: str | None = None) -> str:
    """The Chromium to render with: ``executable`` if given, else ``chromium`` on PATH; or a MissingExtra."""
    found = shutil.which(executable or "chromium")
    if found is None:
        where = executable or "no chromium on PATH"
        raise MissingExtra(f"{PURPOSE} needs Chromium: {where} is not an executable (Debian: apt-get install "
                           "chromium; or set fetch.render_browser=PATH)")
    return found


def refusal(reason: str) -> str:
    return (f"{PURPOSE} runs untrusted page scripts only inside Chromium's sandbox, which cannot run here: {reason}; "
            f"to render without it, at your own risk, add {OPT_OUT}")


def browser_account(user: str) -> BrowserAccount | None:
    """Whom the browser runs as: None (the crawler's own user) unless the crawler runs as root, then ``user``."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwuid(int(user)) if user.isdigit() else pwd.getpwnam(user)
    except KeyError:
        raise SandboxUnavailable(refusal(f"the crawler runs as root and there is no account {user!r} to run the "
                                         "browser as (fetch.render_user)")) from None
    if entry.pw_uid == 0:
        raise SandboxUnavailable(refusal(f"the crawler runs as root and fetch.render_user ({user}) is root too"))
    return BrowserAccount(entry.pw_name, entry.pw_uid, entry.pw_gid)


def namespace_problem(account: BrowserAccount | None) -> str | None:
    """Why ``account`` (None: this process's user) cannot make the namespaces of Chromium's sandbox, or None."""
    as_account = [] if account is None else [str(account.uid), str(account.gid)]
    try:
        probe = subprocess.run([sys.executable, "-I", "-c", _NAMESPACE_PROBE, *as_account], capture_output=True,
                               text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return f"could not ask the kernel as {_who(account)} ({exc})"
    if probe.returncode == 0:
        return None
    error = (probe.stderr.strip().splitlines() or ["unknown error"])[-1]
    return f"{_who(account)} cannot create user namespaces ({error}; the kernel or a security policy forbids them)"


def _who(account: BrowserAccount | None) -> str:
    return f"the account {account.name!r}" if account is not None else "this user"


def check_sandbox(user: str = DEFAULT_RENDER_USER) -> BrowserAccount | None:
    """Before a crawl renders: the account the browser runs as, or SandboxUnavailable saying why it cannot."""
    account = browser_account(user)
    problem = namespace_problem(account)
    if problem is not None:
        raise SandboxUnavailable(refusal(problem))
    return account


@dataclass(frozen=True)
class BrowserLaunch:
    """What ``playwright.chromium.launch`` is given, and the folder to remove when the browser has closed."""

    executable_path: str
    args: tuple[str, ...]
    chromium_sandbox: bool
    workdir: Path | None = None

    def cleanup(self) -> None:
        if self.workdir is not None:
            shutil.rmtree(self.workdir, ignore_errors=True)


def prepare_launch(executable: str, *, sandbox: bool = True, user: str = DEFAULT_RENDER_USER) -> BrowserLaunch:
    """How to start ``executable``: sandbox on (as ``user`` when we are root), or, if ``sandbox`` is False, off.

    Playwright passes ``--no-sandbox`` itself unless ``chromium_sandbox`` is set, so that is set here too."""
    if not sandbox:
        return BrowserLaunch(executable, (*CHROMIUM_FLAGS, "--no-sandbox"), chromium_sandbox=False)
    account = check_sandbox(user)
    if account is None:
        return BrowserLaunch(executable, CHROMIUM_FLAGS, chromium_sandbox=True)
    workdir = Path(tempfile.mkdtemp(prefix="focuscrawl-browser-", dir=_passable_tempdir(account)))
    try:
        workdir.chmod(0o711)  # the account may pass through to its home, not list or write the folder
        home = workdir / "home"
        home.mkdir(mode=0o700)
        os.chown(home, account.uid, account.gid)
        launcher = workdir / "launch"
        launcher.write_text(_launcher_source(executable, account, home))
        launcher.chmod(0o700)
    except BaseException:
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    return BrowserLaunch(str(launcher), CHROMIUM_FLAGS, chromium_sandbox=True, workdir=workdir)


def _passable_tempdir(account: BrowserAccount) -> str:
    """A temporary folder ``account`` can reach: root's own (TMPDIR, a pytest folder) may be closed to it."""
    for candidate in (tempfile.gettempdir(), "/tmp", "/var/tmp"):
        if _passable(Path(candidate).resolve(), account):
            return candidate
    raise SandboxUnavailable(refusal(f"no temporary folder the account {account.name!r} can reach for the browser's "
                                     "profile (TMPDIR, /tmp, /var/tmp)"))


def _passable(folder: Path, account: BrowserAccount) -> bool:
    """Whether ``account`` may pass through ``folder`` and each folder above it (the execute bit that applies)."""
    for part in (folder, *folder.parents):
        try:
            info = part.stat()
        except OSError:
            return False
        bit = 0o100 if info.st_uid == account.uid else 0o010 if info.st_gid == account.gid else 0o001
        if not info.st_mode & bit:
            return False
    return True


def _launcher_source(executable: str, account: BrowserAccount, home: Path) -> str:
    """A script Playwright runs (as root) in place of the browser: it drops to ``account`` and execs the browser,
    with the profile in ``home`` (Playwright's own profile folder, made by root, is not the account's to write)."""
    return f"""#!{sys.executable} -I
import os, sys
home, browser = {str(home)!r}, {executable!r}
args = [arg for arg in sys.argv[1:] if not arg.startswith("--user-data-dir=")]
# TMPDIR too: Chromium makes its profile lock's socket folder there, and root's TMPDIR may be closed to the account
os.environ.update(HOME=home, TMPDIR=home, XDG_CONFIG_HOME=home + "/.config", XDG_CACHE_HOME=home + "/.cache")
os.setgroups([])
os.setgid({account.gid})
os.setuid({account.uid})
os.chdir(home)
os.execv(browser, [browser, "--user-data-dir=" + home + "/profile", *args])
"""
