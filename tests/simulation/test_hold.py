"""The posture hold (simulation.hold): the implicit PD the contact stepper applies, checked
against the equation of its step with Pinocchio's M and h; legged robots dropped from 0.3 m
stand with it (issue 37)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.errors import InputError
from denoc_bridge.io.collision import collision_points
from denoc_bridge.simulation.contact import simulate_contact
from denoc_bridge.simulation.hold import posture_hold

G0 = 9.81


def test_default_gains_and_the_floating_base():
    solo = db.load_robot("solo12")
    hold = posture_hold(solo)
    assert np.all(hold.kp[:6] == 0) and np.all(hold.kd[:6] == 0)  # the base is never held
    _, p = db.forward_kinematics(solo, hold.q_ref)
    extent = np.ptp(np.asarray(p), axis=0).max()
    omega = 2 * np.pi * 5.0
    np.testing.assert_allclose(hold.kp[6:], omega**2 * solo.total_mass * extent**2, rtol=1e-14)
    np.testing.assert_allclose(hold.kd[6:], 2 * omega * solo.total_mass * extent**2, rtol=1e-14)
    given = posture_hold(solo, kp=3.0, kd=np.arange(18.0))
    assert np.all(given.kp[6:] == 3.0) and np.all(given.kd[6:] == np.arange(6.0, 18.0))
    np.testing.assert_array_equal(given.armature(0.01), 0.01 * given.kd + 1e-4 * given.kp)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"kp": -1.0}, "kp must be a number >= 0"),
        ({"kd": [1.0, 2.0]}, "kd must be a number >= 0 or 18 of them"),
        ({"frequency": float("nan")}, "frequency must be a number >= 0"),
        ({"q_ref": np.zeros(3)}, "q_ref"),
    ],
)
def test_bad_gains_are_named(kwargs, words):
    with pytest.raises(InputError, match=words):
        posture_hold(db.load_robot("solo12"), **kwargs)


def test_one_step_is_the_implicit_pd_equation():
    """Without contact, one step of length dt is ``M (v+ - v) = dt (tau - h + Kp (q_ref (-) q) -
    (Kd + dt Kp) v+)`` with Pinocchio's M = crba and h = rnea(q, v, 0); the trajectory's tau is
    the force the hold applied."""
    chain = db.load_robot("chain:4")
    rng = np.random.default_rng(3)
    q = db.random_configuration(chain, 3)
    v = rng.normal(size=chain.nv)
    hold = posture_hold(chain, db.random_configuration(chain, 4), kp=rng.uniform(50, 500, 4), kd=rng.uniform(1, 9, 4))
    dt = 0.01
    high = db.Ground(height=-100.0)
    traj = simulate_contact(chain, q, v, dt, dt, high, [db.contact_point(chain, chain.link_names[-1])], hold=hold)
    v1 = traj.v[1]
    pm = db.to_pinocchio(chain)
    pd = pm.createData()
    M = pin.crba(pm, pd, q)
    M = np.triu(M) + np.triu(M, 1).T
    h = pin.rnea(pm, pd, q, v, np.zeros(chain.nv))
    tau = hold.kp * db.difference(chain, q, hold.q_ref) - (hold.kd + dt * hold.kp) * v1
    np.testing.assert_allclose(M @ (v1 - v), dt * (tau - h), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(traj.tau[0], tau, rtol=1e-12)
    np.testing.assert_allclose(traj.q[1], db.integrate(chain, q, dt * v1), rtol=1e-13, atol=1e-15)


def test_hold_goes_with_the_contact_stepper_only():
    chain = db.load_robot("chain:2")
    with pytest.raises(InputError, match="hold= is the contact time stepper's posture hold"):
        db.simulate(chain, db.neutral_configuration(chain), np.zeros(2), 0.01, hold=posture_hold(chain))
    with pytest.raises(InputError, match="hold must be a PostureHold"):
        db.simulate(
            chain,
            db.neutral_configuration(chain),
            np.zeros(2),
            0.01,
            method="contact-euler",
            contact=db.Ground(height=-10),
            contact_points=["link2"],
            hold=3.0,
        )


def _dropped(name):
    """``name`` in its reference posture, lifted so that its lowest collision point is 0.3 m up."""
    example_robot_data = pytest.importorskip("example_robot_data")
    model = db.load_robot(name)
    points, _ = collision_points(model)
    q_ref = example_robot_data.load(name).q0.copy()

    def lowest(q):
        R, p = db.forward_kinematics(model, q)
        return min((p[c.link] + R[c.link] @ c.point)[2] - c.radius for c in points)

    q0 = q_ref.copy()
    q0[2] += 0.3 - lowest(q_ref)
    return model, points, q_ref, q0, lowest


@pytest.mark.slow
@pytest.mark.parametrize("name", ["solo12", "talos"])
def test_legged_robots_dropped_from_30_cm_stand_with_the_hold(name):
    """Every <collision> shape a contact candidate (solo12: 778 points, talos: 4,141, the meshes'
    hulls thinned to 1 mm; every hull vertex: 7,888 and 11,593),
    dropped from 0.3 m with the default hold: after landing, the base height steady within 1 mm
    over 5 s (measured: within 1e-7 m), penetration below 1 mm (measured: about 1e-9 m), the
    ground carrying the weight, and the contact's work never positive."""
    model, points, q_ref, q0, lowest = _dropped(name)
    traj = db.simulate(
        model,
        q0,
        np.zeros(model.nv),
        6.0,
        1e-3,
        method="contact-euler",
        contact=db.Ground(mu=0.9),
        contact_points=points,
        hold=posture_hold(model, q_ref),
        save_every=10,
    )
    assert traj.status == "completed", traj.message
    z = traj.q[traj.t >= 1.0, 2]
    assert z.max() - z.min() < 1e-6
    assert min(lowest(q) for q in traj.q[traj.t >= 0.5]) > -1e-6
    assert traj.contact_force[-2, :, 2].sum() == pytest.approx(model.total_mass * G0, rel=1e-6)
    assert np.diff(traj.contact_work).max() <= 1e-9
    assert np.abs(traj.q[-1, 7:] - q_ref[7:]).max() < 5e-3  # the posture held
