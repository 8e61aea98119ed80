"""A clock of another machine's speed for the whole suite (issue 35): with
``DENOC_TEST_CLOCK=still`` ``time.perf_counter`` returns the same time at every call (a machine so
fast, or a clock so coarse, that no time passes); with ``DENOC_TEST_CLOCK=huge`` it advances by
1e6 s at every call (a machine a million times slower than the work).  Every loop of the package
that adapts to measured time reads ``time.perf_counter``; the suite must pass under both
(``tests/conftest.py`` installs it in the test processes, :func:`child_prefix` in the processes
the hostile tests start)::

    DENOC_TEST_CLOCK=still python -m pytest -m "not slow"
"""

from __future__ import annotations

import os
import time

KINDS = ("still", "huge")


def install(kind: str | None = None) -> str | None:
    """Replace ``time.perf_counter`` by the lying clock ``kind`` (default: $DENOC_TEST_CLOCK)."""
    kind = kind if kind is not None else os.environ.get("DENOC_TEST_CLOCK") or None
    if kind is None:
        return None
    if kind not in KINDS:
        raise ValueError(f"DENOC_TEST_CLOCK must be one of {KINDS}, got {kind!r}")
    now = [0.0]

    def clock() -> float:
        if kind == "huge":
            now[0] += 1e6
        return now[0]

    time.perf_counter = clock
    return kind


def child_prefix() -> str:
    """Python code that installs the same clock in a child process (empty without one)."""
    kind = os.environ.get("DENOC_TEST_CLOCK")
    if not kind:
        return ""
    here = os.path.dirname(os.path.abspath(__file__))
    return f"import sys; sys.path.insert(0, {here!r}); import lying_clock; lying_clock.install({kind!r})\n"
