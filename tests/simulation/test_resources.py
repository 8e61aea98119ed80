"""Requests that cannot fit in memory are refused at once, before allocating, with the figure and
the option that helps (issue 25, item 2).  The refused requests ask for 100 GB or more, beyond
any machine these tests run on, so a broken check fails fast (numpy refuses the allocation)
instead of swapping; :func:`fake_memory` tests the boundary with small runs."""

from __future__ import annotations

import sys
import tracemalloc

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import _resources
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.simulation.common import MAX_STORED, count_saves, save_stride, state_bytes


@pytest.fixture(scope="module")
def chain():
    return serial_chain(6)


@pytest.fixture
def fake_memory(monkeypatch):
    def set_available(n_bytes):
        monkeypatch.setattr(_resources, "_meminfo_available", lambda: n_bytes)
        monkeypatch.setattr(_resources, "_address_space_left", lambda: None)
        monkeypatch.setattr(_resources, "_data_left", lambda: None)
        monkeypatch.setattr(_resources, "_cgroup_left", lambda: None)

    return set_available


def _refused_fast(call, match):
    """Refused before allocating: the memory the call traces stays small (a measure that does not
    depend on the machine's speed, as a time limit would)."""
    tracemalloc.start()
    try:
        with pytest.raises(db.ResourceError, match=match) as info:
            call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 2**20, f"refused after allocating {peak / 2**20:.0f} MB"
    assert isinstance(info.value, db.InputError) and isinstance(info.value, MemoryError)
    assert info.value.needed > info.value.available > 0
    return info.value


def test_simulate_every_state_of_a_long_run_is_refused_with_save_every(chain):
    q0, v0 = db.neutral_configuration(chain), np.zeros(chain.nv)
    exc = _refused_fast(
        lambda: db.simulate(chain, q0, v0, 1e6, 1e-4, save_every=1, progress=False),
        r"a run of 'chain6' saving 10,000,000,001 states of 208 bytes each would need about 2.08 TB of memory, "
        r"but .* is (available on this machine|left under).*pass save_every=\d+",
    )
    assert "or stream the states to disk with save_to='run.npy'" in str(exc)  # issue 25: streaming helps
    k = int(str(exc).split("save_every=")[1].split()[0])
    assert 2 * count_bytes(chain, 10**10, k) <= _resources.available_memory()[0]  # the advice fits


def count_bytes(model, n_steps, stride):
    return count_saves(n_steps, stride) * state_bytes(model)


def test_adaptive_run_saving_every_dt_is_refused_with_dt(chain):
    q0, v0 = db.neutral_configuration(chain), np.zeros(chain.nv)
    _refused_fast(
        lambda: db.simulate(chain, q0, v0, 1e9, 1e-3, method="RK45", progress=False),
        r"saving 1,000,000,000,002 states .* pass a larger dt \(the interval of the saved states\)",
    )


def test_absurd_step_counts_are_input_errors_not_overflows(chain):
    q0, v0 = db.neutral_configuration(chain), np.zeros(chain.nv)
    with pytest.raises(db.InputError, match=r"steps: more than any run can take"):
        db.simulate(chain, q0, v0, 1e300, 1e-10, progress=False)


def test_default_stride_of_a_huge_run_is_computed_not_searched(chain):
    """save_every=None on 1e15 steps: the stride comes in closed form (a search took minutes);
    then the run fits and would take years, which Ctrl-C stops (not run here).  Counted in lines
    executed, not seconds, so that the test holds at any speed."""
    lines = [0]

    def tracer(frame, event, arg):
        if frame.f_code is save_stride.__code__:
            if event == "line":
                lines[0] += 1
            return tracer
        return None

    sys.settrace(tracer)
    try:
        with pytest.warns(UserWarning, match="saving one step in"):
            k = save_stride(chain, 10**15, None)
    finally:
        sys.settrace(None)
    assert 0 < lines[0] < 2000, lines[0]  # 479 here; the search it replaced ran ~1e8 iterations
    per = chain.nq + 3 * chain.nv
    assert (10**15 // k + 1) * per <= MAX_STORED < (10**15 // (k - 1) + 1) * per


def test_batches_are_refused_as_a_whole_and_the_default_stride_counts_the_cases(chain):
    q0 = np.tile(db.neutral_configuration(chain), (1000, 1))
    _refused_fast(
        lambda: db.simulate_batch(chain, q0, np.zeros(chain.nv), 100.0, 1e-4, save_every=1),
        r"1000 runs of 'chain6' saving 1,000,001 states .* or fewer cases per call",
    )
    with pytest.warns(UserWarning, match="in 1000 cases"):
        k = save_stride(chain, 10**6, None, cases=1000)
    assert 1000 * (10**6 // k + 1) * (chain.nq + 3 * chain.nv) <= MAX_STORED


@pytest.mark.parametrize("func", ["mass_matrix", "inverse_mass_matrix"])
def test_batched_matrices_are_refused_before_the_inputs_are_copied(func):
    chain = serial_chain(100)
    Q = np.broadcast_to(np.zeros(chain.nq), (10**7, chain.nq))  # no memory yet
    _refused_fast(lambda: getattr(db, func)(chain, Q), rf"{func} of 10,000,000 states .* pass the states in chunks")


@pytest.mark.parametrize("func", ["forward_dynamics_derivatives", "inverse_dynamics_derivatives"])
def test_batched_derivatives_are_refused_before_the_inputs_are_copied(func):
    chain = serial_chain(100)
    Q = np.broadcast_to(np.zeros(chain.nq), (10**7, chain.nq))
    Z = np.broadcast_to(np.zeros(chain.nv), (10**7, chain.nv))
    _refused_fast(lambda: getattr(db, func)(chain, Q, Z, Z), r"the derivatives of 10,000,000 states")


def test_sweep_is_refused_before_any_case_runs(chain, tmp_path):
    cases = [{"q0[0]": 0.1 * i} for i in range(64)]
    _refused_fast(
        lambda: db.sweep(
            chain, cases, {"t_final": 1e4, "dt": 1e-4, "save_every": 1}, out=tmp_path / "s", scheduler="inline"
        ),
        r"the sweep's batches \(1 at once, 16 cases each; case 'case00000' saves .* smaller batch_size",
    )
    assert not (tmp_path / "s" / "cases").exists() or not any((tmp_path / "s" / "cases").iterdir())


def test_the_boundary_is_the_available_memory(chain, fake_memory):
    """A 1,001-state run (208 kB) runs with 1 MB available and is refused with 100 kB."""
    q0, v0 = db.neutral_configuration(chain), np.zeros(chain.nv)
    fake_memory(10**6)
    assert len(db.simulate(chain, q0, v0, 1.0, 1e-3, progress=False)) == 1001
    fake_memory(10**5)
    with pytest.raises(db.ResourceError, match=r"about 208 kB of memory, but 100 kB is available on this machine"):
        db.simulate(chain, q0, v0, 1.0, 1e-3, progress=False)


def test_available_memory_takes_the_smallest_limit(monkeypatch):
    monkeypatch.setattr(_resources, "_meminfo_available", lambda: 8 * 10**9)
    monkeypatch.setattr(_resources, "_address_space_left", lambda: 3 * 10**9)
    monkeypatch.setattr(_resources, "_data_left", lambda: None)
    monkeypatch.setattr(_resources, "_cgroup_left", lambda: None)
    assert _resources.available_memory() == (3 * 10**9, "left under the address-space limit (ulimit -v)")
    monkeypatch.setattr(_resources, "_data_left", lambda: 2 * 10**9)
    assert _resources.available_memory() == (2 * 10**9, "left under the data-segment limit (ulimit -d)")
    assert _resources.human_bytes(3.2e9) == "3.2 GB" and _resources.human_bytes(12) == "12 B"
