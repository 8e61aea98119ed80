"""Joint position limits in simulation (kernels/limits.py, simulate(limits=True)): the stop is a
plastic impulse in the kinetic-energy metric, the limits hold, the compiled run equals the
Python stages, and nothing changes where no limit is met."""

import warnings

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.kernels import limits as klim
from denoc_bridge.simulation.tree import limit_arrays


def _limited(model, lo, hi):
    """The model with limits (lo, hi) on every revolute/prismatic joint."""
    lower, upper = np.array(model.lower_limit), np.array(model.upper_limit)
    one_dof = np.isin(model.joint_type, [int(db.JointType.REVOLUTE), int(db.JointType.PRISMATIC)])
    for k in np.flatnonzero(one_dof):
        lower[model.idx_q[k]], upper[model.idx_q[k]] = lo, hi
    return model.replace(lower_limit=lower, upper_limit=upper)


def test_the_stop_is_a_plastic_impulse_in_the_kinetic_metric(panda):
    """At a state where three joints sit on a limit moving outwards: E^T v+ = 0, the impulse
    M (v+ - v) acts on those joints only, and the kinetic energy drops by exactly
    1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v)."""
    rng = np.random.default_rng(7)
    li, lf = limit_arrays(panda)
    q = db.random_configuration(panda, rng)
    q = np.clip(q, panda.lower_limit, panda.upper_limit)
    v = rng.standard_normal(panda.nv)
    stopped = [0, 3, 5]
    for j, side in zip(stopped, (0, 1, 0)):
        q[li[j, 0]] = lf[j, side]
        v[li[j, 1]] = abs(v[li[j, 1]]) * (1 if side else -1)  # outwards
    for j in set(range(len(li))) - set(stopped):  # the others inside, so only these three stop
        q[li[j, 0]] = 0.5 * (lf[j, 0] + lf[j, 1])
    M = db.mass_matrix(panda, q)
    E = np.eye(panda.nv)[:, li[stopped, 1]]
    ev = E.T @ v
    drop = 0.5 * ev @ np.linalg.solve(E.T @ np.linalg.solve(M, E), ev)
    v1, q1 = v.copy(), q.copy()
    S, act = np.zeros(klim.scratch_shape(len(li), panda.nv)), np.zeros(len(li), np.int64)
    n, status, taken = klim.enforce_limits(
        panda._kt, panda.thread_work(), q1, v1, li[:, 0], li[:, 1], lf[:, 0], lf[:, 1], S, act
    )
    assert status == 0 and n == 3 and np.array_equal(q1, q)
    assert np.all(v1[li[stopped, 1]] == 0.0)
    impulse = M @ (v1 - v)
    others = np.setdiff1d(np.arange(panda.nv), li[stopped, 1])
    assert np.abs(impulse[others]).max() < 1e-12 * np.abs(impulse).max()
    kinetic = 0.5 * v @ M @ v - 0.5 * v1 @ M @ v1
    assert kinetic == pytest.approx(drop, rel=1e-12) and taken == pytest.approx(drop, rel=1e-12)


def test_limits_hold_and_energy_only_drops_at_stops(panda):
    """panda falling from neutral for 2 s (its fingers slid 7.7 m without limits): every joint
    stays within its limits; the energy grows by no more than RK4's error in a step; a start
    outside a limit (joint 4 at 0) is moved onto it with a warning naming the joint."""
    q0 = db.neutral_configuration(panda)
    with pytest.warns(UserWarning, match=r"'panda_joint4' from 0 to -0.0698"):
        tr = db.simulate(panda, q0, np.zeros(panda.nv), 2.0, 1e-3, progress=False)
    assert tr.status == "completed"
    assert np.all(tr.q >= panda.lower_limit) and np.all(tr.q <= panda.upper_limit)
    assert tr.q[:, -2:].max() == pytest.approx(0.04)  # the fingers reach their stop
    E = tr.total_energy
    assert np.diff(E).max() < 1e-6 * tr.kinetic_energy.max() * 10
    assert E[-1] < E[0]  # the stops took energy
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        free = db.simulate(panda, q0, np.zeros(panda.nv), 2.0, 1e-3, progress=False, limits=False)
    assert free.q[:, -2:].max() > 1.0  # what the limits prevent


def test_compiled_run_equals_the_python_stages_with_limits():
    """A chain of revolute joints (the fused-sweep path: after a stop its next twists are swept
    again) and a random tree, limits met often: the compiled run and the Python stages agree."""
    rope = _limited(db.generators.rope(), -0.3, 0.3)
    q0 = np.full(rope.nq, 0.29)
    ours = db.simulate(rope, q0, np.zeros(rope.nv), 0.3, 1e-3, progress=False)
    ref = db.simulate(rope, q0, np.zeros(rope.nv), 0.3, 1e-3, progress=False, tau=lambda t, q, v: np.zeros(rope.nv))
    assert np.abs(ours.q).max() == pytest.approx(0.3) and np.any(np.abs(ours.q) == 0.3)
    np.testing.assert_allclose(ours.q, ref.q, rtol=0, atol=1e-10)
    np.testing.assert_allclose(ours.v, ref.v, rtol=0, atol=1e-8)


def test_no_limit_met_changes_nothing(panda):
    """Limits that are never reached leave the run bit for bit as limits=False."""
    wide = _limited(panda, -50.0, 50.0)
    q0 = db.neutral_configuration(wide)
    a = db.simulate(wide, q0, np.zeros(wide.nv), 0.2, 1e-3, progress=False)
    b = db.simulate(wide, q0, np.zeros(wide.nv), 0.2, 1e-3, progress=False, limits=False)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)


def test_limit_arrays_take_the_urdf_rule(panda):
    """Revolute/prismatic joints with finite limits, lower < upper; lower == upper (URDF's
    default when the attributes are missing) is no limit."""
    li, lf = limit_arrays(panda)
    assert len(li) == 9 and np.all(lf[:, 0] < lf[:, 1])
    same = panda.replace(lower_limit=np.zeros(panda.nq), upper_limit=np.zeros(panda.nq))
    assert len(limit_arrays(same)[0]) == 0


def test_energy_balance_counts_what_the_stops_took(panda, tmp_path):
    """The trajectory carries the kinetic energy the stops took (limit_work, cumulative, >= 0,
    non-decreasing); with it the energy balance closes to ~1 % (first order in dt: a stop ends
    inside a step), without it it would be off by ~70 %; it survives resampling and files."""
    q0 = np.clip(db.neutral_configuration(panda), panda.lower_limit, panda.upper_limit)
    tr = db.simulate(panda, q0, np.zeros(panda.nv), 2.0, 1e-3, progress=False)
    w = tr.limit_work
    assert w is not None and w.shape == (len(tr),) and w[0] == 0 and np.all(np.diff(w) >= 0) and w[-1] > 10
    rel = np.abs(tr.energy_drift()).max() / tr.energy_scale
    assert rel < 0.02
    assert (np.abs(tr.energy_drift() - w).max() / tr.energy_scale) > 0.5  # the stops' share
    fine = db.simulate(panda, q0, np.zeros(panda.nv), 2.0, 2.5e-4, progress=False)
    assert np.abs(fine.energy_drift()).max() / fine.energy_scale < rel / 3  # first order, at least
    tr.to_npz(tmp_path / "t.npz")
    back = db.Trajectory.load(tmp_path / "t.npz", panda)
    np.testing.assert_array_equal(back.limit_work, w)
    half = tr.at([0.0005, 1.0])
    assert half.limit_work[0] == pytest.approx(0.5 * (w[0] + w[1])) and half.limit_work[1] == w[1000]
    free = db.simulate(panda, q0, np.zeros(panda.nv), 0.1, 1e-3, progress=False, limits=False)
    assert free.limit_work is None


def test_batch_with_limits_equals_simulate_case_by_case(panda):
    """simulate_batch enforces the limits as simulate does: the same numbers, case by case."""
    rng = np.random.default_rng(4)
    Q0 = np.array([db.random_configuration(panda, rng) for _ in range(3)])
    V0 = 2.0 * rng.standard_normal((3, panda.nv))
    batch = db.simulate_batch(panda, Q0, V0, 0.3, 1e-3)
    for b in range(3):
        alone = db.simulate(panda, Q0[b], V0[b], 0.3, 1e-3, progress=False)
        assert np.array_equal(batch[b].q, alone.q) and np.array_equal(batch[b].v, alone.v)
        np.testing.assert_array_equal(batch[b].limit_work, alone.limit_work)
    assert max(tr.limit_work[-1] for tr in batch) > 0  # the limits were met


def test_cli_starts_inside_the_limits_and_reports_the_stops(capsys):
    """The CLI's default start respects the limits and says which joint it moved; the summary
    names the energy the stops took; --no-limits turns them off."""
    from denoc_bridge.cli.main import main

    args = ["simulate", "panda", "--duration", "0.5", "--no-validate", "--no-html", "--no-plot"]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "the neutral configuration with panda_joint4 = -0.0698 (on its limit)" in out
    assert "joint limits: the stops at the limits took" in out and "warning" not in out
    assert main([*args, "--no-limits"]) == 0
    out = capsys.readouterr().out
    assert "start: the neutral configuration, at rest" in out and "joint limits" not in out
