# The tangent (forward-mode) RNEA at (q, v, qdd) in the direction (dq, dv), in link frames:
# ``dtau_dq dq + dtau_dv dv`` in one forward and one backward sweep of 6-vectors (directional.pyx
# states the math; numba's kernels/directional.py before it).  Modules M_1..M_s forward and
# M_s..M_1 backward (000's inter-modular recursion), their links 1^i..eta^i and back inside
# (intra-modular): along a module the vectors stay in registers, and the buffer keeps 12
# doubles per link (D_k, F_k) for the backward sweep, 24 for a module's last link (t, a, P, Q)
# for its child modules.


cdef inline void store_module_end(double* row, const double* t, const double* a, const double* X,
                                  const double* Y, int nvec) noexcept nogil:
    """(t, a, X and, for ``nvec`` = 4, Y) of a module's last link into its row of Wp."""
    copy6(t, row)
    copy6(a, row + 6)
    copy6(X, row + 12)
    if nvec == 4:
        copy6(Y, row + 18)


cdef inline void tangent_columns(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                                 const double* dq, const double* dv, const double* tp,
                                 const double* ap, const double* t, const double* ta,
                                 const double* aa, double* P, double* Q) noexcept nogil:
    """P_k = P_p + sum_c (w_c dv_c - alpha_c dq_c), Q_k = Q_p + sum_c (S_c dv_c - beta_c dq_c)
    over the columns of joint k (P, Q hold P_p, Q_p in link k's frame); for S = sign e_d,
    w_c = -2 beta_c exactly (adjoint.pxi) and S_c dv_c one component."""
    cdef double S[6]
    cdef double alpha[6]
    cdef double beta[6]
    cdef double w[6]
    cdef Py_ssize_t c = i[IDX_V]
    cdef int n
    if dof_index(i) >= 0:
        aligned_rate_terms(dof_index(i), dof_sign(i), tp, ap, alpha, beta)
        axpy6(-2.0 * dv[c], beta, P)
        axpy6(-dq[c], alpha, P)
        add_axis(dof_index(i), dof_sign(i) * dv[c], Q)
        axpy6(-dq[c], beta, Q)
        return
    for n in range(i[NV]):
        c = i[IDX_V] + n
        joint_axis(i, work, L, nv, n, S)
        column_terms(i, n, S, tp, ap, t, ta, aa, alpha, beta, w)
        axpy6(dv[c], w, P)
        axpy6(-dq[c], alpha, P)
        axpy6(dv[c], S, Q)
        axpy6(-dq[c], beta, Q)


cdef void tangent_forward(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                          double* work, const double* v, double* a, const double* dq,
                          const double* dv, double* buf) noexcept nogil:
    """qdd into ``a`` (step 2 of the forward dynamics, whose factors and link wrenches w_k are in
    ``work``, in the same loop), D_k and the wrench F_k = w_k + I_k mu_k of every link (mu_k =
    a_k - a_k(qdd = 0), 000 Table 3's forward vector) into the buffer's rows of 12 from 24 L,
    for tangent_backward."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: the rows ahead
    cdef double* Wb = buf + 24 * L
    cdef const double* phit = work + dof_row(L, 0) * W + H_PHIT  # the forward dynamics'
    cdef double t[6]
    cdef double ab[6]
    cdef double P[6]
    cdef double Q[6]
    cdef double mu[6]
    cdef double tp[6]
    cdef double ap[6]
    cdef double ta[6]
    cdef double aa[6]
    cdef double h[6]
    cdef double* F
    cdef Py_ssize_t m, k, first, end
    cdef const int* i
    cdef const double* f
    cdef Frame g
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        module_start(ki, kf, L, module_parent(ki, m), buf, 4, t, ab, P, Q)
        module_accelerations(ki, L, nv, work, m, mu)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            i, f, F = ki + k * NI, kf + k * NT, Wb + 12 * k + 6
            if far and k + AHEAD < L:
                prefetch(kf + (k + AHEAD) * NT)
                prefetch(kf + (k + AHEAD) * NT + 8)
                prefetch(work + (k + AHEAD) * W)
                prefetch(work + dof_row(L, i[IDX_V] + AHEAD) * W)
            frame_of(i, f, work, L, k, &g)
            to_child(&g, t, tp)  # t_p, a_p, P_p, Q_p, mu~_k in link k's frame
            to_child(&g, ab, ap)
            to_child(&g, P, P)
            to_child(&g, Q, Q)
            to_child(&g, mu, mu)
            substitute_forward(i, L, nv, work, phit, W, mu, a, mu)  # qdd_k, mu_k
            joint_rates(i, work, L, nv, v, a, tp, ap, t, ab, ta, aa)
            tangent_columns(i, work, L, nv, dq, dv, tp, ap, t, ta, aa, P, Q)
            inertia_times(f + MASS, t, h)  # h_k = I_k t_k
            inertia_times(f + MASS, mu, F)
            add6(work + k * W + C_W, F)  # F_k = w_k + I_k mu_k (000 eqs. 1-2b)
            tangent_wrench(f + MASS, t, h, P, Q, Wb + 12 * k)  # D_k = I_k P_k + C_k Q_k
        store_module_end(buf + 24 * (end - 1), t, ab, P, Q, 4)
        copy6(mu, work + (module_row(L, nv, m) + M_VEC) * W)  # for the child modules


cdef inline void tangent_rows(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                              const double* dq, const double* E, const double* F, double* out,
                              double* x) noexcept nogil:
    """The rows of joint k, out_r = S_r^T E_j (+ S_0^T (S_1 x* Fc_k) dq_1 for a universal joint's
    first row: its first axis is an ancestor of the second), and x = s_k x* Fc_k with
    s_k = sum_c S_c dq_c."""
    cdef Py_ssize_t iv = i[IDX_V]
    cdef int d = dof_index(i), n
    cdef double S[6]
    cdef double s[6]
    if d >= 0:  # S = sign e_d
        out[iv] = dof_sign(i) * pick6(E, d)
        axis_fcross(d, dof_sign(i) * dq[iv], F, x)
        return
    zero6(s)
    for n in range(i[NV]):
        joint_axis(i, work, L, nv, n, S)
        out[iv + n] = dot6(S, E)  # S_r^T E_j
        axpy6(dq[iv + n], S, s)  # s_k = sum_c S_c dq_c
    if joint_type(i) == UNIVERSAL:
        joint_axis(i, work, L, nv, 1, S)
        fcross(S, F, x)
        joint_axis(i, work, L, nv, 0, S)
        out[iv] += dot6(S, x) * dq[iv + 1]  # + S_0^T (S_1 x* Fc_k) dq_1
    fcross(s, F, x)


cdef inline void solve_rows(const int* i, Py_ssize_t L, Py_ssize_t nv, double* work,
                            const double* dtau, double* out, double* xi) noexcept nogil:
    """The JVP's right side at joint k, out_r = dtau_r - out_r, and the solve's step 1 there
    (phitilde into the DOF rows of ``work``, xi += Psi_k phihat_k)."""
    cdef Py_ssize_t r
    for r in range(i[IDX_V], i[IDX_V] + i[NV]):
        out[r] = dtau[r] - out[r]
    substitute_back(i, L, nv, work, out, work + dof_row(L, 0) * W + H_PHIT, W, xi)


cdef void tangent_backward(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           double* work, const double* dq, const double* dtau, double* buf,
                           double* out) noexcept nogil:
    """After tangent_forward, out = dtau_dq dq + dtau_dv dv (``dtau`` NULL), or out = the
    right side dtau - dtau_dq dq - dtau_dv dv of the JVP's solve with its step 1 in the same
    loop (phitilde into ``work``'s DOF rows, for acceleration_forward_links): ``S_r^T E_j`` with
    E_j = Dc_j + H_j summed in one recursion, ``E_p += A^T (E_k + s_k x* Fc_k)``, ``Fc_p += A^T
    Fc_k`` and xi_p += A^T xi_k (carried along a module, added to the parent module's last
    link, xi through the module rows)."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: the rows behind
    cdef double* Wb = buf + 24 * L
    cdef double E[6]
    cdef double F[6]
    cdef double x[6]
    cdef double xi[6]
    cdef Py_ssize_t m, k, p, first, end
    cdef const int* i
    cdef Frame g
    for m in range(n_modules(ki, L)):
        zero6(work + (module_row(L, nv, m) + M_VEC) * W)
    for m in range(n_modules(ki, L) - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        copy6(Wb + 12 * (end - 1), E)
        copy6(Wb + 12 * (end - 1) + 6, F)
        copy6(work + (module_row(L, nv, m) + M_VEC) * W, xi)
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            i, p = ki + k * NI, k - 1 if k > first else module_parent(ki, m)
            if far and k >= AHEAD:
                prefetch(kf + (k - AHEAD) * NT)
                prefetch(work + (k - AHEAD) * W)
                prefetch(Wb + 12 * (k - AHEAD))
                if dtau != NULL:
                    prefetch(work + dof_row(L, i[IDX_V] - AHEAD) * W)
                    prefetch(work + ihatinv_row(L, nv, i[IDX_V] - AHEAD) * W)
            tangent_rows(i, work, L, nv, dq, E, F, out, x)
            if dtau != NULL:
                solve_rows(i, L, nv, work, dtau, out, xi)
            if p < 0:
                continue
            frame_of(i, kf + k * NT, work, L, k, &g)
            add6(E, x)
            to_parent(&g, x, E)  # A^T (E_k + s_k x* Fc_k)
            to_parent(&g, F, F)  # A^T Fc_k
            add6(Wb + 12 * p, E)  # E_p += ...
            add6(Wb + 12 * p + 6, F)  # Fc_p += ...
            if dtau != NULL:
                to_parent(&g, xi, xi)  # A^T xi_k
            if k == first:  # to the parent module's last link
                copy6(E, Wb + 12 * p)
                copy6(F, Wb + 12 * p + 6)
                if dtau != NULL:
                    add6(xi, work + (module_row(L, nv, ki[m * NI + MPARENT]) + M_VEC) * W)
