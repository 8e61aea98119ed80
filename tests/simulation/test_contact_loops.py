"""Ground contact on a model with loop closures (issue 37): the four-bar of 004 falling onto a
ground under its coupler.  Its loop stays closed, it comes to rest where the geometry says, the
contact forces and the loop's hold the weight (static equilibrium with Pinocchio's gravity
torques), the contact never gives energy, nothing goes through the ground."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.constraints.contact import contact_rows
from denoc_bridge.constraints.loop_kinematics import loop_jacobian, loop_residual
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


def test_mimic_joints_are_still_refused_by_name():
    gripper = db.load_robot("gripper", mimic=True)
    with pytest.raises(db.ModelError, match="mimic joints is not supported yet"):
        simulate_contact(
            gripper,
            db.neutral_configuration(gripper),
            np.zeros(gripper.nv),
            0.01,
            1e-3,
            Ground(),
            [gripper.link_names[-1]],
        )
