"""What every command shares: the consoles, and turning a user's mistake into one clear line."""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.markup import escape
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.bench.protocol import TopicError
from focuscrawl.config import describe_validation_error
from focuscrawl.crawl import ResumeError
from focuscrawl.extras import MissingExtra
from focuscrawl.storage.failures import MachineError, StoreDamagedError
from focuscrawl.storage.state import StoreVersionError
from focuscrawl.webs.store import WebFormatError

console = Console(stderr=True)
# Piped output gets a wide console so tables are not truncated in logs and CI.
out = Console(width=None if Console().is_terminal else 140)

# Exceptions that mean "the user asked for something that cannot be done", not a bug: one line, exit 2.
USER_ERRORS: tuple[type[BaseException], ...] = (TopicError, WebFormatError, ResumeError, StoreVersionError,
                                                StoreDamagedError,
                                                MissingExtra, ArchiveLoadFailed, KeyError, ValueError)

T = TypeVar("T")


# The exit status of a machine's failure (a full disk, a read-only folder, ...): sysexits' EX_TEMPFAIL, "try again
# later", so that a script can tell it from a mistake and re-run the command once the machine is mended.
MACHINE_FAILURE = 75


def fail(message: str, code: int = 2) -> NoReturn:
    # escaped: a message may hold brackets (a URL, "focuscrawl[neural]") that rich would read as markup
    # and no emoji codes: "module:x: ..." is a judge's name, not a cross
    console.print(f"[bold red]error:[/] {escape(message)}", soft_wrap=True, highlight=False, emoji=False)
    raise typer.Exit(code)


def run(action: Callable[[], T]) -> T:
    """``action()``, with a user error reported as one line and exit status 2, a machine's failure as one line and
    ``MACHINE_FAILURE``."""
    try:
        return action()
    except MachineError as exc:
        fail(str(exc), MACHINE_FAILURE)
    except ValidationError as exc:
        fail(describe_validation_error(exc))
    except UnicodeDecodeError as exc:  # a file given as text that is not (the reader names the file where it can)
        fail(f"a file is not UTF-8 text: {exc.reason} at byte {exc.start}")
    except USER_ERRORS as exc:
        # a KeyError's str() quotes its message; its argument is the message itself
        fail(str(exc.args[0]) if isinstance(exc, KeyError) and exc.args else str(exc))
    except OSError as exc:  # a missing path, a directory, unreadable, on a full disk, ...
        fail(f"{exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}")
