"""A MimicModel whose tree has loop closures (constraints/mimic_loops.py): mimic rows K and loop rows
C(q) stacked on one tree.  Pinocchio refuses mimic models in aba/constraintDynamics, so the oracle
is the dense reduced KKT system built here from the tree's GIM and nonlinear effects."""

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.constraints import mimic_loops as ml
from denoc_bridge.constraints.loop_kinematics import all_rows
from denoc_bridge.constraints.packed import tree_rows
from denoc_bridge.constraints.solve import independent_rows
from denoc_bridge.errors import InputError, ModelError
from denoc_bridge.io import generators as g
from denoc_bridge.multibody.constraints import Mimic
from denoc_bridge.simulation import api as simulation
from denoc_bridge.simulation.mimic_loops import MimicLoopSystem


@pytest.fixture(scope="module")
def fivebar():
    return g.geared_fivebar()


def closed_state(model, rng, spread=0.15, independent=(0, 2)):
    """A random closed state: q projected (crank and finger independent), v projected, tau."""
    q = model.reduce_configuration(model.expand(g.GEARED_FIVEBAR_Q)) if model.nq == 4 else None
    q = db.loops.project_configuration(model, q + spread * rng.standard_normal(model.nq) * [1, 0, 0.1, 0])
    v = db.loops.project_velocity(model, q, rng.standard_normal(model.nv))
    return q, v, rng.standard_normal(model.nv)


def oracle(model, q, v, tau, f_ext=None):
    """Reduced KKT [G^T M G, (C G)^T; C G, 0] [a; -lambda] = [tau - G^T h; -Cdot v] (independent rows)."""
    tree, G = model.tree, model.coupling_matrix()
    qf, vf = model.expand(q, v)
    M = db.mass_matrix(tree, qf)
    h = db.nonlinear_effects(tree, qf, vf, f_ext)
    _, C, cdot_v = all_rows(tree, qf, vf, True)  # the readable rows, not the compiled ones
    CG = C @ G
    k = independent_rows(CG)
    A = CG[k]
    n, r = model.nv, len(k)
    kkt = np.block([[G.T @ M @ G, A.T], [A, np.zeros((r, r))]])
    return np.linalg.solve(kkt, np.concatenate([tau - G.T @ h, -cdot_v[k]]))[:n]


def test_generator_and_urdf(fivebar):
    m = fivebar
    assert isinstance(m, db.MimicModel) and (m.nq, m.nv, m.tree.nv) == (4, 4, 6)
    assert [r.joint for r in m.mimic] == ["finger_right", "crank_right"]
    assert [lc.name for lc in m.loops] == ["tip"]
    assert m.joint_names == m.tree.joint_names
    again = db.load_urdf(g.geared_fivebar_urdf(), mimic=True)
    q = db.loops.project_configuration(again, g.GEARED_FIVEBAR_Q)
    np.testing.assert_array_equal(q, db.loops.project_configuration(m, g.GEARED_FIVEBAR_Q))
    # closed, non-singular: distal links about 111 degrees apart, two degrees of freedom
    C = ml.loop_jacobian(m, q)
    assert independent_rows(C).size == 2 and np.linalg.svd(C, compute_uv=False)[1] > 0.1


def test_compiled_rows_equal_readable_rows(fivebar):
    rng = np.random.default_rng(1)
    for model in (fivebar.tree, g.fourbar()):
        for _ in range(3):
            q, v = rng.standard_normal(model.nq), rng.standard_normal(model.nv)
            for x, y in zip(tree_rows(model, q, v), all_rows(model, q, v, True)):
                np.testing.assert_allclose(x, y, atol=1e-13)


def test_forward_dynamics_equals_reduced_kkt(fivebar):
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(5):
        q, v, tau = closed_state(fivebar, rng)
        a = db.forward_dynamics(fivebar, q, v, tau)
        ref = oracle(fivebar, q, v, tau)
        worst = max(worst, np.abs(a - ref).max() / (1 + np.abs(ref).max()))
        # the loops and the mimic relations hold at the acceleration level
        qf, vf, _, J, gamma = ml.stacked_rows(fivebar, q, v)
        assert np.abs(J @ fivebar.expand(q, v, a)[2] - gamma).max() < 1e-10 * (1 + np.abs(a).max())
    assert worst < 1e-10


def test_forward_dynamics_wrenches_batch_and_dense(fivebar):
    rng = np.random.default_rng(3)
    q, v, tau = closed_state(fivebar, rng)
    f_ext = {"distal_left_link": rng.standard_normal(6), "finger_left_link": rng.standard_normal(6)}
    a = db.forward_dynamics(fivebar, q, v, tau, f_ext)
    np.testing.assert_allclose(a, oracle(fivebar, q, v, tau, f_ext), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(ml.forward_dynamics(fivebar, q, v, tau, f_ext, method="dense"), a, atol=1e-10)
    q2, v2, tau2 = closed_state(fivebar, rng)
    A = db.forward_dynamics(fivebar, np.array([q, q2]), np.array([v, v2]), np.array([tau, tau2]))
    np.testing.assert_array_equal(A[0], db.forward_dynamics(fivebar, q, v, tau))
    np.testing.assert_array_equal(A[1], db.forward_dynamics(fivebar, q2, v2, tau2))


def test_inverse_dynamics_undoes_forward_dynamics(fivebar):
    rng = np.random.default_rng(4)
    for _ in range(3):
        q, v, tau = closed_state(fivebar, rng)
        a = db.forward_dynamics(fivebar, q, v, tau)
        t_all = db.inverse_dynamics(fivebar, q, v, a)  # every joint actuated: the smallest torques
        np.testing.assert_allclose(db.forward_dynamics(fivebar, q, v, t_all), a, rtol=1e-10, atol=1e-10)
        assert np.linalg.norm(t_all) <= np.linalg.norm(tau) + 1e-12
        t = db.inverse_dynamics(fivebar, q, v, a, actuated=["crank_left", "finger_left"])
        assert t[1] == t[3] == 0.0
        np.testing.assert_allclose(db.forward_dynamics(fivebar, q, v, t), a, rtol=1e-10, atol=1e-10)
        # the open-chain torques G^T ID ignore the loop
        qf, vf, af = fivebar.expand(q, v, a)
        G = fivebar.coupling_matrix()
        ref = G.T @ db.tree_inverse_dynamics(fivebar.tree, qf, vf, af)
        np.testing.assert_allclose(db.mimic.inverse_dynamics(fivebar, q, v, a), ref, atol=1e-12)


def test_inverse_dynamics_errors(fivebar):
    rng = np.random.default_rng(5)
    q, v, tau = closed_state(fivebar, rng)
    a = db.forward_dynamics(fivebar, q, v, tau)
    with pytest.raises(InputError, match="'finger_right' is a mimic joint"):
        db.inverse_dynamics(fivebar, q, v, a, actuated=["finger_right"])
    with pytest.raises(InputError, match="cannot produce this motion"):
        db.inverse_dynamics(fivebar, q, v, a, actuated=["finger_left"])
    with pytest.raises(InputError, match="loop 'tip' at the acceleration level"):
        db.inverse_dynamics(fivebar, q, v, a + 1.0)


def test_mass_matrix_and_nonlinear_effects(fivebar):
    rng = np.random.default_rng(6)
    q, v, _ = closed_state(fivebar, rng)
    qf, vf = fivebar.expand(q, v)
    G = fivebar.coupling_matrix()
    np.testing.assert_allclose(db.mass_matrix(fivebar, q), G.T @ db.mass_matrix(fivebar.tree, qf) @ G, atol=1e-13)
    np.testing.assert_allclose(
        db.nonlinear_effects(fivebar, q, v), G.T @ db.nonlinear_effects(fivebar.tree, qf, vf), atol=1e-12
    )
    np.testing.assert_allclose(db.gravity_torques(fivebar, q), G.T @ db.gravity_torques(fivebar.tree, qf), atol=1e-12)
    with pytest.raises(InputError, match="loop closures as well as mimic joints"):
        db.mimic.forward_dynamics(fivebar, q, v, np.zeros(4))


def test_projections(fivebar):
    rng = np.random.default_rng(7)
    q0 = g.GEARED_FIVEBAR_Q + 0.05 * rng.standard_normal(4)
    q = db.loops.project_configuration(fivebar, q0, independent=[0, 2])
    assert np.abs(db.loops.loop_residual(fivebar, q)).max() < 1e-12
    np.testing.assert_array_equal(db.loops.loop_jacobian(fivebar, q), ml.loop_jacobian(fivebar, q))
    np.testing.assert_array_equal(q[[0, 2]], q0[[0, 2]])  # the independent coordinates kept
    qf = fivebar.expand(q)
    assert qf[4] == qf[0] and qf[3] == qf[2]  # crank_right = crank_left, finger_right = finger_left
    v = db.loops.project_velocity(fivebar, q, rng.standard_normal(4), independent=[0, 2])
    assert np.abs(ml.loop_jacobian(fivebar, q) @ v).max() < 1e-13
    E, dep, ind = db.loops.velocity_transformation(fivebar, q, independent=[0, 2])
    assert np.abs(ml.loop_jacobian(fivebar, q) @ E).max() < 1e-13 and list(ind) == [0, 2]
    with pytest.raises(InputError, match="cannot close loop 'tip'"):
        db.loops.project_configuration(fivebar, [-1.5, 1.3, 0.0, 1.3], independent=[0, 2])


def test_without_mimic_joints_equals_the_loop_model():
    """A MimicModel of a tree with loops and no <mimic>: the loop model's numbers."""
    tree = g.fourbar()
    m = db.MimicModel(tree)
    rng = np.random.default_rng(8)
    q = db.loops.project_configuration(tree, [0.1, 0.4, -0.3, 0.5])
    np.testing.assert_allclose(db.loops.project_configuration(m, [0.1, 0.4, -0.3, 0.5]), q, atol=1e-12)
    v = db.loops.project_velocity(tree, q, rng.standard_normal(4))
    tau = rng.standard_normal(4)
    a = db.forward_dynamics(tree, q, v, tau)
    np.testing.assert_allclose(db.forward_dynamics(m, q, v, tau), a, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(
        db.inverse_dynamics(m, q, v, a, actuated=["T1", "R2"]),
        db.inverse_dynamics(tree, q, v, a, actuated=["T1", "R2"]),
        atol=1e-12,
    )
    np.testing.assert_allclose(db.loops.project_velocity(m, q, v), db.loops.project_velocity(tree, q, v), atol=1e-14)


def test_without_loops_the_shared_solve_equals_the_mimic_kernel():
    """The Python path of a loop-free MimicModel (wrenches) runs lagrange_accelerations: the
    compiled mimic entry's numbers."""
    m = db.load_robot("gripper", mimic=True)
    rng = np.random.default_rng(9)
    for _ in range(3):
        q, v, tau = rng.uniform(-0.5, 0.5, m.nq), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
        fast = db.forward_dynamics(m, q, v, tau)
        shared = db.forward_dynamics(m, q, v, tau, np.zeros((m.n_links, 6)))
        np.testing.assert_allclose(shared, fast, rtol=1e-12, atol=1e-12)


def parallelogram(multiplier):
    tree = g.fourbar()
    return db.MimicModel(tree.replace(mimic=[Mimic("R4", "R2", multiplier, 0.0)]))


def test_redundant_coupling_of_a_parallelogram():
    """R4 = R2 holds on the parallelogram anyway: the coupling makes a loop row redundant,
    independent_rows removes it, and the numbers are the oracle's."""
    m = parallelogram(1.0)
    rng = np.random.default_rng(10)
    q = db.loops.project_configuration(m, [0.1, 0.4, -0.4], independent=[0, 1])
    v = db.loops.project_velocity(m, q, rng.standard_normal(3), independent=[0, 1])
    tau = rng.standard_normal(3)
    a = db.forward_dynamics(m, q, v, tau)
    np.testing.assert_allclose(a, oracle(m, q, v, tau), rtol=1e-10, atol=1e-10)
    # the same motion as the loop model with R4 free
    tree = m.tree
    np.testing.assert_allclose(
        m.expand(q, v, a)[2], db.forward_dynamics(tree, m.expand(q), m.expand(q, v)[1], m.full_forces(tau)), atol=1e-10
    )
    with pytest.raises(InputError, match="loop 'R5' .* is singular at this state under the mimic coupling"):
        db.forward_dynamics(m, q, [0.0, 1.0, 0.0], tau)  # a velocity that breaks the loop


def test_coupling_that_locks_a_loop_is_refused():
    m = parallelogram(-1.0)  # R4 = -R2: the four-bar's only degree of freedom is gone
    closed, q = [0.1, 0.0, 0.0], [0.1, 0.4, -0.4]  # the folded four-bar closes under the coupling
    assert np.abs(db.loops.loop_residual(m, closed)).max() < 1e-15
    for call in (
        lambda: db.forward_dynamics(m, closed, np.zeros(3), np.zeros(3)),
        lambda: db.inverse_dynamics(m, closed, np.zeros(3), np.zeros(3)),
        lambda: db.loops.project_configuration(m, q),
        lambda: db.simulate(m, q, np.zeros(3), 0.01, 1e-3),
    ):
        with pytest.raises(ModelError, match="mimic joint 'R4' \\(mimicking 'R2'\\) takes the only degree"):
            call()
    # off the loop the ranks cannot tell a locked coupling from a redundant one: close it first
    for model in (m, parallelogram(1.0)):
        with pytest.raises(InputError, match="loop 'R5' .* is not closed .* 'R4' \\(mimicking 'R2'\\)"):
            db.forward_dynamics(model, [0.1, 0.4, -0.3], np.zeros(3), np.zeros(3))


def test_simulation_options(fivebar):
    rng = np.random.default_rng(14)
    q, v, _ = closed_state(fivebar, rng)
    tr = db.simulate(fivebar, q, v, 0.04, 2e-3, stabilization="baumgarte", baumgarte=(20.0, 20.0))
    assert np.isnan(tr.constraint_drift) and tr.constraint_error.max() < 1e-6
    calls = []

    def controller(t, qs, vs):  # a PD on the crank, from Python
        calls.append(t)
        return np.array([-2.0 * (qs[0] - q[0]) - 0.5 * vs[0], 0.0, 0.0, 0.0])

    tr = db.simulate(fivebar, q, v, 0.02, 2e-3, tau=controller)
    assert tr.status == "completed" and len(calls) > 10 and tr.constraint_error.max() <= 1e-12
    np.testing.assert_allclose(tr.tau[0], controller(0.0, q, v))


def test_simulation_keeps_the_loops_closed(fivebar):
    rng = np.random.default_rng(11)
    q, v, _ = closed_state(fivebar, rng)
    tr = db.simulate(fivebar, q, v, 0.08, 4e-3)
    assert tr.status == "completed" and tr.q.shape == (21, 4)
    assert tr.constraint_error.max() <= 1e-12  # the projection tolerance
    assert 0 < tr.constraint_drift < 1e-5
    a = db.forward_dynamics(fivebar, tr.q[-1], tr.v[-1], np.zeros(4))
    np.testing.assert_allclose(tr.a[-1], a, atol=1e-12)
    eu = db.simulate(fivebar, q, v, 0.02, 1e-3, method="euler", stabilization="none")
    assert np.isnan(eu.constraint_drift) and eu.constraint_error[-1] > 0
    with pytest.raises(InputError, match="method='rk4' or 'euler'"):
        db.simulate(fivebar, q, v, 0.02, 1e-3, method="RK45")


@pytest.mark.parametrize("method", ["rk4", "euler"])
def test_compiled_run_equals_the_python_stages(fivebar, method, monkeypatch):
    """The one compiled run on the MimicLoopSystem (core/run.pyx on core/loops.pyx: the stacked
    rows, the projection) takes the steps of the Python stages around constraints.mimic_loops, state by
    state, for each stabilisation, with a torque table and the tree's dampers; a compiled run
    that falls back to Python would fail here."""
    rng = np.random.default_rng(21)
    tree = fivebar.tree.replace(damping=rng.uniform(0.0, 0.05, fivebar.tree.nv))
    model = db.MimicModel(tree)
    q, v, _ = closed_state(model, rng)
    table = 0.2 * rng.standard_normal((150, model.nv))
    for stabilization in ("projection", "baumgarte", "none"):
        kw = dict(method=method, stabilization=stabilization, baumgarte=(5.0, 5.0))
        with monkeypatch.context() as m:
            m.setattr(MimicLoopSystem, "kernel_system", lambda self: None)  # the Python stages
            ref = db.simulate(model, q, v, 0.15, 1e-3, tau=table, **kw)
        with monkeypatch.context() as m:
            m.setattr(simulation, "run_python", None)  # compiled only
            ours = db.simulate(model, q, v, 0.15, 1e-3, tau=table, **kw)
        name = f"{method}, {stabilization}"
        assert ours.status == ref.status == "completed" and ours.q.shape == ref.q.shape == (151, 4), name
        for field, tol in (("q", 1e-13), ("v", 1e-12), ("a", 1e-10), ("constraint_error", 1e-13)):
            np.testing.assert_allclose(getattr(ours, field), getattr(ref, field), rtol=0, atol=tol, err_msg=name)
        if stabilization == "projection":
            assert ours.constraint_error.max() <= 1e-12 and 0 < ours.constraint_drift
            np.testing.assert_allclose(ours.constraint_drift, ref.constraint_drift, rtol=1e-6, atol=1e-15)
        else:
            assert np.isnan(ours.constraint_drift) and ours.constraint_error[-1] > 0


@pytest.mark.slow
def test_energy_conservation_rk4(fivebar):
    """Passive (no damping, no torque): the energy error of rk4 falls ~16x per halving of dt."""
    rng = np.random.default_rng(12)
    q, v, _ = closed_state(fivebar, rng)
    drift = []
    for dt in (8e-3, 4e-3, 2e-3):
        tr = db.simulate(fivebar, q, v, 0.4, dt)
        E = tr.total_energy
        drift.append(np.abs(E - E[0]).max() / tr.kinetic_energy.max())
    ratios = np.array(drift[:-1]) / np.array(drift[1:])
    assert drift[-1] < 1e-6
    assert np.all(ratios > 10), (drift, ratios)


def test_open_chain_terms_equal_pinocchio_mimic_model(fivebar):
    """Pinocchio reads the same URDF with mimic=True (it ignores <loop_joint>): its rnea and crba are
    the open-chain G^T ID and G^T M G of the coupled tree."""
    pin = pytest.importorskip("pinocchio")
    pm = pin.buildModelFromXML(g.geared_fivebar_urdf(), mimic=True)
    pd = pm.createData()
    assert tuple(pm.names[1:]) == fivebar.joint_names and (pm.nq, pm.nv) == (fivebar.nq, fivebar.nv)
    rng = np.random.default_rng(13)
    for _ in range(3):
        q, v, a = rng.uniform(-1, 1, 4) * [1, 1, 0.05, 1], rng.standard_normal(4), rng.standard_normal(4)
        np.testing.assert_allclose(db.mimic.inverse_dynamics(fivebar, q, v, a), pin.rnea(pm, pd, q, v, a), atol=1e-12)
        np.testing.assert_allclose(db.mass_matrix(fivebar, q), pin.crba(pm, pd, q), atol=1e-12)
