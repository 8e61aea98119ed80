# Entries of the derivatives, called from denoc_bridge/algorithms/derivatives.py, with the
# statuses of the numba entries they replaced (kernels/derivatives.py, since deleted).
#
# Every array is checked before compiled code indexes it: an argument that is not an ndarray of
# the expected dimensions, float64 in native byte order, C-contiguous and aligned (and writeable
# for ``work`` and the results) raises TypeError naming it; then the lengths (the table's joints,
# modules and parents within its arrays, the state's and the results' lengths, ``work`` empty or
# the model's: status -2, nothing computed) and the values (tree's valid_state: finite, non-zero
# quaternions and (cos, sin) pairs, else -1).  Then 0 = done, -3 = the inputs are finite but a
# result is not, k + 1 = the articulated inertia of link k is singular (forward derivatives).
# ``work`` is the derivatives' work array (``work_shape(kt)``: the tree's work rows, then the
# passes' scratch; the Python layer keeps one per thread and model); an empty one (0 rows) asks
# the entry to allocate its own.

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
    double* R  # (L, 9) placements, from world_frames
    double* p  # (L, 3)
    double* Pw  # (nv, 6) base-frame columns of the P_k
    double* x  # (4, nv): tau or the bias, zeros, the LTDL's scratch, qdd of the fast entry
    double* Cols  # (21, nv): Y, Z, gam, rho per column
    double* Tq  # (nv, nv): the lower triangles, transposed
    double* Tv  # (nv, nv)
    double* dq  # (nv, nv) dtau/dq and dtau/dv of the forward derivatives
    double* dv  # (nv, nv)
    Py_ssize_t* sub  # (L) subtree DOFs
    Py_ssize_t* lam3  # (3, nv) the inverse GIM's DOF parents, depths, runs (forward derivatives)
    Py_ssize_t* lam  # (nv) dof_ranges: parent DOF, stretch of ancestors, subtree's columns
    Py_ssize_t* run  # (nv)
    Py_ssize_t* first  # (nv)
    Py_ssize_t* end  # (nv)
    Py_ssize_t* mark  # (nv) minus_products: the rows a block of columns reads
    Py_ssize_t* rows  # (2 nv) their stretches


cdef size_t scratch_bytes(Py_ssize_t L, Py_ssize_t nv) noexcept nogil:
    """The bytes of the scratch of a model of L links and nv DOFs (the forward derivatives')."""
    return (L * sizeof(LinkRow) + nv * sizeof(DofRow) + (L + 10 * nv) * sizeof(Py_ssize_t)
            + (12 * L + (10 + C_ROWS) * nv + 4 * nv * nv) * sizeof(double))


cdef void scratch_at(Scratch* s, void* raw, Py_ssize_t L, Py_ssize_t nv) noexcept nogil:
    """The arrays of the scratch, carved out of the scratch_bytes from ``raw``."""
    s.lk = <LinkRow*>raw
    s.dr = <DofRow*>(s.lk + L)
    s.R = <double*>(s.dr + nv)
    s.p = s.R + 9 * L
    s.Pw = s.p + 3 * L
    s.x = s.Pw + 6 * nv
    s.Cols = s.x + 4 * nv
    s.Tq = s.Cols + C_ROWS * nv
    s.Tv = s.Tq + nv * nv
    s.dq = s.Tv + nv * nv
    s.dv = s.dq + nv * nv
    s.sub = <Py_ssize_t*>(s.dv + nv * nv)
    s.lam3 = s.sub + L
    s.lam = s.lam3 + 3 * nv
    s.run = s.lam + nv
    s.first = s.run + nv
    s.end = s.first + nv
    s.mark = s.end + nv
    s.rows = s.mark + nv


cdef inline Py_ssize_t derivative_rows(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t S) noexcept nogil:
    """The rows of W doubles of the derivatives' work array: the tree's work array (tables.pxd
    work_rows: the geometry and forward-dynamics passes), then the scratch."""
    return work_rows(L, nv, S) + <Py_ssize_t>((scratch_bytes(L, nv) + 8 * W - 1) // (8 * W))


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


cdef inline long work_of(Arr* w, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t S, double** wk,
                         Scratch* s) except -100:
    """The derivatives' work array (derivative_rows): the caller's, -2 if not of the model's size,
    or a new one for an empty ``work`` (freed by the caller when w.n0 == 0; MemoryError), with
    the scratch carved out of it."""
    cdef Py_ssize_t rows = derivative_rows(L, nv, S)
    if w.n0 != 0:
        if w.n0 != rows or w.n1 != W:
            return -2
        wk[0] = w.data
    else:
        wk[0] = <double*>malloc(rows * W * sizeof(double))
        if wk[0] == NULL:
            raise MemoryError()
    scratch_at(s, wk[0] + work_rows(L, nv, S) * W, L, nv)
    return 0


def work_shape(kt):
    """(rows, W): the shape of the work array of the derivatives of the model of table ``kt``
    (the tree's work array followed by the derivatives' scratch), for the Python layer that
    keeps one per thread; ValueError for an array that is not a model table."""
    cdef Arr t
    take_arg(kt, 2, False, b"kt", &t)
    if model_fits(&t):
        raise ValueError("kt: not a model table")
    cdef const int* ki = <const int*>t.data
    return derivative_rows(t.n0, model_nv(ki, t.n0), n_modules(ki, t.n0)), W


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
    cdef Arr t, w, aq, av, aa, af, aq_, av_, am, no_work
    no_work.data, no_work.n0, no_work.n1 = NULL, 0, W  # work is checked by work_of
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
    status = valid_state(ki, L, &aq, &av, &aa, &af, &av, &no_work)
    if status == 0 and not (square(&aq_, nv) and square(&av_, nv) and square(&am, nv)):
        status = -2
    cdef Scratch s
    cdef double* wk = NULL
    if status == 0:
        status = work_of(&w, L, nv, n_modules(ki, L), &wk, &s)
    if status:
        return status
    status = id_derivatives(ki, t.data, L, nv, wk, aq.data, aq.n0, av.data, aa.data,
                            af.data if af.n0 else NULL, aq_.data, av_.data, am.data, &s)
    if w.n0 == 0:
        free(wk)
    return status


cdef long fd_call(object kt, object work, object q, object v, object tau, object fext, object qdd,
                  object ddq, object ddv, object Minv, int way) except -100:  # never a status
    """The checks of forward_dynamics_derivatives_state, then the derivatives (qdd None: into the
    scratch)."""
    cdef Arr t, w, aq, av, at, af, ao, aq_, av_, am, no_work
    no_work.data, no_work.n0, no_work.n1 = NULL, 0, W  # work is checked by work_of
    take_arg(kt, 2, False, b"kt", &t)
    take_arg(work, 2, True, b"work", &w)
    take_arg(q, 1, False, b"q", &aq)
    take_arg(v, 1, False, b"v", &av)
    take_arg(tau, 1, False, b"tau", &at)
    if fext is None:
        af.data, af.n0, af.n1 = NULL, 0, 6
    else:
        take_arg(fext, 2, False, b"fext", &af)
    if qdd is None:
        ao.data, ao.n0, ao.n1 = NULL, av.n0, 1
    else:
        take_arg(qdd, 1, True, b"qdd", &ao)
    take_arg(ddq, 2, True, b"dqdd_dq", &aq_)
    take_arg(ddv, 2, True, b"dqdd_dv", &av_)
    take_arg(Minv, 2, True, b"Minv", &am)
    cdef long status = model_fits(&t)
    if status:
        return status
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L)
    status = valid_state(ki, L, &aq, &av, &at, &af, &ao, &no_work)
    if status == 0 and not (square(&aq_, nv) and square(&av_, nv) and square(&am, nv)):
        status = -2
    cdef Scratch s
    cdef double* wk = NULL
    if status == 0:
        status = work_of(&w, L, nv, n_modules(ki, L), &wk, &s)
    if status:
        return status
    status = fd_derivatives(ki, t.data, L, nv, wk, aq.data, aq.n0, av.data, at.data, af.data if af.n0 else NULL,
                            ao.data if qdd is not None else s.x + 3 * nv, aq_.data, av_.data, am.data, &s, way)
    if w.n0 == 0:
        free(wk)
    if status == OUT_OF_MEMORY:
        raise MemoryError()
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


def forward_dynamics_derivatives_state(kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv, int way=0):
    """qdd = FD(q, v, tau, fext) into ``qdd`` and its derivatives dqdd/dq (tangent space), dqdd/dv
    and dqdd/dtau = M^-1 into the three (nv, nv) arrays; ``fext`` (0, 6) or (L, 6) in internal
    order, or None (status: see the module).  ``way`` is the tests' hook: 1 the GIM's LTDL first
    whatever its work count (the recursion where it refuses a pivot), 2 the recursion only, 0
    the inverse GIM's choice."""
    return fd_call(kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv, way)


def forward_dynamics_derivatives_new(kt, work, q, v, tau):
    """forward_dynamics_derivatives_state without external wrenches into three new arrays,
    allocated here: (dqdd_dq, dqdd_dv, Minv), or the status when it is not 0 (the public call's
    fast path)."""
    cdef Py_ssize_t nv = nv_of(kt)
    cdef cnp.ndarray dq = new_matrix(nv), dv = new_matrix(nv), Minv = new_matrix(nv)
    cdef long status = fd_call(kt, work, q, v, tau, None, None, dq, dv, Minv, 0)
    return (dq, dv, Minv) if status == 0 else status


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


cdef long chunk(object kt, object Q, object V, object X, object FEXT, object QDD, object DQ, object DV,
                object MM, object status, Py_ssize_t start, Py_ssize_t stop, bint forward) except -100:
    """The derivatives of inverse (X = A) or, with ``forward``, forward dynamics (X = TAU, QDD
    (B, nv) their accelerations) of the states start:stop of a batch (see the chunk entries)."""
    cdef Arr t, aq, av, ax, af, ao, odq, odv, om, w, q, v, x, f, o
    cdef cnp.int64_t* st
    cdef Py_ssize_t ns
    take_arg(kt, 2, False, b"kt", &t)
    take_arg(Q, 2, False, b"Q", &aq)
    take_arg(V, 2, False, b"V", &av)
    take_arg(X, 2, False, b"TAU" if forward else b"A", &ax)
    if forward:
        take_arg(QDD, 2, True, b"QDD", &ao)
    take_arg(DQ, 3, True, b"DQ", &odq)  # (B, nv, nv) read as (B, nv * nv)
    take_arg(DV, 3, True, b"DV", &odv)
    take_arg(MM, 3, True, b"MINV" if forward else b"MM", &om)
    status_array(status, &st, &ns)
    cdef Py_ssize_t B = aq.n0
    cdef long bad = model_fits(&t)
    if bad == 0:
        bad = batch_wrenches(FEXT, B, t.n0, &af)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L) if bad == 0 else 0, b, n2 = nv * nv
    if not forward:
        ao = av
    if (bad or av.n0 != B or ax.n0 != B or ao.n0 != B or ns != B or odq.n0 != B or odv.n0 != B
            or om.n0 != B or odq.n1 != n2 or odv.n1 != n2 or om.n1 != n2 or not 0 <= start <= stop <= B):
        return -2
    cdef Scratch s
    cdef double* wk = NULL
    w.data, w.n0, w.n1 = NULL, 0, W  # a work array of its own; valid_state does not check it
    work_of(&w, L, nv, n_modules(ki, L), &wk, &s)
    cdef bint no_memory = False
    with nogil:
        for b in range(start, stop):
            q, v, x, o = row_of(&aq, b, aq.n1), row_of(&av, b, av.n1), row_of(&ax, b, ax.n1), row_of(&ao, b, ao.n1)
            f = af
            if af.n0:
                f = row_of(&af, b, 6 * L)
                f.n0, f.n1 = L, 6
            st[b] = valid_state(ki, L, &q, &v, &x, &f, &o, &w)
            if st[b] == 0 and forward:
                st[b] = fd_derivatives(ki, t.data, L, nv, wk, q.data, q.n0, v.data, x.data, f.data if f.n0 else NULL,
                                       o.data, odq.data + b * n2, odv.data + b * n2, om.data + b * n2, &s, 0)
            elif st[b] == 0:
                st[b] = id_derivatives(ki, t.data, L, nv, wk, q.data, q.n0, v.data, x.data, f.data if f.n0 else NULL,
                                       odq.data + b * n2, odv.data + b * n2, om.data + b * n2, &s)
            no_memory = no_memory or st[b] == OUT_OF_MEMORY
    free(wk)
    if no_memory:
        raise MemoryError()
    return 0


def inverse_dynamics_derivatives_chunk(kt, Q, V, A, FEXT, DQ, DV, MM, status, Py_ssize_t start,
                                       Py_ssize_t stop):
    """The derivatives of the states ``start:stop`` of a batch: ``Q`` (B, nq), ``V``, ``A`` (B,
    nv), ``FEXT`` (B, L, 6) or (0, 0, 6) for none, ``DQ``, ``DV``, ``MM`` (B, nv, nv), one status
    per state into ``status`` (B,) int64; the same passes as one state's entry, so a batch equals
    its states' calls bit for bit.  Runs without the GIL on a work array and scratch of its own
    (the Python layer runs chunks on several threads); -2 (nothing computed) when the arrays'
    lengths do not fit one another or the model; TypeError as the single-state entry."""
    return chunk(kt, Q, V, A, FEXT, None, DQ, DV, MM, status, start, stop, False)


def forward_dynamics_derivatives_chunk(kt, Q, V, TAU, FEXT, QDD, DQ, DV, MINV, status, Py_ssize_t start,
                                       Py_ssize_t stop):
    """The forward derivatives of the states ``start:stop`` of a batch, their accelerations into
    ``QDD`` (B, nv) (the rest as inverse_dynamics_derivatives_chunk; statuses k + 1 too)."""
    return chunk(kt, Q, V, TAU, FEXT, QDD, DQ, DV, MINV, status, start, stop, True)
