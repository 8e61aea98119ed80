"""Joint couplings (``sum_k c_k q_k = value``, MuJoCo's fixed tendon held at its length): one
constant row on the loop layer, beside the cut joints' rows.  Checked against the dense KKT
system of the explicit mass matrix, the readable rows against the compiled ones, the
derivatives against central differences on the manifold, and a simulation that keeps them."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.constraints.packed import tree_rows
from denoc_bridge.errors import ModelError
from denoc_bridge.multibody.constraints import JointCoupling, Mimic
from denoc_bridge.testing import random_model
from tests.constraints.test_loop_derivatives import FD_TOL, central, rel

JT = db.JointType


def _one_dof(model):
    return [model.joint_names[k] for k in range(model.n_links) if model.nq_joint[k] == 1 and model.nv_joint[k] == 1]


def coupled(seed=1, with_cut=True, floating=False):
    """A random tree of every joint type with a spherical cut joint (``with_cut``) and two
    couplings (three and two one-DOF joints), at a state that satisfies them."""
    model = random_model(
        seed,
        12,
        branching=0.3,
        joint_types=[JT.REVOLUTE, JT.PRISMATIC] * 2 + [JT.SPHERICAL, JT.UNIVERSAL, JT.PLANAR],
        floating_base=floating,
    )
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    names = _one_dof(model)
    assert len(names) >= 5, names
    if with_cut:
        R, p = db.forward_kinematics(model, q)
        tip = np.array([0.1, -0.05, 0.2])
        x = R[1].T @ (p[-1] + R[-1] @ tip - p[1])
        model.add_loop_closure("cut", "spherical", model.link_names[-1], model.link_names[1], xyz1=tip, xyz2=x)
    iq = {n: int(model.idx_q[model.joint_names.index(n)]) for n in names}
    for name, joints, c in (("three", names[:3], [0.5, -1.0, 2.0]), ("two", names[3:5], [1.0, 0.7])):
        model.add_joint_coupling(name, joints, c, float(np.dot(c, [q[iq[j]] for j in joints])) + 0.01)
    q = loops.project_configuration(model, q)
    v = loops.project_velocity(model, q, rng.normal(size=model.nv))
    return model, q, v, rng.normal(size=model.nv)


def dense_kkt(tree, q, v, tau, J, bias):
    """a of ``M a - J^T lambda = tau - h``, ``J a = -bias`` with the tree's explicit M and h and a
    least-squares solve (redundant rows allowed)."""
    M = db.mass_matrix(tree, q)
    h = db.nonlinear_effects(tree, q, v)
    m = len(J)
    K = np.block([[M, -J.T], [J, np.zeros((m, m))]])
    return np.linalg.lstsq(K, np.concatenate([tau - h, -bias]), rcond=None)[0][: tree.nv]


def test_rows_of_a_coupling():
    model, q, v, _ = coupled(with_cut=False)
    phi, C, gamma = loops.loop_kinematics(model, q, v)
    assert phi.shape == (2,) and C.shape == (2, model.nv)
    for r, lc in enumerate(model.loops):
        assert isinstance(lc, JointCoupling) and lc.n_rows == 1 and lc.type == "coupling"
        row = np.zeros(model.nv)
        row[model.idx_v[list(lc.joints)]] = lc.coefficients
        np.testing.assert_array_equal(C[r], row)
        assert phi[r] == pytest.approx(lc.coefficients @ q[model.idx_q[list(lc.joints)]] - lc.value, abs=1e-15)
    assert np.abs(phi).max() < 1e-12 and np.all(gamma == 0.0)  # projected: held


@pytest.mark.parametrize("floating", [False, True])
def test_readable_and_compiled_rows_agree(floating):
    model, q, v, _ = coupled(floating=floating)
    rng = np.random.default_rng(1)
    q = db.random_configuration(model, rng)  # anywhere: the residual is not zero
    v = rng.normal(size=model.nv)
    phi, C, gamma = loops.loop_kinematics(model, q, v)
    phi_c, C_c, gamma_c = tree_rows(model, q, v)
    assert len(phi) == 3 + 2
    np.testing.assert_allclose(phi_c, phi, rtol=0, atol=1e-13)
    np.testing.assert_allclose(C_c, C, rtol=0, atol=1e-13)
    np.testing.assert_allclose(gamma_c, gamma, rtol=0, atol=1e-12 * max(1.0, np.abs(gamma).max()))


@pytest.mark.parametrize("floating", [False, True])
def test_forward_dynamics_is_the_dense_kkt_solution(floating):
    model, q, v, tau = coupled(floating=floating)
    _, C, gamma = loops.loop_kinematics(model, q, v)
    a_ref = dense_kkt(model.replace(loops=()), q, v, tau, C, gamma)
    for method in ("lagrange", "partitioning"):
        a = loops.constrained_forward_dynamics(model, q, v, tau, method=method)
        assert rel(a, a_ref) < 1e-11, method
    a = db.forward_dynamics(model, q, v, tau)
    assert rel(a, a_ref) < 1e-11
    assert np.abs(C[-2:] @ a).max() < 1e-10 * np.abs(a).max()  # the couplings' accelerations
    tau_id = loops.closed_chain_inverse_dynamics(model, q, v, a)
    assert np.allclose(db.forward_dynamics(model, q, v, tau_id), a, atol=1e-9 * np.abs(a).max())


def test_derivatives_against_central_differences():
    model, q, v, tau = coupled()
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    for which, f in (
        ("qdd", lambda q, v, t: loops.constrained_forward_dynamics(model, q, v, t)),
        ("lam", lambda q, v, t: loops.constraint_forces(model, q, v, t)[0]),
    ):
        out = central(f, model, q, v, tau)
        ours = (d.dqdd_dq, d.dqdd_dv, d.dqdd_dtau) if which == "qdd" else (d.dlam_dq, d.dlam_dv, d.dlam_dtau)
        errors = [rel(x, y) for x, y in zip(ours, out)]
        assert max(errors) < FD_TOL, (which, errors)


def test_simulation_keeps_the_couplings():
    model, q, v, _ = coupled()
    traj = db.simulate(model, q, v, 0.3, dt=1e-3)
    res = np.array([loops.loop_residual(model, x) for x in traj.q])
    assert np.abs(res).max() < 1e-10
    assert np.abs(traj.energy_drift(relative=True)).max() < 1e-9  # no work by the couplings' forces


def test_a_motion_that_breaks_a_coupling_is_named():
    model, q, v, _ = coupled(with_cut=False)
    k = model.loops[0].joints[0]
    v = v.copy()
    v[model.idx_v[k]] += 0.1
    with pytest.raises(db.InputError, match="does not satisfy joint coupling 'three' at the velocity level"):
        loops.closed_chain_inverse_dynamics(model, q, v, np.zeros(model.nv))


def test_mimic_with_a_coupling_is_the_dense_kkt_solution():
    """A mimic relation (reduced coordinates) and a coupling (a row) on one tree."""
    model, q, v, tau = coupled(with_cut=False)
    tree = model.replace(loops=())
    names = _one_dof(tree)
    tree = tree.replace(mimic=[Mimic(names[6], names[5], -0.8, 0.1)])
    for lc in model.loops:
        tree.add_joint_coupling(lc.name, [tree.joint_names[k] for k in lc.joints], lc.coefficients, lc.value)
    mm = db.MimicModel(tree)
    rng = np.random.default_rng(2)
    qr = loops.project_configuration(mm, mm.reduce_configuration(q))
    vr = loops.project_velocity(mm, qr, rng.normal(size=mm.nv))
    tr = rng.normal(size=mm.nv)
    a = db.forward_dynamics(mm, qr, vr, tr)
    # the reference: the tree with the mimic relation as one more row [K; C], tau_full = G^+T tau_r
    qf, vf = mm.expand(qr, vr)
    G, K = mm.coupling_matrix(), mm.constraint_matrix()
    _, C, gamma = loops.loop_kinematics(tree, qf, vf)
    t_full = np.linalg.pinv(G.T) @ tr
    a_full = dense_kkt(
        tree.replace(loops=()), qf, vf, t_full, np.vstack([K, C]), np.concatenate([np.zeros(len(K)), gamma])
    )
    assert rel(G @ a, a_full) < 1e-12
    assert np.abs(loops.loop_residual(mm, qr)).max() < 1e-10


def test_bad_couplings_are_named():
    model = random_model(2, 6, branching=0.0, joint_types=[JT.REVOLUTE, JT.SPHERICAL])
    rev = _one_dof(model)
    ball = next(n for n in model.joint_names if n not in rev)
    with pytest.raises(ModelError, match="joint coupling 'c': no joint named 'nope'"):
        model.add_joint_coupling("c", ["nope", rev[0]], [1.0, 1.0])
    with pytest.raises(ModelError, match=f"joint coupling 'c': joint '{ball}' has nq=4, nv=3"):
        model.add_joint_coupling("c", [ball, rev[0]], [1.0, 1.0])
    with pytest.raises(ModelError, match="a coefficient is zero"):
        model.add_joint_coupling("c", rev[:2], [1.0, 0.0])
    with pytest.raises(ModelError, match=r"coefficients \(one per joint\) must be 2 finite numbers, got \[1.0\]"):
        model.add_joint_coupling("c", rev[:2], [1.0])
    with pytest.raises(ModelError, match="must be distinct"):
        model.add_joint_coupling("c", [rev[0], rev[0]], [1.0, 2.0])
    with pytest.raises(ModelError, match="value must be a finite number, got nan"):
        model.add_joint_coupling("c", rev[:2], [1.0, 2.0], float("nan"))
    model.add_joint_coupling("c", rev[:2], [1.0, 2.0])
    with pytest.raises(ModelError, match="already used"):
        model.add_joint_coupling("c", rev[:2], [1.0, 2.0])
    with pytest.raises(ModelError, match="joint coupling 'c' is a row on the joint rates"):
        loops.cut_joint_jacobian(model, db.neutral_configuration(model))
    with pytest.raises(ModelError, match=f"joint '{ball}' has nq=4"):  # a copy checks its couplings too
        model.replace(
            loops=[JointCoupling("d", (model.joint_names.index(ball), model.joint_names.index(rev[0])), np.ones(2))]
        )
    report = loops.constraint_report(model, db.neutral_configuration(model))
    assert report[0]["joints"] == rev[:2] and report[0]["rows"] == 1
