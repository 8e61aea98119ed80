"""load_mjcf: MuJoCo's compiled model as a denoc_bridge Model, checked against MuJoCo itself."""

from __future__ import annotations

import glob
import os
import sys
import warnings

import gymnasium
import mujoco
import numpy as np
import pinocchio as pin
import pytest

import denoc_bridge as db
from denoc_bridge.errors import ModelError, PhysicsWarning
from denoc_bridge.io import mujoco_layout as mjl
from denoc_bridge.io.mjcf import from_mujoco, loads_mjcf
from denoc_bridge.validation import compare_with_mujoco
from tests.io.mjcf_samples import FREE, JOINTS, random_poses

GYM_ASSETS = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets")
GYM_MODELS = sorted(glob.glob(os.path.join(GYM_ASSETS, "*.xml")))


def _load(xml: str) -> tuple[db.Model, mujoco.MjModel]:
    return loads_mjcf(xml), mujoco.MjModel.from_xml_string(xml)


def test_gymnasium_ships_models() -> None:
    assert len(GYM_MODELS) >= 10, GYM_MODELS


@pytest.mark.parametrize("path", GYM_MODELS, ids=os.path.basename)
def test_gymnasium_models_agree_with_mujoco(path: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)  # tendons, fluid forces: named, not modelled
        model = db.load_mjcf(path)
    report = compare_with_mujoco(model, samples=3, tol=1e-8)
    assert report.passed, report.table()
    assert report.engine == "MuJoCo" and {c.quantity for c in report.checks} == {
        "mass_matrix",
        "bias_forces",
        "forward_dynamics",
    }


@pytest.mark.parametrize("xml", [JOINTS, FREE], ids=["joints", "free"])
def test_hand_written_models_agree_with_mujoco(xml: str) -> None:
    model, m = _load(xml)
    report = compare_with_mujoco(model, m, samples=4, seed=3, tol=1e-10)
    assert report.passed, report.table()
    assert max(c.max_error for c in report.checks) < 1e-12


def test_a_planted_bug_is_seen() -> None:
    """Armature dropped: compare_with_mujoco reports the mismatch (the check can fail)."""
    model, m = _load(JOINTS)
    broken = model.replace(armature=np.zeros(model.nv))
    report = compare_with_mujoco(broken, m)
    assert not report.passed
    assert {c.quantity for c in report.checks if not c.passed} >= {"mass_matrix", "forward_dynamics"}
    assert "MISMATCH" in report.table()


@pytest.mark.parametrize("xml", [JOINTS, FREE], ids=["joints", "free"])
def test_link_and_site_frames_follow_mujoco_kinematics(xml: str) -> None:
    model, m = _load(xml)
    frames = {f.name: f for f in model.frames}
    for d, R, p in random_poses(model, m, seed=1):
        for b in range(1, m.nbody):
            f = frames[m.body(b).name]
            Rb, pb = R[f.link] @ f.rotation, R[f.link] @ f.translation + p[f.link]
            np.testing.assert_allclose(Rb, d.xmat[b].reshape(3, 3), atol=1e-13)
            np.testing.assert_allclose(pb, d.xpos[b], atol=1e-13)
        for s in range(m.nsite):
            f = frames[m.site(s).name]
            np.testing.assert_allclose(R[f.link] @ f.translation + p[f.link], d.site_xpos[s], atol=1e-13)


def test_parameters_are_mujoco_s() -> None:
    model, m = _load(JOINTS)
    assert model.joint_names == ("hinge1", "slide1", "ball1", "mx", "my", "mz")
    # one link per joint; the body with three joints ends in the link named after it
    assert model.link_names == ("base", "slider", "ball_body", "multi:mx", "multi:my", "multi")
    assert model.mass[3] == model.mass[4] == 0.0  # the massless links between the joints
    # the jointless body 'welded' is lumped into 'slider'
    assert model.mass[1] == pytest.approx(m.body_mass[2] + m.body_mass[3])
    np.testing.assert_array_equal(model.armature, m.dof_armature)
    np.testing.assert_array_equal(model.damping, m.dof_damping)
    np.testing.assert_array_equal(model.friction, m.dof_frictionloss)
    np.testing.assert_array_equal(model.gravity, [0.3, -0.2, -9.7])
    assert (model.lower_limit[0], model.upper_limit[0]) == (-1.0, 2.0)
    assert np.isinf(model.lower_limit[1]) and np.isinf(model.upper_limit[1])
    np.testing.assert_array_equal(model.stiffness[:5], [2.0, 5.0, 1.5, 1.5, 1.5])
    np.testing.assert_allclose(model.rest_configuration[:2], [0.7, 0.1])
    assert not model.floating_base and model.warnings == ()


#: JOINTS with gravity, springs and dampers switched off by MuJoCo's <flag> (dm_control's finger, fish)
DISABLED = JOINTS.replace(
    '<option gravity="0.3 -0.2 -9.7"/>',
    '<option gravity="0.3 -0.2 -9.7"><flag gravity="disable" spring="disable" damper="disable"/></option>',
)


def test_disabled_gravity_springs_and_dampers_are_mujoco_s() -> None:
    assert DISABLED != JOINTS
    model, m = _load(DISABLED)
    assert not model.gravity.any() and not model.stiffness.any() and not model.damping.any()
    report = compare_with_mujoco(model, m, samples=3, seed=4, tol=1e-10)
    assert report.passed, report.table()
    with_gravity = model.replace(gravity=[0.3, -0.2, -9.7])
    assert not compare_with_mujoco(with_gravity, m, samples=2).passed  # the check sees gravity


@pytest.mark.parametrize("xml", [JOINTS, FREE, DISABLED], ids=["joints", "free", "disabled"])
def test_springs_and_dampers_are_mujoco_s(xml: str) -> None:
    """-stiffness * difference(rest, q) is MuJoCo's qfrc_spring; -damping * v its qfrc_damper."""
    model, m = _load(xml)
    d = mujoco.MjData(m)
    rng = np.random.default_rng(2)
    for _ in range(3):
        q = db.random_configuration(model, rng)
        v = rng.standard_normal(model.nv)
        d.qpos[:] = mjl.q_to_mujoco_qpos(model, q)
        d.qvel[:] = mjl.v_to_mujoco_qvel(model, q, v)
        mujoco.mj_forward(m, d)
        spring = -model.stiffness * db.difference(model, model.rest_configuration, q)
        np.testing.assert_allclose(mjl.tau_to_mujoco_force(model, q, spring), d.qfrc_spring, atol=1e-12)
        damper = -model.damping * v
        np.testing.assert_allclose(mjl.tau_to_mujoco_force(model, q, damper), d.qfrc_damper, atol=1e-12)


def test_free_base() -> None:
    model, m = _load(FREE)
    assert model.floating_base and model.joint_type[0] == db.JointType.FREEFLYER
    assert model.link_names == ("torso", "arm:shoulder_x", "arm", "hand")
    # MuJoCo's qpos0 (the body's pose) is our configuration of the same pose
    q0 = mjl.mujoco_qpos_to_q(model, m.qpos0)
    R, p = db.forward_kinematics(model, q0)
    np.testing.assert_allclose(p[0], [0.3, -0.1, 1.2], atol=1e-15)


def test_load_robot_and_load_mjcf_read_files(tmp_path) -> None:
    f = tmp_path / "robot.xml"
    f.write_text(FREE)
    a, b = db.load_robot(f), db.load_mjcf(f)
    assert a.name == b.name == "free" and a.source == str(f)
    np.testing.assert_array_equal(a.inertia, b.inertia)
    with pytest.raises(db.InputError, match="floating_base"):
        db.load_robot(f, floating_base=True)
    with pytest.raises(db.RobotNotFoundError, match="no such MJCF file"):
        db.load_mjcf(tmp_path / "missing.xml")
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><body><joint type='hinge'/></body></worldbody></mujoco>")
    with pytest.raises(ModelError, match="MuJoCo cannot compile"):
        db.load_mjcf(bad)


def test_missing_mujoco_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "mujoco", None)
    with pytest.raises(ModelError, match=r"denoc-bridge\[mujoco\]"):
        loads_mjcf(FREE)


def test_unmodelled_features_are_named() -> None:
    xml = """<mujoco><option viscosity="0.1"/><worldbody>
      <body name="a"><joint name="b1" type="ball" range="0 30" limited="true"/><geom size=".1"/>
        <body name="c" gravcomp="1" pos="0 0 -0.3"><joint name="h" type="hinge"/><geom size=".1"/></body></body>
      </worldbody><tendon><fixed name="t"><joint joint="h" coef="1"/></fixed></tendon></mujoco>"""
    with pytest.warns(PhysicsWarning, match="joint 'b1'"):
        model = loads_mjcf(xml)
    text = "\n".join(model.warnings)
    for word in ("joint 'b1'", "tendons are not modelled: 't'", "body 'c': gravity compensation", "fluid forces"):
        assert word in text


@pytest.mark.parametrize(
    ("attributes", "match"),
    [("stiffness='1 2'", "joint 's': a nonlinear spring"), ("damping='1 2'", "joint 's': a nonlinear damper")],
)
def test_nonlinear_springs_and_dampers_are_refused_by_name(attributes: str, match: str) -> None:
    xml = f"<mujoco><worldbody><body><joint name='s' {attributes}/><geom size='.1'/></body></worldbody></mujoco>"
    with pytest.raises(ModelError, match=match):
        loads_mjcf(xml)


def test_from_mujoco_refuses_other_objects() -> None:
    with pytest.raises(ModelError, match="mujoco.MjModel"):
        from_mujoco("robot.xml")


def test_the_file_pose_and_keyframes_are_reference_configurations(tmp_path) -> None:
    """``reference_configurations``: ``"qpos0"``, the pose the file gives (a free body where the
    file puts it, a hinge at its ``ref``), and each ``<key>`` by its name (an unnamed one:
    ``key<i>``), all in the model's q: MuJoCo's qpos0 and key_qpos once converted back."""
    path = tmp_path / "scene.xml"
    path.write_text(
        "<mujoco><compiler angle='radian'/><worldbody>"
        "<body name='arm' pos='0 0 1'><joint name='hinge' axis='0 1 0' ref='0.3'/>"
        "<geom type='capsule' fromto='0 0 0 0.5 0 0' size='0.05'/></body>"
        "<body name='ball' pos='1 2 3' quat='0 1 0 0'><freejoint name='ball_root'/><geom size='0.1'/></body>"
        "</worldbody><keyframe><key name='home' qpos='0.5 1 0 2 0 0 0.6 0.8'/>"
        "<key qpos='-0.5 0 0 1 1 0 0 0'/></keyframe></mujoco>"
    )
    model = db.load_mjcf(path)
    refs = model.reference_configurations
    assert list(refs) == ["qpos0", "home", "key1"]
    np.testing.assert_allclose(refs["qpos0"], [0.3, 1, 2, 3, 1, 0, 0, 0], atol=1e-15)
    np.testing.assert_allclose(refs["home"], [0.5, 1, 0, 2, 0, 0.6, 0.8, 0], atol=1e-15)
    m = mujoco.MjModel.from_xml_path(str(path))
    np.testing.assert_allclose(mjl.q_to_mujoco_qpos(model, refs["qpos0"]), m.qpos0, atol=1e-15)
    for k, key in enumerate(("home", "key1")):
        np.testing.assert_allclose(mjl.q_to_mujoco_qpos(model, refs[key]), m.key_qpos[k], atol=1e-15)
    with pytest.raises(TypeError):
        refs["home"] = refs["qpos0"]  # type: ignore[index]
    with pytest.raises(ValueError):
        refs["home"][0] = 1.0
    assert dict(db.load_robot("chain:3").reference_configurations) == {}


def test_reference_configurations_as_pinocchios_mjcf_parser_reads_them(tmp_path) -> None:
    """A file Pinocchio's MJCF parser reads: its ``referenceConfigurations`` ("qpos0" and the
    keys, the hinge's ``ref`` in degrees) equal ours, through ``from_pinocchio`` too."""
    path = tmp_path / "arm.xml"
    path.write_text(
        "<mujoco><worldbody><body name='a' pos='0 0 1'><joint name='h' axis='0 1 0' ref='30'/>"
        "<geom type='capsule' fromto='0 0 0 0 0 -0.5' size='0.05'/>"
        "<body name='b' pos='0 0 -0.5'><joint name='s' type='slide' axis='1 0 0'/><geom size='0.1'/></body>"
        "</body></worldbody><keyframe><key name='home' qpos='0.5 0.1'/><key name='crouch' qpos='-0.5 0.2'/>"
        "</keyframe></mujoco>"
    )
    pm = pin.buildModelFromMJCF(str(path))
    theirs = {e.key(): np.array(e.data()) for e in pm.referenceConfigurations}
    for model in (db.load_mjcf(path), db.from_pinocchio(pm)):
        assert sorted(model.reference_configurations) == sorted(theirs) == ["crouch", "home", "qpos0"]
        for key, q in theirs.items():
            np.testing.assert_allclose(model.reference_configurations[key], q, atol=1e-15)
    np.testing.assert_allclose(theirs["qpos0"], [np.pi / 6, 0.0], atol=1e-15)


def test_a_file_without_a_model_name_is_named_after_the_file(tmp_path) -> None:
    """MuJoCo calls a model without ``<mujoco model=...>`` "MuJoCo Model": ours takes the
    file's name instead (the string's: "mjcf"), and a given name stays."""
    xml = "<mujoco><worldbody><body><joint/><geom size='0.1'/></body></worldbody></mujoco>"
    path = tmp_path / "arm.xml"
    path.write_text(xml)
    assert mujoco.MjModel.from_xml_path(str(path)).names[:12] == b"MuJoCo Model"
    assert db.load_mjcf(path).name == "arm" and loads_mjcf(xml).name == "mjcf"
    assert loads_mjcf(xml.replace("<mujoco>", "<mujoco model='named'>")).name == "named"
