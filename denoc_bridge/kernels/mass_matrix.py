"""Generalized inertia matrix from composite module masses (000 eqs. 16-17; 003 eqs. 28-29)."""

import numpy as np
from numba import njit

from .spatial_ops import add_congruence_At_M_A, carry_to_ancestors, mat6_times_rows


@njit(cache=True)
def composite_module_masses(module_start, module_end, parent, E, r, M, Mtilde):
    """Backward recursion Mtilde_k = M_k + sum_c A_{c,k}^T Mtilde_c A_{c,k}.

    At module level this is 000 eq. (17), Mtilde^i = M^i + sum_j (A^{j,i})^T Mtilde^j A^{j,i};
    inside a module it is 003 eq. (28).
    """
    col = np.zeros(6)
    Mcol = np.zeros(6)
    res = np.zeros(6)
    tmp = np.zeros(3)
    Mtilde[:] = M
    for i in range(module_start.shape[0] - 1, -1, -1):         # M_s .. M_1
        for k in range(module_end[i] - 1, module_start[i] - 1, -1):  # eta^i .. 1^i
            b = parent[k]
            if b >= 0:
                add_congruence_At_M_A(E[k], r[k], Mtilde[k], Mtilde[b], col, Mcol, res, tmp)


@njit(cache=True)
def gim_elements(parent, E, r, P, idx_v, nv_joint, Mtilde, armature, I):
    """I_{j,k} = P_j^T A_{k,j}^T Mtilde_k P_k for j an ancestor of (or equal to) k (003 eq. 29).

    Column block k starts as F = Mtilde_k P_k and is carried towards the base by
    F <- A^T F; both triangles of I are filled.
    """
    F = np.zeros((6, 6))
    for k in range(parent.shape[0]):
        v0 = idx_v[k]
        z = nv_joint[k]
        mat6_times_rows(Mtilde[k], P, v0, z, F)                 # F = Mtilde_k P_k
        for a in range(z):
            for d in range(a, z):
                s = 0.0
                for i in range(6):
                    s += P[v0 + a, i] * F[d, i]
                I[v0 + a, v0 + d] = s                           # diagonal block P_k^T Mtilde_k P_k
                I[v0 + d, v0 + a] = s
            I[v0 + a, v0 + a] += armature[v0 + a]
        carry_to_ancestors(parent, E, r, P, idx_v, nv_joint, k, F, z, I, True)  # off-diagonal blocks
