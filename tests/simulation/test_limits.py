"""Joint position limits in simulation (core/limits.pxi, simulate(limits=True)): the stop is a
plastic impulse in the kinetic-energy metric, the limits hold, the compiled run equals the
Python stages, and nothing changes where no limit is met."""

import warnings
from pathlib import Path

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import run as compiled_run
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.mimic import MimicSystem
from denoc_bridge.simulation.mimic import limit_arrays as mimic_limit_arrays
from denoc_bridge.simulation.tree import TreeSystem, limit_arrays


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
    system = TreeSystem(panda, Forces(panda, None, None, 1, "rk4"), False, limits=True)
    n, status = compiled_run.enforce_joint_limits(system.kernel_system(), system.forcing(), q1, v1)
    taken = system.stop_energy()
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
    """The trajectory carries the energy the limits took (limit_work, cumulative: the stops'
    kinetic energy less the potential energy that putting q back on a limit adds; it grows but
    for the O(dt^2) error of a step in which a joint rests on its limit); with it the energy
    balance closes to 0.15 % (first order in dt: a stop ends inside a step; 1.1 % when the
    clamp's potential energy was left out), without it it would be off by ~70 %; it survives
    resampling and files."""
    q0 = np.clip(db.neutral_configuration(panda), panda.lower_limit, panda.upper_limit)
    tr = db.simulate(panda, q0, np.zeros(panda.nv), 2.0, 1e-3, progress=False)
    w = tr.limit_work
    assert w is not None and w.shape == (len(tr),) and w[0] == 0 and w[-1] > 10
    assert np.diff(w).min() > -1e-5 * tr.energy_scale  # measured -1.7e-6
    rel = np.abs(tr.energy_drift()).max() / tr.energy_scale
    assert rel < 3e-3  # measured 1.5e-3 (3.8e-4 at dt = 2.5e-4)
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


# ------------------------------------------------------------------ mimic models
GRIPPER = str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf")


def test_mimic_limits_act_on_the_mimicked_joint():
    """A mimic joint's limits narrow its mimicked joint's range through the multiplier and
    offset (urdf/mimic_gripper.urdf: b_finger_l's own [-0.5, 1.2] and c_finger_r = -q + 0.1 in
    [-1.2, 0.5] give q in [-0.4, 1.2]; g_jaw_2 = -0.5 q + 0.01 in [-0.02, 0.01] gives f_jaw_1's
    q >= 0); continuous joints have none; a range left empty is named."""
    mm = db.load_urdf(GRIPPER, mimic=True)
    idx, lim, names = mimic_limit_arrays(mm)
    by_joint = {n: (tuple(i), tuple(b)) for i, b, n in zip(idx, lim, names)}
    finger = mm.joint_names.index("b_finger_l")
    assert by_joint["b_finger_l"] == ((mm.idx_q[finger], mm.idx_v[finger]), pytest.approx((-0.4, 1.2), abs=1e-15))
    assert by_joint["f_jaw_1"][1] == pytest.approx((0.0, 0.04), abs=1e-15)
    assert set(by_joint) == {"a_wrist", "b_finger_l", "f_jaw_1"}
    tree = mm.tree
    lower, upper = np.array(tree.lower_limit), np.array(tree.upper_limit)
    cam = tree.idx_q[tree.joint_names.index("j_cam")]
    lower[cam], upper[cam] = 0.04, 0.05  # 0.02 q + 0.001 >= 0.04: q >= 1.95, outside [-0.4, 1.2]
    with pytest.raises(
        db.ModelError, match="'b_finger_l' and 'd_tip_l' and 'c_finger_r' and 'e_tip_r' and 'j_cam' leave no position"
    ):
        mimic_limit_arrays(db.MimicModel(tree.replace(lower_limit=lower, upper_limit=upper)))


def test_mimic_stop_keeps_the_relations_and_is_plastic_in_the_reduced_metric():
    """Two reduced joints on a limit moving outwards: after the stop they are at rest, the
    impulse Mr (v+ - v) acts on them only (Mr = G^T M G, the reduced GIM), and the kinetic
    energy drops by 1/2 (E^T v)^T (E^T Mr^-1 E)^-1 (E^T v), the figure the kernel returns."""
    mm = db.load_urdf(GRIPPER, mimic=True)
    system = MimicSystem(mm, Forces(mm, None, None, 1, "rk4"), True, limits=True)
    li, lf = system.lim_i, system.lim_f
    rng = np.random.default_rng(3)
    q = np.clip(db.random_configuration(mm, rng), mm.lower_limit, mm.upper_limit)
    v = rng.standard_normal(mm.nv)
    for j, side in ((1, 1), (2, 0)):  # b_finger_l at its upper limit, f_jaw_1 at its lower
        q[li[j, 0]] = lf[j, side]
        v[li[j, 1]] = abs(v[li[j, 1]]) * (1 if side else -1)
    q[li[0, 0]] = 0.0  # a_wrist inside
    Mr = db.mass_matrix(mm, q)
    E = np.eye(mm.nv)[:, li[1:, 1]]
    ev = E.T @ v
    drop = 0.5 * ev @ np.linalg.solve(E.T @ np.linalg.solve(Mr, E), ev)
    q1, v1 = q.copy(), v.copy()
    system.end_step(q1, v1, 0.0)
    assert np.array_equal(q1, q) and np.all(v1[li[1:, 1]] == 0.0)
    impulse = Mr @ (v1 - v)
    others = np.setdiff1d(np.arange(mm.nv), li[1:, 1])
    assert np.abs(impulse[others]).max() < 1e-12 * np.abs(impulse).max()
    kinetic = 0.5 * v @ Mr @ v - 0.5 * v1 @ Mr @ v1
    assert kinetic == pytest.approx(drop, rel=1e-12) and system.stop_energy() == pytest.approx(drop, rel=1e-12)


def test_mimic_simulation_respects_every_joints_limits():
    """The gripper under a torque that drives its fingers outwards for 0.5 s: every joint of the
    tree (mimic joints included, at the expanded states) stays in its limits, the stops take
    energy (limit_work > 0) and the energy balance closes with it; the Python stages (a
    controller) give the compiled run's numbers bit for bit; without limits the fingers leave
    the range."""
    mm = db.load_urdf(GRIPPER, mimic=True)
    tau = np.zeros(mm.nv)
    tau[mm.idx_v[mm.joint_names.index("b_finger_l")]] = 0.05
    tau[mm.idx_v[mm.joint_names.index("f_jaw_1")]] = -0.5
    q0, v0 = db.neutral_configuration(mm), np.zeros(mm.nv)
    q0[mm.idx_q[mm.joint_names.index("f_jaw_1")]] = 0.01
    tr = db.simulate(mm, q0, v0, 0.5, 1e-3, tau=tau, progress=False)
    tree = mm.tree
    Qf = mm.expand(tr.q)
    _, tree_lim = limit_arrays(tree)
    tree_idx, _ = limit_arrays(tree)
    inside = (Qf[:, tree_idx[:, 0]] >= tree_lim[:, 0] - 1e-12) & (Qf[:, tree_idx[:, 0]] <= tree_lim[:, 1] + 1e-12)
    assert inside.all()
    assert tr.limit_work[-1] > 0
    # the balance closes with the limits' energy up to a stop's O(dt) error, as on a tree
    # (measured at dt = 1e-3 and 2.5e-4: 1.0 % and 0.35 % here, 1.8 % and 0.5 % on the gripper's tree)
    assert np.abs(tr.energy_drift()).max() < 0.02 * tr.limit_work[-1]
    python = db.simulate(mm, q0, v0, 0.5, 1e-3, tau=lambda t, q, v: tau, progress=False)
    assert np.array_equal(python.q, tr.q) and np.array_equal(python.v, tr.v)
    assert np.array_equal(python.limit_work, tr.limit_work)
    free = db.simulate(mm, q0, v0, 0.5, 1e-3, tau=tau, progress=False, limits=False)
    free_f = mm.expand(free.q)
    assert not ((free_f[:, tree_idx[:, 0]] >= tree_lim[:, 0]) & (free_f[:, tree_idx[:, 0]] <= tree_lim[:, 1])).all()


def test_mimic_start_outside_the_limits_is_moved_and_named():
    mm = db.load_urdf(GRIPPER, mimic=True)
    q0 = db.neutral_configuration(mm)
    q0[mm.idx_q[mm.joint_names.index("b_finger_l")]] = 1.25  # its mimic c_finger_r would be at -1.15 ... tips past
    with pytest.warns(
        UserWarning,
        match=r"1 joint; the run starts on them: 'b_finger_l' from 1\.25 to 1\.2",
    ):
        tr = db.simulate(mm, q0, np.zeros(mm.nv), 0.01, 1e-3, progress=False)
    assert tr.q[0, mm.idx_q[mm.joint_names.index("b_finger_l")]] == 1.2


def test_mimic_batch_with_limits_equals_simulate_case_by_case():
    mm = db.load_urdf(GRIPPER, mimic=True)
    rng = np.random.default_rng(5)
    Q0 = np.array([np.clip(db.random_configuration(mm, rng), mm.lower_limit, mm.upper_limit) for _ in range(3)])
    V0 = 3.0 * rng.standard_normal((3, mm.nv))
    batch = db.simulate_batch(mm, Q0, V0, 0.2, 1e-3)
    for b, tr in enumerate(batch):
        one = db.simulate(mm, Q0[b], V0[b], 0.2, 1e-3, progress=False)
        assert np.array_equal(tr.q, one.q) and np.array_equal(tr.limit_work, one.limit_work)
    assert max(tr.limit_work[-1] for tr in batch) > 0  # the limits were met


def test_cli_mimic_run_reports_the_stops_and_starts_inside(capsys):
    """simulate --mimic: the start is moved inside the narrowed range and named, the summary
    reports the stops, and a balance within the stops' 5 % is not a warning."""
    from denoc_bridge.cli.main import main

    args = ["simulate", GRIPPER, "--mimic", "--duration", "0.5", "--no-validate", "--no-html", "--no-plot"]
    assert main([*args, "--q0", "0", "1.25", "0.01", "1", "0"]) == 0
    out = capsys.readouterr().out
    assert "the given configuration with b_finger_l = 1.2 (on its limit)" in out, out
    assert "joint limits: the stops at the limits took" in out and "warning" not in out, out
