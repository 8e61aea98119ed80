"""The factors of the GIM and its analytic inverse (002 eqs. A.13-A.22; 001 eq. A.3-A.4).

``U`` is unit upper triangular with U_{k,j} = P_k^T A_{j,k}^T Psi_j for j a
descendant of k, ``D = diag(Ihat_k)`` and I = U D U^T.  Its inverse is
I^-1 = U^-T D^-1 U^-1, with U^-1 obtained recursively (002 eqs. A.13-A.18) and
U^-T applied by the forward substitution of 000 Table 3.  Each recursion keeps
one 6 x nv accumulator per kinematic module: carried from link to link inside
the module (intra-modular) and handed to the parent module at its first link
(inter-modular), so the work is O(n^2) and the extra memory 6 n s.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.spatial_ops import apply_A, apply_At, carry_to_ancestors


@njit(cache=True)
def unit_upper_factor(parent, E, r, P, idx_v, nv_joint, Psi, U):
    """Fill U_{k,j} = P_k^T A_{j,k}^T Psi_j (001 eq. A.4), U_{j,j} = 1, zeros elsewhere."""
    F = np.zeros((6, 6))
    U[:] = 0.0
    for i in range(U.shape[0]):
        U[i, i] = 1.0
    for j in range(parent.shape[0]):
        v0 = idx_v[j]
        for d in range(nv_joint[j]):
            F[d, :] = Psi[v0 + d]
        carry_to_ancestors(parent, E, r, P, idx_v, nv_joint, j, F, nv_joint[j], U, False)


@njit(cache=True)
def _carry(E, r, src, dst, c0, c1, transpose, accumulate, x, y, tmp):
    """dst[:, c0:c1] (+)= A src[:, c0:c1], or A^T src with ``transpose``, column by column
    (``dst`` may be ``src``)."""
    for c in range(c0, c1):
        for j in range(6):
            x[j] = src[j, c]
        if transpose:
            apply_At(E, r, x, y, tmp)
        else:
            apply_A(E, r, x, y, tmp)
        for j in range(6):
            dst[j, c] = dst[j, c] + y[j] if accumulate else y[j]


@njit(cache=True)
def inverse_unit_upper_factor(
    module_start, module_end, module_parent, parent, E, r, P, idx_v, nv_joint, nv_subtree, Psi, W, acc
):
    """Rows of W = U^-1 by the recursive block inverse of U (002 eqs. A.13-A.18).

    W_k = e_k - P_k^T eta~_k, eta_k = Psi_k W_k + eta~_k and eta~_b = sum_c A_{c,b}^T eta_c:
    column j of eta~_k is Ahat_{j,k}^T Psi_j with Ahat_{3,1} = A_{3,2} Phi_2^T A_{2,1} (A.18),
    Phi = 1 - Psi P^T.  ``acc[i]`` is the 6 x nv accumulator of module i.  Only the columns
    of the subtree of k (contiguous, depth-first numbering) are non-zero in row k.
    """
    x = np.zeros(6)
    y = np.zeros(6)
    tmp = np.zeros(3)
    W[:] = 0.0
    acc[:] = 0.0
    for i in range(module_start.shape[0] - 1, -1, -1):  # M_s .. M_1
        cur = acc[i]
        first = module_start[i]
        for k in range(module_end[i] - 1, first - 1, -1):  # eta^i .. 1^i
            v0 = idx_v[k]
            c1 = v0 + nv_subtree[k]
            for d in range(nv_joint[k]):
                row = v0 + d
                for c in range(v0, c1):
                    s = 0.0
                    for j in range(6):
                        s -= P[row, j] * cur[j, c]
                    W[row, c] = s  # W_k = e_k - P_k^T eta~_k
                W[row, row] += 1.0
            for d in range(nv_joint[k]):
                for j in range(6):
                    pj = Psi[v0 + d, j]
                    for c in range(v0, c1):
                        cur[j, c] += pj * W[v0 + d, c]  # eta_k = Psi_k W_k + eta~_k
            if k > first:  # intra-modular: eta~_{k-1} = A^T eta_k
                _carry(E[k], r[k], cur, cur, v0, c1, True, False, x, y, tmp)
            elif parent[k] >= 0:  # inter-modular: to the parent module
                _carry(E[k], r[k], cur, acc[module_parent[i]], v0, c1, True, True, x, y, tmp)


@njit(cache=True)
def inverse_from_factors(
    module_start, module_end, module_parent, parent, E, r, P, idx_v, nv_joint, Psi, IhatInv, W, acc, Minv
):
    """I^-1 = U^-T (D^-1 U^-1) (002 eq. A.22): U^-T applied by the forward substitution of
    000 Table 3 to the rows of D^-1 W; only the upper triangle is computed, then mirrored.
    """
    x = np.zeros(6)
    y = np.zeros(6)
    tmp = np.zeros(3)
    nv = Minv.shape[0]
    Minv[:] = 0.0
    for i in range(module_start.shape[0]):  # M_1 .. M_s
        cur = acc[i]
        first = module_start[i]
        if module_parent[i] >= 0:  # mu~ of the first link: A^{i,beta} mu^beta
            _carry(E[first], r[first], acc[module_parent[i]], cur, idx_v[first], nv, False, False, x, y, tmp)
        else:
            cur[:, idx_v[first] :] = 0.0
        for k in range(first, module_end[i]):  # 1^i .. eta^i
            v0 = idx_v[k]
            if k > first:
                _carry(E[k], r[k], cur, cur, v0, nv, False, False, x, y, tmp)  # mu~_k = A_{k,k-1} mu_{k-1}
            z = nv_joint[k]
            for a in range(z):
                row = v0 + a
                for c in range(v0, nv):
                    s = 0.0
                    for d in range(z):
                        s += IhatInv[row, d] * W[v0 + d, c]
                    for j in range(6):
                        s -= Psi[row, j] * cur[j, c]
                    Minv[row, c] = s  # row of D^-1 W - Psi^T mu~
            for a in range(z):
                for j in range(6):
                    pj = P[v0 + a, j]
                    for c in range(v0, nv):
                        cur[j, c] += pj * Minv[v0 + a, c]  # mu_k = P_k Minv_k + mu~_k
    for a in range(nv):
        for c in range(a + 1, nv):
            Minv[c, a] = Minv[a, c]
