# Kinetic and potential energy in one O(n) forward recursion (numba's kernels/energy.py before, deleted
# with issue 48).
#
# Twists as in the forward recursion of inverse dynamics (000 Table 1, step 1:
# t_k = A_{k,b} t_b + P_k qd_k, 000 (5)), T = sum_k 1/2 t_k^T M_k t_k (000 (2b)) plus the
# armature's 1/2 sum_i J_i qd_i^2; the link's placement is carried as R_k = R_b E_k^T (link to
# base coordinates) and p_k = p_b + R_b r_k, so that the gravitational potential is
# V_g = -sum_k (m_k g . p_k + (R_k^T g) . h_k) (h = m c, the first moment).  Joint springs add
# 1/2 sum_i K_i d_i^2 with d = q (-) q_rest (model_difference, configuration.pxd).
#
# E_k, r_k and P_k come from the geometry pass (geometry.pxi) block by block, as in the other
# recursions, t_k, R_k and p_k from kinematics.pxi (link_twist, link_placement); the work array
# keeps, per module, the twist (M_TWIST) and R_k, p_k (M_FRAME) of its last link for the child
# modules.

cdef enum:
    M_FRAME = 0  # module rows: R_k (8 entries, the ninth in column 0 of the next row), p_k (next row, from G_R)


cdef inline void module_start(const double* work, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t p,
                              double* t, double* R, double* pb) noexcept nogil:
    """t_b, R_b and p_b of the first link's parent: the base at rest (p < 0) or the last link of
    the parent module M_p."""
    cdef Py_ssize_t tw, fr
    cdef int j
    if p < 0:
        for j in range(6):
            t[j] = 0.0
        base_placement(R, pb)
        return
    tw = (module_row(L, nv, p) + M_TWIST) * W
    fr = (module_row(L, nv, p) + M_FRAME) * W
    for j in range(6):
        t[j] = work[tw + j]
    for j in range(9):
        R[j] = work[fr + j]
    for j in range(3):
        pb[j] = work[fr + W + G_R + j]


cdef inline void module_end(double* work, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t m,
                            const double* t, const double* R, const double* pb) noexcept nogil:
    """t, R and p of the last link of module M_m into its rows, for the child modules."""
    cdef Py_ssize_t tw = (module_row(L, nv, m) + M_TWIST) * W
    cdef Py_ssize_t fr = (module_row(L, nv, m) + M_FRAME) * W
    cdef int j
    for j in range(6):
        work[tw + j] = t[j]
    for j in range(9):
        work[fr + j] = R[j]
    for j in range(3):
        work[fr + W + G_R + j] = pb[j]


cdef inline void link_energy(const int* i, const double* f, double* work, Py_ssize_t L,
                             Py_ssize_t nv, Py_ssize_t k, const double* v, const double* g,
                             double* t, double* R, double* pb, double* energies) noexcept nogil:
    """From the parent's (t_b, R_b, p_b) in place to link k's (link_twist and link_placement,
    kinematics.pxi), adding its kinetic and potential energy to energies[0] and energies[1]:
    1/2 t_k^T M_k t_k (000 (2b)) and -(m_k g . p_k + (R_k^T g) . h_k)."""
    link_twist(i, f, work, L, nv, k, v, t)  # 000 (5)
    link_placement(i, f, work, L, k, R, pb)
    energies[0] += kinetic_energy_term(f, t)
    energies[1] -= (f[MASS] * (g[0] * pb[0] + g[1] * pb[1] + g[2] * pb[2])
                    + (R[0] * g[0] + R[3] * g[1] + R[6] * g[2]) * f[H]
                    + (R[1] * g[0] + R[4] * g[1] + R[7] * g[2]) * f[H + 1]
                    + (R[2] * g[0] + R[5] * g[1] + R[8] * g[2]) * f[H + 2])


cdef void energy_forward_recursion(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                   const double* q, const double* v, double* work,
                                   double* energies) noexcept nogil:
    """energies = (kinetic energy of the links, gravitational potential energy) at (q, v)."""
    cdef bint poly = poly_ok(q, model_nq(ki, L))
    cdef double g[3]
    cdef double t[6]
    cdef double R[9]  # R_b, row major (link to base coordinates)
    cdef double pb[3]
    cdef Py_ssize_t m, k, first, end, done = 0
    g[0] = g[1] = g[2] = 0.0
    if L > 0:
        g[0], g[1], g[2] = kf[GRAV], kf[GRAV + 1], kf[GRAV + 2]
    energies[0] = energies[1] = 0.0
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        module_start(work, L, nv, ki[m * NI + MPARENT], t, R, pb)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k >= done:  # the geometry of the next block
                done = min(k + BLOCK, L)
                joint_geometry_pass(ki, kf, L, q, nv, work, False, k, done, poly)
            link_energy(ki + k * NI, kf + k * NT, work, L, nv, k, v, g, t, R, pb, energies)
        module_end(work, L, nv, m, t, R, pb)


cdef void energies_of_state(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                            double* work, const double* q, const double* v, const double* K,
                            const double* q_rest, bint springs, double* d,
                            double* energies) noexcept nogil:
    """energies = (kinetic incl. the armature, potential incl. the joint springs) at (q, v):
    the state's lengths are the model's (checked by the caller); ``work`` the model's work array
    (geometry, P and module rows written), ``d`` (nv,) scratch for q (-) q_rest."""
    cdef Py_ssize_t k, a0
    cdef int n
    energy_forward_recursion(ki, kf, L, nv, q, v, work, energies)
    for k in range(L):
        a0 = ki[k * NI + IDX_V]
        for n in range(ki[k * NI + NV]):
            energies[0] += 0.5 * kf[k * NT + ARM + n] * v[a0 + n] * v[a0 + n]
    if springs:
        model_difference(ki, L, q_rest, q, d)
        for k in range(nv):
            energies[1] += 0.5 * K[k] * d[k] * d[k]
