# Joint position limits in a run: a perfectly plastic stop at the limit, in the kinetic-energy
# metric; denoc_bridge/kernels/limits.py (``enforce_limits``, a tree), whose docstring derives it.
#
# After a step, a limited joint past a limit is put back on it, and the joints that sit on a
# limit and move outwards are stopped by the smallest impulse in the kinetic-energy metric: with
# E the unit columns of those joints,  v+ = v - M^-1 E (E^T M^-1 E)^-1 E^T v  (E^T v+ = 0).  The
# kinetic energy drops by 1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v); the energy the limits take is
# that drop less what the clamp adds to the potential energy.  The columns M^-1 e_i come from
# the factors of the O(n) forward dynamics at q (000 Table 3, factorised_solve).  A joint that
# the impulse sets moving outwards at another limit joins the set (at most one pass per
# limited joint).  Scratch S (rows 2 n + 4, cols max(nv, n, 1)): rows 0..n-1 the columns
# Y = (M^-1 E)^T, rows n..2n-1 the Gram matrix, then the right-hand side, mu, a unit vector
# (also the spring scratch d) and zeros.


cdef inline bint outside(const double* q, const Limits* lm) noexcept nogil:
    """A limited joint is past a limit."""
    cdef Py_ssize_t j
    cdef double x
    for j in range(lm.n):
        x = q[lm.idx[2 * j]]
        if x < lm.bounds[2 * j] or x > lm.bounds[2 * j + 1]:
            return True
    return False


cdef inline bint outwards(const double* q, const double* v, const Limits* lm,
                          Py_ssize_t j) noexcept nogil:
    """Joint j sits on a limit and moves out of the range."""
    cdef double x = q[lm.idx[2 * j]], y = v[lm.idx[2 * j + 1]]
    return (x <= lm.bounds[2 * j] and y < 0.0) or (x >= lm.bounds[2 * j + 1] and y > 0.0)


cdef Py_ssize_t clamp_positions(double* q, const Limits* lm) noexcept nogil:
    """Put the limited joints past a limit back on it; returns how many moved."""
    cdef Py_ssize_t j, moved = 0
    cdef double x
    for j in range(lm.n):
        x = q[lm.idx[2 * j]]
        if x < lm.bounds[2 * j]:
            q[lm.idx[2 * j]] = lm.bounds[2 * j]
            moved += 1
        elif x > lm.bounds[2 * j + 1]:
            q[lm.idx[2 * j]] = lm.bounds[2 * j + 1]
            moved += 1
    return moved


cdef double potential(const Tree* t, const Forcing* fc, const double* q, double* zero,
                      double* d) noexcept nogil:
    """The potential energy at q (gravity, and the joint springs when ``passive``)."""
    cdef double energies[2]
    cdef Py_ssize_t i
    for i in range(t.nv):
        zero[i] = 0.0
    energies_of_state(t.ki, t.kf, t.L, t.nv, t.work, q, zero, fc.K, fc.q_rest, fc.passive, d,
                      energies)
    return energies[1]


cdef bint impulse(const Tree* t, double* v, Py_ssize_t na, Py_ssize_t done,
                  double* taken) noexcept nogil:
    """One pass of the stop: (E^T M^-1 E) mu = E^T v for the joints active[:na], v -= M^-1 E mu
    (the columns of the first ``done`` joints are the previous pass's).  False if E^T M^-1 E is
    singular; else ``taken`` = 1/2 mu . E^T v, the kinetic energy the stop takes."""
    cdef const Limits* lm = &t.lim
    cdef Py_ssize_t ld = lm.cols, cap = (lm.rows - 4) // 2
    cdef double* Y = lm.S
    cdef double* G = lm.S + cap * ld
    cdef double* rhs = lm.S + 2 * cap * ld
    cdef double* mu = rhs + ld
    cdef double* e = rhs + 2 * ld
    cdef Py_ssize_t r, c, i
    for r in range(done, na):  # Y_r = M^-1 e_r
        for i in range(t.nv):
            e[i] = 0.0
        e[lm.idx[2 * lm.active[r] + 1]] = 1.0
        factorised_solve(t.ki, t.kf, t.L, t.nv, t.work, e, Y + r * ld, t.L)
    for r in range(na):  # E^T M^-1 E (lower triangle) and E^T v
        for c in range(r + 1):
            G[r * ld + c] = Y[c * ld + lm.idx[2 * lm.active[r] + 1]]
        rhs[r] = v[lm.idx[2 * lm.active[r] + 1]]
    if not cholesky_solve(G, na, ld, rhs, mu):
        return False
    taken[0] = 0.0
    for r in range(na):  # 1/2 mu . E^T v
        taken[0] += 0.5 * mu[r] * rhs[r]
    for r in range(na):  # v -= M^-1 E mu
        for i in range(t.nv):
            v[i] -= mu[r] * Y[r * ld + i]
    return True


cdef long stop(const Tree* t, const double* q, double* v, Py_ssize_t* na,
               double* taken) noexcept nogil:
    """The passes of the stop (at most one per limited joint): a joint that the impulse set
    moving outwards at its limit joins.  Returns 0 or -3 (E^T M^-1 E singular); ``na`` the
    joints stopped, ``taken`` the energy."""
    cdef const Limits* lm = &t.lim
    cdef Py_ssize_t p, j, k, done = 0
    cdef double took
    cdef bint grew, seen
    taken[0] = 0.0
    for p in range(lm.n):
        if not impulse(t, v, na[0], done, &took):
            return -3
        taken[0] += took
        done = na[0]
        for k in range(na[0]):
            v[lm.idx[2 * lm.active[k] + 1]] = 0.0  # exactly (round-off)
        grew = False
        for j in range(lm.n):
            if outwards(q, v, lm, j):
                seen = False
                for k in range(na[0]):
                    seen = seen or lm.active[k] == j
                if not seen:
                    lm.active[na[0]] = j
                    na[0] += 1
                    grew = True
        if not grew:
            break
    return 0


cdef long enforce_limits(Tree* t, const Forcing* fc, double* q, double* v,
                         Py_ssize_t* stopped) noexcept nogil:
    """Clamp q to the limits and stop the joints that move outwards at them; adds the energy
    the limits took (the stops' kinetic energy, less the potential energy the clamp added) to
    lim.energy[0].  Returns the status (0; k + 1: the factors of M at q are singular; -3: E^T
    M^-1 E is singular) and the joints moved or stopped in ``stopped``."""
    cdef Limits* lm = &t.lim
    cdef double* zero = lm.S + (lm.rows - 1) * lm.cols
    cdef double* d = lm.S + (lm.rows - 2) * lm.cols
    cdef Py_ssize_t j, moved = 0, na = 0
    cdef double taken = 0.0, took = 0.0, pe
    cdef long status
    stopped[0] = 0
    if outside(q, lm):
        pe = potential(t, fc, q, zero, d)
        moved = clamp_positions(q, lm)
        taken = pe - potential(t, fc, q, zero, d)
    for j in range(lm.n):  # the joints on a limit moving outwards
        if outwards(q, v, lm, j):
            lm.active[na] = j
            na += 1
    stopped[0] = moved
    if na:
        for j in range(t.nv):
            zero[j] = 0.0
        status = forward_dynamics_passes(t.ki, t.kf, t.L, t.nv, t.work, q, t.nq, zero, zero, NULL,
                                         d, True)  # the factors of M at q
        if status == 0:
            status = stop(t, q, v, &na, &took)
            stopped[0] = moved + na
        lm.energy[0] += taken + took
        return status
    lm.energy[0] += taken
    return 0
