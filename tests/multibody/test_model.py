"""Model construction and validation."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.testing import random_model


def fields(model, **changes):
    f = dict(
        name=model.name,
        link_names=model.link_names,
        joint_names=model.joint_names,
        parent=model.parent,
        joint_type=model.joint_type,
        joint_axis=model.joint_axis,
        joint_axis2=model.joint_axis2,
        joint_rotation=model.joint_rotation,
        joint_translation=model.joint_translation,
        mass=model.mass,
        com=model.com,
        inertia=model.inertia,
    )
    f.update(changes)
    return f


@pytest.fixture(scope="module")
def chain():
    return random_model(0, 4, branching=0.0, joint_types=(db.JointType.REVOLUTE,))


def test_arrays_are_read_only_and_layout_is_cumulative():
    model = random_model(2, 7, floating_base=True)
    with pytest.raises(ValueError):
        model.mass[0] = 1.0
    with pytest.raises(ValueError):
        model.parent[0] = 3
    assert np.array_equal(model.idx_q, np.concatenate([[0], np.cumsum(model.nq_joint)[:-1]]))
    assert np.array_equal(model.idx_v, np.concatenate([[0], np.cumsum(model.nv_joint)[:-1]]))
    assert model.nq == model.nq_joint.sum() and model.nv == model.nv_joint.sum()
    assert "nq=" in repr(model) and "free-flyer base" in repr(model)


def test_attributes_cannot_be_reassigned(chain):
    """The kernels pack the model once: a reassigned mass or armature would silently not count
    (found by a review: forward_dynamics kept the old masses), so only metadata and gravity
    (which repacks) may be set."""
    model = db.Model(**fields(chain))
    q = db.random_configuration(model, 0)
    a = db.forward_dynamics(model, q, np.ones(model.nv), np.ones(model.nv))
    for name, value, advice in (
        ("mass", 2 * model.mass, r"model.replace\(mass=...\)"),
        ("armature", model.armature + 1.0, r"model.replace\(armature=...\)"),
        ("loops", (), r"model.add_loop_closure"),
        ("nv", 2, r"it follows from the constructor's arguments"),
    ):
        with pytest.raises(db.ModelError, match=rf"Model.{name} cannot be reassigned: .*; {advice}"):
            setattr(model, name, value)
    model.name, model.source = "renamed", "here"  # metadata no kernel reads
    assert model.name == "renamed"
    np.testing.assert_array_equal(db.forward_dynamics(model, q, np.ones(model.nv), np.ones(model.nv)), a)
    heavier = model.replace(mass=2 * model.mass)
    assert not np.allclose(db.forward_dynamics(heavier, q, np.ones(model.nv), np.ones(model.nv)), a)


def test_gravity_setter_validates(chain):
    model = db.Model(**fields(chain))
    assert model.gravity.tolist() == [0.0, 0.0, -9.81]
    model.gravity = [0, -9.81, 0]
    assert model.gravity.tolist() == [0.0, -9.81, 0.0]
    with pytest.raises(db.ModelError, match="gravity must be 3 finite numbers"):
        model.gravity = [0, np.nan, 0]
    with pytest.raises(ValueError):
        model.gravity[0] = 1.0


@pytest.mark.parametrize(
    "change,match",
    [
        (dict(parent=[-1, 0, 2, 1]), "link 'link2': parent index 2 must be -1"),
        (dict(link_names=["a", "a", "b", "c"]), "duplicate link name 'a'"),
        (dict(joint_names=["a", "b", "c"]), "4 link names but 3 joint names"),
        (dict(joint_type=[0, 0, 99, 0]), "joint 'joint2': unknown joint type code 99"),
        (
            dict(joint_axis=[[0, 0, 2.0]] * 4),
            r"joint 'joint0' \(revolute\): axis \[0.0, 0.0, 2.0\] is not a unit vector",
        ),
        (dict(mass=[1, -1, 1, 1]), "link 'link1': negative mass"),
        (dict(mass=[1, np.nan, 1, 1]), "link 'link1': mass, centre of mass and inertia must be finite"),
        (
            dict(inertia=[np.diag([1, 1, 1])] * 3 + [np.array([[1, 2, 0], [0, 1, 0], [0, 0, 1.0]])]),
            "link 'link3': inertia tensor is not symmetric",
        ),
        (dict(inertia=[np.diag([1.0, 1.0, -1.0])] * 4), "link 'link0': inertia tensor is not positive semi-definite"),
        (dict(joint_rotation=[np.diag([1.0, 1.0, -1.0])] * 4), "joint 'joint0': placement rotation is not a rotation"),
        (dict(mass=[1.0, 1.0]), r"mass must have shape \(4,\)"),
    ],
)
def test_invalid_models_are_refused(chain, change, match):
    with pytest.raises(db.ModelError, match=match):
        db.Model(**fields(chain, **change))


def test_links_must_be_numbered_depth_first():
    model = random_model(0, 4, branching=0.0, joint_types=(db.JointType.REVOLUTE,))
    # 0 -> 1, 0 -> 2, 1 -> 3: link 3's parent (1) is not on link 2's path to the base
    with pytest.raises(db.ModelError, match="not numbered depth first"):
        db.Model(**fields(model, parent=[-1, 0, 0, 1]))


def test_universal_axes_must_not_be_parallel():
    model = random_model(0, 1, joint_types=(db.JointType.UNIVERSAL,))
    with pytest.raises(db.ModelError, match="universal.*parallel"):
        db.Model(**fields(model, joint_axis2=model.joint_axis))


def test_names_lookup(chain):
    assert chain.link_index("link2") == 2 and chain.joint_index("joint3") == 3
    with pytest.raises(KeyError, match="no link named 'x'"):
        chain.link_index("x")


def test_a_pickled_model_leaves_its_caches_behind():
    """The gravity-free twin that the constrained derivatives cache on a model is not pickled (a
    review measured a four-bar's pickle grow from 5.4 kB to 9.6 kB after one call); the
    unpickled model computes the same."""
    fb = db.generators.fourbar()
    before = len(pickle.dumps(fb))
    q, v = db.neutral_configuration(fb), np.zeros(fb.nv)
    a = db.forward_dynamics(fb, q, v, np.ones(fb.nv))
    db.forward_dynamics_derivatives(fb, q, v, np.ones(fb.nv))  # M^-1 J^T on the twin
    assert "_gravity_free" in fb.__dict__
    assert len(pickle.dumps(fb)) == before
    np.testing.assert_array_equal(db.forward_dynamics(pickle.loads(pickle.dumps(fb)), q, v, np.ones(fb.nv)), a)


def test_joint_label_refuses_indices_out_of_range_by_name():
    """``joint_label(-1)`` named the last joint (-1 is the base in ``parent``), 99 raised a bare
    IndexError and 2.0 a TypeError."""
    model = db.load_robot("chain:3")
    assert model.joint_label(np.int64(2)) == f"'{model.joint_names[2]}' (revolute)"
    for bad in (-1, 3, 99):
        with pytest.raises(db.InputError, match=rf"joint index {bad} is out of range .* \(3 joints\)"):
            model.joint_label(bad)
    for bad in (2.0, "joint1", None):
        with pytest.raises(db.InputTypeError, match="joint index must be an integer"):
            model.joint_label(bad)


def test_replace_names_an_unknown_argument_as_an_input_type_error():
    """A bare TypeError before; InputTypeError is still a TypeError."""
    model = db.load_robot("chain:3")
    with pytest.raises(db.InputTypeError, match=r"unknown argument\(s\) \['dampng'\]; did you mean damping\?"):
        model.replace(dampng=np.ones(3))


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(xyz1="abc"), r"loop closure 'cut': the frame on 'body4': xyz must be 3 finite numbers, got 'abc'"),
        (dict(xyz2=[1, "a", 2]), r"the frame on 'body1': xyz must be 3 finite numbers"),
        (dict(rpy1=[1.0, 2.0]), r"the frame on 'body4': rpy must be 3 finite numbers, got \[1.0, 2.0\]"),
        (dict(rotation2=[[1, 0], [0, 1]]), r"the frame on 'body1': rotation must be 3x3 finite numbers"),
        (dict(axis="z"), r"loop closure 'cut': the axis must be 3 finite numbers of non-zero length, got 'z'"),
        (dict(name=None), r"a loop closure's name must be a non-empty string, got None"),
        (dict(link2="bdy1"), r"loop closure 'cut': no link or frame named 'bdy1' in 'fourbar'; did you mean body1"),
    ],
)
def test_add_loop_closure_names_the_loop_for_values_that_are_not_numbers(kwargs, message):
    """Strings for xyz, rpy or axis, and an rpy of two numbers, escaped as bare ValueErrors."""
    model = db.load_robot("fourbar").replace(loops=())
    args = dict(name="cut", type="revolute", link1="body4", link2="body1") | kwargs
    with pytest.raises(db.ModelError, match=message):
        model.add_loop_closure(**args)
    assert model.loops == ()


def test_reference_configurations_are_checked_kept_and_read_only(chain):
    """Named configurations: nq finite numbers each under a non-empty name (a bad one named),
    kept by ``replace`` and pickling, read-only; a MimicModel reduces them."""
    home = np.linspace(0.1, 0.5, chain.nq)
    model = db.Model(**fields(chain), reference_configurations={"home": home})
    np.testing.assert_array_equal(model.reference_configurations["home"], home)
    assert not model.reference_configurations["home"].flags.writeable
    with pytest.raises(TypeError):
        model.reference_configurations["other"] = home  # type: ignore[index]
    with pytest.raises(AttributeError):
        model.reference_configurations = {}  # type: ignore[misc]
    with pytest.raises(
        db.NameLookupError, match=r"model 'random' has no configuration 'hom' \(it has: home\); did you mean home\?"
    ):
        model.reference_configurations["hom"]
    assert "hom" not in model.reference_configurations and model.reference_configurations.get("hom") is None
    assert repr(model.reference_configurations) == "NamedConfigurations(home)"
    moved = model.replace(name="moved")
    np.testing.assert_array_equal(moved.reference_configurations["home"], home)
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.reference_configurations["home"], home)
    for refs, match in [
        ({"home": home[:-1]}, f"reference configuration 'home' must be {chain.nq} finite numbers"),
        ({"home": np.full(chain.nq, np.nan)}, "reference configuration 'home' must be"),
        ({"home": "up"}, "reference configuration 'home' must be .* got 'up'"),
        ({"": home}, "needs a name"),
        ({3: home}, "needs a name"),
        ([home], "must map names to configurations, got list"),
    ]:
        with pytest.raises(db.ModelError, match=match):
            db.Model(**fields(chain), reference_configurations=refs)


def test_a_mimic_model_reduces_the_reference_configurations():
    tree = db.load_robot("gripper")
    q = db.random_configuration(tree, 3)
    mimic = db.MimicModel(tree.replace(reference_configurations={"open": q}))
    np.testing.assert_array_equal(mimic.reference_configurations["open"], mimic.reduce_configuration(q))
    assert mimic.reference_configurations["open"].shape == (mimic.nq,)
    assert not mimic.reference_configurations["open"].flags.writeable
