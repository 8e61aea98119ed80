# cython: language_level=3
"""The ADMM fallback of the frictional contact solver, compiled: denoc_bridge/constraints/
contact_admm.py's ``admm_reference`` (its module docstring states the problem and the
iteration), line for line, on raw pointers, without the GIL and without Python objects, so that
any compiled module can cimport it (``contact`` includes its Python entry, contact_admm_entry.pxi).

    from denoc_bridge.core.contact_admm cimport admm_scratch_size, admm_solve

``admm_solve(G, r, g, mu, lam, tol, max_iter, scratch, met, iterations)`` solves the problem of
the r = 3m rows (m contacts: t1, t2, n each) from the warm start in ``lam`` and leaves there the
impulses in the cones; ``scratch`` holds ``admm_scratch_size(r) = 3 r^2 + 17 r + 3`` doubles
(dsyevd's input and eigenvectors r^2, its work 2 r^2 + 6 r + 1 (then the rows of Q and of G^T),
its 3 + 5 r integers, the eigenvalues r and seven vectors 7 r), overlapping none of the
arguments.  Nothing is checked here but r <= ADMM_MAX_ROWS: the caller checks G (r x r, C order),
g (r), mu (m >= 0), lam (r, apart from G, g and mu), all finite, and r = 3m.  Reentrant: no
state but the arguments' (threads may run it at once, each on its own scratch).

The same steps as the NumPy version in the same order, so that the same numbers come out to
round-off: G = Q diag(w) Q^T once (LAPACK's dsyevd through SciPy's Cython interface, numpy.linalg.
eigh's routine, on 0.5 (G + G^T)), eta and rho from the largest eigenvalue, every step's
projection, right-hand side, solve and rho balancing, the contact conditions checked every
ADMM_CHECK_EVERY iterations, the best answer kept, ADMM_STALL iterations without halving it a
stall.  The products differ only in their order of summation: Q^T b, Q c and G y are taken as
sums of scaled rows (rows of Q, of Q^T and of G^T, contiguous, four at a time), which vectorise
without reassociation.
"""

from libc.math cimport HUGE_VAL, fabs, hypot, sqrt
from libc.string cimport memcpy
from scipy.linalg.cython_lapack cimport dsyevd

cdef extern from *:
    """
    /* the constants of denoc_bridge/constraints/contact_admm.py (tests compare them) */
    static const double DB_ADMM_TAU = 0.5;    /* the step on rho (Pinocchio's default) */
    static const double DB_ADMM_ETA = 1e-6;   /* the proximal weight, relative to max(w) */
    static const double DB_ADMM_RATIO = 10.0; /* rho rebalanced when one residual is RATIO x the other */
    static const long DB_ADMM_CHECK_EVERY = 5;  /* iterations between two checks of the contact conditions */
    static const long DB_ADMM_STALL = 3000;     /* iterations without halving the best tolerance met */
    static const Py_ssize_t DB_ADMM_MAX_ROWS = 32000;  /* dsyevd's work 2 r^2 + 6 r + 1 in a C int */
    """
    const double ADMM_TAU "DB_ADMM_TAU"
    const double ADMM_ETA "DB_ADMM_ETA"
    const double ADMM_RATIO "DB_ADMM_RATIO"
    const long ADMM_CHECK_EVERY "DB_ADMM_CHECK_EVERY"
    const long ADMM_STALL "DB_ADMM_STALL"
    const Py_ssize_t ADMM_MAX_ROWS "DB_ADMM_MAX_ROWS"


cdef inline Py_ssize_t admm_scratch_size(Py_ssize_t r) noexcept nogil:
    """The doubles of admm_solve's scratch for r = 3m rows: 3 r^2 + 17 r + 3."""
    return 3 * r * r + 17 * r + 3


cdef inline double pymax(double a, double b) noexcept nogil:
    """Python's max(a, b): b only if b > a."""
    return b if b > a else a


cdef inline double pymin(double a, double b) noexcept nogil:
    """Python's min(a, b): b only if b < a."""
    return b if b < a else a


cdef inline double abs_max(const double* a, Py_ssize_t n) noexcept nogil:
    """max |a_i| (0 for n = 0)."""
    cdef double s = 0.0, v
    cdef Py_ssize_t i
    for i in range(n):
        v = fabs(a[i])
        if v > s:
            s = v
    return s


cdef inline double abs_max_diff(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """max |a_i - b_i| (0 for n = 0)."""
    cdef double s = 0.0, v
    cdef Py_ssize_t i
    for i in range(n):
        v = fabs(a[i] - b[i])
        if v > s:
            s = v
    return s


cdef inline void cone_project(double a0, double a1, double a2, double mu, double* y) noexcept nogil:
    """y = the Euclidean projection of (t1, t2, n) = (a0, a1, a2) onto the cone |t| <= mu n
    (contact_admm.project_cones for one contact)."""
    cdef double t = hypot(a0, a1), alpha, scale
    if mu * t <= -a2:  # in the polar cone: onto the apex
        y[0] = y[1] = y[2] = 0.0
    elif not (t <= mu * a2):  # outside both: onto the cone's side
        alpha = (mu * t + a2) / (1.0 + mu * mu)  # the new normal component
        scale = mu * alpha / (t if t > 0.0 else 1.0)
        y[0], y[1], y[2] = a0 * scale, a1 * scale, alpha
    else:  # inside: kept
        y[0], y[1], y[2] = a0, a1, a2


cdef inline void rows_times(const double* A, Py_ssize_t n, const double* v, double* out) noexcept nogil:
    """out = A^T v for an n x n A in C order: sum_i v_i A[i, :], the rows scaled and added four at
    a time, entry by entry (vectorises without reassociating a sum; each entry of ``out`` is
    read and written once per four rows: 12.1 -> 9.0 ms on the talos landing, against one)."""
    cdef Py_ssize_t i = 0, j
    cdef const double* a0
    cdef const double* a1
    cdef const double* a2
    cdef const double* a3
    cdef double v0, v1, v2, v3
    for j in range(n):
        out[j] = 0.0
    while i + 4 <= n:
        a0, a1, a2, a3 = A + i * n, A + (i + 1) * n, A + (i + 2) * n, A + (i + 3) * n
        v0, v1, v2, v3 = v[i], v[i + 1], v[i + 2], v[i + 3]
        for j in range(n):
            out[j] = out[j] + v0 * a0[j] + v1 * a1[j] + v2 * a2[j] + v3 * a3[j]
        i += 4
    while i < n:
        a0, v0 = A + i * n, v[i]
        for j in range(n):
            out[j] = out[j] + v0 * a0[j]
        i += 1


cdef inline void transpose_into(const double* A, Py_ssize_t n, double* out) noexcept nogil:
    """out = A^T, both n x n in C order."""
    cdef Py_ssize_t i, j
    for i in range(n):
        for j in range(n):
            out[j * n + i] = A[i * n + j]


cdef inline double admm_met(const double* Gt, Py_ssize_t r, const double* g, const double* mu,
                            const double* y, double split, double v_scale, double* sigma) noexcept nogil:
    """max(contact_admm.achieved(G, g, mu, y, split)) of impulses y in the cones, with the rows of
    Gt = G^T: (the larger of the closing normal velocity and the split, over |g|; the
    complementarity over |g| |y|); sigma = G y + g is left in ``sigma``."""
    cdef Py_ssize_t i, c, m = r // 3
    cdef double opening = 0.0, comp = 0.0, shifted, v
    rows_times(Gt, r, y, sigma)  # G y
    for i in range(r):
        sigma[i] = sigma[i] + g[i]
    for c in range(m):
        i = 3 * c
        if -sigma[i + 2] > opening:
            opening = -sigma[i + 2]
        shifted = sigma[i + 2] + mu[c] * hypot(sigma[i], sigma[i + 1])
        v = fabs(y[i] * sigma[i] + y[i + 1] * sigma[i + 1] + y[i + 2] * shifted)
        if v > comp:
            comp = v
    return pymax(pymax(opening, split) / v_scale, comp / (v_scale * pymax(abs_max(y, r), 1e-300)))


cdef inline int admm_solve(const double* G, Py_ssize_t r, const double* g, const double* mu, double* lam,
                           double tol, long max_iter, double* scratch, double* met,
                           long* iterations) noexcept nogil:
    """ADMM on the contact problem of the r = 3m rows (G r x r in C order, g r, mu m), from the
    warm start ``lam`` (r; projected onto the cones first), to ``tol`` in at most ``max_iter``
    iterations: ``lam`` then holds the best impulses met (in the cones), ``met`` the tolerance
    they meet (HUGE_VAL if no check was reached), ``iterations`` the iterations taken.
    ``scratch``: admm_scratch_size(r) doubles.  Returns 0; -1 for r > ADMM_MAX_ROWS (LAPACK's
    sizes are C ints) or dsyevd's positive ``info`` (the eigendecomposition did not converge:
    numpy.linalg.eigh raises LinAlgError there), with ``lam`` unchanged."""
    cdef Py_ssize_t m = r // 3, i, j, c
    cdef int n = <int>r, lwork = <int>(2 * r * r + 6 * r + 1), liwork = <int>(5 * r + 3), info = 0
    cdef double* Qt = scratch  # Q^T: row j the eigenvector j (dsyevd's column-major Q)
    cdef double* work = Qt + r * r  # dsyevd's work, then the rows of Q and of G^T
    cdef double* Qr = work
    cdef double* Gt = Qr + r * r
    cdef int* iwork = <int*>(work + 2 * r * r + 6 * r + 1)
    cdef double* w = <double*>iwork + (5 * r + 4) // 2
    cdef double* x = w + r
    cdef double* xo = x + r
    cdef double* y = xo + r
    cdef double* z = y + r
    cdef double* b = z + r
    cdef double* q = b + r  # Q^T b / (w + step + eta)
    cdef double* sigma = q + r
    cdef double big, eta, rho, v_scale, step, best, value, primal, dual, p_rel, d_rel
    cdef long k = 0, best_k = 0
    iterations[0], met[0] = 0, HUGE_VAL
    if r == 0:
        met[0] = 0.0  # no contact: nothing to solve
        return 0
    if r > ADMM_MAX_ROWS:
        return -1
    for i in range(r):  # 0.5 (G + G^T): symmetric, so its layout is LAPACK's too
        for j in range(r):
            Qt[i * r + j] = 0.5 * (G[i * r + j] + G[j * r + i])
    dsyevd(b"V", b"L", &n, Qt, &n, w, work, &lwork, iwork, &liwork, &info)
    if info != 0:
        return info
    transpose_into(Qt, r, Qr)
    transpose_into(G, r, Gt)
    for j in range(r):
        w[j] = pymax(w[j], 0.0)
    big = pymax(w[r - 1], 1e-300)
    eta = ADMM_ETA * big
    rho = sqrt(big * eta)  # between the largest eigenvalue and the proximal weight
    v_scale = pymax(abs_max(g, r), 1e-300)
    for c in range(m):
        cone_project(lam[3 * c], lam[3 * c + 1], lam[3 * c + 2], mu[c], y + 3 * c)
    memcpy(x, y, r * sizeof(double))
    memcpy(lam, y, r * sizeof(double))  # the best answer so far
    rows_times(Gt, r, y, z)  # z = G y + g + s(G y + g)
    for i in range(r):
        z[i] = z[i] + g[i]
    for c in range(m):
        z[3 * c + 2] += mu[c] * hypot(z[3 * c], z[3 * c + 1])
    best = HUGE_VAL
    for k in range(1, max_iter + 1):
        step = ADMM_TAU * rho
        for c in range(m):  # y = P_K(x - z / step)
            i = 3 * c
            cone_project(x[i] - z[i] / step, x[i + 1] - z[i + 1] / step, x[i + 2] - z[i + 2] / step, mu[c],
                         y + i)
        for i in range(r):  # b = step y + eta x + z - g - s(z)
            b[i] = step * y[i] + eta * x[i] + z[i] - g[i]
        for c in range(m):
            b[3 * c + 2] -= mu[c] * hypot(z[3 * c], z[3 * c + 1])
        rows_times(Qr, r, b, q)  # Q^T b
        for j in range(r):
            q[j] = q[j] / (w[j] + step + eta)
        xo, x = x, xo  # x_old, x = x, Q q
        rows_times(Qt, r, q, x)
        for i in range(r):
            z[i] = z[i] - step * (x[i] - y[i])
        primal = abs_max_diff(x, y, r)
        dual = pymax(eta, step) * abs_max_diff(x, xo, r)
        if k % ADMM_CHECK_EVERY == 0:
            value = admm_met(Gt, r, g, mu, y, primal * big, v_scale, sigma)
            if value < best:
                if value <= 0.5 * best:
                    best_k = k
                best = value
                memcpy(lam, y, r * sizeof(double))
            if best <= tol:
                iterations[0], met[0] = k, best
                return 0
            if k - best_k > ADMM_STALL:
                break
        p_rel = primal / pymax(pymax(abs_max(x, r), abs_max(y, r)), 1e-300)
        d_rel = dual / pymax(abs_max(z, r), v_scale)
        if p_rel > ADMM_RATIO * d_rel or d_rel > ADMM_RATIO * p_rel:
            rho = pymin(pymax(rho * sqrt(p_rel / pymax(d_rel, 1e-300)), 1e-6 * big), 1e6 * big)
    iterations[0], met[0] = k, best
    return 0
