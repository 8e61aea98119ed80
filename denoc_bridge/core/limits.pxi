# Joint position limits in a run: a perfectly plastic stop at the limit, in the kinetic-energy
# metric (numba's kernels/limits.py before, deleted with issue 48).
#
# After a step, a limited joint past a limit is put back on it, and the joints that sit on a
# limit and move outwards are stopped by the smallest impulse in the kinetic-energy metric: with
# E the unit columns of those joints,
#
#     v+ = v - M^-1 E (E^T M^-1 E)^-1 E^T v          (E^T v+ = 0)
#
# the impulse M (v+ - v) = E lambda acts at the stopped joints only (a plastic impact on each:
# the kinetic energy drops by 1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v) and never grows).  The energy
# the limits take in a step is that drop minus what putting q back on the limit adds to the
# potential energy (gravity and the joint springs, energies_of_state): a joint that rests on a
# limit under a load overshoots by O(dt^2) each step, and the two cancel, as they do physically
# (a resting contact takes no energy).  The columns M^-1 e_i come from the factors of the O(n)
# forward dynamics at q (000 Table 3, factorised_solve), as the loops' projections do.  A joint
# that the impulse sets moving outwards at another limit joins the set (at most one pass per
# limited joint).
#
# A model with mimic joints (reduced coordinates, mimic.pxi) is stopped in the same metric on the
# tree's velocity v_full = G v_r with its mimic rows K (K v = 0) stacked above the unit rows of
# the stopped joints, as the Lagrange solves of the constraints stack their rows (004 eqs.
# 13-14):
#
#     B = [K; E^T],   (B M^-1 B^T) mu = (0, E^T v),   v+ = v - M^-1 B^T mu
#
# so that K v+ = 0 still holds and E^T v+ = 0; the kinetic energy drops by 1/2 mu . (0, E^T v).
# The limits of a mimic joint act on the joint it mimics (simulation/mimic.py limit_arrays).  A
# tree is the case K with no rows.
#
# Scratch S (rows 2 m + 4, cols max(tree nv, m, 1), m = rows of K + limited joints;
# simulation/common.py limit_scratch_shape): rows 0..m-1 the columns Y = (M^-1 B^T)^T, rows
# m..2m-1 the Gram matrix, then the right-hand side, mu, a unit vector (also the spring scratch
# d) and zeros.


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
    """The potential energy at the tree's configuration q (gravity, and the joint springs when
    ``passive``)."""
    cdef double energies[2]
    cdef Py_ssize_t i
    for i in range(t.nvt):
        zero[i] = 0.0
    energies_of_state(t.ki, t.kf, t.L, t.nvt, t.work, q, zero, fc.K, fc.q_rest, fc.passive, d,
                      energies)
    return energies[1]


cdef inline Py_ssize_t tree_dof(const Limits* lm, Py_ssize_t j) noexcept nogil:
    """The tree's v index of limited joint j (its own on a tree)."""
    return lm.tv[j] if lm.tv != NULL else lm.idx[2 * j + 1]


cdef bint impulse(const Tree* t, double* vt, Py_ssize_t na, Py_ssize_t done,
                  double* taken) noexcept nogil:
    """One pass of the stop on the tree's velocity vt: B = [R; E^T], R the rows kept, E the unit
    columns of the joints active[:na]; (B M^-1 B^T) mu = (0, E^T vt), vt -= M^-1 B^T mu (the
    columns of the first ``done`` rows are the previous pass's).  False if B M^-1 B^T is
    singular; else ``taken`` = 1/2 mu . (0, E^T vt), the kinetic energy the stop takes."""
    cdef const Limits* lm = &t.lim
    cdef Py_ssize_t ld = lm.cols, cap = (lm.rows - 4) // 2, nr = lm.nr, nvt = t.nvt
    cdef Py_ssize_t m = nr + na
    cdef double* Y = lm.S
    cdef double* G = lm.S + cap * ld
    cdef double* rhs = lm.S + 2 * cap * ld
    cdef double* mu = rhs + ld
    cdef double* e = rhs + 2 * ld
    cdef Py_ssize_t r, c, i
    cdef double x
    for r in range(done, m):  # Y_r = M^-1 b_r
        if r < nr:
            for i in range(nvt):
                e[i] = lm.R[r * nvt + i]
        else:
            for i in range(nvt):
                e[i] = 0.0
            e[tree_dof(lm, lm.active[r - nr])] = 1.0
        factorised_solve(t.ki, t.kf, t.L, nvt, t.work, e, Y + r * ld, t.L)
    for r in range(m):  # B M^-1 B^T (lower triangle) and (0, E^T vt)
        for c in range(r + 1):
            if r < nr:
                x = 0.0
                for i in range(nvt):
                    x += lm.R[r * nvt + i] * Y[c * ld + i]
                G[r * ld + c] = x
            else:
                G[r * ld + c] = Y[c * ld + tree_dof(lm, lm.active[r - nr])]
        rhs[r] = 0.0 if r < nr else vt[tree_dof(lm, lm.active[r - nr])]
    if not cholesky_solve(G, m, ld, rhs, mu):
        return False
    taken[0] = 0.0
    for r in range(nr, m):  # 1/2 mu . (0, E^T vt)
        taken[0] += 0.5 * mu[r] * rhs[r]
    for r in range(m):  # vt -= M^-1 B^T mu
        for i in range(nvt):
            vt[i] -= mu[r] * Y[r * ld + i]
    return True


cdef long stop(const Tree* t, const double* q, double* v, double* vt, Py_ssize_t* na,
               double* taken) noexcept nogil:
    """The passes of the stop (at most one per limited joint) on the tree's velocity vt (v itself
    on a tree; a mimic system's v = vt[v_keep] after each pass): a joint that the impulse set
    moving outwards at its limit joins.  Returns 0 or -3 (B M^-1 B^T singular); ``na`` the
    joints stopped, ``taken`` the energy."""
    cdef const Limits* lm = &t.lim
    cdef Py_ssize_t p, i, j, k, done = 0
    cdef double took
    cdef bint grew, seen
    taken[0] = 0.0
    for p in range(lm.n):
        if not impulse(t, vt, na[0], done, &took):
            return -3
        taken[0] += took
        done = lm.nr + na[0]
        if t.mimic:
            for i in range(t.nv):
                v[i] = vt[t.mi.mm.v_keep[i]]
        for k in range(na[0]):
            v[lm.idx[2 * lm.active[k] + 1]] = 0.0  # exactly (round-off)
            vt[tree_dof(lm, lm.active[k])] = 0.0
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


cdef inline void expanded_state(const Tree* t, const double* q, const double* v) noexcept nogil:
    """A mimic system's tree state into mi.qf (and mi.vf unless v is NULL); nothing on a tree."""
    if t.mimic:
        expand_configuration(&t.mi.mm, q, t.mi.qf)
        if v != NULL:
            expand_velocity(&t.mi.mm, t.nvt, v, t.mi.vf)


cdef long enforce_limits(Tree* t, const Forcing* fc, double* q, double* v,
                         Py_ssize_t* stopped) noexcept nogil:
    """Clamp q to the limits and stop the joints that move outwards at them; adds the energy
    the limits took (the stops' kinetic energy, less the potential energy the clamp added) to
    lim.energy[0].  Returns the status (0; k + 1: the factors of M at q are singular; -3: B
    M^-1 B^T is singular) and the joints moved or stopped in ``stopped``.  A mimic system works
    on its tree's state (mi.qf, mi.vf) and writes the reduced one back."""
    cdef Limits* lm = &t.lim
    cdef double* zero = lm.S + (lm.rows - 1) * lm.cols
    cdef double* d = lm.S + (lm.rows - 2) * lm.cols
    cdef double* qt = t.mi.qf if t.mimic else q
    cdef double* vt = t.mi.vf if t.mimic else v
    cdef Py_ssize_t j, moved = 0, na = 0
    cdef double taken = 0.0, took = 0.0, pe
    cdef long status
    stopped[0] = 0
    if outside(q, lm):
        expanded_state(t, q, NULL)
        pe = potential(t, fc, qt, zero, d)
        moved = clamp_positions(q, lm)
        expanded_state(t, q, NULL)
        taken = pe - potential(t, fc, qt, zero, d)
    for j in range(lm.n):  # the joints on a limit moving outwards
        if outwards(q, v, lm, j):
            lm.active[na] = j
            na += 1
    stopped[0] = moved
    if na:
        expanded_state(t, q, v)
        for j in range(t.nvt):
            zero[j] = 0.0
        status = forward_dynamics_passes(t.ki, t.kf, t.L, t.nvt, t.work, qt, t.nqt, zero, zero, NULL,
                                         d, True)  # the factors of M at q
        if status == 0:
            status = stop(t, q, v, vt, &na, &took)
            stopped[0] = moved + na
        lm.energy[0] += taken + took
        return status
    lm.energy[0] += taken
    return 0
