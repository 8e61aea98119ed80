# One forward sweep that ends a stage of a fixed-step integrator and begins the next (000
# §3.2: forward dynamics followed by numerical integration); numba's kernels/stages.py before it
# (deleted with issue 48; there the fused sweep made the 100-DOF rope's RK4 run 10 % shorter).
#
# The acceleration recursion of forward dynamics (000 Table 3, step 2) and the twist recursion
# of inverse dynamics (000 Table 1, step 1) visit the links in the same order, M_1..M_s and
# 1^i..eta^i, and the joint rates of the next stage at joint k need only joint k's
# accelerations of this stage: qd'_k = vb_k + h (vacc_k + qdd_k) (RK4: vb = v, vacc = 0 for the
# inner stages; vacc = k1 + 2 k2 + 2 k3 and h = dt / 6 for the step itself).  So stage_sweep
# does, at link k: qdd_k of this stage, qd'_k, joint k's geometry at the next configuration,
# and t_k, tdot_k, w_k of the next stage: the two dependent chains (mu here, t and tdot there)
# overlap in the processor.  Written for one-DOF revolute joints about a coordinate axis of
# their link (sweepable); the link steps are those of the two recursions (apply_A,
# twist_rate_bias, store_link_wrench).

cdef extern from *:
    """
    /* vb + h (vacc + a), rounded as written (no fused multiply-add): the stage formula of the
       integrators, the same number as theirs; the empty asm keeps the product a double */
    static inline double db_next_rate(double vb, double h, double vacc, double a) {
        double p = h * (vacc + a);
    #if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
        __asm__("" : "+x"(p));
    #elif defined(__GNUC__) && defined(__aarch64__)
        __asm__("" : "+w"(p));
    #endif
        return vb + p;
    }
    """
    double next_rate "db_next_rate"(double vb, double h, double vacc, double a) noexcept nogil


cdef inline void block_cos_sin(const int* ki, const double* q, double* work, Py_ssize_t r,
                               Py_ssize_t first, Py_ssize_t end, bint poly) noexcept nogil:
    """cos and sin of the first coordinate of the joints of links first..end-1 (at most BLOCK)
    into the scratch blocks c (rows r + 8..) and s (rows r + 16..) of ``work``, in one loop gcc
    vectorises when ``poly``, else by the C library."""
    cdef double* x = work + r * W
    cdef double* c = work + (r + 8) * W
    cdef double* s = work + (r + 16) * W
    cdef double cs[2]
    cdef Py_ssize_t j, n = end - first
    for j in range(n):  # every joint's first coordinate
        x[j] = q[ki[(first + j) * NI + IDX_Q]]
    if poly:
        for j in range(n):  # SIMD
            cos_sin(x[j], cs)
            c[j] = cs[0]
            s[j] = cs[1]
    else:
        for j in range(n):
            c[j] = cos(x[j])
            s[j] = sin(x[j])


cdef inline void sweep_start(const double* kf, double* work, Py_ssize_t L, Py_ssize_t nv,
                             Py_ssize_t p, double* t, double* td, double* mu) noexcept nogil:
    """t, tdot, mu at the first link of a module: the base's [0; -g] (000 Table 1, note), or
    those of the parent module's last link (its module rows)."""
    cdef Py_ssize_t b, j
    if p < 0:
        for j in range(6):
            t[j] = 0.0
            td[j] = 0.0
            mu[j] = 0.0
        td[3], td[4], td[5] = -kf[GRAV], -kf[GRAV + 1], -kf[GRAV + 2]
        return
    b = module_row(L, nv, p)
    for j in range(6):
        t[j] = work[(b + M_TWIST) * W + j]
        td[j] = work[(b + M_RATE) * W + j]
        mu[j] = work[(b + M_VEC) * W + j]


cdef inline double sweep_link(const int* i, const double* f, Py_ssize_t L, double* work,
                              Py_ssize_t k, double* mu) noexcept nogil:
    """This stage at link k: mu~_k = A_{k,b} mu_b (003 (37)), qdd_k = phitilde_k - Psi_k^T mu~_k
    (003 (36)), mu_k = P_k qdd_k + mu~_k (003 (37)) in place of mu; returns qdd_k."""
    cdef double mt[6]
    cdef double u[6]
    cdef const double* row = work + dof_row(L, i[IDX_V]) * W
    cdef double x
    cdef int j
    apply_A(rot_code(i), work[k * W + C_CS], work[k * W + C_CS + 1], NULL, offset_code(i), f + T0,
            mu, mt)
    x = row[H_PHIT] - psi_dot(row + H_PSI, mt)
    unit6(dof_index(i), dof_sign(i) * x, u)
    for j in range(6):
        mu[j] = mt[j] + u[j]
    return x


cdef inline void revolute_twist_rate(int code, double c, double s, int rc, const double* r,
                                     int d, double y, double* t, double* td) noexcept nogil:
    """twist_rate_bias for a revolute joint about the coordinate axis d with rate y and no
    joint acceleration (000 Table 1, step 1): (t_k, tdot_k) = (A t_b + e_d y, A tdot_b + Adot t_b
    + Omega_k e_d y) in place of (t_b, tdot_b), without the products of the zero entries of
    P_k qd_k, P_k qdd_k and Pdot_k qd_k (the same numbers)."""
    cdef double w0 = t[0], w1 = t[1], w2 = t[2], v0 = t[3], v1 = t[4], v2 = t[5]
    cdef double dw0 = td[0], dw1 = td[1], dw2 = td[2], dv0 = td[3], dv1 = td[4], dv2 = td[5]
    cdef double x[3]
    cdef double tv[3]
    cdef double ew[3]
    cdef double yy[3]
    cdef double z[3]
    cdef double u[3]
    cdef double a[3]
    cross_wr(rc, w0, w1, w2, r[0], r[1], r[2], x)  # w_b x r
    rot3(code, c, s, NULL, v0 + x[0], v1 + x[1], v2 + x[2], tv)
    rot3(code, c, s, NULL, w0, w1, w2, ew)  # E w_b
    ew[d] = ew[d] + y  # t_k angular 000 (5)
    cross3(w0, w1, w2, x[0], x[1], x[2], yy)  # w_b x (w_b x r)
    cross_wr(rc, dw0, dw1, dw2, r[0], r[1], r[2], z)  # wdot_b x r
    rot3(code, c, s, NULL, dv0 + yy[0] + z[0], dv1 + yy[1] + z[1], dv2 + yy[2] + z[2], u)
    rot3(code, c, s, NULL, dw0, dw1, dw2, a)
    t[0], t[1], t[2] = ew[0], ew[1], ew[2]
    t[3], t[4], t[5] = tv[0], tv[1], tv[2]
    if d == 0:  # + Omega_k e_d y = t_k x e_d y
        td[0], td[1], td[2] = a[0], a[1] + ew[2] * y, a[2] - ew[1] * y
    elif d == 1:
        td[0], td[1], td[2] = a[0] - ew[2] * y, a[1], a[2] + ew[0] * y
    else:
        td[0], td[1], td[2] = a[0] + ew[1] * y, a[1] - ew[0] * y, a[2]
    td[3], td[4], td[5] = u[0], u[1], u[2]


cdef void stage_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      double* a, const double* vb, const double* vacc, double h, const double* q,
                      Py_ssize_t nq, double* qd, const double* fext) noexcept nogil:
    """One forward sweep over the links of a model whose joints are all revolute about a
    coordinate axis of their link (sweepable).  With the factors of this stage in ``work``
    (after articulated_backward_recursion): the accelerations of this stage into ``a`` (000
    Table 3, step 2); the next stage's joint rates qd = vb + h (vacc + a); and step 1 of 000
    Table 1 at (q, qd) with zero joint accelerations: geometry, t_k, tdot_k and w_k - f_ext,k
    into ``work``, ready for the next backward recursion.  ``fext``: (L, 6) or NULL."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    cdef bint poly = poly_ok(q, nq)
    cdef Py_ssize_t r = work_rows(L, nv, n_modules(ki, L)) - SCRATCH_ROWS
    cdef const double* cb = work + (r + 8) * W
    cdef const double* sb = work + (r + 16) * W
    cdef double t[6]
    cdef double td[6]
    cdef double mu[6]
    cdef Py_ssize_t m, k, b, first, end, v0, done = 0, base = 0
    cdef const int* i
    cdef const double* f
    cdef double x, y, c, s
    cdef int j
    for j in range(6):
        t[j] = td[j] = mu[j] = 0.0
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k == first:
                sweep_start(kf, work, L, nv, ki[m * NI + MPARENT], t, td, mu)
            if k >= done:  # cos, sin of the next block, one SIMD loop
                base, done = k, min(k + BLOCK, L)
                block_cos_sin(ki, q, work, r, k, done, poly)
            if far and k + AHEAD < L:  # the rows a few links ahead
                prefetch(kf + (k + AHEAD) * NT)
                prefetch(kf + (k + AHEAD) * NT + 8)
                prefetch(work + (k + AHEAD) * W)
                prefetch(work + dof_row(L, k + AHEAD) * W)
            i = ki + k * NI
            f = kf + k * NT
            v0 = i[IDX_V]
            x = sweep_link(i, f, L, work, k, mu)  # ---- this stage: qdd_k
            a[v0] = x
            y = next_rate(vb[v0], h, vacc[v0], x)  # ---- the next stage: its rate,
            qd[v0] = y
            c, s = cb[k - base], dof_sign(i) * sb[k - base]  # E_k (stored once this stage's
            work[k * W + C_CS] = c  # accelerations have read the old)
            work[k * W + C_CS + 1] = s
            revolute_twist_rate(rot_code(i), c, s, offset_code(i), f + T0, dof_index(i),
                                dof_sign(i) * y, t, td)  # t_k, tdot_k (000 Table 1)
            store_link_wrench(i, f, work + k * W + C_W, fext + 6 * k if fext != NULL else NULL,
                              t, td)  # w_k - f_ext,k
        b = module_row(L, nv, m)
        for j in range(6):  # for the child modules
            work[(b + M_VEC) * W + j] = mu[j]
            work[(b + M_TWIST) * W + j] = t[j]
            work[(b + M_RATE) * W + j] = td[j]


cdef void first_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      const double* q, Py_ssize_t nq, const double* v, double* a,
                      const double* zeros, double* v1, const double* fext) noexcept nogil:
    """The twists at (q, v) by stage_sweep itself (a stage with zero factors and h = 0:
    v1 = v + 0 (0 + 0) = v), so that a run's numbers do not depend on where it was cut into
    calls."""
    cdef Py_ssize_t k, row
    cdef int j
    for k in range(L):  # E_k = 1, Psi_k = 0, phitilde_k = 0
        work[k * W + C_CS] = 1.0
        work[k * W + C_CS + 1] = 0.0
    for row in range(dof_row(L, 0), dof_row(L, nv)):
        work[row * W + H_PHIT] = 0.0
        for j in range(6):
            work[row * W + H_PSI + j] = 0.0
    stage_sweep(ki, kf, L, nv, work, a, v, zeros, 0.0, q, nq, v1, fext)


cdef bint sweepable(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when stage_sweep applies: every joint revolute about a coordinate axis (chains,
    ropes; one (cos, sin) pair per joint, one DOF, link k's DOF is k)."""
    cdef Py_ssize_t k
    for k in range(L):
        if ki[k * NI + IDX_V] != k:
            return False
    return coordinate_axis_block(ki, 0, L)
