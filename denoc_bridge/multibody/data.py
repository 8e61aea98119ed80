"""Preallocated work buffers of the recursions.

A :class:`Data` belongs to one model (same numbers of links, DOF and
modules).  Its arrays are scratch space: the algorithms overwrite them and
return their results as new arrays, so no result depends on which function ran
before.  Pass the same ``Data`` to repeated calls to reuse the buffers; without
one, each thread uses its own buffers per model (``Model.thread_work``), so
calls from several threads at once are safe.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Protocol, cast

import numpy as np

from denoc_bridge.core import layout as T
from denoc_bridge.core import sized
from denoc_bridge.core import tree as compiled_tree
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import ModelKind, check_model

__all__ = ["Data", "get_num_threads", "set_num_threads", "work_of"]

#: the environment variable that sets the threads of a batch (default: the CPUs this process may use)
THREADS_ENV = "DENOC_BRIDGE_NUM_THREADS"
_threads = threading.local()  # set_num_threads of the calling thread
_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _usable_cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except AttributeError:  # macOS, Windows
        return os.cpu_count() or 1


def max_threads() -> int:
    """The most threads a batch may take: the machine's CPUs (more would only wait for one)."""
    return max(os.cpu_count() or 1, _usable_cpus())


def _default_threads() -> int:
    """:data:`THREADS_ENV` when set, else the CPUs this process may run on."""
    text = os.environ.get(THREADS_ENV, "").strip()
    if not text:
        return _usable_cpus()
    try:
        n = int(text)
    except ValueError:
        raise InputError(f"{THREADS_ENV}={text!r} is not a whole number of threads") from None
    if not 1 <= n <= max_threads():
        raise InputError(f"{THREADS_ENV}={text!r}: a batch takes 1 to {max_threads()} threads on this machine")
    return n


def set_num_threads(n: int) -> None:
    """The threads the batch calls of the calling thread share out their states over (a batch of
    ``forward_dynamics``, ``simulate_batch``, the energies of many states ...); per calling
    thread, as numba's setting was, so that the threads of a sweep's workers each keep theirs.
    The default is :data:`THREADS_ENV` or the CPUs this process may use; ``n`` is at most the
    machine's CPUs (:func:`max_threads`).  The command line checks :data:`THREADS_ENV` before it
    starts (a bad value is named); in Python it is read at the first batch call."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise InputTypeError(f"set_num_threads: n must be an int, got {type(n).__name__}")
    if not 1 <= n <= max_threads():
        raise InputError(f"set_num_threads: n must be from 1 to the {max_threads()} CPUs of this machine, got {n}")
    _threads.n = int(n)


def get_num_threads() -> int:
    """The threads of the calling thread's batch calls (:func:`set_num_threads`)."""
    n = getattr(_threads, "n", None)
    return n if n is not None else _default_threads()


def batch_threads() -> int:
    """Threads of a batch: :func:`get_num_threads`."""
    return get_num_threads()


def run_chunks(kernel: Callable[..., Any], n: int, *args: Any, serial_below: int = 0, align: int = 1) -> None:
    """Call ``kernel(*args, start, stop)`` over ``0:n`` in chunks, on :func:`batch_threads`
    threads, or on the calling thread alone when ``n < serial_below`` (items too cheap to share
    out): a compiled chunk kernel that runs without the GIL (the compiled core's batch entries,
    which return 0, or -2 for arrays whose lengths do not fit one another: the callers size them,
    so that is a defect, raised as one).  One chunk per thread, the first in the calling thread,
    the bounds between chunks multiples of ``align`` (a kernel that groups its items so, as the
    lanes of ``dynamics_chunk``, then computes what one chunk would); a kernel's exception (a
    TypeError of its arguments) reaches the caller."""
    groups = -(-n // align)
    threads = min(groups, batch_threads()) if n >= serial_below else 1
    if threads <= 1:
        _chunk_done(kernel(*args, 0, n))
        return
    pool = _pool(threads)
    bounds = [min(n, align * (c * groups // threads)) for c in range(threads + 1)]
    futures = [pool.submit(kernel, *args, bounds[c], bounds[c + 1]) for c in range(1, threads)]
    _chunk_done(kernel(*args, bounds[0], bounds[1]))  # the first chunk in this thread
    for f in futures:
        _chunk_done(f.result())


def run_claimed(kernel: Callable[..., Any], n: int, *args: Any) -> None:
    """Call ``kernel(*args, 0, n, counter)`` on :func:`batch_threads` threads that claim the items
    ``0:n`` one at a time from the shared int64 ``counter`` (a compiled kernel that runs without
    the GIL, the compiled runs' batch): one item per task, so that items of unequal cost (runs
    that fail early) leave no thread idle.  Statuses and exceptions as :func:`run_chunks`."""
    counter = np.zeros(1, dtype=np.int64)
    threads = min(n, batch_threads())
    if threads <= 1:
        _chunk_done(kernel(*args, 0, n, counter))
        return
    futures = [_pool(threads).submit(kernel, *args, 0, n, counter) for _ in range(1, threads)]
    _chunk_done(kernel(*args, 0, n, counter))  # one of them in this thread
    for f in futures:
        _chunk_done(f.result())


def _pool(threads: int) -> ThreadPoolExecutor:
    """The shared pool, with at least ``threads`` workers."""
    global _POOL
    with _POOL_LOCK:
        # more threads asked for: a larger pool; the old one is not shut down, since another
        # thread may be submitting its chunks to it (its idle threads cost nothing)
        if _POOL is None or _POOL._max_workers < threads:
            _POOL = ThreadPoolExecutor(max_workers=max(threads, os.cpu_count() or 1), thread_name_prefix="denoc")
        return _POOL


def _chunk_done(status: int) -> None:
    """A chunk's status: 0, or -2 (raised by :func:`~denoc_bridge.core.sized`); nothing else."""
    if sized(status, "a compiled batch kernel"):
        raise RuntimeError(f"a compiled batch kernel returned the status {status}, not 0 or -2")


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

    ``work`` is the (rows, W) work array of :mod:`denoc_bridge.core.layout`
    (regions of rows per link, per DOF and per kinematic module).  ``Data(mimic_model)`` holds
    the buffers of ``mimic_model.tree``, whose recursions a
    :class:`~denoc_bridge.MimicModel` runs.
    """

    def __init__(self, model: _Sized) -> None:
        check_model(model)
        model = _tree_of(model)
        self.n_links, self.nq, self.nv, self.n_modules = model.n_links, model.nq, model.nv, model.n_modules
        self.work = T.aligned_empty(compiled_tree.work_shape(self.n_links, self.nv, self.n_modules))

    def check(self, model: _Sized) -> Data:
        """Check that this Data fits ``model`` and return it.

        A Data fits every model of the sizes it was created for (numbers of links,
        configuration and velocity entries, kinematic modules); a
        :class:`~denoc_bridge.MimicModel` is sized by its tree.

        Parameters
        ----------
        model : Model or MimicModel
            The model the buffers are about to be used for.

        Returns
        -------
        Data
            This Data (so that ``work = data.check(model).work`` reads in one line).

        Raises
        ------
        InputTypeError
            ``model`` is not a denoc_bridge model.
        InputError
            The Data was created for a model of other sizes (naming both).

        Examples
        --------
        >>> import denoc_bridge as db
        >>> panda = db.load_robot("panda")
        >>> data = db.Data(panda)
        >>> data.check(panda) is data
        True
        >>> data.check(db.load_robot("chain:3"))
        Traceback (most recent call last):
            ...
        denoc_bridge.errors.InputError: data was created for a model with 9 links and nv=9, not for 'planar_chain3' (3 links, nv=3)
        """
        sizes = (self.n_links, self.nq, self.nv, self.n_modules)
        try:  # the common case first: the model this Data was made for (a check per call)
            if sizes == (model.n_links, model.nq, model.nv, model.n_modules):
                return self
        except AttributeError:  # not a model: named below
            pass
        check_model(model)
        tree = _tree_of(model)
        if sizes != (tree.n_links, tree.nq, tree.nv, tree.n_modules):
            raise InputError(
                f"data was created for a model with {self.n_links} links and nv={self.nv}, "
                f"not for '{tree.name}' ({tree.n_links} links, nv={tree.nv})"
            )
        return self


def _tree_of(model: _Sized) -> _Sized:
    """The model whose recursions run: a MimicModel's tree (``multibody.mimic`` imports this
    module, so a MimicModel is recognised by its ``tree``), any other model itself."""
    tree = getattr(model, "tree", None)
    return cast(_Sized, tree) if isinstance(tree, ModelKind) else model


def work_of(model: Any, data: object) -> np.ndarray:
    """The work array for ``model``'s compiled recursions: this thread's (``data`` None) or that
    of ``data``, a :class:`Data` created for the model (an error naming ``data`` otherwise)."""
    if data is None:
        return model.thread_work()
    if not isinstance(data, Data):
        raise InputTypeError(f"data must be a denoc_bridge.Data (db.Data(model)) or None, got {type(data).__name__}")
    return data.check(model).work
