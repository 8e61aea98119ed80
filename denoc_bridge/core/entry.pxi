# Entries: one call per public algorithm, with the arguments and statuses of the numba entries
# they replaced (issues 48 and 49).
#
# Each entry takes plain objects and checks them in C before any pointer is indexed (``take``,
# arrays.pxd): an argument that is not an ndarray of the expected dimensions, float64 in native
# byte order, C-contiguous and aligned (and writeable for ``work`` and ``out``) raises TypeError,
# as the numba entries' explicit signatures did (the Python layer then converts the arguments);
# read-only inputs are accepted.  Then the lengths and values: the status is 0 = done, -1 = a value is
# invalid (not finite, a zero quaternion or (cos, sin) pair), -2 = a length is wrong, -3 = the
# inputs are finite but the result is not, k + 1 = the articulated inertia of link k is
# singular.  An empty ``work`` (0 rows) asks the entry to allocate its own.

cdef extern from *:
    """
    #define DB_OVERFLOW (-3)
    """
    long OVERFLOW "DB_OVERFLOW"


cdef int take_checked(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """arrays.pxd's take, compiled once in this module: this module inlines every inline
    function always (tree.pyx), and take's error path (an f-string) inlined at each of its some
    50 calls doubled the module (1.2 to 2.9 MB) and its compile time (13 to 21 s) (measured)."""
    return inline_take(o, ndim, writable, name, a)


cdef inline int take(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """arrays.pxd's take: a 1-D array that passes its checks (the state vectors of every call)
    is taken inline, its flags tested with one mask; anything else by :func:`take_checked`, out
    of line, which checks it again and raises.  The four calls of take_checked were 206 of the
    4750 instructions of a one-link model's ``model._core.forward_dynamics``, inline 83
    (callgrind)."""
    cdef int need = cnp.NPY_ARRAY_C_CONTIGUOUS | cnp.NPY_ARRAY_ALIGNED | (cnp.NPY_ARRAY_WRITEABLE if writable else 0)
    cdef cnp.ndarray x
    if ndim == 1 and cnp.PyArray_Check(o):
        x = <cnp.ndarray>o
        if (cnp.PyArray_NDIM(x) == 1 and cnp.PyArray_TYPE(x) == cnp.NPY_DOUBLE
                and cnp.PyArray_FLAGS(x) & need == need and cnp.PyArray_ISNOTSWAPPED(x)):
            a.data = <double*>cnp.PyArray_DATA(x)
            a.n0 = cnp.PyArray_DIMS(x)[0]
            a.n1 = 1
            return 0
    return take_checked(o, ndim, writable, name, a)


cdef long valid_state(const int* ki, Py_ssize_t L, const Arr* q, const Arr* v, const Arr* x,
                      const Arr* fext, const Arr* out, const Arr* work) noexcept nogil:
    """0 if the lengths fit the model (nv entries for v, x and out; fext (0, any) or (L, 6);
    work empty or the model's) and the values are finite with non-zero quaternions and
    (cos, sin) pairs; -2 for a wrong length, -1 for a wrong value."""
    cdef Py_ssize_t nv = model_nv(ki, L)
    if q.n0 != model_nq(ki, L) or v.n0 != nv or x.n0 != nv or out.n0 != nv:
        return -2
    if fext.n0 != 0 and (fext.n0 != L or fext.n1 != 6):  # (0, any): no wrenches
        return -2
    if work.n0 != 0 and (work.n1 != W or work.n0 != work_rows(L, nv, n_modules(ki, L))):
        return -2
    if not (all_finite(v.data, nv) and all_finite(x.data, nv) and all_finite(fext.data, fext.n0 * 6)):
        return -1
    return configuration_status(ki, L, q.data)


cdef long state_dynamics(const int* ki, const double* kf, Py_ssize_t L, const Arr* q, const Arr* v,
                         const Arr* x, const Arr* fext, const Arr* out, double* wk,
                         bint inverse) noexcept nogil:
    """Forward dynamics (x = tau) or, with ``inverse``, inverse dynamics (x = a) of one state
    that :func:`valid_state` passed, into ``out`` (``wk``: a work array of the model's size;
    ``fext`` with 0 rows for none)."""
    cdef long status = 0
    cdef Py_ssize_t nv = v.n0
    cdef const double* fe = fext.data if fext.n0 > 0 else NULL
    if inverse:
        twist_forward_recursion(ki, kf, L, nv, q.data, q.n0, v.data, x.data, fe, wk, False)
        wrench_backward_recursion(ki, kf, L, nv, x.data, wk, out.data)
    else:
        status = forward_dynamics_passes(ki, kf, L, nv, wk, q.data, q.n0, v.data, x.data, fe,
                                         out.data, False)
    # all_finite here, not finite_entries (gim_entry.pxi): the call in its place changed gcc's
    # inlining of this path, solo12's forward dynamics 1.28 -> 1.50 us (measured)
    return status if status else (0 if all_finite(out.data, nv) else OVERFLOW)


cdef inline double* work_or_new(Arr* w, const int* ki, Py_ssize_t L, Py_ssize_t nv) except NULL:
    """The caller's work array, or a new one for an empty ``work`` (freed by the caller when
    w.n0 == 0)."""
    cdef double* wk
    if w.n0 != 0:
        return w.data
    wk = <double*>malloc(work_rows(L, nv, n_modules(ki, L)) * W * sizeof(double))
    if wk == NULL:
        raise MemoryError()
    return wk


cdef long dynamics(object kt, object work, object q, object v, object x, object fext, object out,
                   bint inverse) except -100:  # never a status
    """Forward dynamics (x = tau) or, with ``inverse``, inverse dynamics (x = a) of one state
    into ``out``; ``fext`` None for none."""
    cdef Arr t, w, aq, av, ax, af, ao
    take(kt, 2, False, b"kt", &t)
    take(work, 2, True, b"work", &w)
    take(q, 1, False, b"q", &aq)
    take(v, 1, False, b"v", &av)
    take(x, 1, False, b"a" if inverse else b"tau", &ax)
    if fext is None:
        af.data, af.n0, af.n1 = NULL, 0, 6
    else:
        take(fext, 2, False, b"fext", &af)
    take(out, 1, True, b"out", &ao)
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    cdef long status = valid_state(ki, L, &aq, &av, &ax, &af, &ao, &w)  # work's size too
    if status:
        return status
    cdef double* wk = work_or_new(&w, ki, L, av.n0)
    status = state_dynamics(ki, t.data, L, &aq, &av, &ax, &af, &ao, wk, inverse)
    if w.n0 == 0:
        free(wk)
    return status


cdef inline Arr row_of(const Arr* a, Py_ssize_t b, Py_ssize_t n) noexcept nogil:
    """Row b of a batch whose rows hold n numbers each, as a 1-D array of them."""
    cdef Arr r
    r.data, r.n0, r.n1 = a.data + b * n, n, 1
    return r


def dynamics_chunk(kt, Q, V, X, FEXT, OUT, status, bint inverse, Py_ssize_t start, Py_ssize_t stop,
                   bint lanes=True):
    """Forward (or, with ``inverse``, inverse) dynamics of the states ``start:stop`` of a batch:
    ``Q`` (B, nq), ``V``, ``X``, ``OUT`` (B, nv), ``FEXT`` (B, L, 6) or (0, 0, 6) for none, one
    status per state into ``status`` (B,) int64.  On a model that :func:`batch_lanes` accepts,
    LANES states at a time run in the lanes of the vector
    instructions (lanes.pxi; equal to the one-state entry to rounding), with ``lanes`` (the
    tests' switch); everything else, and every group of states with an invalid input, a
    singular articulated inertia or a non-finite result, the one-state kernel, so that a state
    gets the one-state entry's status.  Runs without the GIL on a work array of its own: the
    Python layer runs chunks on several threads; the groups start at multiples of LANES
    (``BATCH_LANES``), so that chunks whose bounds are such multiples give the results of one
    chunk.  Returns -2 (nothing computed) when the arrays' lengths do not fit one another or the
    model; TypeError as the single-state entries."""
    cdef Arr t, aq, av, ax, ao, w
    take(kt, 2, False, b"kt", &t)
    take(Q, 2, False, b"Q", &aq)
    take(V, 2, False, b"V", &av)
    take(X, 2, False, b"A" if inverse else b"TAU", &ax)
    take(OUT, 2, True, b"OUT", &ao)
    if not (cnp.PyArray_Check(FEXT) and cnp.PyArray_NDIM(<cnp.ndarray>FEXT) == 3):
        raise TypeError("FEXT: expected a 3-D float64 array")
    if not (cnp.PyArray_Check(status) and cnp.PyArray_NDIM(<cnp.ndarray>status) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>status) == cnp.NPY_INT64
            and cnp.PyArray_ISCARRAY(<cnp.ndarray>status) and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>status)):
        raise TypeError("status: expected a 1-D C-contiguous writeable int64 array")
    cdef cnp.ndarray fe = <cnp.ndarray>FEXT
    cdef Arr af
    af.data, af.n0, af.n1 = NULL, 0, 6
    cdef Py_ssize_t B = aq.n0, L = t.n0, nf = cnp.PyArray_DIMS(fe)[0]
    cdef Py_ssize_t fl = cnp.PyArray_DIMS(fe)[1]
    if nf:
        take(FEXT, 3, False, b"FEXT", &af)  # (B, L * 6): FEXT itself; a reshape of a strided FEXT is a freed copy
    if (t.n1 != NT or av.n0 != B or ax.n0 != B or ao.n0 != B or cnp.PyArray_DIMS(<cnp.ndarray>status)[0] != B
            or (nf != 0 and (nf != B or fl != L or cnp.PyArray_DIMS(fe)[2] != 6))
            or not 0 <= start <= stop <= B):
        return -2
    cdef const int* ki = <const int*>t.data
    cdef cnp.int64_t* st = <cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>status)
    cdef Py_ssize_t b = start, e
    w.data, w.n0, w.n1 = NULL, 0, W  # no work array given: valid_state does not check one
    cdef double* wk = work_or_new(&w, ki, L, av.n1)
    cdef double* lw = NULL
    if lanes and L <= LANES_MAX_LINKS and lanes_fit(ki, L):
        lw = lanes_work(t.data, L, aq.n1, av.n1)  # NULL (out of memory): one state at a time
    with nogil:
        while b < stop:  # the groups of LANES states from multiples of LANES
            e = min((b // LANES + 1) * LANES, stop)
            if lw == NULL or e - b < LANES or not lanes_group(ki, t.data, L, &aq, &av, &ax, &af, &ao, &w, b,
                                                              lw, inverse, st):
                chunk_states(ki, t.data, L, &aq, &av, &ax, &af, &ao, &w, wk, inverse, b, e, st)
            b = e
    free(wk)
    free(lw)
    return 0


#: states per group of the lanes: dynamics_chunk's chunks split at multiples of it compute what
#: one chunk would (the batches' results do not depend on their threads)
BATCH_LANES = LANES


def batch_lanes(kt):
    """True when batches of this model's forward and inverse dynamics run in the lanes:
    every joint revolute, continuous, prismatic or a free-flyer at a root, at most
    LANES_MAX_LINKS links."""
    cdef Arr t
    take(kt, 2, False, b"kt", &t)
    if t.n1 != NT:
        raise TypeError("kt: not a model table")
    return t.n0 <= LANES_MAX_LINKS and lanes_fit(<const int*>t.data, t.n0)


cdef inline void state_rows(const Arr* aq, const Arr* av, const Arr* ax, const Arr* af, const Arr* ao,
                            Py_ssize_t b, Py_ssize_t L, Arr* q, Arr* v, Arr* x, Arr* f, Arr* o) noexcept nogil:
    """State b of a batch: its rows of Q, V, X and OUT, and its wrenches (L, 6) (af itself, (0, 6),
    for none)."""
    q[0], v[0], x[0], o[0] = row_of(aq, b, aq.n1), row_of(av, b, av.n1), row_of(ax, b, ax.n1), row_of(ao, b, ao.n1)
    f[0] = af[0]
    if af.n0:
        f[0] = row_of(af, b, 6 * L)
        f.n0, f.n1 = L, 6


cdef void chunk_states(const int* ki, const double* kf, Py_ssize_t L, const Arr* aq, const Arr* av,
                       const Arr* ax, const Arr* af, const Arr* ao, const Arr* w, double* wk,
                       bint inverse, Py_ssize_t start, Py_ssize_t stop, cnp.int64_t* st) noexcept nogil:
    """The states start..stop-1 of a batch one at a time (af: (0, 6) for no wrenches)."""
    cdef Arr q, v, x, f, o
    cdef Py_ssize_t b
    for b in range(start, stop):
        state_rows(aq, av, ax, af, ao, b, L, &q, &v, &x, &f, &o)
        st[b] = valid_state(ki, L, &q, &v, &x, &f, &o, w)
        if st[b] == 0:
            st[b] = state_dynamics(ki, kf, L, &q, &v, &x, &f, &o, wk, inverse)


cdef bint lanes_group(const int* ki, const double* kf, Py_ssize_t L, const Arr* aq, const Arr* av,
                      const Arr* ax, const Arr* af, const Arr* ao, const Arr* w, Py_ssize_t b0, double* lw,
                      bint inverse, cnp.int64_t* st) noexcept nogil:
    """Forward (or inverse) dynamics of the LANES states from b0 in the lanes (lanes.pxi), statuses 0
    (af: the batch's wrenches, (B, L * 6), or (0, 6) for none); False (nothing final written)
    when a state fails valid_state, a pivot lanes_pivot's test or a result is not finite: the
    caller then takes them one at a time, which gives each its status."""
    cdef Arr q, v, x, o, f
    cdef Py_ssize_t b
    for b in range(b0, b0 + LANES):
        state_rows(aq, av, ax, af, ao, b, L, &q, &v, &x, &f, &o)
        if valid_state(ki, L, &q, &v, &x, &f, &o, w):
            return False
    if not lanes_dynamics(ki, kf, L, aq.data + b0 * aq.n1, aq.n1, av.data + b0 * av.n1,
                          ax.data + b0 * ax.n1, av.n1, af.data + b0 * 6 * L if af.n0 else NULL,
                          ao.data + b0 * ao.n1, lw, inverse):
        return False
    for b in range(b0, b0 + LANES):
        st[b] = 0
    return True


cdef long forward_dynamics_passes(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                  double* work, const double* q, Py_ssize_t nq, const double* v,
                                  const double* tau, const double* fext, double* out,
                                  bint factors) noexcept nogil:
    """Twists, articulated masses, accelerations (0, or k + 1 for a singular articulated
    inertia of link k); with ``factors`` the articulated pass also keeps Ihat_k and Ihat_k^-1."""
    cdef Py_ssize_t j, k
    for j in range(nv):  # phi from inverse dynamics with qdd = 0
        out[j] = 0.0
    twist_forward_recursion(ki, kf, L, nv, q, nq, v, out, fext, work, False)
    k = articulated_backward_recursion(ki, kf, L, nv, tau, work, factors)
    if k >= 0:
        return k + 1
    acceleration_forward_recursion(ki, kf, L, nv, work, out)
    return 0


cdef inline cnp.ndarray new_array(int ndim, Py_ssize_t n):
    """An uninitialised float64 array of shape (n,) or (n, n), allocated through NumPy's C API
    (a tenth of ``np.empty``'s cost from Python)."""
    cdef cnp.npy_intp dims[2]
    dims[0] = n
    dims[1] = n
    return cnp.PyArray_EMPTY(ndim, dims, cnp.NPY_DOUBLE, 0)


cdef Py_ssize_t nv_of(object kt) except -1:
    """The model's nv from its table (0 for an array that is not one: the entry then says -2)."""
    cdef Arr t
    take(kt, 2, False, b"kt", &t)
    return model_nv(<const int*>t.data, t.n0) if t.n1 == NT else 0


def forward_dynamics_new(kt, work, q, v, tau):
    """forward_dynamics_fast into a new array, allocated here: the array, or the status when it
    is not 0 (the public calls' fast path)."""
    cdef cnp.ndarray out = new_array(1, nv_of(kt))
    cdef long status = dynamics(kt, work, q, v, tau, None, out, False)
    return out if status == 0 else status


def inverse_dynamics_new(kt, work, q, v, a):
    """inverse_dynamics_fast into a new array, allocated here: the array, or the status."""
    cdef cnp.ndarray out = new_array(1, nv_of(kt))
    cdef long status = dynamics(kt, work, q, v, a, None, out, True)
    return out if status == 0 else status


def work_shape(Py_ssize_t n_links, Py_ssize_t nv, Py_ssize_t n_modules):
    """(rows, W): the shape of a model's work array (tables.pxd ``work_rows``, core/layout.py's
    twin), for the Python layer that allocates it."""
    return work_rows(n_links, nv, n_modules), W


def cos_sin_array(x, c, s):
    """(cos x_i, sin x_i) into ``c`` and ``s`` by the geometry pass's branch-free ``cos_sin``
    (geometry.pxi: for |x_i| <= TRIG_LIMIT; for the tests, which hold it to 1 ulp of the C
    library), and whether ``poly_ok`` takes every x_i into its range (1 or 0); -2 when the
    lengths differ (nothing written)."""
    cdef double* px
    cdef double* pc
    cdef double* ps
    cdef Py_ssize_t n, nc, ns, i
    cdef double cs[2]
    doubles(x, 1, False, b"x", &px, &n)
    doubles(c, 1, True, b"c", &pc, &nc)
    doubles(s, 1, True, b"s", &ps, &ns)
    if nc != n or ns != n:
        return -2
    with nogil:
        for i in range(n):
            cos_sin(px[i], cs)
            pc[i] = cs[0]
            ps[i] = cs[1]
    return 1 if poly_ok(px, n) else 0


#: the largest |angle| the branch-free cos_sin takes (beyond it the geometry pass calls the C
#: library)
TRIG_RANGE = TRIG_LIMIT


def forward_dynamics_state(kt, work, q, v, tau, fext, out):
    """Joint accelerations of one state into ``out``; ``fext`` (0, 6) or (L, 6) (status: see
    the module docstring)."""
    return dynamics(kt, work, q, v, tau, fext, out, False)


def forward_dynamics_fast(kt, work, q, v, tau, out):
    """forward_dynamics_state without external wrenches."""
    return dynamics(kt, work, q, v, tau, None, out, False)


def inverse_dynamics_state(kt, work, q, v, a, fext, out):
    """Joint torques of one state into ``out``; ``fext`` (0, 6) or (L, 6) (status as above)."""
    return dynamics(kt, work, q, v, a, fext, out, True)


def inverse_dynamics_fast(kt, work, q, v, a, out):
    """inverse_dynamics_state without external wrenches."""
    return dynamics(kt, work, q, v, a, None, out, True)


def ode_rhs(kt, work, q, v, tau, fext, qdot, a):
    """The right-hand side of the first-order system ``y = (q, v)`` of an adaptive solver, in
    the coordinates q (numba's kernels/integrators.py ``ode_rhs``): ``qdot`` = dq/dt for the
    velocity v (configuration.pyx's rate), ``a`` the forward dynamics of (q, v, tau, fext) as
    :func:`forward_dynamics_state`.  Returns its status; -2 also for a ``qdot`` of other than
    nq entries (then nothing is computed, as for every status of the state's checks)."""
    cdef Arr t, w, aq, av, ax, af, ao, ar
    take(kt, 2, False, b"kt", &t)
    take(work, 2, True, b"work", &w)
    take(q, 1, False, b"q", &aq)
    take(v, 1, False, b"v", &av)
    take(tau, 1, False, b"tau", &ax)
    take(fext, 2, False, b"fext", &af)
    take(qdot, 1, True, b"qdot", &ar)
    take(a, 1, True, b"a", &ao)
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    cdef long status = valid_state(ki, L, &aq, &av, &ax, &af, &ao, &w)  # work's size too
    if status == 0 and (ar.n0 != aq.n0 or not table_fits(ki, L, aq.n0, av.n0)):
        status = -2
    if status:
        return status
    model_configuration_rate(ki, L, aq.data, av.data, ar.data)
    cdef double* wk = work_or_new(&w, ki, L, av.n0)
    status = state_dynamics(ki, t.data, L, &aq, &av, &ax, &af, &ao, wk, False)
    if w.n0 == 0:
        free(wk)
    return status
