"""Two numba decorators that keep a first run's compilation to what it uses, once.

numba compiles a kernel the first time it is called with new argument types (later runs load
it from the on-disk cache, ``cache=True``).  Two habits of plain ``@njit`` make a fresh
install compile far more than a command needs:

* an explicit signature, ``@njit(sig)``, compiles at *import*: every command, ``--help``
  included, paid for every entry kernel before it could print a line.
  :func:`njit_declared` keeps the signature's strictness (a call with any other argument types
  raises ``TypeError`` instead of compiling another version; the Python layer relies on that to
  fall back to converting the arguments) but compiles, or loads from the cache, on first use.
* a kernel called from another kernel with a constant argument (``f(..., False)``, ``f(..., 0)``)
  is compiled once per *value*: numba types a constant as a literal (``Literal[bool](False)``)
  and specialises the callee for it.  The recursion passes take such flags (``full``,
  ``factors``), so each was compiled two or three times (the articulated pass: 21 s and 35 s on
  2 cores); an index passed as int32 by one caller and int64 by another doubles it too.
  :func:`njit_one_version` compiles them for the flag's type (and int64) instead: one version
  serves every caller, and the flag is tested at run time.
"""

from numba import config, njit, types
from numba.core.compiler_lock import global_compiler_lock
from numba.core.registry import CPUDispatcher


class _DeclaredDispatcher(CPUDispatcher):
    """A dispatcher whose declared signatures are compiled (or loaded from numba's cache) on its
    first call, from Python or from a kernel being compiled; after that it is exactly what
    ``@njit(sigs)`` makes at import: those signatures only, compilation disabled."""

    _declared: tuple = ()

    def _compile_declared(self):
        with global_compiler_lock:  # re-entrant; one thread compiles, the others wait
            if self._can_compile:
                for sig in self._declared:
                    self.compile(sig)
                self.disable_compile()

    def _compile_for_args(self, *args, **kws):
        # a call from Python that matches no compiled signature: compile the declared ones and
        # let the call dispatch again (a declared signature, or numba's TypeError)
        self._compile_declared()
        return self

    def get_call_template(self, args, kws):
        # a call from a kernel being typed: as for @njit(sigs), the declared signatures only
        self._compile_declared()
        return super().get_call_template(args, kws)


class _OneVersionDispatcher(CPUDispatcher):
    """A dispatcher that compiles for the types of its arguments, never for their values: a
    literal argument type from a calling kernel (``Literal[bool](False)``, ``Literal[int](0)``)
    is compiled, and called, as its plain type (and a signed integer as int64)."""

    def get_call_template(self, args, kws):
        return super().get_call_template(tuple(_plain(a) for a in args), kws)


def _plain(t):
    """The argument type a one-version kernel is compiled for: a literal as its type, and a
    signed integer as int64 (index arguments come as int32 from the int32 kernel table and as
    int64 from loop counters; the values are the same)."""
    t = types.unliteral(t)
    if isinstance(t, types.Integer) and t.signed:
        return types.int64
    return t


def _make(cls, func, options):
    options = {"nopython": True, "boundscheck": None, **options}
    disp = cls(py_func=func, locals={}, targetoptions=options)
    disp.enable_caching()
    return disp


def jit_enabled() -> bool:
    """False when the kernels run as plain Python (``NUMBA_DISABLE_JIT=1``: the op counts of
    ``benchmarks/op_counts.py``)."""
    return not config.DISABLE_JIT


def njit_declared(*signatures, **options):
    """``@njit(signatures, cache=True, **options)`` compiled on first use instead of at import."""

    def wrap(func):
        if config.DISABLE_JIT:  # kernels run as Python (op counts)
            return func
        disp = _make(_DeclaredDispatcher, func, options)
        disp._declared = signatures
        return disp

    return wrap


def njit_one_version(**options):
    """``@njit(cache=True, **options)`` that ignores the values of constant arguments passed by
    the calling kernels (one compiled version per argument *types*)."""

    def wrap(func):
        if config.DISABLE_JIT:
            return njit(**options)(func)
        return _make(_OneVersionDispatcher, func, options)

    return wrap
