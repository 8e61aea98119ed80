"""The timer the ``cython_*`` benchmark scripts share: seconds per call of a function without
arguments, over batches of calls long enough for the clock.

    from timing import per_call  # benchmarks/ on sys.path
    per_call(fn, 0.02)                     # thread CPU time, a batch of at least 20 ms
    per_call(fn, 0.02, time.perf_counter)  # wall time
"""

from __future__ import annotations

import time


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
