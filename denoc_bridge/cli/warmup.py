"""What a command shows while numba compiles its kernels (only when the install's compiled
kernels do not fit: a wheel built elsewhere, another numba, changed sources).

``pip install`` compiles every kernel (``denoc-bridge compile``), so a command normally compiles
nothing and this module stays silent.  When something does compile, :mod:`denoc_bridge.kernels.notice`
says so in one line on stderr (from Python and the command line alike); on a terminal,
:class:`CompileNotice` adds a spinner with the kernel being compiled and the time so far, and at
the end the total.  It also names the kernel a Ctrl-C interrupted.  As the progress bar, the
spinner speaks only to a terminal (in a log file or a pipe it would be noise).

A Ctrl-C during a compilation ends the command at once, whatever the machine's speed: Python runs
its SIGINT handler only between bytecodes, and LLVM may optimise one large kernel for a minute
without returning to Python.  So, in the main thread, the signal's wakeup byte
(:func:`signal.set_wakeup_fd`, written by the C-level handler as the signal arrives) wakes a
watcher thread; if a compilation is on, the watcher prints the one line and ends the process with
status 130 (the kernels compiled so far are already in the cache).

A Ctrl-C while numba loads a compiled kernel from its cache (its global compiler lock held, a
few milliseconds at a kernel's first call) is held back until numba lets go of the lock, then
raised as usual (or, if numba goes on to compile, the process ends as above).  Raised at once,
the ``KeyboardInterrupt`` lands inside one of llvmlite's ctypes callbacks: ctypes prints and
drops it (the command then runs to its end) or LLVM is left half way and the process dies of a
segmentation fault (both seen under load, 0.8 and 1.4 s after a start).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
import time
from typing import Any

from numba.core import event

from denoc_bridge._text import count
from denoc_bridge.kernels.notice import MESSAGE

#: the start of what a user is told at the first compilation (:data:`.notice.MESSAGE`)
FIRST_LINE = MESSAGE.split(":", 1)[0] + ": compiling"


class CompileNotice(event.Listener):
    """``with CompileNotice():`` tells the user on ``stream`` (stderr, when it is a terminal)
    what numba compiles."""

    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        # numba compiles under its global compiler lock: the events of one compilation and of
        # the kernels it calls (nested) come one at a time, from one thread
        self.stack: list[str] = []  # the kernels being compiled, outermost first
        self.count = 0  # kernels compiled (each specialisation once)
        self.busy = 0.0  # seconds spent in finished outermost compilations
        self.first = None  # perf_counter at the first compilation
        self.started = 0.0  # perf_counter at the start of the current outermost compilation
        self.status = None  # the rich spinner while an outermost compilation runs
        self.last = ""  # the kernel whose compilation started last
        self.interrupted = ""  # the kernel whose compilation Ctrl-C stopped
        self.prefix = "denoc-bridge: "  # before the interruption's line
        self._claimed = threading.Lock()  # held by whoever prints the interruption's line
        self._pipes: tuple[int, int, int, int] | None = None  # wakeup r/w, stop r/w
        self._old_wakeup = -1
        self._old_handler: Any = signal.SIG_DFL
        self._watcher: threading.Thread | None = None
        self._numba = _InsideNumba()

    # numba's listener interface
    def on_start(self, ev):
        self.count += 1
        self.last = getattr(getattr(ev.data["dispatcher"], "py_func", None), "__name__", "a kernel")
        self.stack.append(self.last)
        if self._numba.pending and self.claim():  # a Ctrl-C held back in numba, now compiling
            self._end_now(self.last)
        if len(self.stack) > 1:
            return
        self.started = time.perf_counter()
        if self.first is None:
            self.first = self.started
        if not self.tty:  # counted (for an interruption's message), not shown
            return
        from rich.console import Console
        from rich.live import Live

        live = Live(
            _Spinner(self),
            console=Console(file=self.stream),
            transient=True,
            refresh_per_second=8,
            redirect_stdout=False,  # the results stay on stdout
            redirect_stderr=False,
        )
        try:
            live.start()
            self.status = live
        except Exception:  # another live display (a progress bar) is on: no spinner
            self.status = None

    def on_end(self, ev):
        if self.stack:
            name = self.stack.pop()
            # numba's Event has no public accessor for its exception (is_failed is inverted)
            exc = (getattr(ev, "_exc_details", None) or (None, None))[1]
            if isinstance(exc, KeyboardInterrupt) and not self.interrupted:
                self.interrupted = name  # the innermost one: where Ctrl-C landed
        if self.stack:
            return
        if self.status is not None:
            self.status.stop()
            self.status = None
        self.busy += time.perf_counter() - self.started

    def text(self) -> str:
        """The spinner's line: the kernel being compiled (the last one, between two), how many so
        far, and the seconds since the first compilation (monotone, whatever the events' order)."""
        name = self.stack[-1] if self.stack else self.last
        elapsed = time.perf_counter() - self.first if self.first is not None else 0.0
        return f"compiling {name} ({count(self.count, 'kernel')} so far, {elapsed:.0f} s)"

    def __enter__(self):
        # always listened to (an interrupted compilation is named), shown only to a terminal, as
        # the progress bar: in a log file or a pipe it would only be noise
        event.register("numba:compile", self)
        event.register("numba:compiler_lock", self._numba)
        self._start_watcher()
        return self

    def claim(self) -> bool:
        """Whether the caller may print the interruption's line (the first to ask may; the
        watcher that ends the process asks first when Ctrl-C lands in a compilation)."""
        return self._claimed.acquire(blocking=False)

    # the watcher: Ctrl-C during a compilation ends the process at once
    def _start_watcher(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return  # set_wakeup_fd is the main thread's; the KeyboardInterrupt route remains
        if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
            return  # Ctrl-C is ignored here (nohup, a parent that asked so): left ignored
        wake_r, wake_w = os.pipe()
        stop_r, stop_w = os.pipe()
        os.set_blocking(wake_w, False)  # set_wakeup_fd asks for a non-blocking descriptor
        try:
            self._old_wakeup = signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
        except ValueError:  # not the main interpreter
            for fd in (wake_r, wake_w, stop_r, stop_w):
                os.close(fd)
            return
        self._pipes = (wake_r, wake_w, stop_r, stop_w)
        self._old_handler = signal.signal(signal.SIGINT, self._on_sigint)
        self._watcher = threading.Thread(target=self._watch, name="denoc-bridge-ctrl-c", daemon=True)
        self._watcher.start()

    def _on_sigint(self, signum, frame) -> None:
        """The main thread's SIGINT handler: during a compilation, no KeyboardInterrupt (raised
        inside one of llvmlite's ctypes callbacks it would print an ignored exception's traceback):
        the watcher ends the process, or this handler does if the watcher found no compilation on
        when it woke; else what was there before (KeyboardInterrupt)."""
        if self.stack:
            if self.claim():  # the watcher saw no compilation when it woke: this one ends it
                self._end_now(self.stack[-1])
            return
        if self._numba.depth:  # loading from the cache: raised when numba lets go of its lock
            self._numba.pending = True
            return
        previous = self._old_handler
        if callable(previous):
            previous(signum, frame)
        elif previous != signal.SIG_IGN:
            raise KeyboardInterrupt

    def _watch(self) -> None:
        assert self._pipes is not None
        wake_r, _, stop_r, _ = self._pipes
        while True:
            ready, _, _ = select.select([wake_r, stop_r], [], [])
            if stop_r in ready:
                return
            if signal.SIGINT in os.read(wake_r, 64) and self.stack and self.claim():
                self._end_now(self.stack[-1])

    def _end_now(self, kernel: str) -> None:
        self.interrupted = kernel
        with contextlib.suppress(Exception):
            if self.status is not None:
                self.status.stop()
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            print(f"{self.prefix}{self.interruption()}", file=self.stream, flush=True)
        os._exit(130)

    def _stop_watcher(self) -> None:
        if self._pipes is None:
            return
        wake_r, wake_w, stop_r, stop_w = self._pipes
        signal.signal(signal.SIGINT, self._old_handler)
        signal.set_wakeup_fd(self._old_wakeup)
        os.write(stop_w, b"x")
        if self._watcher is not None:
            self._watcher.join()
        for fd in (wake_r, wake_w, stop_r, stop_w):
            os.close(fd)
        self._pipes = None

    def interruption(self) -> str | None:
        """The line that ends a run Ctrl-C stopped while numba compiled, else None."""
        if not self.interrupted:
            return None
        return (
            f"interrupted while compiling {self.interrupted}; nothing was simulated yet, the kernels "
            "compiled so far are cached"
        )

    def __exit__(self, *exc):
        event.unregister("numba:compile", self)
        event.unregister("numba:compiler_lock", self._numba)
        self._stop_watcher()
        if not self.tty or self.interrupted:
            return False
        if self.status is not None:
            self.status.stop()
            self.status = None
        if self.first is not None:
            print(
                f"compiled {count(self.count, 'kernel')} in {self.busy:.0f} s (cached: the next run starts at once)",
                file=self.stream,
                flush=True,
            )
        return False


class _InsideNumba(event.Listener):
    """How deep the main thread is in numba's global compiler lock (numba broadcasts every
    acquisition and release), and a Ctrl-C held back there: raised at the outermost release, in
    numba's Python code, the lock already free."""

    def __init__(self):
        self.depth = 0
        self.pending = False
        self._main = threading.main_thread()

    def on_start(self, ev):
        if threading.current_thread() is self._main:
            self.depth += 1

    def on_end(self, ev):
        if threading.current_thread() is not self._main:
            return
        self.depth -= 1
        if not self.depth and self.pending:
            self.pending = False
            raise KeyboardInterrupt


class _Spinner:
    """A spinner whose text (kernel, count, seconds) is read at each refresh."""

    def __init__(self, notice: CompileNotice):
        from rich.spinner import Spinner

        self.notice = notice
        self.spinner = Spinner("dots")

    def __rich__(self):
        self.spinner.update(text=self.notice.text())
        return self.spinner
