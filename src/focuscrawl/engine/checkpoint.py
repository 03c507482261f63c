"""Checkpoints: a crawl's state and its policy, pickled, with the run's shared inputs written by reference.

The context's topic and classifier (and an oracle's judge) are rebuilt identically on resume, and may be large or
hold open files, so a checkpoint names them instead of copying them.
"""

from __future__ import annotations

import copyreg
import io
import pickle

# The format of what a checkpoint pickles: the engine's crawl state (``engine._STATE``), the defences' and the
# policies' attributes. Bump it whenever that layout changes (an attribute added, removed, renamed or meaning
# another thing): a checkpoint of another format is not read (``CheckpointFormatError``) and a resume replays the
# run's operation log instead, which gives the same crawl, so no class needs a ``__setstate__`` to migrate old ones.
# 1: checkpoints without a version (before 2). 2: the defences as one pipeline (``engine.defences.pipeline``).
# 3: the thin-page judge's per-host counts (``topic.thin``).
# 4: the host breaker in seconds (``engine.defences.hosts.HostBreaker`` per host, its clock).
# 5: traps, view parameters and alias rules learned from evidence (``engine.defences.views``, the new rule kinds of
#    ``aliases``, the trap families), listing families (``engine.defences.listings``); ``adaptive``'s left hosts.
# 6: thin-row families (``engine.defences.thin_rows``).
FORMAT = 6
_HEADER = b"focuscrawl checkpoint format "


class CheckpointFormatError(ValueError):
    """A checkpoint of another format than this version of focuscrawl reads: resume replays the log instead."""

    def __init__(self, found: int):
        super().__init__(f"checkpoint format {found}, this version reads {FORMAT}: replaying the log")
        self.found = found

# Types the pickler saves without looking at a dispatch table: a shared input of one of these could not be written as
# a reference through the table, and is written through ``persistent_id`` instead.
_UNDISPATCHED = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, dict, set, frozenset, type)


def _shared_input(index: int) -> object:
    """What a checkpoint names a shared input by; ``_InputsUnpickler`` answers it with the live object."""
    raise pickle.UnpicklingError("a checkpoint's shared inputs are read by the engine's unpickler only")


class _InputsPickler(pickle.Pickler):
    """Writes the crawl's shared inputs as references (their index) instead of their contents.

    Through the dispatch table of the inputs' types, not ``persistent_id``: that is a Python call for every object
    of the checkpoint (each frontier URL and number among them), which made it most of a checkpoint's time."""

    def __init__(self, file, inputs: list[object]):
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        ids = {id(obj): i for i, obj in enumerate(inputs) if obj is not None}
        if any(isinstance(obj, _UNDISPATCHED) for obj in inputs if obj is not None):
            self.persistent_id = lambda obj: ids.get(id(obj))
            return
        table = copyreg.dispatch_table.copy()
        for kind in {type(obj) for obj in inputs if obj is not None}:
            def reduce(obj, fallback=table.get(kind)):
                index = ids.get(id(obj))
                if index is not None:
                    return _shared_input, (index,)
                return fallback(obj) if fallback is not None else obj.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

            table[kind] = reduce
        self.dispatch_table = table


class _InputsUnpickler(pickle.Unpickler):
    def __init__(self, file, inputs: list[object]):
        super().__init__(file)
        self._inputs = inputs

    def persistent_load(self, pid):  # an input of a type the pickler does not dispatch: written by persistent_id
        return self._inputs[pid]

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_shared_input":
            return self._inputs.__getitem__
        return super().find_class(module, name)


def dump(state: object, inputs: list[object]) -> bytes:
    """``state`` pickled after a line that gives its ``FORMAT``, the ``inputs`` in it as references."""
    buffer = io.BytesIO()
    buffer.write(_HEADER + b"%d\n" % FORMAT)
    _InputsPickler(buffer, inputs).dump(state)
    return buffer.getvalue()


def load(blob: bytes, inputs: list[object]) -> object:
    """A ``dump`` read back, its references answered with the live ``inputs``; ``CheckpointFormatError`` for a
    checkpoint of another format (one without a format line is format 1)."""
    found, start = 1, 0
    if blob.startswith(_HEADER):
        line, _, _ = blob[len(_HEADER):].partition(b"\n")
        found, start = int(line), len(_HEADER) + len(line) + 1
    if found != FORMAT:
        raise CheckpointFormatError(found)
    buffer = io.BytesIO(blob)
    buffer.seek(start)
    return _InputsUnpickler(buffer, inputs).load()
