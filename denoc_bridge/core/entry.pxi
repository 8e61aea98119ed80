# Entries: one call per public algorithm (denoc_bridge/kernels/entry.py), with the numba
# entries' arguments and statuses.
#
# Each entry takes plain objects and checks them in C before any pointer is indexed: an
# argument that is not an ndarray of the expected dimensions, float64 in native byte order,
# C-contiguous and aligned (and writeable for ``work`` and ``out``) raises TypeError, as the
# numba entries' explicit signatures do (the Python layer then converts the arguments); read-only
# inputs are accepted.  Then the lengths and values: the status is 0 = done, -1 = a value is
# invalid (not finite, a zero quaternion or (cos, sin) pair), -2 = a length is wrong, -3 = the
# inputs are finite but the result is not, k + 1 = the articulated inertia of link k is
# singular.  An empty ``work`` (0 rows) asks the entry to allocate its own.

cdef extern from *:
    """
    #define DB_MIN_NORM (1e-12)
    #define DB_OVERFLOW (-3)
    """
    double MIN_NORM "DB_MIN_NORM"
    long OVERFLOW "DB_OVERFLOW"


cdef struct Arr:
    double* data
    Py_ssize_t n0
    Py_ssize_t n1


cdef int take(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """The data pointer and lengths of ``o`` (TypeError unless an ndarray of ``ndim``
    dimensions, float64 in native byte order, C-contiguous and aligned, and writeable when
    ``writable``)."""
    cdef cnp.ndarray x
    if not cnp.PyArray_Check(o):
        raise TypeError(f"{name.decode()}: expected a numpy.ndarray, got {type(o).__name__}")
    x = <cnp.ndarray>o
    if (cnp.PyArray_NDIM(x) != ndim or cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE
            or not cnp.PyArray_ISCARRAY_RO(x) or not cnp.PyArray_ISNOTSWAPPED(x)
            or (writable and not cnp.PyArray_ISWRITEABLE(x))):
        raise TypeError(f"{name.decode()}: expected a {ndim}-D C-contiguous aligned float64 array"
                        f"{' (writeable)' if writable else ''}, got {(<object>x).dtype} {(<object>x).shape}"
                        f" ({(<object>x).flags})".replace("\n", " "))
    a.data = <double*>cnp.PyArray_DATA(x)
    a.n0 = cnp.PyArray_DIMS(x)[0]
    a.n1 = cnp.PyArray_DIMS(x)[1] if ndim == 2 else 1
    return 0


cdef inline Py_ssize_t model_nq(const int* ki, Py_ssize_t L) noexcept nogil:
    return ki[(L - 1) * NI + IDX_Q] + ki[(L - 1) * NI + NQ] if L else 0


cdef inline Py_ssize_t model_nv(const int* ki, Py_ssize_t L) noexcept nogil:
    return ki[(L - 1) * NI + IDX_V] + ki[(L - 1) * NI + NV] if L else 0


cdef long valid_state(const int* ki, Py_ssize_t L, const Arr* q, const Arr* v, const Arr* x,
                      const Arr* fext, const Arr* out, const Arr* work) noexcept nogil:
    """0 if the lengths fit the model (nv entries for v, x and out; fext (0, any) or (L, 6);
    work empty or the model's) and the values are finite with non-zero quaternions and
    (cos, sin) pairs; -2 for a wrong length, -1 for a wrong value."""
    cdef Py_ssize_t nv = model_nv(ki, L)
    cdef Py_ssize_t k, j, i0
    cdef double s
    if q.n0 != model_nq(ki, L) or v.n0 != nv or x.n0 != nv or out.n0 != nv:
        return -2
    if fext.n0 != 0 and (fext.n0 != L or fext.n1 != 6):  # (0, any): no wrenches
        return -2
    if work.n0 != 0 and (work.n1 != W or work.n0 != work_rows(L, nv, n_modules(ki, L))):
        return -2
    for j in range(q.n0):
        if not isfinite(q.data[j]):
            return -1
    for j in range(nv):
        if not (isfinite(v.data[j]) and isfinite(x.data[j])):
            return -1
    for j in range(fext.n0 * 6):
        if not isfinite(fext.data[j]):
            return -1
    for k in range(L):
        i0 = ki[k * NI + NORM0]
        if i0 >= 0:
            s = 0.0
            for j in range(ki[k * NI + NORMSZ]):
                s += q.data[i0 + j] * q.data[i0 + j]
            if not sqrt(s) >= MIN_NORM:
                return -1
    return 0


cdef inline long finite_result(const double* out, Py_ssize_t n) noexcept nogil:
    """0 if every entry of ``out`` is finite, else OVERFLOW."""
    cdef Py_ssize_t j
    for j in range(n):
        if not isfinite(out[j]):
            return OVERFLOW
    return 0


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
    cdef const double* kf = t.data
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    cdef long status = valid_state(ki, L, &aq, &av, &ax, &af, &ao, &w)
    if status:
        return status
    cdef Py_ssize_t nv = av.n0
    cdef double* wk = w.data
    cdef const double* fe = af.data if af.n0 > 0 else NULL
    if w.n0 == 0:  # allocate a work array for this call
        wk = <double*>malloc(work_rows(L, nv, n_modules(ki, L)) * W * sizeof(double))
        if wk == NULL:
            raise MemoryError()
    if inverse:
        twist_forward_recursion(ki, kf, L, nv, aq.data, aq.n0, av.data, ax.data, fe, wk, False)
        wrench_backward_recursion(ki, kf, L, nv, ax.data, wk, ao.data)
    else:
        status = forward_dynamics_passes(ki, kf, L, nv, wk, aq.data, aq.n0, av.data, ax.data, fe,
                                         ao.data, False)
    if w.n0 == 0:
        free(wk)
    return status if status else finite_result(ao.data, nv)


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
