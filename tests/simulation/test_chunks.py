"""Nothing a run does depends on the machine's speed (issue 35): the compiled run's chunks adapt
to the measured time, bounded whatever the clock returns.  A clock that returns the same time
twice (a very fast machine, a coarse clock) once grew the chunk fourfold per buffer of a
streamed run until ``int(inf)`` raised OverflowError; a clock with huge steps (a very slow
machine) shrinks it to one step.  Either way the run completes with the same numbers."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.simulation import common, runners
from denoc_bridge.simulation import stream as st


def test_next_chunk_stays_between_one_and_the_largest_whatever_the_clock():
    for elapsed in (0.0, -1.0, math.nan, 1e-300, 5e-324):  # the same time twice, a clock stepped back
        chunk, seen = 8, []
        for _ in range(2000):  # far beyond the 512 fourfold steps that overflowed a float
            chunk = common.next_chunk(chunk, elapsed)
            seen.append(chunk)
        assert max(seen) == chunk == common.MAX_CHUNK and min(seen) >= 1, elapsed
        assert all(b <= 4 * a for a, b in itertools.pairwise([8, *seen]))  # at most fourfold
    for elapsed in (1e6, 1e300, math.inf):  # a clock with huge steps: one step at a time, never 0
        assert common.next_chunk(common.MAX_CHUNK, elapsed) == 1
        assert common.next_chunk(1, elapsed) == 1
    assert common.next_chunk(1000, common.CHUNK_SECONDS) == 1000  # on target: unchanged
    assert common.next_chunk(1000, 2 * common.CHUNK_SECONDS) == 500


class _Clock:
    """time.perf_counter as ``runners`` sees it: "zero" always returns 0, "huge" advances by 1e6 s a
    call (a machine a million times slower than the work)."""

    def __init__(self, kind):
        self.kind, self.now, self.calls = kind, 0.0, 0

    def __call__(self):
        self.calls += 1
        if self.kind == "huge":
            self.now += 1e6
        return self.now


@pytest.mark.parametrize("kind", ["zero", "huge"])
@pytest.mark.parametrize("streamed", [False, True], ids=["in memory", "streamed"])
def test_a_compiled_run_under_a_lying_clock_completes_with_the_same_numbers(kind, streamed, monkeypatch, tmp_path):
    chain = serial_chain(2)
    q0, v0 = db.neutral_configuration(chain), np.array([0.3, -0.2])
    args = (chain, q0, v0, 6.0, 1e-3)
    honest = db.simulate(*args, method="euler", progress=False)
    monkeypatch.setattr(st, "STREAM_CHUNK_BYTES", 600)  # buffers of a few rows: > 512 chunks in the run
    clock = _Clock(kind)
    monkeypatch.setattr(runners.time, "perf_counter", clock)
    save = {"save_to": tmp_path / "run.npy"} if streamed else {}
    chunks = []
    real = next_chunk = common.next_chunk

    def counted(chunk, elapsed):
        chunks.append(real(chunk, elapsed))
        return chunks[-1]

    monkeypatch.setattr(runners, "next_chunk", counted)
    traj = db.simulate(*args, method="euler", progress=False, **save)
    assert traj.status == "completed" and clock.calls > 0
    for name in ("t", "q", "v", "a"):
        assert np.array_equal(getattr(traj, name), getattr(honest, name)), name
    assert chunks and 1 <= min(chunks) and max(chunks) <= common.MAX_CHUNK
    if streamed:
        assert len(chunks) > 512  # as many buffers as overflowed the unbounded chunk
    if kind == "huge":
        assert set(chunks) == {1}
    assert next_chunk is common.next_chunk
