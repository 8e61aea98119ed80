"""A mesh's contact candidates (issue 49): a sparse subset of its convex hull's vertices
(io.mesh_points.sparse_hull) with an exact support error, the default of collision_points; the
whole hull with hull=True."""

from __future__ import annotations

import numpy as np
import pytest

import denoc_bridge as db
import denoc_bridge.io.collision as collision
from denoc_bridge.errors import InputError
from denoc_bridge.io.collision import MESH_TOLERANCE, collision_points
from denoc_bridge.io.mesh_points import sparse_hull, support_error


def _sphere(n: int, radius: float) -> np.ndarray:
    """n points on a sphere (a Fibonacci lattice): every one a vertex of their hull."""
    i = np.arange(n) + 0.5
    z = 1 - 2 * i / n
    a = np.pi * (3 - np.sqrt(5)) * i
    r = np.sqrt(1 - z * z)
    return radius * np.column_stack([r * np.cos(a), r * np.sin(a), z]) + (0.3, -0.2, 0.1)


def _directional_error(X: np.ndarray, S: np.ndarray, n: int = 20_000) -> float:
    """max_d [max_X d.x - max_S d.x] over n random unit directions (fixed seed): a lower bound
    of the exact support error."""
    d = np.random.default_rng(7).standard_normal((n, 3))
    d /= np.linalg.norm(d, axis=1)[:, None]
    return float(((X @ d.T).max(axis=0) - (S @ d.T).max(axis=0)).max())


def test_support_error_is_exact_on_a_cube():
    """A unit cube without one corner: the corner is 1/sqrt(3) from the plane through its three
    neighbours, the hull of the seven others; with every corner the error is 0; a subset of one
    point is as far as the farthest corner."""
    cube = np.array([(x, y, z) for x in (0.0, 1.0) for y in (0.0, 1.0) for z in (0.0, 1.0)])
    assert support_error(cube, cube[:7]) == pytest.approx(1 / np.sqrt(3), rel=1e-14)
    assert support_error(cube, cube) == 0.0
    assert support_error(cube, cube[:1]) == pytest.approx(np.sqrt(3), rel=1e-14)
    assert support_error(cube, cube[[0, 7]]) == pytest.approx(np.sqrt(2 / 3), rel=1e-14)  # a diagonal
    assert support_error(cube, cube[[0, 3, 5]]) == pytest.approx(support_error(cube, cube[[5, 0, 3]]), rel=1e-14)


def test_sparse_hull_meets_its_tolerance_with_a_subset():
    """On 600 points of a sphere of radius 0.1 m: increasing unique indices, fewer points,
    the support error returned is the exact one and within the tolerance, and no direction of
    20,000 finds more (the directions reach 80 % of it: the exact error is not an overestimate)."""
    X = _sphere(600, 0.1)
    for tol in (5e-3, 2e-3, 1e-3):
        idx, err = sparse_hull(X, tol)
        assert np.all(np.diff(idx) > 0) and idx[0] >= 0 and idx[-1] < len(X)
        assert len(idx) < (len(X) / 4 if tol == 5e-3 else len(X))
        assert 0 < err <= tol
        assert err == pytest.approx(support_error(X, X[idx]), rel=1e-12)
        assert 0.8 * err <= _directional_error(X, X[idx]) <= err + 1e-15
    assert len(sparse_hull(X, 1e-3)[0]) > len(sparse_hull(X, 5e-3)[0])


def test_a_cap_and_the_limits():
    """max_points stops it (the error then the exact one, above the tolerance); tolerance 0 keeps
    every vertex of a strictly convex set; a huge tolerance keeps the one farthest from the
    centroid; the same input gives the same subset."""
    X = _sphere(300, 0.05)
    idx, err = sparse_hull(X, 0.0, 10)
    assert len(idx) == 10 and err == pytest.approx(support_error(X, X[idx]), rel=1e-12) and err > 1e-3
    assert len(sparse_hull(X, 0.0)[0]) == len(X)
    far = np.argmax(np.linalg.norm(X - X.mean(axis=0), axis=1))
    assert sparse_hull(X, 1.0)[0].tolist() == [far]
    a, b = sparse_hull(X, 1e-3), sparse_hull(X.copy(), 1e-3)
    assert np.array_equal(a[0], b[0]) and a[1] == b[1]
    flat = np.column_stack([_sphere(200, 0.1)[:, :2], np.zeros(200)])  # a flat set: a joggled hull
    idx, err = sparse_hull(flat, 1e-3)
    assert err <= 1e-3 and len(idx) < 200 and _directional_error(flat, flat[idx]) <= err + 1e-15


@pytest.mark.parametrize(
    "kwargs, words",
    [
        ({"mesh_tolerance": -1e-3}, "mesh_tolerance must be a finite number >= 0"),
        ({"mesh_tolerance": float("nan")}, "mesh_tolerance must be a finite number >= 0"),
        ({"mesh_tolerance": "2mm"}, "mesh_tolerance must be a number >= 0"),
        ({"mesh_points": 0}, "mesh_points must be None or an integer >= 1, got 0"),
        ({"mesh_points": 2.5}, "mesh_points must be None or an integer >= 1"),
        ({"mesh_points": True}, "mesh_points must be None or an integer >= 1"),
    ],
)
def test_bad_sampling_is_named(kwargs, words):
    solo = db.load_robot("solo12")
    with pytest.raises(InputError, match=words):
        collision_points(solo, **kwargs)
    with pytest.raises(InputError, match=words):
        sparse_hull(_sphere(10, 1.0), kwargs.get("mesh_tolerance", 1e-3), kwargs.get("mesh_points"))


def _by_mesh(points) -> dict[str, np.ndarray]:
    out: dict[str, list] = {}
    for c in points:
        out.setdefault(c.name.split("#")[0], []).append(c.point)
    return {name: np.array(p) for name, p in out.items()}


@pytest.mark.parametrize("name, full, most", [("solo12", 7888, 1000), ("talos", 11593, 5000)])
def test_robot_meshes_give_a_subset_within_the_tolerance(name, full, most):
    """Every mesh of solo12 and talos (example-robot-data's files): the default points are
    vertices of the mesh's hull (hull=True gives them all, as coal's Qhull hull has them), far
    fewer, and each mesh's support error, exactly, within MESH_TOLERANCE (1 mm); the primitive
    shapes keep their points; the same points on a second read."""
    model = db.load_robot(name)
    hull, notes = collision_points(model, hull=True)
    assert not notes and len(hull) == full
    collision._sparse_vertices.cache_clear()
    sparse, notes = collision_points(model)
    assert not notes and len(sparse) < most
    whole, some = _by_mesh(hull), _by_mesh(sparse)
    assert whole.keys() == some.keys()
    for mesh, X in whole.items():
        S = some[mesh]
        if ":mesh" not in mesh:
            assert np.array_equal(S, X)
            continue
        assert len(S) < len(X)
        assert all(np.any(np.all(X == s, axis=1)) for s in S)  # each one of the hull's vertices
        assert support_error(X, S) <= MESH_TOLERANCE + 1e-12, mesh
    collision._sparse_vertices.cache_clear()
    again, _ = collision_points(model)
    assert [(c.name, c.link, tuple(c.point)) for c in again] == [(c.name, c.link, tuple(c.point)) for c in sparse]


def test_the_tolerance_and_cap_reach_the_robot():
    """A looser tolerance gives fewer points, a cap at most that many per mesh; solo12's foot
    keeps its lowest point within the tolerance of the hull's (16 mm below the FOOT frame)."""
    solo = db.load_robot("solo12")
    default = collision_points(solo)[0]
    loose = collision_points(solo, mesh_tolerance=5e-3)[0]
    capped = collision_points(solo, mesh_points=8)[0]
    assert len(loose) < len(default)
    assert len(capped) == 17 * 8 and all(len(p) == 8 for p in _by_mesh(capped).values())
    q = db.neutral_configuration(solo)
    R, p = db.forward_kinematics(solo, q)
    frame = next(f for f in solo.frames if f.name == "FL_FOOT")
    z_frame = (p[frame.link] + R[frame.link] @ frame.translation)[2]
    for points in (default, collision_points(solo, hull=True)[0]):
        z = min((p[c.link] + R[c.link] @ c.point)[2] for c in points if c.name.startswith("FL_FOOT:mesh"))
        assert z_frame - 0.016 - 1e-4 <= z <= z_frame - 0.016 + MESH_TOLERANCE
