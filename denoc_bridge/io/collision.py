"""Contact candidates from a URDF's ``<collision>`` shapes (an MJCF model's geoms:
:mod:`denoc_bridge.io.mjcf_collision`).

``load_urdf`` reads dynamics only; this module reads the ``<collision>`` elements of the same
file (with the same hardened parser) and places them on the model's links through the model's
frames (a link merged by a fixed joint is a frame of its moving parent):

* ``<sphere radius>``: one contact sphere (its lowest point, whatever the orientation);
* ``<box size>``: its 8 corners;
* ``<cylinder radius length>``: ``rim_points`` points on each of its two rims;
* ``<capsule radius length>`` (an extension some files use): two contact spheres at the ends
  of its axis;
* ``<mesh filename scale>``: a sparse subset of the vertices of its convex hull (read by coal,
  the mesh loader Pinocchio itself uses, and its Qhull hull; ``package://`` names are looked up
  in the URDF's ancestor folders, as the pictures do), chosen by
  :func:`denoc_bridge.io.mesh_points.sparse_hull` so that its hull is within ``mesh_tolerance``
  (default :data:`MESH_TOLERANCE`, 1 mm) of the whole hull in every direction (the support
  error, computed exactly), at most ``mesh_points`` per mesh; ``hull=True`` keeps every vertex.
  A hull has tens to about a thousand vertices and every candidate is tested at every step:
  measured, solo12 7,888 -> 778 points, talos 11,593 -> 4,141, each mesh's support error at
  most 1 mm (docs/guide/contact.md).  A mesh that cannot be found or read is skipped and listed
  in the notes (``meshes=False`` skips meshes).

Collision shapes on links fixed to the base of a fixed-base robot never move and are skipped.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

import numpy as np

from denoc_bridge.errors import InputError, URDFError
from denoc_bridge.io.mesh_points import check_sampling, sparse_hull
from denoc_bridge.io.mjcf import import_mujoco, is_mjcf
from denoc_bridge.io.mjcf_collision import mjcf_collision_points
from denoc_bridge.io.urdf_xml import parse_xml, read_source
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.contact import ContactPoint
from denoc_bridge.spatial import rpy_to_matrix

__all__ = ["collision_points", "MESH_TOLERANCE", "MESH_POINTS"]

#: a mesh's candidates by default: its hull's vertices thinned until their hull is within this
#: distance (m) of the whole hull (:func:`denoc_bridge.io.mesh_points.sparse_hull`)
MESH_TOLERANCE = 1e-3
#: ... and at most this many per mesh (None: no cap)
MESH_POINTS: int | None = None


def _floats(elem: ET.Element, attr: str, n: int, where: str, default: str | None = None) -> np.ndarray:
    text = elem.get(attr, default)
    try:
        values = np.array([float(x) for x in (text or "").split()])
    except ValueError:
        values = np.zeros(0)
    if values.shape != (n,) or not np.all(np.isfinite(values)):
        raise URDFError(f'{where}: {attr}="{text}" must be {n} finite number{"s" if n > 1 else ""}')
    return values


def _positive(elem: ET.Element, attr: str, where: str) -> float:
    x = float(_floats(elem, attr, 1, where)[0])
    if not x > 0:
        raise URDFError(f'{where}: {attr}="{elem.get(attr)}" must be positive')
    return x


@functools.lru_cache(maxsize=64)
def _hull_vertices(path: str, mtime: float, sx: float, sy: float, sz: float) -> np.ndarray:
    """The vertices of the convex hull of a mesh file, scaled, (n, 3)."""
    import coal  # Pinocchio's collision library (installed with pin), as pinocchio itself: on first use

    mesh = coal.MeshLoader().load(path, np.array([sx, sy, sz]))
    mesh.buildConvexHull(False, "Qt")
    hull = mesh.convex
    out = np.array(hull.points(), dtype=float).reshape(-1, 3)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=256)
def _sparse_vertices(
    path: str, mtime: float, sx: float, sy: float, sz: float, tolerance: float, max_points: int | None
) -> np.ndarray:
    """The subset of :func:`_hull_vertices` :func:`~denoc_bridge.io.mesh_points.sparse_hull`
    keeps, (m, 3)."""
    vertices = _hull_vertices(path, mtime, sx, sy, sz)
    out = vertices[sparse_hull(vertices, tolerance, max_points)[0]]
    out.setflags(write=False)
    return out


def _mesh_file(filename: str, urdf_dir: Path | None) -> Path | None:
    """The file a URDF mesh name points to: ``package://pkg/rest`` in an ancestor folder of the
    URDF holding ``pkg``, ``file://`` paths, or a path relative to the URDF; None if not found."""
    if filename.startswith("file://"):
        path = Path(filename[len("file://") :])
        return path if path.is_file() else None
    if filename.startswith("package://"):
        rest = filename[len("package://") :]
        if urdf_dir is None:
            return None
        for folder in (urdf_dir, *urdf_dir.parents):
            if (folder / rest).is_file():
                return folder / rest
        return None
    path = Path(filename) if urdf_dir is None or os.path.isabs(filename) else urdf_dir / filename
    return path if path.is_file() else None


def _mesh_points(
    shape: ET.Element, where: str, urdf_dir: Path | None, notes: list[str], sampling: tuple[float, int | None] | None
) -> list[tuple[np.ndarray, float]]:
    filename = shape.get("filename", "")
    scale = _floats(shape, "scale", 3, f"{where} <mesh>", "1 1 1")
    path = _mesh_file(filename, urdf_dir)
    if path is None:
        notes.append(f"{where}: mesh '{filename}' not found, skipped")
        return []
    try:
        key = (str(path), path.stat().st_mtime, *map(float, scale))
        vertices = _hull_vertices(*key) if sampling is None else _sparse_vertices(*key, *sampling)
    except Exception as exc:  # coal refuses the file: no contact points from it
        notes.append(f"{where}: mesh '{filename}' not read ({exc}), skipped")
        return []
    return [(x, 0.0) for x in vertices]


def _shape_points(geom: ET.Element, where: str, rim_points: int) -> tuple[list[tuple[np.ndarray, float]], str]:
    """[(point, radius)] of one ``<geometry>`` in the collision frame, and its kind."""
    shape = next(iter(geom), None)
    if shape is None:
        raise URDFError(f"{where}: <geometry> is empty")
    kind = shape.tag
    if kind == "sphere":
        return [(np.zeros(3), _positive(shape, "radius", f"{where} <sphere>"))], kind
    if kind == "box":
        size = _floats(shape, "size", 3, f"{where} <box>")
        if not np.all(size > 0):
            raise URDFError(f'{where} <box>: size="{shape.get("size")}" must be positive')
        h = size / 2
        corners = [np.array([sx, sy, sz]) * h for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)]
        return [(c, 0.0) for c in corners], kind
    if kind in ("cylinder", "capsule"):
        r = _positive(shape, "radius", f"{where} <{kind}>")
        half = _positive(shape, "length", f"{where} <{kind}>") / 2
        if kind == "capsule":
            return [(np.array([0.0, 0.0, -half]), r), (np.array([0.0, 0.0, half]), r)], kind
        a = 2 * np.pi * np.arange(rim_points) / rim_points
        rim = np.column_stack([r * np.cos(a), r * np.sin(a), np.zeros(rim_points)])
        return [(p + (0.0, 0.0, z), 0.0) for z in (-half, half) for p in rim], kind
    return [], kind


def _root_tag(text: str) -> str | None:
    """The name of the first element of XML text (after the declaration and comments), or None."""
    found = re.search(r"<([A-Za-z_][\w.:-]*)", re.sub(r"<!--.*?-->|<\?.*?\?>", "", text[:65536], flags=re.S))
    return found.group(1) if found else None


def collision_points(
    model: Any,
    source: str | os.PathLike[str] | bytes | None = None,
    *,
    margin: float = 0.0,
    rim_points: int = 8,
    meshes: bool = True,
    hull: bool = False,
    mesh_tolerance: float = MESH_TOLERANCE,
    mesh_points: int | None = MESH_POINTS,
) -> tuple[tuple[ContactPoint, ...], list[str]]:
    """``(points, notes)``: the contact candidates of ``model`` from the ``<collision>``
    shapes of its URDF (``source``, default the file it was loaded from, ``model.source``),
    each a :class:`~denoc_bridge.multibody.contact.ContactPoint` named ``link:shape#i``, and
    notes on what was skipped (meshes not found or, with ``meshes=False``, all meshes; unknown
    shapes; shapes fixed to the base).  A model loaded from an MJCF file gets the points of the
    geoms MuJoCo collides (:mod:`denoc_bridge.io.mjcf_collision`), named ``body:geom#i``.

    A mesh gives a sparse subset of its convex hull's vertices, whose hull is within
    ``mesh_tolerance`` (m, default 1 mm) of the whole hull in every direction (its support
    error: a ground can reach at most that far into the mesh's hull before a point touches it),
    with at most ``mesh_points`` points per mesh (default None: no cap; a cap may leave the error
    above the tolerance); ``hull=True`` keeps every vertex of the hull (as before issue 49).

    Raises
    ------
    InputError
        No source (a model not loaded from a file), a ``rim_points`` below 3, a
        ``mesh_tolerance`` below 0, a ``mesh_points`` below 1.
    URDFError
        A shape with missing or non-positive dimensions (naming the link), a collision on a
        link that is not in the model.
    ModelError
        An MJCF geom on a body that is not in the model.
    """
    _check_model(model)
    if isinstance(rim_points, bool) or not isinstance(rim_points, (int, np.integer)) or rim_points < 3:
        raise InputError(f"rim_points must be an integer >= 3, got {rim_points!r}")
    check_sampling(mesh_tolerance, mesh_points)
    sampling = None if hull else (float(mesh_tolerance), None if mesh_points is None else int(mesh_points))
    if source is None:
        source = getattr(model, "source", None)
        if source is None:
            raise InputError(
                f"model '{model.name}' was not loaded from a file: pass its URDF (for its <collision> "
                "shapes) or its MJCF (for its geoms) as source=, a path or the text"
            )
    mjcf_text = isinstance(source, str) and _root_tag(source) == "mujoco"
    if mjcf_text or (isinstance(source, (str, os.PathLike)) and "<" not in os.fspath(source) and is_mjcf(source)):
        mj = import_mujoco()  # MuJoCo's geoms, as it compiles them
        m = mj.MjModel.from_xml_string(source) if mjcf_text else mj.MjModel.from_xml_path(os.fspath(source))
        return mjcf_collision_points(
            model, m, margin=margin, rim_points=int(rim_points), meshes=meshes, sampling=sampling
        )
    text, origin, path = read_source(source)
    urdf_dir = Path(path).resolve().parent if path is not None else None
    robot = parse_xml(text, origin)
    frames = {f.name: f for f in model.frames if f.kind == "link"}
    points: list[ContactPoint] = []
    notes: list[str] = []
    for link in robot.findall("link"):
        name = link.get("name", "")
        for i, col in enumerate(link.findall("collision")):
            where = f"{origin}: link '{name}' <collision> {i + 1}"
            geom = col.find("geometry")
            if geom is None:
                notes.append(f"{where}: no <geometry>, skipped")
                continue
            frame = frames.get(name)
            if frame is None:
                raise URDFError(f"{where}: link '{name}' is not a link of model '{model.name}'")
            if frame.link < 0:
                notes.append(f"{where}: fixed to the base, skipped (it never moves)")
                continue
            shape_points, kind = _shape_points(geom, where, int(rim_points))
            if kind == "mesh" and meshes:
                shape_points = _mesh_points(next(iter(geom)), where, urdf_dir, notes, sampling)
                if not shape_points:
                    continue
            elif not shape_points:
                notes.append(
                    f"{where}: <{kind}> skipped (meshes=False)" if kind == "mesh" else f"{where}: <{kind}> skipped"
                )
                continue
            origin_elem = col.find("origin")
            Rc, pc = np.eye(3), np.zeros(3)
            if origin_elem is not None:
                pc = _floats(origin_elem, "xyz", 3, f"{where} <origin>", "0 0 0")
                Rc = rpy_to_matrix(_floats(origin_elem, "rpy", 3, f"{where} <origin>", "0 0 0"))
            R0, p0 = np.asarray(frame.rotation), np.asarray(frame.translation)
            for j, (x, radius) in enumerate(shape_points):
                p = p0 + R0 @ (pc + Rc @ x)
                points.append(ContactPoint(frame.link, p, radius, margin, f"{name}:{kind}#{j}"))
    return tuple(points), notes
