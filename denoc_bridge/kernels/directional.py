"""Matrix-free derivatives of the forward dynamics of a tree in O(n): the directional derivative
(JVP) and the adjoint (VJP), each a fixed number of recursions and no n x n array.

With ``qdd = FD(q, v, tau)`` and the implicit-function theorem on ``ID(q, v, FD) = tau``
(:mod:`.derivatives`),

    dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv)                               (JVP)
    mu = M^-1 lam,  (dqdd_dq^T lam, dqdd_dv^T lam, dqdd_dtau^T lam)
        = (-dtau_dq^T mu, -dtau_dv^T mu, mu)                                   (VJP, M = M^T)

where ``dtau_dq`` and ``dtau_dv`` are the derivatives of inverse dynamics at (q, v, qdd).  The
solves ``M^-1 x`` reuse the articulated factors of the forward dynamics pass (000 Table 3,
:func:`.lagrange.solve`); the products with ``dtau_dq`` and ``dtau_dv`` sum the entries of
:mod:`.derivatives` (Carpentier & Mansard 2018) along the tree instead of forming them.  In the
base frame, for the column ``c`` of joint k (``s = S_c``, ``alpha_c``, ``beta_c``, ``w_c`` as in
:mod:`.derivatives`) and a row ``r`` of the joint of link j, the entries are

    j in the subtree of k:  dq[r, c] = -S_r^T (Ic_j alpha_c + Cc_j beta_c),
                            dv[r, c] =  S_r^T (Cc_j s + Ic_j w_c)
    j a strict ancestor:    dq[r, c] =  S_r^T (s x* F_k - Ic_k alpha_c - Cc_k beta_c),
                            dv[r, c] =  S_r^T (Cc_k s + Ic_k w_c)

so that the product with a direction (dq, dv) is, row by row,

    (dtau_dq dq + dtau_dv dv)_r = S_r^T (Ic_j P_j + Cc_j Q_j + G_j)
    P_j = sum_{c in support(j)} (w_c dv_c - alpha_c dq_c)       (forward sum)
    Q_j = sum_{c in support(j)} (S_c dv_c - beta_c dq_c)        (forward sum)
    G_j = sum_{k strict descendant of j} (s_k x* F_k + Ic_k p_k + Cc_k q_k)   (backward sum)

(``p_k``, ``q_k``, ``s_k = sum S_c dq_c`` the terms of joint k alone), and the transposed
product with a vector mu is, column by column,

    (dtau_dq^T mu)_c = -Yt_k . alpha_c - Zt_k . beta_c + U_lam . (S_c x* F_k)
    (dtau_dv^T mu)_c =  Zt_k . S_c + Yt_k . w_c
    U_k = sum_{r in support(k)} S_r mu_r                         (forward sum)
    Yt_k = Ic_k U_k + sum_{children} Y,  Y_k = Yt_k - Ic_k U_parent   (backward sums)
    Zt_k = Cc_k^T U_k + sum_{children} Z,  Z_k = Zt_k - Cc_k^T U_parent

with ``U_lam = U_parent(k)`` (and ``U_parent + S_0 mu_0`` for the second column of a universal
joint, whose first axis is its ancestor).  One forward pass of placements, twists, link
inertias and their Coriolis matrices, one backward pass of composites: O(n) time, about
1.2 KB per DOF of buffer (:func:`buffer_size`) besides the forward dynamics work array.
"""

import numpy as np
from numba import njit, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared
from denoc_bridge.kernels.derivatives import (
    _dot6,
    _fcross,
    _matvec6,
    _tmatvec6,
    _world_inertia,
    link_rates,
)
from denoc_bridge.kernels.entry import finite_result, valid_state
from denoc_bridge.kernels.inverse_dynamics import offset, rotation
from denoc_bridge.kernels.joints import UNIVERSAL
from denoc_bridge.kernels.lagrange import factorised_forward_dynamics, solve
from denoc_bridge.kernels.spatial6 import rot3

#: doubles of the buffer per link and per DOF (see :func:`_views`)
PER_LINK = 9 + 3 + 6 + 6 + 36 + 36 + 6 + 6 + 6 + 6
PER_DOF = 24
SCRATCH = 192

_M = types.float64[:, ::1]
_V = types.float64[::1]
#: kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out
JVP_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _V, _M, _V, _V, _V, _V, _V)
#: kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau
VJP_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _V, _M, _V, _V, _V, _V, _V)


@njit(cache=True, inline="always", fastmath={"contract"})
def coriolis_matrix(Iw, t, C, B):
    """C u = I (u x t) + u x* (I t) + t x* (I u) as ``C = -B - B^T + Hbar(I t)`` with
    ``B = I crm(t)`` (row i of ``B``: ``[I_i,w x t_w + I_i,v x t_v, I_i,v x t_w]``, since
    ``r^T [a]x = (r x a)^T``; ``t x* (I u) = -crm(t)^T I u = -B^T u``) and ``Hbar(h) u = u x* h
    = [[-[h_n]x, -[h_f]x], [-[h_f]x, 0]] u``: the matrix of :func:`.derivatives._coriolis_matrix`
    in about a third of its operations (``B``: 6x6 scratch)."""
    w0, w1, w2, v0, v1, v2 = t[0], t[1], t[2], t[3], t[4], t[5]
    for i in range(6):
        a0, a1, a2, b0, b1, b2 = Iw[i, 0], Iw[i, 1], Iw[i, 2], Iw[i, 3], Iw[i, 4], Iw[i, 5]
        B[i, 0] = a1 * w2 - a2 * w1 + b1 * v2 - b2 * v1
        B[i, 1] = a2 * w0 - a0 * w2 + b2 * v0 - b0 * v2
        B[i, 2] = a0 * w1 - a1 * w0 + b0 * v1 - b1 * v0
        B[i, 3] = b1 * w2 - b2 * w1
        B[i, 4] = b2 * w0 - b0 * w2
        B[i, 5] = b0 * w1 - b1 * w0
    hn0 = Iw[0, 0] * w0 + Iw[0, 1] * w1 + Iw[0, 2] * w2 + Iw[0, 3] * v0 + Iw[0, 4] * v1 + Iw[0, 5] * v2
    hn1 = Iw[1, 0] * w0 + Iw[1, 1] * w1 + Iw[1, 2] * w2 + Iw[1, 3] * v0 + Iw[1, 4] * v1 + Iw[1, 5] * v2
    hn2 = Iw[2, 0] * w0 + Iw[2, 1] * w1 + Iw[2, 2] * w2 + Iw[2, 3] * v0 + Iw[2, 4] * v1 + Iw[2, 5] * v2
    hf0 = Iw[3, 0] * w0 + Iw[3, 1] * w1 + Iw[3, 2] * w2 + Iw[3, 3] * v0 + Iw[3, 4] * v1 + Iw[3, 5] * v2
    hf1 = Iw[4, 0] * w0 + Iw[4, 1] * w1 + Iw[4, 2] * w2 + Iw[4, 3] * v0 + Iw[4, 4] * v1 + Iw[4, 5] * v2
    hf2 = Iw[5, 0] * w0 + Iw[5, 1] * w1 + Iw[5, 2] * w2 + Iw[5, 3] * v0 + Iw[5, 4] * v1 + Iw[5, 5] * v2
    for i in range(6):
        for j in range(6):
            C[i, j] = -B[i, j] - B[j, i]
    # + Hbar: -[hn]x (rows 0-2, cols 0-2), -[hf]x (rows 0-2, cols 3-5 and rows 3-5, cols 0-2)
    C[0, 1] += hn2
    C[0, 2] -= hn1
    C[1, 0] -= hn2
    C[1, 2] += hn0
    C[2, 0] += hn1
    C[2, 1] -= hn0
    for o, p in ((0, 3), (3, 0)):
        C[o + 0, p + 1] += hf2
        C[o + 0, p + 2] -= hf1
        C[o + 1, p + 0] -= hf2
        C[o + 1, p + 2] += hf0
        C[o + 2, p + 0] += hf1
        C[o + 2, p + 1] -= hf0


@njit(cache=True)
def buffer_size(L, nv):
    """Doubles of the buffer of a model of L links and nv DOFs."""
    return L * PER_LINK + nv * PER_DOF + SCRATCH


@njit(cache=True)
def _views(buf, L, nv):
    o = 0
    oR = buf[o : o + 9 * L].reshape((L, 3, 3))
    o += 9 * L
    op = buf[o : o + 3 * L].reshape((L, 3))
    o += 3 * L
    tw = buf[o : o + 6 * L].reshape((L, 6))
    o += 6 * L
    td = buf[o : o + 6 * L].reshape((L, 6))
    o += 6 * L
    Ic = buf[o : o + 36 * L].reshape((L, 6, 6))
    o += 36 * L
    Cc = buf[o : o + 36 * L].reshape((L, 6, 6))
    o += 36 * L
    F = buf[o : o + 6 * L].reshape((L, 6))
    o += 6 * L
    A1 = buf[o : o + 6 * L].reshape((L, 6))  # P (JVP) / U (VJP)
    o += 6 * L
    A2 = buf[o : o + 6 * L].reshape((L, 6))  # Q (JVP) / Y sums (VJP)
    o += 6 * L
    A3 = buf[o : o + 6 * L].reshape((L, 6))  # G (JVP) / Z sums (VJP)
    o += 6 * L
    S = buf[o : o + 6 * nv].reshape((nv, 6))
    alpha = buf[o + 6 * nv : o + 12 * nv].reshape((nv, 6))
    beta = buf[o + 12 * nv : o + 18 * nv].reshape((nv, 6))
    wv = buf[o + 18 * nv : o + 24 * nv].reshape((nv, 6))
    o += 24 * nv
    sc = buf[o : o + SCRATCH]
    return oR, op, tw, td, Ic, Cc, F, A1, A2, A3, S, alpha, beta, wv, sc


@njit(cache=True, fastmath={"contract"})
def base_frame_pass(ki, kf, work, v, a, fext, buf):
    """The forward pass of :func:`.derivatives.derivatives_unchecked` (000 Table 1, step 1, in the
    base frame) from the geometry that the forward dynamics left in ``work`` (E_k, r_k and the
    rows of P_k, 000 eqs. 4-5): placements, motion subspaces S, twists t and rates tdot at (q, v, a), the
    columns' alpha, beta and w, the link inertias Ic and Coriolis matrices Cc (composited later)
    and the link wrenches F (000 eqs. 1-2b, minus the external wrenches)."""
    L = ki.shape[0]
    nv = v.shape[0]
    oR, op, tw, td, Ic, Cc, F, _, _, _, S, alpha, beta, wv, sc = _views(buf, L, nv)
    Pl = sc[33:69].reshape((6, 6))
    vp, ap, x6 = sc[69:75], sc[75:81], sc[81:87]
    y6, vn, vl = sc[87:93], sc[93:99], sc[99:105]
    al, va, aa = sc[105:111], sc[111:117], sc[117:123]
    zero3 = sc[123:126]
    Bs = sc[128:164].reshape((6, 6))
    zero3[:] = 0.0
    has_fext = fext.shape[0] > 0
    g = (kf[0, T.GRAV], kf[0, T.GRAV + 1], kf[0, T.GRAV + 2]) if L > 0 else (0.0, 0.0, 0.0)
    for k in range(L):
        jt = T.joint_type(ki, k)
        iv, nvk = ki[k, T.IDX_V], ki[k, T.NV]
        p = ki[k, T.PARENT]
        code, cs, sn, e = rotation(ki, work, k)  # E_k and r_k of the forward dynamics' geometry
        r0, r1, r2 = offset(kf, work, L, k, code)
        d = T.dof_index(ki, k)
        if d >= 0:  # P_k = sign e_d
            for j in range(6):
                Pl[0, j] = 0.0
            Pl[0, d] = T.dof_sign(ki, k)
        else:
            prow = T.p_row(L, nv, iv)
            for n in range(nvk):
                for j in range(6):
                    Pl[n, j] = work[prow + n, j]
        if p < 0:
            for i in range(3):
                x0, x1, x2 = rot3(
                    code, cs, sn, e, 1.0 if i == 0 else 0.0, 1.0 if i == 1 else 0.0, 1.0 if i == 2 else 0.0
                )
                oR[k, i, 0], oR[k, i, 1], oR[k, i, 2] = x0, x1, x2  # row i of E^T
            op[k, 0], op[k, 1], op[k, 2] = 0.0, 0.0, 0.0  # the base is at rest: no shift
            for i in range(6):
                vp[i] = 0.0
                ap[i] = 0.0
            ap[3], ap[4], ap[5] = -g[0], -g[1], -g[2]
        else:
            for i in range(3):  # row i of R_p E^T = (E (row i of R_p))^T; o = o_p + R_p r
                x0, x1, x2 = rot3(code, cs, sn, e, oR[p, i, 0], oR[p, i, 1], oR[p, i, 2])
                oR[k, i, 0], oR[k, i, 1], oR[k, i, 2] = x0, x1, x2
                op[k, i] = oR[p, i, 0] * r0 + oR[p, i, 1] * r1 + oR[p, i, 2] * r2  # R_p r_k
            _shift_motion(tw[p], op[k], vp)  # the parent's twist and rate at o_k
            _shift_motion(td[p], op[k], ap)
        R = oR[k]
        for n in range(nvk):  # S_k at o_k in base axes: [R Pw; R Pv]
            c = iv + n
            for i in range(3):
                S[c, i] = R[i, 0] * Pl[n, 0] + R[i, 1] * Pl[n, 1] + R[i, 2] * Pl[n, 2]
            for i in range(3):
                S[c, 3 + i] = R[i, 0] * Pl[n, 3] + R[i, 1] * Pl[n, 4] + R[i, 2] * Pl[n, 5]
        universal = jt == UNIVERSAL
        link_rates(iv, nvk, universal, S, v, a, vp, ap, tw[k], td[k], x6, y6, va, aa, vl, al, vn, alpha, beta, wv)
        _world_inertia(kf, k, R, zero3, Ic[k])  # about o_k, base axes
        coriolis_matrix(Ic[k], tw[k], Cc[k], Bs)
        _matvec6(Ic[k], tw[k], x6)  # w_k = I tdot + t x* (I t) - f_ext (000 eqs. 1-2b)
        _fcross(tw[k], x6, y6)
        _matvec6(Ic[k], td[k], x6)
        for i in range(6):
            F[k, i] = x6[i] + y6[i]
        if has_fext:  # [n; f] in the link frame, about its origin -> base
            for i in range(3):
                x6[i] = R[i, 0] * fext[k, 0] + R[i, 1] * fext[k, 1] + R[i, 2] * fext[k, 2]
                x6[3 + i] = R[i, 0] * fext[k, 3] + R[i, 1] * fext[k, 4] + R[i, 2] * fext[k, 5]
            for i in range(6):
                F[k, i] -= x6[i]


@njit(cache=True, inline="always", fastmath={"contract"})
def _shift_motion(m, r, out):
    """out = the motion m about a point A, about A + r (base axes): [w; v + w x r]."""
    out[0], out[1], out[2] = m[0], m[1], m[2]
    out[3] = m[3] + m[1] * r[2] - m[2] * r[1]
    out[4] = m[4] + m[2] * r[0] - m[0] * r[2]
    out[5] = m[5] + m[0] * r[1] - m[1] * r[0]


@njit(cache=True, inline="always", fastmath={"contract"})
def _add_shifted_force(f, r, out):
    """out += the force f about a point B, about B - r (base axes): [n + r x f; f]."""
    out[0] += f[0] + r[1] * f[5] - r[2] * f[4]
    out[1] += f[1] + r[2] * f[3] - r[0] * f[5]
    out[2] += f[2] + r[0] * f[4] - r[1] * f[3]
    out[3] += f[3]
    out[4] += f[4]
    out[5] += f[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _add_congruence(K, r, out, tmp):
    """out += K (motion -> force about B) about B - r: ``[[1, rx], [0, 1]] K [[1, 0], [-rx, 1]]``
    (the motion about B - r moved to B, K, the force moved back)."""
    for i in range(6):  # tmp = K [[1, 0], [-rx, 1]]: columns 0-2 -= K[:, 3:6] rx
        k3, k4, k5 = K[i, 3], K[i, 4], K[i, 5]
        tmp[i, 0] = K[i, 0] - (k4 * r[2] - k5 * r[1])
        tmp[i, 1] = K[i, 1] - (k5 * r[0] - k3 * r[2])
        tmp[i, 2] = K[i, 2] - (k3 * r[1] - k4 * r[0])
        tmp[i, 3], tmp[i, 4], tmp[i, 5] = k3, k4, k5
    for j in range(6):  # out += [[1, rx], [0, 1]] tmp: rows 0-2 += rx tmp[3:6]
        f3, f4, f5 = tmp[3, j], tmp[4, j], tmp[5, j]
        out[0, j] += tmp[0, j] + r[1] * f5 - r[2] * f4
        out[1, j] += tmp[1, j] + r[2] * f3 - r[0] * f5
        out[2, j] += tmp[2, j] + r[0] * f4 - r[1] * f3
        out[3, j] += f3
        out[4, j] += f4
        out[5, j] += f5


@njit(cache=True, inline="always")
def _composite_to_parent(Ic, Cc, F, r, k, p, tmp):
    """Ic, Cc and F of the subtree of k into the parent's (000 Table 1, step 2), moved from o_k
    to o_p (``r = o_k - o_p``)."""
    _add_shifted_force(F[k], r, F[p])
    _add_congruence(Ic[k], r, Ic[p], tmp)
    _add_congruence(Cc[k], r, Cc[p], tmp)


@njit(cache=True, fastmath={"contract"})
def rnea_directional(ki, nv, dq, dv, buf, out):
    """out = dtau_dq dq + dtau_dv dv, the directional derivative of inverse dynamics at the state
    of the last :func:`base_frame_pass` (module docstring: P, Q forward, G backward); the pass
    leaves composites in Ic, Cc and F."""
    L = ki.shape[0]
    _, op, _, _, Ic, Cc, F, P, Q, G, S, alpha, beta, wv, sc = _views(buf, L, nv)
    pl, ql, sl, x6, y6 = sc[0:6], sc[6:12], sc[12:18], sc[18:24], sc[24:30]
    tmp = sc[36:72].reshape((6, 6))
    for k in range(L):  # forward sums over the support: P_k, Q_k (about o_k)
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        if p >= 0:
            _shift_motion(P[p], op[k], P[k])
            _shift_motion(Q[p], op[k], Q[k])
        for i in range(6):
            if p < 0:
                P[k, i] = 0.0
                Q[k, i] = 0.0
            G[k, i] = 0.0
            for n in range(nvk):
                c = iv + n
                P[k, i] += wv[c, i] * dv[c] - alpha[c, i] * dq[c]
                Q[k, i] += S[c, i] * dv[c] - beta[c, i] * dq[c]
    for k in range(L - 1, -1, -1):  # backward: rows of joint k, composites, G
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        _matvec6(Ic[k], P[k], x6)
        _matvec6(Cc[k], Q[k], y6)
        for i in range(6):
            x6[i] += y6[i] + G[k, i]
        for n in range(nvk):
            out[iv + n] = _dot6(S[iv + n], x6)
        if T.joint_type(ki, k) == UNIVERSAL:  # row 0, column 1: the ancestor's entry
            _fcross(S[iv + 1], F[k], y6)
            out[iv] += _dot6(S[iv], y6) * dq[iv + 1]
        if p < 0:
            continue
        for i in range(6):
            pl[i] = 0.0
            ql[i] = 0.0
            sl[i] = 0.0
            for n in range(nvk):
                c = iv + n
                pl[i] += wv[c, i] * dv[c] - alpha[c, i] * dq[c]
                ql[i] += S[c, i] * dv[c] - beta[c, i] * dq[c]
                sl[i] += S[c, i] * dq[c]
        _fcross(sl, F[k], x6)  # s_k x* F_k + Ic_k p_k + Cc_k q_k
        _matvec6(Ic[k], pl, y6)
        for i in range(6):
            x6[i] += y6[i]
        _matvec6(Cc[k], ql, y6)
        for i in range(6):
            x6[i] += y6[i] + G[k, i]
        _add_shifted_force(x6, op[k], G[p])
        _composite_to_parent(Ic, Cc, F, op[k], k, p, tmp)


@njit(cache=True, fastmath={"contract"})
def rnea_adjoint(ki, nv, mu, buf, gq, gv):
    """gq = dtau_dq^T mu, gv = dtau_dv^T mu at the state of the last :func:`base_frame_pass`
    (module docstring: U forward, Y and Z backward); leaves composites in Ic, Cc and F."""
    L = ki.shape[0]
    _, op, _, _, Ic, Cc, F, U, Y, Z, S, alpha, beta, wv, sc = _views(buf, L, nv)
    ul, x6, y6, z6, ua = sc[0:6], sc[6:12], sc[12:18], sc[18:24], sc[24:30]
    tmp = sc[36:72].reshape((6, 6))
    for k in range(L):  # forward sums over the support: U_k (about o_k)
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        if p >= 0:
            _shift_motion(U[p], op[k], ua)
        for i in range(6):
            acc = ua[i] if p >= 0 else 0.0
            for n in range(nvk):
                acc += S[iv + n, i] * mu[iv + n]
            U[k, i] = acc
            Y[k, i] = 0.0
            Z[k, i] = 0.0
    for k in range(L - 1, -1, -1):
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        _matvec6(Ic[k], U[k], x6)  # Yt_k = Ic_k U_k + sum Y_children
        _tmatvec6(Cc[k], U[k], y6)  # Zt_k = Cc_k^T U_k + sum Z_children
        for i in range(6):
            x6[i] += Y[k, i]
            y6[i] += Z[k, i]
            ua[i] = 0.0
        if p >= 0:
            _shift_motion(U[p], op[k], ua)
        universal = T.joint_type(ki, k) == UNIVERSAL
        for n in range(nvk):
            c = iv + n
            if universal and n == 1:  # the first axis is an ancestor of the second
                for i in range(6):
                    ua[i] += S[iv, i] * mu[iv]
            _fcross(S[c], F[k], z6)
            gq[c] = _dot6(ua, z6) - _dot6(x6, alpha[c]) - _dot6(y6, beta[c])
            gv[c] = _dot6(y6, S[c]) + _dot6(x6, wv[c])
        if p < 0:
            continue
        for i in range(6):  # Y_k = Yt_k - Ic_k U_p = sum Y_children + Ic_k u_k, likewise Z
            acc = 0.0
            for n in range(nvk):
                acc += S[iv + n, i] * mu[iv + n]
            ul[i] = acc
        _matvec6(Ic[k], ul, x6)
        _tmatvec6(Cc[k], ul, y6)
        for i in range(6):
            x6[i] += Y[k, i]
            y6[i] += Z[k, i]
        _add_shifted_force(x6, op[k], Y[p])
        _add_shifted_force(y6, op[k], Z[p])
        _composite_to_parent(Ic, Cc, F, op[k], k, p, tmp)


@njit(cache=True)
def _valid_vector(x, nv):
    """0, -2 for a wrong size, -1 for a value that is not finite."""
    if x.shape[0] != nv:
        return -2
    for i in range(nv):
        if not np.isfinite(x[i]):
            return -1
    return 0


@njit(cache=True)
def _prologue(kt, work, buf, q, v, tau, fext, qdd):
    """Checks, then the factorised forward dynamics into qdd and the base-frame pass at
    (q, v, qdd).  Status as :mod:`.entry` (-4: ``buf`` has the wrong size)."""
    ki = kt.view(T.INT)
    nv = v.shape[0]
    L = ki.shape[0]
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    if work.shape[0] == 0 or buf.shape[0] != buffer_size(L, nv):
        return -4
    status = factorised_forward_dynamics(ki, kt, work, q, v, tau, fext, qdd)
    if status:
        return status
    status = finite_result(qdd)
    if status:
        return status
    base_frame_pass(ki, kt, work, v, qdd, fext, buf)
    return 0


@njit_declared(JVP_SIGNATURE)
def forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out):
    """qdd = FD(q, v, tau) and out = dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv): the
    factorised forward dynamics, the base-frame pass, the directional inverse dynamics and one
    solve with the factors.  Status 0, -1 (a value), -2 (a shape), -3 (overflow), -4 (``buf``
    or ``work`` of the wrong size), k + 1 (singular articulated inertia of link k)."""
    nv = v.shape[0]
    status = _valid_vector(dq, nv) or _valid_vector(dv, nv) or _valid_vector(dtau, nv)
    if status:
        return status
    if out.shape[0] != nv:
        return -2
    status = _prologue(kt, work, buf, q, v, tau, fext, qdd)
    if status:
        return status
    ki = kt.view(T.INT)
    rhs = np.empty(nv)
    rnea_directional(ki, nv, dq, dv, buf, rhs)
    for i in range(nv):
        rhs[i] = dtau[i] - rhs[i]
    solve(ki, kt, work, rhs, out, ki.shape[0])
    return finite_result(out)


@njit_declared(VJP_SIGNATURE)
def forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau):
    """qdd = FD(q, v, tau), gtau = mu = M^-1 lam, gq = -dtau_dq^T mu, gv = -dtau_dv^T mu (the
    products of ``lam`` with dqdd_dq, dqdd_dv, dqdd_dtau).  Status as
    :func:`forward_dynamics_jvp_state`."""
    nv = v.shape[0]
    status = _valid_vector(lam, nv)
    if status:
        return status
    if gq.shape[0] != nv or gv.shape[0] != nv or gtau.shape[0] != nv:
        return -2
    status = _prologue(kt, work, buf, q, v, tau, fext, qdd)
    if status:
        return status
    ki = kt.view(T.INT)
    solve(ki, kt, work, lam, gtau, ki.shape[0])
    rnea_adjoint(ki, nv, gtau, buf, gq, gv)
    for i in range(nv):
        gq[i] = -gq[i]
        gv[i] = -gv[i]
    status = finite_result(gq)
    return status if status else finite_result(gv)
