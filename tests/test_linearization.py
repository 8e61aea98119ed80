"""linearize: the state space (A, B) against Pinocchio's ABA derivatives and against central
differences of the flow on the manifold (pin.integrate, pin.difference, pin.dDifference)."""

from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest
from scipy import linalg

import denoc_bridge as db
from denoc_bridge.testing import random_model
from denoc_bridge.validation import relative_error

JT = db.JointType
# every joint type Pinocchio computes ABA derivatives for (its universal joint's are wrong)
PIN_TYPES = tuple(t for t in JT if t != JT.UNIVERSAL)


def flow(pm, q0, x, tau):
    """d/dt x of x = (dq, v), q = integrate(q0, dq): (dDifference(q0, q, ARG1) v, aba(q, v, tau))."""
    nv = pm.nv
    dq, v = x[:nv], x[nv:]
    q = pin.integrate(pm, q0, dq)
    J = pin.dDifference(pm, q0, q, pin.ArgumentPosition.ARG1)
    return np.concatenate([J @ v, pin.aba(pm, pm.createData(), q, v, tau)])


def central_differences(pm, q0, v0, tau0, h=1e-6):
    nv = pm.nv
    x0 = np.concatenate([np.zeros(nv), v0])
    A = np.empty((2 * nv, 2 * nv))
    B = np.empty((2 * nv, nv))
    for j in range(2 * nv):
        e = np.zeros(2 * nv)
        e[j] = h
        A[:, j] = (flow(pm, q0, x0 + e, tau0) - flow(pm, q0, x0 - e, tau0)) / (2 * h)
    for j in range(nv):
        e = np.zeros(nv)
        e[j] = h
        B[:, j] = (flow(pm, q0, x0, tau0 + e) - flow(pm, q0, x0, tau0 - e)) / (2 * h)
    return A, B


def robot(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_robot(name)


@pytest.mark.parametrize(
    "make",
    [
        lambda: robot("panda"),
        lambda: robot("solo12"),
        lambda: random_model(3, 7, joint_types=PIN_TYPES, floating_base=True),
        lambda: random_model(4, 6, joint_types=(JT.SPHERICAL, JT.PLANAR, JT.CONTINUOUS, JT.REVOLUTE)),
    ],
    ids=["panda", "solo12", "random-floating", "random-lie-groups"],
)
def test_linearize_against_pinocchio_and_differences(make):
    model = make()
    pm = db.to_pinocchio(model)
    rng = np.random.default_rng(7)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    A, B = db.linearize(model, q, v, tau)
    nv = model.nv
    assert A.shape == (2 * nv, 2 * nv) and B.shape == (2 * nv, nv)
    pd = pm.createData()
    pin.computeABADerivatives(pm, pd, q, v, tau)
    assert relative_error(A[nv:, :nv], pd.ddq_dq) < 1e-9
    assert relative_error(A[nv:, nv:], pd.ddq_dv) < 1e-9
    assert relative_error(B[nv:], pd.Minv) < 1e-9
    assert np.array_equal(A[:nv, nv:], np.eye(nv)) and not B[:nv].any()
    A_fd, B_fd = central_differences(pm, q, v, tau)
    scale_A = np.abs(A_fd).max()
    # the kinematic block, exact in v: differences of a function linear in v and smooth in dq
    assert np.abs(A[:nv] - A_fd[:nv]).max() < 1e-8 * max(1.0, np.abs(A_fd[:nv]).max())
    assert np.abs(A - A_fd).max() < 1e-6 * scale_A
    assert np.abs(B - B_fd).max() < 1e-6 * np.abs(B_fd).max()


def test_upper_block_is_nonzero_for_moving_lie_groups_and_zero_at_rest():
    model = random_model(5, 5, joint_types=(JT.REVOLUTE,), floating_base=True)
    rng = np.random.default_rng(1)
    q = db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    A, _ = db.linearize(model, q, v, np.zeros(model.nv))
    assert np.abs(A[:6, :6]).max() > 0.1  # -1/2 ad_v of the free-flyer
    assert not A[6 : model.nv, : model.nv].any()
    A0, _ = db.linearize(model, q, np.zeros(model.nv), np.zeros(model.nv))
    assert not A0[: model.nv, : model.nv].any()


def test_linearize_batch_equals_states():
    model = robot("solo12")
    rng = np.random.default_rng(2)
    Q = np.array([db.random_configuration(model, rng) for _ in range(3)])
    V, T = rng.standard_normal((3, model.nv)), rng.standard_normal((3, model.nv))
    A, B = db.linearize(model, Q, V, T)
    assert A.shape == (3, 2 * model.nv, 2 * model.nv) and B.shape == (3, 2 * model.nv, model.nv)
    for b in range(3):
        Ab, Bb = db.linearize(model, Q[b], V[b], T[b])
        np.testing.assert_allclose(A[b], Ab, rtol=0, atol=1e-12 * np.abs(Ab).max())
        np.testing.assert_allclose(B[b], Bb, rtol=0, atol=1e-12 * np.abs(Bb).max())


def test_linearize_names_bad_input():
    model = robot("panda")
    with pytest.raises(db.InputError, match="tau"):
        db.linearize(model, db.neutral_configuration(model), np.zeros(model.nv), np.zeros(model.nv + 1))


def test_lqr_on_the_generated_cartpole_stabilises_it():
    """The quick tier's LQR check (the example 14_cartpole_lqr runs in the slow tier)."""
    model = db.generators.cartpole(1)
    assert tuple(model.joint_names) == ("cart_slide", "pole1_hinge")
    zero = np.zeros(model.nv)
    np.testing.assert_array_equal(db.gravity_torques(model, zero), zero)  # upright: an equilibrium
    A, B = db.linearize(model, zero, zero, zero)
    B = B[:, :1]
    K = np.linalg.solve([[0.1]], B.T @ linalg.solve_continuous_are(A, B, np.diag([10.0, 10.0, 1.0, 1.0]), [[0.1]]))
    assert linalg.eigvals(A).real.max() > 1.0  # upright is unstable
    assert linalg.eigvals(A - B @ K).real.max() < -0.5

    def controller(t, q, v):
        return np.array([-(K @ np.concatenate([q, v]))[0], 0.0])

    q0 = np.array([0.0, 0.2])
    closed = db.simulate(model, q0, zero, 5.0, 2e-3, tau=controller)
    assert np.abs(np.hstack([closed.q[-1], closed.v[-1]])).max() < 1e-3
    fallen = db.simulate(model, q0, zero, 1.5, 2e-3)
    assert np.abs(fallen.q[:, 1]).max() > 1.0


def test_cartpole_urdf_refuses_bad_parameters():
    with pytest.raises(db.InputError, match="pole_mass"):
        db.generators.cartpole_urdf(1, pole_mass=-1.0)
    with pytest.raises(db.InputError, match="n_poles"):
        db.generators.cartpole_urdf(0)
