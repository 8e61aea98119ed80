"""Contact candidates of MJCF models from MuJoCo's compiled geoms: placed where MuJoCo puts
its geoms, and a box of MJCF resting on the ground as the URDF box does."""

from __future__ import annotations

import os
import warnings

import mujoco
import numpy as np
import pytest

import denoc_bridge as db
from denoc_bridge import Ground
from denoc_bridge.errors import ModelError, PhysicsWarning
from denoc_bridge.io.collision import collision_points
from denoc_bridge.io.mjcf import from_mujoco
from tests.io.mjcf_samples import random_poses

G0 = 9.81

#: a free box carrying an arm: every geom type MuJoCo collides, a visual-only geom, a floor
SHAPES = """
<mujoco model="shapes">
  <asset>
    <mesh name="tetra" vertex="0 0 0  0.1 0 0  0 0.1 0  0 0 0.1  0.02 0.02 0.02"/>
  </asset>
  <worldbody>
    <geom name="floor" type="plane" size="5 5 0.1"/>
    <body name="base" pos="0 0 1">
      <freejoint/>
      <geom name="block" type="box" size="0.1 0.2 0.05" mass="2"/>
      <geom name="look" type="sphere" size="0.3" contype="0" conaffinity="0"/>
      <body name="arm" pos="0.1 0 0" euler="0 30 10">
        <joint name="hinge" type="hinge" axis="0 1 0"/>
        <geom name="rod" type="capsule" fromto="0 0 0 0.3 0 0" size="0.02"/>
        <geom name="can" type="cylinder" size="0.03 0.05" pos="0.3 0 0" euler="90 0 0"/>
        <geom name="egg" type="ellipsoid" size="0.02 0.03 0.04" pos="0.35 0 0"/>
        <geom name="ball" type="sphere" size="0.025" pos="0.4 0 0"/>
        <geom name="tip" type="mesh" mesh="tetra" pos="0.45 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
"""


def _load(xml: str, tmp_path) -> tuple[db.Model, mujoco.MjModel, str]:
    path = os.path.join(tmp_path, "model.xml")
    with open(path, "w") as f:
        f.write(xml)
    return db.load_mjcf(path), mujoco.MjModel.from_xml_path(path), path


def test_points_sit_on_mujoco_s_geoms(tmp_path) -> None:
    """Each point, through its link at random configurations, is where MuJoCo's geom pose
    (geom_xmat, geom_xpos) puts the shape's point; the counts and radii are the shapes'."""
    model, m, _ = _load(SHAPES, tmp_path)
    points, notes = collision_points(model, rim_points=6)
    by_geom: dict[str, list] = {}
    for c in points:
        by_geom.setdefault(c.name.split(":")[1].split("#")[0], []).append(c)
    counts = {name: len(cs) for name, cs in by_geom.items()}
    assert counts == {"block": 8, "rod": 2, "can": 12, "egg": 26, "ball": 1, "tip": 4}  # tetra hull: 4 of 5 vertices
    assert {c.radius for c in by_geom["rod"]} == {0.02} and by_geom["ball"][0].radius == 0.025
    assert notes == ["geom 'floor' (plane) of body 'world': fixed to the world, skipped (it never moves)"]
    for d, R, p in random_poses(model, m, seed=3):
        world = {c.name: R[c.link] @ c.point + p[c.link] for c in points}
        box = m.geom("block").id
        corners = [np.array([sx, sy, sz]) * m.geom_size[box] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
        expected = [d.geom_xmat[box].reshape(3, 3) @ c + d.geom_xpos[box] for c in corners]
        np.testing.assert_allclose([world[f"base:block#{j}"] for j in range(8)], expected, atol=1e-13)
        rod = m.geom("rod").id
        axis = d.geom_xmat[rod].reshape(3, 3)[:, 2] * m.geom_size[rod][1]
        np.testing.assert_allclose(world["arm:rod#1"], d.geom_xpos[rod] + axis, atol=1e-13)
        tip = m.geom("tip").id
        k = int(m.geom_dataid[tip])
        verts = m.mesh_vert[m.mesh_vertadr[k] : m.mesh_vertadr[k] + m.mesh_vertnum[k]]
        mesh_world = verts @ d.geom_xmat[tip].reshape(3, 3).T + d.geom_xpos[tip]
        for j in range(4):  # each hull vertex is one of MuJoCo's vertices, placed
            assert np.abs(mesh_world - world[f"arm:tip#{j}"]).sum(axis=1).min() < 1e-13
    assert len(collision_points(model, rim_points=6, meshes=False)[0]) == len(points) - 4


def test_an_mjcf_box_rests_on_the_ground(tmp_path) -> None:
    """A 2 kg MJCF box dropped flat from 5 cm: after landing it rests, the ground carrying its
    weight to 1e-9, no drift beyond 1e-9 m, the contact's work never positive."""
    xml = """<mujoco><worldbody><body name="box" pos="0 0 0.1"><freejoint/>
      <geom type="box" size="0.1 0.2 0.05" mass="2"/></body></worldbody></mujoco>"""
    model, _, _ = _load(xml, tmp_path)
    points, _ = collision_points(model)
    q0 = db.neutral_configuration(model)
    q0[2] = 0.1
    traj = db.simulate(
        model, q0, np.zeros(6), 1.0, 1e-3, method="contact-euler", contact=Ground(mu=0.8), contact_points=points
    )
    late = traj.t > 0.5
    z = traj.q[late, 2]
    assert abs(z - 0.05).max() < 1e-9
    assert traj.contact_force[-2, :, 2].sum() == pytest.approx(2.0 * G0, rel=1e-9)
    assert np.diff(traj.contact_work).max() <= 1e-12


def test_a_model_that_is_not_the_file_is_named(tmp_path) -> None:
    model, m, path = _load(SHAPES, tmp_path)
    other = from_mujoco(mujoco.MjModel.from_xml_string(SHAPES.replace('name="arm"', 'name="limb"')))
    with pytest.raises(ModelError, match="body 'arm' is not a link or frame of model"):
        collision_points(other, path)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PhysicsWarning)
        assert len(collision_points(model, path)[0]) == 8 + 2 + 16 + 26 + 1 + 4  # rims of 8 points


def test_mjcf_text_and_a_model_without_a_file(tmp_path) -> None:
    """MJCF text as source= reads its geoms; a model from text without source= is told to pass
    its file, naming both formats."""
    from denoc_bridge.errors import InputError
    from denoc_bridge.io.mjcf import loads_mjcf

    model = loads_mjcf(SHAPES)
    with pytest.raises(InputError, match="not loaded from a file: pass its URDF .* or its MJCF"):
        collision_points(model)
    points, _ = collision_points(model, SHAPES)
    assert len(points) == 8 + 2 + 16 + 26 + 1 + 4
