"""One line on stderr when a kernel of this package compiles in a user's process.

``pip install`` compiles every kernel into the cache of :mod:`.cache` (``denoc-bridge compile``),
so normally nothing compiles at run time.  A wheel built on another machine (another CPU),
another numba version, a changed kernel source, or an install with the build step turned off
meets an empty cache instead: every capability then compiles on its first call.  Whoever calls
(a script, a notebook, a test, the command line) is told so once per process, at the first
compilation, with the expected time and how to do it all at once.
"""

from __future__ import annotations

import os
import sys

from numba.core import event

from denoc_bridge.kernels.cache import cache_dir

#: set (to anything but "" or "0") to silence the line (the build step and `denoc-bridge compile`
#: set it: they report the compilation themselves)
QUIET_ENV = "DENOC_BRIDGE_QUIET_COMPILE"
#: a file to which every compilation of a kernel of this package appends one line (kernel and
#: argument types): what a precompiled install missed (``benchmarks/compile_times.py --log``)
LOG_ENV = "DENOC_BRIDGE_COMPILE_LOG"

MESSAGE = (
    "denoc_bridge: compiling its numba kernels for this machine, once: no compiled copy in {cache} "
    "fits this CPU, numba version and these sources (a wheel built elsewhere, or an install without "
    "the build step). A capability's first call compiles for 5 s to 3 min; later calls and processes "
    "load the kernels in milliseconds. `denoc-bridge compile` compiles them all now (about 15 min of "
    "CPU time, spread over the cores)."
)


class FirstCompileNotice(event.Listener):
    """A numba event listener that prints :data:`MESSAGE` at the first compilation of a kernel
    of ``denoc_bridge`` in this process (never again)."""

    def __init__(self, stream=None):
        self.stream = stream
        self.said = False

    def on_start(self, ev):
        func = getattr(ev.data.get("dispatcher"), "py_func", None)
        if not getattr(func, "__module__", "").startswith("denoc_bridge."):
            return
        if os.environ.get(LOG_ENV):
            with open(os.environ[LOG_ENV], "a") as log:
                print(f"{func.__module__}.{func.__qualname__} {ev.data.get('args')}", file=log)
        if self.said or os.environ.get(QUIET_ENV, "") not in ("", "0"):
            return
        self.said = True
        stream = self.stream if self.stream is not None else sys.stderr
        print(MESSAGE.format(cache=cache_dir()), file=stream, flush=True)

    def on_end(self, ev):
        pass


#: the listener of this process
LISTENER = FirstCompileNotice()


def install() -> None:
    """Register :data:`LISTENER` with numba (once)."""
    if LISTENER not in event._registered.get("numba:compile", ()):
        event.register("numba:compile", LISTENER)
