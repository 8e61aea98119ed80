"""The batches' forward and inverse dynamics in the lanes (core/lanes.pxi): LANES states at a time, equal to
the one-state kernel to rounding on every model it takes, the one-state kernel's statuses for
every group it hands back (an invalid input, a singular articulated inertia, a non-finite
result), and results that do not depend on how a batch is cut into chunks or threads."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.core import tree as compiled
from denoc_bridge.multibody import data as data_module
from denoc_bridge.multibody.data import max_threads
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import random_model
from tests.conftest import load_robot_quietly

NO_FEXT = np.zeros((0, 0, 6))
LANES = compiled.BATCH_LANES
ONE_DOF = [JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC]


def states(model, B, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    return Q, rng.standard_normal((B, model.nv)), 3.0 * rng.standard_normal((B, model.nv))


def chunk(model, Q, V, X, lanes=True, bounds=None, inverse=False):
    """dynamics_chunk over the whole batch, in the chunks between ``bounds``."""
    B = len(Q)
    out, status = np.full((B, model.nv), -7.0), np.full(B, 99, dtype=np.int64)
    bounds = bounds or [0, B]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        assert compiled.dynamics_chunk(model._kt, Q, V, X, NO_FEXT, out, status, inverse, start, stop, lanes) == 0
    return out, status


def one_dof_trees():
    """Random trees of one-DOF joints (random axes and placements, one to three roots, massless
    links), half of them on a free-flyer root."""
    return [
        random_model(
            seed=s,
            n_links=9,
            branching=0.5,
            n_roots=1 + s % 3,
            joint_types=ONE_DOF,
            floating_base=bool(s % 2),
            massless=0.3 if s % 4 == 0 else 0.0,
        )
        for s in range(8)
    ]


@pytest.mark.parametrize("name", ["panda", "solo12", "talos", "ur5", "anymal"])
def test_robots_run_in_the_lanes(name):
    assert compiled.batch_lanes(load_robot_quietly(name)._kt)


def test_other_joints_run_one_state_at_a_time():
    spherical = random_model(seed=1, n_links=5, joint_types=[JointType.REVOLUTE, JointType.SPHERICAL])
    assert JointType.SPHERICAL in set(spherical.joint_type)
    assert not compiled.batch_lanes(spherical._kt)
    assert all(compiled.batch_lanes(m._kt) for m in one_dof_trees())
    with pytest.raises(TypeError, match="kt"):
        compiled.batch_lanes(np.zeros((3, 5)))


@pytest.mark.parametrize("inverse", [False, True], ids=["forward", "inverse"])
@pytest.mark.parametrize("case", ["panda", "solo12", "talos", *(f"tree{s}" for s in range(8))])
def test_the_lanes_equal_the_one_state_kernel(case, inverse):
    """Three full groups and a remainder: every state to 1e-12 of the result's scale, the robots
    also against pin.aba / pin.rnea; the remainder is the one-state kernel's bit for bit."""
    model = one_dof_trees()[int(case[4:])] if case.startswith("tree") else load_robot_quietly(case)
    B = 3 * LANES + 5
    Q, V, X = states(model, B, seed=3)
    lanes, status = chunk(model, Q, V, X, inverse=inverse)
    one, status_one = chunk(model, Q, V, X, lanes=False, inverse=inverse)
    assert np.all(status == 0) and np.all(status_one == 0)
    scale = np.abs(one).max()
    assert np.abs(lanes - one).max() <= 1e-12 * scale
    assert np.array_equal(lanes[3 * LANES :], one[3 * LANES :])
    if not case.startswith("tree"):
        pm = db.to_pinocchio(model)
        pd = pm.createData()
        ref = np.array([(pin.rnea if inverse else pin.aba)(pm, pd, Q[b], V[b], X[b]) for b in range(B)])
        assert np.abs(lanes - ref).max() <= 1e-12 * scale


@pytest.mark.parametrize("inverse", [False, True], ids=["forward", "inverse"])
def test_the_lanes_are_another_computation(inverse):
    """Not vacuous: the lanes differ from the one-state kernel by rounding only, but they differ
    (the same code run twice would pass the test above trivially)."""
    model = load_robot_quietly("talos")
    Q, V, X = states(model, 4 * LANES, seed=8)
    lanes, _ = chunk(model, Q, V, X, inverse=inverse)
    one, _ = chunk(model, Q, V, X, lanes=False, inverse=inverse)
    assert not np.array_equal(lanes, one)


def test_chunks_and_threads_do_not_change_the_results():
    """Groups start at multiples of LANES: chunks cut there give the one chunk's numbers, and so
    does the public batch on one or several threads."""
    model = load_robot_quietly("solo12")
    B = 5 * LANES + 3
    Q, V, X = states(model, B, seed=5)
    whole, _ = chunk(model, Q, V, X)
    cut, _ = chunk(model, Q, V, X, bounds=[0, 2 * LANES, 3 * LANES, B])
    assert np.array_equal(whole, cut)
    odd, _ = chunk(model, Q, V, X, bounds=[0, 7, 2 * LANES + 1, B])  # groups broken: one state at a time
    assert np.abs(odd - whole).max() <= 1e-12 * np.abs(whole).max()
    try:
        db.set_num_threads(1)
        one = db.forward_dynamics(model, Q, V, X)
        db.set_num_threads(max_threads())
        assert np.array_equal(db.forward_dynamics(model, Q, V, X), one)
    finally:
        data_module._threads.n = None  # this thread's default again (the environment's, or the CPUs)
    assert np.array_equal(one, whole)


@pytest.mark.parametrize("inverse", [False, True], ids=["forward", "inverse"])
def test_groups_with_bad_inputs_get_the_one_state_statuses(inverse):
    """A non-finite v, a zero quaternion and a velocity whose squares overflow, each in its own
    group: each state gets the one-state kernel's status, and their group mates
    their results."""
    model = load_robot_quietly("solo12")
    B = 4 * LANES
    Q, V, X = states(model, B, seed=6)
    V[3, 7] = np.nan
    Q[LANES + 2, 3:7] = 0.0
    V[2 * LANES + 5, 8] = 1e200
    lanes, status = chunk(model, Q, V, X, inverse=inverse)
    one, status_one = chunk(model, Q, V, X, lanes=False, inverse=inverse)
    assert status[3] == -1 and status[LANES + 2] == -1 and status[2 * LANES + 5] == -3
    assert np.array_equal(status, status_one)
    good = status == 0
    assert good.sum() == B - 3
    assert np.abs(lanes[good] - one[good]).max() <= 1e-12 * np.abs(one[good]).max()
    assert np.array_equal(lanes[: 3 * LANES][good[: 3 * LANES]], one[: 3 * LANES][good[: 3 * LANES]])


def planar_point_mass():
    """Two joints about z, a massless first link, a point mass 0.5 m out on the second: the
    first joint's articulated inertia is m l1^2 sin^2 q2, singular with the arm straight."""
    xml = """<robot name="r"><link name="w"/><link name="upper"/>
      <link name="fore"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
        <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="shoulder" type="continuous"><parent link="w"/><child link="upper"/><axis xyz="0 0 1"/></joint>
      <joint name="elbow" type="revolute"><parent link="upper"/><child link="fore"/><axis xyz="0 0 1"/>
        <origin xyz="0.4 0 0"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
    </robot>"""
    return db.load_urdf(xml)


def test_a_singular_state_in_a_group_is_named_by_the_one_state_test():
    model = planar_point_mass()
    assert compiled.batch_lanes(model._kt)
    B = 2 * LANES
    Q, V, X = states(model, B, seed=2)
    Q[LANES + 4, model.idx_q[1]] = 1e-9  # the arm straight to 1e-9: a pivot of 1.6e-19, far below
    # the one-state test's bound but positive, so that lanes without their own test would go on
    lanes, status = chunk(model, Q, V, X)
    one, status_one = chunk(model, Q, V, X, lanes=False)
    assert status[LANES + 4] == 1 and np.array_equal(status, status_one)
    good = status == 0
    assert np.abs(lanes[good] - one[good]).max() <= 1e-12 * np.abs(one[good]).max()
    with pytest.raises(db.SingularInertiaError, match=rf"state {LANES + 4} of the batch: .*'shoulder'"):
        db.forward_dynamics(model, Q, V, X)
