"""Geometry for :mod:`denoc_bridge.viz`: triangle meshes in NumPy, colours, link shapes.

Everything here is plain arrays (no meshcat): :mod:`denoc_bridge.viz` turns them into
meshcat commands.

* :func:`link_colors`: one RGB colour per link, by kinematic module, by link, or grey.
* :func:`urdf_visuals`: the ``<visual>`` meshes and primitives of a URDF robot, through
  Pinocchio's geometry loading (``pin.buildGeomFromUrdf``, meshes read by coal), as
  triangle meshes in the frames of the model's links.
* :func:`mjcf_visuals`: the geoms of an MJCF robot as MuJoCo compiled them (spheres,
  capsules, ellipsoids, cylinders, boxes, meshes; groups 0-2, as MuJoCo's viewer shows them,
  and for a body with no geom there its lowest group, e.g. the bones of a skinned dog; planes
  and height fields left to the scene's ground), in the same form;
  :func:`model_visuals` picks the one for the model's file.
* :func:`skeleton`: for robots without visuals and for generated chains, cylinders from
  each joint to its child joints (or to twice the centre of mass for a last link) with a
  radius from the link's inertia about that segment (a solid cylinder's ``m r^2 / 2``),
  and a sphere at each joint.
* :func:`tubes`: the same segments in world coordinates, merged into one low-poly mesh
  (the static picture of models too large for one scene node per link).
* :func:`anchors_polylines`: polylines through every k-th joint of each module (the
  animated picture of such models), drawn as unit rods (:func:`unit_tube`) placed by
  :func:`rod_placements`; :func:`quaternions` turns rotations into three.js key frames.
* :func:`contact_marks`: where a run with ground contact draws each (link, ground) pair's
  contact force, an arrow (:func:`unit_arrow`) from its centre of pressure, and a dot there.
* :func:`framing`: what the camera of an exported scene frames (the robot, robust to parts
  that fly away, following a floating base) and the height of the ground; :func:`ground`
  the ground's plane and grid lines.
"""

from __future__ import annotations

import functools
import os
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from denoc_bridge.errors import InputError
from denoc_bridge.io.mjcf import (
    GEOM_BOX,
    GEOM_CAPSULE,
    GEOM_CYLINDER,
    GEOM_ELLIPSOID,
    GEOM_HFIELD,
    GEOM_MESH,
    GEOM_PLANE,
    GEOM_SPHERE,
    compiled_mjcf,
    geom_on_link,
    is_mjcf,
    mesh_arrays,
)
from denoc_bridge.io.robots import _erd_search_dirs
from denoc_bridge.multibody.constraints import JointCoupling
from denoc_bridge.multibody.joints import JointType

#: Module / link colours (matplotlib's tab10 without its red, kept for loop closures).
PALETTE = (
    np.array(
        [
            (0x1F, 0x77, 0xB4),
            (0xFF, 0x7F, 0x0E),
            (0x2C, 0xA0, 0x2C),
            (0x94, 0x67, 0xBD),
            (0x8C, 0x56, 0x4B),
            (0xE3, 0x77, 0xC2),
            (0xBC, 0xBD, 0x22),
            (0x17, 0xBE, 0xCF),
        ]
    )
    / 255.0
)
GREY = np.array([0.62, 0.63, 0.66])
BASE_COLOR = np.array([0.33, 0.34, 0.37])
LOOP_COLOR = np.array([0xD6, 0x27, 0x28]) / 255.0
#: The contact points' and contact force arrows' colour (near black: no module has it).
CONTACT_COLOR = np.array([0.08, 0.08, 0.10])
#: A contact force arrow is drawn ``ARROW_PER_WEIGHT`` times the robot's size long per robot
#: weight (a robot standing on two feet: two arrows of half its size) ...
ARROW_PER_WEIGHT = 1.0
#: ... and at most ``MAX_ARROW`` times its size (the peaks of an impact are cut there).
MAX_ARROW = 1.5
COLOR_BY = ("module", "link", "none")


@dataclass
class Mesh:
    """Triangles: ``vertices`` (V, 3) float32 and ``faces`` (F, 3) uint32."""

    vertices: np.ndarray
    faces: np.ndarray

    def transformed(self, R, p) -> Mesh:
        return Mesh((self.vertices @ np.asarray(R, float).T + p).astype(np.float32), self.faces)

    @property
    def nbytes(self) -> int:
        return self.vertices.nbytes + self.faces.nbytes


def merge(meshes) -> Mesh:
    meshes = [m for m in meshes if len(m.faces)]
    if not meshes:
        return Mesh(np.zeros((0, 3), np.float32), np.zeros((0, 3), np.uint32))
    offsets = np.cumsum([0] + [len(m.vertices) for m in meshes[:-1]])
    return Mesh(
        np.concatenate([m.vertices for m in meshes]).astype(np.float32),
        np.concatenate([m.faces + o for m, o in zip(meshes, offsets)]).astype(np.uint32),
    )


def link_colors(model, color_by: str) -> np.ndarray:
    """(n_links, 3) RGB in [0, 1]: the palette by kinematic module ("module"), by link
    ("link"), or grey ("none")."""
    if color_by not in COLOR_BY:
        raise InputError(f"color_by must be one of {', '.join(COLOR_BY)}, got {color_by!r}")
    if color_by == "none":
        return np.tile(GREY, (model.n_links, 1))
    index = np.asarray(model.link_module) if color_by == "module" else np.arange(model.n_links)
    return PALETTE[index % len(PALETTE)]


# ----------------------------------------------------------------------------- primitives
def _frame_along(d):
    """Two unit vectors normal to the unit vector d (rows)."""
    t = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    e1 = np.cross(d, t)
    e1 /= np.linalg.norm(e1)
    return e1, np.cross(d, e1)


def tube(a, b, radius: float, sides: int = 12, caps: bool = True) -> Mesh:
    """A cylinder from point a to point b (caps with their own vertices: flat shading)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    d = b - a
    length = np.linalg.norm(d)
    e1, e2 = _frame_along(d / length)
    ang = 2 * np.pi * np.arange(sides) / sides
    ring = radius * (np.cos(ang)[:, None] * e1 + np.sin(ang)[:, None] * e2)
    verts = [a + ring, b + ring]
    i = np.arange(sides)
    j = (i + 1) % sides
    faces = [np.stack([i, j, sides + j], 1), np.stack([i, sides + j, sides + i], 1)]
    if caps:
        for center, base, flip in ((a, 2 * sides, True), (b, 3 * sides + 1, False)):
            verts.append(np.vstack([center + ring, center]))
            tri = np.stack([base + i, base + j, np.full(sides, base + sides)], 1)
            faces.append(tri[:, ::-1] if flip else tri)
    return Mesh(np.vstack(verts).astype(np.float32), np.vstack(faces).astype(np.uint32))


def sphere(center, radius: float, n_lat: int = 10, n_lon: int = 16) -> Mesh:
    """A UV sphere."""
    theta = np.linspace(0, np.pi, n_lat + 1)[:, None]
    phi = 2 * np.pi * np.arange(n_lon)[None, :] / n_lon
    v = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta) + 0 * phi], -1)
    verts = (radius * v.reshape(-1, 3) + np.asarray(center, float)).astype(np.float32)
    r, c = np.meshgrid(np.arange(n_lat), np.arange(n_lon), indexing="ij")
    p00, p01 = r * n_lon + c, r * n_lon + (c + 1) % n_lon
    p10, p11 = p00 + n_lon, p01 + n_lon
    faces = np.concatenate([np.stack([p00, p10, p11], -1).reshape(-1, 3), np.stack([p00, p11, p01], -1).reshape(-1, 3)])
    return Mesh(verts, faces.astype(np.uint32))


def box(half) -> Mesh:
    """An axis-aligned box centred at the origin (24 vertices: flat faces)."""
    h = np.asarray(half, float)
    verts: list[np.ndarray] = []
    faces: list[list[int]] = []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            u, w = (axis + 1) % 3, (axis + 2) % 3
            quad = []
            for su, sw in ((-1, -1), (1, -1), (1, 1), (-1, 1)):
                p = np.zeros(3)
                p[axis], p[u], p[w] = sign * h[axis], su * h[u], sw * h[w]
                quad.append(p)
            k = 4 * len(faces) // 2
            verts += quad
            tri = [[k, k + 1, k + 2], [k, k + 2, k + 3]]
            faces += tri if sign > 0 else [t[::-1] for t in tri]
    return Mesh(np.array(verts, np.float32), np.array(faces, np.uint32))


def unit_tube(radius: float, sides: int = 8) -> Mesh:
    """A cylinder from the origin to (0, 1, 0): scaled along y to join two moving points."""
    return tube((0.0, 0.0, 0.0), (0.0, 1.0, 0.0), radius, sides)


def cone(a, b, radius: float, sides: int = 12) -> Mesh:
    """A cone with its base (a disc of ``radius``) at a and its apex at b."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    e1, e2 = _frame_along((b - a) / np.linalg.norm(b - a))
    ang = 2 * np.pi * np.arange(sides) / sides
    ring = a + radius * (np.cos(ang)[:, None] * e1 + np.sin(ang)[:, None] * e2)
    i = np.arange(sides)
    j = (i + 1) % sides
    verts = np.vstack([ring, b, ring, a])  # the side, then the base with its own vertices
    faces = [
        np.stack([i, j, np.full(sides, sides)], 1),
        np.stack([sides + 1 + j, sides + 1 + i, np.full(sides, 2 * sides + 1)], 1),
    ]
    return Mesh(verts.astype(np.float32), np.vstack(faces).astype(np.uint32))


def unit_arrow(radius: float, sides: int = 12) -> Mesh:
    """An arrow from the origin to (0, 1, 0): a shaft of ``radius`` and a head 2.5 times as
    wide over its last quarter; scaled along y to a force's length (:func:`contact_marks`)."""
    return merge(
        [
            tube((0.0, 0.0, 0.0), (0.0, 0.75, 0.0), radius, sides),
            cone((0.0, 0.75, 0.0), (0.0, 1.0, 0.0), 2.5 * radius, sides),
        ]
    )


def contact_marks(force, point, size: float, weight: float) -> list:
    """Where the contact of a run is drawn, per (link, ground) pair that pushes at some frame:
    ``(pair, (R, p, scale) of its arrow, (p, scale) of its dot)`` over the N frames, from the
    pairs' forces and centres of pressure (N, pairs, 3; NaN points: the pair pushes nothing).

    The arrow goes from the centre of pressure along the force, ``ARROW_PER_WEIGHT * size``
    long per ``weight`` (the robot's weight; N) and at most ``MAX_ARROW * size``.  At a frame
    where the pair pushes nothing both are shrunk to nothing, placed at the next frame where
    it pushes (after its last: at the last), so that no mark flies between frames.  ``weight``
    must be > 0 (a robot without weight: pass the force an arrow of that length stands for)."""
    if not (np.isfinite(weight) and weight > 0):
        raise InputError(f"weight must be a force > 0 (N) that an arrow of the robot's size stands for, got {weight!r}")
    force, point = np.asarray(force, float), np.asarray(point, float)
    n = len(force)
    marks = []
    for k in range(force.shape[1]):
        magnitude = np.linalg.norm(force[:, k], axis=1)
        shown = np.isfinite(point[:, k]).all(axis=1) & (magnitude > 0)
        if not shown.any():
            continue
        frames = np.flatnonzero(shown)
        shown_next = frames[np.clip(np.searchsorted(frames, np.arange(n)), 0, len(frames) - 1)]
        at = point[shown_next, k]
        length = np.minimum(magnitude[shown_next] * ARROW_PER_WEIGHT * size / weight, MAX_ARROW * size)
        direction = force[shown_next, k] / magnitude[shown_next, None]
        R, p, scale = rod_placements(at, at + length[:, None] * direction)
        hidden = ~shown
        scale[hidden] = 1e-9
        dot = np.ones((n, 3))
        dot[hidden] = 1e-9
        marks.append((k, (R, p, scale), (at, dot)))
    return marks


def quaternions(R):
    """(N, 3, 3) -> (N, 4) three.js quaternions (x, y, z, w), signs kept continuous."""
    from scipy.spatial.transform import Rotation

    q = Rotation.from_matrix(R).as_quat()
    flips = np.ones(len(q))
    flips[1:] = np.sign(np.einsum("ij,ij->i", q[1:], q[:-1]) + 1e-300)
    return q * np.cumprod(flips)[:, None]


def rod_placements(A, B):
    """Placement of a unit rod along y (:func:`unit_tube`) from A to B (N, 3):
    (R (N, 3, 3), p (N, 3), scale (N, 3))."""
    d = B - A
    length = np.linalg.norm(d, axis=1)
    u = d / np.where(length > 0, length, 1.0)[:, None]
    u[length <= 0] = (0.0, 1.0, 0.0)
    y = np.array([0.0, 1.0, 0.0])
    axis = np.cross(y, u)
    s, c = np.linalg.norm(axis, axis=1), u @ y
    k = np.where(s[:, None] > 1e-12, axis / np.where(s > 1e-12, s, 1.0)[:, None], [[1.0, 0.0, 0.0]])
    K = np.zeros((len(A), 3, 3))
    K[:, 0, 1], K[:, 0, 2], K[:, 1, 2] = -k[:, 2], k[:, 1], -k[:, 0]
    K -= np.transpose(K, (0, 2, 1))
    R = np.eye(3) + s[:, None, None] * K + (1 - c)[:, None, None] * (K @ K)  # Rodrigues
    scale = np.ones((len(A), 3))
    scale[:, 1] = np.maximum(length, 1e-9)
    return R, A, scale


# ----------------------------------------------------------------------------- URDF visuals
def _package_dirs(path: str) -> list:

    dirs = [os.path.dirname(os.path.dirname(d)) for d in _erd_search_dirs()]
    p = os.path.dirname(os.path.abspath(path))
    for _ in range(4):
        dirs.append(p)
        p = os.path.dirname(p)
    return list(dict.fromkeys(dirs))


def _coal_mesh(geom, notes) -> Mesh | None:
    """A coal geometry (Pinocchio's GeometryObject.geometry) as triangles, or None."""
    kind = type(geom).__name__
    if hasattr(geom, "num_tris") and hasattr(geom, "tri_indices"):
        verts = np.array(geom.vertices(), dtype=np.float32).reshape(-1, 3)
        tri = geom.tri_indices
        faces = np.empty((geom.num_tris, 3), dtype=np.uint32)
        for k in range(geom.num_tris):
            t = tri(k)
            faces[k] = (t[0], t[1], t[2])
        return Mesh(verts, faces)
    if kind == "Box":
        return box(np.asarray(geom.halfSide, float))
    if kind == "Sphere":
        return sphere((0, 0, 0), float(geom.radius))
    if kind in ("Cylinder", "Capsule"):
        r, h = float(geom.radius), float(geom.halfLength)
        parts = [tube((0, 0, -h), (0, 0, h), r, 24, caps=kind == "Cylinder")]
        if kind == "Capsule":
            parts += [sphere((0, 0, -h), r), sphere((0, 0, h), r)]
        return merge(parts)
    if kind == "Ellipsoid":
        s = sphere((0, 0, 0), 1.0)
        return Mesh((s.vertices * np.asarray(geom.radii, np.float32)).astype(np.float32), s.faces)
    notes.append(f"visual geometry of type {kind} not drawn")
    return None


@functools.lru_cache(maxsize=8)
def _load_visuals(path: str, mtime: float, floating_base: bool, joint_names: tuple):
    import pinocchio as pin

    if floating_base:
        pin_model = pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())
    else:
        pin_model = pin.buildModelFromUrdf(path)
    names = tuple(pin_model.names[1:])
    if names != joint_names:
        raise ValueError(f"Pinocchio's joints {names[:3]}... differ from the model's {joint_names[:3]}...")
    gm = pin.buildGeomFromUrdf(pin_model, path, pin.GeometryType.VISUAL, package_dirs=_package_dirs(path))
    out: list[Any] = []
    notes: list[str] = []
    for g in gm.geometryObjects:
        mesh = _coal_mesh(g.geometry, notes)
        if mesh is None or not len(mesh.faces):
            continue
        M = g.placement
        out.append(
            (
                int(g.parentJoint) - 1,
                mesh.transformed(M.rotation, M.translation),
                np.asarray(g.meshColor, float)[:3].copy(),
            )
        )
    return out, tuple(notes)


def urdf_visuals(model):
    """``[(link, Mesh in the link frame, rgb), ...]`` from the ``<visual>`` elements of the
    URDF file the model was loaded from (``model.source``), link -1 being the fixed base;
    None when the model has no URDF file, the file has no visuals, or they cannot be loaded
    (then a warning says why)."""
    path = getattr(model, "source", None)
    if not (isinstance(path, str) and path.lower().endswith(".urdf") and os.path.isfile(path)):
        return None
    try:
        found, notes = _load_visuals(
            os.path.abspath(path), os.path.getmtime(path), bool(model.floating_base), tuple(model.joint_names)
        )
    except Exception as exc:  # missing meshes, unreadable files, ...
        warnings.warn(f"{path}: visual meshes not loaded ({exc}); drawing the links as cylinders", stacklevel=3)
        return None
    for note in notes:
        warnings.warn(f"{path}: {note}", stacklevel=3)
    return found or None


# ----------------------------------------------------------------------------- MJCF geoms
#: the geom groups MuJoCo's viewer shows by default (0, 1, 2)
_SHOWN_GROUPS = 3


def _mj_primitive(kind: int, size: np.ndarray) -> Mesh | None:
    """A MuJoCo geom of a primitive type in its own frame (z: the axis of capsules and cylinders)."""
    if kind == GEOM_SPHERE:
        return sphere((0, 0, 0), float(size[0]))
    if kind == GEOM_ELLIPSOID:
        s = sphere((0, 0, 0), 1.0)
        return Mesh((s.vertices * np.asarray(size[:3], np.float32)).astype(np.float32), s.faces)
    if kind in (GEOM_CAPSULE, GEOM_CYLINDER):
        r, h = float(size[0]), float(size[1])
        parts = [tube((0, 0, -h), (0, 0, h), r, 24, caps=kind == GEOM_CYLINDER)]
        if kind == GEOM_CAPSULE:
            parts += [sphere((0, 0, -h), r), sphere((0, 0, h), r)]
        return merge(parts)
    if kind == GEOM_BOX:
        return box(size[:3])
    return None


def mjcf_geoms(model, m) -> list:
    """``[(geom id, link, R, p, Mesh in the geom's frame, rgba), ...]``: the drawn geoms of the
    compiled ``mujoco.MjModel`` m that ``model`` was loaded from, each placed in its link's
    frame (link -1: the fixed base) through the bodies' frames in ``model.frames``."""
    drawable = []  # (geom, rgba) of the geoms a picture can show
    for g in range(m.ngeom):
        mat = int(m.geom_matid[g])
        rgba = np.array(m.mat_rgba[mat] if mat >= 0 else m.geom_rgba[g], dtype=float)
        if int(m.geom_type[g]) not in (GEOM_PLANE, GEOM_HFIELD) and rgba[3] > 0:
            drawable.append((g, rgba))
    group: dict[int, int] = {}  # per body: the group drawn (0-2 as MuJoCo's viewer, else the body's lowest)
    for g, _ in drawable:
        b, k = int(m.geom_bodyid[g]), int(m.geom_group[g])
        group[b] = min(group.get(b, k), max(k, _SHOWN_GROUPS - 1))
    out = []
    for g, rgba in drawable:
        kind = int(m.geom_type[g])
        if int(m.geom_group[g]) > group[int(m.geom_bodyid[g])]:
            continue
        mesh: Mesh | None
        if kind == GEOM_MESH:
            vertices, faces = mesh_arrays(m, g)
            mesh = Mesh(vertices.astype(np.float32), faces.astype(np.uint32))
        else:
            mesh = _mj_primitive(kind, np.asarray(m.geom_size[g], float))
        if mesh is None or not len(mesh.faces):
            continue
        _, link, R, p = geom_on_link(model, m, g)
        out.append((g, link, R, p, mesh, rgba))
    return out


def mjcf_visuals(model):
    """``[(link, Mesh in the link frame, rgb), ...]`` of the MJCF file the model was loaded
    from (``model.source``), as :func:`urdf_visuals`; None when there is no such file, it draws
    nothing, or it cannot be read (then a warning says why)."""
    path = getattr(model, "source", None)
    if not (isinstance(path, str) and is_mjcf(path)):
        return None
    try:
        m = compiled_mjcf(path)
        found = [(link, mesh.transformed(R, p), rgba[:3].copy()) for _, link, R, p, mesh, rgba in mjcf_geoms(model, m)]
    except Exception as exc:  # the file changed since the model was loaded, ...
        warnings.warn(f"{path}: geoms not drawn ({exc}); drawing the links as cylinders", stacklevel=3)
        return None
    return found or None


def model_visuals(model):
    """The visuals of the model's URDF (:func:`urdf_visuals`) or MJCF file (:func:`mjcf_visuals`)."""
    return urdf_visuals(model) or mjcf_visuals(model)


# ----------------------------------------------------------------------------- skeleton
def _children(model):
    kids = [[] for _ in range(model.n_links)]
    for k, p in enumerate(model.parent):
        if p >= 0:
            kids[p].append(k)
    return kids


def segments(model):
    """Per link: list of (a, b) segments in the link frame: from the joint to each child joint
    and to each loop-closure frame on the link, and to twice the centre of mass when no such
    segment passes near it (a last link, or a bar whose children sit at its joint)."""
    t, com = np.asarray(model.joint_translation), np.asarray(model.com)
    ends = [[t[c] for c in kids] for kids in _children(model)]
    for lc in getattr(model, "loops", ()):
        if isinstance(lc, JointCoupling):  # a row on joint coordinates: nothing to draw
            continue
        for link, x in ((lc.link1, lc.translation1), (lc.link2, lc.translation2)):
            if link >= 0:
                ends[link].append(np.asarray(x, dtype=float))
    out = []
    for k in range(model.n_links):
        segs = []
        for b in ends[k]:
            if np.linalg.norm(b) > 1e-9 and not any(np.allclose(b, s[1]) for s in segs):
                segs.append((np.zeros(3), b))
        c = com[k]
        if np.linalg.norm(c) > 1e-9 and all(_distance(c, b) > 0.2 * np.linalg.norm(c) for _, b in segs):
            segs.append((np.zeros(3), 2 * c))
        out.append(segs)
    return out


def _distance(x, b) -> float:
    """Distance from point x to the segment from the origin to b."""
    u = np.clip(np.dot(x, b) / np.dot(b, b), 0.0, 1.0)
    return float(np.linalg.norm(x - u * b))


def radii(model, segs, extent: float) -> np.ndarray:
    """Per link: the drawn radius.  A solid cylinder of mass m and radius r has ``m r^2 / 2``
    about its axis: r from the inertia about the longest segment, kept within 1%..30% of the
    segment's length (5% for slender rods), then links without a segment take the median of
    their module, and everything at least 0.35% of the picture's extent (so that it shows)."""
    n = model.n_links
    r = np.full(n, np.nan)
    for k, sk in enumerate(segs):
        if not sk:
            continue
        lengths = [np.linalg.norm(b - a) for a, b in sk]
        a, b = sk[int(np.argmax(lengths))]
        L = max(lengths)
        u = (b - a) / L
        m = float(model.mass[k])
        ia = float(u @ model.inertia[k] @ u) if m > 0 else 0.0
        rk = np.sqrt(2 * ia / m) if ia > 0 else 0.05 * L
        r[k] = np.clip(rk, 0.01 * L, 0.3 * L)
    for a, b in zip(model.module_start, model.module_end):
        block = r[a:b]
        if np.isnan(block).any():
            block[np.isnan(block)] = np.nanmedian(block) if not np.isnan(block).all() else np.nan
    if np.isnan(r).all():  # (no link at all: nothing to do)
        r[:] = 0.01 * extent
    elif np.isnan(r).any():
        r[np.isnan(r)] = np.nanmedian(r)
    return np.maximum(r, 0.0035 * extent)


def skeleton(model, extent: float) -> tuple[list[Mesh], np.ndarray]:
    """Per link: a Mesh in the link frame (cylinders and joint spheres; see the module
    docstring), and the radii used."""

    segs = segments(model)
    r = radii(model, segs, extent)
    fine = model.n_links <= 100
    sides, lat, lon = (16, 8, 14) if fine else (8, 5, 8)
    out = []
    for k, sk in enumerate(segs):
        parts = [tube(a, b, r[k], sides) for a, b in sk]
        if model.joint_type[k] != int(JointType.FREEFLYER) or not sk:
            parts.append(sphere((0, 0, 0), 1.35 * r[k], lat, lon))
        out.append(merge(parts))
    return out, r


def tubes(model, R, p, link_ids, r, sides: int = 6) -> Mesh:
    """All skeleton segments of the links ``link_ids``, in world coordinates at placements
    (R, p), as one mesh of open low-poly tubes (vectorised: 10,000 links in milliseconds)."""
    segs = segments(model)
    links: list[int] = []
    starts: list[np.ndarray] = []
    ends: list[np.ndarray] = []
    for k in link_ids:
        for a, b in segs[k]:
            links.append(k)
            starts.append(a)
            ends.append(b)
    if not links:
        return merge([])
    la = np.array(links)
    A = p[la] + np.einsum("kij,kj->ki", R[la], np.array(starts))
    B = p[la] + np.einsum("kij,kj->ki", R[la], np.array(ends))
    d = B - A
    length = np.linalg.norm(d, axis=1, keepdims=True)
    d = d / np.where(length > 0, length, 1.0)
    t = np.where(np.abs(d[:, :1]) < 0.9, [[1.0, 0.0, 0.0]], [[0.0, 1.0, 0.0]])
    e1 = np.cross(d, t)
    e1 /= np.linalg.norm(e1, axis=1, keepdims=True)
    e2 = np.cross(d, e1)
    ang = 2 * np.pi * np.arange(sides) / sides
    ring = r[la, None, None] * (np.cos(ang)[None, :, None] * e1[:, None] + np.sin(ang)[None, :, None] * e2[:, None])
    verts = np.concatenate([A[:, None] + ring, B[:, None] + ring], axis=1)  # (S, 2 sides, 3)
    i = np.arange(sides)
    j = (i + 1) % sides
    local = np.concatenate([np.stack([i, j, sides + j], 1), np.stack([i, sides + j, sides + i], 1)])
    faces = local[None] + (2 * sides * np.arange(len(la)))[:, None, None]
    return Mesh(verts.reshape(-1, 3).astype(np.float32), faces.reshape(-1, 3).astype(np.uint32))


def anchors_polylines(model, max_segments: int):
    """Polylines through every k-th joint of each module, k chosen so that there are about
    ``max_segments`` segments in all (plus at most two per module): a list of (module,
    [(link, point in link frame), ...]).  A child module's polyline starts at its parent's
    last joint; a module without children ends at the tip of its last link (twice its centre
    of mass)."""
    stride = max(1, int(np.ceil(model.n_links / max_segments)))
    parent = np.asarray(model.parent)
    has_children = np.zeros(model.n_links + 1, dtype=bool)
    has_children[parent] = True  # (index -1 lands on the extra entry)
    lines = []
    for i, (a, b) in enumerate(zip(model.module_start, model.module_end)):
        a, last = int(a), int(b) - 1
        pts = [(int(parent[a]), np.zeros(3))] if parent[a] >= 0 else []
        pts += [(k, np.zeros(3)) for k in range(a, last + 1, stride)]
        if pts[-1][0] != last:
            pts.append((last, np.zeros(3)))
        tip = 2 * np.asarray(model.com[last])
        if not has_children[last] and np.linalg.norm(tip) > 1e-9:
            pts.append((last, tip))
        if len(pts) >= 2:
            lines.append((i, pts))
    return lines


# ----------------------------------------------------------------------------- framing
#: A link whose origin goes farther than this many robot sizes from where it started
#: (relative to a followed floating base) "flies away": only its start is framed.
FLY_AWAY = 2.5
#: Largest number of frames of a motion that :func:`framing` looks at.
FRAMING_FRAMES = 60


@dataclass
class Framing:
    """What an exported scene's camera frames, in world coordinates of the first frame.

    ``follow`` (N, 3) is the displacement of the followed floating base since the first frame
    (zeros for a fixed base); ``points`` are the framed points with that displacement taken
    off, ``center`` the middle of their box (``lo``, ``hi``); ``size`` the largest extent of
    the first pose; ``ground`` the height of the ground plane; ``flown`` the links framed at
    their start only (they flew away)."""

    center: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    follow: np.ndarray
    points: np.ndarray
    size: float
    ground: float
    flown: tuple


def followed_link(model) -> int | None:
    """The link a camera follows: the first root link on a free-flyer joint, else None."""
    for k in range(model.n_links):
        if model.parent[k] < 0 and model.joint_type[k] == int(JointType.FREEFLYER):
            return k
    return None


def framing(
    R, p, outline, base: int | None = None, max_frames: int = FRAMING_FRAMES, ground: float | None = None
) -> Framing:
    """Frame a motion: link placements R (N, L, 3, 3), p (N, L, 3); ``outline`` {link: (M, 3)
    points in the link frame} of what is drawn (link -1: the fixed base; every link's origin
    counts too); ``base``: the link to follow (a floating base) or None.

    * Following: the base's displacement since the first frame is taken off every point, so
      a falling robot stays in frame (the scene moves the world the other way).
    * Robust to parts that fly away: the robot's size S is the largest extent of its first
      pose; a link whose origin moves more than ``FLY_AWAY`` * S from its start is framed at
      its start only (panda's fingers sliding metres out of the hand when joint limits are not
      enforced).  Every other link is framed over the whole motion (up to ``max_frames``
      evenly spread frames).
    * The ground: for a floating base, the lowest point of the first pose (the robot stands
      on it at t = 0, then falls through it: no contact is simulated); for a fixed base drawn
      with geometry of its own (a URDF base link), the lowest point of that base (where it is
      mounted; links that swing lower pass through the ground); otherwise (generated chains,
      the rope, the four-bar) just under the lowest framed point.
    * A run with ground contact (``ground``: the height of the contact's horizontal ground):
      the ground is there, and a floating base is followed horizontally only (the robot falls
      onto the ground and stays on it in the picture)."""
    n, n_links = p.shape[:2]
    frames = np.unique(np.linspace(0, n - 1, min(n, max_frames)).round().astype(int))
    follow = p[:, base] - p[0, base] if base is not None else np.zeros((n, 3))
    if ground is not None:
        follow[:, 2] = 0.0
    rel = p[frames] - follow[frames, None]  # link origins, base displacement taken off
    local = {k: np.asarray(v, dtype=float).reshape(-1, 3) for k, v in outline.items() if len(v)}

    def world(link, fr):  # (len(fr), M, 3)
        pts = local.get(link, np.zeros((0, 3)))
        if link < 0:
            return np.broadcast_to(pts, (len(fr),) + pts.shape)
        return np.einsum("fij,mj->fmi", R[fr, link], pts) + p[fr, link, None] - follow[fr, None]

    first = [rel[0]] + [world(k, frames[:1])[0] for k in local]
    first_pts = np.vstack(first)
    size = float(np.ptp(first_pts, axis=0).max()) if len(first_pts) > 1 else 0.0
    size = max(size, 1e-3)
    moved = np.linalg.norm(rel - rel[:1], axis=2).max(axis=0) if n_links else np.zeros(0)
    flown = tuple(int(k) for k in np.flatnonzero(moved > FLY_AWAY * size))
    keep = np.ones(n_links, dtype=bool)
    keep[list(flown)] = False
    points = [rel[:, keep].reshape(-1, 3), rel[0, ~keep]]
    for k in local:
        fr = frames if (k < 0 or keep[k]) else frames[:1]
        points.append(world(k, fr).reshape(-1, 3))
    pts = np.vstack(points)
    if not len(pts):  # no moving link and no geometry (a robot of fixed joints, drawn as nothing)
        pts = np.zeros((1, 3))
    lo, hi = pts.min(axis=0), pts.max(axis=0)
    if ground is not None:
        ground = float(ground)
    elif base is not None:
        ground = float(first_pts[:, 2].min())
    elif -1 in local:
        ground = float(local[-1][:, 2].min())
    else:
        ground = float(lo[2]) - 0.02 * size
    return Framing(0.5 * (lo + hi), lo, hi, follow, pts, size, ground, flown)


def contact_ground(what) -> float | None:
    """The height of the highest horizontal ground a trajectory's contact ran on (the one a
    picture shows), or None (no contact, or only tilted grounds)."""
    heights = [
        float(g.offset)
        for g in getattr(what, "contact_grounds", ())
        if np.allclose(g.normal, (0.0, 0.0, 1.0), atol=1e-12)
    ]
    return max(heights) if heights else None


def _nice(x: float) -> float:
    """1, 2 or 5 times a power of ten, near x."""
    e = 10.0 ** np.floor(np.log10(x))
    return float(min((1.0, 2.0, 5.0, 10.0), key=lambda m: abs(np.log(m * e / x))) * e)


def ground(frame: Framing) -> tuple[Mesh, np.ndarray, float, float]:
    """The ground under a framed robot: (a square plane facing up, grid line end points
    (2K, 3), the square's half width, the grid's spacing), at the height ``frame.ground``,
    centred under the framed box (first frame), a little wider than the robot's box."""
    extent = max(float(np.max(frame.hi[:2] - frame.lo[:2])), frame.size)
    spacing = _nice(extent / 4.0)
    half = spacing * np.ceil(0.9 * extent / spacing)
    cx, cy = (np.round(frame.center[:2] / spacing) * spacing).tolist()
    z = frame.ground
    corners = [(cx + sx * half, cy + sy * half, z) for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
    plane = Mesh(np.array(corners, np.float32), np.array([[0, 1, 2], [0, 2, 3]], np.uint32))
    ticks = np.arange(-half, half + 0.5 * spacing, spacing)
    lines = []
    for t in ticks:
        lines += [(cx + t, cy - half, z), (cx + t, cy + half, z), (cx - half, cy + t, z), (cx + half, cy + t, z)]
    return plane, np.array(lines, dtype=np.float32), float(half), float(spacing)
