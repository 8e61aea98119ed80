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
from numba import njit, prange

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.entry import valid_state
from denoc_bridge.kernels.joints import UNIVERSAL, joint_subspace, joint_transform


@njit(cache=True, inline="always")
def _mcross(a, b, out):
    """out = a x b for motions [w; v]: [aw x bw; aw x bv + av x bw]."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


@njit(cache=True, inline="always")
def _fcross(a, f, out):
    """out = a x* f for a motion a and a force f = [n; f]: [aw x n + av x f; aw x f]."""
    out[0] = a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    out[1] = a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    out[2] = a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    out[3] = a[1] * f[5] - a[2] * f[4]
    out[4] = a[2] * f[3] - a[0] * f[5]
    out[5] = a[0] * f[4] - a[1] * f[3]


@njit(cache=True, inline="always")
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, inline="always")
def _matvec6(A, x, out):
    for i in range(6):
        out[i] = A[i, 0] * x[0] + A[i, 1] * x[1] + A[i, 2] * x[2] + A[i, 3] * x[3] + A[i, 4] * x[4] + A[i, 5] * x[5]


@njit(cache=True, inline="always")
def _tmatvec6(A, x, out):
    for i in range(6):
        out[i] = A[0, i] * x[0] + A[1, i] * x[1] + A[2, i] * x[2] + A[3, i] * x[3] + A[4, i] * x[4] + A[5, i] * x[5]


@njit(cache=True)
def _world_inertia(kf, k, R, p, Iw, X, tmp):
    """Iw = X* M_k X^-1: the 6x6 mass matrix of link k (000 eq. 2b; m, h = m c, I_O of the table)
    expressed about the base origin in base axes, for the placement (R, p) of the link."""
    m = kf[k, T.MASS]
    h0, h1, h2 = kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
    Ml = np.empty((6, 6))
    io = (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5])
    Ml[0, 0], Ml[0, 1], Ml[0, 2] = io[0], io[1], io[2]
    Ml[1, 0], Ml[1, 1], Ml[1, 2] = io[1], io[3], io[4]
    Ml[2, 0], Ml[2, 1], Ml[2, 2] = io[2], io[4], io[5]
    # n = I_O w + h x v,  f = m v - h x w
    Ml[0, 3], Ml[0, 4], Ml[0, 5] = 0.0, -h2, h1
    Ml[1, 3], Ml[1, 4], Ml[1, 5] = h2, 0.0, -h0
    Ml[2, 3], Ml[2, 4], Ml[2, 5] = -h1, h0, 0.0
    for i in range(3):
        for j in range(3):
            Ml[3 + i, j] = Ml[j, 3 + i]
            Ml[3 + i, 3 + j] = m if i == j else 0.0
    # X* = [[R, [p] R], [0, R]]: tmp = X* Ml, Iw = tmp X*^T
    px = np.empty((3, 3))
    for j in range(3):
        px[0, j] = p[1] * R[2, j] - p[2] * R[1, j]
        px[1, j] = p[2] * R[0, j] - p[0] * R[2, j]
        px[2, j] = p[0] * R[1, j] - p[1] * R[0, j]
    for i in range(6):
        for j in range(6):
            X[i, j] = 0.0
    for i in range(3):
        for j in range(3):
            X[i, j] = R[i, j]
            X[3 + i, 3 + j] = R[i, j]
            X[i, 3 + j] = px[i, j]
    for i in range(6):
        for j in range(6):
            s = 0.0
            for n in range(6):
                s += X[i, n] * Ml[n, j]
            tmp[i, j] = s
    for i in range(6):
        for j in range(6):
            s = 0.0
            for n in range(6):
                s += tmp[i, n] * X[j, n]
            Iw[i, j] = s


@njit(cache=True)
def _coriolis_matrix(Iw, t, C):
    """C u = I (u x t) + u x* (I t) + t x* (I u) (the variation of the link wrench with t)."""
    h = np.empty(6)
    _matvec6(Iw, t, h)
    e = np.empty(6)
    col = np.empty(6)
    x = np.empty(6)
    y = np.empty(6)
    z = np.empty(6)
    for j in range(6):
        for i in range(6):
            e[i] = 1.0 if i == j else 0.0
        _mcross(e, t, x)
        _matvec6(Iw, x, col)
        _fcross(e, h, y)
        _fcross(t, Iw[:, j].copy(), z)
        for i in range(6):
            C[i, j] = col[i] + y[i] + z[i]


@njit(cache=True)
def derivatives_unchecked(ki, kf, q, v, a, fext, tau, dq, dv, M):
    """tau = ID(q, v, a), dtau/dq (tangent space), dtau/dv and M = dtau/da of a tree."""
    L = ki.shape[0]
    nv = v.shape[0]
    has_fext = fext.shape[0] > 0
    oR = np.empty((L, 3, 3))
    op = np.empty((L, 3))
    tw = np.empty((L, 6))  # twists about the base origin
    td = np.empty((L, 6))  # twist rates (gravity as the base's rate)
    S = np.empty((nv, 6))  # motion subspace columns, base frame
    alpha = np.empty((nv, 6))
    beta = np.empty((nv, 6))
    wv = np.empty((nv, 6))
    Ic = np.empty((L, 6, 6))
    Cc = np.empty((L, 6, 6))
    F = np.empty((L, 6))
    RJ, pJ, tmpR = np.empty((3, 3)), np.empty(3), np.empty((3, 3))
    Pl = np.empty((6, 6))
    Rl = np.empty((3, 3))
    pl = np.empty(3)
    X, tmp6 = np.empty((6, 6)), np.empty((6, 6))
    vp, ap, x6, y6 = np.empty(6), np.empty(6), np.empty(6), np.empty(6)
    vn, vl, al = np.empty(6), np.empty(6), np.empty(6)
    va, aa = np.empty(6), np.empty(6)
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
        for i in range(6):  # t_k = t_b + S qd, tdot_k = tdot_b + S qdd + t_b x S qd (+ universal)
            x6[i] = 0.0
            tw[k, i] = vp[i]
            td[k, i] = ap[i]
            for n in range(nvk):
                x6[i] += S[iv + n, i] * v[iv + n]
                td[k, i] += S[iv + n, i] * a[iv + n]
            tw[k, i] += x6[i]
        _mcross(vp, x6, y6)
        for i in range(6):
            td[k, i] += y6[i]
        universal = jt == UNIVERSAL
        if universal:  # node between the two rotations: t_A, tdot_A
            _mcross(S[iv], S[iv + 1], y6)
            for i in range(6):
                td[k, i] += y6[i] * v[iv] * v[iv + 1]
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
                vn[:] = tw[k]
            _mcross(S[c], vl, beta[c])
            _mcross(S[c], al, x6)
            _mcross(beta[c], vl, y6)
            for i in range(6):
                alpha[c, i] = x6[i] - y6[i]
                y6[i] = vl[i] + vn[i]
            _mcross(y6, S[c], wv[c])
        _world_inertia(kf, k, R, o, Ic[k], X, tmp6)
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
    Y = np.empty((6, 6))
    Z = np.empty((6, 6))
    gam = np.empty((6, 6))
    rho = np.empty((6, 6))
    mu = np.empty((6, 6))
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
                mu[n, i] = Y[n, i]
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
                    x = _dot6(S[r], mu[n])
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


@njit(cache=True)
def _zero(dq, dv, M):
    for i in range(dq.shape[0]):
        for j in range(dq.shape[1]):
            dq[i, j] = 0.0
            dv[i, j] = 0.0
            M[i, j] = 0.0


@njit(cache=True)
def _finite(x):
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            if not np.isfinite(x[i, j]):
                return False
    return True


@njit(cache=True)
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
