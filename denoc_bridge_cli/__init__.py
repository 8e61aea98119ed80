"""The ``denoc-bridge`` console script: a thin entry point that answers Ctrl-C at any moment.

The command line is :func:`denoc_bridge.cli.main.main`; importing it imports the whole package
(numpy, numba, the kernels: a second or more on a fresh machine), and a Ctrl-C during those
imports used to end in a 40-line ``KeyboardInterrupt`` traceback from inside numba.  This
package lies outside ``denoc_bridge`` so that importing it imports nothing but what Python
loaded while starting (``os``, ``sys``, the signal module's C core); :func:`main` imports the
command line itself.  A Ctrl-C gives one line on stderr and exit status 130 whenever it comes:
during the imports (``denoc-bridge: interrupted``), during the command (whose own handler names
what it interrupted, e.g. the compilation or the simulation time) or while Python shuts down
after it.

During the imports and after the command the handler writes the line and ends the process
(``os._exit``) instead of raising ``KeyboardInterrupt``: nothing is written in those phases, and
an exception raised there can land inside an extension module's import, which may drop it (the
command then ran to its end) or print its traceback itself (seen under load, 0.5 s after the
start).  Before :func:`main` runs, Python itself is starting (tens of milliseconds), this
module is found and read (a millisecond or two) and the script pip writes tidies ``sys.argv[0]``
with a regular expression (about a millisecond): a Ctrl-C there is Python's own.  This is the
script's entry, meant to own its process; from Python, call :func:`denoc_bridge.cli.main.main`.
"""

from __future__ import annotations

import os
import sys

# the signal module's C core, loaded while Python starts (``signal.py`` itself would be imported
# here, a millisecond or more of enum building during which a Ctrl-C would be Python's own)
from _signal import SIGINT, default_int_handler, getsignal, signal

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


def _exit_now(signum, frame) -> None:
    """Ctrl-C while the command line is imported, or once the command has ended (its output
    written, Python shutting down): what was written is flushed, the line (unless the command
    said its own), and exit 130 at once; no exception that an extension module could drop or
    print, no shutdown code left to interrupt."""
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


def main(argv: list[str] | None = None) -> int:
    """Run one ``denoc-bridge`` command (``argv``: the words after the program name; default
    ``sys.argv[1:]``) and return its exit status; 130 after a Ctrl-C, with one line.  A Ctrl-C
    during the imports or after the command ends the process (exit status 130)."""
    ours = getsignal(SIGINT) is default_int_handler  # not ignored (a background job)
    if ours:
        signal(SIGINT, _exit_now)
    try:
        from denoc_bridge.cli.main import main as command

        if ours:  # the command as before: Python's own KeyboardInterrupt, which it catches
            signal(SIGINT, default_int_handler)
        status = command(argv)
        _said[0] = status == EXIT_INTERRUPTED  # the command said its own line
    except KeyboardInterrupt:  # where the command does not catch it (its parser)
        _say_once()
        return EXIT_INTERRUPTED
    finally:
        if ours:
            signal(SIGINT, _exit_now)
    return status
