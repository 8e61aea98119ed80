"""Derivatives of the constrained dynamics of loop closures and of the Lagrange multipliers
(Pinocchio has none for these cut joints): the four-bar of 004 and spatial loops, against
central differences on the manifold (db.integrate) and the identities of the KKT system."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.constraints.loop_derivatives import constraint_acceleration_derivatives
from denoc_bridge.generators import GEARED_FIVEBAR_Q, fourbar, geared_fivebar
from denoc_bridge.testing import pin_constraint_models, random_model

JT = db.JointType
FD_TOL = 1e-7  # along q h = 1e-5; along v (quadratic) and tau (linear) h = 1e-3: exact but round-off


def rel(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


def central(f, model, q, v, tau, hq=1e-5, hv=1e-3):
    out = []
    for which in range(3):
        cols = []
        for j in range(model.nv):
            e = np.zeros(model.nv)
            e[j] = hq if which == 0 else hv
            if which == 0:
                plus, minus = f(db.integrate(model, q, e), v, tau), f(db.integrate(model, q, -e), v, tau)
            elif which == 1:
                plus, minus = f(q, v + e, tau), f(q, v - e, tau)
            else:
                plus, minus = f(q, v, tau + e), f(q, v, tau - e)
            cols.append((plus - minus) / (2 * e[j]))
        out.append(np.column_stack(cols))
    return out


def spatial_loop(kind, types, to_world, seed=3, n_links=6):
    """A random chain closed by a cut joint of ``kind`` from its last link to the world or to link 1."""
    model = random_model(seed, n_links, branching=0.0, joint_types=list(types))
    rng = np.random.default_rng(5)
    q_ref = db.random_configuration(model, rng)
    R, p = db.forward_kinematics(model, q_ref)
    tip = np.array([0.1, 0.05, 0.2])
    if to_world:
        xyz2, rot2, other = p[-1] + R[-1] @ tip, R[-1], "world"
    else:
        xyz2, rot2, other = R[1].T @ (p[-1] + R[-1] @ tip - p[1]), R[1].T @ R[-1], model.link_names[1]
    model.add_loop_closure(
        "cut", kind, model.link_names[-1], other, xyz1=tip, xyz2=xyz2, rotation2=rot2, axis=(0.2, 0.9, -0.3)
    )
    q = loops.project_configuration(model, db.integrate(model, q_ref, 0.05 * rng.normal(size=model.nv)))
    v = loops.project_velocity(model, q, rng.normal(size=model.nv))
    return model, q, v, rng.normal(size=model.nv)


def fourbar_state():
    t2, w2 = 0.4, 0.7
    return fourbar(), np.array([0.3, t2, -t2, t2]), np.array([0.2, w2, -w2, w2]), np.array([0.5, -1.0, 0.3, 0.8])


CASES = {
    "fourbar": fourbar_state,
    "spherical-to-world": lambda: spatial_loop("spherical", (JT.REVOLUTE,), True),
    "revolute-RP": lambda: spatial_loop("revolute", (JT.REVOLUTE, JT.PRISMATIC), False, seed=11, n_links=7),
    "prismatic-RP": lambda: spatial_loop("prismatic", (JT.REVOLUTE, JT.PRISMATIC), False),
    "spherical-lie-groups": lambda: spatial_loop(
        "spherical", (JT.SPHERICAL, JT.REVOLUTE, JT.UNIVERSAL, JT.PLANAR), False
    ),
    "weld-lie-groups": lambda: spatial_loop("weld", (JT.SPHERICAL, JT.REVOLUTE, JT.UNIVERSAL, JT.PLANAR), False),
    "revolute-lie-groups": lambda: spatial_loop(
        "revolute", (JT.SPHERICAL, JT.REVOLUTE, JT.UNIVERSAL, JT.PLANAR), False
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_constrained_derivatives_against_central_differences(case):
    model, q, v, tau = CASES[case]()
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    fa = central(lambda q, v, t: loops.constrained_forward_dynamics(model, q, v, t), model, q, v, tau)
    fl = central(lambda q, v, t: loops.constraint_forces(model, q, v, t)[0], model, q, v, tau)
    errors = {
        "dqdd_dq": rel(d.dqdd_dq, fa[0]),
        "dqdd_dv": rel(d.dqdd_dv, fa[1]),
        "dqdd_dtau": rel(d.dqdd_dtau, fa[2]),
        "dlam_dq": rel(d.dlam_dq, fl[0]),
        "dlam_dv": rel(d.dlam_dv, fl[1]),
        "dlam_dtau": rel(d.dlam_dtau, fl[2]),
    }
    assert max(errors.values()) < FD_TOL, errors
    public = db.forward_dynamics_derivatives(model, q, v, tau)
    for x, y in zip(public, d[:3]):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("case", ["fourbar", "spherical-lie-groups"])
def test_constrained_derivatives_identities(case):
    model, q, v, tau = CASES[case]()
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    C = loops.loop_jacobian(model, q)[d.rows]
    M = db.mass_matrix(model, q)
    P = d.dqdd_dtau
    scale = np.abs(P).max()
    assert np.abs(P - P.T).max() <= 1e-12 * scale
    assert np.abs(C @ P).max() <= 1e-10 * scale * np.abs(C).max()  # P C^T = 0
    assert np.abs(P @ M @ P - P).max() <= 1e-9 * scale  # a projector in the metric of M
    Minv = np.linalg.inv(M)
    S = C @ Minv @ C.T
    assert rel(d.dlam_dtau, -np.linalg.solve(S, C @ Minv)) < 1e-9
    assert rel(P, Minv - Minv @ C.T @ np.linalg.solve(S, C @ Minv)) < 1e-9
    # the velocity constraint C v = 0 is kept: C dqdd/dv = -d(Cdot v)/dv
    _, _, dg_dv = constraint_acceleration_derivatives(model, q, v, d.qdd[None])
    assert np.abs(C @ d.dqdd_dv + dg_dv[0][d.rows]).max() <= 1e-10 * np.abs(dg_dv).max()


def test_constraint_acceleration_rows_are_c_a_plus_cdot_v():
    model, q, v, _ = CASES["prismatic-RP"]()
    nv = model.nv
    g, _, _ = constraint_acceleration_derivatives(model, q, v, np.vstack([np.zeros(nv), np.eye(nv)]))
    _, C, cdqd = loops.loop_kinematics(model, q, v)
    assert rel((g[1:] - g[0]).T, C) < 1e-13
    assert np.abs(g[0] - cdqd).max() <= 1e-12 * max(1.0, np.abs(cdqd).max())


def test_constrained_derivatives_batch_and_refusals():
    model, q, v, tau = CASES["fourbar"]()
    rng = np.random.default_rng(3)
    Q = np.array([q, q])
    V = np.array([v, v])
    T = np.array([tau, rng.normal(size=4)])
    batch = db.forward_dynamics_derivatives(model, Q, V, T)
    for b in range(2):
        for X, x in zip(batch, db.forward_dynamics_derivatives(model, Q[b], V[b], T[b])):
            np.testing.assert_array_equal(X[b], x)
    with pytest.raises(db.InputError, match="no loop closures"):
        loops.constrained_dynamics_derivatives(random_model(1, 3), np.zeros(3), np.zeros(3), np.zeros(3))
    with pytest.raises(db.InputError, match="tau"):
        loops.constrained_dynamics_derivatives(model, q, v, tau[:-1])


@pytest.mark.parametrize("types", [(JT.REVOLUTE,), (JT.SPHERICAL, JT.REVOLUTE, JT.PLANAR)], ids=["R", "SRP"])
def test_ball_to_the_world_matches_pinocchio_constraint_dynamics_derivatives(types):
    """A ball joint to the world is Pinocchio's CONTACT_3D with the same acceleration rows: its
    computeConstraintDynamicsDerivatives is a reference there.  (Between two moving bodies its
    3D derivatives disagree with central differences of its own constraintDynamics, and its 6D
    rows differ from ours off the velocity constraint: not references.)"""
    model, q, v, tau = spatial_loop("spherical", types, True)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    cms, cds = pin_constraint_models(model, pm)
    pin.initConstraintDynamics(pm, pd, cms, cds)
    settings = pin.ProximalSettings(1e-14, 0.0, 200)
    a = pin.constraintDynamics(pm, pd, q, v, tau, cms, cds, settings)
    pin.computeConstraintDynamicsDerivatives(pm, pd, cms, cds, settings)
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    assert rel(d.qdd, a) < 1e-12
    errors = {
        "dqdd_dq": rel(d.dqdd_dq, pd.ddq_dq),
        "dqdd_dv": rel(d.dqdd_dv, pd.ddq_dv),
        "dqdd_dtau": rel(d.dqdd_dtau, pd.ddq_dtau),
    }
    assert max(errors.values()) < 1e-10, errors


def test_linearize_a_closed_chain():
    model, q, v, tau = CASES["fourbar"]()
    A, B = db.linearize(model, q, v, tau)
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    np.testing.assert_array_equal(A[4:, :4], d.dqdd_dq)
    np.testing.assert_array_equal(B[4:], d.dqdd_dtau)
    assert np.linalg.matrix_rank(B[4:]) == 2  # 4 coordinates, 2 independent loop rows: 2 DOF (slider, crank)


def test_mimic_and_loops_together_geared_fivebar():
    """The geared five-bar: mimic rows K stacked on the loop rows C, reduced coordinates."""
    model = geared_fivebar()
    rng = np.random.default_rng(8)
    q = loops.project_configuration(model, GEARED_FIVEBAR_Q)
    v = loops.project_velocity(model, q, rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    d = loops.constrained_dynamics_derivatives(model, q, v, tau)
    public = db.forward_dynamics_derivatives(model, q, v, tau)
    for x, y in zip(public, d[:3]):
        np.testing.assert_array_equal(x, y)
    fa = central(lambda q, v, t: db.forward_dynamics(model, q, v, t), model, q, v, tau)
    errors = {"dqdd_dq": rel(d.dqdd_dq, fa[0]), "dqdd_dv": rel(d.dqdd_dv, fa[1]), "dqdd_dtau": rel(d.dqdd_dtau, fa[2])}
    assert max(errors.values()) < FD_TOL, errors
    with pytest.raises(db.InputError, match="not supported yet"):
        db.inverse_dynamics_derivatives(model, q, v, tau)
