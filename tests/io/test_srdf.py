"""Named configurations from SRDF files (``io/srdf.py``), against Pinocchio's reader."""

from __future__ import annotations

import example_robot_data as erd
import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


def _pinocchios(model, path) -> dict:
    pm = db.to_pinocchio(model)
    pin.loadReferenceConfigurations(pm, str(path), False)
    return {e.key(): np.array(e.data()) for e in pm.referenceConfigurations}


@pytest.mark.parametrize("robot", ["talos", "solo12", "panda", "icub"])
def test_example_robot_data_states_are_the_loaders(robot):
    """``load_robot`` adds an example-robot-data robot's SRDF group states as its Pinocchio
    loader does (``example_robot_data.load(name)``), exactly; ``to_pinocchio`` and
    ``from_pinocchio`` carry them both ways."""
    theirs = {e.key(): np.array(e.data()) for e in erd.load(robot).model.referenceConfigurations}
    model = db.load_robot(robot)
    assert theirs and sorted(model.reference_configurations) == sorted(theirs)
    back = db.from_pinocchio(db.to_pinocchio(model))
    for key, q in theirs.items():
        np.testing.assert_array_equal(model.reference_configurations[key], q)
        np.testing.assert_array_equal(back.reference_configurations[key], q)


def test_every_joint_type_as_pinocchio_reads_it(tmp_path):
    """A random tree of every joint type (a continuous joint takes one angle, or its cosine and
    sine when its axis is not x, y or z), a joint the model lacks (skipped), a state given twice
    (the first kept), states on top of the model's own: the numbers of
    ``pin.loadReferenceConfigurations``."""
    model = random_model(11, 10, floating_base=True, branching=0.5)
    continuous = np.flatnonzero(model.joint_type == db.JointType.CONTINUOUS)
    axes = model.joint_axis.copy()
    axes[continuous[0]] = (0.0, 0.0, 1.0)  # one on an axis (one angle), the others off (cos, sin)
    model = model.replace(joint_axis=axes, reference_configurations={"mine": db.random_configuration(model, 1)})
    aligned = [("Unaligned" not in j.shortname()) for j in db.to_pinocchio(model).joints[1:]]
    rng = np.random.default_rng(2)
    states = []
    for name in ("a", "b", "a"):
        joints = []
        for k in rng.permutation(model.n_links)[:8]:
            jt = db.JointType(model.joint_type[k])
            n = 1 if jt == db.JointType.CONTINUOUS and aligned[k] else int(model.nq_joint[k])
            values = " ".join(f"{x:.17g}" for x in rng.uniform(-1, 1, n))
            joints.append(f'<joint name="{model.joint_names[k]}" value="{values}"/>')
        joints.append('<joint name="no_such_joint" value="1 2 3"/>')
        states.append(f'<group_state name="{name}" group="all">{"".join(joints)}</group_state>')
    path = tmp_path / "robot.srdf"
    path.write_text(f'<robot name="r"><group name="all"/>{"".join(states)}</robot>')
    ours = db.srdf_reference_configurations(model, path)
    theirs = _pinocchios(model, path)
    assert sorted(ours) == sorted(theirs) == ["a", "b", "mine"]
    types = {db.JointType(t) for t in model.joint_type}
    assert db.JointType.FREEFLYER in types and db.JointType.PLANAR in types
    assert len(continuous) >= 2 and aligned[continuous[0]] and not aligned[continuous[1]]
    for key in theirs:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=0, atol=1e-15)


@pytest.mark.parametrize(
    "text,match",
    [
        (
            '<joint name="panda_joint1" value="1 2"/>',
            "group state 'bad': joint 'panda_joint1' takes 1 number, got '1 2'",
        ),
        ('<joint name="panda_joint1" value="up"/>', "joint 'panda_joint1' takes 1 number, got 'up'"),
        ('<joint name="panda_joint1" value="nan"/>', "joint 'panda_joint1' takes 1 number"),
    ],
)
def test_a_wrong_value_names_the_state_and_the_joint(tmp_path, text, match):
    """Where Pinocchio prints "Could not read joint config" and keeps the neutral value, the
    state and the joint are named in an error."""
    path = tmp_path / "bad.srdf"
    path.write_text(f'<robot name="r"><group_state name="bad" group="all">{text}</group_state></robot>')
    with pytest.raises(db.InputError, match=match):
        db.srdf_reference_configurations(db.load_robot("panda"), path)


def test_a_missing_or_broken_file_is_named(tmp_path):
    model = db.load_robot("panda")
    with pytest.raises(db.InputTypeError, match="the SRDF file must be a path, got int"):
        db.srdf_reference_configurations(model, 42)
    with pytest.raises(db.InputTypeError, match="takes a Model"):
        db.srdf_reference_configurations(db.load_robot("gripper", mimic=True), tmp_path / "x.srdf")
    with pytest.raises(db.InputError, match="no such SRDF file"):
        db.srdf_reference_configurations(model, tmp_path / "missing.srdf")
    broken = tmp_path / "broken.srdf"
    broken.write_text('<robot name="r"><group_state')
    with pytest.raises(db.InputError, match="SRDF file .*broken.srdf: unclosed token"):
        db.srdf_reference_configurations(model, broken)
    fixed = db.load_robot("talos", floating_base=False)  # the state's root_joint: skipped
    assert fixed.reference_configurations["half_sitting"].shape == (fixed.nq,)
