# Solves with the factors of the last forward dynamics (000 Table 3 without the twists and the
# masses; numba's kernels/lagrange.py ``solve`` before), for the joint-limit stops of the runs
# and the Lagrange solves of constraints: M^-1 x in O(n).


cdef inline void solve_joint_general(const int* i, Py_ssize_t L, Py_ssize_t nv, double* work,
                                     const double* x, double* out, double* xi) noexcept nogil:
    """Step 1 at a joint of z_k DOFs without an aligned axis (001 eqs. A.4-A.7): phihat_k =
    x_k - P_k^T xi (kept in out until step 2), phitilde_k = Ihat_k^-1 phihat_k, xi += Psi_k
    phihat_k."""
    cdef Py_ssize_t v0 = i[IDX_V]
    cdef Py_ssize_t dof = dof_row(L, v0), prow = p_row(L, nv, v0), inv = ihatinv_row(L, nv, v0)
    cdef int z = i[NV]
    cdef int a, c, j
    cdef double acc, ph
    cdef const double* P
    cdef const double* row
    for a in range(z):  # phihat_k                 003 (31)
        P = work + (prow + a) * W
        out[v0 + a] = x[v0 + a] - (P[0] * xi[0] + P[1] * xi[1] + P[2] * xi[2] + P[3] * xi[3]
                                   + P[4] * xi[4] + P[5] * xi[5])
    for a in range(z):  # phitilde_k = Ihat_k^-1 phihat_k 003 (35)
        acc = 0.0
        for c in range(z):
            acc += work[(inv + a) * W + c] * out[v0 + c]
        work[(dof + a) * W + H_PHIT] = acc
    for a in range(z):  # + Psi_k phihat_k         003 (32)
        ph = out[v0 + a]
        row = work + (dof + a) * W + H_PSI
        for j in range(6):
            xi[j] = xi[j] + row[j] * ph


cdef void factorised_solve(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           double* work, const double* x, double* out,
                           Py_ssize_t n) noexcept nogil:
    """out[:hi] = (M^-1 x)[:hi] for an x that is zero after hi, the DOFs of the links before n
    (all of out for n = L), with the factors (Psi_k, Ihat_k^-1, E_k, P_k) that the last
    forward_dynamics_passes(..., factors=True) left in ``work``: the backward substitutions of
    000 Table 3 (step 1) without link wrenches and masses, then the forward substitution
    (step 2), both over the links before n only."""
    cdef Py_ssize_t S = n_modules(ki, L)
    cdef Py_ssize_t m, k, p, first, end, b, v0
    cdef const int* i
    cdef const double* e
    cdef double* dof
    cdef double xi[6]
    cdef double cs[2]
    cdef double ph
    cdef int code, d, j
    for m in range(S):  # module accumulators of xi
        b = module_row(L, nv, m) + M_VEC
        for j in range(6):
            work[b * W + j] = 0.0
    for m in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = ki[m * NI + MFIRST], ki[m * NI + MEND], ki[m * NI + MPARENT]
        if first >= n:
            continue
        b = module_row(L, nv, m) + M_VEC
        for j in range(6):
            xi[j] = work[b * W + j]
        for k in range(min(end, n) - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            i = ki + k * NI
            v0 = i[IDX_V]
            d = dof_index(i)
            if d >= 0:  # P_k = sign e_d
                dof = work + dof_row(L, v0) * W
                ph = x[v0] - dof_sign(i) * pick6(xi, d)  # phihat_k                 003 (31)
                dof[H_PHIT] = ph * work[ihatinv_row(L, nv, v0) * W]  # phitilde_k 003 (35)
                for j in range(6):
                    xi[j] = xi[j] + dof[H_PSI + j] * ph  # + Psi_k phihat_k         003 (32)
            else:
                solve_joint_general(i, L, nv, work, x, out, xi)
            if p < 0 and k == first:
                continue
            e = rotation(i, work, L, k, cs)
            code = rot_code(i)
            if code <= ROT_Z:  # to the parent: A_{k,b}^T xi
                apply_At(code, cs[0], cs[1], NULL, offset_code(i), kf + k * NT + T0, xi, xi)
            else:
                apply_At(code, 0.0, 0.0, e, R_GENERAL, offset(kf + k * NT, work, L, k, code), xi, xi)
            if k == first:  # to the parent module (eq. 20)
                b = module_row(L, nv, p) + M_VEC
                for j in range(6):
                    work[b * W + j] += xi[j]
    acceleration_forward_links(ki, kf, L, nv, work, out, n)  # step 2 over the links before n
