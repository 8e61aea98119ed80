"""Grounds and contact points: validated on construction, errors naming the argument or link;
contact candidates from URDF <collision> shapes."""

import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge.errors import InputError, InputTypeError, ModelError, URDFError
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody.contact import ContactPoint, Ground, contact_point, grounds_of, points_of, tangent_basis


def test_ground_defaults_and_normalisation():
    g = Ground()
    assert g.offset == 0.0 and g.mu == 0.8 and g.restitution == 0.0
    np.testing.assert_array_equal(g.normal, [0, 0, 1])
    s = Ground(point=(1.0, 0.0, 0.5), normal=(0.0, 0.0, 4.0), mu=0.3, name="step")
    assert s.offset == pytest.approx(0.5) and s.normal[2] == 1.0
    th = 0.3
    slope = Ground(normal=(-np.sin(th), 0.0, np.cos(th)))
    assert slope.distance([1.0, 0.0, np.tan(th) + 0.1]) == pytest.approx(0.1 * np.cos(th), abs=1e-15)
    with pytest.raises(ValueError):
        g.normal[0] = 1.0  # read-only


@pytest.mark.parametrize("n", [(0, 0, 1), (0.3, -0.2, 0.9), (1, 0, 0), (0, 1, 0), (-1, -1, -1)])
def test_tangent_basis_is_a_rotation_with_the_normal_last(n):
    n = np.array(n, float) / np.linalg.norm(n)
    B = tangent_basis(n)
    np.testing.assert_allclose(B.T @ B, np.eye(3), atol=1e-15)
    assert np.linalg.det(B) == pytest.approx(1.0)
    np.testing.assert_allclose(B[:, 2], n, atol=1e-15)


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"mu": -0.1}, "mu"),
        ({"mu": float("nan")}, "mu"),
        ({"mu": "high"}, "mu"),
        ({"restitution": 1.5}, "restitution"),
        ({"normal": (0, 0, 0)}, "normal"),
        ({"normal": (0, 1)}, "normal"),
        ({"height": float("inf")}, "height"),
        ({"height": 1.0, "point": (0, 0, 1)}, "either height or point"),
        ({"name": ""}, "name"),
    ],
)
def test_ground_refuses_bad_arguments_by_name(kwargs, words):
    with pytest.raises(ModelError, match=words):
        Ground(**kwargs)


def test_grounds_of():
    g = Ground()
    assert grounds_of(g) == (g,)
    with pytest.raises(InputTypeError, match=r"contact\[1\]"):
        grounds_of([g, "floor"])
    with pytest.raises(ModelError, match="named 'ground'"):
        grounds_of([g, Ground(height=1.0)])
    with pytest.raises(InputTypeError, match="empty"):
        grounds_of([])


def test_contact_point_by_link_and_frame_name():
    solo = db.load_robot("solo12")
    c = contact_point(solo, "FL_FOOT", margin=0.01)
    foot = next(f for f in solo.frames if f.name == "FL_FOOT")
    assert c.link == foot.link and c.margin == 0.01 and c.name == "FL_FOOT"
    np.testing.assert_allclose(c.point, foot.translation)
    c2 = contact_point(solo, "FL_LOWER_LEG", (0, 0, -0.16), radius=0.01)
    assert c2.link == solo.link_index("FL_LOWER_LEG") and c2.radius == 0.01
    with pytest.raises(ModelError, match="FL_FOTO"):
        contact_point(solo, "FL_FOTO")
    with pytest.raises(ModelError, match="'FL_FOOT'.*xyz"):
        contact_point(solo, "FL_FOOT", (0, 0))
    with pytest.raises(ModelError, match="radius"):
        contact_point(solo, "FL_FOOT", radius=-1)
    with pytest.raises(ModelError, match="margin"):
        contact_point(solo, "FL_FOOT", margin=float("nan"))
    panda = db.load_robot("panda")
    with pytest.raises(ModelError, match="never moves"):
        contact_point(panda, "panda_link0")
    with pytest.raises(ModelError, match="link"):
        ContactPoint(-1, (0, 0, 0))
    assert [p.link for p in points_of(solo, ["FL_FOOT", c2])] == [c.link, c2.link]
    with pytest.raises(ModelError, match="not a link"):
        points_of(solo, [ContactPoint(99, (0, 0, 0))])
    with pytest.raises(ModelError, match="no contact points"):
        points_of(solo, [])


URDF = """<robot name="shapes">
  <link name="base"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 0.5" rpy="0 0 1.5707963267948966"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>
    <collision><geometry><mesh filename="x.stl"/></geometry></collision>
  </link>
  <link name="arm"><inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0 0 1"/><geometry><sphere radius="0.05"/></geometry></collision>
    <collision><geometry><cylinder radius="0.1" length="0.4"/></geometry></collision>
    <collision><geometry><capsule radius="0.02" length="0.3"/></geometry></collision>
  </link>
  <link name="tip"/>
  <joint name="j" type="revolute"><parent link="base"/><child link="arm"/><origin xyz="0 0 2"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
  <joint name="fix" type="fixed"><parent link="arm"/><child link="tip"/><origin xyz="0.1 0 0"/></joint>
</robot>"""


def test_collision_points_of_each_shape():
    model = db.load_urdf(URDF, floating_base=True)
    pts, notes = collision_points(model, URDF, margin=0.002, rim_points=6)
    names = [p.name for p in pts]
    assert sum(n.startswith("base:box") for n in names) == 8
    assert sum(n.startswith("arm:cylinder") for n in names) == 12
    assert sum(n.startswith("arm:capsule") for n in names) == 2
    assert all(p.margin == 0.002 for p in pts)
    base = [p for p in pts if p.name.startswith("base:box")]
    # the box turned by 90 deg about z: its x extent is 0.4, its y extent 0.2, centred at z = 0.5
    P = np.array([p.point for p in base])
    np.testing.assert_allclose(P.max(0), [0.2, 0.1, 0.8], atol=1e-12)
    np.testing.assert_allclose(P.min(0), [-0.2, -0.1, 0.2], atol=1e-12)
    sphere = next(p for p in pts if p.name == "arm:sphere#0")
    assert sphere.radius == 0.05 and sphere.link == model.link_index("arm")
    np.testing.assert_allclose(sphere.point, [0, 0, 1])
    cyl = np.array([p.point for p in pts if p.name.startswith("arm:cylinder")])
    np.testing.assert_allclose(np.hypot(cyl[:, 0], cyl[:, 1]), 0.1, atol=1e-12)
    np.testing.assert_allclose(sorted(set(np.round(cyl[:, 2], 12))), [-0.2, 0.2])
    assert any("mesh" in n and "base" in n for n in notes)
    # a fixed-base robot: the base's shapes never move
    fixed = db.load_urdf(URDF)
    pts2, notes2 = collision_points(fixed, URDF)
    assert not any(p.name.startswith("base") for p in pts2) and any("fixed to the base" in n for n in notes2)


def test_collision_points_errors():
    model = db.load_urdf(URDF, floating_base=True)
    with pytest.raises(InputError, match="source="):
        collision_points(model)
    with pytest.raises(URDFError, match="link 'arm'.*radius"):
        collision_points(model, URDF.replace('radius="0.05"', 'radius="-0.05"'))
    with pytest.raises(URDFError, match="link 'base'.*size"):
        collision_points(model, URDF.replace('size="0.2 0.4 0.6"', 'size="0.2 0.4"'))
    with pytest.raises(InputError, match="rim_points"):
        collision_points(model, URDF, rim_points=2)


def test_collision_points_of_talos_on_merged_links():
    """talos's wrist sensors are URDF links merged by fixed joints: their cylinders move with the
    frame's moving link."""
    talos = db.load_robot("talos")
    pts, notes = collision_points(talos)
    wrist = [p for p in pts if p.name.startswith("wrist_left_ft_link:cylinder")]
    frame = next(f for f in talos.frames if f.name == "wrist_left_ft_link")
    assert len(wrist) == 16 and {p.link for p in wrist} == {frame.link}
    assert not notes  # every mesh found and read


def test_collision_meshes_give_their_convex_hull_vertices():
    """solo12's collision shapes are meshes (package:// names): the hull of its foot mesh reaches
    16 mm below the FOOT frame (the foot's ball), and meshes=False skips them all (hull=True: every
    vertex of the hull; the default's sparse subset: tests/io/test_mesh_points.py)."""
    solo = db.load_robot("solo12")
    pts, notes = collision_points(solo, hull=True)
    assert not notes
    foot = [p for p in pts if p.name.startswith("FL_FOOT:mesh")]
    frame = next(f for f in solo.frames if f.name == "FL_FOOT")
    assert len(foot) > 100 and {p.link for p in foot} == {frame.link}
    q = db.neutral_configuration(solo)
    R, p = db.forward_kinematics(solo, q)
    z = [(p[c.link] + R[c.link] @ c.point)[2] for c in foot]
    z_frame = (p[frame.link] + R[frame.link] @ frame.translation)[2]
    assert min(z) == pytest.approx(z_frame - 0.016, abs=1e-4)
    none, notes = collision_points(solo, meshes=False)
    assert not none and len(notes) == 17 and all("meshes=False" in n for n in notes)
