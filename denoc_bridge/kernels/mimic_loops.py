"""Compiled dynamics of a MimicModel whose tree has loop closures: both kinds of holonomic
constraint as one stack of rows on the tree's velocities (:mod:`denoc_bridge.constraints.mimic_loops`
is the Python reference), for the one compiled run (:mod:`.run`, :class:`.systems.MimicLoopSystem`).

The reduced state (q_r, v_r) is expanded to the tree's (q, v = G v_r) (:mod:`.mimic`), and

    J = [K; C(q)],     J a = [0; -Cdot v - 2 alpha C v - beta^2 phi]     (004 eqs. 12-15, Baumgarte)

with the mimic rows ``K_j = e_s - mult e_m`` (constant) and the cut joints' rows ``C``
(:func:`.loops.loop_rows`).  Lagrange multipliers on the tree (004 eqs. 13-14): a0 by the O(n)
forward dynamics that keeps its factors, ``Y_k = M^-1 J_k^T`` by a solve with them (000 Table
3), ``(J M^-1 J^T) lambda = rhs - J a0`` over the independent rows (Cholesky), and
``a = a0 + M^-1 J^T lambda``, reduced: ``a_r = a[independent]``.  The projection onto the loops
(after a step) is Gauss-Newton on phi with the same stacked rows, so ``K dq = 0`` keeps the
mimic relations: the smallest corrections in the kinetic-energy metric of the coupled system.

Scratch: ``B`` (:func:`scratch_shape`) holds the expanded state and the rows, ``rows`` (int64)
the independent rows' indices.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.configuration import integrate
from denoc_bridge.kernels.integrators import finite_status, passive_forces
from denoc_bridge.kernels.lagrange import (
    cholesky_solve,
    dot,
    factorised_forward_dynamics,
    gram,
    independent_rows,
    minv_rows,
    solve,
)
from denoc_bridge.kernels.loop_rows import loop_rows, world_kinematics
from denoc_bridge.kernels.loops import unpack as unpack_loops
from denoc_bridge.kernels.mimic import expand_configuration, expand_velocity
from denoc_bridge.kernels.mimic import unpack as unpack_maps

# rows of the scratch B ahead of the stacked rows (widths: the tree's nq or nv, or the rows')
R_QF, R_VF, R_TP, R_TF, R_A0, R_D, R_Q1, R_DQ, R_ZERO, R_PHI, R_GAMMA, R_RHS, R_LAM = range(13)
HEAD_ROWS = 13


def scratch_shape(nqf: int, nvf: int, n_rows: int) -> tuple[int, int]:
    """Shape of ``B``: the head rows, then J, Q (independent rows), Y = (M^-1 J^T)^T and the
    Gram matrix, n_rows each."""
    return HEAD_ROWS + 4 * n_rows, max(nqf, nvf, n_rows, 1)


@njit(cache=True, inline="always")
def _blocks(B, nvf, n):
    """(J, Q, Y, K): the n-row blocks of B, each carved C-contiguous from the start of its rows
    (n x nvf or n x n entries fit in n rows of B's width), so that the tree's kernels called on
    them are the ones compiled for the other callers (one version each)."""
    flat, w = B.reshape(B.size), B.shape[1]
    at = HEAD_ROWS * w
    return (
        flat[at : at + n * nvf].reshape((n, nvf)),
        flat[at + n * w : at + n * w + n * nvf].reshape((n, nvf)),
        flat[at + 2 * n * w : at + 2 * n * w + n * nvf].reshape((n, nvf)),
        flat[at + 3 * n * w : at + 3 * n * w + n * n].reshape((n, n)),
    )


@njit(cache=True, inline="always")
def stacked_rows(mt, lt, ws, im, fm, qf, vf, with_bias, phi, J, gamma, L):
    """phi, J = [K; C] and the bias [0; Cdot v] at the expanded (qf, vf) (004 eqs. 12-15)."""
    s_v, m_v, mult = im[4], im[5], fm[0]
    nc = s_v.shape[0]
    world_kinematics(mt, qf, vf, with_bias, ws, L)
    loop_rows(mt, lt, ws, qf, with_bias, phi[nc:], J[nc:], gamma[nc:])
    for j in range(nc):  # K_j = e_s - mult e_m: v_s = mult v_m
        J[j, :] = 0.0
        J[j, s_v[j]] = 1.0
        J[j, m_v[j]] -= mult[j]
        phi[j] = 0.0  # the expanded configuration satisfies the relation
        gamma[j] = 0.0


@njit(cache=True)
def accelerations(kt, work, imap, fmap, nqf, pi, pf, sb, B, rows, qr, vr, tau_r, fext, K, D, q_rest, passive, o, out):
    """out = a_r(q_r, v_r) under tau_r, the tree's springs and dampers and fext, with the mimic
    relations and the loops (``o`` = (alpha, beta, rank rtol, ...)).  Returns 0, k + 1 (link k's
    articulated inertia is singular), -1 (not finite) or -3 (J M^-1 J^T singular)."""
    ki = kt.view(np.int32)
    im, fm = unpack_maps(imap, fmap)
    mt, lt, ws, _ = unpack_loops(pi, pf, sb)
    q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col = im
    mult, off, scale = fm
    nc, nvf, L = s_v.shape[0], col.shape[0], ki.shape[0]
    n = nc + pi[0, 2]
    qf, vf, tp, tf, a0, d = B[R_QF, :nqf], B[R_VF, :nvf], B[R_TP, :nvf], B[R_TF, :nvf], B[R_A0, :nvf], B[R_D, :nvf]
    phi, gamma, rhs, lam = B[R_PHI, :n], B[R_GAMMA, :n], B[R_RHS, :n], B[R_LAM, :n]
    J, Q, Y, Kg = _blocks(B, nvf, n)
    expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf)
    expand_velocity(vr, col, scale, vf)
    passive_forces(ki, qf, vf, K, D, q_rest, passive, d, tp)  # the tree's springs and dampers
    tf[:] = 0.0  # tau_r + G^T tau_passive, on the kept DOFs
    for i in range(v_keep.shape[0]):
        tf[v_keep[i]] = tau_r[i] + tp[v_keep[i]]
    for j in range(nc):
        tf[m_v[j]] += mult[j] * tp[s_v[j]]
    stacked_rows(mt, lt, ws, im, fm, qf, vf, True, phi, J, gamma, L)
    status = factorised_forward_dynamics(ki, kt, work, qf, vf, tf, fext, a0)  # a0, the factors of M
    if status:
        return status
    r = independent_rows(J, o[2], Q, rows, nvf)
    for k in range(r):  # 004 (13)-(14) over the independent rows
        i = rows[k]
        rhs[k] = -gamma[i] - 2.0 * o[0] * dot(J[i], vf, nvf) - o[1] * o[1] * phi[i] - dot(J[i], a0, nvf)
        solve(ki, kt, work, J[i], Y[k], L)  # Y_k = M^-1 J_i^T
    for k in range(r):
        for j in range(k + 1):
            Kg[k, j] = dot(J[rows[k]], Y[j], nvf)  # J M^-1 J^T, lower triangle
    if not cholesky_solve(Kg[:r, :r], rhs[:r], lam[:r]):
        return -3
    for i in range(nvf):
        d[i] = a0[i]
    for k in range(r):  # a = a0 + M^-1 J^T lambda
        for i in range(nvf):
            d[i] += lam[k] * Y[k, i]
    for i in range(v_keep.shape[0]):
        out[i] = d[v_keep[i]]
    return finite_status(out)


@njit(cache=True, inline="always")
def _metric_step(kt0, work, qf, J, Q, Y, Kg, rows, r, rhs, lam, zero, nvf, L):
    """lam = (J M^-1 J^T)^-1 rhs over the r rows ``rows`` of J, with Y = M^-1 J_r^T (the factors
    of M formed at qf, at rest); returns the status (-3: singular)."""
    for k in range(r):
        Q[k] = J[rows[k]]
    status = minv_rows(kt0, work, qf, Q, r, Y, zero, False, L)
    if status:
        return status
    gram(Q, Y, r, Kg, nvf)
    if not cholesky_solve(Kg[:r, :r], rhs[:r], lam[:r]):
        return -3
    return 0


@njit(cache=True)
def project(kt0, work, imap, fmap, nqf, pi, pf, sb, B, rows, qr, vr, o):
    """Project (q_r, v_r) in place onto the loops (``o`` = (alpha, beta, rtol, tol, project,
    max_iter)): Gauss-Newton dq = -M^-1 J^T (J M^-1 J^T)^-1 [0; phi] on the tree, then
    v -= M^-1 J^T (J M^-1 J^T)^-1 J v.  Returns (status, |phi| at the end, |phi| at the start):
    -4 when the loops are not closed to 1e3 tol after max_iter steps (as
    :func:`denoc_bridge.constraints.mimic_loops.kinetic_projection`)."""
    ki = kt0.view(np.int32)
    im, fm = unpack_maps(imap, fmap)
    mt, lt, ws, _ = unpack_loops(pi, pf, sb)
    q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col = im
    mult, off, scale = fm
    nc, nvf, L = s_v.shape[0], col.shape[0], ki.shape[0]
    n = nc + pi[0, 2]
    qf, vf, q1, dq, zero = B[R_QF, :nqf], B[R_VF, :nvf], B[R_Q1, :nqf], B[R_DQ, :nvf], B[R_ZERO, :nvf]
    phi, gamma, rhs, lam = B[R_PHI, :n], B[R_GAMMA, :n], B[R_RHS, :n], B[R_LAM, :n]
    J, Q, Y, Kg = _blocks(B, nvf, n)
    zero[:] = 0.0
    tol, max_iter = o[3], int(o[5])
    err0, err = -1.0, 0.0
    for it in range(max_iter + 1):
        expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf)
        stacked_rows(mt, lt, ws, im, fm, qf, zero, False, phi, J, gamma, L)
        err = np.max(np.abs(phi[nc:])) if n > nc else 0.0
        if err0 < 0.0:
            err0 = err
        if err <= tol:
            break
        if it == max_iter:
            if err > 1e3 * tol:
                return -4, err, err0
            break
        r = independent_rows(J, o[2], Q, rows, nvf)
        for k in range(r):
            rhs[k] = phi[rows[k]]
        status = _metric_step(kt0, work, qf, J, Q, Y, Kg, rows, r, rhs, lam, zero, nvf, L)
        if status:
            return status, err, err0
        dq[:] = 0.0
        for k in range(r):  # dq = -M^-1 J^T lambda: K dq = 0, the relations hold
            for i in range(nvf):
                dq[i] -= lam[k] * Y[k, i]
        integrate(ki, qf, dq, q1)
        for i in range(q_keep.shape[0]):
            qr[i] = q1[q_keep[i]]
    # every exit of the loop above has just stacked the rows at the final qf: J is at q_r
    expand_velocity(vr, col, scale, vf)
    r = independent_rows(J, o[2], Q, rows, nvf)
    for k in range(r):
        rhs[k] = dot(J[rows[k]], vf, nvf)
    status = _metric_step(kt0, work, qf, J, Q, Y, Kg, rows, r, rhs, lam, zero, nvf, L)
    if status:
        return status, err, err0
    for k in range(r):  # v -= M^-1 J^T (J M^-1 J^T)^-1 J v
        for i in range(nvf):
            vf[i] -= lam[k] * Y[k, i]
    for i in range(v_keep.shape[0]):
        vr[i] = vf[v_keep[i]]
    return 0, err, err0


@njit(cache=True)
def loop_error(pi, B, imap):
    """max |phi| of the loop rows the last :func:`accelerations` or :func:`project` left in B."""
    nc = imap[2]
    n = nc + pi[0, 2]
    return np.max(np.abs(B[R_PHI, nc:n])) if n > nc else 0.0
