"""The timer the ``cython_*`` benchmark scripts share: seconds per call of a function without
arguments, over batches of calls long enough for the clock.

    from timing import per_call  # benchmarks/ on sys.path
    per_call(fn, 0.02)                     # thread CPU time, a batch of at least 20 ms
    per_call(fn, 0.02, time.perf_counter)  # wall time
    timing_arguments(parser)               # --repeats, --batch-ms, --only, --clock
    interleaved(runs, repeats, steps)      # seconds per step of each run, interleaved repeats
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable, Sequence

#: the clocks of ``--clock``
CLOCK = {"cpu": time.thread_time, "wall": time.perf_counter}


def timing_arguments(p: argparse.ArgumentParser) -> None:
    """The options the ``cython_*`` scripts share: ``--repeats``, ``--batch-ms``, ``--only``,
    ``--clock`` (a key of :data:`CLOCK`)."""
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--only", help="rows whose name contains this")
    p.add_argument("--clock", choices=list(CLOCK), default="cpu")


def interleaved(runs: Sequence[tuple[str, Callable[[], object]]], repeats: int, steps: int) -> dict[str, list[float]]:
    """Seconds per step of each ``(key, fn)`` run of ``steps`` steps (wall clock): one warm-up call
    each, then ``repeats`` rounds that call every run once in turn."""
    times: dict[str, list[float]] = {key: [] for key, _ in runs}
    for _, fn in runs:  # warm-up
        fn()
    for _ in range(repeats):
        for key, fn in runs:
            t0 = time.perf_counter()
            fn()
            times[key].append((time.perf_counter() - t0) / steps)
    return times


def per_call(fn, batch_s: float, clock=time.thread_time) -> float:
    """Seconds per call of ``fn`` over a batch of at least ``batch_s`` seconds of ``clock``.

    The batch's count is fixed on the first call for each ``fn`` (one call first, outside the
    count, for what a first call sets up), so that interleaved repeats time the same number of
    calls."""
    n = per_call.counts.get(fn)
    if n is None:
        fn()
        n, t = 1, 0.0
        while t < batch_s:
            n *= 2
            t0 = clock()
            for _ in range(n):
                fn()
            t = clock() - t0
        per_call.counts[fn] = n
    t0 = clock()
    for _ in range(n):
        fn()
    return (clock() - t0) / n


per_call.counts = {}
