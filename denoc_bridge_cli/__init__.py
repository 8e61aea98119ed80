"""The ``denoc-bridge`` console script: a thin entry point that answers Ctrl-C at any moment.

The command line is :func:`denoc_bridge.cli.main.main`; importing it imports the whole package
(numpy, numba, the kernels: a second or more on a fresh machine), and a Ctrl-C during those
imports used to end in a 40-line ``KeyboardInterrupt`` traceback from inside numba.  This
package lies outside ``denoc_bridge`` so that importing it imports nothing but the standard
library's ``os``, ``signal`` and ``sys``; :func:`main` imports the command line inside its own
``try``.  A Ctrl-C gives one line on stderr and exit status 130 whenever it comes: during the
imports (``denoc-bridge: interrupted``), during the command (whose own handler names what it
interrupted, e.g. the compilation or the simulation time) or while Python shuts down after it.
Before this module runs, Python itself is starting (tens of milliseconds): a Ctrl-C there is
Python's own.
"""

from __future__ import annotations

import os
import signal
import sys

#: the exit status of a command stopped by Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130
LINE = "denoc-bridge: interrupted"

_said = [False]  # the one line is on stderr already (ours or the command's)


def _say_once() -> None:
    if not _said[0]:
        _said[0] = True
        with _suppressed():
            sys.stderr.write(LINE + "\n")
            sys.stderr.flush()


def _after(signum, frame) -> None:
    """Ctrl-C once the command has ended (its output written, Python shutting down): the line,
    unless one was said, and exit 130 at once (no shutdown code left to interrupt)."""
    with _suppressed():
        sys.stdout.flush()
    _say_once()
    os._exit(EXIT_INTERRUPTED)


class _suppressed:
    """``with _suppressed():`` ignores the errors of writing to a closed or broken stream."""

    def __enter__(self):
        return self

    def __exit__(self, kind, exc, tb):
        return kind is not None and issubclass(kind, (OSError, ValueError))


def _interrupt(signum, frame) -> None:
    """Ctrl-C while the command line is imported: counted, then Python's KeyboardInterrupt.
    Counted because a C extension may turn it into another error (numpy's import, interrupted
    inside ``PyCapsule_Import``, raises an ImportError asking to reinstall numpy) or drop it (an
    extension module's import, interrupted inside a nested import, goes on: seen under load,
    the command then ran to its end)."""
    _interrupts[0] += 1
    raise KeyboardInterrupt


_interrupts = [0]


def main(argv: list[str] | None = None) -> int:
    """Run one ``denoc-bridge`` command (``argv``: the words after the program name; default
    ``sys.argv[1:]``) and return its exit status; 130 after a Ctrl-C, with one line (also when
    an extension module's import dropped it)."""
    ours = signal.getsignal(signal.SIGINT) is signal.default_int_handler  # not ignored (a background job)
    _interrupts[0] = 0
    if ours:
        signal.signal(signal.SIGINT, _interrupt)
    try:
        from denoc_bridge.cli.main import main as command

        if _interrupts[0]:  # a Ctrl-C during the imports that an extension module dropped
            raise KeyboardInterrupt
        if ours:  # the command as before: Python's own KeyboardInterrupt, which it catches
            signal.signal(signal.SIGINT, signal.default_int_handler)
        status = command(argv)
        _said[0] = status == EXIT_INTERRUPTED  # the command said its own line
        if ours:
            signal.signal(signal.SIGINT, _after)
    except BaseException as exc:  # in the imports, or where the command does not catch it
        if ours:
            signal.signal(signal.SIGINT, _after)
        if not (isinstance(exc, KeyboardInterrupt) or _interrupts[0]):
            raise  # argparse's SystemExit, or a bug's traceback
        _say_once()
        return EXIT_INTERRUPTED
    return status
