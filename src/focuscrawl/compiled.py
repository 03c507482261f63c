"""The one way the project compiles a loop: numba, or the loop as it is where numba is missing.

Some per-page and per-batch work (a page's few dozen links, a judge's batch of link contexts, a page's URLs into
the id index) is a plain Python loop over numpy arrays: numpy's cost per call (a few microseconds) would exceed
its arithmetic, and Python's cost per element is most of a step. numba compiles such loops; it installs as a
wheel (llvmlite brings its own LLVM: no compiler on the machine). Without it the loops run as the Python they
are (slower, the same numbers), so a machine without it still crawls the same.
"""

from __future__ import annotations

try:
    import numba
except ImportError:  # pragma: no cover - the fallback is the same code, run by Python
    numba = None


def compiled(function):
    """``function`` compiled by numba (cached on disk where it can be), or as it is without numba; either way
    ``function.py_func`` is the Python, which tests compare with the compiled loop."""
    if numba is None:
        function.py_func = function
        return function
    try:
        return numba.njit(cache=True, nogil=True)(function)
    except RuntimeError:  # no writable place for numba's cache: compiled anew in each process (about a second)
        return numba.njit(nogil=True)(function)
