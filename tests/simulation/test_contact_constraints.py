"""Ground contact on models with holonomic constraints (issue 37): the four-bar of 004 (a loop
closure) falling onto a ground under its coupler, the geared five-bar (mimic joints and a loop)
onto a ground under its fingers.  The loops stay closed, they come to rest where the geometry
says, the contact forces and the constraints' hold the weight (static equilibrium with
Pinocchio's gravity torques on the constrained motions), the contact never gives energy,
nothing goes through the ground."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.constraints.contact import contact_rows
from denoc_bridge.constraints.loop_kinematics import loop_jacobian, loop_residual
from denoc_bridge.constraints.loops import project_configuration
from denoc_bridge.io import generators
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.simulation.contact import simulate_contact

HEIGHT = 1.0  # the ground under the coupler (2 m up when the crank stands): it rests at cos(theta) = 1/2


@pytest.fixture(scope="module")
def fallen():
    model = generators.fourbar()
    points = [contact_point(model, "body3"), contact_point(model, "body4")]  # the coupler's two ends
    q0 = np.array([0.0, 0.3, -0.3, 0.3])  # the parallelogram: theta_3 = -theta_2, theta_4 = theta_2
    ground = Ground(height=HEIGHT, mu=0.5, name="floor")
    traj = db.simulate(model, q0, np.zeros(4), 2.0, 1e-3, method="contact-euler", contact=ground, contact_points=points)
    return model, points, ground, traj


def test_the_loop_stays_closed_and_it_rests_on_the_ground(fallen):
    model, points, _, traj = fallen
    assert traj.status == "completed", traj.message
    assert max(np.abs(loop_residual(model, q)).max() for q in traj.q) < 1e-12
    np.testing.assert_allclose(traj.q[-1, 1:], [np.pi / 3, -np.pi / 3, np.pi / 3], atol=1e-9)
    assert np.abs(traj.v[-1]).max() < 1e-9
    assert np.abs(loop_jacobian(model, traj.q[-1]) @ traj.v[-1]).max() < 1e-12
    for q in traj.q[::20]:  # the coupler's ends never below the ground
        _, p = db.forward_kinematics(model, q)
        assert p[2:4, 2].min() > HEIGHT - 1e-9
    steps = np.diff(traj.contact_work)
    assert steps.min() < -1e-3 and steps.max() <= 1e-12  # it acted, and never gave energy
    # the energy balance with the impacts' work the Python steps add up (issue 47): 1.0e-3 of the
    # scale (0.70 without it)
    assert np.diff(traj.impact_work).max() <= 1e-12 and traj.impact_work[-1] < -1.0
    assert np.abs(traj.energy_drift(relative=True)).max() < 2e-3


def test_at_rest_the_contact_and_loop_forces_balance_gravity(fallen):
    """At rest (tau = 0) ``g(q) = J_n^T f_n + C^T mu``: projected on the closed system's motions
    (N, a basis of C's null space: 2 of the 4 directions, so the test can fail) the gravity
    torques (Pinocchio's rnea at rest) equal those of the saved normal force.  The coupler
    translates: on those motions both ends have the same rows, and the saved resultant is all
    the equation needs."""
    model, points, ground, traj = fallen
    q = traj.q[-2]  # the forces saved at state k are those of the step from it
    c = contact_rows(model, q, points, ground)
    assert c.m == 2
    Cq = loop_jacobian(model, q)
    N = np.linalg.svd(Cq)[2][np.linalg.matrix_rank(Cq, tol=1e-9) :].T
    assert N.shape == (4, 2)
    np.testing.assert_allclose(N.T @ c.J[2], N.T @ c.J[5], atol=1e-12)
    f = traj.contact_force[-2].sum(axis=0)  # N, world frame
    assert abs(f[0]) < 1e-9 * f[2] and abs(f[1]) < 1e-9 * f[2]
    pm = db.to_pinocchio(model)
    g = pin.rnea(pm, pm.createData(), q, np.zeros(4), np.zeros(4))
    assert np.abs(N.T @ g).max() > 1.0  # gravity does pull along the motions
    np.testing.assert_allclose(N.T @ (c.J[2] * f[2]), N.T @ g, rtol=1e-8, atol=1e-8 * np.abs(g).max())


def null_space(C):
    """A basis of the motions C v = 0 (columns)."""
    return np.linalg.svd(C)[2][np.linalg.matrix_rank(C, tol=1e-9) :].T


def test_geared_fivebar_mimic_joints_and_a_loop_rest_on_the_ground():
    """The geared five-bar (its right crank and finger mimic the left ones, the tip a loop
    closure) falls onto a ground under its fingers: the loop stays closed, both fingers land
    (the mimic keeps them symmetric) and carry it, the contact never gives energy, and at rest
    ``G^T g(q) = J_r^T f + C_r^T mu`` on the constrained motions (Pinocchio's rnea on the tree)."""
    model = generators.geared_fivebar()
    q0 = project_configuration(model, generators.GEARED_FIVEBAR_Q)
    points = [contact_point(model, f, radius=0.02) for f in ("finger_left_link", "finger_right_link")]
    ground = Ground(height=0.2, mu=0.6)
    traj = simulate_contact(model, q0, np.zeros(model.nv), 1.5, 1e-3, ground, points)
    assert traj.status == "completed" and traj.q.shape[1] == model.nq == 4
    assert max(np.abs(loop_residual(model, q)).max() for q in traj.q) < 2e-12
    assert np.abs(traj.v[-1]).max() < 1e-9
    for q in traj.q[::20]:
        _, p = db.forward_kinematics(model, q)
        assert p[2:4, 2].min() > 0.22 - 1e-9  # the fingers' spheres (2 cm) above the ground
    steps = np.diff(traj.contact_work)
    assert steps.min() < -1e-3 and steps.max() <= 1e-12
    assert np.abs(traj.energy_drift(relative=True)).max() < 2e-2  # with the impacts (issue 47; 0.84 without)
    f = traj.contact_force[-2]  # (left, right) finger, world frame
    # both fingers carry it; their split is not unique (six impulses against two motions: the
    # compiled run and the Python step may pick different ones, tests/core/test_contact_mimic.py),
    # the generalized force on the constrained motions is, and balances gravity (below)
    assert f[0, 2] > 1.0 and f[1, 2] > 1.0
    assert f[0, 2] == pytest.approx(f[1, 2], rel=1e-2)  # nearly symmetric
    q = traj.q[-2]
    near = [contact_point(model, f, radius=0.02, margin=1e-3) for f in ("finger_left_link", "finger_right_link")]
    c = contact_rows(model, q, near, ground)
    assert c.m == 2 and c.J.shape == (6, model.nv)  # the rows on the reduced velocities
    B = ground.frame()
    generalized = sum(c.J[3 * i : 3 * i + 3].T @ (B.T @ f[i]) for i in range(2))
    tree = model.tree
    pm = db.to_pinocchio(tree)
    g = model.coupling_matrix().T @ pin.rnea(pm, pm.createData(), model.expand(q), np.zeros(tree.nv), np.zeros(tree.nv))
    N = null_space(loop_jacobian(model, q))
    assert N.shape == (4, 2) and np.abs(N.T @ g).max() > 0.1  # the crank and the jaw
    np.testing.assert_allclose(N.T @ generalized, N.T @ g, rtol=1e-8, atol=1e-8 * np.abs(g).max())
