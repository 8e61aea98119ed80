"""Compiled fixed-step runs of a model with ``<mimic>`` joints as constraints (reduced
coordinates, Pinocchio's mimic layout): the stages of :mod:`denoc_bridge.simulation.mimic`
without a Python call per stage.

The maps between the reduced state (q_r, v_r) and the tree's (:mod:`denoc_bridge.constraints.mimic`)
come as two tuples of arrays, ``im = (q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col)`` (int64)
and ``fm = (mult, off, scale)`` (the compiled entries take them packed in two flat arrays,
:func:`pack`, :func:`unpack`): ``q_keep``/``v_keep`` (the tree entries of the reduced coordinates),
``s_q``, ``m_q``, ``s_v``, ``m_v`` (the q and v index of each mimic joint and of its
mimicked joint), ``mult``, ``off`` and ``circ`` (continuous pair), ``col``/``scale``
(``v_full = G v_r``: ``v_full[i] = scale[i] v_r[col[i]]``).

Accelerations (:func:`mimic_accelerations`), as ``mimic.forward_dynamics(method="lagrange")``:

    a0 = FD_tree(q_full, v_full, tau_full),         tau_full = G^+T (tau_r + G^T tau_passive)
    W_j = M^-1 K_j^T,                                K_j = e_s - mult e_m
    (K W^T) lambda = -K a0,   a_r = (a0 + M^-1 K^T lambda)[v_keep]

One forward dynamics per stage that keeps the articulated factors of M, then nc + 1 solves
with them (:func:`.lagrange.solve`: the backward and forward substitutions of 000 Table 3
without twists and masses; the nc for W only over the links up to the last mimic or
mimicked DOF).  ``K W^T`` is SPD, solved by Cholesky here.  The steps
are those of ``simulation._run_python`` with a ``MimicSystem``: classical RK4 with the
Runge-Kutta-Munthe-Kaas rates of the tree at ``(q_full, G xi, G v)``, or semi-implicit
Euler; the configuration maps are the tree's restricted to the kept entries.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.configuration import dexpinv, integrate
from denoc_bridge.kernels.integrators import TAU_CONSTANT, TAU_TABLE, finite_status, passive_forces
from denoc_bridge.kernels.lagrange import factorised_forward_dynamics, solve

#: rows of the tree scratch ``f`` (width max(nq, nv)) ahead of the nc rows of W
TREE_ROWS = 6


@njit(cache=True)
def expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf):
    """qf = G q_r + offset (a continuous mimic joint: angle = mult atan2(sin, cos) + off)."""
    for i in range(q_keep.shape[0]):
        qf[q_keep[i]] = qr[i]
    for j in range(s_q.shape[0]):
        if circ[j]:
            angle = mult[j] * np.arctan2(qf[m_q[j] + 1], qf[m_q[j]]) + off[j]
            qf[s_q[j]] = np.cos(angle)
            qf[s_q[j] + 1] = np.sin(angle)
        else:
            qf[s_q[j]] = mult[j] * qf[m_q[j]] + off[j]


@njit(cache=True)
def expand_velocity(xr, col, scale, xf):
    """xf = G x_r."""
    for i in range(col.shape[0]):
        xf[i] = xr[col[i]] * scale[i]


@njit(cache=True)
def mimic_accelerations(ki, kt, work, qr, vr, tau_r, fext, K, D, q_rest, passive, im, fm, nqf, reach, f, S, out):
    """out = a_r(q_r, v_r) under tau_r, the tree's springs and dampers and fext (see the module
    docstring); ``reach``: the links before it hold every mimic and mimicked DOF.  ``f``:
    (TREE_ROWS + nc, max(nq, nv) of the tree) scratch, ``S``: (nc, nc + 1).  Returns 0, k + 1
    (the tree's articulated inertia of link k is singular) or -1 (not finite)."""
    q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col = im
    mult, off, scale = fm
    nv, nc, nvf, L = v_keep.shape[0], s_v.shape[0], col.shape[0], ki.shape[0]
    qf, vf, tp, tf, a0, d = f[0, :nqf], f[1, :nvf], f[2, :nvf], f[3, :nvf], f[4, :nvf], f[5, :nvf]
    expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf)
    expand_velocity(vr, col, scale, vf)
    passive_forces(ki, qf, vf, K, D, q_rest, passive, d, tp)  # the tree's springs and dampers
    tf[:] = 0.0  # tau_r + G^T tau_passive, on the kept DOFs
    for i in range(nv):
        tf[v_keep[i]] = tau_r[i] + tp[v_keep[i]]
    for j in range(nc):
        tf[m_v[j]] += mult[j] * tp[s_v[j]]
    status = factorised_forward_dynamics(ki, kt, work, qf, vf, tf, fext, a0)  # a0, and the factors of M
    if status:
        return status
    for j in range(nc):  # W_j = M^-1 K_j^T, up to reach
        tf[:] = 0.0
        tf[s_v[j]] = 1.0
        tf[m_v[j]] -= mult[j]
        solve(ki, kt, work, tf, f[TREE_ROWS + j, :nvf], reach)
    for j in range(nc):  # [K W^T | -K a0]
        for k in range(nc):
            S[j, k] = f[TREE_ROWS + k, s_v[j]] - mult[j] * f[TREE_ROWS + k, m_v[j]]
        S[j, nc] = -(a0[s_v[j]] - mult[j] * a0[m_v[j]])
    _cholesky_solve(S, nc)  # lambda into S[:, nc]
    tf[:] = 0.0  # K^T lambda
    for j in range(nc):
        tf[s_v[j]] += S[j, nc]
        tf[m_v[j]] -= mult[j] * S[j, nc]
    if nc:
        solve(ki, kt, work, tf, d, L)  # M^-1 K^T lambda
    else:
        d[:] = 0.0
    for i in range(nv):  # a_r = (a0 + M^-1 K^T lambda)[v_keep]
        out[i] = a0[v_keep[i]] + d[v_keep[i]]
    return finite_status(out)


@njit(cache=True)
def _cholesky_solve(S, n):
    """Solve S[:, :n] x = S[:, n] in place (x into S[:, n]) for SPD S[:, :n] (Cholesky, lower
    triangle overwritten)."""
    for j in range(n):
        x = S[j, j]
        for k in range(j):
            x -= S[j, k] * S[j, k]
        x = np.sqrt(x) if x > 0.0 else np.nan  # NaN: reported as not finite
        S[j, j] = x
        for i in range(j + 1, n):
            y = S[i, j]
            for k in range(j):
                y -= S[i, k] * S[j, k]
            S[i, j] = y / x
    for i in range(n):  # L y = b
        y = S[i, n]
        for k in range(i):
            y -= S[i, k] * S[k, n]
        S[i, n] = y / S[i, i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        y = S[i, n]
        for k in range(i + 1, n):
            y -= S[k, i] * S[k, n]
        S[i, n] = y / S[i, i]


def pack(q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col, mult, off, scale):
    """(imap, fmap): the maps in two flat arrays, ``imap = [nq_r, nv_r, nc, nv_tree, q_keep,
    v_keep, s_q, m_q, s_v, m_v, circ, col]`` (int64), ``fmap = [mult, off, scale]`` (two
    arguments for the compiled entries: a tuple of arrays costs about 0.1 us per array to
    dispatch)."""
    head = np.array([len(q_keep), len(v_keep), len(s_v), len(col)], dtype=np.int64)
    imap = np.concatenate([head, q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col]).astype(np.int64)
    return np.ascontiguousarray(imap), np.ascontiguousarray(np.concatenate([mult, off, scale]), dtype=np.float64)


@njit(cache=True, inline="always")
def unpack(imap, fmap):
    """The tuples ``im``, ``fm`` of the module docstring, as views of :func:`pack`'s arrays."""
    nq, nv, nc, nvf = imap[0], imap[1], imap[2], imap[3]
    o = 4
    q_keep = imap[o : o + nq]
    o += nq
    v_keep = imap[o : o + nv]
    o += nv
    s_q, m_q, s_v, m_v, circ = (
        imap[o : o + nc],
        imap[o + nc : o + 2 * nc],
        imap[o + 2 * nc : o + 3 * nc],
        imap[o + 3 * nc : o + 4 * nc],
        imap[o + 4 * nc : o + 5 * nc],
    )
    col = imap[o + 5 * nc : o + 5 * nc + nvf]
    return (q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col), (fmap[0:nc], fmap[nc : 2 * nc], fmap[2 * nc : 2 * nc + nvf])


# ----------------------------------------------------------------------------- the stages
@njit(cache=True)
def mimic_integrate(ki, qr, xir, im, fm, nqf, f, out):
    """out = q_r (+) xi_r: the tree's q_full (+) G xi_r, its kept entries (out may be q_r)."""
    q_keep, col, scale = im[0], im[7], fm[2]
    nvf = col.shape[0]
    qf, xf, q1 = f[0, :nqf], f[1, :nvf], f[2, :nqf]
    expand_configuration(qr, q_keep, im[2], im[3], fm[0], fm[1], im[6], qf)
    expand_velocity(xir, col, scale, xf)
    integrate(ki, qf, xf, q1)
    for i in range(q_keep.shape[0]):
        out[i] = q1[q_keep[i]]


@njit(cache=True)
def mimic_dexpinv(ki, xir, vr, im, fm, f, out):
    """out = the RKMK rate of xi_r: the tree's dexp_{-G xi}^-1 (G v), its kept entries."""
    v_keep, col, scale = im[1], im[7], fm[2]
    nvf = col.shape[0]
    xf, vf, r = f[1, :nvf], f[3, :nvf], f[4, :nvf]
    expand_velocity(xir, col, scale, xf)
    expand_velocity(vr, col, scale, vf)
    dexpinv(ki, xf, vf, r)
    for i in range(v_keep.shape[0]):
        out[i] = r[v_keep[i]]


@njit(cache=True)
def actuation(tau_mode, taus, n, out):
    """tau_n: zero, the constant vector or row n of the table."""
    if tau_mode == TAU_CONSTANT:
        out[:] = taus[0]
    elif tau_mode == TAU_TABLE:
        out[:] = taus[n]
    else:
        out[:] = 0.0
