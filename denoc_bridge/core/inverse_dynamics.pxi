# Recursive DeNOC inverse dynamics (000 Table 1; 003 eqs. 4-8); numba's
# kernels/inverse_dynamics.py before (deleted).
#
# Two passes over the module graph: the forward recursion of twists, twist rates and link
# wrenches, and the backward recursion of the wrenches to the joints (tau = N_d^T N_l^T w).
# Modules are visited M_1..M_s (inter-modular recursion) and, inside a module, its links
# 1^i..eta^i (intra-modular recursion).  Inside a module the parent of a link is the previous
# link, so its twist (forward) or accumulated wrench (backward) is carried in local arrays;
# only the last link of a module hands its values to the child modules, and only the first
# link of a module adds into the accumulator of its parent module (module rows of the work
# array): 000 eq. (7a), A^{i,beta} acts on the last link of M_beta only.


cdef inline const double* rotation(const int* i, double* work, Py_ssize_t L, Py_ssize_t k,
                                   double* cs) noexcept nogil:
    """(c, s) of E_k into cs for the codes 0-2; E_k (9 doubles) for the general code, else NULL."""
    if rot_code(i) == ROT_GENERAL:
        return work + geometry_row(L, k) * W
    cs[0] = work[k * W + C_CS]
    cs[1] = work[k * W + C_CS + 1]
    return NULL


cdef inline const double* offset(const double* f, double* work, Py_ssize_t L, Py_ssize_t k,
                                 int code) noexcept nogil:
    """r_k: the table's r0 for the rotation codes 0-2, else the geometry rows.  The passes
    branch on ``code <= 2`` and call their per-link step once in each branch, so that gcc
    specialises the step for each source of r_k."""
    if code <= ROT_Z:
        return f + T0
    return work + (geometry_row(L, k) + 1) * W + G_R


cdef inline bint r_is_r0(const int* i) noexcept nogil:
    """r_k is the table's r0, whose zero pattern is offset_code: the rotation codes 0-2 and
    every revolute or continuous joint (the geometry pass copies r0 for them; a prismatic or
    multi-DOF joint moves r_k).  A general rotation then takes the shift along one axis, or
    none, instead of the general one."""
    return rot_code(i) <= ROT_Z or joint_type(i) <= CONTINUOUS


cdef inline void unit6(int d, double a, double* o) noexcept nogil:
    """a e_d."""
    cdef int j
    for j in range(6):
        o[j] = a if j == d else 0.0


cdef inline void twist_rate_bias(int code, double c, double s, const double* e, int rc,
                                 const double* r, double* t, double* td, const double* pq,
                                 const double* pqq, const double* cj) noexcept nogil:
    """(t_k, tdot_k) = (A t_b + P qd, A tdot_b + Adot t_b + Omega_k P qd + P qdd + Pdot qd)
    (000 Table 1, step 1) in place of (t_b, tdot_b), the A-terms formed in the parent frame and
    rotated once.  The terms that do not wait for tdot_b are summed first, then added to it (the
    rate is the pass's chain from link to link: panda's pass 6 % faster than left to right)."""
    cdef double w0 = t[0], w1 = t[1], w2 = t[2], v0 = t[3], v1 = t[4], v2 = t[5]
    cdef double dw0 = td[0], dw1 = td[1], dw2 = td[2], dv0 = td[3], dv1 = td[4], dv2 = td[5]
    cdef double x[3]
    cdef double tv[3]
    cdef double ew[3]
    cdef double y[3]
    cdef double z[3]
    cdef double u[3]
    cdef double a[3]
    cdef double b[3]
    cdef double d[3]
    cross_wr(rc, w0, w1, w2, r[0], r[1], r[2], x)  # w_b x r
    rot3(code, c, s, e, v0 + x[0], v1 + x[1], v2 + x[2], tv)
    rot3(code, c, s, e, w0, w1, w2, ew)  # E w_b
    cdef double tw0 = ew[0] + pq[0], tw1 = ew[1] + pq[1], tw2 = ew[2] + pq[2]  # t_k 000 (5), 002 (A.1)
    cross3(w0, w1, w2, x[0], x[1], x[2], y)  # w_b x (w_b x r)
    cross_wr(rc, dw0, dw1, dw2, r[0], r[1], r[2], z)  # wdot_b x r
    rot3(code, c, s, e, dv0 + (y[0] + z[0]), dv1 + (y[1] + z[1]), dv2 + (y[2] + z[2]), u)
    rot3(code, c, s, e, dw0, dw1, dw2, a)
    cross3(tw0, tw1, tw2, pq[0], pq[1], pq[2], b)  # Omega_k P_k qd_k (angular)
    cross3(ew[0] + tw0, ew[1] + tw1, ew[2] + tw2, pq[3], pq[4], pq[5], d)  # (E w_b + w_k) x v_rel
    t[0] = tw0
    t[1] = tw1
    t[2] = tw2
    t[3] = tv[0] + pq[3]
    t[4] = tv[1] + pq[4]
    t[5] = tv[2] + pq[5]
    td[0] = a[0] + (b[0] + (pqq[0] + cj[0]))
    td[1] = a[1] + (b[1] + (pqq[1] + cj[1]))
    td[2] = a[2] + (b[2] + (pqq[2] + cj[2]))
    td[3] = u[0] + (d[0] + pqq[3])
    td[4] = u[1] + (d[1] + pqq[4])
    td[5] = u[2] + (d[2] + pqq[5])


cdef inline void link_wrench(const double* f, const double* t, const double* td,
                             double* o) noexcept nogil:
    """w_k = M_k tdot_k + Omega_k M_k E_k t_k (000 eqs. 1-2b) with M_k given by m, h = m d and
    I_O:  n = I_O wdot + h x odotdot + w x (I_O w),  f = m odotdot + wdot x h + w x (w x h)."""
    cdef double m = f[MASS], h0 = f[H], h1 = f[H + 1], h2 = f[H + 2]
    cdef double Ixx = f[IO], Ixy = f[IO + 1], Ixz = f[IO + 2]
    cdef double Iyy = f[IO + 3], Iyz = f[IO + 4], Izz = f[IO + 5]
    cdef double w0 = t[0], w1 = t[1], w2 = t[2]
    cdef double a0 = td[0], a1 = td[1], a2 = td[2], b0 = td[3], b1 = td[4], b2 = td[5]
    cdef double c[3]
    cdef double d[3]
    cdef double e[3]
    cdef double g[3]
    cdef double h[3]
    cross3(w0, w1, w2, Ixx * w0 + Ixy * w1 + Ixz * w2, Ixy * w0 + Iyy * w1 + Iyz * w2,
           Ixz * w0 + Iyz * w1 + Izz * w2, c)
    cross3(h0, h1, h2, b0, b1, b2, d)
    cross3(w0, w1, w2, h0, h1, h2, e)
    cross3(w0, w1, w2, e[0], e[1], e[2], g)
    cross3(a0, a1, a2, h0, h1, h2, h)
    o[0] = Ixx * a0 + Ixy * a1 + Ixz * a2 + c[0] + d[0]
    o[1] = Ixy * a0 + Iyy * a1 + Iyz * a2 + c[1] + d[1]
    o[2] = Ixz * a0 + Iyz * a1 + Izz * a2 + c[2] + d[2]
    o[3] = m * b0 + h[0] + g[0]
    o[4] = m * b1 + h[1] + g[1]
    o[5] = m * b2 + h[2] + g[2]


cdef inline void store_link_wrench(const int* i, const double* f, double* wk, const double* fe,
                                   const double* t, const double* td) noexcept nogil:
    """w_k - f_ext,k into link k's row (wk; fe: its wrench or NULL): w_k from link_wrench, zero
    for a massless link (e.g. inside a universal joint)."""
    cdef double o[6]
    cdef int j
    if massless(i):
        for j in range(6):
            wk[j] = -fe[j] if fe != NULL else 0.0
    else:
        link_wrench(f, t, td, o)
        for j in range(6):
            wk[j] = o[j] - fe[j] if fe != NULL else o[j]


cdef inline double kinetic_energy_term(const double* f, const double* t) noexcept nogil:
    """1/2 t_k^T M_k t_k = 1/2 (w^T I_O w + 2 w . (h x v) + m v . v)."""
    cdef double w0 = t[0], w1 = t[1], w2 = t[2], v0 = t[3], v1 = t[4], v2 = t[5]
    cdef const double* J = f + IO  # I_O
    cdef double Iw = (w0 * (J[0] * w0 + J[1] * w1 + J[2] * w2)
                      + w1 * (J[1] * w0 + J[3] * w1 + J[4] * w2)
                      + w2 * (J[2] * w0 + J[4] * w1 + J[5] * w2))
    cdef double x[3]
    cross3(f[H], f[H + 1], f[H + 2], v0, v1, v2, x)
    return 0.5 * (Iw + 2.0 * (w0 * x[0] + w1 * x[1] + w2 * x[2]) + f[MASS] * (v0 * v0 + v1 * v1 + v2 * v2))


cdef void general_joint_rates(const int* i, const double* f, const double* work, Py_ssize_t L,
                              Py_ssize_t nv, const double* qd, const double* qdd, double* pq,
                              double* pqq, double* cj) noexcept nogil:
    """(P_k qd_k, P_k qdd_k, Pdot_k qd_k) for a joint without an aligned axis (multi-DOF,
    general axis); Pdot qd is non-zero for the universal joint only:
    [(P_0 x axis2) qd_0 qd_1; 0]."""
    cdef Py_ssize_t v0 = i[IDX_V]
    cdef const double* P = work + p_row(L, nv, v0) * W
    cdef int n, j
    cdef double fq
    for j in range(6):
        pq[j] = 0.0
        pqq[j] = 0.0
    for n in range(i[NV]):
        for j in range(6):
            pq[j] += P[n * W + j] * qd[v0 + n]
            pqq[j] += P[n * W + j] * qdd[v0 + n]
    cj[0] = 0.0
    cj[1] = 0.0
    cj[2] = 0.0
    if joint_type(i) == UNIVERSAL:
        cross3(P[0], P[1], P[2], f[AXIS2], f[AXIS2 + 1], f[AXIS2 + 2], cj)
        fq = qd[v0] * qd[v0 + 1]
        cj[0] *= fq
        cj[1] *= fq
        cj[2] *= fq


cdef double twist_forward_recursion(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                    const double* q, Py_ssize_t nq, const double* qd,
                                    const double* qdd, const double* fext, double* work,
                                    bint full) noexcept nogil:
    """Step 1 of 000 Table 1 for every link: geometry of A_{k,b} and P_k, t_k, tdot_k, w_k.
    Gravity enters as the base twist rate [0; -g] (000 Table 1, note).  ``fext``: (L, 6) in
    internal order, or NULL for none.  Returns the kinetic energy sum_k 1/2 t_k^T M_k t_k."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    cdef bint poly = poly_ok(q, nq)
    cdef double energy = 0.0
    cdef double t[6]
    cdef double td[6]
    cdef double pq[6]
    cdef double pqq[6]
    cdef double cj[3]
    cdef double gq[6]
    cdef double gqq[6]
    cdef double gj[3]
    cdef double cs[2]
    cdef Py_ssize_t m, k, p, first, end, b, done = 0
    cdef const int* i
    cdef const double* f
    cdef const double* e
    cdef int code, d, j
    for j in range(6):
        t[j] = 0.0
        td[j] = 0.0
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end, p = ki[m * NI + MFIRST], ki[m * NI + MEND], ki[m * NI + MPARENT]
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k >= done:  # the geometry of the next block
                done = min(k + BLOCK, L)
                joint_geometry_pass(ki, kf, L, q, nv, work, full, k, done, poly)
            if k == first:
                if p < 0:
                    for j in range(6):
                        t[j] = 0.0
                        td[j] = 0.0
                    td[3], td[4], td[5] = -kf[GRAV], -kf[GRAV + 1], -kf[GRAV + 2]
                else:  # last link of the parent module
                    b = module_row(L, nv, p)
                    for j in range(6):
                        t[j] = work[(b + M_TWIST) * W + j]
                        td[j] = work[(b + M_RATE) * W + j]
            if far and k + BLOCK < L:  # the rows of the next geometry block
                prefetch(kf + (k + BLOCK) * NT)
                prefetch(kf + (k + BLOCK) * NT + 8)
                prefetch(work + (k + BLOCK) * W)
            i = ki + k * NI
            f = kf + k * NT
            e = rotation(i, work, L, k, cs)
            code = rot_code(i)
            d = dof_index(i)
            if d >= 0:  # P_k = sign e_d
                unit6(d, dof_sign(i) * qd[i[IDX_V]], pq)
                unit6(d, dof_sign(i) * qdd[i[IDX_V]], pqq)
                cj[0] = 0.0
                cj[1] = 0.0
                cj[2] = 0.0
            else:  # through copies (as in articulated_backward_recursion)
                general_joint_rates(i, f, work, L, nv, qd, qdd, gq, gqq, gj)
                for j in range(6):
                    pq[j] = gq[j]
                    pqq[j] = gqq[j]
                for j in range(3):
                    cj[j] = gj[j]
            if code <= ROT_Z:  # r_k = r0: one path per source of r_k
                twist_rate_bias(code, cs[0], cs[1], NULL, offset_code(i), f + T0, t, td, pq, pqq, cj)
            else:
                twist_rate_bias(code, 0.0, 0.0, e, R_GENERAL, offset(f, work, L, k, code), t, td,
                                pq, pqq, cj)
            store_link_wrench(i, f, work + k * W + C_W, fext + 6 * k if fext != NULL else NULL, t, td)
            if full and not massless(i):
                energy += kinetic_energy_term(f, t)
        b = module_row(L, nv, m)
        for j in range(6):
            work[(b + M_TWIST) * W + j] = t[j]
            work[(b + M_RATE) * W + j] = td[j]
    return energy


cdef void wrench_backward_recursion(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                    const double* qdd, double* work, double* tau) noexcept nogil:
    """Step 2 of 000 Table 1: w~_k = w_k + sum_c A_{c,k}^T w~_c and tau_k = P_k^T w~_k
    (+ armature qdd); the vector row of module M_i gathers what its child modules send."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    cdef Py_ssize_t S = n_modules(ki, L)
    cdef Py_ssize_t m, k, p, first, end, b, v0
    cdef const int* i
    cdef const double* f
    cdef const double* e
    cdef const double* P
    cdef double c[6]
    cdef double wt[6]
    cdef double cs[2]
    cdef double x
    cdef int code, d, j, n
    for m in range(S):
        b = module_row(L, nv, m) + M_VEC
        for j in range(6):
            work[b * W + j] = 0.0
    for m in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = ki[m * NI + MFIRST], ki[m * NI + MEND], ki[m * NI + MPARENT]
        b = module_row(L, nv, m) + M_VEC
        for j in range(6):
            c[j] = work[b * W + j]
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            if far and k >= AHEAD:  # the rows a few links ahead
                prefetch(kf + (k - AHEAD) * NT)
                prefetch(kf + (k - AHEAD) * NT + 8)
                prefetch(work + (k - AHEAD) * W)
            i = ki + k * NI
            f = kf + k * NT
            for j in range(6):
                wt[j] = work[k * W + C_W + j] + c[j]  # w~_k
            v0 = i[IDX_V]
            d = dof_index(i)
            if d >= 0:
                tau[v0] = dof_sign(i) * pick6(wt, d) + f[ARM0] * qdd[v0]  # tau_k = p_k^T w~_k
            else:
                P = work + p_row(L, nv, v0) * W
                for n in range(i[NV]):
                    x = f[ARM + n] * qdd[v0 + n]
                    for j in range(6):
                        x += P[n * W + j] * wt[j]
                    tau[v0 + n] = x
            e = rotation(i, work, L, k, cs)
            code = rot_code(i)
            if code <= ROT_Z:  # r_k = r0
                apply_At(code, cs[0], cs[1], NULL, offset_code(i), f + T0, wt, c)  # A_{k,b}^T w~_k
            else:
                apply_At(code, 0.0, 0.0, e, R_GENERAL, offset(f, work, L, k, code), wt, c)
            if k == first and p >= 0:
                b = module_row(L, nv, p) + M_VEC
                for j in range(6):
                    work[b * W + j] += c[j]
