# Entries: the arguments of the numba functions they replaced, with the model's table ``kt`` (float64, NT columns,
# as the tree module's entries) in place of its int32 view, checked in C before any pointer is
# indexed (arrays.pxd: TypeError for an argument that is not a C-contiguous aligned float64
# array of the expected dimensions, or a read-only output).  Then the lengths: every joint of
# the table (its type, q and v index) must fit the arrays, else the status is -2 and nothing is
# written (``table_fits``, arrays.pxd).

cdef void run_map(int kind, const int* ki, Py_ssize_t L, Py_ssize_t B, const double* pa,
                  Py_ssize_t sa, const double* pb, Py_ssize_t sb, double* po,
                  Py_ssize_t so) noexcept nogil:
    """The map ``kind`` on B states, rows sa, sb and so doubles apart."""
    cdef Py_ssize_t s
    for s in range(B):
        if kind == 0:
            model_integrate(ki, L, pa + s * sa, pb + s * sb, po + s * so)
        elif kind == 1:
            model_difference(ki, L, pa + s * sa, pb + s * sb, po + s * so)
        elif kind == 2:
            model_configuration_rate(ki, L, pa + s * sa, pb + s * sb, po + s * so)
        else:
            model_dexpinv(ki, L, pa + s * sa, pb + s * sb, po + s * so)


cdef int config_map(object kt, object a, object b, object out, int kind, bint batch,
                    const char* na, const char* nb) except -100:
    """One of the four maps (kind 0 integrate, 1 difference, 2 rate, 3 dexpinv) on one state
    or, with ``batch``, on each row (GIL released): 0, or -2 for lengths that do not fit."""
    cdef Arr t, x, y, o
    cdef int nd = 2 if batch else 1
    take(kt, 2, False, b"kt", &t)
    take(a, nd, False, na, &x)
    take(b, nd, False, nb, &y)
    take(out, nd, True, b"out", &o)
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    # the lengths of q (or xi), v and out: the last axis; a batch's states: the first
    cdef Py_ssize_t la = x.n1 if batch else x.n0
    cdef Py_ssize_t lb = y.n1 if batch else y.n0
    cdef Py_ssize_t lo = o.n1 if batch else o.n0
    cdef Py_ssize_t B = x.n0 if batch else 1
    cdef Py_ssize_t nq = la if kind != 3 else model_nq(ki, L)  # dexpinv reads no configuration
    cdef Py_ssize_t nv = lb if kind != 1 else lo
    if ((kind == 0 or kind == 2) and lo != nq) or (kind == 1 and lb != nq) \
            or (kind == 3 and (la != nv or lo != nv)):
        return -2
    if (batch and (y.n0 != B or o.n0 != B)) or not table_fits(ki, L, nq, nv):
        return -2
    if batch:
        with nogil:
            run_map(kind, ki, L, B, x.data, la, y.data, lb, o.data, lo)
    else:
        run_map(kind, ki, L, 1, x.data, la, y.data, lb, o.data, lo)
    return 0


def integrate(kt, q, v, out):
    """out = q (+) v, joint by joint (out may be q); 0, or -2 for lengths that do not fit."""
    return config_map(kt, q, v, out, 0, False, b"q", b"v")


def difference(kt, q0, q1, out):
    """out = q1 (-) q0 (tangent at q0); 0, or -2 for lengths that do not fit."""
    return config_map(kt, q0, q1, out, 1, False, b"q0", b"q1")


def configuration_rate(kt, q, v, out):
    """out = dq/dt of the coordinates for the velocity v (out may be q); 0, or -2."""
    return config_map(kt, q, v, out, 2, False, b"q", b"v")


def dexpinv(kt, xi, v, out):
    """out = dexp_xi^-1 v (RKMK, truncated after the second bracket; out may be v); 0, or -2."""
    return config_map(kt, xi, v, out, 3, False, b"xi", b"v")


def integrate_batch(kt, Q, V, OUT):
    """integrate on each row of (B, nq) Q and (B, nv) V into (B, nq) OUT (GIL released)."""
    return config_map(kt, Q, V, OUT, 0, True, b"Q", b"V")


def difference_batch(kt, Q0, Q1, OUT):
    """difference on each row of (B, nq) Q0, Q1 into (B, nv) OUT (GIL released)."""
    return config_map(kt, Q0, Q1, OUT, 1, True, b"Q0", b"Q1")
