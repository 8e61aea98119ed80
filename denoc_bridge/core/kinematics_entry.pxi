# Entries of the kinematics (kinematics.pxi) and the energies (energy.pxi), with the arguments
# of the numba entries they replaced (deleted) but the model's table ``kt``
# in place of its parent array and copies of its geometry.  Arguments are taken as the other
# entries' (``take``, arrays.pxd: TypeError for one that is not a C-contiguous aligned float64
# array); a length that does not fit the model, or a table whose joints, modules or parents do
# not fit it (``tree_fits``), is a status, never an index past an array.


cdef inline bint tree_fits(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when the table's joints, modules and parents index within the model's arrays."""
    return (table_fits(ki, L, model_nq(ki, L), model_nv(ki, L)) and modules_fit(ki, L)
            and parents_fit(ki, L))


cdef long geometry_call(object kt, object work, object q, Arr* t, Arr* w, Arr* aq,
                        Py_ssize_t rows, Py_ssize_t cols, Arr* out) except -100:  # never a status
    """The checks of the kinematics entries (configuration_call, the table, ``out`` of ``rows``
    (0: L) rows of ``cols`` numbers), then the lean geometry pass into ``work``: the status."""
    cdef long status = configuration_call(kt, work, q, t, w, aq)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    if status == 0 and (w.n0 == 0 or not tree_fits(ki, L) or out.n0 != (rows if rows else L)
                        or out.n1 != cols):
        status = -2
    if status == 0:
        joint_geometry_pass(ki, t.data, L, aq.data, model_nv(ki, L), w.data, False, 0, L,
                            poly_ok(aq.data, aq.n0))
    return status


def placements_state(kt, work, q, R, p):
    """The placements of the link frames in the base frame at q: (L, 3, 3) ``R`` and (L, 3) ``p``
    (Pinocchio's ``oMi[k + 1]``), through ``work`` (the model's work array); 0, -1 for a value
    that is not finite or a zero quaternion or (cos, sin) pair, -2 for a length."""
    cdef Arr t, w, aq, aR, ap
    take(R, 3, True, b"R", &aR)
    take(p, 2, True, b"p", &ap)
    cdef long status = geometry_call(kt, work, q, &t, &w, &aq, 0, 9, &aR)
    if status == 0 and (ap.n0 != t.n0 or ap.n1 != 3):
        status = -2
    if status == 0:
        world_placements(<const int*>t.data, t.data, t.n0, w.data, aR.data, ap.data)
    return status


def twists_state(kt, work, q, v, out):
    """The twists of the links at (q, v) into the (L, 6) ``out`` (internal order: angular, then
    linear, in each link's frame); status as placements_state."""
    cdef Arr t, w, aq, av, ao
    take(v, 1, False, b"v", &av)
    take(out, 2, True, b"out", &ao)
    cdef long status = geometry_call(kt, work, q, &t, &w, &aq, 0, 6, &ao)
    cdef Py_ssize_t nv = model_nv(<const int*>t.data, t.n0) if status == 0 else 0
    if status == 0 and av.n0 != nv:
        status = -2
    if status == 0 and finite_entries(av.data, nv):
        status = -1
    if status == 0:
        link_twists(<const int*>t.data, t.data, t.n0, nv, w.data, av.data, ao.data)
    return status


def subtree_sums(kt, x, out):
    """out_k = the sum of x_j over link k's subtree (k included), rows of (L, m) ``x`` and
    ``out``; 0, or -2 for lengths (or parents) that do not fit."""
    cdef Arr t, ax, ao
    take(kt, 2, False, b"kt", &t)
    take(x, 2, False, b"x", &ax)
    take(out, 2, True, b"out", &ao)
    if (t.n1 != NT or ax.n0 != t.n0 or ao.n0 != t.n0 or ao.n1 != ax.n1
            or not parents_fit(<const int*>t.data, t.n0)):
        return -2
    sum_subtrees(<const int*>t.data, t.n0, ax.data, ax.n1, ao.data)
    return 0


cdef struct EnergyArgs:
    const int* ki
    const double* kf
    Py_ssize_t L
    Py_ssize_t nv
    Py_ssize_t rows  # of the work array
    const double* K
    const double* q_rest


cdef int energy_args(object kt, object K, object q_rest, Py_ssize_t nq, Py_ssize_t nv,
                     EnergyArgs* e) except -1:
    """The table, K and q_rest of a state of nq and nv numbers, taken: 1 when their lengths fit
    the model, else 0."""
    cdef Arr t, k, r
    take(kt, 2, False, b"kt", &t)
    take(K, 1, False, b"K", &k)
    take(q_rest, 1, False, b"q_rest", &r)
    if t.n1 != NT:
        return 0
    e.ki, e.kf, e.L, e.nv = <const int*>t.data, t.data, t.n0, nv
    e.K, e.q_rest = k.data, r.data
    e.rows = work_rows(e.L, nv, n_modules(e.ki, e.L))
    return (k.n0 == nv and r.n0 == nq and nq == model_nq(e.ki, e.L) and nv == model_nv(e.ki, e.L)
            and tree_fits(e.ki, e.L))


def energies_state(kt, work, q, v, K, q_rest, springs, d):
    """(kinetic, potential) with the armature and, with ``springs``, the joint springs; ``work``
    the model's work array, ``d`` (nv,) scratch; (nan, nan) when a length does not fit the model
    (nothing written), which the Python layer checks as it checks a non-finite input."""
    cdef Arr w, aq, av, ad
    cdef EnergyArgs e
    cdef double out[2]
    take(work, 2, True, b"work", &w)
    take(q, 1, False, b"q", &aq)
    take(v, 1, False, b"v", &av)
    take(d, 1, True, b"d", &ad)
    cdef bint fits = energy_args(kt, K, q_rest, aq.n0, av.n0, &e)
    cdef bint spring = springs
    if not fits or ad.n0 != e.nv or w.n1 != W or w.n0 != e.rows:
        return (float("nan"), float("nan"))
    energies_of_state(e.ki, e.kf, e.L, e.nv, w.data, aq.data, av.data, e.K, e.q_rest, spring,
                      ad.data, out)
    return (out[0], out[1])


def energies_chunk(kt, Q, V, K, q_rest, springs, kinetic, potential, Py_ssize_t start,
                   Py_ssize_t stop):
    """energies_state of the states ``start:stop`` of a batch, (B, nq) Q and (B, nv) V, into (B,)
    ``kinetic`` and ``potential``, without the GIL on a work array of its own (the Python layer
    runs chunks on several threads, multibody.data.run_chunks); 0, or -2 when a length does not
    fit (nothing written)."""
    cdef Arr aQ, aV, ak, ap
    cdef EnergyArgs e
    cdef double out[2]
    take(Q, 2, False, b"Q", &aQ)
    take(V, 2, False, b"V", &aV)
    take(kinetic, 1, True, b"kinetic", &ak)
    take(potential, 1, True, b"potential", &ap)
    cdef bint fits = energy_args(kt, K, q_rest, aQ.n1, aV.n1, &e)
    cdef Py_ssize_t B = aQ.n0, b
    cdef bint spring = springs
    if not fits or aV.n0 != B or ak.n0 != B or ap.n0 != B or not 0 <= start <= stop <= B:
        return -2
    cdef double* work = <double*>malloc((e.rows * W + e.nv + 1) * sizeof(double))
    if work == NULL:
        raise MemoryError()
    with nogil:
        for b in range(start, stop):
            energies_of_state(e.ki, e.kf, e.L, e.nv, work, aQ.data + b * aQ.n1, aV.data + b * e.nv,
                              e.K, e.q_rest, spring, work + e.rows * W, out)
            ak.data[b] = out[0]
            ap.data[b] = out[1]
    free(work)
    return 0
