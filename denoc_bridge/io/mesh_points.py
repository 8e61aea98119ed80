"""A mesh's contact candidates: a sparse subset of its convex hull's vertices whose hull is
within a bounded distance of the whole hull (used by :mod:`denoc_bridge.io.collision` and
:mod:`denoc_bridge.io.mjcf_collision`).

A robot touches a ground (a half-space) with the lowest point of a shape along the ground's
normal, its *support point*: a convex hull's vertices give every support point of the mesh, but
a hull has tens to about a thousand vertices (talos: 11,593 in all) and every one is transformed
and tested at every step.  The *support error* of a subset ``S`` of the hull's vertices ``H``,

    max over unit directions d of [max_{x in H} d.x - max_{x in S} d.x],

is how far the subset's lowest point can sit above the hull's, whatever the orientation: the
most a ground can penetrate the mesh's hull while no point of ``S`` touches it.  It is the
Hausdorff distance between the two hulls, ``max_{v in H} dist(v, conv S)``, computed exactly
here (point-triangle distances to the triangulated ``conv S``).

:func:`sparse_hull` chooses ``S`` greedily: the vertex farthest from the centroid, then, over
2,000 directions spread on the sphere, the vertex that supports the direction where the subset
falls shortest; once those directions are all within the tolerance, the vertex farthest from
``conv S`` (exactly) while that distance is above it.  It stops at ``tolerance`` or at
``max_points`` points, whichever comes first.  No randomness: the same vertices give the same
subset.
"""

from __future__ import annotations

import numpy as np
from scipy.spatial import ConvexHull

from denoc_bridge.errors import InputError

__all__ = ["sparse_hull", "support_error", "check_sampling"]


def _fibonacci_sphere(n: int) -> np.ndarray:
    """n unit directions spread evenly on the sphere (a Fibonacci lattice), (n, 3)."""
    i = np.arange(n) + 0.5
    z = 1.0 - 2.0 * i / n
    r = np.sqrt(1.0 - z * z)
    a = np.pi * (3.0 - np.sqrt(5.0)) * i
    return np.column_stack([r * np.cos(a), r * np.sin(a), z])


_DIRECTIONS = np.vstack([np.eye(3), -np.eye(3), _fibonacci_sphere(2000)])
_DIRECTIONS.setflags(write=False)
_BATCH = 32  # the stale distances computed again at a time


def check_sampling(tolerance: float, max_points: int | None) -> None:
    """``tolerance`` a finite number >= 0 (m), ``max_points`` None or an integer >= 1; else an
    :class:`~denoc_bridge.errors.InputError` naming the argument."""
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float, np.integer, np.floating)):
        raise InputError(f"mesh_tolerance must be a number >= 0 (m), got {tolerance!r}")
    if not (np.isfinite(tolerance) and tolerance >= 0):
        raise InputError(f"mesh_tolerance must be a finite number >= 0 (m), got {tolerance!r}")
    if max_points is not None and (
        isinstance(max_points, bool) or not isinstance(max_points, (int, np.integer)) or max_points < 1
    ):
        raise InputError(f"mesh_points must be None or an integer >= 1, got {max_points!r}")


def _segment_distance(P: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """|P - closest point of segment AB|, row by row: P, A, B (k, 3), out (k,)."""
    AB = B - A
    L2 = np.maximum(np.einsum("ki,ki->k", AB, AB), 1e-300)
    t = np.clip(np.einsum("ki,ki->k", P - A, AB) / L2, 0.0, 1.0)
    return np.linalg.norm(P - (A + t[:, None] * AB), axis=1)


def _triangle_distance(P: np.ndarray, A: np.ndarray, B: np.ndarray, C: np.ndarray) -> np.ndarray:
    """The distance of each point P to its triangle (A, B, C), row by row (k, 3 each), (k,);
    degenerate triangles (segments, points) included."""
    d = np.minimum(np.minimum(_segment_distance(P, A, B), _segment_distance(P, B, C)), _segment_distance(P, C, A))
    N = np.cross(B - A, C - A)
    NN = np.einsum("ki,ki->k", N, N)
    ok = NN > 1e-30 * np.maximum(np.einsum("ki,ki->k", B - A, B - A), 1e-300) ** 2
    h = np.einsum("ki,ki->k", P - A, N) / np.where(ok, NN, 1.0)  # the foot Q = P - h N
    Q = P - h[:, None] * N
    inside = ok
    for U, V in ((A, B), (B, C), (C, A)):
        inside = inside & (np.einsum("ki,ki->k", np.cross(V - U, Q - U), N) >= 0.0)
    return np.where(inside, np.minimum(d, np.abs(h) * np.sqrt(NN)), d)


def _distances_to_hull(X: np.ndarray, S: np.ndarray) -> np.ndarray:
    """The distance of each point of X (n, 3) to conv(S) (S: m >= 1 points), exact; 0 inside.

    The point of a convex polytope nearest to a point x outside lies on a facet whose plane x
    is above (x - p is in the normal cone at p, spanned by the normals of the facets through
    p), so only those (point, facet) pairs are measured."""
    if len(S) <= 3:
        tri = np.array([[0, min(1, len(S) - 1), len(S) - 1]])
        i, f = np.repeat(np.arange(len(X)), 1), np.zeros(len(X), dtype=np.intp)
    else:
        try:
            hull = ConvexHull(S, qhull_options="Qt")
        except Exception:  # S flat (or nearly): a joggled hull triangulates it
            hull = ConvexHull(S, qhull_options="QJ")
        tri = hull.simplices
        plane = X @ hull.equations[:, :3].T + hull.equations[:, 3]
        scale = max(float(np.abs(S).max()), 1e-300)
        outside = plane.max(axis=1) > 1e-12 * scale
        i, f = np.nonzero(outside[:, None] & (plane > -1e-12 * scale))
    out = np.zeros(len(X))
    if len(i):
        d = _triangle_distance(X[i], S[tri[f, 0]], S[tri[f, 1]], S[tri[f, 2]])
        near = np.full(len(X), np.inf)
        np.minimum.at(near, i, d)
        out = np.where(np.isfinite(near), near, 0.0)
    return out


def support_error(vertices: np.ndarray, subset: np.ndarray) -> float:
    """``max_d [max_{x in vertices} d.x - max_{x in subset} d.x]`` over unit directions d, exactly:
    the largest distance of a vertex to the convex hull of ``subset`` (m; 0 when ``subset`` holds
    every extreme vertex).  ``subset`` is a subset of ``vertices``, (m >= 1, 3)."""
    X = np.asarray(vertices, dtype=float).reshape(-1, 3)
    S = np.asarray(subset, dtype=float).reshape(-1, 3)
    if len(S) == 0:
        raise InputError("support_error: the subset is empty")
    return float(_distances_to_hull(X, S).max()) if len(X) else 0.0


def sparse_hull(vertices: np.ndarray, tolerance: float, max_points: int | None = None) -> tuple[np.ndarray, float]:
    """``(indices, error)``: the indices (increasing) of a subset of ``vertices`` (a convex hull's
    vertices, (n, 3)) whose support error (:func:`support_error`) is ``error`` <= ``tolerance``
    (m), or, when ``max_points`` stops it first, the ``max_points`` vertices chosen and their
    error (see the module docstring).  ``tolerance=0`` keeps every vertex that is not inside
    the hull of the others."""
    check_sampling(tolerance, max_points)
    X = np.asarray(vertices, dtype=float).reshape(-1, 3)
    n = len(X)
    cap = n if max_points is None else min(int(max_points), n)
    if n == 0:
        return np.zeros(0, dtype=np.intp), 0.0
    chosen = [int(np.argmax(np.linalg.norm(X - X.mean(axis=0), axis=1)))]
    support = X @ _DIRECTIONS.T  # (n, D)
    top = support.max(axis=0)
    best = support.argmax(axis=0)
    mine = support[chosen[0]].copy()
    while len(chosen) < cap:  # the directions first: cheap, and close to the exact choice
        gap = top - mine
        j = int(np.argmax(gap))
        if gap[j] <= tolerance or int(best[j]) in chosen:
            break
        chosen.append(int(best[j]))
        np.maximum(mine, support[best[j]], out=mine)
    # then exactly: the vertex farthest from the subset's hull.  A distance only shrinks as the
    # subset grows, so the last one computed bounds it: the largest bounds are computed again
    # (a batch at a time) until the largest is a current one.
    bound = _distances_to_hull(X, X[chosen])
    bound[chosen] = 0.0
    while True:
        k = int(np.argmax(bound))
        if bound[k] <= tolerance or len(chosen) >= cap:  # every distance is within its bound
            return np.array(sorted(chosen), dtype=np.intp), support_error(X, X[chosen])
        fresh = np.zeros(n, dtype=bool)
        hull = X[chosen]
        while True:
            order = np.argsort(-bound, kind="stable")
            batch = order[~fresh[order]][:_BATCH]
            batch = batch[bound[batch] > 0.0]
            if len(batch):
                bound[batch] = _distances_to_hull(X[batch], hull)
                fresh[batch] = True
            k = int(np.argmax(bound))
            if fresh[k] or not len(batch):
                break
        if bound[k] <= tolerance:
            continue
        chosen.append(k)
        bound[k] = 0.0
