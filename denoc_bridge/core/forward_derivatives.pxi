# The derivatives of the forward dynamics of a tree (they replaced numba's kernels/derivatives.py,
# since deleted; Pinocchio's computeABADerivatives).  qdd = FD(q, v, tau) satisfies
# ID(q, v, FD(q, v, tau)) = tau for every (q, v, tau), so by the implicit-function theorem
#
#     dqdd/dq = -M^-1 dtau/dq,   dqdd/dv = -M^-1 dtau/dv,   dqdd/dtau = M^-1                  (F1)
#
# with dtau/dx the derivatives of inverse dynamics (derivative_passes.pxi) at (q, v, qdd).  M^-1
# comes one of the two ways of the inverse GIM (tree's ltdl_inverse_chosen, the choice of
# db.inverse_mass_matrix, by the work count of the LTDL):
#
#   * small trees (panda, solo12, talos): the passes at a = 0 give M, dtau/dv and the bias
#     b = ID(q, v, 0); the scalar LTDL of M and Takahashi's recurrence turn M into M^-1 in place
#     (gim_ltdl.pxi), then
#
#         qdd = M^-1 (tau - b)                                                               (F2)
#
#     and acceleration_pass adds the terms of qdd to dtau/dq (A1), no forward-dynamics pass;
#   * long chains, or a pivot that the LTDL finds too small: the O(n) forward dynamics keeping
#     its factors (000 eqs. 18-23; it names a joint of a singular articulated inertia), M^-1 from
#     them (002 eqs. A.13-A.22, gim.pxi minv_from_factors), then the passes at qdd.
#
# The products by M^-1 of (F1) are formed transposed, (-M^-1 X)^T = -X^T M^-1 (M^-1 symmetric):
# row c of the transpose sums rows of M^-1, one per row k where column c of X can be non-zero
# (c's subtree and the stretches of its ancestors).  CBLOCK rows of the transpose at a time, over
# tiles of columns of M^-1 whose sums stay in registers: each load of M^-1 serves CBLOCK
# multiply-adds (sweeping instead the non-zero stretches of the rows of X, 7 columns on average
# on talos, spent more time in the loops' ends than in the products; one row of the transpose at
# a time streamed M^-1 from the L2 cache once per row on the 100-link chain: both measured).


cdef void dof_ranges(const int* ki, Py_ssize_t L, const Py_ssize_t* sub, Py_ssize_t* lam,
                     Py_ssize_t* run, Py_ssize_t* first, Py_ssize_t* end) noexcept nogil:
    """Per DOF r: its parent DOF lam[r] (the previous DOF of its joint, or the last DOF of the
    parent link, -1 at a root), run[r] the first DOF of the stretch of contiguous ancestors r,
    lam[r], .. that ends at r, and its joint's subtree's columns first[r] .. end[r] - 1."""
    cdef Py_ssize_t k, v0, z, p, a
    for k in range(L):
        v0, z, p = ki[k * NI + IDX_V], ki[k * NI + NV], ki[k * NI + PARENT]
        for a in range(z):
            lam[v0 + a] = v0 + a - 1 if a > 0 else (ki[p * NI + IDX_V] + ki[p * NI + NV] - 1 if p >= 0 else -1)
            run[v0 + a] = run[v0 + a - 1] if lam[v0 + a] == v0 + a - 1 and v0 + a > 0 else v0 + a
            first[v0 + a] = v0
            end[v0 + a] = v0 + sub[k]


cdef extern from *:
    """
    #if defined(__AVX512F__)
    #define DB_DERIV_TILE 16
    #define DB_DERIV_CBLOCK 8
    #else
    #define DB_DERIV_TILE 8
    #define DB_DERIV_CBLOCK 4
    #endif
    """
    #: rows of the transposed result per sweep over the rows of M^-1 (each load of M^-1 serves as
    #: many multiply-adds), and the columns of M^-1 whose sums for them stay in registers: 8 x 16
    #: doubles in 16 AVX-512 registers, 4 x 8 in 8 AVX2 registers (4 x 16 spilt: gcc's code, read)
    enum: CBLOCK "DB_DERIV_CBLOCK"
    enum: TILE "DB_DERIV_TILE"

cdef enum:
    NARROW = 8  # the narrower tile of the columns that the TILE-wide ones leave; fewer DOFs: rows


cdef inline void minus_row_sums(Py_ssize_t nv, crow_t Minv, crow_t X, Py_ssize_t c, Py_ssize_t k0,
                                Py_ssize_t k1, row_t t) noexcept nogil:
    """t[i] -= sum_k X_kc M^-1_ki over the rows k0 .. k1 - 1 of M^-1 (the models of fewer than
    NARROW DOFs)."""
    cdef Py_ssize_t k, i
    cdef double a
    cdef const double* m
    for k in range(k0, k1):
        a = X[k * nv + c]
        m = Minv + k * nv
        for i in range(nv):
            t[i] -= a * m[i]


cdef inline void minus_tile_sums(Py_ssize_t nv, crow_t Minv, crow_t X, Py_ssize_t c, Py_ssize_t k0,
                                 Py_ssize_t k1, Py_ssize_t i0, Py_ssize_t width, double* acc) noexcept nogil:
    """acc[j width + i] -= sum_k X_k,c+j M^-1_k,i0+i for the CBLOCK columns from c of X and the
    ``width`` (a constant: TILE or NARROW) columns from i0 of M^-1, over its rows k0 .. k1 - 1:
    the caller's local sums stay in registers and each load of M^-1 serves CBLOCK multiply-adds
    (a register-blocked product; one sweep per column of the result streamed M^-1 from the L2
    cache once per column and kept its sums in memory, 2.5x slower on the 100-link chain)."""
    cdef Py_ssize_t k, i, j
    cdef double a[CBLOCK]
    cdef const double* m
    for k in range(k0, k1):
        for j in range(CBLOCK):
            a[j] = X[k * nv + c + j]
        m = Minv + k * nv + i0
        for i in range(width):
            for j in range(CBLOCK):
                acc[j * width + i] -= a[j] * m[i]


cdef inline void minus_tile(Py_ssize_t nv, const double* Minv, const double* X, Py_ssize_t c0,
                            const Py_ssize_t* rows, Py_ssize_t n, Py_ssize_t i0, Py_ssize_t width,
                            double* T) noexcept nogil:
    """The entries (c0 + j, i0 + i), j < CBLOCK, i < width, of the transpose of -M^-1 X over the n
    stretches of rows of M^-1."""
    cdef double acc[CBLOCK * TILE]
    cdef Py_ssize_t i, j, r
    for i in range(CBLOCK * width):
        acc[i] = 0.0
    for r in range(n):
        minus_tile_sums(nv, Minv, X, c0, rows[2 * r], rows[2 * r + 1], i0, width, acc)
    for j in range(CBLOCK):
        for i in range(width):
            T[(c0 + j) * nv + i0 + i] = acc[j * width + i]


cdef Py_ssize_t row_stretches(Py_ssize_t nv, Py_ssize_t c0, Py_ssize_t nc, const Py_ssize_t* lam,
                              const Py_ssize_t* run, const Py_ssize_t* first, const Py_ssize_t* end,
                              Py_ssize_t* mark, Py_ssize_t* rows) noexcept nogil:
    """The stretches (rows[2 r], rows[2 r + 1]) of the rows k where a column c0 .. c0 + nc - 1 of
    X can be non-zero (c's subtree, the stretches of its ancestors); returns their number."""
    cdef Py_ssize_t c, j, s, k, n = 0
    memset(mark, 0, nv * sizeof(Py_ssize_t))
    for c in range(c0, c0 + nc):
        for k in range(first[c], end[c]):
            mark[k] = 1
        j = lam[first[c]]
        while j >= 0:
            s = run[j]
            for k in range(s, j + 1):
                mark[k] = 1
            j = lam[s]
    k = 0
    while k < nv:
        if mark[k]:
            rows[2 * n] = k
            while k < nv and mark[k]:
                k += 1
            rows[2 * n + 1] = k
            n += 1
        else:
            k += 1
    return n


cdef void minus_block(Py_ssize_t nv, const double* Minv, const double* X, Py_ssize_t c0,
                      const Py_ssize_t* rows, Py_ssize_t n, double* T) noexcept nogil:
    """Rows c0 .. c0 + CBLOCK - 1 of the transpose of -M^-1 X (nv >= NARROW) over the n stretches
    of rows of M^-1, by tiles of TILE columns, then NARROW, the last one overlapping the one
    before (an entry computed twice gets the same operations in the same order)."""
    cdef Py_ssize_t i0 = 0
    while i0 + TILE <= nv:
        minus_tile(nv, Minv, X, c0, rows, n, i0, TILE, T)
        i0 += TILE
    while i0 + NARROW <= nv:
        minus_tile(nv, Minv, X, c0, rows, n, i0, NARROW, T)
        i0 += NARROW
    if i0 < nv:
        minus_tile(nv, Minv, X, c0, rows, n, nv - NARROW, NARROW, T)


cdef void minus_products(Py_ssize_t nv, const double* Minv, const double* Xq, const double* Xv,
                         double* Tq, double* Tv, const Py_ssize_t* lam, const Py_ssize_t* run,
                         const Py_ssize_t* first, const Py_ssize_t* end, Py_ssize_t* mark,
                         Py_ssize_t* rows) noexcept nogil:
    """The transposes of -M^-1 Xq and -M^-1 Xv (F1) into Tq, Tv, for a symmetric M^-1 and X whose
    column c is zero outside the rows of dof_ranges (c's subtree and its ancestors' stretches):
    row c of the transpose, -sum_k X_kc M^-1_k, sums rows of M^-1, CBLOCK rows of the transpose
    at a time over the union of their stretches (the last block overlapping the one before: a
    zero X_kc adds nothing), ``mark`` nv and ``rows`` 2 nv scratch."""
    cdef Py_ssize_t c0 = 0, c, r, n
    if nv < NARROW:  # a few DOFs: whole rows of M^-1 at a time
        memset(Tq, 0, nv * nv * sizeof(double))
        memset(Tv, 0, nv * nv * sizeof(double))
        for c in range(nv):
            n = row_stretches(nv, c, 1, lam, run, first, end, mark, rows)
            for r in range(n):
                minus_row_sums(nv, Minv, Xq, c, rows[2 * r], rows[2 * r + 1], Tq + c * nv)
                minus_row_sums(nv, Minv, Xv, c, rows[2 * r], rows[2 * r + 1], Tv + c * nv)
        return
    while c0 < nv:
        c0 = min(c0, nv - CBLOCK)
        n = row_stretches(nv, c0, CBLOCK, lam, run, first, end, mark, rows)
        minus_block(nv, Minv, Xq, c0, rows, n, Tq)
        minus_block(nv, Minv, Xv, c0, rows, n, Tv)
        c0 += CBLOCK


cdef void transposed(Py_ssize_t nv, const double* T, double* out) noexcept nogil:
    """out = T^T for (nv, nv) matrices, in tiles of 8 x 8."""
    cdef Py_ssize_t r0, c0, r, c
    for r0 in range(0, nv, 8):
        for c0 in range(0, nv, 8):
            for r in range(r0, min(r0 + 8, nv)):
                for c in range(c0, min(c0 + 8, nv)):
                    out[c * nv + r] = T[r * nv + c]


cdef inline void solve_by_inverse(Py_ssize_t nv, const double* Minv, const double* tau,
                                  const double* b, double* qdd) noexcept nogil:
    """qdd = M^-1 (tau - b) (F2)."""
    cdef Py_ssize_t i, j
    cdef double x
    for i in range(nv):
        x = 0.0
        for j in range(nv):
            x += Minv[i * nv + j] * (tau[j] - b[j])
        qdd[i] = x


cdef long fd_derivatives(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                         const double* q, Py_ssize_t nq, const double* v, const double* tau,
                         const double* fext, double* qdd, double* ddq, double* ddv, double* Minv,
                         Scratch* s, int way) noexcept nogil:
    """qdd = FD(q, v, tau), dqdd/dq (tangent space), dqdd/dv and M^-1 of one checked state (fext
    NULL for none), by (F1) one of the two ways of the module: ``way`` 0 as the inverse GIM
    chooses, 1 the GIM's LTDL first whatever its work count, 2 the recursion (the tests' hook).
    0, k + 1 for a singular articulated inertia of link k, OVERFLOW, OUT_OF_MEMORY, or -2 for a
    table whose DOFs are not numbered depth first."""
    cdef double* bias = s.x
    cdef double* zero = s.x + nv
    cdef bint ltdl, at_zero
    cdef long status
    subtree_dofs(ki, L, s.sub)
    if not depth_first(ki, L, nv, s.sub):
        return -2
    dof_ranges(ki, L, s.sub, s.lam, s.run, s.first, s.end)
    ltdl = at_zero = (ltdl_inverse_chosen(ki, L, nv, s.lam3) or way == 1) and way != 2
    if at_zero:  # M (into Minv), dtau/dv and the bias
        memset(zero, 0, nv * sizeof(double))
        world_frames(ki, kf, L, nv, work, q, nq, s.R, s.p, s.Pw)
        kinematics_pass(ki, kf, L, v, zero, fext, s.R, s.p, s.Pw, s.lk, s.dr)
        composite_pass(ki, kf, L, nv, zero, bias, NULL, s.dv, Minv, NULL, s.Tv, s.lk, s.dr, s.Cols, s.sub, False)
        lower_triangles(nv, NULL, s.dv, Minv, NULL, s.Tv)
        ltdl = ltdl_inverse(nv, Minv, s.lam3, s.x + 2 * nv)
        if ltdl:
            solve_by_inverse(nv, Minv, tau, bias, qdd)  # (F2)
    if not ltdl:  # the recursion: forward dynamics with its factors, M^-1 from them
        status = forward_dynamics_passes(ki, kf, L, nv, work, q, nq, v, tau, fext, qdd, True)
        if status:
            return status
        if minv_from_factors(ki, kf, work, L, nv, Minv):
            return OUT_OF_MEMORY
    if finite_entries(qdd, nv):
        return OVERFLOW
    if at_zero:  # the terms of qdd (A1)
        acceleration_pass(ki, L, nv, qdd, s.dq, s.Tq, s.lk, s.dr, s.Cols, s.sub)
        lower_triangles(nv, s.dq, NULL, NULL, s.Tq, NULL)
    else:  # the passes at qdd; M into ddq, which the product overwrites
        world_frames(ki, kf, L, nv, work, q, nq, s.R, s.p, s.Pw)
        kinematics_pass(ki, kf, L, v, qdd, fext, s.R, s.p, s.Pw, s.lk, s.dr)
        composite_pass(ki, kf, L, nv, qdd, bias, s.dq, s.dv, ddq, s.Tq, s.Tv, s.lk, s.dr, s.Cols, s.sub, True)
        lower_triangles(nv, s.dq, s.dv, ddq, s.Tq, s.Tv)
    minus_products(nv, Minv, s.dq, s.dv, s.Tq, s.Tv, s.lam, s.run, s.first, s.end, s.mark, s.rows)  # (F1)
    transposed(nv, s.Tq, ddq)
    transposed(nv, s.Tv, ddv)
    if finite_entries(ddq, nv * nv) or finite_entries(ddv, nv * nv) or finite_entries(Minv, nv * nv):
        return OVERFLOW
    return 0
