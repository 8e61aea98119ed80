"""simulate(): integrators, forces, energy, manifolds, failures, interruption, trajectories."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.core import run as compiled_run  # a tree runs the compiled core
from denoc_bridge.io.generators import chain
from denoc_bridge.io.robots import gripper4
from denoc_bridge.simulation import common as sim_module
from denoc_bridge.testing import pin_rk4, random_model

LIE = (
    db.JointType.FREEFLYER,
    db.JointType.SPHERICAL,
    db.JointType.PLANAR,
    db.JointType.CONTINUOUS,
    db.JointType.REVOLUTE,
)


@pytest.fixture(scope="module")
def falling_gripper():
    """000 §3.2: the gripper in a vertical plane, theta_11 = -60 deg, the rest zero."""
    return gripper4().replace(gravity=(0.0, -9.81, 0.0)), np.array([-np.pi / 3, 0, 0, 0]), np.zeros(4)


def test_rk4_is_the_papers_rk4_around_pinocchio(falling_gripper):
    """On vector-space joints our RK4 is the classical one: a Python RK4 around pin.aba agrees."""
    model, q0, v0 = falling_gripper
    tr = db.simulate(model, q0, v0, 0.5, 1e-3, tau=np.array([0.01, 0.0, -0.02, 0.0]))
    q, v = pin_rk4(db.to_pinocchio(model), q0, v0, 1e-3, 500, tau=np.array([0.01, 0.0, -0.02, 0.0]))
    assert tr.status == "completed" and len(tr) == 501 and tr.t[-1] == pytest.approx(0.5)
    assert np.abs(tr.q[-1] - q).max() < 1e-12 and np.abs(tr.v[-1] - v).max() < 1e-11
    assert np.abs(tr.a - db.forward_dynamics(model, tr.q, tr.v, tr.tau)).max() < 1e-12


def test_fourth_order_on_the_lie_groups():
    """RKMK keeps RK4's order on free-flyer, spherical and planar joints: the error against an
    adaptive DOP853 reference falls 16x per halving of the step."""
    model = random_model(3, 4, floating_base=True, joint_types=LIE).replace(gravity=(0.0, 0.0, 0.0))
    rng = np.random.default_rng(0)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv) * 2
    ref = db.simulate(model, q0, v0, 1.0, 0.01, method="DOP853", rtol=1e-13, atol=1e-13)
    errors = [
        np.abs(db.difference(model, ref.q[-1], db.simulate(model, q0, v0, 1.0, dt).q[-1])).max() for dt in (0.01, 0.005)
    ]
    assert 12.0 < errors[0] / errors[1] < 20.0, errors


def test_energy_is_conserved_with_springs_and_balanced_with_damping():
    model = random_model(5, 6, joint_types=(db.JointType.REVOLUTE, db.JointType.PRISMATIC))
    rng = np.random.default_rng(1)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    springy = model.replace(stiffness=np.full(model.nv, 3.0), rest_configuration=q0 + 0.2)
    tr = db.simulate(springy, q0, v0, 1.0, 1e-3)
    drift = np.abs(tr.energy_drift(relative=True)).max()
    assert drift < 1e-8
    coarse = np.abs(db.simulate(springy, q0, v0, 1.0, 2e-3).energy_drift(relative=True)).max()
    assert 10 < coarse / drift < 22  # fourth order
    damped = springy.replace(damping=np.full(model.nv, 0.5))
    tr = db.simulate(damped, q0, v0, 1.0, 1e-3)
    E = tr.total_energy
    assert E[-1] < E[0] - 0.01 * abs(E[0] - E[-1]) and np.all(tr.power_in <= 1e-12)  # it dissipates
    assert np.abs(tr.energy_drift()).max() < 1e-6 * abs(E[-1] - E[0])  # and the balance closes
    undamped = db.simulate(damped, q0, v0, 1.0, 1e-3, passive=False)
    assert np.abs(undamped.q[-1] - db.simulate(model, q0, v0, 1.0, 1e-3).q[-1]).max() == 0.0


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_the_forms_of_tau_give_the_same_motion(falling_gripper, method):
    model, q0, v0 = falling_gripper
    c = np.array([0.02, -0.01, 0.0, 0.005])
    const = db.simulate(model, q0, v0, 0.2, 1e-3, tau=c, method=method)
    table = db.simulate(model, q0, v0, 0.2, 1e-3, tau=np.tile(c, (200, 1)), method=method)
    func = db.simulate(model, q0, v0, 0.2, 1e-3, tau=lambda t, q, v: c, method=method)
    assert np.array_equal(const.q, table.q)
    assert np.abs(func.q - const.q).max() < 1e-13
    assert np.array_equal(const.tau, np.tile(c, (201, 1))) and np.array_equal(func.tau, const.tau)


def test_a_controller_and_external_wrenches(falling_gripper):
    """A computed-torque controller brings the gripper to a target; a wrench on a link equals its
    generalized force J^T f."""
    model, q0, v0 = falling_gripper
    target = np.array([0.2, -0.1, 0.3, 0.0])

    def controller(t, q, v):  # critically damped at 10 rad/s
        return db.mass_matrix(model, q) @ (100.0 * (target - q) - 20.0 * v) + db.nonlinear_effects(model, q, v)

    held = db.simulate(model, q0, v0, 2.0, 1e-3, tau=controller)
    error = (1.0 + 10.0 * 2.0) * np.exp(-10.0 * 2.0) * np.abs(target - q0)  # (1 + w t) e^(-w t) e0
    assert np.abs(held.q[-1] - target - (error * np.sign(q0 - target))).max() < 1e-8
    f = np.zeros((model.n_links, 6))
    f[1] = [0.0, 0.3, 0.0, 0.0, 0.0, 0.01]  # force and moment on link 1^2

    def jtf(t, q, v):
        a0 = np.zeros(4)
        return db.inverse_dynamics(model, q, v, a0) - db.inverse_dynamics(model, q, v, a0, f)

    pushed = db.simulate(model, q0, v0, 0.3, 1e-3, f_ext=f)
    same = db.simulate(model, q0, v0, 0.3, 1e-3, tau=jtf)
    assert np.abs(pushed.q - same.q).max() < 1e-12
    assert np.abs(pushed.power_in - np.einsum("ij,ij->i", same.tau, same.v)).max() < 1e-12
    assert np.abs(pushed.energy_drift(relative=True)).max() < 1e-7


@pytest.mark.parametrize("method", ["RK45", "DOP853", "Radau", "BDF", "LSODA"])
def test_adaptive_methods_agree_with_rk4(falling_gripper, method):
    model, q0, v0 = falling_gripper
    ref = db.simulate(model, q0, v0, 0.5, 1e-4)
    tr = db.simulate(model, q0, v0, 0.5, 0.01, method=method, rtol=1e-10, atol=1e-12)
    assert len(tr) == 51 and tr.status == "completed" and tr.n_evaluations > 0
    assert np.abs(tr.q[-1] - ref.q[-1]).max() < 1e-6


@pytest.mark.parametrize("t_final, dt, times", [(0.0105, 1e-3, [0.008, 0.009, 0.01, 0.0105]), (0.1, 1.0, [0.0, 0.1])])
def test_adaptive_methods_end_at_t_final(falling_gripper, t_final, dt, times):
    """The adaptive methods save every dt and at t_final itself, also when dt does not divide it
    or exceeds it (the run used to stop at the last multiple of dt, or not step at all)."""
    model, q0, v0 = falling_gripper
    tr = db.simulate(model, q0, v0, t_final, dt, method="DOP853", rtol=1e-12, atol=1e-12)
    assert tr.status == "completed" and tr.n_steps > 0
    np.testing.assert_allclose(tr.t[-len(times) :], times, rtol=0, atol=1e-15)
    ref = (
        db.simulate(model, q0, v0, 0.0105, 1e-4 / 2, progress=False)
        if t_final == 0.0105
        else db.simulate(model, q0, v0, 0.1, 1e-4, progress=False)
    )
    assert np.abs(tr.q[-1] - ref.q[-1]).max() < 1e-10


def test_adaptive_on_the_manifold_keeps_unit_quaternions():
    model = random_model(8, 3, floating_base=True, joint_types=LIE)
    rng = np.random.default_rng(2)
    q0, v0 = db.random_configuration(model, rng), rng.standard_normal(model.nv)
    tr = db.simulate(model, q0, v0, 0.5, 0.05, method="RK45", rtol=1e-11, atol=1e-12)
    for i0 in model.quaternion_index:
        assert np.allclose(np.linalg.norm(tr.q[:, i0 : i0 + 4], axis=1), 1.0, atol=1e-14)
    rk = db.simulate(model, q0, v0, 0.5, 1e-3)
    assert np.abs(db.difference(model, rk.q[-1], tr.q[-1])).max() < 1e-7


@pytest.mark.slow
def test_stiff_chain_with_an_implicit_method():
    model = chain(5, "planar", stiffness=2000.0, damping=0.01)
    q0 = np.full(5, 0.1)
    tr = db.simulate(model, q0, np.zeros(5), 0.2, 0.01, method="Radau", rtol=1e-8, atol=1e-10)
    ref = db.simulate(model, q0, np.zeros(5), 0.2, 1e-5)
    assert np.abs(tr.q[-1] - ref.q[-1]).max() < 1e-6


def test_semi_implicit_euler():
    """First order; symplectic where the mass matrix is constant (one joint with a spring): the
    energy error stays bounded, O(w dt), without secular drift."""
    model = chain(3, "planar")
    q0 = np.array([0.3, -0.2, 0.1])
    ref = db.simulate(model, q0, np.zeros(3), 0.1, 1e-5).q[-1]
    e1, e2 = (
        np.abs(db.simulate(model, q0, np.zeros(3), 0.1, dt, method="euler").q[-1] - ref).max() for dt in (2e-4, 1e-4)
    )
    assert 1.7 < e1 / e2 < 2.3
    spring = chain(1, "planar", stiffness=0.01).replace(gravity=(0.0, 0.0, 0.0))  # w ~ 100 rad/s
    tr = db.simulate(spring, np.array([0.3]), np.zeros(1), 5.0, 2e-4, method="euler")
    E = tr.total_energy
    error = np.abs(E - E[0]) / E[0]
    n = len(E) // 4
    assert 1e-4 < error.max() < 0.03 and error[-n:].max() < 1.2 * error[:n].max()


def test_non_finite_state_names_time_and_joint(falling_gripper):
    model, q0, v0 = falling_gripper
    with pytest.raises(db.SimulationError, match=r"at t = .* s: the state is no longer finite .*joint '") as info:
        db.simulate(model, q0, v0, 1.0, 1e-3, tau=np.array([0.0, 0.0, 1e305, 0.0]))
    err = info.value
    assert err.joint in model.joint_names and 0.0 <= err.time < 1.0
    assert err.trajectory.status == "failed" and np.all(np.isfinite(err.trajectory.q))
    with pytest.raises(db.SimulationError, match="no longer finite") as info:
        db.simulate(model, q0, v0, 1.0, 1e-3, tau=lambda t, q, v: np.array([0.0, 0.0, 1e305 * (t > 0.01), 0.0]))
    assert len(info.value.trajectory) >= 10


def test_bad_controller_output_is_an_input_error(falling_gripper):
    model, q0, v0 = falling_gripper
    with pytest.raises(db.InputError, match=r"tau\(t, q, v\) must return 4 finite numbers; at t = 0"):
        db.simulate(model, q0, v0, 0.1, 1e-3, tau=lambda t, q, v: np.array([np.nan, 0, 0, 0]))


def test_ctrl_c_keeps_what_was_computed(falling_gripper, monkeypatch):
    model, q0, v0 = falling_gripper
    calls = {"n": 0}

    def controller(t, q, v):
        calls["n"] += 1
        if calls["n"] > 400:
            raise KeyboardInterrupt
        return np.zeros(4)

    with pytest.warns(UserWarning, match="interrupted by the user"):
        tr = db.simulate(model, q0, v0, 1.0, 1e-3, tau=controller)
    assert tr.status == "interrupted" and 50 < len(tr) < 200
    real = compiled_run.rk4_run
    state = {"n": 0}

    def interrupted_run(*args):  # the second chunk: the first is 8 steps whatever the clock says,
        state["n"] += 1  # the later ones as the clock says (at least least_chunk: all 1000 steps here)
        if state["n"] == 2:
            raise KeyboardInterrupt
        return real(*args)

    monkeypatch.setattr(compiled_run, "rk4_run", interrupted_run)
    with pytest.warns(UserWarning, match="interrupted by the user"):
        tr = db.simulate(model, q0, v0, 1.0, 1e-3)
    assert tr.status == "interrupted" and 2 <= len(tr) < 1001
    assert np.array_equal(tr.q, db.simulate(model, q0, v0, 1.0, 1e-3).q[: len(tr)])


def test_arguments_are_checked(falling_gripper):
    model, q0, v0 = falling_gripper
    with pytest.raises(db.InputError, match="method must be one of rk4, euler, implicit-euler, sdirk2, RK45"):
        db.simulate(model, q0, v0, 1.0, method="rk5")
    with pytest.raises(db.InputError, match="dt must be a positive number"):
        db.simulate(model, q0, v0, 1.0, dt=0.0)
    with pytest.raises(db.InputError, match="not a whole number of steps"):
        db.simulate(model, q0, v0, 1.0, dt=0.3)
    with pytest.raises(db.InputError, match=r"tau has 10 rows, but the simulation takes 1000 steps"):
        db.simulate(model, q0, v0, 1.0, tau=np.zeros((10, 4)))
    with pytest.raises(db.InputError, match=r"q0 must have shape \(4,\)"):
        db.simulate(model, q0[:3], v0, 1.0)
    with pytest.raises(db.InputError, match="save_every is for the fixed-step methods"):
        db.simulate(model, q0, v0, 1.0, method="RK45", save_every=2)


def test_saving_every_kth_step_and_the_memory_guard(falling_gripper, monkeypatch):
    model, q0, v0 = falling_gripper
    full = db.simulate(model, q0, v0, 0.1, 1e-3)
    sparse = db.simulate(model, q0, v0, 0.1, 1e-3, save_every=10)
    assert len(sparse) == 11 and np.array_equal(sparse.q, full.q[::10]) and np.allclose(sparse.t, full.t[::10])
    monkeypatch.setattr(sim_module, "MAX_STORED", 2000)
    with pytest.warns(UserWarning, match="saving one step in 2 only"):
        guarded = db.simulate(model, q0, v0, 0.2, 1e-3)
    assert len(guarded) == 101


@pytest.mark.parametrize("stepper", ["compiled", "python loop", "torque table", "batch", "loops", "mimic"])
def test_the_final_state_is_saved_whatever_save_every(falling_gripper, stepper):
    """save_every = k keeps steps 0, k, 2k, ... and the final state, also when k does not divide
    the number of steps (a run of 100 steps with k = 30 or 300 ends at t_final)."""
    from denoc_bridge import loops
    from denoc_bridge.io.generators import fourbar

    model, q0, v0 = falling_gripper
    tau = None
    if stepper == "python loop":
        tau = lambda t, q, v: np.full(model.nv, 0.01)  # noqa: E731
    elif stepper == "torque table":
        tau = np.linspace(0.0, 0.1, 100 * model.nv).reshape(100, model.nv)
    elif stepper == "loops":
        model = fourbar()
        q0, v0 = loops.project_configuration(model, [0.0, 0.5, -0.5, 0.5]), np.zeros(model.nv)
    elif stepper == "mimic":
        model = db.load_urdf(str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf"), mimic=True)
        q0, v0 = db.neutral_configuration(model), np.zeros(model.nv)

    def run(k):
        if stepper == "batch":
            return db.simulate_batch(model, np.stack([q0, q0]), np.stack([v0, v0]), 0.1, 1e-3, save_every=k)[1]
        return db.simulate(model, q0, v0, 0.1, 1e-3, tau=tau, save_every=k, progress=False)

    full = run(None)
    for k in (30, 300):
        sparse = run(k)
        steps = [0, 30, 60, 90, 100] if k == 30 else [0, 100]
        assert sparse.status == "completed"
        np.testing.assert_allclose(sparse.t, np.array(steps) * 1e-3, rtol=0, atol=1e-15)
        for name in ("q", "v", "a", "tau"):
            np.testing.assert_array_equal(getattr(sparse, name), getattr(full, name)[steps], err_msg=f"{name}, k={k}")
    for bad in (1.5, 0, -2, float("nan"), True, "3"):
        with pytest.raises(db.InputError, match="save_every must be a positive integer"):
            run(bad)


def test_trajectory_file_in_a_missing_folder_creates_it(falling_gripper, tmp_path):
    model, q0, v0 = falling_gripper
    tr = db.simulate(model, q0, v0, 0.01, 1e-3)
    tr.to_npz(tmp_path / "runs" / "a" / "fall")
    back = db.Trajectory.load(tmp_path / "runs" / "a" / "fall.npz", model)
    np.testing.assert_array_equal(back.q, tr.q)


def test_trajectory_files_and_resampling(falling_gripper, tmp_path):
    model, q0, v0 = falling_gripper
    tr = db.simulate(model, q0, v0, 0.5, 1e-3)
    tr.to_npz(tmp_path / "fall.npz")
    back = db.Trajectory.load(tmp_path / "fall.npz", model)
    assert np.array_equal(back.q, tr.q) and back.method == "rk4" and back.n_steps == 500
    with pytest.raises(db.InputError, match="saved for a model with joints"):
        db.Trajectory.load(tmp_path / "fall.npz", chain(4))
    frames = tr.resample(30)
    assert len(frames) == 16 and np.allclose(np.diff(frames.t), 1 / 30)
    at_saved = tr.at(tr.t[[0, 100, 500]])
    assert np.abs(at_saved.q - tr.q[[0, 100, 500]]).max() < 1e-15
    free = random_model(4, 2, floating_base=True, joint_types=LIE)
    rng = np.random.default_rng(5)
    ft = db.simulate(free, db.random_configuration(free, rng), rng.standard_normal(free.nv), 0.1, 0.01)
    mid = ft.at([0.005])
    assert np.abs(mid.q[0] - db.interpolate(free, ft.q[0], ft.q[1], 0.5)).max() < 1e-15


def test_progress_bar_can_be_forced(falling_gripper):
    model, q0, v0 = falling_gripper
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = db.simulate(model, q0, v0, 2.0, 1e-3, progress=True)
    assert tr.status == "completed"


@pytest.mark.parametrize("name", ["rope", "gripper", "planar_chain", "random_tree"])
def test_the_stage_sweep_is_the_textbook_rk4(name):
    """On chains and trees of revolute joints about coordinate axes the compiled RK4 ends each
    stage and begins the next in one sweep (core/stage_sweep.pxi); it must be the textbook RK4
    around the plain forward dynamics (the Python stepper, one call per stage) to round-off,
    and its numbers must not depend on how the run is cut into compiled calls."""
    from denoc_bridge.core import run as compiled_run
    from denoc_bridge.io.generators import rope
    from denoc_bridge.multibody.model import JointType

    rng = np.random.default_rng(7)
    if name == "random_tree":
        model = random_model(7, 12, joint_types=(JointType.REVOLUTE,))
    else:
        model = {"rope": rope, "gripper": gripper4, "planar_chain": lambda: chain(30, "planar")}[name]()
    if name != "random_tree":
        assert compiled_run.tree_flags(model._kt)[1]  # swept
    q0 = 0.3 * rng.standard_normal(model.nq)
    v0 = rng.standard_normal(model.nv)
    fast = db.simulate(model, q0, v0, 0.2, 1e-3, progress=False)
    plain = db.simulate(model, q0, v0, 0.2, 1e-3, tau=lambda t, q, v: np.zeros(model.nv), progress=False)
    scale = np.abs(plain.v).max()
    np.testing.assert_allclose(fast.q, plain.q, rtol=0, atol=1e-12, err_msg="q")
    np.testing.assert_allclose(fast.v, plain.v, rtol=0, atol=1e-12 * scale, err_msg="v")
    one = db.simulate_batch(model, q0, v0, 0.2, 1e-3)[0]  # one compiled call
    assert np.array_equal(one.q, fast.q) and np.array_equal(one.v, fast.v)  # fast: chunks of 8, 32, ...


def test_every_method_on_a_tree_runs_the_compiled_core(monkeypatch, tmp_path):
    """Every method of simulate on a tree, with its joint springs and dampers on and the joint
    limits hit (the fixed-step and implicit methods), runs the compiled core only: the compiled
    run (rk4, euler, streamed too), the same steps from Python (a controller tau(t, q, v), the
    stops after each step: core/run.pyx enforce_joint_limits), the adaptive methods (the
    right-hand side: core/tree.pyx ode_rhs) and the saved accelerations (passive_forces), the
    implicit methods (Newton's matrix: core/derivatives.pyx).  simulate_batch of a tree too, a case
    holding the numbers of its single run."""
    from denoc_bridge.multibody import data

    claimed = []
    real_claimed = data.run_claimed
    monkeypatch.setattr(db.simulation.api, "run_claimed", lambda *a: claimed.append(a[1]) or real_claimed(*a))
    panda = db.load_robot("panda")
    model = panda.replace(damping=np.full(panda.nv, 0.3), stiffness=np.full(panda.nv, 2.0))
    rng = np.random.default_rng(2)
    q0 = np.clip(db.neutral_configuration(model), model.lower_limit, model.upper_limit)
    V0 = 3.0 * rng.standard_normal((3, model.nv))
    fext = np.zeros((model.n_links, 6))
    fext[-1, 2] = 1.0
    for method in ("rk4", "euler"):
        runs = [db.simulate(model, q0, v, 0.3, 1e-3, method=method, progress=False, save_every=7) for v in V0]
        assert any(np.any(r.limit_work) for r in runs)  # the stops acted
        batch = db.simulate_batch(model, q0, V0, 0.3, 1e-3, method=method, save_every=7)
        for r, b in zip(runs, batch):
            assert np.array_equal(r.q, b.q) and np.array_equal(r.a, b.a) and np.array_equal(r.limit_work, b.limit_work)
        python = db.simulate(model, q0, V0[0], 0.3, 1e-3, method=method, progress=False, tau=lambda t, q, v: -q)
        assert np.any(python.limit_work)
        db.simulate(model, q0, V0[0], 0.1, 1e-3, method=method, progress=False, f_ext=fext)
        streamed = db.simulate(
            model, q0, V0[0], 0.3, 1e-3, method=method, progress=False, save_to=tmp_path / f"{method}.npy"
        )
        assert np.array_equal(streamed.q, db.simulate(model, q0, V0[0], 0.3, 1e-3, method=method, progress=False).q)
    assert claimed == [3, 3]
    for method in db.simulation.common.IMPLICIT_METHODS:
        implicit = db.simulate(model, q0, V0[0], 0.1, 1e-3, method=method, progress=False, f_ext=fext)
        assert implicit.status == "completed" and np.any(implicit.limit_work)
    for method in db.simulation.common.ADAPTIVE_METHODS:
        adaptive = db.simulate(model, q0, V0[0], 0.1, 1e-2, method=method, progress=False, f_ext=fext)
        assert adaptive.status == "completed" and np.all(np.isfinite(adaptive.a))
