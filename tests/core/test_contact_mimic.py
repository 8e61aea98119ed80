"""The compiled contact run on a MimicModel (core/contact_mimic.pxi): its steps on the tree's
coordinates with the mimic rows K as bilateral rows beside the contacts, the state expanded and
reduced, against the Python step (``compiled=False``) field by field.  The models: the mimic
gripper of tests/constraints/test_mimic.py on a floating base (revolute, prismatic and
continuous mimic joints, multipliers -1, 2, -2, -0.5, 3 and 0.02, their limits narrowing their
mimicked joints') dropped onto the ground with a point on every link, with the posture hold and
without it; panda with ``mimic=True`` (its second finger mimics the first; the URDF's joint
dampers, implicit) falling onto a table under its hand with the command line's contact
spheres on its finger tips and hand, the fingers opening onto their limits.  Every
step compiled, the same trajectories to 1e-10 of each field's scale, the mimic joints within
their limits, the energy balance; the K rows dropped, the run leaves the Python step's (the test
can fail); lengths that do not fit refused as -2, nothing computed.

Measured in one process (best of 3, 2 cores shared with another job, dt = 1 ms; docs/performance.md):

=====================================================  ==========  ==========  ======
model (steps)                                          Python      compiled    ratio
=====================================================  ==========  ==========  ======
gripper, floating base, 11 points, no hold (500)       286 us      11.5 us     25x
gripper with the posture hold (500)                    381 us      13.3 us     29x
panda (mimic), 3 spheres, onto a table (300)           262 us      33.7 us     8x
=====================================================  ==========  ==========  ======
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from scipy.linalg import null_space

import denoc_bridge as db
from denoc_bridge.constraints import mimic_loops
from denoc_bridge.constraints.contact import contact_rows, lifted, lowest_point
from denoc_bridge.core import contact as cc
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.simulation import contact as sc
from denoc_bridge.simulation.contact import simulate_contact
from tests.core.test_contact_entries import refusal_setup

from .test_contact_loops import FIELDS, counted, same_runs

GRIPPER = str(Path(__file__).resolve().parents[2] / "urdf" / "mimic_gripper.urdf")


@pytest.fixture(scope="module")
def gripper():
    """The gripper on a floating base, tilted, its wrist and finger turned, 5 cm above the ground,
    a contact point on every link (the roller pair: a continuous mimic joint, multiplier 3)."""
    model = db.load_urdf(GRIPPER, floating_base=True, mimic=True)
    tree = model.tree
    qt = np.zeros(tree.nq)
    qt[6] = 1.0
    for k, name in enumerate(tree.joint_names):
        if "roller" in name:
            qt[tree.idx_q[k]] = 1.0  # (cos, sin) = (1, 0)
    q = model.reduce_configuration(qt)
    q[3:7] = np.array([0.1, 0.05, 0.0, 1.0]) / np.linalg.norm([0.1, 0.05, 0.0, 1.0])
    q[7:9] = 0.4, 0.3  # the wrist, the left finger (the others follow)
    points = [contact_point(model, link) for link in tree.link_names]
    return model, lifted(model, q, points, 0.05), points


def mimic_limits_hold(model, traj, tol=1e-12):
    """The largest excess of the tree's joints (the mimic joints included) over their limits."""
    li, lf = limit_arrays(model.tree)
    q = np.array([model.expand(x) for x in traj.q])[:, li[:, 0]]
    return max((lf[:, 0] - q).max(), (q - lf[:, 1]).max()) <= tol


@pytest.mark.parametrize("with_hold", [False, True])
def test_the_gripper_lands_compiled_as_the_python_step(gripper, with_hold, monkeypatch):
    """0.5 s: it falls, lands on its fingers' and jaws' points, the limp fingers fold onto their
    limits (the mimic joints' narrowing their mimicked ones': the tree's limit rows through K);
    every step compiled, the Python step's trajectory, the limits held, the energy balance."""
    model, q0, points = gripper
    hold = db.posture_hold(model, q0) if with_hold else None
    args = (model, q0, np.zeros(model.nv), 0.5, 1e-3, Ground(mu=0.7), points)
    reference = simulate_contact(*args, hold=hold, compiled=False)
    taken = counted(monkeypatch)
    traj = simulate_contact(*args, hold=hold)
    assert taken == [] and traj.status == "completed"
    same_runs(traj, reference)
    assert traj.q.shape == (501, model.nq) and traj.v.shape == (501, model.nv)
    assert mimic_limits_hold(model, traj)
    assert traj.impact_work[-1] < -0.5  # it landed
    if not with_hold:
        assert traj.limit_work[-1] > 0.1  # the limits stopped the folding fingers
    assert np.abs(traj.energy_drift(relative=True)).max() < 1e-2


def test_without_the_mimic_rows_the_run_leaves_the_python_step(gripper, monkeypatch):
    """The K rows dropped from the constraint layer (zero rows: nothing eliminated, the state
    still put back onto the relations): the dynamics are the tree's, not the mimic model's, and
    the trajectory leaves the Python step's at once."""
    model, q0, points = gripper
    args = (model, q0, np.zeros(model.nv), 0.3, 1e-3, Ground(mu=0.7), points)
    reference = simulate_contact(*args, compiled=False)
    init = sc._Stepper.__init__

    def without_rows(self, *a, **k):
        init(self, *a, **k)
        imap, fmap, K = self.mimic_rows
        self.mimic_rows = (imap, fmap, np.zeros_like(K))

    monkeypatch.setattr(sc._Stepper, "__init__", without_rows)
    traj = simulate_contact(*args)
    with pytest.raises(AssertionError):
        same_runs(traj, reference)
    assert np.abs(traj.v - reference.v).max() > 1e-3 * np.abs(reference.v).max()


@pytest.fixture(scope="module")
def panda():
    """panda with its second finger mimicking the first, a contact sphere on each finger tip and
    one on the hand, a table 1 cm under their lowest point, the fingers opening at 0.5 m/s."""
    model = db.load_robot("panda", mimic=True)
    points = [
        contact_point(model, "panda_leftfinger", (0.0, 0.0, 0.045), radius=0.01),
        contact_point(model, "panda_rightfinger", (0.0, 0.0, 0.045), radius=0.01),
        contact_point(model, "panda_link7", (0.0, 0.0, 0.1), radius=0.05),
    ]
    q0 = np.array(model.reference_configurations["default"], dtype=float)
    q0[7] = 0.035
    v0 = np.zeros(model.nv)
    v0[7] = 0.5
    table = Ground(height=lowest_point(model, q0, points) - 0.01, mu=0.8, name="table")
    return model, points, q0, v0, table


def test_panda_falls_onto_a_table_compiled_as_the_python_step(panda, monkeypatch):
    """0.3 s: the arm falls (limp, its URDF dampers implicit) onto the table, its fingers open
    onto their limit 0.04 (the mimic finger's limit through K), its elbow onto its own; every
    step compiled, the Python step's trajectory, the limits held."""
    model, points, q0, v0, table = panda
    reference = simulate_contact(model, q0, v0, 0.3, 1e-3, table, points, compiled=False)
    taken = counted(monkeypatch)
    traj = simulate_contact(model, q0, v0, 0.3, 1e-3, table, points)
    assert taken == [] and traj.status == "completed"
    same_runs(traj, reference)
    assert mimic_limits_hold(model, traj)
    assert traj.q[:, 7].max() == pytest.approx(0.04, abs=1e-9) and traj.limit_work[-1] > 0.1  # the limits stop them
    assert np.nansum(traj.contact_force[-2][..., 2]) > 1.0  # the hand rests on the table
    assert np.abs(traj.energy_drift(relative=True)).max() < 1e-2


def test_a_mimic_run_refuses_what_does_not_fit_and_computes_nothing(gripper):
    """contact_steps with a MimicModel: maps or rows K that do not fit the tree, a tree-sized state
    or saves, no loops: (k0, -2), the state untouched; the same
    arguments fitting take the steps."""
    model, q0, points = gripper
    run, drive, _ = refusal_setup(model, q0, points)
    cs, nvt = run.cs, model.tree.nv
    imap, fmap, K = run.mimic_rows
    loops = run.loops()
    before = run.q.copy()

    def steps(mimic, state=None, loop_args=loops, saves=None):
        state = state or (run.q, run.v, run.previous, run.work_done, run.lam)
        return cc.contact_steps(
            model.tree._kt,
            cs.work,
            drive,
            cs.packed,
            cs.buffers,
            run.solver,
            state,
            saves or run.saves,
            1,
            0,
            10,
            loop_args,
            mimic,
        )

    assert steps((imap, fmap, K[:-1])) == (0, -2)
    assert steps((imap, fmap, np.zeros((K.shape[0], nvt - 1)))) == (0, -2)
    assert steps((imap, fmap, np.where(K == 1.0, np.nan, K))) == (0, -2)
    assert steps((imap[:-1], fmap, K)) == (0, -2)
    bad = imap.copy()
    bad[4] = model.tree.nq  # a kept coordinate past the tree's
    assert steps((bad, fmap, K)) == (0, -2)
    tree_state = (model.expand(run.q), run.v, run.previous, run.work_done, run.lam)
    assert steps((imap, fmap, K), state=tree_state) == (0, -2)
    assert steps((imap, fmap, K), loop_args=None) == (0, -2)
    with pytest.raises(TypeError):
        steps((imap.astype(float), fmap, K))
    np.testing.assert_array_equal(run.q, before)
    assert steps((imap, fmap, K)) == (10, cc.DONE)
    assert not np.array_equal(run.q, before)
    assert run.saves[1].shape[1] == model.nq and np.array_equal(run.saves[1][10], run.q)


@pytest.fixture(scope="module")
def fivebar():
    """The geared five-bar (mimic cranks and fingers, the tip a loop closure) over a ground under
    its fingers, as tests/simulation/test_contact_constraints.py drops it."""
    model = db.generators.geared_fivebar()
    q0 = db.loops.project_configuration(model, db.generators.GEARED_FIVEBAR_Q)
    points = [contact_point(model, f, radius=0.02) for f in ("finger_left_link", "finger_right_link")]
    return model, q0, points, Ground(height=0.2, mu=0.6)


#: the five-bar's steps up to its first at-rest contact problem (step 206: statically
#: indeterminate, six impulses against two motions; where PGS stalls the Python layer's
#: all-sticking answer is taken): the fall (0-201) and the impact on both fingers (202-205)
FIVEBAR_STEPS = 206


def test_the_fivebar_at_rest_has_the_python_steps_motion_and_generalized_force(fivebar):
    """After the impact the fingers' impulses are not unique (any split with the same generalized
    force holds the five-bar): the compiled run and the Python step may pick different ones
    (measured: 0.2148 / 0.2144 N against 0.2130 / 0.2130 N on the fingers), but not a different
    motion or a different generalized force: the whole 1.5 s run, the states to 1e-9 of their
    scale, the generalized contact force on the constrained motions to 1e-8 of gravity's, the loop
    closed and the jaw symmetric."""
    model, q0, points, ground = fivebar
    args = (model, q0, np.zeros(model.nv), 1.5, 1e-3, ground, points)
    compiled, reference = simulate_contact(*args), simulate_contact(*args, compiled=False)
    assert compiled.status == reference.status == "completed"
    for field in ("q", "v"):
        x, y = getattr(compiled, field), getattr(reference, field)
        assert np.abs(x - y).max() <= 1e-9 * max(np.abs(y).max(), 1.0), field
    assert max(np.abs(db.loops.loop_residual(model, q)).max() for q in compiled.q) <= sc.LOOP_TOL
    assert np.abs(compiled.q[:, 2]).max() < 1e-12 and np.abs(compiled.v[-1]).max() < 1e-9
    q = compiled.q[-2]
    near = [contact_point(model, f, radius=0.02, margin=1e-3) for f in ("finger_left_link", "finger_right_link")]
    c = contact_rows(model, q, near, ground)
    B = ground.frame()
    N = null_space(mimic_loops.loop_jacobian(model, q))  # the constrained motions: crank and jaw
    g = np.abs(N.T @ db.gravity_torques(model, q)).max()

    def generalized(traj):
        f = traj.contact_force[-2]
        return N.T @ sum(c.J[3 * i : 3 * i + 3].T @ (B.T @ f[i]) for i in range(2))

    assert np.all(compiled.contact_force[-2][:, 2] > 0.1)  # both fingers carry it
    np.testing.assert_allclose(generalized(compiled), generalized(reference), rtol=0, atol=1e-8 * g)


def test_the_fivebar_falls_and_lands_compiled_as_the_python_step(fivebar, monkeypatch):
    """Its loop closed after each step as the Python step closes it (Newton on the dependent
    coordinates, then v = E v_i; core/contact_mimic.pxi close_mimic_loops): every step compiled,
    the Python step's trajectory to 1e-10 of each field's scale, the loop closed to LOOP_TOL, the
    jaw's mirror symmetry kept (the two fingers' forces equal)."""
    model, q0, points, ground = fivebar
    args = (model, q0, np.zeros(model.nv), FIVEBAR_STEPS * 1e-3, 1e-3, ground, points)
    reference = simulate_contact(*args, compiled=False)
    taken = counted(monkeypatch)
    traj = simulate_contact(*args)
    assert taken == [] and traj.status == "completed"
    for field in FIELDS:  # same_runs's, on the 4 steps of the impact's centres of pressure
        x, y = getattr(traj, field), getattr(reference, field)
        scale = max(float(np.abs(y).max(initial=0.0)), 1e-3)
        assert np.abs(x - y).max(initial=0.0) <= 1e-10 * scale, (field, np.abs(x - y).max(), scale)
    np.testing.assert_array_equal(np.isnan(traj.contact_point), np.isnan(reference.contact_point))
    assert np.nanmax(np.abs(traj.contact_point - reference.contact_point)) <= 1e-10
    assert max(np.abs(db.loops.loop_residual(model, q)).max() for q in traj.q) <= sc.LOOP_TOL
    f = traj.contact_force
    assert np.abs(f[-2]).max() > 1.0  # both fingers on the ground
    assert np.abs(f[:, 0] - f[:, 1]).max() <= 1e-9 * np.abs(f).max()
    assert np.abs(traj.q[:, 2]).max() < 1e-15 and np.abs(traj.v[:, 2]).max() < 1e-11  # the jaw


def test_the_fivebar_closed_in_the_kinetic_energy_metric_is_another_run(fivebar, monkeypatch):
    """The comparison above tells the two closings apart (so it can fail): the Python step with
    its loop closed as the loop models close theirs (mimic_loops.kinetic_projection: Gauss-Newton
    and the velocity projection in the kinetic-energy metric, the rows [K; C]) comes out of the
    impact another way (0.02 rad/s after it, not 0.5) and leaves the compiled run's."""
    model, q0, points, ground = fivebar
    args = (model, q0, np.zeros(model.nv), FIVEBAR_STEPS * 1e-3, 1e-3, ground, points)
    compiled = simulate_contact(*args)

    def kinetic(model, q, v):
        qn, vn, _, _ = mimic_loops.kinetic_projection(model, q, v, tol=sc.LOOP_TOL)
        q[:] = qn
        return vn

    monkeypatch.setattr(sc, "project_configuration", lambda model, q, tol: q)
    monkeypatch.setattr(sc, "project_velocity", kinetic)
    other = simulate_contact(*args, compiled=False)
    with pytest.raises(AssertionError):
        same_runs(compiled, other)
    assert np.abs(compiled.v - other.v).max() > 1e-2 * np.abs(compiled.v).max()
