# The substitutions of 000 Table 3 with the articulated factors (Psi_k, Ihat_k^-1, P_k) that
# the forward dynamics left in ``work``, link by link, so that the sweeps of tangent.pxi and
# adjoint.pxi run them inside their own loops (issue 49: one pass over the links instead of
# two).  They are factorised_solve.pxi's and forward_dynamics.pxi's steps (tree module) in the
# same operations and order; ``phit`` holds phitilde_k at ``phit[v * stride]`` for DOF v: the
# work array's DOF rows (stride W, where the forward dynamics keeps its own) or a vector of nv
# entries (stride 1, for a second right side).


cdef inline void substitute_back(const int* i, Py_ssize_t L, Py_ssize_t nv, double* work,
                                 const double* x, double* phit, Py_ssize_t stride,
                                 double* xi) noexcept nogil:
    """Step 1 at joint k for the right side x: phihat_k = x_k - P_k^T xi (003 eq. 31),
    phitilde_k = Ihat_k^-1 phihat_k (eq. 35), xi += Psi_k phihat_k (eq. 32; 001 eqs. A.4-A.7
    for z_k DOFs)."""
    cdef Py_ssize_t v0 = i[IDX_V]
    cdef const double* inv = work + ihatinv_row(L, nv, v0) * W
    cdef const double* dof = work + dof_row(L, v0) * W
    cdef const double* P
    cdef double ph[6]
    cdef double acc
    cdef int d = dof_index(i), a, c
    if d >= 0:  # P_k = sign e_d
        ph[0] = x[v0] - dof_sign(i) * pick6(xi, d)
        phit[v0 * stride] = ph[0] * inv[0]
        axpy6(ph[0], dof + H_PSI, xi)
        return
    P = work + p_row(L, nv, v0) * W
    for a in range(i[NV]):
        ph[a] = x[v0 + a] - dot6(P + a * W, xi)
    for a in range(i[NV]):
        acc = 0.0
        for c in range(i[NV]):
            acc += inv[a * W + c] * ph[c]
        phit[(v0 + a) * stride] = acc
    for a in range(i[NV]):
        axpy6(ph[a], dof + a * W + H_PSI, xi)


cdef inline void substitute_forward(const int* i, Py_ssize_t L, Py_ssize_t nv,
                                    const double* work, const double* phit, Py_ssize_t stride,
                                    const double* mt, double* x, double* mu) noexcept nogil:
    """Step 2 at joint k from mt = mu~_k = A_{k,b} mu_b (003 eq. 37): x_k = phitilde_k -
    Psi_k^T mu~_k (eq. 36) and mu_k = P_k x_k + mu~_k (eq. 37); x may be phit (stride 1)."""
    cdef Py_ssize_t v0 = i[IDX_V]
    cdef const double* row
    cdef int d = dof_index(i), a
    cdef double xk
    if d >= 0:  # P_k = sign e_d; x_k kept in a register for mu_k (the recursion's critical path)
        xk = phit[v0 * stride] - psi_dot(work + dof_row(L, v0) * W + H_PSI, mt)
        x[v0] = xk
        copy6(mt, mu)
        add_axis(d, dof_sign(i) * xk, mu)
        return
    for a in range(i[NV]):
        row = work + dof_row(L, v0 + a) * W + H_PSI
        x[v0 + a] = phit[(v0 + a) * stride] - psi_dot(row, mt)
    copy6(mt, mu)
    for a in range(i[NV]):
        axpy6(x[v0 + a], work + p_row(L, nv, v0 + a) * W, mu)


cdef void solve_backward(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                         double* work, const double* x, double* phit) noexcept nogil:
    """Step 1 of the solve M^-1 x over all links, M_s..M_1 and eta^i..1^i, phitilde into
    ``phit`` (nv entries; factorised_solve's first half): xi_p += A^T xi_k, through the
    module rows for a module's first link."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: the rows behind
    cdef Py_ssize_t m, k, p, first, end
    cdef const int* i
    cdef double* acc
    cdef double xi[6]
    cdef Frame g
    for m in range(n_modules(ki, L)):
        zero6(work + (module_row(L, nv, m) + M_VEC) * W)
    for m in range(n_modules(ki, L) - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end = ki[m * NI + MFIRST], ki[m * NI + MEND]
        copy6(work + (module_row(L, nv, m) + M_VEC) * W, xi)
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            i = ki + k * NI
            if far and k >= AHEAD:
                prefetch(kf + (k - AHEAD) * NT)
                prefetch(work + (k - AHEAD) * W)
                prefetch(work + dof_row(L, i[IDX_V] - AHEAD) * W)
                prefetch(work + ihatinv_row(L, nv, i[IDX_V] - AHEAD) * W)
            substitute_back(i, L, nv, work, x, phit, 1, xi)
            p = module_parent(ki, m)
            if k == first and p < 0:
                continue
            frame_of(i, kf + k * NT, work, L, k, &g)
            to_parent(&g, xi, xi)  # A_{k,b}^T xi
            if k == first:  # to the parent module (000 eq. 20)
                acc = work + (module_row(L, nv, ki[m * NI + MPARENT]) + M_VEC) * W
                add6(xi, acc)
