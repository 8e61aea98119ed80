"""The Lagrange solve that every constraint kind shares (mimic couplings and loop closures):
``M^-1 C^T`` columns with the articulated factors of one forward dynamics (000 Table 3: the
backward and forward substitutions without the twists and masses), the rank of the rows, and the
small ``C M^-1 C^T`` system by Cholesky (004 eq. 14)."""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.entry import forward_dynamics_passes
from denoc_bridge.kernels.forward_dynamics import acceleration_forward_links
from denoc_bridge.kernels.inverse_dynamics import NO_E, module_row, modules, n_modules, offset, rotation
from denoc_bridge.kernels.spatial6 import apply_At, pick6


@njit(cache=True, fastmath={"reassoc", "contract"})
def independent_rows(C, rtol, Q, rows, nv):
    """Rank r and, in rows[:r] (increasing), a maximal set of independent rows of C (zero
    after column nv): modified Gram-Schmidt with pivoting on the rows (as QR with column
    pivoting of C^T); Q is scratch."""
    m = C.shape[0]
    scale = 0.0
    for i in range(m):
        rows[i] = 0  # 0: free, 1: chosen
        s = 0.0
        for j in range(nv):
            Q[i, j] = C[i, j]
            s += C[i, j] * C[i, j]
        scale = max(scale, np.sqrt(s))
    rank = 0
    for _ in range(m):
        p, best = -1, rtol * scale
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(nv):
                    s += Q[i, j] * Q[i, j]
                if np.sqrt(s) > best:
                    p, best = i, np.sqrt(s)
        if p < 0:
            break
        rows[p] = 1
        rank += 1
        for j in range(nv):
            Q[p, j] /= best
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(nv):
                    s += Q[i, j] * Q[p, j]
                for j in range(nv):
                    Q[i, j] -= s * Q[p, j]
    r = 0
    for i in range(m):
        if rows[i] == 1:
            rows[r] = i
            r += 1
    return rank


@njit(cache=True, fastmath={"reassoc", "contract"})
def cholesky_solve(K, b, x):
    """x = K^-1 b for a symmetric positive definite K (its lower triangle, overwritten by the
    factor); False if K is not numerically positive definite."""
    n = K.shape[0]
    for j in range(n):
        s = K[j, j]
        for k in range(j):
            s -= K[j, k] * K[j, k]
        if not s > 0.0:
            return False
        K[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = K[i, j]
            for k in range(j):
                t -= K[i, k] * K[j, k]
            K[i, j] = t / K[j, j]
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= K[i, k] * x[k]
        x[i] = t / K[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= K[k, i] * x[k]
        x[i] = t / K[i, i]
    return True


@njit(cache=True)
def factorised_forward_dynamics(ki, kf, work, q, v, tau, fext, out):
    """Forward dynamics that also keeps Ihat_k^-1 of the one-DOF joints in ``work``: with
    Psi_k and the geometry, the factors that :func:`solve` reuses.  0, or k + 1 for a
    singular articulated inertia."""
    return forward_dynamics_passes(ki, kf, work, q, v, tau, fext, out, True)


@njit(cache=True, fastmath={"contract"})
def solve(ki, kf, work, x, out, n):
    """out[:hi] = (M^-1 x)[:hi] for an x that is zero after hi, the DOFs of the links before n
    (all of out for n = L), with the factors (Psi_k, Ihat_k^-1, E_k, P_k) that the last
    :func:`factorised_forward_dynamics` left in ``work``: the backward substitutions of 000
    Table 3 (step 1) as in :func:`..forward_dynamics.articulated_backward_recursion` without
    link wrenches and masses, then the forward substitution (step 2), both over the links
    before n only: after them phihat = 0 (no torque, nothing from below), and the
    accelerations before them do not depend on the links after them."""
    L, nv = ki.shape[0], x.shape[0]
    S = n_modules(ki)
    for i in range(S):  # module accumulators of xi
        b = module_row(L, nv, i) + T.M_VEC
        for j in range(6):
            work[b, j] = 0.0
    for i in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = modules(ki, i)
        if first >= n:
            continue
        b = module_row(L, nv, i) + T.M_VEC
        xi = (work[b, 0], work[b, 1], work[b, 2], work[b, 3], work[b, 4], work[b, 5])
        for k in range(min(end, n) - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            v0 = ki[k, T.IDX_V]
            dof, o = T.dof_row(L, v0), T.H_PSI
            d = T.dof_index(ki, k)
            if d >= 0:  # P_k = sign e_d
                ph = x[v0] - T.dof_sign(ki, k) * pick6(xi, d)  # phihat_k                 003 (31)
                work[dof, T.H_PHIT] = ph * work[T.ihatinv_row(L, nv, v0), 0]  # phitilde_k = Ihat_k^-1 phihat_k 003 (35)
                xi = (
                    xi[0] + work[dof, o] * ph,
                    xi[1] + work[dof, o + 1] * ph,
                    xi[2] + work[dof, o + 2] * ph,
                    xi[3] + work[dof, o + 3] * ph,
                    xi[4] + work[dof, o + 4] * ph,
                    xi[5] + work[dof, o + 5] * ph,
                )  # + Psi_k phihat_k         003 (32)
            else:  # z_k x z_k blocks (001 eqs. A.4-A.7)
                z, prow, inv = ki[k, T.NV], T.p_row(L, nv, v0), T.ihatinv_row(L, nv, v0)
                for a in range(z):  # phihat_k, kept in out until step 2
                    out[v0 + a] = x[v0 + a] - (
                        work[prow + a, 0] * xi[0]
                        + work[prow + a, 1] * xi[1]
                        + work[prow + a, 2] * xi[2]
                        + work[prow + a, 3] * xi[3]
                        + work[prow + a, 4] * xi[4]
                        + work[prow + a, 5] * xi[5]
                    )
                for a in range(z):
                    acc = 0.0
                    for c in range(z):
                        acc += work[inv + a, c] * out[v0 + c]
                    work[dof + a, T.H_PHIT] = acc
                for a in range(z):
                    ph, r = out[v0 + a], dof + a
                    xi = (
                        xi[0] + work[r, o] * ph,
                        xi[1] + work[r, o + 1] * ph,
                        xi[2] + work[r, o + 2] * ph,
                        xi[3] + work[r, o + 3] * ph,
                        xi[4] + work[r, o + 4] * ph,
                        xi[5] + work[r, o + 5] * ph,
                    )
            if p < 0 and k == first:
                continue
            code, c, sn, e = rotation(ki, work, k)
            if code <= 2:  # to the parent: A_{k,b}^T xi
                xi = apply_At(
                    code,
                    c,
                    sn,
                    NO_E,
                    T.offset_code(ki, k),
                    kf[k, T.T0],
                    kf[k, T.T0 + 1],
                    kf[k, T.T0 + 2],
                    xi[0],
                    xi[1],
                    xi[2],
                    xi[3],
                    xi[4],
                    xi[5],
                )
            else:
                r0, r1, r2 = offset(kf, work, L, k, code)
                xi = apply_At(code, c, sn, e, T.R_GENERAL, r0, r1, r2, xi[0], xi[1], xi[2], xi[3], xi[4], xi[5])
            if k == first:  # to the parent module (eq. 20)
                pa = module_row(L, nv, p) + T.M_VEC
                for j in range(6):
                    work[pa, j] += xi[j]
    acceleration_forward_links(ki, kf, work, out, n)  # step 2 over the links before n


@njit(cache=True)
def minv_rows(kt, work, q, C, r, Y, zero, factorised, n):
    """Y[j] = M^-1 C[j]^T for j < r (000 Table 3, O(n) per row) by :func:`solve`, for rows that
    are zero after the DOFs of the links before n (Y[j] is then computed up to those DOFs
    only); unless ``factorised`` (a :func:`factorised_forward_dynamics` at q left its factors
    in ``work``) the factors are formed first, by a forward dynamics at rest (``zero``: nv
    zeros) into Y[0].  Returns the forward dynamics status."""
    ki = kt.view(np.int32)
    if not factorised and r > 0:
        status = factorised_forward_dynamics(ki, kt, work, q, zero, zero, work[0:0], Y[0])
        if status:
            return status
    for j in range(r):
        solve(ki, kt, work, C[j], Y[j], n)
    return 0


@njit(cache=True, inline="always", fastmath={"reassoc", "contract"})
def dot(a, b, n):
    """a[:n] . b[:n]"""
    s = 0.0
    for i in range(n):
        s += a[i] * b[i]
    return s


@njit(cache=True, fastmath={"reassoc", "contract"})
def gram(A, B, r, K, n):
    """The lower triangle of K = A[:r] B[:r]^T (symmetric here; what :func:`cholesky_solve`
    reads), for rows of A zero after column n."""
    for i in range(r):
        for j in range(i + 1):
            K[i, j] = dot(A[i], B[j], n)
