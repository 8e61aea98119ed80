"""Generalized inertia matrix from composite module masses (000 eqs. 16-17; 003 eqs. 28-29).

One backward pass over the module graph after the geometry (the forward
recursion with ``full`` off): the composite masses
``Mtilde_k = M_k + sum_c A_{c,k}^T Mtilde_c A_{c,k}`` (000 eq. 17 between modules,
003 eq. 28 inside one) are carried like the articulated masses of forward
dynamics, and as soon as ``Mtilde_k`` is complete (all descendants of k have
larger indices) column block k of the GIM is formed and carried to the base:
``F = Mtilde_k P_k``, ``I_{k,k} = P_k^T F`` (+ armature), then
``F <- A_{j,b}^T F`` and ``I_{b,k} = P_b^T F`` for every ancestor b (000 eq. 16,
003 eq. 29).  O(n d) for depth d, no per-link 6x6 storage.
"""

from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.forward_dynamics import add_mass, load_mass
from denoc_bridge.kernels.inverse_dynamics import NO_E, module_row, modules, n_modules, offset, rotation
from denoc_bridge.kernels.spatial6 import apply_At, column, congruence_to_parent, pick6, plus_link_mass, sym_index


@njit(cache=True, inline="always", fastmath={"contract"})
def link_to_parent(ki, kf, work, j, x):
    """A_{j,b}^T x for the 6-vector x (a tuple), b the parent of link j."""
    code, c, s, e = rotation(ki, work, j)
    if code <= 2:  # r_j = r0 (see offset)
        return apply_At(
            code,
            c,
            s,
            NO_E,
            T.offset_code(ki, j),
            kf[j, T.T0],
            kf[j, T.T0 + 1],
            kf[j, T.T0 + 2],
            x[0],
            x[1],
            x[2],
            x[3],
            x[4],
            x[5],
        )
    r0, r1, r2 = offset(kf, work, ki.shape[0], j, code)
    return apply_At(code, c, s, e, T.R_GENERAL, r0, r1, r2, x[0], x[1], x[2], x[3], x[4], x[5])


@njit(cache=True, inline="always", fastmath={"contract"})
def dof_dot(ki, work, L, nv, j, n, F):
    """P_j[:, n]^T F: a signed entry of F for an aligned axis, else the P row."""
    d = T.dof_index(ki, j)
    if d >= 0:
        return T.dof_sign(ki, j) * pick6(F, d)
    row = T.p_row(L, nv, ki[j, T.IDX_V] + n)
    return (
        work[row, 0] * F[0]
        + work[row, 1] * F[1]
        + work[row, 2] * F[2]
        + work[row, 3] * F[3]
        + work[row, 4] * F[4]
        + work[row, 5] * F[5]
    )


@njit(cache=True, fastmath={"contract"})
def gim_column_blocks(ki, kf, work, M, k, nv, I):
    """Column block k of the GIM from the complete composite mass M = Mtilde_k (000 eq. 16)."""
    L = ki.shape[0]
    v0 = ki[k, T.IDX_V]
    for n in range(ki[k, T.NV]):
        d = T.dof_index(ki, k)
        if d >= 0:  # F = Mtilde_k P_k: a signed column
            sg = T.dof_sign(ki, k)
            c = column(M, d)
            F = (sg * c[0], sg * c[1], sg * c[2], sg * c[3], sg * c[4], sg * c[5])
        else:
            row = T.p_row(L, nv, v0 + n)
            F = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
            for a in range(6):
                x = 0.0
                for m in range(6):
                    x += M[sym_index(a, m)] * work[row, m]
                F = (
                    x if a == 0 else F[0],
                    x if a == 1 else F[1],
                    x if a == 2 else F[2],
                    x if a == 3 else F[3],
                    x if a == 4 else F[4],
                    x if a == 5 else F[5],
                )
        for m in range(n, ki[k, T.NV]):  # diagonal block P_k^T Mtilde_k P_k
            x = dof_dot(ki, work, L, nv, k, m, F)  # (lower triangle, mirrored)
            I[v0 + m, v0 + n] = x
            I[v0 + n, v0 + m] = x
        I[v0 + n, v0 + n] += kf[k, T.ARM + n]
        j = k
        while ki[j, T.PARENT] >= 0:  # towards the base: F <- A_{j,b}^T F
            F = link_to_parent(ki, kf, work, j, F)
            j = ki[j, T.PARENT]
            u0 = ki[j, T.IDX_V]
            for m in range(ki[j, T.NV]):
                x = dof_dot(ki, work, L, nv, j, m, F)  # I_{b,k} = P_b^T A^T Mtilde_k P_k
                I[u0 + m, v0 + n] = x
                I[v0 + n, u0 + m] = x


@njit(cache=True, fastmath={"contract"})
def composite_backward_recursion(ki, kf, work, nv, I):
    """M_s..M_1 and eta^i..1^i: Mtilde_k (000 eq. 17, 003 eq. 28) and the GIM (000 eq. 16).
    The module rows carry the composite masses that child modules hand to their parent."""
    L = ki.shape[0]
    S = n_modules(ki)
    for i in range(S):
        b = module_row(L, nv, i)
        for r in range(b, b + 3):
            for j in range(T.W):
                work[r, j] = 0.0
    for i in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = modules(ki, i)
        M = load_mass(work, module_row(L, nv, i))
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            M = plus_link_mass(
                M,
                kf[k, T.MASS],
                kf[k, T.H],
                kf[k, T.H + 1],
                kf[k, T.H + 2],
                kf[k, T.IO],
                kf[k, T.IO + 1],
                kf[k, T.IO + 2],
                kf[k, T.IO + 3],
                kf[k, T.IO + 4],
                kf[k, T.IO + 5],
            )  # Mtilde_k = M_k + ...     000 (17)
            gim_column_blocks(ki, kf, work, M, k, nv, I)
            if p < 0 and k == first:
                continue
            code, c, s, e = rotation(ki, work, k)
            if code <= 2:
                M = congruence_to_parent(
                    code, c, s, NO_E, T.offset_code(ki, k), kf[k, T.T0], kf[k, T.T0 + 1], kf[k, T.T0 + 2], M
                )
            else:
                r0, r1, r2 = offset(kf, work, L, k, code)
                M = congruence_to_parent(code, c, s, e, T.R_GENERAL, r0, r1, r2, M)  # A^T Mtilde A
            if k == first:  # to the parent module (eq. 17)
                add_mass(work, module_row(L, nv, p), M)
