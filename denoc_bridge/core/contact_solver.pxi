# A frictional contact solver on the Delassus problem: projected Gauss-Seidel (PGS) over the
# contacts, warm-started, on Coulomb cones (denoc_bridge/constraints/contact.py,
# ``solve_contact``, states the problem: Pinocchio's ``solve_ncp`` on CoulombFrictionCone sets).
#
# One sweep updates each contact in turn, the normal impulse by its exact one-row minimiser
# max(0, lambda_n - sigma_n / G_nn), then the tangential impulse by a step along -sigma_t
# (scaled by the largest eigenvalue of the 2 x 2 tangential block, so that a fixed point slides
# against its impulse) projected onto the disk of radius mu lambda_n; sigma = G lambda + g is
# kept up to date column by column.  The sweeps stop when no update of a sweep changes the
# velocity of its own row by more than tol times the largest free velocity |g| (velocity units:
# the impulses of an indeterminate problem, four corners of a box, need not settle to the last
# digit for the velocities to), or after max_iter sweeps.


cdef inline void add_column(const double* G, Py_ssize_t r, double* sigma, Py_ssize_t c,
                            double d) noexcept nogil:
    """sigma += G[:, c] d (G symmetric: its row c)."""
    cdef Py_ssize_t i
    for i in range(r):
        sigma[i] += G[i * r + c] * d


cdef inline void set_impulse(const double* G, Py_ssize_t r, double* lam, double* sigma,
                             Py_ssize_t c, double new) noexcept nogil:
    """lam[c] = new, sigma following."""
    cdef double d = new - lam[c]
    if d != 0.0:
        lam[c] = new
        add_column(G, r, sigma, c, d)


cdef long pgs(const double* G, const double* g, const double* mu, Py_ssize_t m, double* lam,
              double* sigma, double tol, long max_iter, double* last) noexcept nogil:
    """Solve the contact problem of m contacts (G: 3m x 3m, rows 3m apart; g: 3m; mu: m) in
    place of ``lam`` (its entry values: the warm start), with ``sigma = G lam + g`` on return.
    Returns the sweeps (max_iter + 1 if not converged), the last sweep's largest velocity change
    into ``last``."""
    cdef Py_ssize_t r = 3 * m, i, j, n, t1, t2
    cdef long sweep
    cdef double s, ln, a, b, norm, radius, f, d, d1, d2, a11, a22, a12, gamma
    cdef double scale = 1e-300, change = 0.0  # the problem's velocities
    for i in range(r):
        s = g[i]
        for j in range(r):
            s += G[i * r + j] * lam[j]
        sigma[i] = s
    for i in range(m):  # a warm start outside the cones is projected first
        n, t1, t2 = 3 * i + 2, 3 * i, 3 * i + 1
        ln = fmax(lam[n], 0.0)
        a, b = lam[t1], lam[t2]
        norm = sqrt(a * a + b * b)
        if norm > mu[i] * ln:
            f = mu[i] * ln / norm
            a, b = a * f, b * f
        set_impulse(G, r, lam, sigma, n, ln)
        set_impulse(G, r, lam, sigma, t1, a)
        set_impulse(G, r, lam, sigma, t2, b)
    for i in range(r):
        scale = fmax(scale, fabs(g[i]))
    for sweep in range(1, max_iter + 1):
        change = 0.0  # the largest velocity change an update of the sweep made on its own row
        for i in range(m):
            n, t1, t2 = 3 * i + 2, 3 * i, 3 * i + 1
            if G[n * r + n] <= 0.0:
                continue
            ln = fmax(0.0, lam[n] - sigma[n] / G[n * r + n])  # Signorini, exactly on this row
            d = ln - lam[n]
            if d != 0.0:
                lam[n] = ln
                add_column(G, r, sigma, n, d)
                change = fmax(change, fabs(d) * G[n * r + n])
            # the tangential step: 1 / (largest eigenvalue of the 2 x 2 block)
            a11, a22, a12 = G[t1 * r + t1], G[t2 * r + t2], G[t1 * r + t2]
            gamma = 0.5 * (a11 + a22) + sqrt(0.25 * ((a11 - a22) * (a11 - a22)) + a12 * a12)
            if gamma > 0.0:
                a, b = lam[t1] - sigma[t1] / gamma, lam[t2] - sigma[t2] / gamma
                norm, radius = sqrt(a * a + b * b), mu[i] * ln
                if norm > radius:
                    f = radius / norm
                    a, b = a * f, b * f
                d1, d2 = a - lam[t1], b - lam[t2]
                set_impulse(G, r, lam, sigma, t1, a)
                set_impulse(G, r, lam, sigma, t2, b)
                change = fmax(change, fmax(fabs(d1) * a11, fabs(d2) * a22))
        if change <= tol * scale:
            last[0] = change
            return sweep
    last[0] = change
    return max_iter + 1
