"""from_pinocchio / to_pinocchio."""

from __future__ import annotations

import os
import warnings

import gymnasium
import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, erd_robot_dir

import denoc_bridge as db
from denoc_bridge.testing import random_model
from denoc_bridge.validation import compare_with_pinocchio


def test_round_trip_keeps_every_field():
    model = random_model(17, 10, floating_base=True, branching=0.5)
    back = db.from_pinocchio(db.to_pinocchio(model))
    for name in ("parent", "joint_type", "idx_q", "idx_v", "nq_joint", "nv_joint"):
        assert np.array_equal(getattr(back, name), getattr(model, name)), name
    for name in ("joint_axis", "joint_rotation", "joint_translation", "mass", "com", "inertia", "gravity"):
        assert np.abs(getattr(back, name) - getattr(model, name)).max() <= 1e-14, name
    assert back.joint_names == model.joint_names and back.link_names == model.link_names
    assert back.floating_base


def test_from_pinocchio_equals_load_urdf(panda):
    pm = pin.buildModelFromUrdf(os.path.join(erd_robot_dir(), "panda_description/urdf/panda.urdf"))
    model = db.from_pinocchio(pm)
    assert model.link_names == panda.link_names and model.base_name == "panda_link0"
    assert [(m.index, m.parent, tuple(m.links)) for m in model.modules] == [
        (m.index, m.parent, tuple(m.links)) for m in panda.modules
    ]
    q = db.random_configuration(model, 0)
    assert_close("GIM", db.mass_matrix(model, q), db.mass_matrix(panda, q))


def test_every_supported_pinocchio_joint_converts():
    joints = [
        pin.JointModelRX(),
        pin.JointModelPY(),
        pin.JointModelRUBZ(),
        pin.JointModelSpherical(),
        pin.JointModelTranslation(),
        pin.JointModelPlanar(),
        pin.JointModelUniversal(np.array([1.0, 0, 0]), np.array([0, 0, 1.0])),
        pin.JointModelRevoluteUnaligned(np.array([0.6, 0.8, 0])),
        pin.JointModelPrismaticUnaligned(np.array([0, 0.6, 0.8])),
    ]
    pm = pin.Model()
    parent = 0
    rng = np.random.default_rng(0)
    for i, jm in enumerate(joints):
        parent = pm.addJoint(parent, jm, pin.SE3.Random(), f"j{i}")
        pm.appendBodyToJoint(parent, pin.Inertia.Random(), pin.SE3.Identity())
    with pytest.warns(db.PhysicsWarning, match="triangle inequality"):  # pin.Inertia.Random() is not physical
        model = db.from_pinocchio(pm)
    pd = pm.createData()
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    v, a = rng.standard_normal(pm.nv), rng.standard_normal(pm.nv)
    assert_close("rnea", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close("aba", db.forward_dynamics(model, q, v, a), pin.aba(pm, pd, q, v, a))


def test_unsupported_joint_is_named():
    pm = pin.Model()
    pm.addJoint(0, pin.JointModelSphericalZYX(), pin.SE3.Identity(), "wrist")
    with pytest.raises(db.ModelError, match="joint 'wrist' is a JointModelSphericalZYX"):
        db.from_pinocchio(pm)


def test_continuous_joint_about_an_unaligned_axis_survives_to_pinocchio():
    model = random_model(3, 4, joint_types=(db.JointType.CONTINUOUS,))
    assert any(np.count_nonzero(a) > 1 for a in model.joint_axis)
    pm = db.to_pinocchio(model)
    q, v = db.random_configuration(model, 1), np.ones(model.nv)
    assert_close("rnea", db.inverse_dynamics(model, q, v, v), pin.rnea(pm, pm.createData(), q, v, v))


@pytest.mark.parametrize("name", ["hopper", "walker2d", "humanoid", "half_cheetah"])
def test_composite_joints_of_pinocchio_s_mjcf_parser_agree_with_pinocchio(name):
    path = os.path.join(os.path.dirname(gymnasium.__file__), "envs", "mujoco", "assets", f"{name}.xml")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pm = pin.buildModelFromMJCF(path)
    assert any(j.shortname() == "JointModelComposite" for j in pm.joints)
    model = db.from_pinocchio(pm)
    assert model.nq == pm.nq and model.n_links > pm.njoints - 1
    dyn = ("inverse_dynamics", "mass_matrix", "forward_dynamics", "inverse_mass_matrix")
    report = compare_with_pinocchio(model, pm, samples=3, quantities=dyn)
    assert report.passed, report.table()
    # frames follow the composite's last part: Pinocchio's frame placements
    pd = pm.createData()
    q = db.random_configuration(model, 0)
    pin.framesForwardKinematics(pm, pd, q)
    R, p = db.forward_kinematics(model, q)
    for f, pf in zip(model.frames, pd.oMf):
        Rf = np.eye(3) if f.link < 0 else R[f.link]
        pl = np.zeros(3) if f.link < 0 else p[f.link]
        np.testing.assert_allclose(Rf @ f.rotation, pf.rotation, atol=1e-12)
        np.testing.assert_allclose(Rf @ f.translation + pl, pf.translation, atol=1e-12)
