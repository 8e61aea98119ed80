"""A ``denoc-bridge simulate`` run interrupted once it is stepping, at any machine speed (issue 35).

A fixed sleep after the "simulating" line lands, on a loaded or slow machine, before the first
step (the model still being set up): the run then has nothing to save,
and a test that expects a partial run fails at that speed only.  :func:`start_stepping` instead
gives the command a terminal for its stderr, so that it draws its progress bar, and returns once
the bar shows a share of the steps done above 0.0 %: the compiled run is then inside its chunk
loop, where a Ctrl-C keeps the states so far.  No sleep and no timing: only a bound on the wait
(:data:`WAIT`), which fails with what the command printed.
"""

from __future__ import annotations

import contextlib
import os
import pty
import re
import signal
import subprocess
import sys
import threading

#: the longest wait for the first progress (a loaded machine); a bound, not a guess of speed
WAIT = 900.0
_PERCENT = re.compile(rb"(\d+\.\d)%")
_ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # whatever the test runner inherited


class SteppingRun:
    """A CLI command with stdout on a pipe and stderr on a pseudo-terminal, read by a thread."""

    def __init__(self, args: list[str], cwd, env: dict):
        master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "denoc_bridge.cli", *args],
            cwd=cwd,
            env=dict(env, TERM="xterm"),  # a terminal that rich draws on (it draws no bar on a dumb one)
            stdout=subprocess.PIPE,
            stderr=slave,
            text=True,
            preexec_fn=_default_sigint,
        )
        os.close(slave)
        self._master = master
        self._err = bytearray()
        self._lock = threading.Lock()
        self.stepping = threading.Event()
        self.progressed = False  # the bar showed steps done
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        """Drain the terminal (a full one would block the command) until the command closes it."""
        with contextlib.suppress(OSError):  # EIO once the child has closed its end
            while chunk := os.read(self._master, 4096):
                with self._lock:
                    self._err += chunk
                    if any(float(p) > 0.0 for p in _PERCENT.findall(self._err[-4096:])):
                        self.progressed = True
                        self.stepping.set()
        self.stepping.set()  # ended (or never drew a bar): the caller says why

    def stderr(self) -> str:
        with self._lock:
            text = self._err.decode(errors="replace")
        return _ESCAPE.sub("", text).replace("\r\n", "\n")

    def ctrl_c(self) -> tuple[int, str, str]:
        """Ctrl-C once the run steps; (exit status, stdout, stderr without terminal escapes)."""
        if not (self.stepping.wait(WAIT) and self.progressed) or self.proc.poll() is not None:
            self.proc.kill()
            out, _ = self.proc.communicate(timeout=60)
            raise AssertionError(f"the run did not start stepping: {self.proc.returncode}, {out!r}, {self.stderr()!r}")
        self.proc.send_signal(signal.SIGINT)
        out, _ = self.proc.communicate(timeout=300)
        self._reader.join(timeout=60)
        os.close(self._master)
        return self.proc.returncode, out, self.stderr()


def ctrl_c_while_stepping(args: list[str], cwd, env: dict) -> tuple[int, str, str]:
    """Run ``denoc-bridge *args`` (a long simulate), Ctrl-C once it steps; (status, stdout, stderr)."""
    return SteppingRun(args, cwd, env).ctrl_c()
