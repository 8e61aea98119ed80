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
    cdef Py_ssize_t i
    if q != NULL:
        for i in range(s.nqs):
            s.qr[i] = q[s.mm.q_keep[i]]
        expand_configuration(&s.mm, s.qr, q)
    if v != NULL:
        for i in range(s.nvs):
            s.vr[i] = v[s.mm.v_keep[i]]
        expand_velocity(&s.mm, s.nv, s.vr, v)


cdef void state_in(Run* s) noexcept nogil:
    """The caller's reduced state expanded into the run's tree state (q, v)."""
    expand_configuration(&s.mm, s.qs, s.q)
    expand_velocity(&s.mm, s.nv, s.vs, s.v)


cdef void state_out(Run* s) noexcept nogil:
    """The run's tree state reduced into the caller's: q_r = q[q_keep], v_r = v[v_keep]."""
    cdef Py_ssize_t i
    for i in range(s.nqs):
        s.qs[i] = s.q[s.mm.q_keep[i]]
    for i in range(s.nvs):
        s.vs[i] = s.v[s.mm.v_keep[i]]
