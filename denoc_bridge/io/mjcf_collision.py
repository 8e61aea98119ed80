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
  mesh through its convex hull too; scipy's Qhull), thinned as a URDF mesh's are
  (:func:`denoc_bridge.io.mesh_points.sparse_hull`, ``sampling``), skipped with ``meshes=False``.

Planes and height fields (the world's floors), and geoms of bodies fixed to the world, are
skipped with a note: they never move; the ground of :func:`~denoc_bridge.simulate` is a
:class:`~denoc_bridge.Ground`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial import ConvexHull

from denoc_bridge.io.mesh_points import sparse_hull
from denoc_bridge.io.mjcf import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    geom_on_link,
    import_mujoco,
    mesh_arrays,
)
from denoc_bridge.multibody.contact import ContactPoint

__all__ = ["mjcf_collision_points"]

_WORDS = {
    GEOM_PLANE: "plane",
    GEOM_HFIELD: "hfield",
    GEOM_SPHERE: "sphere",
    GEOM_CAPSULE: "capsule",
    GEOM_ELLIPSOID: "ellipsoid",
    GEOM_CYLINDER: "cylinder",
    GEOM_BOX: "box",
    GEOM_MESH: "mesh",
}
_GRID = np.array([(x, y, z) for x in (-1, 0, 1) for y in (-1, 0, 1) for z in (-1, 0, 1) if (x, y, z) != (0, 0, 0)])


def _hull(vertices: np.ndarray) -> np.ndarray:
    try:
        return vertices[ConvexHull(vertices).vertices]
    except Exception:  # flat or degenerate mesh: all its vertices
        return vertices


def _geom_points(
    m: Any, g: int, rim_points: int, sampling: tuple[float, int | None] | None = None
) -> list[tuple[np.ndarray, float]]:
    """[(point, radius)] of geom g in its own frame."""
    kind, size = int(m.geom_type[g]), np.asarray(m.geom_size[g], dtype=float)
    if kind == GEOM_SPHERE:
        return [(np.zeros(3), float(size[0]))]
    if kind == GEOM_CAPSULE:
        return [(np.array([0.0, 0.0, z]), float(size[0])) for z in (-size[1], size[1])]
    if kind == GEOM_BOX:
        return [(np.array([sx, sy, sz]) * size[:3], 0.0) for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
    if kind == GEOM_CYLINDER:
        a = 2 * np.pi * np.arange(rim_points) / rim_points
        rim = np.column_stack([size[0] * np.cos(a), size[0] * np.sin(a), np.zeros(rim_points)])
        return [(p + (0.0, 0.0, z), 0.0) for z in (-size[1], size[1]) for p in rim]
    if kind == GEOM_ELLIPSOID:
        return [(d / np.linalg.norm(d) * size[:3], 0.0) for d in _GRID]
    if kind == GEOM_MESH:
        vertices = _hull(mesh_arrays(m, g)[0])
        if sampling is not None:
            vertices = vertices[sparse_hull(vertices, *sampling)[0]]
        return [(x, 0.0) for x in vertices]
    return []


def mjcf_collision_points(
    model: Any,
    m: Any,
    *,
    margin: float,
    rim_points: int,
    meshes: bool,
    sampling: tuple[float, int | None] | None = None,
) -> tuple[tuple[ContactPoint, ...], list[str]]:
    """``(points, notes)`` of the compiled ``mujoco.MjModel`` m that ``model`` was loaded from
    (see the module docstring); each point named ``body:geom#i``.  ``sampling``: a mesh's
    ``(tolerance, max_points)`` for :func:`~denoc_bridge.io.mesh_points.sparse_hull`, None for
    every vertex of its hull."""
    mj = import_mujoco()
    points: list[ContactPoint] = []
    notes: list[str] = []
    for g in range(m.ngeom):
        if not (int(m.geom_contype[g]) or int(m.geom_conaffinity[g])):
            continue  # a picture only: MuJoCo never collides it
        body, link, R, p = geom_on_link(model, m, g)
        name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
        kind = int(m.geom_type[g])
        where = f"geom '{name}' ({_WORDS.get(kind, kind)}) of body '{body}'"
        if link < 0:
            notes.append(f"{where}: fixed to the world, skipped (it never moves)")
            continue
        if kind == GEOM_MESH and not meshes:
            notes.append(f"{where}: skipped (meshes=False)")
            continue
        local = _geom_points(m, g, rim_points, sampling)
        if not local:
            notes.append(f"{where}: skipped")
            continue
        for j, (x, radius) in enumerate(local):
            points.append(ContactPoint(link, p + R @ x, radius, margin, f"{body}:{name}#{j}"))
    return tuple(points), notes
