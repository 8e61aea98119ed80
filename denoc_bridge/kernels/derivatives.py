"""Analytical first-order derivatives of the recursive inverse dynamics of a tree.

``tau = ID(q, v, a)`` (000 Table 1) is differentiated pass by pass: a forward
recursion of the link placements, twists and twist rates, then a backward
recursion of composite quantities that yields ``dtau/dq``, ``dtau/dv`` and the
GIM ``M = dtau/da`` (000 eq. 16) in one sweep over each link's supporting
chain, as in Carpentier & Mansard (2018, "Analytical derivatives of rigid body
dynamics algorithms"; Pinocchio's ``computeRNEADerivatives``).

The recursion runs in the base frame (spatial vectors [angular; linear] about
the base origin, the papers' order), where a tangent perturbation ``dq_k``
of joint k (Pinocchio's ``integrate(q, dq)``: ``M_J(q + dq) = M_J(q) exp(S dq)``)
moves the subtree of k rigidly by the twist ``s = S_k dq_k``: every motion
subspace below k turns as ``s x S_j``, every link inertia as
``s x* I - I s x``, and the twists and twist rates of the subtree change by
(``lam`` = the body carrying joint k's axis, the parent link for a Lie-group joint)

    dt_i    = s x (t_i - t_lam)                                   (q)
    dtdot_i = s x (tdot_i - tdot_lam) - (s x t_lam) x (t_i - t_lam)
    dt_i    = s,  dtdot_i = s x t_i + (t_lam + t_node) x s       (qdot)

With the composite inertia ``Ic_k = sum I_i``, the composite wrench
``F_k = sum w_i`` and the composite of ``C_i(u) = I_i (u x t_i) + u x* (I_i t_i)
+ t_i x* (I_i u)`` over the subtree of k, the entries of column ``s`` (joint k)
are, for a row ``S_j`` of joint j,

    j in the subtree of k:  -S_j^T (Ic_j alpha + Cc_j beta),  S_j^T (Cc_j s + Ic_j w)
    j an ancestor of k:      S_j^T (s x* F_k - Ic_k alpha - Cc_k beta),  S_j^T (Cc_k s + Ic_k w)

with ``beta = s x t_lam``, ``alpha = s x tdot_lam - beta x t_lam`` and
``w = (t_lam + t_node) x s``.  The universal joint (two rotations, the first
axis fixed in the parent) is two such nodes: its first column is an ancestor
of its second.  Cost O(n d) for depth d, dense output.
"""

import numpy as np
from numba import njit, prange, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared
from denoc_bridge.kernels.entry import _nv, _work, finite_result, forward_dynamics_passes, valid_state
from denoc_bridge.kernels.gim import minv_from_factors
from denoc_bridge.kernels.joints import UNIVERSAL, joint_subspace, joint_transform

_M = types.float64[:, ::1]
_V = types.float64[::1]
#: kt, q, v, a, fext, tau, dtau_dq, dtau_dv, M: any other argument type raises TypeError (the
#: Python layer then converts), instead of compiling a new version
STATE_SIGNATURE = types.int64(_M, _V, _V, _V, _M, _V, _M, _M, _M)
#: kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv
FD_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _M, _V, _M, _M, _M)


@njit(cache=True, inline="always", fastmath={"contract"})
def _mcross(a, b, out):
    """out = a x b for motions [w; v]: [aw x bw; aw x bv + av x bw]."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


@njit(cache=True, inline="always", fastmath={"contract"})
def _fcross(a, f, out):
    """out = a x* f for a motion a and a force f = [n; f]: [aw x n + av x f; aw x f]."""
    out[0] = a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    out[1] = a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    out[2] = a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    out[3] = a[1] * f[5] - a[2] * f[4]
    out[4] = a[2] * f[3] - a[0] * f[5]
    out[5] = a[0] * f[4] - a[1] * f[3]


@njit(cache=True, inline="always", fastmath={"contract"})
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _matvec6(A, x, out):
    for i in range(6):
        out[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2] + A[i, 3] * x[3] + A[i, 4] * x[4] + A[i, 5] * x[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _tmatvec6(A, x, out):
    for i in range(6):
        out[i] = A[0, i] * x[0] + A[1, i] * x[1] + A[2, i] * x[2] + A[3, i] * x[3] + A[4, i] * x[4] + A[5, i] * x[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always", fastmath={"contract"})
def link_rates(iv, nvk, universal, S, v, a, vp, ap, twk, tdk, x6, y6, va, aa, vl, al, vn, alpha, beta, wv):
    """The forward pass of the derivatives at link k (columns iv .. iv + nvk of S, the parent's
    twist vp and rate ap): the twist twk and its rate tdk, and each column's alpha, beta (dq) and
    w (dqdot) of the module docstring (a universal joint's node between its two rotations)."""
    for i in range(6):  # t_k = t_b + S qd, tdot_k = tdot_b + S qdd + t_b x S qd (+ universal)
        x6[i] = 0.0
        twk[i] = vp[i]
        tdk[i] = ap[i]
        for n in range(nvk):
            x6[i] += S[iv + n, i] * v[iv + n]
            tdk[i] += S[iv + n, i] * a[iv + n]
        twk[i] += x6[i]
    _mcross(vp, x6, y6)
    for i in range(6):
        tdk[i] += y6[i]
    if universal:  # node between the two rotations: t_A, tdot_A
        _mcross(S[iv], S[iv + 1], y6)
        for i in range(6):
            tdk[i] += y6[i] * v[iv] * v[iv + 1]
            va[i] = vp[i] + S[iv, i] * v[iv]
        _mcross(vp, S[iv], y6)
        for i in range(6):
            aa[i] = ap[i] + S[iv, i] * a[iv] + y6[i] * v[iv]
    for n in range(nvk):  # alpha, beta (dq) and w (dqdot) of each column
        c = iv + n
        if universal and n == 1:
            vl[:] = va
            al[:] = aa
        else:
            vl[:] = vp
            al[:] = ap
        if universal and n == 0:
            vn[:] = va
        else:
            vn[:] = twk
        _mcross(S[c], vl, beta[c])
        _mcross(S[c], al, x6)
        _mcross(beta[c], vl, y6)
        for i in range(6):
            alpha[c, i] = x6[i] - y6[i]
            y6[i] = vl[i] + vn[i]
        _mcross(y6, S[c], wv[c])


@njit(cache=True, fastmath={"contract"})
def _world_inertia(kf, k, R, p, Iw):
    """Iw: the 6x6 mass matrix of link k (000 eqs. 2a-2b; m, h = m c and I_O of the table) about
    the base origin in base axes, for the link placement (R, p):
    ``[[I_0, [h']x], [-[h']x, m 1]]`` with ``h' = m p + R h`` and
    ``I_0 = R I_O R^T + m S(p) + 2 (p . R h) 1 - p (R h)^T - (R h) p^T``, ``S(x) = |x|^2 1 - x x^T``."""
    m = kf[k, T.MASS]
    h0, h1, h2 = kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
    io = (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5])
    # A = R I_O (I_O symmetric: xx xy xz / yy yz / zz)
    for i in range(3):
        a0 = R[i, 0] * io[0] + R[i, 1] * io[1] + R[i, 2] * io[2]
        a1 = R[i, 0] * io[1] + R[i, 1] * io[3] + R[i, 2] * io[4]
        a2 = R[i, 0] * io[2] + R[i, 1] * io[4] + R[i, 2] * io[5]
        for j in range(3):
            Iw[i, j] = a0 * R[j, 0] + a1 * R[j, 1] + a2 * R[j, 2]
    g = (
        R[0, 0] * h0 + R[0, 1] * h1 + R[0, 2] * h2,
        R[1, 0] * h0 + R[1, 1] * h1 + R[1, 2] * h2,
        R[2, 0] * h0 + R[2, 1] * h1 + R[2, 2] * h2,
    )
    pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    pg = p[0] * g[0] + p[1] * g[1] + p[2] * g[2]
    for i in range(3):
        for j in range(3):
            d = m * pp + 2.0 * pg if i == j else 0.0
            Iw[i, j] += d - m * p[i] * p[j] - p[i] * g[j] - g[i] * p[j]
    hw0, hw1, hw2 = m * p[0] + g[0], m * p[1] + g[1], m * p[2] + g[2]
    # n = I_0 w + h' x v,  f = m v - h' x w
    Iw[0, 3], Iw[0, 4], Iw[0, 5] = 0.0, -hw2, hw1
    Iw[1, 3], Iw[1, 4], Iw[1, 5] = hw2, 0.0, -hw0
    Iw[2, 3], Iw[2, 4], Iw[2, 5] = -hw1, hw0, 0.0
    for i in range(3):
        for j in range(3):
            Iw[3 + i, j] = Iw[j, 3 + i]
            Iw[3 + i, 3 + j] = m if i == j else 0.0


@njit(cache=True, fastmath={"contract"})
def _coriolis_matrix(Iw, t, C):
    """C u = I (u x t) + u x* (I t) + t x* (I u) (the variation of the link wrench with t),
    column by column (u = e_j)."""
    hn0 = Iw[0, 0] * t[0] + Iw[0, 1] * t[1] + Iw[0, 2] * t[2] + Iw[0, 3] * t[3] + Iw[0, 4] * t[4] + Iw[0, 5] * t[5]
    hn1 = Iw[1, 0] * t[0] + Iw[1, 1] * t[1] + Iw[1, 2] * t[2] + Iw[1, 3] * t[3] + Iw[1, 4] * t[4] + Iw[1, 5] * t[5]
    hn2 = Iw[2, 0] * t[0] + Iw[2, 1] * t[1] + Iw[2, 2] * t[2] + Iw[2, 3] * t[3] + Iw[2, 4] * t[4] + Iw[2, 5] * t[5]
    hf0 = Iw[3, 0] * t[0] + Iw[3, 1] * t[1] + Iw[3, 2] * t[2] + Iw[3, 3] * t[3] + Iw[3, 4] * t[4] + Iw[3, 5] * t[5]
    hf1 = Iw[4, 0] * t[0] + Iw[4, 1] * t[1] + Iw[4, 2] * t[2] + Iw[4, 3] * t[3] + Iw[4, 4] * t[4] + Iw[4, 5] * t[5]
    hf2 = Iw[5, 0] * t[0] + Iw[5, 1] * t[1] + Iw[5, 2] * t[2] + Iw[5, 3] * t[3] + Iw[5, 4] * t[4] + Iw[5, 5] * t[5]
    for j in range(6):
        e0 = 1.0 if j % 3 == 0 else 0.0
        e1 = 1.0 if j % 3 == 1 else 0.0
        e2 = 1.0 if j % 3 == 2 else 0.0
        if j < 3:  # u = [e; 0]: u x t = [e x tw; e x tv], u x* h = [e x hn; e x hf]
            x0, x1, x2 = _cross3(e0, e1, e2, t[0], t[1], t[2])
            x3, x4, x5 = _cross3(e0, e1, e2, t[3], t[4], t[5])
            y0, y1, y2 = _cross3(e0, e1, e2, hn0, hn1, hn2)
            y3, y4, y5 = _cross3(e0, e1, e2, hf0, hf1, hf2)
        else:  # u = [0; e]: u x t = [0; e x tw], u x* h = [e x hf; 0]
            x0, x1, x2 = 0.0, 0.0, 0.0
            x3, x4, x5 = _cross3(e0, e1, e2, t[0], t[1], t[2])
            y0, y1, y2 = _cross3(e0, e1, e2, hf0, hf1, hf2)
            y3, y4, y5 = 0.0, 0.0, 0.0
        # t x* (I e_j) = [tw x n + tv x f; tw x f] with [n; f] column j of I
        n0, n1, n2, f0, f1, f2 = Iw[0, j], Iw[1, j], Iw[2, j], Iw[3, j], Iw[4, j], Iw[5, j]
        a0, a1, a2 = _cross3(t[0], t[1], t[2], n0, n1, n2)
        b0, b1, b2 = _cross3(t[3], t[4], t[5], f0, f1, f2)
        c0, c1, c2 = _cross3(t[0], t[1], t[2], f0, f1, f2)
        z = (a0 + b0 + y0, a1 + b1 + y1, a2 + b2 + y2, c0 + y3, c1 + y4, c2 + y5)
        for i in range(6):
            C[i, j] = (
                Iw[i, 0] * x0 + Iw[i, 1] * x1 + Iw[i, 2] * x2 + Iw[i, 3] * x3 + Iw[i, 4] * x4 + Iw[i, 5] * x5 + z[i]
            )


@njit(cache=True, fastmath={"contract"})
def derivatives_unchecked(ki, kf, q, v, a, fext, tau, dq, dv, M):
    """tau = ID(q, v, a), dtau/dq (tangent space), dtau/dv and M = dtau/da of a tree."""
    L = ki.shape[0]
    nv = v.shape[0]
    has_fext = fext.shape[0] > 0
    buf = np.empty(L * 96 + nv * 24 + 168)  # one allocation, carved below
    oR = buf[0 : 9 * L].reshape((L, 3, 3))
    op = buf[9 * L : 12 * L].reshape((L, 3))
    tw = buf[12 * L : 18 * L].reshape((L, 6))  # twists about the base origin
    td = buf[18 * L : 24 * L].reshape((L, 6))  # twist rates (gravity as the base's rate)
    Ic = buf[24 * L : 60 * L].reshape((L, 6, 6))
    Cc = buf[60 * L : 96 * L].reshape((L, 6, 6))
    o = 96 * L
    S = buf[o : o + 6 * nv].reshape((nv, 6))  # motion subspace columns, base frame
    alpha = buf[o + 6 * nv : o + 12 * nv].reshape((nv, 6))
    beta = buf[o + 12 * nv : o + 18 * nv].reshape((nv, 6))
    wv = buf[o + 18 * nv : o + 24 * nv].reshape((nv, 6))
    o += 24 * nv
    RJ = buf[o : o + 9].reshape((3, 3))
    tmpR = buf[o + 9 : o + 18].reshape((3, 3))
    Rl = buf[o + 18 : o + 27].reshape((3, 3))
    pJ = buf[o + 27 : o + 30]
    pl = buf[o + 30 : o + 33]
    Pl = buf[o + 33 : o + 69].reshape((6, 6))
    vp, ap, x6 = buf[o + 69 : o + 75], buf[o + 75 : o + 81], buf[o + 81 : o + 87]
    y6, vn, vl = buf[o + 87 : o + 93], buf[o + 93 : o + 99], buf[o + 99 : o + 105]
    al, va, aa = buf[o + 105 : o + 111], buf[o + 111 : o + 117], buf[o + 117 : o + 123]
    F = np.empty((L, 6))
    g = (kf[0, T.GRAV], kf[0, T.GRAV + 1], kf[0, T.GRAV + 2]) if L > 0 else (0.0, 0.0, 0.0)
    for k in range(L):  # forward recursion (000 Table 1, step 1)
        jt = T.joint_type(ki, k)
        iq, nqk = ki[k, T.IDX_Q], ki[k, T.NQ]
        iv, nvk = ki[k, T.IDX_V], ki[k, T.NV]
        p = ki[k, T.PARENT]
        axis = kf[k, T.AXIS : T.AXIS + 3]
        axis2 = kf[k, T.AXIS2 : T.AXIS2 + 3]
        joint_transform(jt, axis, axis2, q[iq : iq + nqk], RJ, pJ, tmpR)
        joint_subspace(jt, axis, axis2, q[iq : iq + nqk], Pl[:nvk])
        for i in range(3):  # child -> parent: R0 RJ, r = r0 + R0 pJ
            pl[i] = kf[k, T.T0 + i]
            for j in range(3):
                Rl[i, j] = (
                    kf[k, T.R0 + 3 * i] * RJ[0, j]
                    + kf[k, T.R0 + 3 * i + 1] * RJ[1, j]
                    + kf[k, T.R0 + 3 * i + 2] * RJ[2, j]
                )
                pl[i] += kf[k, T.R0 + 3 * i + j] * pJ[j]
        if p < 0:
            oR[k] = Rl
            op[k] = pl
            for i in range(6):
                vp[i] = 0.0
                ap[i] = 0.0
            ap[3], ap[4], ap[5] = -g[0], -g[1], -g[2]
        else:
            for i in range(3):
                op[k, i] = op[p, i]
                for j in range(3):
                    oR[k, i, j] = oR[p, i, 0] * Rl[0, j] + oR[p, i, 1] * Rl[1, j] + oR[p, i, 2] * Rl[2, j]
                    op[k, i] += oR[p, i, j] * pl[j]
            for i in range(6):
                vp[i] = tw[p, i]
                ap[i] = td[p, i]
        R = oR[k]
        o = op[k]
        for n in range(nvk):  # S_k in the base frame: [R Pw; R Pv + o x R Pw]
            c = iv + n
            for i in range(3):
                S[c, i] = R[i, 0] * Pl[n, 0] + R[i, 1] * Pl[n, 1] + R[i, 2] * Pl[n, 2]
            for i in range(3):
                S[c, 3 + i] = R[i, 0] * Pl[n, 3] + R[i, 1] * Pl[n, 4] + R[i, 2] * Pl[n, 5]
            S[c, 3] += o[1] * S[c, 2] - o[2] * S[c, 1]
            S[c, 4] += o[2] * S[c, 0] - o[0] * S[c, 2]
            S[c, 5] += o[0] * S[c, 1] - o[1] * S[c, 0]
        universal = jt == UNIVERSAL
        link_rates(iv, nvk, universal, S, v, a, vp, ap, tw[k], td[k], x6, y6, va, aa, vl, al, vn, alpha, beta, wv)
        _world_inertia(kf, k, R, o, Ic[k])
        _coriolis_matrix(Ic[k], tw[k], Cc[k])
        _matvec6(Ic[k], tw[k], x6)  # w_k = I tdot + t x* (I t) - f_ext (000 eqs. 1-2b)
        _fcross(tw[k], x6, y6)
        _matvec6(Ic[k], td[k], x6)
        for i in range(6):
            F[k, i] = x6[i] + y6[i]
        if has_fext:  # [n; f] in the link frame, about its origin -> base
            for i in range(3):
                x6[i] = R[i, 0] * fext[k, 0] + R[i, 1] * fext[k, 1] + R[i, 2] * fext[k, 2]
                x6[3 + i] = R[i, 0] * fext[k, 3] + R[i, 1] * fext[k, 4] + R[i, 2] * fext[k, 5]
            x6[0] += o[1] * x6[5] - o[2] * x6[4]
            x6[1] += o[2] * x6[3] - o[0] * x6[5]
            x6[2] += o[0] * x6[4] - o[1] * x6[3]
            for i in range(6):
                F[k, i] -= x6[i]
    back = np.empty((4, 6, 6))
    Y, Z, gam, rho = back[0], back[1], back[2], back[3]
    for k in range(L - 1, -1, -1):  # backward recursion (000 Table 1, step 2)
        iv, nvk = ki[k, T.IDX_V], ki[k, T.NV]
        Ik, Ck, Fk = Ic[k], Cc[k], F[k]
        for n in range(nvk):
            c = iv + n
            _matvec6(Ik, S[c], Y[n])  # S^T Ic (Ic symmetric)
            _tmatvec6(Ck, S[c], Z[n])  # S^T Cc
            _fcross(S[c], Fk, gam[n])  # s x* F - Ic alpha - Cc beta
            _matvec6(Ik, alpha[c], x6)
            _matvec6(Ck, beta[c], y6)
            for i in range(6):
                gam[n, i] -= x6[i] + y6[i]
            _matvec6(Ck, S[c], rho[n])  # Cc s + Ic w
            _matvec6(Ik, wv[c], x6)
            for i in range(6):
                rho[n, i] += x6[i]
            tau[c] = _dot6(S[c], Fk) + kf[k, T.ARM + n] * a[c]
        for r in range(nvk):  # rows and columns of joint k
            for n in range(nvk):
                c = iv + n
                dq[iv + r, c] = -(_dot6(Y[r], alpha[c]) + _dot6(Z[r], beta[c]))
                dv[iv + r, c] = _dot6(Z[r], S[c]) + _dot6(Y[r], wv[c])
                M[iv + r, c] = _dot6(Y[r], S[c])
            M[iv + r, iv + r] += kf[k, T.ARM + r]
        if T.joint_type(ki, k) == UNIVERSAL:  # the first axis is fixed in the parent
            dq[iv, iv + 1] = _dot6(S[iv], gam[1])
        j = ki[k, T.PARENT]
        while j >= 0:  # the supporting chain: rows of the ancestors, columns of k and back
            jv, nvj = ki[j, T.IDX_V], ki[j, T.NV]
            for r in range(jv, jv + nvj):
                for n in range(nvk):
                    c = iv + n
                    dq[r, c] = _dot6(S[r], gam[n])
                    dq[c, r] = -(_dot6(Y[n], alpha[r]) + _dot6(Z[n], beta[r]))
                    dv[r, c] = _dot6(S[r], rho[n])
                    dv[c, r] = _dot6(Z[n], S[r]) + _dot6(Y[n], wv[r])
                    x = _dot6(S[r], Y[n])  # S_r^T Ic_k S_c
                    M[r, c] = x
                    M[c, r] = x
            j = ki[j, T.PARENT]
        p = ki[k, T.PARENT]
        if p >= 0:  # composites: Ic, Cc, F of the parent's subtree
            for i in range(6):
                F[p, i] += Fk[i]
                for jj in range(6):
                    Ic[p, i, jj] += Ik[i, jj]
                    Cc[p, i, jj] += Ck[i, jj]
        # entries of rows outside the support and subtree of k stay zero
    return 0


@njit(cache=True, fastmath={"contract"})
def _zero(dq, dv, M):
    for i in range(dq.shape[0]):
        for j in range(dq.shape[1]):
            dq[i, j] = 0.0
            dv[i, j] = 0.0
            M[i, j] = 0.0


@njit(cache=True, fastmath={"contract"})
def _finite(x):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if not np.isfinite(x[i, j]):
                return False
    return True


@njit_declared(STATE_SIGNATURE, fastmath={"contract"})
def inverse_dynamics_derivatives_state(kt, q, v, a, fext, tau, dq, dv, M):
    """Entry: checks the state (:func:`.entry.valid_state`), then the derivatives.  Status 0, -1
    (a value), -2 (a shape) or -3 (finite inputs, non-finite result)."""
    ki = kt.view(T.INT)
    nv = v.shape[0]
    status = valid_state(ki, q, v, a, fext, tau, np.empty((0, T.W)), nv)
    if status:
        return status
    if dq.shape != (nv, nv) or dv.shape != (nv, nv) or M.shape != (nv, nv):
        return -2
    _zero(dq, dv, M)
    derivatives_unchecked(ki, kt, q, v, a, fext, tau, dq, dv, M)
    if not (_finite(dq) and _finite(dv) and _finite(M)):
        return -3
    return 0


@njit(cache=True, parallel=True)
def inverse_dynamics_derivatives_batch(kt, Q, V, A, FEXT, TAU, DQ, DV, MM, status):
    """The derivatives of every state of a leading batch axis, in parallel (FEXT (B, L, 6) or
    (0, 0, 6) for none)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        status[b] = inverse_dynamics_derivatives_state(kt, Q[b], V[b], A[b], fext, TAU[b], DQ[b], DV[b], MM[b])


@njit_declared(FD_SIGNATURE, fastmath={"contract"})
def forward_dynamics_derivatives_state(kt, work, q, v, tau, fext, qdd, ddq, ddv, Minv):
    """Entry: qdd = FD(q, v, tau) by the compiled O(n) forward dynamics (000 eqs. 18-23, as
    :func:`.entry.forward_dynamics_state`, which checks the inputs and reports a singular
    articulated inertia), the derivatives of inverse dynamics at (q, v, qdd), then
    ``dqdd/dx = -M^-1 dtau/dx`` (implicit-function theorem) with ``M^-1 = U^-T D^-1 U^-1``
    from the articulated factors of the same pass (002 eqs. A.13-A.22,
    :func:`.gim.minv_from_factors`, as ``inverse_mass_matrix``).  Status as
    :func:`inverse_dynamics_derivatives_state`."""
    ki, kf = kt.view(T.INT), kt
    nv = _nv(ki)
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    if ddq.shape != (nv, nv) or ddv.shape != (nv, nv) or Minv.shape != (nv, nv):
        return -2
    work = _work(ki, work, nv)
    status = forward_dynamics_passes(ki, kf, work, q, v, tau, fext, qdd, True)  # keeps Ihat, Ihat^-1
    if status:
        return status
    status = finite_result(qdd)
    if status:
        return status
    minv_from_factors(ki, kf, work, nv, Minv)
    dq = np.empty((nv, nv))
    dv = np.empty((nv, nv))
    M = np.empty((nv, nv))
    status = inverse_dynamics_derivatives_state(kt, q, v, qdd, fext, np.empty(nv), dq, dv, M)
    if status:
        return status
    np.dot(Minv, dq, ddq)
    np.dot(Minv, dv, ddv)
    for i in range(nv):
        for j in range(nv):
            ddq[i, j] = -ddq[i, j]
            ddv[i, j] = -ddv[i, j]
    if not (_finite(ddq) and _finite(ddv) and _finite(Minv)):
        return -3
    return 0


@njit(cache=True, parallel=True)
def forward_dynamics_derivatives_batch(kt, Q, V, TAU, FEXT, QDD, DQ, DV, MINV, status):
    """:func:`forward_dynamics_derivatives_state` for every state of a leading batch axis, in
    parallel (each state with its own work array)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        work = np.empty((0, T.W))
        status[b] = forward_dynamics_derivatives_state(
            kt, work, Q[b], V[b], TAU[b], fext, QDD[b], DQ[b], DV[b], MINV[b]
        )
