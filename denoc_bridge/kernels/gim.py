"""The analytic inverse of the GIM in the base frame of each tree (002 eqs. A.13-A.18, A.22), for
the numba derivatives that still call it (:func:`minv_from_factors`; issue 49 ports them).  The
GIM itself and the inverse of the public API are compiled (``denoc_bridge/core/gim.pxi``); numba's
GIM pass (``crba``) is gone (issue 48).

After the geometry pass (:mod:`.geometry`), :func:`base_frame_pass` expresses every link in the
frame of the root link of its tree (the base frame): its orientation R_k = R_b E_k^T and
origin p_k = p_b + R_b r_k and the columns of ``N_k = A_k P_k``, the joint-motion propagation
of joint k seen from the base.  In that frame the twist propagation A_{k,b} is the identity.
The inverse ``I^-1 = U^-T D^-1 U^-1`` (002 eq. A.22) comes out of two sweeps over the rows,
after the articulated pass of forward dynamics has given ``Psi_k``, ``Ihat_k`` and
``Ihat_k^-1`` in the link frames (000 eqs. 19-21; the projections ``Mhat - PsiHat Psi^T``
are kept in the link frames, where they lose ~100 times fewer digits than about a far
origin, and its singularity test names the joint): the backward sweep
(:func:`subtree_rows`) builds the rows of ``D^-1 U^-1`` over each subtree, the block
recursion of 002 eqs. A.13-A.18 with eta~ carried as one wrench per column; the forward
sweep (:func:`inverse_rows`) applies ``U^-T`` (000 Table 3, step 2), mu~ carried as one
twist per column, in one 6 x nv accumulator per kinematic module that the intra-modular
recursion updates in place and a child module starts from its parent module's.

The scheme is Pinocchio's CRBA and computeMinverse in their WORLD convention (Carpentier,
Mansard 2018), anchored at the root of each tree instead of the world origin.  Work: O(n^2),
12 multiplications per (row, column) pair.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.inverse_dynamics import offset, rotation
from denoc_bridge.kernels.spatial6 import rot3

#: columns of the per-link base-frame rows: R_k (9, row major), p_k (3), and the mass columns
#: (m, h (3), I_O (6)) that the compiled GIM fills (``core/gim.pxi``, the same layout)
X_R, X_P, X_M, X_H, X_I, XW = 0, 9, 12, 13, 16, 24


@njit(cache=True, fastmath={"contract"})
def subtree_dofs(ki, sub):
    """sub[k] = number of DOFs of the subtree of link k (its columns are idx_v[k] ..
    idx_v[k] + sub[k] - 1: depth-first numbering)."""
    L = ki.shape[0]
    for k in range(L):
        sub[k] = ki[k, T.NV]
    for k in range(L - 1, 0, -1):
        b = ki[k, T.PARENT]
        if b >= 0:
            sub[b] += sub[k]


@njit(cache=True, fastmath={"contract"})
def base_frame_pass(ki, kf, work, nv, X, N):
    """After the geometry pass (E_k as its rotation code, :mod:`.geometry`): R_k, p_k in X[k] (see
    X_R, X_P) and the base-frame columns of N_k = A_k P_k in the rows N[idx_v[k] + n] ([angular; linear] at the base
    origin)."""
    L = ki.shape[0]
    for k in range(L):
        b = ki[k, T.PARENT]
        code, cs, sn, e = rotation(ki, work, k)
        r0, r1, r2 = offset(kf, work, L, k, code)
        if b < 0:  # a root: its own frame is the base frame of its tree
            R00, R01, R02, R10, R11, R12, R20, R21, R22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
            p0, p1, p2 = 0.0, 0.0, 0.0
        else:  # R_k = R_b E_k^T (row i: E_k times row i of R_b), p_k = p_b + R_b r_k
            B00, B01, B02 = X[b, 0], X[b, 1], X[b, 2]
            B10, B11, B12 = X[b, 3], X[b, 4], X[b, 5]
            B20, B21, B22 = X[b, 6], X[b, 7], X[b, 8]
            R00, R01, R02 = rot3(code, cs, sn, e, B00, B01, B02)
            R10, R11, R12 = rot3(code, cs, sn, e, B10, B11, B12)
            R20, R21, R22 = rot3(code, cs, sn, e, B20, B21, B22)
            p0 = X[b, X_P] + B00 * r0 + B01 * r1 + B02 * r2
            p1 = X[b, X_P + 1] + B10 * r0 + B11 * r1 + B12 * r2
            p2 = X[b, X_P + 2] + B20 * r0 + B21 * r1 + B22 * r2
        X[k, 0], X[k, 1], X[k, 2] = R00, R01, R02
        X[k, 3], X[k, 4], X[k, 5] = R10, R11, R12
        X[k, 6], X[k, 7], X[k, 8] = R20, R21, R22
        X[k, X_P], X[k, X_P + 1], X[k, X_P + 2] = p0, p1, p2
        v0 = ki[k, T.IDX_V]
        dof = T.dof_index(ki, k)
        if dof >= 0:  # P_k = sign e_d: N = sign [R e_d; p x R e_d] or sign [0; R e_(d-3)]
            sg = float(T.dof_sign(ki, k))
            i = dof if dof < 3 else dof - 3
            x0 = sg * (R00 if i == 0 else (R01 if i == 1 else R02))
            x1 = sg * (R10 if i == 0 else (R11 if i == 1 else R12))
            x2 = sg * (R20 if i == 0 else (R21 if i == 1 else R22))
            if dof < 3:
                N[v0, 0], N[v0, 1], N[v0, 2] = x0, x1, x2
                N[v0, 3], N[v0, 4], N[v0, 5] = p1 * x2 - p2 * x1, p2 * x0 - p0 * x2, p0 * x1 - p1 * x0
            else:
                N[v0, 0], N[v0, 1], N[v0, 2] = 0.0, 0.0, 0.0
                N[v0, 3], N[v0, 4], N[v0, 5] = x0, x1, x2
            continue
        for n in range(ki[k, T.NV]):  # N = [R w; R v + p x R w]
            row = T.p_row(L, nv, v0 + n)
            w0, w1, w2 = work[row, 0], work[row, 1], work[row, 2]
            u0, u1, u2 = work[row, 3], work[row, 4], work[row, 5]
            x0 = R00 * w0 + R01 * w1 + R02 * w2
            x1 = R10 * w0 + R11 * w1 + R12 * w2
            x2 = R20 * w0 + R21 * w1 + R22 * w2
            N[v0 + n, 0], N[v0 + n, 1], N[v0 + n, 2] = x0, x1, x2
            N[v0 + n, 3] = R00 * u0 + R01 * u1 + R02 * u2 + p1 * x2 - p2 * x1
            N[v0 + n, 4] = R10 * u0 + R11 * u1 + R12 * u2 + p2 * x0 - p0 * x2
            N[v0 + n, 5] = R20 * u0 + R21 * u1 + R22 * u2 + p0 * x1 - p1 * x0


@njit(cache=True, fastmath={"contract"})
def inverse_rows(ki, nv, N, Psi, G, out):
    """Forward sweep, modules M_1 .. M_s and links 1^i .. eta^i (000 Table 3, step 2): the rows
    of I^-1 = U^-T (D^-1 U^-1) (002 eq. A.22), upper triangle, over the columns c >= idx_v[k]:
    I^-1_{k,c} = (D^-1 U^-1)_{k,c} - Ihat_k^-1 PsiHat_k^T mu~_c and mu_c = N_k I^-1_{k,c} + mu~_c,
    with mu~ of the first link of a module the mu of the last link of its parent module.
    ``G[i]`` (6, nv) is the accumulator of module i, one row per component, so that the sweeps
    over the columns vectorise."""
    for i in range(ki[0, T.NMOD]):
        first, end, p = ki[i, T.MFIRST], ki[i, T.MEND], ki[i, T.MPARENT]
        g = G[i]
        c0 = ki[first, T.IDX_V]
        for j in range(6):
            for c in range(c0, nv):
                g[j, c] = G[p, j, c] if p >= 0 else 0.0
        g0, g1, g2, g3, g4, g5 = g[0], g[1], g[2], g[3], g[4], g[5]
        for k in range(first, end):
            v0, z = ki[k, T.IDX_V], ki[k, T.NV]
            if z == 1:  # both steps in one sweep over the columns
                s0, s1, s2, s3, s4, s5 = Psi[v0, 0], Psi[v0, 1], Psi[v0, 2], Psi[v0, 3], Psi[v0, 4], Psi[v0, 5]
                n0, n1, n2, n3, n4, n5 = N[v0, 0], N[v0, 1], N[v0, 2], N[v0, 3], N[v0, 4], N[v0, 5]
                for c in range(v0, nv):
                    f0, f1, f2, f3, f4, f5 = g0[c], g1[c], g2[c], g3[c], g4[c], g5[c]
                    x = out[v0, c] - (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5)
                    out[v0, c] = x
                    g0[c], g1[c], g2[c] = f0 + n0 * x, f1 + n1 * x, f2 + n2 * x
                    g3[c], g4[c], g5[c] = f3 + n3 * x, f4 + n4 * x, f5 + n5 * x
                continue
            if p >= 0 or k > first:
                for a in range(z):  # minus Psi_k^T mu~_c             000 Table 3 (36)
                    r = v0 + a
                    s0, s1, s2, s3, s4, s5 = Psi[r, 0], Psi[r, 1], Psi[r, 2], Psi[r, 3], Psi[r, 4], Psi[r, 5]
                    for c in range(v0, nv):
                        out[r, c] -= s0 * g0[c] + s1 * g1[c] + s2 * g2[c] + s3 * g3[c] + s4 * g4[c] + s5 * g5[c]
            for a in range(z):  # mu_c = N_k I^-1_{k,c} + mu~_c    000 Table 3 (37)
                r = v0 + a
                n0, n1, n2, n3, n4, n5 = N[r, 0], N[r, 1], N[r, 2], N[r, 3], N[r, 4], N[r, 5]
                for c in range(v0, nv):
                    x = out[r, c]
                    g0[c] += n0 * x
                    g1[c] += n1 * x
                    g2[c] += n2 * x
                    g3[c] += n3 * x
                    g4[c] += n4 * x
                    g5[c] += n5 * x
    for r in range(nv):  # the lower triangle
        for c in range(r + 1, nv):
            out[c, r] = out[r, c]


@njit(cache=True, fastmath={"contract"})
def factors_to_base(ki, work, nv, X, U, Psi):
    """The articulated factors of the link-frame pass (:func:`.forward_dynamics.
    articulated_backward_recursion` with ``factors``) in the base frame: Psi_k and PsiHat_k =
    Psi_k Ihat_k are wrenches, [n; f] -> [R n + p x R f; R f]."""
    L = ki.shape[0]
    for k in range(L):
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = (
            X[k, 0],
            X[k, 1],
            X[k, 2],
            X[k, 3],
            X[k, 4],
            X[k, 5],
            X[k, 6],
            X[k, 7],
            X[k, 8],
        )
        p0, p1, p2 = X[k, X_P], X[k, X_P + 1], X[k, X_P + 2]
        v0, z = ki[k, T.IDX_V], ki[k, T.NV]
        for n in range(z):
            for which in range(2):
                if which == 0:
                    row = T.dof_row(L, v0 + n)
                    a0, a1, a2 = work[row, T.H_PSI], work[row, T.H_PSI + 1], work[row, T.H_PSI + 2]
                    a3, a4, a5 = work[row, T.H_PSI + 3], work[row, T.H_PSI + 4], work[row, T.H_PSI + 5]
                else:  # PsiHat = Psi Ihat
                    a0, a1, a2, a3, a4, a5 = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
                    for m in range(z):
                        row = T.dof_row(L, v0 + m)
                        x = work[T.ihat_row(L, nv, v0 + m), n]
                        a0 += work[row, T.H_PSI] * x
                        a1 += work[row, T.H_PSI + 1] * x
                        a2 += work[row, T.H_PSI + 2] * x
                        a3 += work[row, T.H_PSI + 3] * x
                        a4 += work[row, T.H_PSI + 4] * x
                        a5 += work[row, T.H_PSI + 5] * x
                f0 = R00 * a3 + R01 * a4 + R02 * a5
                f1 = R10 * a3 + R11 * a4 + R12 * a5
                f2 = R20 * a3 + R21 * a4 + R22 * a5
                y = Psi if which == 0 else U
                y[v0 + n, 0] = R00 * a0 + R01 * a1 + R02 * a2 + p1 * f2 - p2 * f1
                y[v0 + n, 1] = R10 * a0 + R11 * a1 + R12 * a2 + p2 * f0 - p0 * f2
                y[v0 + n, 2] = R20 * a0 + R21 * a1 + R22 * a2 + p0 * f1 - p1 * f0
                y[v0 + n, 3], y[v0 + n, 4], y[v0 + n, 5] = f0, f1, f2


@njit(cache=True, fastmath={"contract"})
def subtree_rows(ki, work, nv, N, U, F, sub, out):
    """Backward sweep, links L-1 .. 0 (002 eqs. A.13-A.18): the rows of ``D^-1 U^-1`` over the
    subtree of k into ``out``, Ihat_k^-1 on the diagonal block and ``-Ihat_k^-1 N_k^T eta~_c``
    beside it, and ``eta_c = PsiHat_k (D^-1 U^-1)_{k,c} + eta~_c`` in the columns of F (6, nv),
    one wrench per column, one row per component so that the sweeps over the columns
    vectorise (in the base frame the wrenches of a subtree add without a transform)."""
    L = ki.shape[0]
    t = np.empty(6)
    F0, F1, F2, F3, F4, F5 = F[0], F[1], F[2], F[3], F[4], F[5]
    for k in range(L - 1, -1, -1):
        v0, z = ki[k, T.IDX_V], ki[k, T.NV]
        c1 = v0 + sub[k]
        for a in range(z):
            for n in range(z):
                out[v0 + a, v0 + n] = work[T.ihatinv_row(L, nv, v0 + a), n]
        for j in range(6):
            for c in range(v0, v0 + z):
                F[j, c] = 0.0
        for a in range(z):
            r = v0 + a
            n0, n1, n2, n3, n4, n5 = N[r, 0], N[r, 1], N[r, 2], N[r, 3], N[r, 4], N[r, 5]
            if z == 1:  # both steps in one sweep over the columns
                dinv = out[r, v0]
                u0, u1, u2, u3, u4, u5 = U[r, 0], U[r, 1], U[r, 2], U[r, 3], U[r, 4], U[r, 5]
                F0[v0], F1[v0], F2[v0] = u0 * dinv, u1 * dinv, u2 * dinv
                F3[v0], F4[v0], F5[v0] = u3 * dinv, u4 * dinv, u5 * dinv
                for c in range(v0 + 1, c1):
                    f0, f1, f2, f3, f4, f5 = F0[c], F1[c], F2[c], F3[c], F4[c], F5[c]
                    x = -dinv * (n0 * f0 + n1 * f1 + n2 * f2 + n3 * f3 + n4 * f4 + n5 * f5)
                    out[r, c] = x
                    F0[c], F1[c], F2[c] = f0 + u0 * x, f1 + u1 * x, f2 + u2 * x
                    F3[c], F4[c], F5[c] = f3 + u3 * x, f4 + u4 * x, f5 + u5 * x
                break
            for c in range(v0 + z, c1):
                out[r, c] = n0 * F0[c] + n1 * F1[c] + n2 * F2[c] + n3 * F3[c] + n4 * F4[c] + n5 * F5[c]
        if z == 1:
            continue
        for c in range(v0 + z, c1):  # -Ihat^-1 (N^T eta~_c)
            for a in range(z):
                t[a] = out[v0 + a, c]
            for a in range(z):
                s = 0.0
                for n in range(z):
                    s -= out[v0 + a, v0 + n] * t[n]
                out[v0 + a, c] = s
        for a in range(z):  # eta_c += PsiHat_k (D^-1 U^-1)_{k,c}
            r = v0 + a
            u0, u1, u2, u3, u4, u5 = U[r, 0], U[r, 1], U[r, 2], U[r, 3], U[r, 4], U[r, 5]
            for c in range(v0, c1):
                x = out[r, c]
                F0[c] += u0 * x
                F1[c] += u1 * x
                F2[c] += u2 * x
                F3[c] += u3 * x
                F4[c] += u4 * x
                F5[c] += u5 * x


@njit(cache=True, fastmath={"contract"})
def minv_from_factors(ki, kf, work, nv, out):
    """I^-1 into ``out`` after the geometry pass and the articulated pass with ``factors``
    (Psi_k, Ihat_k, Ihat_k^-1 of every joint in ``work``, link frames): the factors go to the base
    frame, then the backward and forward sweeps over the rows."""
    L = ki.shape[0]
    if L == 0:
        return
    S = ki[0, T.NMOD]
    buf = np.empty(L * XW + 24 * nv + 6 * nv * S)  # one allocation
    X = buf[: L * XW].reshape(L, XW)
    o = L * XW
    N = buf[o : o + 6 * nv].reshape(nv, 6)
    U = buf[o + 6 * nv : o + 12 * nv].reshape(nv, 6)
    Psi = buf[o + 12 * nv : o + 18 * nv].reshape(nv, 6)
    F = buf[o + 18 * nv : o + 24 * nv].reshape(6, nv)
    G = buf[o + 24 * nv :].reshape(S, 6, nv)
    sub = np.empty(L, dtype=np.int64)
    subtree_dofs(ki, sub)
    base_frame_pass(ki, kf, work, nv, X, N)
    factors_to_base(ki, work, nv, X, U, Psi)
    out[:, :] = 0.0
    subtree_rows(ki, work, nv, N, U, F, sub, out)
    inverse_rows(ki, nv, N, Psi, G, out)
