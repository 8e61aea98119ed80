"""load_urdf: sources, repairs of files urdf-parser-py rejects, tree building, and clear errors."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, erd_robot_dir, load_quietly
from hypothesis import given
from hypothesis import strategies as st
from urdf_samples import random_urdf

import denoc_bridge as db


def robot(body: str, name: str = "r") -> str:
    return f'<?xml version="1.0"?>\n<robot name="{name}">\n{body}\n</robot>\n'


def link(name: str, mass: float = 1.0, com=(0.1, 0.0, 0.0), inertia=(0.02, 0.03, 0.04), rpy="0 0 0") -> str:
    ixx, iyy, izz = inertia
    return (
        f'<link name="{name}"><inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="{rpy}"/>'
        f'<mass value="{mass}"/><inertia ixx="{ixx}" ixy="0.001" ixz="0" iyy="{iyy}" iyz="0" izz="{izz}"/>'
        f"</inertial></link>"
    )


def joint(
    name: str,
    parent: str,
    child: str,
    jtype: str = "revolute",
    xyz="0 0 0.1",
    rpy="0 0 0",
    axis="0 0 1",
    extra: str = "",
) -> str:
    lim = '<limit lower="-2" upper="2" effort="1" velocity="1"/>' if jtype in ("revolute", "prismatic") else ""
    ax = f'<axis xyz="{axis}"/>' if axis is not None else ""
    return (
        f'<joint name="{name}" type="{jtype}"><parent link="{parent}"/><child link="{child}"/>'
        f'<origin xyz="{xyz}" rpy="{rpy}"/>{ax}{lim}{extra}</joint>'
    )


def pin_model(xml: str, floating=False):
    with contextlib.redirect_stderr(io.StringIO()):
        return pin.buildModelFromXML(xml, pin.JointModelFreeFlyer()) if floating else pin.buildModelFromXML(xml)


TREE = robot(
    "\n".join(
        [
            '<link name="base"/>',
            link("a"),
            link("b", 0.5),
            link("c", 0.7),
            link("d", 0.3),
            link("e", 0.2),
            link("tool", 0.4, com=(0, 0.05, 0)),
            joint("zeta", "base", "a", rpy="0.1 0.2 0.3"),
            joint("beta", "a", "c", "prismatic", axis="0 1 0"),  # siblings declared out of name order
            joint("alpha", "a", "b", "continuous", axis="1 1 0"),
            joint("fix", "b", "tool", "fixed", xyz="0.2 0 0", rpy="0 0.5 0"),
            joint("gamma", "tool", "d", axis="0 0 2"),
            joint("delta", "d", "e", axis="1 0 0"),
        ]
    )
)


@pytest.mark.parametrize("floating", [False, True])
def test_tree_order_merge_and_values_match_pinocchio(floating):
    model = db.load_urdf(TREE, floating_base=floating)
    pm = pin_model(TREE, floating)
    assert model.joint_names == tuple(pm.names[1:])
    assert model.joint_names[-5:] == ("zeta", "alpha", "gamma", "delta", "beta")  # siblings by joint name
    assert "tool" not in model.link_names  # merged into body 'b' through the fixed joint
    assert model.link_names[model.joint_index("alpha")] == "b"
    pd = pm.createData()
    rng = np.random.default_rng(1)
    q = db.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    assert_close("rnea", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close("crba", db.mass_matrix(model, q), pin.crba(pm, pd, q))
    assert np.isclose(np.linalg.norm(model.joint_axis[model.joint_index("gamma")]), 1.0)


def test_modules_of_the_tree():
    model = db.load_urdf(TREE)
    # zeta -> a branches into alpha (b, then gamma d, delta e) and beta (c)
    assert [list(m.links) for m in model.modules] == [[0], [1, 2, 3], [4]]
    assert [m.parent for m in model.modules] == [-1, 0, 0]
    assert model.modules[0].children == (1, 2)
    assert model.modules[1].joint_names == ("alpha", "gamma", "delta")


def test_path_string_bytes_and_pathlike(tmp_path):
    f = tmp_path / "tree.urdf"
    f.write_text(TREE)
    for src in (str(f), f, TREE.encode(), TREE):
        m = db.load_urdf(src)
        assert m.nv == 5 and m.name == "r"
    assert db.load_urdf(str(f)).source == str(f.resolve())


def test_fixed_base_root_inertia_drops_out_and_floating_keeps_it():
    xml = robot(link("root", 3.0) + link("arm") + joint("j", "root", "arm"))
    fixed, floating = db.load_urdf(xml), db.load_urdf(xml, floating_base=True)
    assert fixed.n_links == 1 and fixed.base_name == "root"
    assert floating.joint_names == ("root_joint", "j") and floating.mass[0] == 3.0
    assert floating.floating_base and floating.joint_type[0] == db.JointType.FREEFLYER


def test_floating_and_planar_urdf_joints_match_pinocchio():
    xml = robot(
        '<link name="world"/>'
        + link("body")
        + link("slider", 0.5)
        + joint("free", "world", "body", "floating", axis=None)
        + joint("plane", "body", "slider", "planar", axis="0 0 1")
    )
    model, pm = db.load_urdf(xml), pin_model(xml)
    assert [db.JointType(t) for t in model.joint_type] == [db.JointType.FREEFLYER, db.JointType.PLANAR]
    pd = pm.createData()
    rng = np.random.default_rng(3)
    q = db.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    assert_close("rnea", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close("aba", db.forward_dynamics(model, q, v, a), pin.aba(pm, pd, q, v, a))


def test_planar_axis_other_than_z_is_ignored_like_pinocchio_with_a_note():
    xml = robot('<link name="w"/>' + link("s") + joint("p", "w", "s", "planar", axis="1 0 0"))
    model = db.load_urdf(xml)
    assert any("planar" in n and "ignored" in n for n in model.warnings)


def test_limits_damping_and_mimic_are_recorded():
    xml = robot(
        '<link name="w"/>'
        + link("a")
        + link("b")
        + joint("j1", "w", "a", extra='<dynamics damping="0.3" friction="0.1"/>')
        + joint("j2", "a", "b", extra='<mimic joint="j1" multiplier="-2" offset="0.5"/>')
    )
    model = db.load_urdf(xml)
    assert model.lower_limit.tolist() == [-2.0, -2.0] and model.upper_limit.tolist() == [2.0, 2.0]
    assert model.damping.tolist() == [0.3, 0.0] and model.friction.tolist() == [0.1, 0.0]
    assert model.mimic == (db.multibody.model.Mimic("j2", "j1", -2.0, 0.5),)


@pytest.mark.parametrize(
    "rel",
    [
        "icub_description/robots/icub.urdf",
        "icub_description/robots/icub_reduced.urdf",
        "pr2_description/urdf/pr2.urdf",
        "romeo_description/urdf/romeo_laas_small.urdf",
    ],
)
def test_files_urdf_parser_py_rejects_still_load(rel):
    from urdf_parser_py import urdf

    path = os.path.join(erd_robot_dir(), rel)
    # urdf-parser-py raises several unrelated types here (KeyError, AssertionError, ...)
    with contextlib.redirect_stderr(io.StringIO()), pytest.raises(Exception):  # noqa: B017
        urdf.URDF.from_xml_file(path)  # the raw parser fails on these files
    model = load_quietly(path)
    assert model.nv > 0 and model.warnings


def test_nonphysical_inertia_warns_by_default_and_raises_when_strict():
    xml = robot('<link name="w"/>' + link("a", inertia=(0.01, 0.01, 0.5)) + joint("j", "w", "a"))
    with pytest.warns(db.PhysicsWarning, match="triangle inequality"):
        model = db.load_urdf(xml)
    assert any("triangle" in w for w in model.warnings)
    with pytest.raises(db.ModelError, match="link 'a'.*triangle"):
        db.load_urdf(xml, strict=True)


def test_ur3_without_links_is_refused_like_pinocchio_does():
    path = os.path.join(erd_robot_dir(), "ur_description/urdf/ur3.urdf")
    if "<link" in Path(path).read_text():
        pytest.skip("this example-robot-data version ships a complete ur3.urdf")
    with pytest.raises(db.URDFError, match="no <link>"):
        db.load_urdf(path)


def test_falcon_with_a_missing_child_link_is_refused_by_name():
    path = os.path.join(erd_robot_dir(), "falcon_description/urdf/falcon.urdf")
    if not os.path.exists(path):
        pytest.skip("falcon.urdf is not shipped by this example-robot-data version")
    with pytest.raises(db.URDFError, match="Z_propeller"):
        db.load_urdf(path)


@pytest.mark.parametrize(
    "xml,match",
    [
        ("", "empty"),
        (b"  ", "empty"),
        ("<!-- only a comment -->", "no XML element|malformed"),
        ("<robot name='r'><link name='a'>", "malformed XML"),
        ("<notarobot/>", "root element is <notarobot>"),
        (robot(""), "no <link>"),
        (robot('<link name="a"/>' + link("a")), "duplicate link name 'a'"),
        (
            robot('<link name="w"/>' + link("a") + link("b") + joint("j", "w", "a") + joint("j", "a", "b")),
            "duplicate joint name 'j'",
        ),
        (
            robot('<link name="w"/>' + link("a") + joint("j", "w", "nope")),
            "joint 'j': child link 'nope' does not exist",
        ),
        (
            robot('<link name="w"/>' + link("a") + joint("j", "w", "a", "hinge")),
            "joint 'j': unknown joint type 'hinge'",
        ),
        (robot('<link name="w"/>' + link("a") + joint("j", "w", "a", axis="0 0 0")), "joint 'j'.*zero length"),
        (robot('<link name="w"/>' + link("a") + joint("j", "w", "a", xyz="0 nan 1")), "joint 'j' <origin>.*not finite"),
        (robot('<link name="w"/>' + link("a") + joint("j", "w", "a", xyz="0 x 1")), "joint 'j' <origin>.*not 3 number"),
        (robot('<link name="w"/>' + link("a", mass=-1) + joint("j", "w", "a")), "link 'a' <inertial>: negative mass"),
        (
            robot('<link name="w"/>' + link("a") + link("b") + joint("j1", "w", "a") + joint("j2", "b", "a")),
            "link 'a' has two parents",
        ),
        (robot(link("a") + link("b")), "2 root links"),
        (
            robot('<link name="w"/>' + link("a") + link("b") + joint("j1", "w", "a") + joint("j2", "b", "b")),
            "cycle|two parents",
        ),
        (
            robot(
                '<link name="w"/>'
                + link("a")
                + link("b")
                + link("c")
                + joint("j0", "w", "a")
                + joint("j1", "b", "c")
                + joint("j2", "c", "b")
            ),
            "'b'.*'c'.*cycle",
        ),
        (robot("<link/>"), "<link> number 1 has no name"),
        (
            robot('<link name="w"/>' + link("a") + '<joint name="j" type="revolute"><child link="a"/></joint>'),
            r"joint 'j': missing <parent",
        ),
    ],
)
def test_broken_urdf_raises_a_clear_error(xml, match):
    with pytest.raises(db.URDFError, match=match):
        db.load_urdf(xml)


def test_entity_declarations_are_skipped_without_reading_anything(tmp_path):
    """As TinyXML2 (urdfdom) does: the DOCTYPE is skipped, '&x;' stays literal text, the file
    is never read; an entity bomb is never expanded."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    xxe = (
        f'<?xml version="1.0"?><!DOCTYPE robot [<!ENTITY x SYSTEM "file://{secret}">]>'
        '<robot name="r"><link name="&x;"/></robot>'
    )
    model = db.load_urdf(xxe)
    assert model.base_name == "&x;" and "TOPSECRET" not in repr(vars(model))
    assert pin.buildModelFromXML(xxe).frames[1].name == "&x;"  # Pinocchio: the same literal name
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
        + "".join(f'<!ENTITY {c} "{("&" + p + ";") * 10}">' for p, c in zip("abcdefgh", "bcdefghi"))
        + ']><robot name="r"><link name="&i;"/></robot>'
    )
    assert db.load_urdf(bomb).base_name == "&i;"


def test_empty_file_is_refused(tmp_path):
    f = tmp_path / "empty.urdf"
    f.write_text("")
    with pytest.raises(db.URDFError, match="empty.urdf: the document is empty"):
        db.load_urdf(f)


def test_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="nothere.urdf"):
        db.load_urdf(tmp_path / "nothere.urdf")
    with pytest.raises(db.URDFError, match="file path or URDF XML"):
        db.load_urdf(42)


def test_missing_file_is_a_package_error_with_a_suggestion(tmp_path, monkeypatch):
    (tmp_path / "robot.urdf").write_text("<robot name='r'/>")
    with pytest.raises(db.URDFFileNotFoundError, match=r"robt.urdf; did you mean .*robot.urdf\?") as info:
        db.load_urdf(tmp_path / "robt.urdf")
    assert isinstance(info.value, db.DenocError) and isinstance(info.value, FileNotFoundError)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match=r"use denoc_bridge.load_robot\('panda'\)"):
        db.load_urdf("panda")
    with pytest.raises(db.DenocError, match="the folder nowhere does not exist"):
        db.load_urdf("nowhere/x.urdf")


def test_frames_record_every_urdf_link_and_joint(panda):
    names = {f.name for f in panda.frames}
    assert {"panda_link0", "panda_link8", "panda_hand", "panda_hand_joint", "panda_joint1"} <= names
    hand = next(f for f in panda.frames if f.name == "panda_hand")
    assert hand.link == panda.link_index("panda_link7")


def test_gripper_file_is_the_generated_one():
    from denoc_bridge.io.robots import gripper4_urdf

    path = Path(__file__).resolve().parents[2] / "urdf" / "gripper4.urdf"
    assert path.read_text() == gripper4_urdf()


@given(
    seed=st.integers(0, 2**32 - 1),
    n_links=st.integers(1, 12),
    floating=st.booleans(),
    fixed=st.sampled_from([0.0, 0.3, 0.6]),
)
def test_random_urdf_documents_match_pinocchio(seed, n_links, floating, fixed):
    xml = random_urdf(seed, n_links, fixed=fixed)
    model, pm = db.load_urdf(xml, floating_base=floating), pin_model(xml, floating)
    assert model.joint_names == tuple(pm.names[1:])
    pd = pm.createData()
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    assert_close("rnea", db.inverse_dynamics(model, q, v, a), pin.rnea(pm, pd, q, v, a))
    assert_close("crba", db.mass_matrix(model, q), pin.crba(pm, pd, q))
    tau = pin.rnea(pm, pd, q, v, a).copy()
    try:
        acc = db.forward_dynamics(model, q, v, tau)
    except db.SingularInertiaError:
        # a massless link whose motion moves no mass: the GIM itself is singular
        # (Pinocchio's aba then returns inf/NaN or one arbitrary solution)
        assert np.linalg.cond(pin.crba(pm, pd, q)) > 1e12
        return
    M = db.mass_matrix(model, q)
    assert np.max(np.abs(M @ (acc - a)), initial=0.0) <= 1e-9 * max(1.0, np.max(np.abs(tau), initial=0.0))
