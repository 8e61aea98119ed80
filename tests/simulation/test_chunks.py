"""Nothing a run does depends on the machine's speed (issue 35): the compiled run's chunks adapt
to the measured time, bounded whatever the clock returns.  A clock that returns the same time
twice (a very fast machine, a coarse clock) once grew the chunk fourfold per buffer of a
streamed run until ``int(inf)`` raised OverflowError; a clock with huge steps (a very slow
machine) shrinks it to the least chunk (:func:`~denoc_bridge.simulation.common.least_chunk`: a
least work in steps times DOF, so that the loop's own cost stays small beside the steps).
Either way the run completes with the same numbers."""

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


def test_a_chunk_holds_the_least_work_whatever_the_clock():
    """A clock with huge steps once shrank a small robot's chunk to one step, and the loop's own
    cost (the call, the clock, the bar) then cost more than the steps: the least chunk is
    MIN_CHUNK_WORK / nv steps, 1 for the largest models, and never above MAX_CHUNK."""
    assert common.least_chunk(6) == common.MIN_CHUNK_WORK // 6
    assert common.least_chunk(0) == common.least_chunk(1) == common.MIN_CHUNK_WORK
    assert common.least_chunk(100_000) == 1
    for elapsed in (1e6, math.inf, common.CHUNK_SECONDS * 1e5):
        assert common.next_chunk(common.MAX_CHUNK, elapsed, 682) == 682
    for elapsed in (0.0, math.nan, 1e-300):
        assert common.next_chunk(1, elapsed, 682) == 682  # the least, then growing fourfold
        assert common.next_chunk(682, elapsed, 682) == 4 * 682
    for least in (0, -5, 10**12):  # out of range: clamped to [1, MAX_CHUNK]
        assert 1 <= common.next_chunk(8, 1e6, least) <= common.MAX_CHUNK


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

    def counted(chunk, elapsed, least=1):
        chunks.append(real(chunk, elapsed, least))
        return chunks[-1]

    monkeypatch.setattr(runners, "next_chunk", counted)
    traj = db.simulate(*args, method="euler", progress=False, **save)
    assert traj.status == "completed" and clock.calls > 0
    for name in ("t", "q", "v", "a"):
        assert np.array_equal(getattr(traj, name), getattr(honest, name)), name
    assert chunks and 1 <= min(chunks) and max(chunks) <= common.MAX_CHUNK
    if streamed:
        assert len(chunks) > 512  # as many buffers as overflowed the unbounded chunk
    least = common.least_chunk(chain.nv)
    if kind == "huge":  # the least chunk (not one step): the loop's own cost stays bounded
        assert set(chunks) == {least}
        if not streamed:  # 6000 steps: the first chunk of 8, then chunks of the least
            assert len(chunks) <= 1 + math.ceil(6000 / least)
    assert min(chunks) >= least
    assert next_chunk is common.next_chunk
