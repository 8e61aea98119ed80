# The adjoint of the tangent RNEA at (q, v, qdd) for the weights mu: ``dtau_dq^T mu`` and
# ``dtau_dv^T mu`` in one forward and one backward sweep of 6-vectors (directional.pyx states the
# math), module by module as tangent.pxi.  The buffer keeps 24 doubles per link (U_k, Y_k, Z_k,
# F_k, then the subtree sums Yc, Zc, Fc), 12 per DOF (alpha_c, beta_c), 6 per DOF (w_c, for a
# joint of several DOFs only: a joint of one has t_n = t_l + S_c qd_c, so w_c = 2 t_l x S_c =
# -2 beta_c, and the adjoint forward sweep writes a third less) and, for a module's
# last link, (t, a, U) for its child modules.


cdef inline void adjoint_terms(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                               const double* mu, bint solve, const double* tp, const double* ap,
                               const double* t, const double* ta, const double* aa, double* C,
                               double* Cw, double* U) noexcept nogil:
    """alpha_c and beta_c of the columns of joint k into their rows of C (w_c into Cw for a joint
    of several DOFs) and, unless ``solve`` did, U_k = U_p + sum_c S_c mu_c."""
    cdef double S[6]
    cdef double w[6]
    cdef Py_ssize_t c = i[IDX_V]
    cdef int n
    if dof_index(i) >= 0 and solve:  # S = sign e_d: no w_c (adjoint_columns)
        aligned_rate_terms(dof_index(i), dof_sign(i), tp, ap, C + 12 * c, C + 12 * c + 6)
        return
    for n in range(i[NV]):
        c = i[IDX_V] + n
        joint_axis(i, work, L, nv, n, S)
        column_terms(i, n, S, tp, ap, t, ta, aa, C + 12 * c, C + 12 * c + 6,
                     Cw + 6 * c if i[NV] > 1 else w)  # alpha_c, beta_c, w_c
        if not solve:
            axpy6(mu[c], S, U)  # U_k = U_p + sum_c S_c mu_c


cdef void adjoint_forward(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                          double* work, const double* v, double* a, double* mu, bint solve,
                          double* buf) noexcept nogil:
    """qdd into ``a`` and, with ``solve``, mu = M^-1 lam into ``mu`` from the phitilde of
    solve_backward there (the forward substitutions of both solves in the same loop: the
    solve's forward vector is U), else ``mu`` as given; each column's alpha, beta (the
    buffer's rows of 12 from 48 L) and, for a joint of several DOFs, w (rows of 6 after them),
    and each link's U, Y = I U, Z = C^T U and wrench F = w_k + I_k mu_k (tangent_forward; its
    rows of 24 from 24 L)."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: the rows ahead
    cdef double* Wb = buf + 24 * L
    cdef double* C = buf + 48 * L
    cdef const double* phit = work + dof_row(L, 0) * W + H_PHIT  # the forward dynamics'
    cdef double t[6]
    cdef double ab[6]
    cdef double U[6]
    cdef double mf[6]
    cdef double tp[6]
    cdef double ap[6]
    cdef double ta[6]
    cdef double aa[6]
    cdef double h[6]
    cdef double Y[6]
    cdef Py_ssize_t m, k, first, end
    cdef const int* i
    cdef const double* f
    cdef double* row
    cdef Frame g
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        module_start(ki, kf, L, module_parent(ki, m), buf, 3, t, ab, U, NULL)
        module_accelerations(ki, L, nv, work, m, mf)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            i, f, row = ki + k * NI, kf + k * NT, Wb + 24 * k
            if far and k + AHEAD < L:
                prefetch(kf + (k + AHEAD) * NT)
                prefetch(kf + (k + AHEAD) * NT + 8)
                prefetch(work + (k + AHEAD) * W)
                prefetch(work + dof_row(L, i[IDX_V] + AHEAD) * W)
            frame_of(i, f, work, L, k, &g)
            to_child(&g, t, tp)  # t_p, a_p, U_p, mu~_k in link k's frame
            to_child(&g, ab, ap)
            to_child(&g, U, U)
            to_child(&g, mf, mf)
            substitute_forward(i, L, nv, work, phit, W, mf, a, mf)  # qdd_k, mu_k
            if solve:  # mu_k of M^-1 lam and U_k = U_p + sum_c S_c mu_c
                substitute_forward(i, L, nv, work, mu, 1, U, mu, U)
            joint_rates(i, work, L, nv, v, a, tp, ap, t, ab, ta, aa)
            adjoint_terms(i, work, L, nv, mu, solve, tp, ap, t, ta, aa, C, C + 12 * nv, U)
            inertia_times(f + MASS, t, h)  # h_k = I_k t_k
            inertia_times(f + MASS, mf, row + 18)
            add6(work + k * W + C_W, row + 18)  # F_k = w_k + I_k mu_k
            inertia_times(f + MASS, U, Y)  # Y_k = I_k U_k
            coriolis_transpose_times(f + MASS, t, h, U, Y, row + 12)  # Z_k = C_k^T U_k
            copy6(U, row)
            copy6(Y, row + 6)
        store_module_end(buf + 24 * (end - 1), t, ab, U, NULL, 3)
        copy6(mf, work + (module_row(L, nv, m) + M_VEC) * W)  # for the child modules


cdef inline void adjoint_columns(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                                 const double* mu, const double* C, const double* Cw,
                                 const double* U, const double* Y, const double* Z, const double* F,
                                 double sign, double* gq, double* gv) noexcept nogil:
    """The rows of joint k of dtau_dq^T mu and dtau_dv^T mu, times ``sign``, from U_k and the
    subtree sums Yc_k, Zc_k, Fc_k, with ``U_l = U_k - sum_c S_c mu_c`` (+ S_0 mu_0 for a
    universal joint's second column) and w_c = -2 beta_c for a joint of one DOF."""
    cdef Py_ssize_t iv = i[IDX_V], c
    cdef double Ul[6]
    cdef double S[6]
    cdef double x[6]
    cdef int n, d = dof_index(i)
    cdef double sg = dof_sign(i)
    copy6(U, Ul)
    if d >= 0:  # S = sign e_d
        add_axis(d, -sg * mu[iv], Ul)  # U_p in link k's frame
        axis_fcross(d, sg, F, x)
        gq[iv] = sign * (dot6(Ul, x) - dot6(Y, C + 12 * iv) - dot6(Z, C + 12 * iv + 6))
        gv[iv] = sign * (sg * pick6(Z, d) - 2.0 * dot6(Y, C + 12 * iv + 6))
        return
    for n in range(i[NV]):
        joint_axis(i, work, L, nv, n, S)
        axpy6(-mu[iv + n], S, Ul)  # U_p in link k's frame
    for n in range(i[NV]):
        c = iv + n
        joint_axis(i, work, L, nv, n, S)
        if joint_type(i) == UNIVERSAL and n == 1:  # the first axis is an ancestor of the second
            joint_axis(i, work, L, nv, 0, x)
            axpy6(mu[iv], x, Ul)
        fcross(S, F, x)
        # U_l.(S x* Fc) - Yc.alpha - Zc.beta
        gq[c] = sign * (dot6(Ul, x) - dot6(Y, C + 12 * c) - dot6(Z, C + 12 * c + 6))
        if i[NV] > 1:
            gv[c] = sign * (dot6(Z, S) + dot6(Y, Cw + 6 * c))  # Zc.S_c + Yc.w_c
        else:
            gv[c] = sign * (dot6(Z, S) - 2.0 * dot6(Y, C + 12 * c + 6))


cdef void adjoint_backward(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           const double* work, const double* mu, double* buf, double sign,
                           double* gq, double* gv) noexcept nogil:
    """gq = sign dtau_dq^T mu, gv = sign dtau_dv^T mu after adjoint_forward: the subtree sums Yc, Zc, Fc
    (carried along a module, added to the parent module's last link) and, joint by joint, the
    products of adjoint_columns."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: the rows behind
    cdef double* Wb = buf + 24 * L
    cdef const double* C = buf + 48 * L
    cdef double Y[6]
    cdef double Z[6]
    cdef double F[6]
    cdef Py_ssize_t m, k, p, first, end
    cdef const int* i
    cdef double* row
    cdef Frame g
    for m in range(n_modules(ki, L) - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        row = Wb + 24 * (end - 1)
        copy6(row + 6, Y)
        copy6(row + 12, Z)
        copy6(row + 18, F)
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            i, p = ki + k * NI, k - 1 if k > first else module_parent(ki, m)
            if far and k >= AHEAD:
                prefetch(kf + (k - AHEAD) * NT)
                prefetch(work + (k - AHEAD) * W)
                prefetch(Wb + 24 * (k - AHEAD))
                prefetch(Wb + 24 * (k - AHEAD) + 16)
            adjoint_columns(i, work, L, nv, mu, C, C + 12 * nv, Wb + 24 * k, Y, Z, F, sign, gq, gv)
            if p < 0:
                continue
            frame_of(i, kf + k * NT, work, L, k, &g)
            row = Wb + 24 * p
            to_parent(&g, Y, Y)  # Yc_p += A^T Yc_k
            add6(row + 6, Y)
            to_parent(&g, Z, Z)  # Zc_p += A^T Zc_k
            add6(row + 12, Z)
            to_parent(&g, F, F)  # Fc_p += A^T Fc_k
            add6(row + 18, F)
            if k == first:  # to the parent module's last link
                copy6(Y, row + 6)
                copy6(Z, row + 12)
                copy6(F, row + 18)
