"""Trajectory.at, resample and to_npz: their arguments and what they keep (the energies and the
power: tests/simulation/test_passive_and_energy_scale.py; streams: test_streaming.py)."""

from __future__ import annotations

import io

import numpy as np
import pytest

import denoc_bridge as db


@pytest.fixture(scope="module")
def traj():
    return db.simulate(db.load_robot("chain:2"), [0.3, 0.0], [0.0, 0.0], 0.2, 1e-3, progress=False)


def test_resample_names_an_empty_trajectory_and_a_frame_rate_that_is_not_one_number(traj):
    """An empty trajectory raised a bare IndexError, fps=[1, 2] a bare TypeError."""
    with pytest.raises(db.InputError, match="the trajectory is empty"):
        traj[0:0].resample(30)
    with pytest.raises(db.InputError, match=r"fps must be a positive frame rate \(one number\), got \[1, 2\]"):
        traj.resample([1, 2])
    with pytest.raises(db.InputError, match="fps must be a positive frame rate"):
        traj.resample(-5.0)
    assert np.allclose(traj.resample(20).t, [0.0, 0.05, 0.1, 0.15, 0.2], rtol=0, atol=1e-15)


def test_to_npz_names_a_path_that_is_neither_a_path_nor_a_file(traj):
    """``to_npz(123)`` raised a bare TypeError from inside numpy."""
    for bad in (123, None, 1.5):
        with pytest.raises(db.InputTypeError, match="path must be a file name, a path or a binary file object"):
            traj.to_npz(bad)
    buffer = io.BytesIO()
    traj.to_npz(buffer, compress=False)
    buffer.seek(0)
    assert np.array_equal(db.Trajectory.load(buffer, traj.model).v, traj.v)


def test_at_keeps_the_runs_metadata(traj):
    """``at`` dropped the run's ``constraint_drift`` and ``solver_stats`` (NaN and {}), while it
    kept its method, step, wall time and counts."""
    run = db.Trajectory(
        traj.model, traj.t, traj.q, traj.v, traj.a, traj.tau, method="sdirk2", dt=1e-3, n_steps=200,
        constraint_drift=3e-9, solver_stats={"newton_iterations": 412, "jacobian": "dense"},
    )  # fmt: skip
    mid = run.at([0.05, 0.1])
    assert mid.constraint_drift == 3e-9 and mid.solver_stats == run.solver_stats
    assert mid.solver_stats is not run.solver_stats  # a copy
    assert (mid.method, mid.dt, mid.n_steps) == ("sdirk2", 1e-3, 200)
    assert mid.constraint_error is None
    assert np.array_equal(mid.q, traj.q[[50, 100]])
