# A MimicModel on the ground (denoc_bridge/simulation/contact.py, its module docstring): the
# contact run steps on the tree's coordinates, the mimic relations q_s = mult q_m + offset as
# constant bilateral rows K_j = e_s - mult e_m (K G = 0) on the same layer as the contacts and
# the tree's loops: stacked ahead of the loops' rows (loops.pxd stacked_cuts_of, J = [K; C(q)]),
# they enter the constrained forward dynamics (004 eqs. 13-14) and are eliminated from the
# Delassus operator and M^-1 J^T by the Schur complement of contact_loops.pxi.  Then
# G^T (M + A) a = G^T (tau - h) and K a = 0: the reduced dynamics of the Python step, whose
# state (q_r, v_r) is the tree's with the mimic entries dropped.  So the run expands the
# caller's reduced state on entry (tree.pxd expand_configuration, expand_velocity: a continuous
# mimic joint's (cos, sin) from its mimicked angle), moves the tree's state back onto the
# relations wherever the Python step reduces it (v_free, v+, q+ after each map), saves the kept
# entries and hands the reduced state back.


cdef void onto_relations(Run* s, double* q, double* v) noexcept nogil:
    """(q, v) on the tree (either NULL: left alone) moved onto the mimic relations from their
    kept entries: q = G q[q_keep] + offset, v = G v[v_keep] (the Python step's reduce, then
    expand)."""
    if q != NULL:
        reduce_configuration(&s.mm, q, s.qr)
        expand_configuration(&s.mm, s.qr, q)
    if v != NULL:
        reduce_velocity(&s.mm, v, s.vr)
        expand_velocity(&s.mm, s.nv, s.vr, v)


cdef void state_in(Run* s) noexcept nogil:
    """The caller's reduced state expanded into the run's tree state (q, v)."""
    expand_configuration(&s.mm, s.qs, s.q)
    expand_velocity(&s.mm, s.nv, s.vs, s.v)


cdef void state_out(Run* s) noexcept nogil:
    """The run's tree state reduced into the caller's: q_r = q[q_keep], v_r = v[v_keep]."""
    reduce_configuration(&s.mm, s.q, s.qs)
    reduce_velocity(&s.mm, s.v, s.vs)


# A MimicModel whose tree has loops: after each step its loops are closed as the Python step
# closes them (constraints/mimic_loops.py project_configuration, then project_velocity; 004
# eqs. 26 and 16), not by the kinetic-energy projection of the other loop models: on the reduced
# coordinates, with the loops' rows C G (constraints/solve.py partition: the independent rows
# by a pivoted QR of (C G)^T, the dependent coordinates by a pivoted QR of their columns, the
# last first), Newton steps C_d dq_d = -phi with the independent coordinates kept, then
# v_d = -C_d^-1 C_i v_i.  The coordinates the contacts do not move stay as they are: the
# geared five-bar's jaw keeps its mirror symmetry to round-off, and with it the static split of
# its fingers' forces (the kinetic-energy projection also keeps the state symmetric, but leaves
# PGS another point of the at-rest problem, which is statically indeterminate).

cdef bint lu_solve(double* A, Py_ssize_t r, Py_ssize_t ld, double* b) noexcept nogil:
    """b = A^-1 b (r x r, row stride ld; A overwritten by its LU factors) by Gaussian elimination
    with partial pivoting; False when a pivot is zero or not finite."""
    cdef Py_ssize_t i, j, k, p
    cdef double big, f, t
    for k in range(r):
        p, big = k, fabs(A[k * ld + k])
        for i in range(k + 1, r):
            if fabs(A[i * ld + k]) > big:
                p, big = i, fabs(A[i * ld + k])
        if not (big > 0.0 and isfinite(big)):
            return False
        if p != k:
            for j in range(r):
                t = A[k * ld + j]
                A[k * ld + j] = A[p * ld + j]
                A[p * ld + j] = t
            t = b[k]
            b[k] = b[p]
            b[p] = t
        for i in range(k + 1, r):
            f = A[i * ld + k] / A[k * ld + k]
            for j in range(k + 1, r):
                A[i * ld + j] -= f * A[k * ld + j]
            b[i] -= f * b[k]
    for k in range(r - 1, -1, -1):
        t = b[k]
        for j in range(k + 1, r):
            t -= A[k * ld + j] * b[j]
        b[k] = t / A[k * ld + k]
    return True


cdef Py_ssize_t partition_coordinates(Run* s) noexcept nogil:
    """At the rows constraint_rows left in s.bl.lp.ds: C G of the loops' rows into nt.CG, its r
    independent rows into nt.Cr (indices nt.rows), the r dependent reduced coordinates into
    nt.dep (increasing; nt.isdep marks them) and C_d into nt.A: r, or -1 when Cr's columns
    give fewer than r (a singular position)."""
    cdef Newton* nt = &s.nt
    cdef Py_ssize_t m = nt.m, n = s.nvs, nv = s.nv, i, j, t, r, k
    cdef const double* C = s.bl.lp.ds.C + s.bl.lp.ds.nk * nv
    for i in range(m * n):
        nt.CG[i] = 0.0
    for i in range(m):  # C G: G[t, col[t]] = scale[t]
        for t in range(nv):
            nt.CG[i * n + s.mm.col[t]] += s.mm.scale[t] * C[i * nv + t]
    r = independent_rows(nt.CG, m, n, n, s.bl.rtol, nt.Q, nt.rows)
    for j in range(r):
        for i in range(n):
            nt.Cr[j * n + i] = nt.CG[nt.rows[j] * n + i]
    for i in range(n):  # Cr's columns as rows, the last first (partition's Cr[:, ::-1])
        nt.isdep[i] = 0
        for j in range(r):
            nt.T[i * m + j] = nt.Cr[j * n + (n - 1 - i)]
    k = independent_rows(nt.T, n, m, r, s.bl.rtol, nt.Q, nt.piv)
    if k != r:
        return -1
    for j in range(r):  # the chosen columns, increasing
        nt.dep[j] = n - 1 - nt.piv[r - 1 - j]
        nt.isdep[nt.dep[j]] = 1
    for i in range(r):
        for j in range(r):
            nt.A[i * m + j] = nt.Cr[i * n + nt.dep[j]]
    return r


cdef bint close_mimic_loops(Run* s) noexcept nogil:
    """(q+, v+) of a MimicModel whose tree has loops closed (the comment above): Newton to the
    loops' tolerance in at most ``s.bl.max_iter`` steps (the caller's: mimic_loops.project_configuration's
    PROJECT_STEPS; within 1e3 times it after them, as
    constraints/solve.py closed_or_error), then v+ on the loops with its independent
    coordinates kept.  True at once without loops (the relations K hold: onto_relations);
    False where the rows are singular, the positions do not close or leave the finite numbers
    (the Python step then names the cause)."""
    cdef Newton* nt = &s.nt
    cdef Loop* lp = &s.bl.lp
    cdef Py_ssize_t n = s.nvs, r, i, j, it
    cdef const double* phi = lp.ds.phi + lp.ds.nk
    cdef double e, e0 = -1.0, t
    if nt.m == 0:
        return True
    for i in range(s.nv):
        lp.ds.zero[i] = 0.0
    for it in range(s.bl.max_iter + 1):
        constraint_rows(lp, s.q_plus, lp.ds.zero, False)
        e = largest(phi, nt.m)
        if not isfinite(e):
            return False
        if e0 < 0.0:
            e0 = e
        if e <= s.bl.tol:
            break
        if it == s.bl.max_iter:
            if e > 1e3 * s.bl.tol:
                return False
            break
        r = partition_coordinates(s)  # C_d dq_d = -phi over the independent rows   004 (26)
        if r < 0:
            return False
        for j in range(r):
            nt.b[j] = -phi[nt.rows[j]]
        if not lu_solve(nt.A, r, nt.m, nt.b):
            return False
        for i in range(n):
            nt.dv[i] = 0.0
        for j in range(r):
            nt.dv[nt.dep[j]] = nt.b[j]
        expand_velocity(&s.mm, s.nv, nt.dv, nt.dvf)  # q (+) G dq, then onto the relations
        model_integrate(s.ki, s.L, s.q_plus, nt.dvf, s.q_plus)
        onto_relations(s, s.q_plus, NULL)
    if e0 > s.bl.tol:
        s.rows_next = False  # q+ moved: the rows found there are not its rows
    r = partition_coordinates(s)  # at the closed q+ (its rows are the last constraint_rows')
    if r < 0:
        return False
    for i in range(n):
        s.vr[i] = s.v_plus[s.mm.v_keep[i]]
    for j in range(r):  # C_d v_d = -C_i v_i                                     004 (16, 23)
        t = 0.0
        for i in range(n):
            if not nt.isdep[i]:
                t += nt.Cr[j * n + i] * s.vr[i]
        nt.b[j] = t
    if not lu_solve(nt.A, r, nt.m, nt.b):
        return False
    for j in range(r):
        s.vr[nt.dep[j]] = -nt.b[j]
    expand_velocity(&s.mm, s.nv, s.vr, s.v_plus)
    return all_finite(s.q_plus, s.nq) and all_finite(s.v_plus, s.nv)
