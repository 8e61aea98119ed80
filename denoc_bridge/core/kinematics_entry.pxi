# Entries of the energies (energy.pxi), with the numba entries' arguments (denoc_bridge/kernels/
# energy.py): the model's table ``kt``, its work array, the state, the joint stiffnesses K and
# rest configuration q_rest.  Arguments are taken as the other entries' (``take``, arrays.pxd:
# TypeError for one that is not a C-contiguous aligned float64 array); a length that does not
# fit the model, or a table whose joints or modules do not fit it (``table_fits``,
# ``modules_fit``), is a status, never an index past an array.

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
    return k.n0 == nv and r.n0 == nq and table_fits(e.ki, e.L, nq, nv) and modules_fit(e.ki, e.L)


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
