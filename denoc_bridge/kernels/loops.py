"""Compiled closed-loop dynamics inside numba's runs of loop systems (:mod:`.systems`): the
constrained accelerations of a stage and the projection after a step (004 eqs. 12-15; the
readable version is :mod:`denoc_bridge.constraints.loops`).  The public calls run the Cython
core's ``loops`` module (``denoc_bridge/core/loops.pyx``), on the same packed arrays and
scratch layout; these kernels remain until the runs of loop systems are ported.

The entries take the model and its cut joints as two arrays built once per model by
:func:`denoc_bridge.constraints.packed.compiled` (few arguments: each array argument costs dispatch time):

``pi``  int64 (1 + L + n_loops, 6): row 0 = [L, n_loops, m rows, nv, nq, 0]; row 1 + k =
        [parent, joint type, idx_q, nq, idx_v, nv] of link k; row 1 + L + l = [type code,
        link1, link2, first row, 0, 0] of cut joint l (n_loops counts the cut joints, the
        joint couplings and their terms: the layout of a coupling's rows is in
        :mod:`.loop_rows`);
``pf``  float64 (1 + L + n_loops, 30): row 1 + k = [axis, axis2, joint rotation (9,
        row-major), joint translation] of link k; row 1 + L + l = [R1 (9), p1, R2 (9), p2, b1,
        b2] of cut joint l, b1 and b2 the normals of its axis in the joint frame (a coupling's
        value, a term's coefficient in column 0);
``sb``  float64 scratch of ``scratch_size(L, nv, m)`` numbers (``denoc_bridge.core.loops``),
        carved into the tuples ``ws`` (kinematics) and ``ds`` (constraints) by :func:`unpack`.

The world kinematics and the cut joints' rows are in :mod:`denoc_bridge.kernels.loop_rows`.

Cost (measured, see ``benchmarks/closed_loops.py``):

* ``M^-1 C^T`` reuses the articulated factors of the forward dynamics that gives ``a0``
  (:func:`.lagrange.factorised_forward_dynamics`): one :func:`.lagrange.solve` per independent row, the backward
  and forward substitutions of 000 Table 3 without the twists and masses (0.1-0.3 of a
  forward dynamics);
* the constraint rows only involve the cut joints' links and their ancestors, which come
  first in depth-first order: the links before ``n`` and the DOFs before ``hi``
  (:func:`_reach`); the world kinematics, the solves for ``M^-1 C^T`` and the dense
  products stop there, and ``M^-1 C^T lambda`` takes one whole solve
  (:func:`minv_ct_lambda`);
* the passes called once per evaluation are inlined into the entries (a compiled call that
  takes the tuples of scratch views costs 0.1-0.3 us), the scratch views are strided views
  (``reshape`` calls a helper, 13 ns each) except the dense blocks, whose loops vectorise.
"""

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided

from denoc_bridge.kernels.configuration import integrate
from denoc_bridge.kernels.lagrange import (
    cholesky_solve,
    dot,
    factorised_forward_dynamics,
    gram,
    independent_rows,
    minv_ct_lambda,
    minv_rows,
)
from denoc_bridge.kernels.loop_rows import loop_rows, world_kinematics


@njit(cache=True)
def ds_start(L, nv):
    """Where ``ds`` begins in the scratch (``ws`` comes first)."""
    return 24 * L + 18 * nv + 147


@njit(cache=True, inline="always")
def _take(sb, at, n):
    return sb[at : at + n], at + n


@njit(cache=True, inline="always")
def _take2(sb, at, n0, n1):
    """The next n0 n1 numbers of the scratch as a C-ordered (n0, n1) array: a strided view
    (``reshape`` calls a helper function, 13 ns each)."""
    return as_strided(sb[at:], shape=(n0, n1), strides=(8 * n1, 8)), at + n0 * n1


@njit(cache=True, inline="always")
def _dense(sb, at, n0, n1):
    """As :func:`_take2`, by ``reshape``: an array known to be contiguous, whose loops
    vectorise (the dense m x nv and m x m blocks)."""
    return sb[at : at + n0 * n1].reshape((n0, n1)), at + n0 * n1


@njit(cache=True, inline="always")
def unpack(pi, pf, sb):
    """(mt, lt, ws, ds): the tree, the cut joints and the scratch views (see the module
    docstring)."""
    L, nl, m, nv = pi[0, 0], pi[0, 1], pi[0, 2], pi[0, 3]
    J, K = pi[1 : L + 1], pf[1 : L + 1]
    mt = (J[:, 0], J[:, 1], K[:, 0:3], K[:, 3:6], K[:, 6:15], K[:, 15:18], J[:, 2], J[:, 3], J[:, 4], J[:, 5])
    lt = (pi[L + 1 : L + 1 + nl], pf[L + 1 : L + 1 + nl])
    at = 0
    R, at = _take(sb, at, 9 * L)
    o, at = _take2(sb, at, L, 3)
    Pw, at = _take2(sb, at, nv, 6)
    w, at = _take2(sb, at, L, 3)
    od, at = _take2(sb, at, L, 3)
    wd0, at = _take2(sb, at, L, 3)
    odd0, at = _take2(sb, at, L, 3)
    RJ, at = _take2(sb, at, 3, 3)
    pJ, at = _take(sb, at, 3)
    tmpR, at = _take2(sb, at, 3, 3)
    Pl, at = _take2(sb, at, 6, 6)
    c, at = _take(sb, at, 6)
    t3, at = _take(sb, at, 3)
    d, at = _take(sb, at, 3)
    u, at = _take(sb, at, 3)
    Jb, at = _take(sb, at, 12 * nv)
    lr, at = _take2(sb, at, 25, 3)
    ws = (
        as_strided(R, shape=(L, 3, 3), strides=(72, 24, 8)),
        o,
        Pw,
        w,
        od,
        wd0,
        odd0,
        RJ,
        pJ,
        tmpR,
        Pl,
        c,
        t3,
        d,
        u,
        Jb.reshape((4, 3, nv)),
        lr,
    )
    at = ds_start(L, nv)
    phi, at = _take(sb, at, m)
    C, at = _dense(sb, at, m, nv)
    gamma, at = _take(sb, at, m)
    Q, at = _dense(sb, at, m, nv)
    Cr, at = _dense(sb, at, m, nv)
    Y, at = _dense(sb, at, m, nv)
    Kb, at = _dense(sb, at, m, m)
    lam, at = _take(sb, at, m)
    rhs, at = _take(sb, at, m)
    zero, at = _take(sb, at, nv)
    rows, at = _take(sb, at, m)  # int64, in the scratch's bytes
    xs, at = _take(sb, at, nv)
    ys, at = _take(sb, at, nv)
    ds = (phi, C, gamma, Q, rows.view(np.int64), Cr, Y, Kb, lam, rhs, zero, xs, ys)
    return mt, lt, ws, ds


@njit(cache=True, inline="always")
def _reach(mt, lt):
    """(n, hi): the constraint rows involve only the links of the cut joints and their
    ancestors, which in depth-first order come before n = 1 + the last of those links, and
    the DOFs before hi (the rows of C are zero after hi)."""
    li = lt[0]
    last = -1
    for l in range(li.shape[0]):
        last = max(last, li[l, 1], li[l, 2])
    if last < 0:
        return 0, 0
    return last + 1, mt[8][last] + mt[9][last]


@njit(cache=True, inline="always")
def _selected(C, rtol, ds, hi):
    """Copy the independent rows of C into Cr; returns their number."""
    Q, rows, Cr = ds[3], ds[4], ds[5]
    r = independent_rows(C, rtol, Q, rows, hi)
    for j in range(r):
        Cr[j] = C[rows[j]]
    return r


@njit(cache=True, inline="always")
def _accelerations(kt, kt0, work, mt, lt, ws, ds, q, v, tau, fext, alpha, beta, rtol, a):
    """Lagrange multipliers on the cut tree (004 eqs. 13-14): a = a0 + M^-1 C^T lambda with
    (C M^-1 C^T) lambda = -Cdot qdot - 2 alpha C qdot - beta^2 phi - C a0 (Baumgarte), over the
    independent rows; a0 by the O(n) forward dynamics and each M^-1 C[j]^T by a solve with its
    factors (``kt0`` is not used: it was the gravity-free table of those solves).  Returns (status,
    rank): status 0, k + 1 for a singular articulated inertia, -1 a non-finite result, -3
    a singular C M^-1 C^T.  lambda is left in ds[8][:rank] for the rows ds[4][:rank]."""
    phi, C, gamma, rows, Cr, Y, K, lam, rhs, zero = (
        ds[0],
        ds[1],
        ds[2],
        ds[4],
        ds[5],
        ds[6],
        ds[7],
        ds[8],
        ds[9],
        ds[10],
    )
    n, hi = _reach(mt, lt)
    world_kinematics(mt, q, v, True, ws, n)  # phi, C = D* N, Cdot qdot   004 (12-15)
    loop_rows(mt, lt, ws, q, True, phi, C, gamma)
    status = factorised_forward_dynamics(kt.view(np.int32), kt, work, q, v, tau, fext, a)  # a0 (open tree)
    if status:
        return status, 0
    r = _selected(C, rtol, ds, hi)
    for j in range(r):
        i = rows[j]
        rhs[j] = -gamma[i] - 2.0 * alpha * dot(C[i], v, hi) - beta * beta * phi[i] - dot(C[i], a, hi)
    status = minv_rows(kt, work, q, Cr, r, Y, zero, True, n)  # Y = (M^-1 C^T)^T
    if status:
        return status, r
    gram(Cr, Y, r, K, hi)  # K = C M^-1 C^T
    if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):  # K lambda = rhs          004 (14)
        return -3, r
    minv_ct_lambda(kt, work, Cr, Y, lam, r, n, ds[11], ds[12])
    for i in range(a.shape[0]):
        a[i] += ds[12][i]  # qddot = a0 + M^-1 C^T lambda
        if not np.isfinite(a[i]):
            return -1, r
    return 0, r


@njit(cache=True)
def project(kt, kt0, work, pi, pf, sb, q, v, rtol, tol, max_iter, qn):
    """:func:`project_state` on the packed model (the entry called from Python)."""
    mt, lt, ws, ds = unpack(pi, pf, sb)
    return project_state(kt, kt0, work, mt, lt, ws, ds, q, v, rtol, tol, max_iter, qn)


@njit(cache=True)
def project_state(kt, kt0, work, mt, lt, ws, ds, q, v, rtol, tol, max_iter, qn):
    """Close the loops and remove the velocity that violates them, both in the kinetic-energy
    metric: Gauss-Newton on phi(q) = 0 with the steps dq = -M^-1 C^T (C M^-1 C^T)^-1 phi
    (the smallest correction in that metric), then v -= M^-1 C^T (C M^-1 C^T)^-1 C v.
    Returns (status, |phi| at the end, |phi| at the start): status -4 when the positions do
    not converge in max_iter."""
    ki = kt.view(np.int32)
    phi, C, gamma, Cr, Y, K, lam, rhs, zero, dq = ds[0], ds[1], ds[2], ds[5], ds[6], ds[7], ds[8], ds[9], ds[10], ds[12]
    n, hi = _reach(mt, lt)
    zero[:] = 0.0  # the state at rest of the factorisations
    err0 = -1.0
    for it in range(max_iter + 1):
        world_kinematics(mt, q, v, False, ws, n)
        loop_rows(mt, lt, ws, q, False, phi, C, gamma)
        err = np.max(np.abs(phi)) if phi.shape[0] else 0.0
        if err0 < 0.0:
            err0 = err
        r = _selected(C, rtol, ds, hi)
        if err <= tol:
            break
        if it == max_iter:
            return -4, err, err0
        status = minv_rows(kt0, work, q, Cr, r, Y, zero, False, n)
        if status:
            return status, err, err0
        gram(Cr, Y, r, K, hi)
        for j in range(r):
            rhs[j] = phi[ds[4][j]]
        if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):
            return -3, err, err0
        minv_ct_lambda(kt0, work, Cr, Y, lam, r, n, ds[11], dq)
        for i in range(dq.shape[0]):
            dq[i] = -dq[i]  # dq = -M^-1 C^T (C M^-1 C^T)^-1 phi
        integrate(ki, q, dq, qn)
        q[:] = qn
    status = minv_rows(kt0, work, q, Cr, r, Y, zero, False, n)
    if status:
        return status, err, err0
    gram(Cr, Y, r, K, hi)
    for j in range(r):
        rhs[j] = dot(Cr[j], v, hi)
    if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):
        return -3, err, err0
    minv_ct_lambda(kt0, work, Cr, Y, lam, r, n, ds[11], dq)
    v -= dq  # v -= M^-1 C^T (C M^-1 C^T)^-1 C v
    return 0, err, err0


@njit(cache=True)
def state_accelerations(kt, kt0, work, pi, pf, sb, q, v, tau, fext, alpha, beta, rtol, a):
    """:func:`_accelerations` inside a run (the state is not checked: the previous stage's
    accelerations were); returns its status."""
    mt, lt, ws, ds = unpack(pi, pf, sb)
    return _accelerations(kt, kt0, work, mt, lt, ws, ds, q, v, tau, fext, alpha, beta, rtol, a)[0]
