"""The boundary of the compiled contact module (core/contact.pyx): every array is checked before
compiled code indexes it (a TypeError naming a wrong type, dtype or layout; status -2, nothing
computed, for a length or an index that does not fit; -1 for a state that is not a
configuration), and the entries compute what their readable definitions say."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.constraints.contact import ContactSet
from denoc_bridge.core import contact as cc
from denoc_bridge.multibody.contact import Ground, contact_point
from denoc_bridge.simulation import contact as sc


@pytest.fixture(scope="module")
def solo():
    model = db.load_robot("solo12")
    feet = [contact_point(model, f, margin=10.0) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    cs = ContactSet(model, feet, [Ground(height=-1.0, name="floor"), Ground(height=-2.0, name="deep")])
    return model, cs, db.random_configuration(model, 3)


def rows(cs):
    return tuple(np.zeros_like(a) for a in cs.buffers)


def test_rows_and_delassus_are_their_definitions(solo):
    """The rows (every foot on both grounds: 8 contacts) against the point velocities of the
    links' twists, G against J M^-1 J^T with Pinocchio's M (crba)."""
    model, cs, q = solo
    buf = rows(cs)
    m = cc.contact_rows_state(cs.kt0, cs.work, q, cs.packed, buf)
    assert m == 8
    J, Y = buf[0][:24], buf[1]
    v = np.random.default_rng(1).normal(size=model.nv)
    R, p = db.forward_kinematics(model, q)
    twists = db.link_velocities(model, q, v)
    for i in range(m):
        c, g = cs.points[buf[4][i, 0]], cs.grounds[buf[4][i, 1]]
        s = R[c.link].T @ (buf[3][i] - p[c.link])
        vel = R[c.link] @ (twists[c.link, :3] + np.cross(twists[c.link, 3:], s))
        np.testing.assert_allclose(J[3 * i : 3 * i + 3] @ v, g.frame().T @ vel, atol=1e-12)
    G = np.empty((24, 24))
    assert cc.delassus_state(cs.kt0, cs.work, q, J, 24, Y, G) == 0
    M = db.mass_matrix(model, q)
    dense = J @ np.linalg.solve(M, J.T)
    assert np.abs(G - dense).max() <= 1e-12 * np.abs(dense).max()
    np.testing.assert_array_equal(G, G.T)


def test_wrong_types_are_named(solo):
    model, cs, q = solo
    with pytest.raises(TypeError, match="q"):
        cc.contact_rows_state(cs.kt0, cs.work, q.astype(np.float32), cs.packed, rows(cs))
    J, Y, dist, pos, pair = rows(cs)
    with pytest.raises(TypeError, match="pair"):
        cc.contact_rows_state(cs.kt0, cs.work, q, cs.packed, (J, Y, dist, pos, pair.astype(np.int32)))
    read_only = J.copy()
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="J"):
        cc.contact_rows_state(cs.kt0, cs.work, q, cs.packed, (read_only, Y, dist, pos, pair))
    with pytest.raises(TypeError, match="lam"):
        cc.pgs_state(np.eye(3), np.zeros(3), np.ones(1), 1, [0.0, 0.0, 0.0], np.zeros(3), 1e-12, 10)


def test_lengths_and_indices_that_do_not_fit_are_refused(solo):
    model, cs, q = solo
    J, Y, dist, pos, pair = rows(cs)
    assert cc.contact_rows_state(cs.kt0, cs.work, q[:-1], cs.packed, rows(cs)) == -2
    assert cc.contact_rows_state(cs.kt0, cs.work, q, cs.packed, (J[:, 1:].copy(), Y, dist, pos, pair)) == -2
    assert cc.contact_rows_state(cs.kt0, cs.work, q, cs.packed, (J, Y, dist[:-1], pos, pair)) == -2
    cl = cs.cl.copy()
    cl[1] = model.n_links  # a link the model does not have
    packed = (cl, *cs.packed[1:])
    assert cc.contact_rows_state(cs.kt0, cs.work, q, packed, rows(cs)) == -2
    packed = (*cs.packed[:4], cs.lb[:-1], *cs.packed[5:])
    assert cc.contact_rows_state(cs.kt0, cs.work, q, packed, rows(cs)) == -2
    assert cc.contact_rows_state(cs.kt0, cs.work[:-1], q, cs.packed, rows(cs)) == -2
    G = np.empty((6, 6))
    assert cc.delassus_state(cs.kt0, cs.work, q, J, 7, Y, G) == -2  # r rows into a 6 x 6 G
    assert cc.delassus_state(cs.kt0, cs.work, q, J, J.shape[0] + 3, Y, np.empty((27, 27))) == -2
    assert cc.pgs_state(np.eye(6), np.zeros(6), np.ones(1), 1, np.zeros(3), np.zeros(3), 1e-12, 10) == (-2, 0.0)


def test_a_state_that_is_not_a_configuration_is_refused(solo):
    model, cs, q = solo
    for bad in (np.nan, np.inf):
        x = q.copy()
        x[5] = bad
        assert cc.contact_rows_state(cs.kt0, cs.work, x, cs.packed, rows(cs)) == -1
    x = q.copy()
    x[3:7] = 0.0  # the base's quaternion
    assert cc.contact_rows_state(cs.kt0, cs.work, x, cs.packed, rows(cs)) == -1
    J = np.zeros((3, model.nv))
    assert cc.delassus_state(cs.kt0, cs.work, x, J, 3, np.zeros((3, model.nv)), np.empty((3, 3))) == -1


def refusal_setup(model, q, points):
    """The contact run of ``model`` at q (at rest) on a ground with ``points``, PGS capped at 100
    sweeps, and the drive (no torque, the tree's springs, dampers and rates) and state tuples
    ``contact_steps`` takes: (run, drive, state), for the tests of what it refuses."""
    run = sc._Stepper(model, q.copy(), np.zeros(model.nv), 1e-3, [Ground()], points, None, 11, 1)
    run.solver = (1e-3, sc.TOL, 100, sc.SLOP, run.group_of_pair)
    damping, stiffness, q_rest, kp, q_ref = run.drive
    spring_rate, hold_rate = run.rates
    drive = (np.zeros(run.cs.tree.nv), damping, stiffness, spring_rate, q_rest, kp, q_ref, hold_rate, False, False)
    state = (run.q, run.v, run.previous, run.work_done, run.lam)
    return run, drive, state


def test_a_run_refuses_what_does_not_fit_and_computes_nothing(solo):
    """contact_steps: saves too short for the steps asked, a group index out of range, a
    non-positive dt, a velocity that is not finite: (k0, status), the state untouched."""
    model, _, q = solo
    feet = [contact_point(model, f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")]
    run, drive, state = refusal_setup(model, q, feet)
    cs = run.cs
    before = run.q.copy()

    def steps(drive=drive, solver=run.solver, state=state, k1=10):
        return cc.contact_steps(
            run.model._kt, cs.work, drive, cs.packed, cs.buffers, solver, state, run.saves, 1, 0, k1
        )

    assert steps(k1=11) == (0, -2)  # 11 steps save 12 states into 11 rows
    bad_groups = run.group_of_pair.copy()
    bad_groups[0] = 4
    assert steps(solver=(*run.solver[:4], bad_groups)) == (0, -2)
    assert steps(solver=(0.0, *run.solver[1:])) == (0, -2)
    assert steps(drive=(np.zeros(model.nv + 1), *drive[1:])) == (0, -2)
    v = run.v.copy()
    v[0] = np.nan
    assert steps(state=(run.q, v, *state[2:])) == (0, -1)
    np.testing.assert_array_equal(run.q, before)
    assert steps() == (10, cc.DONE)  # the same arguments, fitting: the steps are taken
    assert not np.array_equal(run.q, before)
