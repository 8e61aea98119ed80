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
from denoc_bridge.spatial import pin_to_internal
from denoc_bridge.testing import random_model
from tests.conftest import load_robot_quietly, mixed_tree

NO_FEXT = np.zeros((0, 0, 6))
LANES = compiled.BATCH_LANES
ONE_DOF = [JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC]


def states(model, B, seed):
    rng = np.random.default_rng(seed)
    Q = np.array([db.random_configuration(model, rng) for _ in range(B)])
    return Q, rng.standard_normal((B, model.nv)), 3.0 * rng.standard_normal((B, model.nv))


def chunk(model, Q, V, X, lanes=True, bounds=None, inverse=False, fext=NO_FEXT):
    """dynamics_chunk over the whole batch, in the chunks between ``bounds`` (``fext``: the
    kernels' order, (B, n_links, 6))."""
    B = len(Q)
    out, status = np.full((B, model.nv), -7.0), np.full(B, 99, dtype=np.int64)
    bounds = bounds or [0, B]
    for start, stop in zip(bounds[:-1], bounds[1:]):
        assert compiled.dynamics_chunk(model._kt, Q, V, X, fext, out, status, inverse, start, stop, lanes) == 0
    return out, status


def one_dof_trees():
    """Random trees of one-DOF joints (random axes and placements, one to three roots, massless
    links, armatures), half of them on a free-flyer root."""
    trees = [mixed_tree(s, joint_types=ONE_DOF) for s in range(8)]
    rng = np.random.default_rng(12)
    return [m.replace(armature=rng.uniform(0.0, 0.05, m.nv)) if s % 3 else m for s, m in enumerate(trees)]


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


def link_and_joint(name, parent, kind, xyz, axis="0 0 1"):
    """URDF of a link of 1 kg and its joint to ``parent``."""
    limit = '<limit lower="-3" upper="3" effort="1" velocity="1"/>' if kind in ("revolute", "prismatic") else ""
    return f"""<link name="{name}"><inertial><mass value="1"/><origin xyz="0.1 0.02 0.1"/>
      <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <joint name="j_{name}" type="{kind}"><parent link="{parent}"/><child link="{name}"/>
      <axis xyz="{axis}"/><origin xyz="{xyz}"/>{limit}</joint>"""


def test_free_flyers_at_several_roots():
    """Free-flyers at roots other than link 0: an arm and two floating bodies with a joint each."""
    parts = [
        link_and_joint("a", "world", "revolute", "0 0 0.1"),
        link_and_joint("b", "world", "floating", "1 0 0"),
        link_and_joint("b1", "b", "revolute", "0.1 0 0", "1 0 0"),
        link_and_joint("c", "world", "floating", "0 1 0"),
        link_and_joint("c1", "c", "prismatic", "0 0.1 0", "0 1 0"),
    ]
    model = db.load_urdf('<robot name="r"><link name="world"/>' + "".join(parts) + "</robot>")
    assert list(model.joint_type) == [
        JointType.REVOLUTE,
        JointType.FREEFLYER,
        JointType.REVOLUTE,
        JointType.FREEFLYER,
        JointType.PRISMATIC,
    ]
    assert compiled.batch_lanes(model._kt)
    model = model.replace(armature=np.linspace(0.0, 0.1, model.nv))
    Q, V, X = states(model, 2 * LANES, seed=4)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    for inverse, ref in ((False, pin.aba), (True, pin.rnea)):
        lanes, status = chunk(model, Q, V, X, inverse=inverse)
        want = np.array([ref(pm, pd, Q[b], V[b], X[b]) for b in range(2 * LANES)])
        assert np.all(status == 0) and np.abs(lanes - want).max() <= 1e-12 * np.abs(want).max()


def test_configurations_past_the_polynomial_cos_sin():
    """A group with an angle beyond 1e5 rad takes the C library's cos and sin (the one-state
    kernel then too for that state, its polynomial for the others)."""
    model = load_robot_quietly("panda")
    Q, V, X = states(model, 2 * LANES, seed=9)
    Q[3, 2] = 3e5
    Q[LANES + 1, 4] = -1e300
    for inverse in (False, True):
        lanes, status = chunk(model, Q, V, X, inverse=inverse)
        one, _ = chunk(model, Q, V, X, lanes=False, inverse=inverse)
        assert np.all(status == 0) and np.abs(lanes - one).max() <= 1e-12 * np.abs(one).max()


def test_axes_off_a_coordinate_axis_by_a_little_are_general():
    """An axis (0, 1e-8, 1) is not z (a unit axis to rounding, as loaded): the one-state kernel took
    it as z (an error of about 1e-8 of the accelerations, where the lanes were right); both now
    equal Pinocchio to rounding."""
    joints = "".join(
        f"""<joint name="j{k}" type="revolute"><parent link="l{k}"/><child link="l{k + 1}"/>
          <axis xyz="{axis}"/><origin xyz="0 0.1 0.2"/><limit lower="-3" upper="3" effort="1" velocity="1"/></joint>
          <link name="l{k + 1}"><inertial><mass value="1"/><origin xyz="0.1 0.02 0.1"/>
          <inertia ixx="0.01" iyy="0.02" izz="0.03" ixy="0" ixz="0" iyz="0"/></inertial></link>"""
        for k, axis in enumerate(["0 1e-8 1", "1e-8 0 1", "0 0 1", "1 0 1e-8", "0 1 0"])
    )
    model = db.load_urdf(f'<robot name="r"><link name="l0"/>{joints}</robot>')
    B = LANES + 2
    Q, V, X = states(model, B, seed=10)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    for inverse, ref in ((False, pin.aba), (True, pin.rnea)):
        single = np.array(
            [(db.inverse_dynamics if inverse else db.forward_dynamics)(model, Q[b], V[b], X[b]) for b in range(B)]
        )
        want = np.array([ref(pm, pd, Q[b], V[b], X[b]) for b in range(B)])
        lanes, _ = chunk(model, Q, V, X, inverse=inverse)
        scale = np.abs(want).max()
        assert np.abs(single - want).max() <= 1e-13 * scale
        assert np.abs(lanes - want).max() <= 1e-13 * scale


@pytest.mark.parametrize("inverse", [False, True], ids=["forward", "inverse"])
@pytest.mark.parametrize("name", ["panda", "solo12"])
def test_external_wrenches_in_the_lanes(name, inverse):
    """A batch with f_ext runs in the lanes too: equal to the one-state kernel to rounding, the
    public batch to its single calls (whose wrenches Pinocchio's checks cover elsewhere), and a
    non-finite wrench in a group is that state's -1."""
    model = load_robot_quietly(name)
    B = 3 * LANES + 3
    Q, V, X = states(model, B, seed=13)
    F = np.random.default_rng(13).standard_normal((B, model.n_links, 6))  # Pinocchio's [force; moment]
    internal = np.ascontiguousarray(pin_to_internal(F))
    lanes, status = chunk(model, Q, V, X, inverse=inverse, fext=internal)
    one, _ = chunk(model, Q, V, X, lanes=False, inverse=inverse, fext=internal)
    assert np.all(status == 0) and not np.array_equal(lanes, one)
    assert np.abs(lanes - one).max() <= 1e-12 * np.abs(one).max()
    fn = db.inverse_dynamics if inverse else db.forward_dynamics
    single = np.array([fn(model, Q[b], V[b], X[b], F[b]) for b in range(B)])
    assert np.abs(fn(model, Q, V, X, F) - single).max() <= 1e-12 * np.abs(single).max()
    internal[LANES + 3, 1, 4] = np.nan
    _, status = chunk(model, Q, V, X, inverse=inverse, fext=internal)
    assert status[LANES + 3] == -1 and np.count_nonzero(status) == 1
