"""Bad input at the API: a clear exception naming the argument, entry and joint."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


@pytest.fixture(scope="module")
def model():
    return random_model(
        5, 6, floating_base=True, joint_types=(db.JointType.CONTINUOUS, db.JointType.SPHERICAL, db.JointType.REVOLUTE)
    )


def _ok(model):
    return db.neutral_configuration(model), np.zeros(model.nv), np.zeros(model.nv)


@pytest.mark.parametrize("func", ["inverse_dynamics", "forward_dynamics"])
def test_wrong_shapes_name_the_argument(model, func):
    q, v, a = _ok(model)
    f = getattr(db, func)
    third = "a" if func == "inverse_dynamics" else "tau"
    with pytest.raises(db.InputError, match=rf"q must have shape \({model.nq},\).*got shape \(3,\)"):
        f(model, q[:3], v, a)
    with pytest.raises(db.InputError, match=rf"v must have shape \({model.nv},\)"):
        f(model, q, np.zeros(model.nv + 1), a)
    with pytest.raises(db.InputError, match=rf"{third} must have shape"):
        f(model, q, v, a.reshape(1, -1))


def test_wrong_types_are_type_errors(model):
    q, v, a = _ok(model)
    with pytest.raises(db.InputTypeError, match="q is None"):
        db.inverse_dynamics(model, None, v, a)
    with pytest.raises(TypeError, match="v must hold real numbers, got dtype <U"):
        db.inverse_dynamics(model, q, ["x"] * model.nv, a)
    with pytest.raises(db.InputTypeError, match="complex"):
        db.mass_matrix(model, q.astype(complex))
    assert db.inverse_dynamics(model, q, np.zeros(model.nv, dtype=int), a).dtype == np.float64


def test_non_finite_entries_name_the_joint(model):
    q, v, a = _ok(model)
    k = model.n_links - 1
    i = model.idx_v[k]
    v_bad = v.copy()
    v_bad[i] = np.nan
    with pytest.raises(db.InputError, match=rf"v\[{i}\] = nan is not finite \(joint '{model.joint_names[k]}'"):
        db.forward_dynamics(model, q, v_bad, a)
    q_bad = q.copy()
    q_bad[0] = np.inf
    with pytest.raises(db.InputError, match=r"q\[0\] = inf is not finite \(joint 'joint0' \(freeflyer\)\)"):
        db.mass_matrix(model, q_bad)


def test_quaternions_and_circle_pairs_are_normalised_and_zero_is_refused(model):
    q, v, a = _ok(model)
    scaled = q.copy()
    scaled[3:7] *= 3.0  # free-flyer quaternion of norm 3
    assert np.array_equal(db.inverse_dynamics(model, scaled, v, a), db.inverse_dynamics(model, q, v, a))
    zero = q.copy()
    zero[3:7] = 0.0
    with pytest.raises(db.InputError, match=r"q\[3:7\] is a quaternion of zero norm for joint 'joint0'"):
        db.inverse_dynamics(model, zero, v, a)
    k = next(k for k in range(model.n_links) if model.joint_type[k] == db.JointType.CONTINUOUS)
    i = model.idx_q[k]
    zero = q.copy()
    zero[i : i + 2] = 0.0
    with pytest.raises(db.InputError, match=rf"\(cos, sin\) pair of zero norm for joint '{model.joint_names[k]}'"):
        db.mass_matrix(model, zero)


def test_external_wrenches_by_array_or_name(model):
    q, v, a = _ok(model)
    w = np.zeros((model.n_links, 6))
    w[2] = [1, 2, 3, 0.1, 0.2, 0.3]
    by_link = {model.link_names[2]: w[2]}
    by_joint = {model.joint_names[2]: w[2]}
    tau = db.inverse_dynamics(model, q, v, a, w)
    assert np.array_equal(tau, db.inverse_dynamics(model, q, v, a, by_link))
    assert np.array_equal(tau, db.inverse_dynamics(model, q, v, a, by_joint))
    with pytest.raises(db.InputError, match="f_ext names 'nope'"):
        db.inverse_dynamics(model, q, v, a, {"nope": w[0]})
    both = {model.link_names[2]: w[2], model.joint_names[2]: 2 * w[2]}  # one body named twice: they add
    np.testing.assert_allclose(
        db.inverse_dynamics(model, q, v, a, both), db.inverse_dynamics(model, q, v, a, 3 * w), rtol=1e-13, atol=1e-13
    )
    with pytest.raises(db.InputError, match=rf"f_ext must have shape \({model.n_links}, 6\)"):
        db.inverse_dynamics(model, q, v, a, w[:-1])
    w[1, 4] = np.nan
    with pytest.raises(db.InputError, match=rf"f_ext\[1, 4\] = nan is not finite \(link '{model.link_names[1]}'\)"):
        db.forward_dynamics(model, q, v, a, w)


def test_wrenches_on_frames_of_merged_links_match_pinocchio():
    """A wrench named by a frame (a link merged by a fixed joint, e.g. panda_hand, or the fixed
    joint) is given in that frame and moved to the link it rides on: as Pinocchio's fext of the
    parent joint, ``frame placement . act(force)``."""
    import pinocchio as pin

    from denoc_bridge.io.robots import resolve_robot

    path = resolve_robot("panda").path
    model, pm = db.load_urdf(path), pin.buildModelFromUrdf(path)
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q, v, a = db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    checked = 0
    for name in ("panda_hand", "panda_hand_joint", "panda_link8", "panda_leftfinger"):
        w = rng.standard_normal(6)
        fid = pm.getFrameId(name)
        frame = pm.frames[fid]
        forces = [pin.Force.Zero() for _ in range(pm.njoints)]
        forces[frame.parentJoint] = frame.placement.act(pin.Force(w[:3], w[3:]))
        ref = pin.rnea(pm, pd, q, v, a, forces)
        got = db.inverse_dynamics(model, q, v, a, {name: w})
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=name)
        checked += name not in model.link_names
    assert checked == 3  # hand, its joint, link8: merged frames
    with pytest.raises(db.InputError, match="f_ext names 'panda_link0', a frame fixed to the base"):
        db.inverse_dynamics(model, q, v, a, {"panda_link0": w})
    with pytest.raises(
        db.NameLookupError, match="neither a link, a joint nor a frame of 'panda'; did you mean panda_hand"
    ):
        db.inverse_dynamics(model, q, v, a, {"panda_hnad": w})
    with pytest.raises(KeyError, match="did you mean panda_hand"):  # a NameLookupError is a KeyError too
        db.forward_dynamics(model, q, v, a, {"hand": w})


def test_singular_articulated_inertia_names_the_joint():
    xml = """<robot name="r"><link name="w"/>
      <link name="arm"><inertial><mass value="1"/><origin xyz="0.5 0 0"/>
        <inertia ixx="0.01" iyy="0.1" izz="0.1" ixy="0" ixz="0" iyz="0"/></inertial></link>
      <link name="sensor"/>
      <joint name="shoulder" type="continuous"><parent link="w"/><child link="arm"/><axis xyz="0 0 1"/></joint>
      <joint name="spin" type="continuous"><parent link="arm"/><child link="sensor"/><axis xyz="1 0 0"/></joint>
    </robot>"""
    model = db.load_urdf(xml)
    q, v, a = _ok(model)
    db.inverse_dynamics(model, q, v, a)  # defined: a massless link needs no torque
    db.mass_matrix(model, q)
    for call in (
        lambda: db.forward_dynamics(model, q, v, a),
        lambda: db.inverse_mass_matrix(model, q),
        lambda: db.udut(model, q),
    ):
        with pytest.raises(db.SingularInertiaError, match="joint 'spin' \\(continuous\\) is singular") as info:
            call()
        assert info.value.joint == "spin" and info.value.link == "sensor"
        assert isinstance(info.value, np.linalg.LinAlgError)


def test_data_of_another_model_is_refused(model):
    other = random_model(1, 3)
    q, v, a = _ok(model)
    with pytest.raises(db.InputError, match="data was created for a model with 3 links"):
        db.inverse_dynamics(model, q, v, a, data=db.Data(other))
    data = db.Data(model)
    assert np.array_equal(db.inverse_dynamics(model, q, v, a, data=data), db.inverse_dynamics(model, q, v, a))


def test_udut_level_is_checked(model):
    with pytest.raises(db.InputError, match="level must be 'module' or 'link'"):
        db.udut(model, db.neutral_configuration(model), level="joint")


def test_empty_model_works():
    model = db.load_urdf('<robot name="r"><link name="only"/></robot>')
    assert (model.nq, model.nv, model.n_modules) == (0, 0, 0)
    empty = np.zeros(0)
    assert db.inverse_dynamics(model, empty, empty, empty).shape == (0,)
    assert db.forward_dynamics(model, empty, empty, empty).shape == (0,)
    assert db.mass_matrix(model, empty).shape == (0, 0)
    assert db.inverse_mass_matrix(model, empty).shape == (0, 0)
