"""O(n) forward dynamics by block reverse Gaussian elimination (000 eqs. 18-23, Table 3;
001 eqs. A.1-A.8 for multi-DOF joints; 003 eqs. 30-37).

Three passes: the articulated module masses (backward), the solution of
``U phihat = phi`` and ``D phitilde = phihat`` (backward), and of
``U^T qdd = phitilde`` (forward).  ``Psi``, ``PsiHat`` and ``IhatInv`` are
stored one row per degree of freedom: the columns of the 6 x z_k matrices
``Psi_k``, ``PsiHat_k`` and the rows of the z_k x z_k ``Ihat_k^{-1}``.
"""

import numpy as np
from numba import njit

from .spatial_ops import add_congruence_At_M_A, apply_A, apply_At, mat6_times_rows

SINGULAR_RTOL = 1e-12


@njit(cache=True)
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
    for c in range(z):                                          # X = L^-1 (lower triangular)
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
    for i in range(z):                                          # A^-1 = X^T X
        for c in range(i, z):
            s = 0.0
            for m in range(c, z):
                s += X[m, i] * X[m, c]
            Ainv[i, c] = s
            Ainv[c, i] = s
    return True


@njit(cache=True)
def articulated_joint_factors(Mhat_k, P, v0, z, armature, scale, PsiHat, Psi, Ihat_rows, IhatInv, Ihat, Iinv, Lw, Xw):
    """PsiHat_k = Mhat_k P_k, Ihat_k = P_k^T PsiHat_k (+ armature), Psi_k = PsiHat_k Ihat_k^-1
    (001 eqs. A.4-A.5; 000 eq. 19).  Returns False when Ihat_k is singular."""
    mat6_times_rows(Mhat_k, P, v0, z, PsiHat[v0:v0 + z])        # PsiHat_k = Mhat_k P_k        (A.5)
    for a in range(z):
        for d in range(z):
            s = 0.0
            for m in range(6):
                s += P[v0 + a, m] * PsiHat[v0 + d, m]
            Ihat[a, d] = s                                      # Ihat_k = P_k^T PsiHat_k      (A.4)
        Ihat[a, a] += armature[v0 + a]
    if not spd_inverse(Ihat, z, Iinv, Lw, Xw, scale):
        return False
    for a in range(z):
        for d in range(z):
            Ihat_rows[v0 + a, d] = Ihat[a, d]
            IhatInv[v0 + a, d] = Iinv[a, d]
        for m in range(6):
            s = 0.0
            for d in range(z):
                s += PsiHat[v0 + d, m] * Iinv[d, a]
            Psi[v0 + a, m] = s                                  # Psi_k = PsiHat_k Ihat_k^-1   (A.5)
    return True


@njit(cache=True)
def articulated_mass_to_parent(Mhat_k, PsiHat, Psi, v0, z, E_k, r_k, Mhat_b, Mbar, col, Mcol, res, tmp):
    """Mbar_k = Mhat_k - PsiHat_k Psi_k^T (001 eq. A.7) and Mhat_b += A_{k,b}^T Mbar_k A_{k,b}
    (A.6; at module level 000 eq. 20 with Phi^j of eq. 21)."""
    for a in range(6):
        for m in range(6):
            s = Mhat_k[a, m]
            for d in range(z):
                s -= PsiHat[v0 + d, a] * Psi[v0 + d, m]
            Mbar[a, m] = s
    add_congruence_At_M_A(E_k, r_k, Mbar, Mhat_b, col, Mcol, res, tmp)


@njit(cache=True)
def articulated_module_masses(module_start, module_end, parent, E, r, P, idx_v, nv_joint, M, armature,
                              Mhat, PsiHat, Psi, Ihat_rows, IhatInv):
    """Backward recursion of the articulated module masses (000 eqs. 19-21; 001 eqs. A.4-A.7).

    Returns the index of the first link whose Ihat_k is singular, or -1.  A pivot of Ihat_k
    counts as zero when it is not larger than SINGULAR_RTOL times a bound on the composite
    inertia of the subtree of k (``mag``): round-off of a projected-out inertia is then told
    from a small but real one.  ``Ihat_rows`` and ``IhatInv`` receive the rows of Ihat_k and
    Ihat_k^-1 (one row per degree of freedom, z_k columns used).
    """
    Ihat = np.zeros((6, 6))
    Iinv = np.zeros((6, 6))
    Lw = np.zeros((6, 6))
    Xw = np.zeros((6, 6))
    Mbar = np.zeros((6, 6))
    col = np.zeros(6)
    Mcol = np.zeros(6)
    res = np.zeros(6)
    tmp = np.zeros(3)
    Mhat[:] = M
    mag = np.zeros(parent.shape[0])
    for k in range(parent.shape[0]):
        mag[k] = np.abs(M[k]).max()
    for i in range(module_start.shape[0] - 1, -1, -1):         # M_s .. M_1
        for k in range(module_end[i] - 1, module_start[i] - 1, -1):  # eta^i .. 1^i
            v0 = idx_v[k]
            z = nv_joint[k]
            scale = mag[k]
            for a in range(z):
                scale = max(scale, armature[v0 + a])
            if not articulated_joint_factors(Mhat[k], P, v0, z, armature, scale, PsiHat, Psi, Ihat_rows,
                                             IhatInv, Ihat, Iinv, Lw, Xw):
                return k
            b = parent[k]
            if b >= 0:
                lever = 1.0 + np.sqrt(r[k, 0] ** 2 + r[k, 1] ** 2 + r[k, 2] ** 2)
                mag[b] += mag[k] * lever * lever
                articulated_mass_to_parent(Mhat[k], PsiHat, Psi, v0, z, E[k], r[k], Mhat[b], Mbar, col, Mcol,
                                           res, tmp)
    return -1


@njit(cache=True)
def brge_backward_substitution(module_start, module_end, parent, E, r, P, idx_v, nv_joint,
                               Psi, IhatInv, phi, eta, phihat, phitilde):
    """Step 1 of 000 Table 3: solve U phihat = phi and D phitilde = phihat (003 eqs. 31-35).

    ``eta[k]`` first accumulates eta~_k = sum_c A_{c,k}^T eta_c, then holds eta_k.
    """
    up = np.zeros(6)
    tmp = np.zeros(3)
    eta[:] = 0.0
    for i in range(module_start.shape[0] - 1, -1, -1):         # M_s .. M_1
        for k in range(module_end[i] - 1, module_start[i] - 1, -1):  # eta^i .. 1^i
            v0 = idx_v[k]
            z = nv_joint[k]
            for d in range(z):
                s = phi[v0 + d]
                for j in range(6):
                    s -= P[v0 + d, j] * eta[k, j]
                phihat[v0 + d] = s                              # phihat_k = phi_k - P_k^T eta~_k  (31)
            for a in range(z):
                s = 0.0
                for d in range(z):
                    s += IhatInv[v0 + a, d] * phihat[v0 + d]
                phitilde[v0 + a] = s                            # phitilde_k = Ihat_k^-1 phihat_k  (35)
            for d in range(z):
                for j in range(6):
                    eta[k, j] += Psi[v0 + d, j] * phihat[v0 + d]  # eta_k = Psi_k phihat_k + eta~_k (32)
            b = parent[k]
            if b >= 0:
                apply_At(E[k], r[k], eta[k], up, tmp)
                for j in range(6):
                    eta[b, j] += up[j]                          # eta~_b += A_{k,b}^T eta_k


@njit(cache=True)
def brge_forward_substitution(module_start, module_end, parent, E, r, P, idx_v, nv_joint,
                              Psi, phitilde, mu, qdd):
    """Step 2 of 000 Table 3: solve U^T qdd = phitilde (003 eqs. 36-37)."""
    mutilde = np.zeros(6)
    tmp = np.zeros(3)
    for i in range(module_start.shape[0]):                      # M_1 .. M_s
        for k in range(module_start[i], module_end[i]):         # 1^i .. eta^i
            b = parent[k]
            if b < 0:
                mutilde[:] = 0.0
            else:
                apply_A(E[k], r[k], mu[b], mutilde, tmp)        # mu~_k = A_{k,b} mu_b          (37)
            v0 = idx_v[k]
            for d in range(nv_joint[k]):
                s = phitilde[v0 + d]
                for j in range(6):
                    s -= Psi[v0 + d, j] * mutilde[j]
                qdd[v0 + d] = s                                 # qdd_k = phitilde_k - Psi_k^T mu~_k (36)
            for j in range(6):
                s = mutilde[j]
                for d in range(nv_joint[k]):
                    s += P[v0 + d, j] * qdd[v0 + d]
                mu[k, j] = s                                    # mu_k = P_k qdd_k + mu~_k       (37)
