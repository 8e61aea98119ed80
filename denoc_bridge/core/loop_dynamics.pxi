# The constrained dynamics of a tree with loops (004 eqs. 13-14): Lagrange multipliers on the
# independent rows of C, M^-1 C^T by the O(n) factorised solve with the articulated factors of
# the forward dynamics (000 Table 3), C M^-1 C^T by Cholesky; and the projection of (q, v) onto
# the loops in the kinetic-energy metric.  denoc_bridge/constraints/loops.py is the readable
# version (dense C, NumPy/SciPy).  With nk constant rows stacked ahead (a MimicModel with loops,
# stacked_cuts_of: J = [K; C(q)], denoc_bridge/constraints/mimic_loops.py) the same passes run on
# J: its nk + m rows are the "C" below.


cdef inline Py_ssize_t all_rows(const Loop* lp) noexcept nogil:
    """The rows of the stack: the nk constant rows and the m rows of the cut joints."""
    return lp.ds.nk + lp.cu.m


cdef Py_ssize_t independent_rows(const double* C, Py_ssize_t m, Py_ssize_t nv, Py_ssize_t hi,
                                 double rtol, double* Q, cnp.int64_t* rows) noexcept nogil:
    """The rank r of C (m rows of nv, zero after column hi) and, in rows[:r] (increasing), a
    maximal set of independent rows: modified Gram-Schmidt with pivoting on the rows (as QR with
    column pivoting of C^T), rows below rtol times the largest row's norm dropped; Q scratch."""
    cdef Py_ssize_t i, j, p, rank = 0, r = 0, it
    cdef double scale = 0.0, s, best, nrm
    for i in range(m):
        rows[i] = 0  # 0: free, 1: chosen
        s = 0.0
        for j in range(hi):
            Q[i * nv + j] = C[i * nv + j]
            s += C[i * nv + j] * C[i * nv + j]
        scale = fmax(scale, sqrt(s))
    for it in range(m):
        p, best = -1, rtol * scale
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(hi):
                    s += Q[i * nv + j] * Q[i * nv + j]
                nrm = sqrt(s)
                if nrm > best:
                    p, best = i, nrm
        if p < 0:
            break
        rows[p] = 1
        rank += 1
        for j in range(hi):
            Q[p * nv + j] /= best
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(hi):
                    s += Q[i * nv + j] * Q[p * nv + j]
                for j in range(hi):
                    Q[i * nv + j] -= s * Q[p * nv + j]
    for i in range(m):
        if rows[i] == 1:
            rows[r] = i
            r += 1
    return rank


cdef inline double dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """a[:n] . b[:n]"""
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        s += a[i] * b[i]
    return s


cdef Py_ssize_t select_rows(Loop* lp, double rtol) noexcept nogil:
    """The independent rows of C copied into Cr (whole rows); returns their number."""
    cdef Py_ssize_t r, j, c, nv = lp.nv
    cdef Dense* ds = &lp.ds
    r = independent_rows(ds.C, all_rows(lp), nv, lp.cu.hi, rtol, ds.Q, ds.rows)
    for j in range(r):
        for c in range(nv):
            ds.Cr[j * nv + c] = ds.C[ds.rows[j] * nv + c]
    return r


cdef bint lagrange_solve(Loop* lp, Py_ssize_t r, double* out) noexcept nogil:
    """out = M^-1 Cr^T lambda with (Cr M^-1 Cr^T) lambda = rhs (004 eq. 14) over the r
    independent rows, with the factors that the last forward_dynamics_passes(..., factors=True)
    left in ``work``: Y[j] = M^-1 Cr[j]^T by one O(n) solve per row (up to the reach), K by
    their Gram matrix, lambda by Cholesky, then sum_j lambda_j Y[j] (whole rows: the reach is the
    whole tree) or one more solve of Cr^T lambda.  False when K is not positive definite."""
    cdef Dense* ds = &lp.ds
    cdef Py_ssize_t nv = lp.nv, n = lp.cu.n, hi = lp.cu.hi, m = all_rows(lp), i, j
    for j in range(r):
        factorised_solve(lp.ki, lp.kf, lp.L, nv, lp.work, ds.Cr + j * nv, ds.Y + j * nv, n)
    for i in range(r):  # the lower triangle of K = Cr Y^T
        for j in range(i + 1):
            ds.K[i * m + j] = dot(ds.Cr + i * nv, ds.Y + j * nv, hi)
    if not cholesky_solve(ds.K, r, m, ds.rhs, ds.lam):
        return False
    for i in range(nv):
        out[i] = 0.0
    if r == 0:
        return True
    if n == lp.L:
        for j in range(r):
            for i in range(nv):
                out[i] += ds.lam[j] * ds.Y[j * nv + i]
        return True
    for i in range(nv):
        ds.xs[i] = 0.0
    for j in range(r):
        for i in range(hi):
            ds.xs[i] += ds.lam[j] * ds.Cr[j * nv + i]
    factorised_solve(lp.ki, lp.kf, lp.L, nv, lp.work, ds.xs, out, lp.L)
    return True


cdef void constraint_rows(Loop* lp, const double* q, const double* v, bint with_bias) noexcept nogil:
    """phi, C and (with_bias) Cdot qdot of every cut joint at (q, v) into the scratch: the
    world kinematics (world_frames, world_velocities up to the reach), then loop_rows; the nk
    constant rows first (K_j = e_s - mult e_m of a mimic model: phi_j = 0, the expanded
    configuration satisfies them, and Kdot = 0)."""
    cdef Dense* ds = &lp.ds
    cdef Py_ssize_t nk = ds.nk, nv = lp.nv, i
    world_frames(lp.ki, lp.kf, lp.L, nv, lp.work, q, lp.nq, lp.fr.R, lp.fr.p, lp.fr.Pw)
    if with_bias:
        world_velocities(lp.ki, lp.kf, lp.L, nv, lp.work, v, lp.cu.n, &lp.fr)
    for i in range(nk * nv):
        ds.C[i] = ds.Kc[i]
    for i in range(nk):
        ds.phi[i] = 0.0
        ds.gamma[i] = 0.0
    loop_rows(lp.ki, nv, &lp.cu, &lp.fr, q, with_bias, ds.phi + nk, ds.C + nk * nv, ds.gamma + nk)


cdef long loop_accelerations(Loop* lp, const double* q, const double* v, const double* tau,
                             const double* fext, double alpha, double beta, double rtol,
                             double* a, Py_ssize_t* rank) noexcept nogil:
    """Lagrange multipliers on the cut tree (004 eqs. 13-14): a = a0 + M^-1 C^T lambda with
    (C M^-1 C^T) lambda = -Cdot qdot - 2 alpha C qdot - beta^2 phi - C a0 (Baumgarte) over the
    independent rows (their number into rank, their indices into rows, lambda into lam); a0 by
    the O(n) forward dynamics, whose articulated factors give M^-1 C^T.  Returns 0, k + 1 for a
    singular articulated inertia, -1 for a result that is not finite, -3 for a singular
    C M^-1 C^T."""
    cdef Dense* ds = &lp.ds
    cdef Py_ssize_t nv = lp.nv, hi = lp.cu.hi, r, j, i
    cdef long status
    rank[0] = 0
    constraint_rows(lp, q, v, True)  # phi, C = D* N, Cdot qdot   004 (12-15)
    status = forward_dynamics_passes(lp.ki, lp.kf, lp.L, nv, lp.work, q, lp.nq, v, tau, fext, a, True)
    if status:  # a0: the open tree, its factors kept
        return status
    r = select_rows(lp, rtol)
    rank[0] = r
    for j in range(r):
        i = ds.rows[j]
        ds.rhs[j] = (-ds.gamma[i] - 2.0 * alpha * dot(ds.C + i * nv, v, hi) - beta * beta * ds.phi[i]
                     - dot(ds.C + i * nv, a, hi))
    if not lagrange_solve(lp, r, ds.ys):  # K lambda = rhs          004 (14)
        return -3
    for i in range(nv):
        a[i] += ds.ys[i]  # qddot = a0 + M^-1 C^T lambda
        if not isfinite(a[i]):
            return -1
    return 0


cdef inline long rest_factors(Loop* lp, const double* q) noexcept nogil:
    """The articulated factors at q (a forward dynamics at rest: zero v and tau, no wrenches,
    its accelerations into the scratch ys): 0 or k + 1 for a singular articulated inertia."""
    return forward_dynamics_passes(lp.ki, lp.kf, lp.L, lp.nv, lp.work, q, lp.nq, lp.ds.zero,
                                   lp.ds.zero, NULL, lp.ds.ys, True)


cdef long project_loops(Loop* lp, double* q, double* v, double rtol, double tol, long max_iter,
                        double* qn, double* err, double* err0) noexcept nogil:
    """Close the loops and remove the velocity that violates them, both in the kinetic-energy
    metric: Gauss-Newton on phi(q) = 0 with the steps dq = -M^-1 C^T (C M^-1 C^T)^-1 phi (the
    smallest correction in that metric; q (+) dq on the joints' manifolds, qn scratch), then
    v -= M^-1 C^T (C M^-1 C^T)^-1 C v, over the independent rows.  err and err0: max |phi| at
    the end and at the start.  Returns 0, k + 1 for a singular articulated inertia, -3 for a
    singular C M^-1 C^T, -4 when the positions do not converge in max_iter steps."""
    return project_within(lp, q, v, rtol, tol, max_iter, tol, qn, err, err0)


cdef long project_within(Loop* lp, double* q, double* v, double rtol, double tol, long max_iter,
                         double accept, double* qn, double* err, double* err0) noexcept nogil:
    """project_loops that takes positions within ``accept`` (>= tol) after max_iter steps as
    closed (a MimicModel with loops: 1e3 tol, as constraints/mimic_loops.py kinetic_projection;
    with stacked rows the steps keep K dq = 0: the mimic relations hold), -4 beyond."""
    cdef Dense* ds = &lp.ds
    cdef Py_ssize_t nv = lp.nv, r = 0, i, j
    cdef long it, status
    cdef double e = 0.0
    for i in range(nv):
        ds.zero[i] = 0.0  # the state at rest of the factorisations
    err0[0] = -1.0
    for it in range(max_iter + 1):
        constraint_rows(lp, q, ds.zero, False)
        e = largest(ds.phi + ds.nk, lp.cu.m)  # the loops' error (the constant rows hold)
        err[0] = e
        if err0[0] < 0.0:
            err0[0] = e
        r = select_rows(lp, rtol)
        if e <= tol:
            break
        if it == max_iter:
            if e > accept:
                return -4
            break
        if r > 0:
            status = rest_factors(lp, q)
            if status:
                return status
        for j in range(r):
            ds.rhs[j] = ds.phi[ds.rows[j]]
        if not lagrange_solve(lp, r, ds.ys):
            return -3
        for i in range(nv):
            ds.ys[i] = -ds.ys[i]  # dq = -M^-1 C^T (C M^-1 C^T)^-1 phi
        model_integrate(lp.ki, lp.L, q, ds.ys, qn)
        for i in range(lp.nq):
            q[i] = qn[i]
    if r > 0:
        status = rest_factors(lp, q)
        if status:
            return status
    for j in range(r):
        ds.rhs[j] = dot(ds.Cr + j * nv, v, lp.cu.hi)
    if not lagrange_solve(lp, r, ds.ys):
        return -3
    for i in range(nv):
        v[i] -= ds.ys[i]  # v -= M^-1 C^T (C M^-1 C^T)^-1 C v
    return 0
