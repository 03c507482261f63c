"""Checkpoints: a crawl's state and its policy, pickled, with the run's shared inputs written by reference.

The context's topic and classifier (and an oracle's judge) are rebuilt identically on resume, and may be large or
hold open files, so a checkpoint names them instead of copying them.
"""

from __future__ import annotations

import copyreg
import io
import pickle

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

    def persistent_load(self, pid):  # checkpoints written before the dispatch table
        return self._inputs[pid]

    def find_class(self, module: str, name: str):
        if module == __name__ and name == "_shared_input":
            return self._inputs.__getitem__
        return super().find_class(module, name)


def dump(state: object, inputs: list[object]) -> bytes:
    """``state`` pickled, the ``inputs`` in it as references."""
    buffer = io.BytesIO()
    _InputsPickler(buffer, inputs).dump(state)
    return buffer.getvalue()


def load(blob: bytes, inputs: list[object]) -> object:
    """A ``dump`` read back, its references answered with the live ``inputs``."""
    return _InputsUnpickler(io.BytesIO(blob), inputs).load()
