"""The benchmark's timing loop is bounded whatever the clock returns (issue 35): the calls per
repeat come from one measured call, so a clock that returns the same time twice once asked for
min_time / 1e-9 calls (hours), and a clock with huge steps asks for one."""

from __future__ import annotations

import math

import pytest

from denoc_bridge.benchmarking import suites


def test_calls_for_stays_between_one_and_the_largest():
    for seconds in (0.0, -1.0, math.nan, 5e-324):
        assert suites.calls_for(0.05, seconds) == suites.MAX_CALLS
    for seconds in (1e6, 1e300, math.inf):
        assert suites.calls_for(0.05, seconds) == 1
    assert suites.calls_for(0.05, 1e-3) == 50


@pytest.mark.parametrize("step", [0.0, 1e6], ids=["a clock that stands still", "a clock with huge steps"])
def test_interleaved_makes_a_bounded_number_of_calls(step, monkeypatch):
    now = [0.0]

    def clock():
        now[0] += step
        return now[0]

    monkeypatch.setattr(suites.time, "perf_counter", clock)
    counts = {"a": 0, "b": 0}

    def call(name):
        def fn():
            counts[name] += 1

        return fn

    t = suites.interleaved({"a": call("a"), "b": call("b")}, repeats=3, min_time=0.05)
    per_repeat = suites.MAX_CALLS if step == 0.0 else 1
    assert counts == {"a": 2 + 3 * per_repeat, "b": 2 + 3 * per_repeat}  # warm-up, the measured call, repeats
    assert set(t) == {"a", "b"} and all(math.isfinite(x) and x >= 0 for x in t.values())
