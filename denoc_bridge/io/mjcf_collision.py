"""Contact candidates from an MJCF file's geoms, as MuJoCo compiled them (used by
:func:`denoc_bridge.io.collision.collision_points` when the model came from an MJCF file).

The geoms that take part in MuJoCo's collisions (``contype`` or ``conaffinity`` not 0) give
points in their body's frame, placed on the model's links through the bodies' frames
(``model.frames``, kind ``"link"``):

* sphere: one contact sphere (``geom_size[0]``);
* capsule: two contact spheres at the ends of its axis (``geom_size[0]``, half-length
  ``geom_size[1]`` along z);
* box: its 8 corners (half-sizes ``geom_size``);
* cylinder: ``rim_points`` points on each of its two rims;
* ellipsoid: 26 points of its surface (the directions of a 3 x 3 x 3 grid);
* mesh: the vertices of the convex hull of MuJoCo's compiled vertices (MuJoCo collides a
  mesh through its convex hull too; scipy's Qhull), skipped with ``meshes=False``.

Planes and height fields (the world's floors), and geoms of bodies fixed to the world, are
skipped with a note: they never move; the ground of :func:`~denoc_bridge.simulate` is a
:class:`~denoc_bridge.Ground`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial import ConvexHull

from denoc_bridge.errors import ModelError
from denoc_bridge.io.mjcf import import_mujoco
from denoc_bridge.io.mujoco_layout import wxyz_to_matrix
from denoc_bridge.multibody.contact import ContactPoint

__all__ = ["mjcf_collision_points"]

#: MuJoCo's geom types (mjtGeom)
_PLANE, _HFIELD, _SPHERE, _CAPSULE, _ELLIPSOID, _CYLINDER, _BOX, _MESH = range(8)
_WORDS = {
    _PLANE: "plane",
    _HFIELD: "hfield",
    _SPHERE: "sphere",
    _CAPSULE: "capsule",
    _ELLIPSOID: "ellipsoid",
    _CYLINDER: "cylinder",
    _BOX: "box",
    _MESH: "mesh",
}
_GRID = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)])


def _hull(vertices: np.ndarray) -> np.ndarray:
    try:
        return vertices[ConvexHull(vertices).vertices]
    except Exception:  # flat or degenerate mesh: all its vertices
        return vertices


def _geom_points(m: Any, g: int, rim_points: int) -> list[tuple[np.ndarray, float]]:
    """[(point, radius)] of geom g in its own frame."""
    kind, size = int(m.geom_type[g]), np.asarray(m.geom_size[g], dtype=float)
    if kind == _SPHERE:
        return [(np.zeros(3), float(size[0]))]
    if kind == _CAPSULE:
        return [(np.array([0.0, 0.0, z]), float(size[0])) for z in (-size[1], size[1])]
    if kind == _BOX:
        return [(np.array([sx, sy, sz]) * size[:3], 0.0) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    if kind == _CYLINDER:
        a = 2 * np.pi * np.arange(rim_points) / rim_points
        rim = np.column_stack([size[0] * np.cos(a), size[0] * np.sin(a), np.zeros(rim_points)])
        return [(p + (0.0, 0.0, z), 0.0) for z in (-size[1], size[1]) for p in rim]
    if kind == _ELLIPSOID:
        return [(d / np.linalg.norm(d) * size[:3], 0.0) for d in _GRID]
    if kind == _MESH:
        k = int(m.geom_dataid[g])
        first, count = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
        return [(x, 0.0) for x in _hull(np.array(m.mesh_vert[first : first + count], dtype=float))]
    return []


def mjcf_collision_points(
    model: Any, m: Any, *, margin: float, rim_points: int, meshes: bool
) -> tuple[tuple[ContactPoint, ...], list[str]]:
    """``(points, notes)`` of the compiled ``mujoco.MjModel`` m that ``model`` was loaded from
    (see the module docstring); each point named ``body:geom#i``."""
    mj = import_mujoco()
    frames = {f.name: f for f in model.frames if f.kind == "link"}
    points: list[ContactPoint] = []
    notes: list[str] = []
    for g in range(m.ngeom):
        if not (int(m.geom_contype[g]) or int(m.geom_conaffinity[g])):
            continue  # a picture only: MuJoCo never collides it
        b = int(m.geom_bodyid[g])
        body = mj.mj_id2name(m, mj.mjtObj.mjOBJ_BODY, b) or f"body{b}"
        name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
        kind = int(m.geom_type[g])
        where = f"geom '{name}' ({_WORDS.get(kind, kind)}) of body '{body}'"
        frame = frames.get(body)
        if frame is None:
            raise ModelError(f"{where}: body '{body}' is not a link or frame of model '{model.name}'")
        if frame.link < 0:
            notes.append(f"{where}: fixed to the world, skipped (it never moves)")
            continue
        if kind == _MESH and not meshes:
            notes.append(f"{where}: skipped (meshes=False)")
            continue
        local = _geom_points(m, g, rim_points)
        if not local:
            notes.append(f"{where}: skipped")
            continue
        Rg, pg = wxyz_to_matrix(m.geom_quat[g]), np.asarray(m.geom_pos[g], dtype=float)
        R0, p0 = np.asarray(frame.rotation), np.asarray(frame.translation)
        for j, (x, radius) in enumerate(local):
            points.append(ContactPoint(frame.link, p0 + R0 @ (pg + Rg @ x), radius, margin, f"{body}:{name}#{j}"))
    return tuple(points), notes
