"""O(n) forward dynamics by block reverse Gaussian elimination (000 eqs. 18-23, Table 3;
001 eqs. A.1-A.8 for multi-DOF joints; 003 eqs. 30-37).

After the forward recursion of inverse dynamics with zero accelerations
(:func:`.inverse_dynamics.twist_forward_recursion`, which gives the link
wrenches behind ``phi``), two passes remain:

* :func:`articulated_backward_recursion`, M_s..M_1 and eta^i..1^i: the
  articulated module masses (000 eqs. 19-21: ``Mhat``, ``PsiHat``, ``Ihat``,
  ``Psi``, ``Mbar``), ``phi`` (000 Table 1, step 2), and the solution of
  ``U phihat = phi`` and ``D phitilde = phihat`` (000 Table 3, step 1);
* :func:`acceleration_forward_recursion`, M_1..M_s and 1^i..eta^i: the
  solution of ``U^T qdd = phitilde`` (000 Table 3, step 2).

The articulated mass, the wrench sum and eta are carried from link to link
inside a module; only the first link of a module adds them into the
accumulators of its parent module (``A^{i,beta}``, 000 eq. 20).  The two
backward sums of 6-vectors, w~ (000 Table 1) and eta~ (000 Table 3), obey the
same recursion and are carried as one vector ``xi = w~ + eta~``:
``phihat_k = tau_k - P_k^T xi_k`` and ``xi_b = w_b + sum_c A_{c,b}^T (xi_c + Psi_c phihat_c)``.
Masses are symmetric 21-tuples (:mod:`.spatial6`).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_one_version
from denoc_bridge.kernels.inverse_dynamics import NO_E, module_row, modules, n_modules, offset, rotation, unit6
from denoc_bridge.kernels.prefetch import AHEAD, PREFETCH_LINKS, prefetch
from denoc_bridge.kernels.spatial6 import (
    apply_A,
    apply_At,
    column,
    congruence_to_parent,
    diagonal_max,
    minus_outer,
    pick6,
    plus_link_mass,
    sym_index,
)

SINGULAR_RTOL = 1e-12
NO_COL = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, fastmath={"contract"})
def spd_inverse(A, z, Ainv, L, X, scale):
    """Inverse of the z x z symmetric positive definite block A[:z, :z] by Cholesky.

    ``L`` and ``X`` are 6x6 scratch.  Returns False when a pivot is not larger
    than SINGULAR_RTOL * scale (singular or indefinite articulated inertia).
    """
    for j in range(z):
        s = A[j, j]
        for m in range(j):
            s -= L[j, m] * L[j, m]
        if not (s > SINGULAR_RTOL * scale):
            return False
        L[j, j] = np.sqrt(s)
        for i in range(j + 1, z):
            s = A[i, j]
            for m in range(j):
                s -= L[i, m] * L[j, m]
            L[i, j] = s / L[j, j]
    for c in range(z):  # X = L^-1 (lower triangular)
        for i in range(z):
            if i < c:
                X[i, c] = 0.0
            elif i == c:
                X[i, c] = 1.0 / L[i, i]
            else:
                s = 0.0
                for m in range(c, i):
                    s += L[i, m] * X[m, c]
                X[i, c] = -s / L[i, i]
    for i in range(z):  # A^-1 = X^T X
        for c in range(i, z):
            s = 0.0
            for m in range(c, z):
                s += X[m, i] * X[m, c]
            Ainv[i, c] = s
            Ainv[c, i] = s
    return True


@njit(cache=True, fastmath={"contract"})
def articulated_joint_general(ki, kf, k, nv, work, M, xi, tau, scale, s):
    """Joint factors for a joint with several DOFs or a general axis (z_k x z_k blocks,
    001 eqs. A.4-A.7): PsiHat = Mhat P, Ihat = P^T PsiHat (+ armature), Psi = PsiHat Ihat^-1,
    phihat = tau - P^T xi (003 eq. 31), phitilde = Ihat^-1 phihat (eq. 35).
    Returns (ok, Mbar, xi + Psi phihat); ``s`` is (6, 6, 6) scratch."""
    L = ki.shape[0]
    v0 = ki[k, T.IDX_V]
    dof, prow, ihat, ihatinv = T.dof_row(L, v0), T.p_row(L, nv, v0), T.ihat_row(L, nv, v0), T.ihatinv_row(L, nv, v0)
    z = ki[k, T.NV]
    PsiHat, Ik, Iinv, ph = s[0], s[1], s[2], s[5, 0]
    for n in range(z):
        for a in range(6):
            acc = 0.0
            for m in range(6):
                acc += M[sym_index(a, m)] * work[prow + n, m]
            PsiHat[n, a] = acc  # PsiHat_k = Mhat_k P_k    001 (A.5)
    for a in range(z):
        for n in range(z):
            acc = 0.0
            for m in range(6):
                acc += work[prow + a, m] * PsiHat[n, m]
            Ik[a, n] = acc  # Ihat_k = P_k^T PsiHat_k  001 (A.4)
        Ik[a, a] += kf[k, T.ARM + a]
        acc = tau[v0 + a]
        for m in range(6):
            acc -= work[prow + a, m] * xi[m]
        ph[a] = acc  # phihat_k                 003 (31)
    xi_up = (xi[0], xi[1], xi[2], xi[3], xi[4], xi[5])
    if not spd_inverse(Ik, z, Iinv, s[3], s[4], scale):
        return False, M, xi_up
    for a in range(z):
        acc = 0.0
        for n in range(z):
            work[ihat + a, n] = Ik[a, n]
            work[ihatinv + a, n] = Iinv[a, n]
            acc += Iinv[a, n] * ph[n]
        work[dof + a, T.H_PHIT] = acc  # phitilde_k = Ihat^-1 phihat 003 (35)
        for m in range(6):
            acc = 0.0
            for n in range(z):
                acc += PsiHat[n, m] * Iinv[n, a]
            work[dof + a, T.H_PSI + m] = acc  # Psi_k = PsiHat_k Ihat_k^-1 001 (A.5)
    for a in range(z):
        p = ph[a]
        o, r = T.H_PSI, dof + a
        psi = (work[r, o], work[r, o + 1], work[r, o + 2], work[r, o + 3], work[r, o + 4], work[r, o + 5])
        xi_up = (
            xi_up[0] + psi[0] * p,
            xi_up[1] + psi[1] * p,
            xi_up[2] + psi[2] * p,
            xi_up[3] + psi[3] * p,
            xi_up[4] + psi[4] * p,
            xi_up[5] + psi[5] * p,
        )
        M = minus_outer(
            M, (PsiHat[a, 0], PsiHat[a, 1], PsiHat[a, 2], PsiHat[a, 3], PsiHat[a, 4], PsiHat[a, 5]), psi
        )  # Mbar_k                   001 (A.7)
    return True, M, xi_up


@njit(cache=True, inline="always")
def load_mass(work, b):
    """The 21-tuple mass stored in rows b, b + 1 (8 entries each) and b + 2 (5 entries)."""
    return (
        work[b, 0],
        work[b, 1],
        work[b, 2],
        work[b, 3],
        work[b, 4],
        work[b, 5],
        work[b, 6],
        work[b, 7],
        work[b + 1, 0],
        work[b + 1, 1],
        work[b + 1, 2],
        work[b + 1, 3],
        work[b + 1, 4],
        work[b + 1, 5],
        work[b + 1, 6],
        work[b + 1, 7],
        work[b + 2, 0],
        work[b + 2, 1],
        work[b + 2, 2],
        work[b + 2, 3],
        work[b + 2, 4],
    )


@njit(cache=True, inline="always")
def add_mass(work, b, M):
    """Add the 21-tuple mass M into the rows b, b + 1, b + 2 (layout of :func:`load_mass`)."""
    for j in range(8):
        work[b, j] += M[j]
        work[b + 1, j] += M[8 + j]
    for j in range(5):
        work[b + 2, j] += M[16 + j]


@njit(cache=True, inline="always", fastmath={"contract"})
def to_parent(code, c, s, e, rc, r0, r1, r2, M, xi, mag, col, inv, dp):
    """(A^T Mbar A, A^T xi, scale for the parent's pivot) with A = A_{k,b} (000 eq. 20).

    The scale measures the cancellation in the parent's pivot: when link k projected the
    column PsiHat = Mhat p out of its mass (``inv`` = 1 / Ihat_k, ``dp`` >= 0 the aligned DOF
    of the parent), the parent's pivot loses ``(A^T PsiHat)_dp^2 / Ihat_k``, whose round-off
    bounds the pivot's.  Otherwise (multi-DOF joints, general axes) the largest diagonal entry
    ``mag`` of Mhat_k before the projection, times the lever (1 + |r_k|)^2, bounds it."""
    if inv > 0.0 and dp >= 0:
        u = apply_At(code, c, s, e, rc, r0, r1, r2, col[0], col[1], col[2], col[3], col[4], col[5])
        x = pick6(u, dp)
        scale = x * x * inv
    else:
        if rc == 0:
            lever = 1.0
        elif rc <= 3:
            lever = 1.0 + abs(r0 + r1 + r2)  # two of them are zero
        else:
            lever = 1.0 + np.sqrt(r0 * r0 + r1 * r1 + r2 * r2)
        scale = mag * lever * lever
    return (
        congruence_to_parent(code, c, s, e, rc, r0, r1, r2, M),
        apply_At(code, c, s, e, rc, r0, r1, r2, xi[0], xi[1], xi[2], xi[3], xi[4], xi[5]),
        scale,
    )


@njit_one_version(fastmath={"contract"})
def articulated_backward_recursion(ki, kf, tau, work, factors):
    """M_s..M_1, eta^i..1^i: Mhat_k = M_k + sum_c A^T Mbar_c A (000 eq. 20), the joint factors
    (eq. 19), and the backward substitutions of 000 Table 3 (step 1).  Returns the index of the
    first link whose Ihat_k is singular, or -1.  With ``factors`` the rows of Ihat_k and Ihat_k^-1
    are stored too (forward dynamics needs only Psi and phitilde).

    A pivot of Ihat_k counts as zero when it is not larger than SINGULAR_RTOL times a scale of
    the round-off it can carry: the largest diagonal entry of M_k, and the amount that the
    children's projections cancelled in this pivot's direction (see :func:`to_parent`) -- the
    round-off of a projected-out inertia (a massless link above a free body) is told from a
    small but real one (the pivot of a 100,000-link chain is 1e-16 of its largest inertia)
    without a bound that compounds along the chain.
    """
    L, nv = ki.shape[0], tau.shape[0]
    far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    S = n_modules(ki)
    s = np.zeros((6, 6, 6))
    for i in range(S):  # module accumulators: mass, scale, xi
        b = module_row(L, nv, i)
        for r in range(b, b + T.M_VEC + 1):
            for j in range(T.W):
                work[r, j] = 0.0
    for i in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = modules(ki, i)
        b = module_row(L, nv, i)
        M = load_mass(work, b)
        mag = work[b + 2, T.M_MAG]
        b += T.M_VEC
        xi = (work[b, 0], work[b, 1], work[b, 2], work[b, 3], work[b, 4], work[b, 5])
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            if far:  # the rows a few links ahead
                prefetch(kf, k - AHEAD, 0)
                prefetch(kf, k - AHEAD, 8)
                prefetch(work, k - AHEAD, 0)
                prefetch(work, T.dof_row(L, ki[k, T.IDX_V]) - AHEAD, 0)
            if not T.massless(ki, k):
                M = plus_link_mass(M, T.inertia10(kf, k))  # Mhat_k = M_k + ...       000 (20)
            o = T.C_W
            xi = (
                xi[0] + work[k, o],
                xi[1] + work[k, o + 1],
                xi[2] + work[k, o + 2],
                xi[3] + work[k, o + 3],
                xi[4] + work[k, o + 4],
                xi[5] + work[k, o + 5],
            )  # xi_k = w~_k + eta~_k
            mag_k = diagonal_max(M)
            d = T.dof_index(ki, k)
            col, inv = NO_COL, 0.0
            if d >= 0:  # P_k = sign e_d: a column of Mhat
                scale = max(
                    max(kf[k, T.MASS], kf[k, T.ARM0]), max(kf[k, T.IO], kf[k, T.IO + 3], kf[k, T.IO + 5]), mag
                )  # = SCALE, from hot data
                v0 = ki[k, T.IDX_V]
                sg = T.dof_sign(ki, k)
                col = column(M, d)
                I = pick6(col, d) + kf[k, T.ARM0]  # Ihat_k = p^T Mhat p      001 (A.4)
                if not (I > SINGULAR_RTOL * scale):
                    return k
                inv = 1.0 / I
                if factors:  # for U, D and the inverse GIM
                    work[T.ihat_row(L, nv, v0), 0] = I
                    work[T.ihatinv_row(L, nv, v0), 0] = inv
                ph = tau[v0] - sg * pick6(xi, d)  # phihat_k                 003 (31)
                dof = T.dof_row(L, v0)
                work[dof, T.H_PHIT] = ph * inv  # phitilde_k               003 (35)
                psi = (col[0] * inv, col[1] * inv, col[2] * inv, col[3] * inv, col[4] * inv, col[5] * inv)
                for j in range(6):
                    work[dof, T.H_PSI + j] = sg * psi[j]  # Psi_k = PsiHat / Ihat    001 (A.5)
                f = sg * ph
                xi = (
                    xi[0] + psi[0] * f,
                    xi[1] + psi[1] * f,
                    xi[2] + psi[2] * f,
                    xi[3] + psi[3] * f,
                    xi[4] + psi[4] * f,
                    xi[5] + psi[5] * f,
                )  # eta_k = Psi phihat + eta~ 003 (32)
                M = minus_outer(M, col, psi)  # Mbar_k = Mhat - PsiHat Psi^T 001 (A.7)
            else:
                xa = np.empty(6)
                for j in range(6):
                    xa[j] = xi[j]
                scale = max(kf[k, T.SCALE], mag)
                ok, M, xi = articulated_joint_general(ki, kf, k, nv, work, M, xa, tau, scale, s)
                if not ok:
                    return k
            if p < 0 and k == first:
                continue
            dp = T.dof_index(ki, k - 1 if k > first else ki[p, T.MEND] - 1)  # the parent's aligned DOF
            code, c, sn, e = rotation(ki, work, k)
            if code <= 2:  # r_k = r0 (see offset)
                M, xi, mag = to_parent(
                    code,
                    c,
                    sn,
                    NO_E,
                    T.offset_code(ki, k),
                    kf[k, T.T0],
                    kf[k, T.T0 + 1],
                    kf[k, T.T0 + 2],
                    M,
                    xi,
                    mag_k,
                    col,
                    inv,
                    dp,
                )
            else:
                r0, r1, r2 = offset(kf, work, L, k, code)
                M, xi, mag = to_parent(code, c, sn, e, T.R_GENERAL, r0, r1, r2, M, xi, mag_k, col, inv, dp)
            if k == first:  # to the parent module (eq. 20)
                pa = module_row(L, nv, p)
                add_mass(work, pa, M)
                for j in range(6):
                    work[pa + T.M_VEC, j] += xi[j]
                work[pa + 2, T.M_MAG] = max(work[pa + 2, T.M_MAG], mag)
    return -1


@njit(cache=True, fastmath={"contract"})
def acceleration_forward_recursion(ki, kf, work, qdd):
    """Step 2 of 000 Table 3 over all links: :func:`acceleration_forward_links` with n = L."""
    acceleration_forward_links(ki, kf, work, qdd, ki.shape[0])


@njit(cache=True, inline="always", fastmath={"contract"})
def acceleration_forward_links(ki, kf, work, qdd, n):
    """Step 2 of 000 Table 3 over the links before n, M_1..M_s and 1^i..eta^i: mu~_k = A_{k,b}
    mu_b (003 eq. 37), qdd_k = phitilde_k - Psi_k^T mu~_k (eq. 36), mu_k = P_k qdd_k + mu~_k
    (eq. 37).  The vector row of module i receives mu of its last link (before n) for the child
    modules; modules that start at or after n are skipped (the accelerations before n do not
    depend on the links after it: :func:`..lagrange.solve` with rows zero after n).  Inlined
    (numba IR) into its two callers: as a call, the forward dynamics of panda took 3-5 % longer
    and the four-bar's simulation 2-4 % (benchmarks/commits_ab.py, against an A/A control)."""
    L, nv = ki.shape[0], qdd.shape[0]
    far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    mu = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for i in range(n_modules(ki)):  # inter-modular: M_1 .. M_s
        first, end, p = modules(ki, i)
        if first >= n:
            continue
        for k in range(first, min(end, n)):  # intra-modular: 1^i .. eta^i
            if far:  # the rows a few links ahead
                prefetch(kf, k + AHEAD, 0)
                prefetch(kf, k + AHEAD, 8)
                prefetch(work, k + AHEAD, 0)
                prefetch(work, T.dof_row(L, ki[k, T.IDX_V]) + AHEAD, 0)
            code, c, s, e = rotation(ki, work, k)
            if k == first:
                if p >= 0:
                    b = module_row(L, nv, p) + T.M_VEC
                    mu = (work[b, 0], work[b, 1], work[b, 2], work[b, 3], work[b, 4], work[b, 5])
                else:
                    mu = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            if code <= 2:  # r_k = r0 (see offset)
                m0, m1, m2, m3, m4, m5 = apply_A(
                    code,
                    c,
                    s,
                    NO_E,
                    T.offset_code(ki, k),
                    kf[k, T.T0],
                    kf[k, T.T0 + 1],
                    kf[k, T.T0 + 2],
                    mu[0],
                    mu[1],
                    mu[2],
                    mu[3],
                    mu[4],
                    mu[5],
                )  # mu~_k
            else:
                r0, r1, r2 = offset(kf, work, L, k, code)
                m0, m1, m2, m3, m4, m5 = apply_A(
                    code, c, s, e, T.R_GENERAL, r0, r1, r2, mu[0], mu[1], mu[2], mu[3], mu[4], mu[5]
                )
            v0 = ki[k, T.IDX_V]
            d = T.dof_index(ki, k)
            for a in range(ki[k, T.NV]):  # qdd_k = phitilde_k - Psi_k^T mu~_k 003 (36)
                row, o = T.dof_row(L, v0 + a), T.H_PSI
                qdd[v0 + a] = work[row, T.H_PHIT] - (
                    work[row, o] * m0
                    + work[row, o + 1] * m1
                    + work[row, o + 2] * m2
                    + work[row, o + 3] * m3
                    + work[row, o + 4] * m4
                    + work[row, o + 5] * m5
                )
            if d >= 0:  # mu_k = P_k qdd_k + mu~_k   003 (37)
                u = unit6(d, T.dof_sign(ki, k) * qdd[v0])
                mu = (m0 + u[0], m1 + u[1], m2 + u[2], m3 + u[3], m4 + u[4], m5 + u[5])
            else:
                for a in range(ki[k, T.NV]):
                    x, row = qdd[v0 + a], T.p_row(L, nv, v0 + a)
                    m0 += work[row, 0] * x
                    m1 += work[row, 1] * x
                    m2 += work[row, 2] * x
                    m3 += work[row, 3] * x
                    m4 += work[row, 4] * x
                    m5 += work[row, 5] * x
                mu = (m0, m1, m2, m3, m4, m5)
        b = module_row(L, nv, i) + T.M_VEC
        for j in range(6):
            work[b, j] = mu[j]
