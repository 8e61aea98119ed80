"""The compiled contact run on models with loop closures and joint couplings
(core/contact_loops.pxi): dm_control's quadruped.xml (28 DOF, four couplings of three joints)
dropped onto the ground with the command line's contact candidates, and the four-bar of 004
falling onto a ground under its coupler, against the Python step (``compiled=False``) field by
field, with the posture hold and without it (the joint limits' rows then stop the folding legs);
the loops closed after every step; the energy balance; the lengths and options that do not fit
refused as a status, nothing computed."""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.constraints.contact import lifted
from denoc_bridge.constraints.loop_kinematics import loop_jacobian
from denoc_bridge.core import contact as cc
from denoc_bridge.errors import PhysicsWarning
from denoc_bridge.io import generators
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.simulation import contact as sc
from denoc_bridge.simulation.contact import LOOP_TOL, simulate_contact
from tests.core.test_contact_entries import refusal_setup

FIELDS = ("t", "q", "v", "a", "tau", "contact_force", "contact_work", "impact_work", "limit_work")


def same_runs(a, b, rtol=1e-10):
    """Two trajectories equal to round-off, field by field (relative to each field's scale); the
    centres of pressure where both runs' pair pushes more than round-off (an indeterminate split
    of the load, the four-bar's coupler on its two ends, leaves one end 1e-13 of the force in one
    run and none in the other)."""
    assert (a.status, a.n_steps, a.message) == (b.status, b.n_steps, b.message)
    for field in FIELDS:
        x, y = getattr(a, field), getattr(b, field)
        if y is None:
            assert x is None, field
            continue
        assert x.shape == y.shape, field
        scale = max(float(np.abs(y).max(initial=0.0)), 1e-3)  # a field that stays ~0 (no work)
        assert np.abs(x - y).max(initial=0.0) <= rtol * scale, (field, np.abs(x - y).max(), scale)
    push = np.minimum(np.abs(a.contact_force[..., 2]), np.abs(b.contact_force[..., 2]))
    pushing = push > 1e-9 * np.abs(b.contact_force).max()
    assert pushing.sum() > 10
    np.testing.assert_allclose(a.contact_point[pushing], b.contact_point[pushing], rtol=0, atol=1e-10)


def counted(monkeypatch):
    """The steps the Python step takes from here on (their indices)."""
    taken: list[int] = []
    python_step = sc._Stepper.python_step

    def step(self, k, tk, stalled=False):
        taken.append(k)
        return python_step(self, k, tk, stalled)

    monkeypatch.setattr(sc._Stepper, "python_step", step)
    return taken


@pytest.fixture(scope="module")
def quadruped():
    """dm_control's quadruped as ``denoc-bridge simulate`` runs it (the default candidates, the
    file's pose projected onto the couplings, the posture hold), dropped from 2 cm instead of
    0.3 m so that it lands early."""
    spec = importlib.util.find_spec("dm_control")
    assert spec is not None and spec.submodule_search_locations, "dm_control (a test dependency) is not installed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)  # tendons: named, not modelled
        model = db.load_mjcf(os.path.join(spec.submodule_search_locations[0], "suite/quadruped.xml"))
    points = list(collision_points(model)[0])
    q_hold = loops.project_configuration(model, model.reference_configurations["qpos0"])
    q0 = lifted(model, q_hold, points, 0.02)
    return model, points, q0, db.posture_hold(model, q_hold)


def test_the_quadruped_lands_compiled_as_the_python_step(quadruped, monkeypatch):
    """0.3 s: falls, lands on its feet and stands on the ground with its four couplings; every
    step compiled (none handed to Python), the same trajectory as the Python step's, the
    couplings held to LOOP_TOL."""
    model, points, q0, hold = quadruped
    reference = simulate_contact(
        model, q0, np.zeros(model.nv), 0.3, 1e-3, Ground(mu=0.8), points, hold=hold, compiled=False
    )
    taken = counted(monkeypatch)
    traj = simulate_contact(model, q0, np.zeros(model.nv), 0.3, 1e-3, Ground(mu=0.8), points, hold=hold)
    assert taken == []
    assert traj.status == "completed"
    same_runs(traj, reference)
    assert np.abs([loops.loop_residual(model, x) for x in traj.q]).max() <= LOOP_TOL
    assert np.abs([loop_jacobian(model, q) @ v for q, v in zip(traj.q, traj.v)]).max() < 1e-12
    assert np.nansum(traj.contact_force[-2][:, 2]) > 0.5 * model.total_mass * 9.81  # it stands on the ground
    assert np.diff(traj.impact_work).min() < -1e-3  # it landed


def test_the_limp_quadruped_folds_onto_its_joint_limits_compiled_as_the_python_step(quadruped, monkeypatch):
    """Without the hold it folds up on landing: the joint limits' rows beside the contacts and the
    couplings' rows, every step compiled and the Python step's; the limits hold (to 1e-12) and
    take work, the couplings hold, the energy balance closes to 2e-3 of its scale."""
    model, points, q0, _ = quadruped
    reference = simulate_contact(model, q0, np.zeros(model.nv), 0.6, 1e-3, Ground(mu=0.8), points, compiled=False)
    taken = counted(monkeypatch)
    traj = simulate_contact(model, q0, np.zeros(model.nv), 0.6, 1e-3, Ground(mu=0.8), points)
    assert taken == []
    same_runs(traj, reference)
    li, lf = limit_arrays(model)
    q = traj.q[:, li[:, 0]]
    assert max((lf[:, 0] - q).max(), (q - lf[:, 1]).max()) < 1e-12
    assert traj.limit_work[-1] > 1.0  # the limits stopped it
    assert np.abs([loops.loop_residual(model, x) for x in traj.q]).max() <= LOOP_TOL
    assert np.abs(traj.energy_drift(relative=True)).max() < 2e-3


def test_the_fourbar_falls_onto_its_coupler_compiled_as_the_python_step(monkeypatch):
    """A loop closure (a revolute cut joint: 5 rows, 2 independent) on the ground: the compiled
    run takes the Python step's steps, the loop stays closed (its drift per step projected
    away), the energy balance closes (the impacts' work added up) as in
    tests/simulation/test_contact_constraints.py, and it comes to rest where the geometry says."""
    model = generators.fourbar()
    points = [contact_point(model, "body3"), contact_point(model, "body4")]
    q0 = np.array([0.0, 0.3, -0.3, 0.3])
    ground = Ground(height=1.0, mu=0.5, name="floor")
    reference = simulate_contact(model, q0, np.zeros(4), 1.5, 1e-3, ground, points, compiled=False)
    taken = counted(monkeypatch)
    traj = simulate_contact(model, q0, np.zeros(4), 1.5, 1e-3, ground, points)
    # compiled but for the position corrections whose PGS stalls (the coupler's two ends: the
    # same rows in the constrained system, their gaps apart by round-off), handed to Python's
    # fallbacks as the tree run hands them
    assert len(taken) <= 5, taken
    same_runs(traj, reference)
    assert max(np.abs(loops.loop_residual(model, q)).max() for q in traj.q) <= 1e-12
    np.testing.assert_allclose(traj.q[-1, 1:], [np.pi / 3, -np.pi / 3, np.pi / 3], atol=1e-9)
    assert np.diff(traj.contact_work).max() <= 1e-12 and traj.impact_work[-1] < -1.0
    assert np.abs(traj.energy_drift(relative=True)).max() < 2e-3


def test_a_loop_run_refuses_what_does_not_fit_and_computes_nothing(quadruped):
    """contact_steps with loops: a scratch of the wrong length, a cut joint's row out of order,
    the options out of range: (k0, -2), the state untouched; the same arguments fitting take the
    steps."""
    model, points, q0, hold = quadruped
    run, drive, state = refusal_setup(model, q0, points)
    cs = run.cs
    pi, pf, sb, rtol, tol, max_iter = run.loops()
    before = run.q.copy()

    def steps(loop_args):
        return cc.contact_steps(
            run.model._kt, cs.work, drive, cs.packed, cs.buffers, run.solver, state, run.saves, 1, 0, 10, loop_args
        )

    assert steps((pi, pf, np.zeros(sb.size - 1), rtol, tol, max_iter)) == (0, -2)
    shuffled = pi.copy()
    shuffled[1 + model.n_links, 3] = 1  # the first coupling's row not at 0
    assert steps((shuffled, pf, sb, rtol, tol, max_iter)) == (0, -2)
    assert steps((pi, pf, sb, 1.0, tol, max_iter)) == (0, -2)
    assert steps((pi, pf, sb, rtol, np.nan, max_iter)) == (0, -2)
    assert steps((pi, pf, sb, rtol, tol, -1)) == (0, -2)
    with pytest.raises(TypeError):
        steps((pi.astype(float), pf, sb, rtol, tol, max_iter))
    np.testing.assert_array_equal(run.q, before)
    assert steps((pi, pf, sb, rtol, tol, max_iter)) == (10, cc.DONE)
    assert not np.array_equal(run.q, before)
