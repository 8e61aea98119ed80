"""Compiled ground contact: the active contacts of the robot's points against the grounds, their
rows (normal and two tangents per contact, in the contact frame) and the Delassus operator
``G = J M^-1 J^T`` with ``M^-1 J^T`` by the O(n) articulated solve of the Lagrange multipliers
(:func:`denoc_bridge.kernels.lagrange.minv_rows`, 000 Table 3).

Arrays (packed by :mod:`denoc_bridge.constraints.contact`):

* ``pi, pf, sb``: the tree as :func:`denoc_bridge.kernels.loops.unpack` reads it (no cut joints)
  and its scratch; the world kinematics land there;
* points: ``cl`` (n,) link indices, ``cp`` (n, 3) points in the link frames, ``crad`` (n,)
  sphere radii, ``cmar`` (n,) margins; ``lb`` (L, 5) each link's bounding sphere of its points
  (centre in the link frame, radius with the points' sphere radii, the largest margin; a radius
  of -inf for a link without points): a link whose sphere is farther from every ground than its
  margin has no active point, and its points are not visited (the broad phase:
  :func:`link_bounds`);
* grounds: ``gB`` (g, 3, 3) contact frames (columns t1, t2, n, world), ``goff`` (g,) offsets
  (``n . x = off`` on the plane);
* out: ``J`` (3 m_max, nv) rows ``[t1; t2; n] . (velocity of the contact point)``, ``dist`` (m_max,)
  signed distances, ``pos`` (m_max, 3) world contact points (on the sphere, towards the
  ground), ``pair`` (m_max, 2) (point, ground) of each contact.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.lagrange import minv_rows
from denoc_bridge.kernels.loop_rows import _point_jacobian, world_kinematics
from denoc_bridge.kernels.loops import unpack


def link_bounds(n_links, cl, cp, crad, cmar):
    """``lb`` (L, 5): per link the bounding sphere of its contact points in the link frame (the
    centre of their bounding box, the largest distance from it plus the point's sphere radius)
    and the largest margin; radius -inf for a link without points."""
    lb = np.zeros((n_links, 5))
    lb[:, 3] = -np.inf
    for k in np.unique(cl):
        mine = cl == k
        p = cp[mine]
        c = 0.5 * (p.min(axis=0) + p.max(axis=0))
        lb[k, :3] = c
        lb[k, 3] = float(np.max(np.linalg.norm(p - c, axis=1) + crad[mine]))
        lb[k, 4] = float(np.max(cmar[mine]))
    return lb


@njit(cache=True)
def clear_links(R, o, lb, gB, goff, clear):
    """clear[k]: link k's bounding sphere (``lb``) is farther than its margin from every ground,
    so none of its points is active."""
    for k in range(lb.shape[0]):
        c0 = o[k, 0] + R[k, 0, 0] * lb[k, 0] + R[k, 0, 1] * lb[k, 1] + R[k, 0, 2] * lb[k, 2]
        c1 = o[k, 1] + R[k, 1, 0] * lb[k, 0] + R[k, 1, 1] * lb[k, 1] + R[k, 1, 2] * lb[k, 2]
        c2 = o[k, 2] + R[k, 2, 0] * lb[k, 0] + R[k, 2, 1] * lb[k, 1] + R[k, 2, 2] * lb[k, 2]
        far = True
        for g in range(gB.shape[0]):
            d = gB[g, 0, 2] * c0 + gB[g, 1, 2] * c1 + gB[g, 2, 2] * c2 - goff[g] - lb[k, 3]
            if not d > lb[k, 4]:
                far = False
        clear[k] = far


@njit(cache=True)
def active_contacts(pi, pf, sb, q, cl, cp, crad, cmar, lb, gB, goff, J, dist, pos, pair, Jw, Jx):
    """The number m of active contacts (distance <= margin, at most J.shape[0] // 3) and their
    rows, distances, points and pairs in the first m (3 m) entries of the outputs; Jw, Jx are
    (3, nv) scratch.  Contacts are listed point by point, ground by ground; the points of a
    link whose bounding sphere is clear of every ground (:func:`clear_links`) are skipped."""
    mt, _, ws, _ = unpack(pi, pf, sb)
    L = pi[0, 0]
    world_kinematics(mt, q, q, False, ws, L)
    R, o = ws[0], ws[1]
    nv = J.shape[1]
    m_max = J.shape[0] // 3
    x = np.empty(3)
    clear = np.empty(L, dtype=np.bool_)
    clear_links(R, o, lb, gB, goff, clear)
    m = 0
    for i in range(cl.shape[0]):
        k = cl[i]
        if clear[k]:
            continue
        for a in range(3):
            x[a] = o[k, a] + R[k, a, 0] * cp[i, 0] + R[k, a, 1] * cp[i, 1] + R[k, a, 2] * cp[i, 2]
        for g in range(gB.shape[0]):
            n0, n1, n2 = gB[g, 0, 2], gB[g, 1, 2], gB[g, 2, 2]
            xc0, xc1, xc2 = x[0] - crad[i] * n0, x[1] - crad[i] * n1, x[2] - crad[i] * n2
            d = n0 * xc0 + n1 * xc1 + n2 * xc2 - goff[g]
            if d > cmar[i] or m >= m_max:
                continue
            pos[m, 0], pos[m, 1], pos[m, 2] = xc0, xc1, xc2
            dist[m], pair[m, 0], pair[m, 1] = d, i, g
            Jw[:, :] = 0.0
            Jx[:, :] = 0.0
            _point_jacobian(mt, ws, k, pos[m], 1.0, Jw, Jx)
            for r in range(3):  # [t1; t2; n]^T (velocity of the contact point)
                row = 3 * m + r
                for j in range(nv):
                    J[row, j] = gB[g, 0, r] * Jx[0, j] + gB[g, 1, r] * Jx[1, j] + gB[g, 2, r] * Jx[2, j]
            m += 1
    return m


@njit(cache=True)
def delassus(kt0, work, q, J, r, Y, zero, G):
    """G[:r, :r] = J M^-1 J^T for the first r rows of J, and Y[:r] = (M^-1 J^T)^T: one
    factorisation of the articulated inertias at q (``kt0`` the gravity-free kernel table) and
    one O(n) substitution per row (:func:`denoc_bridge.kernels.lagrange.minv_rows`).  Returns
    the forward dynamics status (0, or k + 1 for a singular articulated inertia)."""
    status = minv_rows(kt0, work, q, J, r, Y, zero, False, kt0.shape[0])
    if status:
        return status
    nv = J.shape[1]
    for i in range(r):
        for j in range(i + 1):
            s = 0.0
            for c in range(nv):
                s += J[i, c] * Y[j, c]
            G[i, j] = s
            G[j, i] = s
    return 0
