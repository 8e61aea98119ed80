"""The compiled contact run (core/contact_run.pxi) against the Python step it replaces
(simulation/contact.py, ``compiled=False``): the same trajectories, field by field, on runs that
use each of its parts; the steps it hands back to Python (the contact solver's fallbacks, the
errors that name their cause) taken there."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.constraints import contact as contact_constraints
from denoc_bridge.errors import SimulationError, SingularInertiaError
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.simulation import contact as contact_simulation
from denoc_bridge.simulation.contact import simulate_contact

BOX = """<robot name="box"><link name="box"><inertial><mass value="2"/>
<inertia ixx="0.0166" iyy="0.0083" izz="0.0216" ixy="0" ixz="0" iyz="0"/></inertial>
<collision><geometry><box size="0.2 0.3 0.1"/></geometry></collision></link></robot>"""
FIELDS = ("t", "q", "v", "a", "tau", "contact_force", "contact_work", "contact_point")


def same_runs(a, b, rtol=1e-10):
    """Two trajectories equal to round-off, field by field (relative to each field's scale)."""
    assert (a.status, a.n_steps, a.message) == (b.status, b.n_steps, b.message)
    for field in FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        assert x.shape == y.shape, field
        pushing = np.isfinite(y)  # (a contact point is NaN while its pair pushes nothing)
        np.testing.assert_array_equal(np.isfinite(x), pushing, err_msg=field)
        x, y = x[pushing], y[pushing]
        scale = max(float(np.abs(y).max(initial=0.0)), 1e-3)  # round-off on a field that stays ~0 (no work)
        assert np.abs(x - y).max(initial=0.0) <= rtol * scale, (field, np.abs(x - y).max(), scale)


def both(*args, **kwargs):
    return simulate_contact(*args, **kwargs), simulate_contact(*args, compiled=False, **kwargs)


@pytest.fixture(scope="module")
def solo():
    example_robot_data = pytest.importorskip("example_robot_data")
    model = db.load_robot("solo12")
    q_ref = example_robot_data.load("solo12").q0.copy()
    feet = [contact_point(model, f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    R, p = db.forward_kinematics(model, q_ref)
    q0 = q_ref.copy()
    q0[2] += 0.05 - min((p[c.link] + R[c.link] @ c.point)[2] - c.radius for c in feet)
    return model, feet, q_ref, q0


@pytest.mark.parametrize("save_every", [1, 7])
def test_solo12_landing_with_the_hold(solo, save_every):
    """Dropped from 5 cm onto a rough ground with the implicit posture hold: flight, impact,
    sliding and sticking feet, the warm start, the position correction."""
    model, feet, q_ref, q0 = solo
    hold = db.posture_hold(model, q_ref)
    a, b = both(model, q0, np.zeros(model.nv), 0.4, 1e-3, Ground(mu=0.8), feet, hold=hold, save_every=save_every)
    assert np.abs(a.contact_force).max() > 1.0 and np.diff(a.contact_work).min() < -1e-4  # it landed
    same_runs(a, b)


def test_springs_dampers_a_controller_and_two_grounds():
    """A chain with joint springs and dampers (implicit in the step) and a controller, its last
    link swinging onto a slope and a floor with restitution: the passive forces, a controller
    called once per step, several grounds and the restitution term."""
    chain = db.load_robot("chain:5")
    rng = np.random.default_rng(7)
    chain = chain.replace(
        damping=rng.uniform(0.01, 0.1, chain.nv),
        stiffness=rng.uniform(1.0, 5.0, chain.nv),
        rest_configuration=db.random_configuration(chain, 8),
    )
    points = [contact_point(chain, link, radius=0.02) for link in chain.link_names[2:]]
    grounds = [
        Ground(height=-0.15, mu=0.4, restitution=0.3, name="floor"),
        Ground(normal=(1.0, 0.0, 1.0), height=-0.15, mu=0.7, name="slope"),
    ]
    calls = []

    def controller(t, q, v):
        calls.append(t)
        return 0.5 * np.sin(10 * t) * np.ones(chain.nv)

    q0 = db.random_configuration(chain, 9)
    a = simulate_contact(chain, q0, np.zeros(chain.nv), 0.5, 1e-3, grounds, points, controller)
    assert calls == pytest.approx(1e-3 * np.arange(500), abs=1e-12)  # once per step, in order
    b = simulate_contact(chain, q0, np.zeros(chain.nv), 0.5, 1e-3, grounds, points, controller, compiled=False)
    floor, slope = a.contact_force[:, 0::2], a.contact_force[:, 1::2]  # groups: (link, ground), ground fastest
    assert np.abs(floor).max() > 0.1 and np.abs(slope).max() > 0.1 and np.abs(a.contact_force[..., 0]).max() > 0.01
    same_runs(a, b)


def test_the_solver_fallbacks_are_taken_in_python(monkeypatch):
    """A flat box landing on its four corners: PGS stalls on the resting steps (an indeterminate
    problem); those steps, and only those, are handed to the Python step and its fallbacks.
    The run is the Python run."""
    model = db.load_urdf(BOX, floating_base=True)
    points, _ = collision_points(model, BOX)
    q0 = db.neutral_configuration(model)
    q0[2] = 0.05 + 0.3
    python_steps = []
    step = contact_simulation._Stepper.python_step

    def counted(self, k, tk, stalled=False):
        python_steps.append(k)
        step(self, k, tk, stalled)

    pgs_runs = []
    pgs = contact_constraints._cc.pgs_state

    def counted_pgs(*args):
        pgs_runs.append(args[3])
        return pgs(*args)

    monkeypatch.setattr(contact_simulation._Stepper, "python_step", counted)
    monkeypatch.setattr(contact_constraints._cc, "pgs_state", counted_pgs)
    a = simulate_contact(model, q0, np.zeros(6), 0.8, 1e-3, Ground(), points)
    handed = list(python_steps)
    assert pgs_runs == []  # the compiled run's PGS stalled there: the fallbacks started where it stopped
    python_steps.clear()
    b = simulate_contact(model, q0, np.zeros(6), 0.8, 1e-3, Ground(), points, compiled=False)
    assert len(python_steps) == 800 and len(pgs_runs) > len(handed)  # PGS on every step with contacts
    assert 0 < len(handed) < 800  # some steps needed the fallbacks, the others ran compiled
    same_runs(a, b)


def test_errors_are_named_by_the_python_step():
    """A step the compiled run cannot take because of a user's model or controller is taken in
    Python, whose error names the cause: a singular articulated inertia names its joint, a
    blow-up is a SimulationError."""
    model = db.load_urdf(BOX, floating_base=True)
    points, _ = collision_points(model, BOX)
    q0 = db.neutral_configuration(model)
    q0[2] = 0.2
    with pytest.raises(SimulationError, match="left the finite numbers"):
        simulate_contact(model, q0, np.ones(6), 1.0, 1e-3, Ground(), points, lambda t, q, v: -1e6 * v)
    chain = db.load_robot("chain:3")
    massless = chain.replace(mass=np.r_[chain.mass[:-1], 0.0], inertia=np.r_[chain.inertia[:-1], np.zeros((1, 3, 3))])
    tip = [contact_point(massless, massless.link_names[-1])]
    with pytest.raises(SingularInertiaError, match=massless.joint_names[-1]):
        simulate_contact(massless, db.neutral_configuration(massless), np.zeros(3), 0.01, 1e-3, Ground(), tip)


def test_joint_limits_beside_the_contacts():
    """talos folding onto its joint limits on the ground: the limits' rows in the compiled run
    (core/contact_rows.pxi limit_rows) and in the Python step, the same trajectory and the same
    work of the limits."""
    example_robot_data = pytest.importorskip("example_robot_data")

    model = db.load_robot("talos")
    q_ref = example_robot_data.load("talos").q0.copy()
    soles = ("left_sole_link", "right_sole_link")
    points = [contact_point(model, s, (x, y, 0.0)) for s in soles for x in (-0.1, 0.13) for y in (-0.065, 0.065)]
    q0 = contact_constraints.lifted(model, q_ref, points, 0.02)
    a, b = both(model, q0, np.zeros(model.nv), 0.4, 1e-3, Ground(mu=0.9), points)
    assert a.limit_work[-1] > 1.0  # the limits acted
    # 1e-9: a sole that lifts pushes 1e-9 N s at the end, and its centre of pressure, a ratio of
    # such impulses, moves by 2.4e-11 m = 1.6e-10 of its scale (measured; the other fields agree
    # to 2.3e-11 of theirs, the limits' work to 1.2e-12)
    same_runs(a, b, rtol=1e-9)
    np.testing.assert_allclose(a.limit_work, b.limit_work, rtol=1e-10, atol=1e-10 * a.limit_work[-1])
    np.testing.assert_allclose(a.impact_work, b.impact_work, rtol=1e-10, atol=1e-10 * np.abs(b.impact_work).max())
