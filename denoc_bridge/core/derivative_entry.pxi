# Entries of the derivatives, called from denoc_bridge/algorithms/derivatives.py, with the
# statuses of the numba entries they replace (kernels/derivatives.py).
#
# Every array is checked before compiled code indexes it: an argument that is not an ndarray of
# the expected dimensions, float64 in native byte order, C-contiguous and aligned (and writeable
# for ``work`` and the results) raises TypeError naming it; then the lengths (the table's joints,
# modules and parents within its arrays, the state's and the results' lengths, ``work`` empty or
# the model's: status -2, nothing computed) and the values (tree's valid_state: finite, non-zero
# quaternions and (cos, sin) pairs, else -1).  Then 0 = done, -3 = the inputs are finite but a
# result is not, k + 1 = the articulated inertia of link k is singular (forward derivatives).
# An empty ``work`` (0 rows) asks the entry to allocate its own.

cdef extern from *:
    """
    #define DB_DERIV_OVERFLOW (-3)
    #define DB_DERIV_OUT_OF_MEMORY (-100)
    """
    long OVERFLOW "DB_DERIV_OVERFLOW"
    long OUT_OF_MEMORY "DB_DERIV_OUT_OF_MEMORY"


cdef struct Scratch:  # the passes' arrays for one state (one allocation)
    LinkRow* lk  # (L)
    DofRow* dr  # (nv)
    double* Cols  # (21, nv): Y, Z, gam, rho per column
    double* Tq  # (nv, nv): the lower triangles, transposed
    double* Tv  # (nv, nv)
    Py_ssize_t* sub  # (L) subtree DOFs
    double* R  # (L, 9) placements, from world_frames
    double* p  # (L, 3)
    double* Pw  # (nv, 6) base-frame columns of the P_k
    double* x  # (4, nv): tau or the bias, zeros, a scratch vector, qdd
    void* raw


cdef int scratch_new(Scratch* s, Py_ssize_t L, Py_ssize_t nv) noexcept nogil:
    """Allocate the scratch of a model of L links and nv DOFs: 0, or OUT_OF_MEMORY."""
    cdef size_t n = (L * sizeof(LinkRow) + nv * sizeof(DofRow) + L * sizeof(Py_ssize_t)
                     + (12 * L + (10 + C_ROWS) * nv + 2 * nv * nv + 1) * sizeof(double))
    s.raw = malloc(n)
    if s.raw == NULL:
        return OUT_OF_MEMORY
    s.lk = <LinkRow*>s.raw
    s.dr = <DofRow*>(s.lk + L)
    s.R = <double*>(s.dr + nv)
    s.p = s.R + 9 * L
    s.Pw = s.p + 3 * L
    s.x = s.Pw + 6 * nv
    s.Cols = s.x + 4 * nv
    s.Tq = s.Cols + C_ROWS * nv
    s.Tv = s.Tq + nv * nv
    s.sub = <Py_ssize_t*>(s.Tv + nv * nv)
    return 0


cdef int take_arg(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """arrays.pxd's take, compiled once here (its error path, an f-string, is not inlined at
    every call)."""
    return take(o, ndim, writable, name, a)


cdef long model_fits(const Arr* t) noexcept nogil:
    """0 when ``t`` is a model table whose joints, modules and parents index within its arrays,
    else -2."""
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    if not (table_fits(ki, L, model_nq(ki, L), model_nv(ki, L)) and modules_fit(ki, L)
            and parents_fit(ki, L)):
        return -2
    return 0


cdef inline bint square(const Arr* m, Py_ssize_t n) noexcept nogil:
    """Whether the 2-D array m is (n, n)."""
    return m.n0 == n and m.n1 == n


cdef inline double* work_of(Arr* w, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t S) noexcept nogil:
    """The caller's work array, or a new one for an empty ``work`` (freed by the caller when
    w.n0 == 0); NULL when it cannot be allocated."""
    if w.n0 != 0:
        return w.data
    return <double*>malloc(work_rows(L, nv, S) * W * sizeof(double))


cdef long id_derivatives(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                         const double* q, Py_ssize_t nq, const double* v, const double* a,
                         const double* fext, double* dq, double* dv, double* M,
                         Scratch* s) noexcept nogil:
    """dtau/dq, dtau/dv and M of one checked state (fext NULL for none): the two passes, then the
    lower triangles.  0, OVERFLOW, or -2 for a table whose DOFs are not numbered depth first."""
    subtree_dofs(ki, L, s.sub)
    if not depth_first(ki, L, nv, s.sub):
        return -2
    world_frames(ki, kf, L, nv, work, q, nq, s.R, s.p, s.Pw)
    kinematics_pass(ki, kf, L, v, a, fext, s.R, s.p, s.Pw, s.lk, s.dr)
    composite_pass(ki, kf, L, nv, a, s.x, dq, dv, M, s.Tq, s.Tv, s.lk, s.dr, s.Cols, s.sub, True)
    lower_triangles(nv, dq, dv, M, s.Tq, s.Tv)
    if finite_entries(dq, nv * nv) or finite_entries(dv, nv * nv) or finite_entries(M, nv * nv):
        return OVERFLOW
    return 0


cdef long id_call(object kt, object work, object q, object v, object a, object fext, object dq,
                  object dv, object M) except -100:  # never a status
    """The checks of inverse_dynamics_derivatives_state, then the derivatives."""
    cdef Arr t, w, aq, av, aa, af, aq_, av_, am
    take_arg(kt, 2, False, b"kt", &t)
    take_arg(work, 2, True, b"work", &w)
    take_arg(q, 1, False, b"q", &aq)
    take_arg(v, 1, False, b"v", &av)
    take_arg(a, 1, False, b"a", &aa)
    if fext is None:
        af.data, af.n0, af.n1 = NULL, 0, 6
    else:
        take_arg(fext, 2, False, b"fext", &af)
    take_arg(dq, 2, True, b"dtau_dq", &aq_)
    take_arg(dv, 2, True, b"dtau_dv", &av_)
    take_arg(M, 2, True, b"M", &am)
    cdef long status = model_fits(&t)
    if status:
        return status
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L)
    status = valid_state(ki, L, &aq, &av, &aa, &af, &av, &w)  # work's size too
    if status == 0 and not (square(&aq_, nv) and square(&av_, nv) and square(&am, nv)):
        status = -2
    if status:
        return status
    cdef Scratch s
    cdef double* wk = work_of(&w, L, nv, n_modules(ki, L))
    if wk == NULL or scratch_new(&s, L, nv):
        if w.n0 == 0:
            free(wk)
        raise MemoryError()
    status = id_derivatives(ki, t.data, L, nv, wk, aq.data, aq.n0, av.data, aa.data,
                            af.data if af.n0 else NULL, aq_.data, av_.data, am.data, &s)
    free(s.raw)
    if w.n0 == 0:
        free(wk)
    return status


cdef inline cnp.ndarray new_matrix(Py_ssize_t n):
    """An uninitialised (n, n) float64 array, allocated through NumPy's C API."""
    cdef cnp.npy_intp dims[2]
    dims[0] = n
    dims[1] = n
    return cnp.PyArray_EMPTY(2, dims, cnp.NPY_DOUBLE, 0)


cdef Py_ssize_t nv_of(object kt) except -1:
    """The model's nv from its table (0 for an array that is not one: the entry then says -2)."""
    cdef Arr t
    take_arg(kt, 2, False, b"kt", &t)
    return model_nv(<const int*>t.data, t.n0) if t.n1 == NT and t.n0 >= 0 else 0


def inverse_dynamics_derivatives_state(kt, work, q, v, a, fext, dtau_dq, dtau_dv, M):
    """dtau/dq (tangent space), dtau/dv and M = dtau/da of tau = ID(q, v, a, fext) into the three
    (nv, nv) arrays; ``fext`` (0, 6) or (L, 6) in internal order, or None (status: see the
    module)."""
    return id_call(kt, work, q, v, a, fext, dtau_dq, dtau_dv, M)


def inverse_dynamics_derivatives_new(kt, work, q, v, a):
    """inverse_dynamics_derivatives_state without external wrenches into three new arrays,
    allocated here: (dtau_dq, dtau_dv, M), or the status when it is not 0 (the public call's
    fast path)."""
    cdef Py_ssize_t nv = nv_of(kt)
    cdef cnp.ndarray dq = new_matrix(nv), dv = new_matrix(nv), M = new_matrix(nv)
    cdef long status = id_call(kt, work, q, v, a, None, dq, dv, M)
    return (dq, dv, M) if status == 0 else status


cdef int status_array(object status, cnp.int64_t** st, Py_ssize_t* n) except -1:
    """The data pointer and length of a batch's statuses (TypeError unless a 1-D C-contiguous
    writeable int64 array)."""
    if not (cnp.PyArray_Check(status) and cnp.PyArray_NDIM(<cnp.ndarray>status) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>status) == cnp.NPY_INT64
            and cnp.PyArray_ISCARRAY(<cnp.ndarray>status) and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>status)):
        raise TypeError("status: expected a 1-D C-contiguous writeable int64 array")
    st[0] = <cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>status)
    n[0] = cnp.PyArray_DIMS(<cnp.ndarray>status)[0]
    return 0


cdef long batch_wrenches(object FEXT, Py_ssize_t B, Py_ssize_t L, Arr* af) except -100:
    """A batch's external wrenches: (B, L, 6), or (0, 0, 6) for none (af.n0 = 0); -2 for other
    lengths; TypeError for another kind of array."""
    if not (cnp.PyArray_Check(FEXT) and cnp.PyArray_NDIM(<cnp.ndarray>FEXT) == 3):
        raise TypeError("FEXT: expected a 3-D float64 array")
    cdef cnp.npy_intp* d = cnp.PyArray_DIMS(<cnp.ndarray>FEXT)
    af.data, af.n0, af.n1 = NULL, 0, 6
    if d[0] == 0:
        return 0
    take_arg(FEXT, 3, False, b"FEXT", af)  # FEXT itself: a reshape of a strided FEXT is a freed copy
    return 0 if d[0] == B and d[1] == L and d[2] == 6 else -2


cdef inline Arr row_of(const Arr* a, Py_ssize_t b, Py_ssize_t n) noexcept nogil:
    """Row b of a batch whose rows hold n numbers each, as a 1-D array of them."""
    cdef Arr r
    r.data, r.n0, r.n1 = a.data + b * n, n, 1
    return r


def inverse_dynamics_derivatives_chunk(kt, Q, V, A, FEXT, DQ, DV, MM, status, Py_ssize_t start,
                                       Py_ssize_t stop):
    """The derivatives of the states ``start:stop`` of a batch: ``Q`` (B, nq), ``V``, ``A`` (B,
    nv), ``FEXT`` (B, L, 6) or (0, 0, 6) for none, ``DQ``, ``DV``, ``MM`` (B, nv, nv), one status
    per state into ``status`` (B,) int64; the same passes as one state's entry, so a batch equals
    its states' calls bit for bit.  Runs without the GIL on a work array and scratch of its own
    (the Python layer runs chunks on several threads); -2 (nothing computed) when the arrays'
    lengths do not fit one another or the model; TypeError as the single-state entry."""
    cdef Arr t, aq, av, aa, af, odq, odv, om, w, q, v, a, f
    cdef cnp.int64_t* st
    cdef Py_ssize_t ns
    take_arg(kt, 2, False, b"kt", &t)
    take_arg(Q, 2, False, b"Q", &aq)
    take_arg(V, 2, False, b"V", &av)
    take_arg(A, 2, False, b"A", &aa)
    take_arg(DQ, 3, True, b"DQ", &odq)  # (B, nv, nv) read as (B, nv * nv)
    take_arg(DV, 3, True, b"DV", &odv)
    take_arg(MM, 3, True, b"MM", &om)
    status_array(status, &st, &ns)
    cdef Py_ssize_t B = aq.n0
    cdef long bad = model_fits(&t)
    if bad == 0:
        bad = batch_wrenches(FEXT, B, t.n0, &af)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L) if bad == 0 else 0, b
    if (bad or av.n0 != B or aa.n0 != B or ns != B or odq.n0 != B or odv.n0 != B or om.n0 != B
            or odq.n1 != nv * nv or odv.n1 != nv * nv or om.n1 != nv * nv or not 0 <= start <= stop <= B):
        return -2
    cdef Scratch s
    w.data, w.n0, w.n1 = NULL, 0, W  # no work array given: valid_state does not check one
    cdef double* wk = work_of(&w, L, nv, n_modules(ki, L))
    if wk == NULL or scratch_new(&s, L, nv):
        free(wk)
        raise MemoryError()
    with nogil:
        for b in range(start, stop):
            q, v, a = row_of(&aq, b, aq.n1), row_of(&av, b, av.n1), row_of(&aa, b, aa.n1)
            f = af
            if af.n0:
                f = row_of(&af, b, 6 * L)
                f.n0, f.n1 = L, 6
            st[b] = valid_state(ki, L, &q, &v, &a, &f, &v, &w)
            if st[b] == 0:
                st[b] = id_derivatives(ki, t.data, L, nv, wk, q.data, q.n0, v.data, a.data,
                                       f.data if f.n0 else NULL, odq.data + b * nv * nv,
                                       odv.data + b * nv * nv, om.data + b * nv * nv, &s)
    free(s.raw)
    free(wk)
    return 0
