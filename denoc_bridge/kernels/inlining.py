"""numba's inliner, faster: each helper's IR built once, and copied once per inlined call.

A kernel helper marked ``@njit(inline="always")`` is inlined by numba into its caller's IR
before typing (``numba.core.inline_closurecall.InlineWorker.inline_ir``).  To inline, numba
copies the callee's IR twice, block by block, each block with its own ``copy.deepcopy``: every
variable of a block deep-copies the function's ``Scope`` it points to, and the scope holds
*all* the callee's variables.  So each inlined call copies every variable of the callee once per
block: (blocks x variables) objects, for helpers that are themselves large after their own
inlining (a spatial congruence: 21-tuples, five rotation and five offset cases).  Profiled on a
cold ``forward_dynamics`` (cProfile, numba 0.68): 139 of the 266 s of compilation were these
copies, 12.4 million ``deepcopy`` calls.

:func:`install` gives each ``inline_ir`` call one deep-copy memo, shared by the blocks of its
copies: the scope is copied once per copy of the IR, and its blocks share that one copy, as
the blocks of the original share their one scope.  The inlined IR is the same (same variables,
same names, same statements), so numba types and lowers the same function and emits the same
machine code (``tests/kernels/test_inlining.py`` compares the LLVM IR of a kernel compiled both
ways); only the time to get there changes.

And for each inlined call numba builds the callee's IR again from its bytecode
(``InlineWorker.inline_function`` runs the callee's untyped pipeline, which inlines the
callee's own helpers the same way, all the way down): a helper inlined at 20 sites had its
whole inlined IR built 20 times.  :func:`install` keeps the IR numba builds for each helper
(per function and compiler flags; built the same way, by numba) and gives ``inline_ir`` that,
which copies it before changing anything, as it copies a freshly built one.

The patches are the narrowest that do it: inside ``numba.core.inline_closurecall`` (whose only
``copy.deepcopy`` is that block copy) the module's ``copy`` becomes a stand-in whose
``deepcopy`` uses the memo of the ``inline_ir`` call in progress, and
``InlineWorker.inline_function`` (three lines in numba: build the callee's IR, inline it)
takes the callee's IR from the per-process table; nothing else of numba changes.
``DENOC_BRIDGE_NUMBA_INLINER=numba`` leaves numba untouched (to compare).
"""

from __future__ import annotations

import copy
import inspect
import os
import threading
from typing import Any

from numba.core import inline_closurecall

#: the environment variable that, set to ``numba``, keeps numba's own block-by-block copies
ENV = "DENOC_BRIDGE_NUMBA_INLINER"


class _SharedMemoCopy:
    """The ``copy`` module as ``numba.core.inline_closurecall`` sees it: ``deepcopy`` without
    a memo uses the memo of the ``inline_ir`` call in progress (a fresh one outside any)."""

    def __init__(self) -> None:
        self.local = threading.local()

    def __getattr__(self, name: str) -> Any:
        return getattr(copy, name)

    def deepcopy(self, x: Any, memo: dict | None = None) -> Any:
        if memo is None:
            memo = getattr(self.local, "memo", None)
        return copy.deepcopy(x, memo)


_PROXY = _SharedMemoCopy()


def _with_shared_memo(inline_ir):
    def inline_ir_shared(self, *args, **kwargs):
        outer = getattr(_PROXY.local, "memo", None)
        _PROXY.local.memo = {}  # one memo for the copies this call makes
        try:
            return inline_ir(self, *args, **kwargs)
        finally:
            _PROXY.local.memo = outer

    inline_ir_shared.denoc_bridge_shared_memo = True  # type: ignore[attr-defined]
    inline_ir_shared.__wrapped__ = inline_ir  # type: ignore[attr-defined]
    return inline_ir_shared


#: the untyped IR of each inlined helper, per (function, compiler flags, locals, contexts)
_UNTYPED_IR: dict = {}


def _untyped_ir(worker, func):
    """``worker.run_untyped_passes(func)``, built once per function and flags."""
    worker.flags.enable_ssa = False  # as run_untyped_passes does, hit or miss
    key = (
        func,
        worker.flags.get_mangle_string(),
        tuple(sorted(worker.locals.items())),
        id(worker.typingctx),
        id(worker.targetctx),
        type(worker.pipeline),
    )
    try:
        ir = _UNTYPED_IR.get(key)
    except TypeError:  # unhashable locals: build it, as numba does
        return worker.run_untyped_passes(func)
    if ir is None:
        ir = _UNTYPED_IR[key] = worker.run_untyped_passes(func)
    return ir


def _inline_function(self, caller_ir, block, i, function, arg_typs=None):
    # numba's InlineWorker.inline_function, the callee's IR taken from the table (inline_ir
    # copies it before it changes anything)
    callee_ir = _untyped_ir(self, function)
    return self.inline_ir(caller_ir, block, i, callee_ir, function.__code__.co_freevars, arg_typs=arg_typs)


#: the parameters of numba's ``InlineWorker.inline_function`` that :func:`_inline_function`
#: replaces (as in numba 0.68, where the replacement was checked); a numba whose
#: ``inline_function`` takes other parameters keeps its own
_INLINE_FUNCTION_PARAMETERS = ("self", "caller_ir", "block", "i", "function", "arg_typs")


def _replaceable(inline_function) -> bool:
    try:
        return tuple(inspect.signature(inline_function).parameters) == _INLINE_FUNCTION_PARAMETERS
    except (TypeError, ValueError):
        return False


def installed() -> bool:
    """Whether numba's inliner copies with one memo per inlined call."""
    return bool(getattr(inline_closurecall.InlineWorker.inline_ir, "denoc_bridge_shared_memo", False))


def install() -> None:
    """Make numba's inliner copy a callee's IR with one memo per inlined call (idempotent; a
    no-op when ``DENOC_BRIDGE_NUMBA_INLINER=numba``)."""
    if installed() or os.environ.get(ENV, "").strip().lower() == "numba":
        return
    worker = inline_closurecall.InlineWorker
    worker.inline_ir = _with_shared_memo(worker.inline_ir)  # type: ignore[method-assign]
    if _replaceable(worker.inline_function):  # a numba whose inline_function is the one we know
        worker.inline_function = _inline_function  # type: ignore[method-assign]
    inline_closurecall.copy = _PROXY  # type: ignore[attr-defined]
