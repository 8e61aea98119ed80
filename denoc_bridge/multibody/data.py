"""Preallocated work buffers of the recursions.

A :class:`Data` belongs to one model (same numbers of links, DOF and
modules).  Its arrays are scratch space: the algorithms overwrite them and
return their results as new arrays, so no result depends on which function ran
before.  Pass the same ``Data`` to repeated calls to reuse the buffers; without
one, each thread uses its own buffers per model (``Model.thread_work``), so
calls from several threads at once are safe.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, Protocol

import numba
import numpy as np

from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import jit_enabled
from denoc_bridge.multibody.checks import check_model

__all__ = ["Data", "work_of"]

_PARALLEL_LOCK = threading.Lock()
_layer_is_threadsafe = None  # unknown until the first parallel kernel has run


def run_parallel(kernel: Callable[..., Any], *args: Any) -> Any:
    """Call a ``parallel=True`` kernel (the batch entries).  Numba's "workqueue" threading layer
    (the one left when neither TBB nor OpenMP loads, e.g. pip installs on macOS) aborts the
    process when two threads launch parallel regions at once ("Concurrent access has been
    detected"); with it the launches are serialised by a lock (OpenMP and TBB are thread-safe
    and run unlocked once the layer is known)."""
    global _layer_is_threadsafe
    if _layer_is_threadsafe:
        return kernel(*args)
    with _PARALLEL_LOCK:
        out = kernel(*args)
        if _layer_is_threadsafe is None and jit_enabled():  # plain Python has no threading layer
            _layer_is_threadsafe = numba.threading_layer() != "workqueue"
    return out


class _Sized(Protocol):
    """What a Data is sized by (a :class:`~denoc_bridge.Model`; ``multibody.model`` imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def n_links(self) -> int: ...
    @property
    def nq(self) -> int: ...
    @property
    def nv(self) -> int: ...
    @property
    def n_modules(self) -> int: ...


class Data:
    """Work buffers for a :class:`~denoc_bridge.multibody.model.Model` (see the module docstring).

    ``work`` is the (rows, W) work array of :mod:`denoc_bridge.kernels.tables`
    (regions of rows per link, per DOF and per kinematic module).
    """

    def __init__(self, model: _Sized) -> None:
        check_model(model)
        self.n_links, self.nq, self.nv, self.n_modules = model.n_links, model.nq, model.nv, model.n_modules
        self.work = T.aligned_empty((T.work_rows(self.n_links, self.nv, self.n_modules), T.W))

    def check(self, model: _Sized) -> Data:
        """This Data, if it was created for a model of ``model``'s sizes; else an InputError."""
        if (self.n_links, self.nq, self.nv, self.n_modules) != (model.n_links, model.nq, model.nv, model.n_modules):
            raise InputError(
                f"data was created for a model with {self.n_links} links and nv={self.nv}, "
                f"not for '{model.name}' ({model.n_links} links, nv={model.nv})"
            )
        return self


def work_of(model: Any, data: object) -> np.ndarray:
    """The work array for ``model``'s compiled recursions: this thread's (``data`` None) or that
    of ``data``, a :class:`Data` created for the model (an error naming ``data`` otherwise)."""
    if data is None:
        return model.thread_work()
    if not isinstance(data, Data):
        raise InputTypeError(f"data must be a denoc_bridge.Data (db.Data(model)) or None, got {type(data).__name__}")
    return data.check(model).work
