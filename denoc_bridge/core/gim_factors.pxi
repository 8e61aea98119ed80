# The block factors of the GIM and their inverses, I = U D U^T and (U^-1, D^-1), at link level
# (001 eqs. A.3-A.4) or module level (002 eqs. A.20-A.21), in one pass over groups of links,
# after the geometry pass and the articulated pass with its factors (Psi_k, Ihat_k, Ihat_k^-1;
# forward_dynamics.pxi).  (The numba kernel this was ported from, kernels/gim_factors.py, is
# deleted: its derivation is here.)
#
# A group is a kinematic module (module level) or one link (link level); its columns a0 .. a1
# are contiguous (depth-first numbering) and groups come in the order of their links.  In the
# base frame of gim.pxi the link-level factor is U_{r,c} = N_r^T Psi_c for c in the subtree of
# the link of row r (unit diagonal blocks).  For each group s, the backward recursion of 002
# eqs. A.13-A.18 restricted to the group's own rows and columns gives W_ss = U_ss^-1 and the
# group's columns PsiBar_c = sum_m Psi_m W_{m,c} (Psi_s W_ss, one wrench per column).  Then,
# with no numerical inversion beyond the articulated pass's Ihat^-1:
#
# * Ubar = U blockdiag(W_ss): identity diagonal blocks and Ubar_{r,c} = N_r^T PsiBar_c for c
#   beyond the group of row r (the group's columns combined once, not per row);
#   Dbar_s = U_ss D_s U_ss^T;
# * Ubar^-1 = blockdiag(U_ss) U^-1: identity diagonal blocks and Ubar^-1_{r,c} = -N_r^T eta~_c
#   with eta~_c the sum over the groups below s on the path to c of PsiBar_t Ubar^-1_{t,c} (the
#   recursion of 002 eqs. A.13-A.18 with the group as its unit, one wrench per column);
#   Dbar_s^-1 = W_ss^T D_s^-1 W_ss.
#
# Work: the link-level factors' O(n d) entries at 6 multiplications each, plus O(z^3) per group
# of z DOFs (the z x z blocks).
#
# E (6, nv): one wrench per column, one row of nv per component (the sweeps over the columns
# vectorise); Wg, Ug, T_: (nv, zmax) rows of the group's blocks, row r over the columns a0 .. a1;
# lo[r], hi[r]: the columns of the joint of row r; se[r]: the end of its subtree's columns.


cdef void group_recursion(const int* ki, Py_ssize_t nv, Py_ssize_t first, Py_ssize_t end,
                          Py_ssize_t a0, Py_ssize_t a1, Py_ssize_t zm, const double* N, const double* Psi,
                          const Py_ssize_t* sub, double* E, double* Wg, double* Ug, Py_ssize_t* lo,
                          Py_ssize_t* hi, Py_ssize_t* se, bint with_u) noexcept nogil:
    """002 eqs. A.13-A.18 inside one group (links first .. end - 1, columns a0 .. a1 - 1): the rows
    of W_ss = U_ss^-1 into Wg, column c of E = PsiBar_c for the group's columns and, with ``with_u``, the
    rows of U_ss into Ug."""
    cdef Py_ssize_t k, v0, z, c1, r, c
    cdef int j
    for k in range(end - 1, first - 1, -1):
        v0, z = ki[k * NI + IDX_V], ki[k * NI + NV]
        c1 = min(v0 + sub[k], a1)
        for r in range(v0, v0 + z):
            lo[r], hi[r], se[r] = v0, v0 + z, v0 + sub[k]
            for c in range(a1 - a0):  # (a branching group: columns off the subtree stay zero)
                Wg[r * zm + c] = 0.0
                Ug[r * zm + c] = 0.0
            Wg[r * zm + r - a0] = 1.0
            # W_{k,c} = -N_k^T eta~_c                                       002 (A.13-A.18)
            block_row(N + 6 * r, E, nv, v0 + z, c1, -1.0, Wg + r * zm + v0 + z - a0)
            if with_u:
                Ug[r * zm + r - a0] = 1.0
                for c in range(v0 + z, c1):  # U_{k,c} = N_k^T Psi_c                   001 (A.4)
                    Ug[r * zm + c - a0] = dot6(N + 6 * r, Psi + 6 * c)
        for c in range(v0, v0 + z):
            for j in range(6):
                E[j * nv + c] = Psi[6 * c + j]  # eta_c of the own columns: Psi_c W_cc = Psi_c
        for r in range(v0, v0 + z):  # eta_c += Psi_k W_{k,c}
            plus_outer_row(Psi + 6 * r, Wg + r * zm + v0 + z - a0, nv, v0 + z, c1, E)


cdef void group_diagonal(Py_ssize_t L, Py_ssize_t nv, const double* work, Py_ssize_t a0,
                         Py_ssize_t a1, Py_ssize_t zm, const double* Ug, double* T_,
                         const Py_ssize_t* lo, const Py_ssize_t* hi, double* B) noexcept nogil:
    """Dbar_s = U_ss D_s U_ss^T into B (upper triangle, mirrored); D_s = blockdiag(Ihat_k) of the
    group's joints, U_ss unit upper triangular; T_ is scratch for U_ss D_s."""
    cdef Py_ssize_t r, m, m0, m1, j, n, c
    cdef double x
    for r in range(a0, a1):
        for m in range(a0, lo[r]):
            T_[r * zm + m - a0] = 0.0
        m = lo[r]
        while m < a1:  # T = U_ss D_s, joint by joint
            m0, m1 = lo[m], hi[m]
            for j in range(m0, m1):
                x = 0.0
                for n in range(m0, m1):
                    x += Ug[r * zm + n - a0] * work[ihat_row(L, nv, n) * W + j - m0]
                T_[r * zm + j - a0] = x
            m = m1
    for r in range(a0, a1):  # Dbar_{r,c} = sum_m T_{r,m} U_{c,m}, m from the joint of c on
        for c in range(r, a1):
            x = 0.0
            for m in range(lo[c] - a0, a1 - a0):
                x += T_[r * zm + m] * Ug[c * zm + m]
            B[r * nv + c] = x
            B[c * nv + r] = x


cdef void group_diagonal_inverse(Py_ssize_t L, Py_ssize_t nv, const double* work, Py_ssize_t a0,
                                 Py_ssize_t a1, Py_ssize_t zm, const double* Wg, double* T_,
                                 const Py_ssize_t* lo, const Py_ssize_t* hi, double* B) noexcept nogil:
    """Dbar_s^-1 = W_ss^T D_s^-1 W_ss into B (upper triangle, mirrored), W_ss unit upper
    triangular; T_ is scratch for D_s^-1 W_ss."""
    cdef Py_ssize_t z = a1 - a0, r, r0, r1, c, n, m
    cdef double d, w
    for r in range(a0, a1):  # T = D_s^-1 W_ss (rows)
        r0, r1 = lo[r], hi[r]
        for c in range(z):
            T_[r * zm + c] = 0.0
        for n in range(r0, r1):
            d = work[ihatinv_row(L, nv, r) * W + n - r0]
            for c in range(r0 - a0, z):
                T_[r * zm + c] += d * Wg[n * zm + c]
    for r in range(a0, a1):  # zero the block, then add the rank-one rows W_{m,r} T_{m,.}
        for c in range(a0, a1):
            B[r * nv + c] = 0.0
    for m in range(a0, a1):
        for r in range(lo[m], a1):
            w = Wg[m * zm + r - a0]
            if w != 0.0:
                for c in range(r - a0, z):
                    B[r * nv + c + a0] += w * T_[m * zm + c]
    for r in range(a0, a1):
        for c in range(r + 1, a1):
            B[c * nv + r] = B[r * nv + c]


cdef inline void group_links(const int* ki, Py_ssize_t g, bint module_level, Py_ssize_t* fe) noexcept nogil:
    """(first link, end link) of group g into fe."""
    if module_level:
        fe[0], fe[1] = ki[g * NI + MFIRST], ki[g * NI + MEND]
    else:
        fe[0], fe[1] = g, g + 1


cdef inline void inverse_beyond_group(const int* ki, Py_ssize_t nv, const Py_ssize_t* fe,
                                      Py_ssize_t a0, Py_ssize_t a1, const double* N,
                                      const Py_ssize_t* sub, const Py_ssize_t* se, double* E,
                                      double* A) noexcept nogil:
    """Ubar^-1_{r,c} = -N_r^T eta~_c beyond the group, then eta~_c += PsiBar_r Ubar^-1_{r,c}
    (column r of E = PsiBar_r) for the groups above."""
    cdef Py_ssize_t k, v0, r
    cdef int j
    cdef double e[6]
    for k in range(fe[0], fe[1]):
        v0 = ki[k * NI + IDX_V]
        for r in range(v0, v0 + ki[k * NI + NV]):
            block_row(N + 6 * r, E, nv, a1, v0 + sub[k], -1.0, A + r * nv + a1)
    for r in range(a0, a1):
        for j in range(6):
            e[j] = E[j * nv + r]
        plus_outer_row(e, A + r * nv + a1, nv, a1, se[r], E)


cdef void factors_beyond_groups(const int* ki, Py_ssize_t L, Py_ssize_t nv, bint module_level,
                                const double* N, const double* E, const Py_ssize_t* sub,
                                double* A) noexcept nogil:
    """Ubar_{r,c} = N_r^T PsiBar_c beyond the group of r."""
    cdef Py_ssize_t g, k, v0, r, a1
    cdef Py_ssize_t fe[2]
    for g in range(n_groups(ki, L, module_level)):
        group_links(ki, g, module_level, fe)
        a1 = ki[(fe[1] - 1) * NI + IDX_V] + ki[(fe[1] - 1) * NI + NV]
        for k in range(fe[0], fe[1]):
            v0 = ki[k * NI + IDX_V]
            for r in range(v0, v0 + ki[k * NI + NV]):
                block_row(N + 6 * r, E, nv, a1, v0 + sub[k], 1.0, A + r * nv + a1)


cdef int block_factors(const int* ki, const double* kf, const double* work, Py_ssize_t L,
                       Py_ssize_t nv, bint module_level, bint inverse, double* A,
                       double* B) noexcept nogil:
    """The factors of denoc_bridge.udut (A = U, B = D, I = U D U^T) or, with ``inverse``, of
    inverse_udut (A = U^-1, B = D^-1), link or module level, after the geometry pass and the
    articulated pass with its factors: 0, or OUT_OF_MEMORY."""
    memset(A, 0, nv * nv * sizeof(double))
    memset(B, 0, nv * nv * sizeof(double))
    if L == 0:
        return 0
    cdef Py_ssize_t G = n_groups(ki, L, module_level), zm = 1, g, k, a0, a1
    cdef Py_ssize_t fe[2]
    for g in range(G):
        group_links(ki, g, module_level, fe)
        zm = max(zm, ki[(fe[1] - 1) * NI + IDX_V] + ki[(fe[1] - 1) * NI + NV] - ki[fe[0] * NI + IDX_V])
    cdef double* X = <double*>malloc((L * XW + 18 * nv + 2 * nv * zm) * sizeof(double)
                                     + (L + 3 * nv) * sizeof(Py_ssize_t) + 8)
    if X == NULL:
        return OUT_OF_MEMORY
    cdef double* N = X + L * XW
    cdef double* Psi = N + 6 * nv
    cdef double* E = Psi + 6 * nv
    cdef double* Wg = E + 6 * nv
    cdef double* Ug = Wg + nv * zm
    cdef Py_ssize_t* sub = <Py_ssize_t*>(Ug + nv * zm)
    cdef Py_ssize_t* lo = sub + L
    cdef Py_ssize_t* hi = lo + nv
    cdef Py_ssize_t* se = hi + nv
    subtree_dofs(ki, L, sub)
    base_frame_pass(ki, kf, work, L, nv, X, N, False)
    for k in range(L):  # Psi_k of the articulated pass in the base frame
        for a0 in range(ki[k * NI + IDX_V], ki[k * NI + IDX_V] + ki[k * NI + NV]):
            wrench_to_base(X + k * XW, work + dof_row(L, a0) * W + H_PSI, Psi + 6 * a0)
    for g in range(G - 1, -1, -1):  # groups in reverse: every group below s is done
        group_links(ki, g, module_level, fe)
        a0 = ki[fe[0] * NI + IDX_V]
        a1 = ki[(fe[1] - 1) * NI + IDX_V] + ki[(fe[1] - 1) * NI + NV]
        group_recursion(ki, nv, fe[0], fe[1], a0, a1, zm, N, Psi, sub, E, Wg, Ug, lo, hi, se, not inverse)
        if inverse:
            group_diagonal_inverse(L, nv, work, a0, a1, zm, Wg, Ug, lo, hi, B)
        else:
            group_diagonal(L, nv, work, a0, a1, zm, Ug, Wg, lo, hi, B)
        for k in range(a0, a1):
            A[k * nv + k] = 1.0
        if inverse:
            inverse_beyond_group(ki, nv, fe, a0, a1, N, sub, se, E, A)
    if not inverse:
        factors_beyond_groups(ki, L, nv, module_level, N, E, sub, A)
    free(X)
    return 0
