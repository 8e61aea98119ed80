"""The block factors of the GIM and their inverses, ``I = U D U^T`` and ``(U^-1, D^-1)``, at link
level (001 eqs. A.3-A.4) or module level (002 eqs. A.20-A.21), in one pass over groups of
links, after the geometry pass and the articulated pass with its factors (Psi_k, Ihat_k,
Ihat_k^-1; :mod:`.forward_dynamics`).

A *group* is a kinematic module (module level) or one link (link level); its columns a0 .. a1
are contiguous (depth-first numbering) and groups come in the order of their links.  In the
base frame of :mod:`.gim` the link-level factor is ``U_{r,c} = N_r^T Psi_c`` for c in the subtree
of the link of row r (unit diagonal blocks).  For each group s, the backward recursion of 002
eqs. A.13-A.18 restricted to the group's own rows and columns gives ``W_ss = U_ss^-1`` and the
group's columns ``PsiBar_c = sum_m Psi_m W_{m,c}`` (``Psi_s W_ss``, one wrench per column).
Then, with no numerical inversion beyond the articulated pass's Ihat^-1:

* ``Ubar = U blockdiag(W_ss)``: identity diagonal blocks and ``Ubar_{r,c} = N_r^T PsiBar_c``
  for c beyond the group of row r (the group's columns combined once, not per row);
  ``Dbar_s = U_ss D_s U_ss^T``;
* ``Ubar^-1 = blockdiag(U_ss) U^-1``: identity diagonal blocks and ``Ubar^-1_{r,c} =
  -N_r^T eta~_c`` with ``eta~_c`` the sum over the groups below s on the path to c of
  ``PsiBar_t Ubar^-1_{t,c}`` (the recursion of 002 eqs. A.13-A.18 with the group as its
  unit, one wrench per column); ``Dbar_s^-1 = W_ss^T D_s^-1 W_ss``.

Work: the link-level factors' O(n d) entries at 6 multiplications each, plus O(z^3) per
group of z DOFs (the z x z blocks).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_one_version
from denoc_bridge.kernels.gim import XW, base_frame_pass, subtree_dofs


@njit_one_version(fastmath={"contract"})
def psi_to_base(ki, work, nv, X, Psi):
    """Psi_k of the articulated pass (link frames) in the base frame: a wrench, [n; f] ->
    [R n + p x R f; R f]."""
    L = ki.shape[0]
    for k in range(L):
        R00, R01, R02, R10, R11, R12 = X[k, 0], X[k, 1], X[k, 2], X[k, 3], X[k, 4], X[k, 5]
        R20, R21, R22 = X[k, 6], X[k, 7], X[k, 8]
        p0, p1, p2 = X[k, 9], X[k, 10], X[k, 11]
        v0 = ki[k, T.IDX_V]
        for n in range(ki[k, T.NV]):
            row = T.dof_row(L, v0 + n)
            a0, a1, a2 = work[row, T.H_PSI], work[row, T.H_PSI + 1], work[row, T.H_PSI + 2]
            a3, a4, a5 = work[row, T.H_PSI + 3], work[row, T.H_PSI + 4], work[row, T.H_PSI + 5]
            f0 = R00 * a3 + R01 * a4 + R02 * a5
            f1 = R10 * a3 + R11 * a4 + R12 * a5
            f2 = R20 * a3 + R21 * a4 + R22 * a5
            Psi[v0 + n, 0] = R00 * a0 + R01 * a1 + R02 * a2 + p1 * f2 - p2 * f1
            Psi[v0 + n, 1] = R10 * a0 + R11 * a1 + R12 * a2 + p2 * f0 - p0 * f2
            Psi[v0 + n, 2] = R20 * a0 + R21 * a1 + R22 * a2 + p0 * f1 - p1 * f0
            Psi[v0 + n, 3], Psi[v0 + n, 4], Psi[v0 + n, 5] = f0, f1, f2


@njit(cache=True, inline="always")
def group_links(ki, g, module_level):
    """(first link, end link) of group g."""
    if module_level:
        return ki[g, T.MFIRST], ki[g, T.MEND]
    return g, g + 1


@njit(cache=True, inline="always", fastmath={"contract"})
def dot6(N, r, E, c):
    return (
        N[r, 0] * E[c, 0]
        + N[r, 1] * E[c, 1]
        + N[r, 2] * E[c, 2]
        + N[r, 3] * E[c, 3]
        + N[r, 4] * E[c, 4]
        + N[r, 5] * E[c, 5]
    )


@njit(cache=True, fastmath={"contract"})
def group_recursion(ki, first, end, a0, a1, N, Psi, sub, E, Wg, Ug, lo, hi, se, with_u):
    """002 eqs. A.13-A.18 inside one group (links first .. end - 1, columns a0 .. a1 - 1):
    rows of W_ss = U_ss^-1 into ``Wg[r, c - a0]``, ``E[c] = PsiBar_c`` for the group's columns
    and, with ``with_u``, the rows of U_ss into ``Ug``; ``lo[r]``, ``hi[r]``: the columns of
    the joint of row r, ``se[r]`` the end of its subtree's."""
    for k in range(end - 1, first - 1, -1):
        v0, z = ki[k, T.IDX_V], ki[k, T.NV]
        c1 = min(v0 + sub[k], a1)
        for a in range(z):
            r = v0 + a
            lo[r], hi[r], se[r] = v0, v0 + z, v0 + sub[k]
            for c in range(a0, a1):  # (a branching group: columns off the subtree stay zero)
                Wg[r, c - a0] = 0.0
                Ug[r, c - a0] = 0.0
            Wg[r, r - a0] = 1.0
            for c in range(v0 + z, c1):  # W_{k,c} = -N_k^T eta~_c             002 (A.13-A.18)
                Wg[r, c - a0] = -dot6(N, r, E, c)
            if with_u:
                Ug[r, r - a0] = 1.0
                for c in range(v0 + z, c1):  # U_{k,c} = N_k^T Psi_c                 001 (A.4)
                    Ug[r, c - a0] = dot6(N, r, Psi, c)
        for c in range(v0, v0 + z):
            for j in range(6):
                E[c, j] = Psi[c, j]  # eta_c of the own columns: Psi_c W_cc = Psi_c
        for a in range(z):  # eta_c += Psi_k W_{k,c}
            r = v0 + a
            s0, s1, s2, s3, s4, s5 = Psi[r, 0], Psi[r, 1], Psi[r, 2], Psi[r, 3], Psi[r, 4], Psi[r, 5]
            for c in range(v0 + z, c1):
                x = Wg[r, c - a0]
                E[c, 0] += s0 * x
                E[c, 1] += s1 * x
                E[c, 2] += s2 * x
                E[c, 3] += s3 * x
                E[c, 4] += s4 * x
                E[c, 5] += s5 * x


@njit(cache=True, fastmath={"contract"})
def group_diagonal(L, nv, work, a0, a1, Ug, T_, lo, hi, B):
    """Dbar_s = U_ss D_s U_ss^T into B (upper triangle, mirrored); D_s = blockdiag(Ihat_k) of the
    group's joints, U_ss unit upper triangular (only the joints at or below both rows add);
    ``T_`` is scratch (z x z) for U_ss D_s."""
    for r in range(a0, a1):
        lr = lo[r]
        for m in range(a0, lr):
            T_[r, m - a0] = 0.0
        m = lr
        while m < a1:  # T = U_ss D_s, joint by joint
            m0, m1 = lo[m], hi[m]
            for j in range(m0, m1):
                x = 0.0
                for n in range(m0, m1):
                    x += Ug[r, n - a0] * work[T.ihat_row(L, nv, n), j - m0]
                T_[r, j - a0] = x
            m = m1
    for r in range(a0, a1):  # Dbar_{r,c} = sum_m T_{r,m} U_{c,m}, m from the joint of c on
        for c in range(r, a1):
            s = 0.0
            for m in range(lo[c] - a0, a1 - a0):
                s += T_[r, m] * Ug[c, m]
            B[r, c] = s
            B[c, r] = s


@njit(cache=True, fastmath={"contract"})
def group_diagonal_inverse(L, nv, work, a0, a1, Wg, T_, lo, hi, B):
    """Dbar_s^-1 = W_ss^T D_s^-1 W_ss into B (upper triangle, mirrored), W_ss unit upper
    triangular; ``T_`` is scratch (z x z) for D_s^-1 W_ss."""
    z = a1 - a0
    for r in range(a0, a1):  # T = D_s^-1 W_ss (rows)
        r0, r1 = lo[r], hi[r]
        for c in range(z):
            T_[r, c] = 0.0
        for n in range(r0, r1):
            d = work[T.ihatinv_row(L, nv, r), n - r0]
            for c in range(r0 - a0, z):
                T_[r, c] += d * Wg[n, c]
    for r in range(a0, a1):  # zero the block, then add the rank-one rows W_{m,r} T_{m,.}
        for c in range(a0, a1):
            B[r, c] = 0.0
    for m in range(a0, a1):
        for r in range(lo[m], a1):
            w = Wg[m, r - a0]
            if w != 0.0:
                for c in range(r - a0, z):
                    B[r, c + a0] += w * T_[m, c]
    for r in range(a0, a1):
        for c in range(r + 1, a1):
            B[c, r] = B[r, c]


@njit(cache=True, fastmath={"contract"})
def block_factors(ki, kf, work, nv, module_level, inverse, A, B):
    """The factors of :func:`denoc_bridge.udut` (``inverse`` off: A = U, B = D, I = U D U^T) or of
    :func:`denoc_bridge.inverse_udut` (A = U^-1, B = D^-1), at link level or, with
    ``module_level``, at module level, after the geometry pass and the articulated pass with
    ``factors`` (module docstring)."""
    L = ki.shape[0]
    A[:, :] = 0.0
    B[:, :] = 0.0
    if L == 0:
        return
    n_groups = ki[0, T.NMOD] if module_level else L
    zmax = 1
    for g in range(n_groups):
        first, end = group_links(ki, g, module_level)
        zmax = max(zmax, ki[end - 1, T.IDX_V] + ki[end - 1, T.NV] - ki[first, T.IDX_V])
    buf = np.empty(L * XW + 18 * nv + 2 * nv * zmax)  # one allocation
    X = buf[: L * XW].reshape(L, XW)
    o = L * XW
    N = buf[o : o + 6 * nv].reshape(nv, 6)
    Psi = buf[o + 6 * nv : o + 12 * nv].reshape(nv, 6)
    E = buf[o + 12 * nv : o + 18 * nv].reshape(nv, 6)
    Wg = buf[o + 18 * nv : o + 18 * nv + nv * zmax].reshape(nv, zmax)
    Ug = buf[o + 18 * nv + nv * zmax :].reshape(nv, zmax)
    ints = np.empty(L + 3 * nv, dtype=np.int64)
    sub, lo, hi, se = ints[:L], ints[L : L + nv], ints[L + nv : L + 2 * nv], ints[L + 2 * nv :]
    subtree_dofs(ki, sub)
    base_frame_pass(ki, kf, work, nv, X, N, False)
    psi_to_base(ki, work, nv, X, Psi)
    for g in range(n_groups - 1, -1, -1):  # groups in reverse: every group below s is done
        first, end = group_links(ki, g, module_level)
        a0, a1 = ki[first, T.IDX_V], ki[end - 1, T.IDX_V] + ki[end - 1, T.NV]
        group_recursion(ki, first, end, a0, a1, N, Psi, sub, E, Wg, Ug, lo, hi, se, not inverse)
        if inverse:
            group_diagonal_inverse(L, nv, work, a0, a1, Wg, Ug, lo, hi, B)
        else:
            group_diagonal(L, nv, work, a0, a1, Ug, Wg, lo, hi, B)
        for r in range(a0, a1):
            A[r, r] = 1.0
        if not inverse:
            continue
        for k in range(first, end):  # Ubar^-1_{r,c} = -N_r^T eta~_c beyond the group
            v0, z = ki[k, T.IDX_V], ki[k, T.NV]
            for r in range(v0, v0 + z):
                for c in range(a1, v0 + sub[k]):
                    A[r, c] = -dot6(N, r, E, c)
        for r in range(a0, a1):  # eta~_c += PsiBar_r Ubar^-1_{r,c} (E[r] = PsiBar_r)
            s0, s1, s2, s3, s4, s5 = E[r, 0], E[r, 1], E[r, 2], E[r, 3], E[r, 4], E[r, 5]
            for c in range(a1, se[r]):
                x = A[r, c]
                E[c, 0] += s0 * x
                E[c, 1] += s1 * x
                E[c, 2] += s2 * x
                E[c, 3] += s3 * x
                E[c, 4] += s4 * x
                E[c, 5] += s5 * x
    if inverse:
        return
    for g in range(n_groups):  # Ubar_{r,c} = N_r^T PsiBar_c beyond the group of r
        first, end = group_links(ki, g, module_level)
        a1 = ki[end - 1, T.IDX_V] + ki[end - 1, T.NV]
        for k in range(first, end):
            v0, z = ki[k, T.IDX_V], ki[k, T.NV]
            for r in range(v0, v0 + z):
                for c in range(a1, v0 + sub[k]):
                    A[r, c] = dot6(N, r, E, c)
