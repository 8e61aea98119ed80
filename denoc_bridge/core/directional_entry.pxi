# The entries of the matrix-free derivatives, called from denoc_bridge/algorithms/directional.py.
# Every array is checked here before compiled code indexes it: its type, dtype and layout (a
# TypeError naming it, arrays.pxd's take), then the lengths (status -2: the table's joints,
# modules and parents must index within its arrays, ``work`` and ``buf`` be of the model's size,
# the vectors of its nq and nv, ``fext`` (0, any) or (L, 6)), then the values (status -1: q, v,
# tau, fext and the direction or weights finite, no zero quaternion or (cos, sin) pair).  The
# arithmetic runs without the GIL.

cdef extern from *:
    """
    #define DB_DIRECTIONAL_MIN_NORM (1e-12)
    """
    double MIN_NORM "DB_DIRECTIONAL_MIN_NORM"  # entry.pxi's: a smaller norm is not a rotation


cdef enum:  # doubles of the buffer per link and per DOF: Wp (24), Wb (24) per link, C (12 + 6) per DOF
    BUF_PER_LINK = 48
    BUF_PER_DOF = 18
    CHECK_AHEAD = 64  # rows ahead of the checks' pass (prefetch)


cdef struct State:  # one call's model, work arrays and state, checked
    const int* ki
    const double* kf
    Py_ssize_t L
    Py_ssize_t nq
    Py_ssize_t nv
    double* work
    double* buf
    const double* q
    const double* v
    const double* tau
    const double* fext  # (L, 6) or NULL


def buffer_size(Py_ssize_t L, Py_ssize_t nv):
    """Doubles of the buffer ``buf`` of a model of L links and nv DOFs."""
    return L * BUF_PER_LINK + nv * BUF_PER_DOF


cdef int arg(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """arrays.pxd's take, compiled once in this module (as entry.pxi's take_checked: inlined at
    every call, its error path would be copied at each)."""
    return inline_take(o, ndim, writable, name, a)


cdef struct Arrays:  # the state's arrays as the entries take them
    Arr kt
    Arr work
    Arr buf
    Arr q
    Arr v
    Arr tau
    Arr fext


cdef int take_state(object kt, object work, object buf, object q, object v, object tau, object fext,
                    Arrays* a) except -1:
    """The state's arrays into a (TypeError naming one that is not an ndarray of
    its dimensions, float64, C-contiguous and aligned, writeable for ``work`` and ``buf``);
    ``fext`` None is taken as (0, 6)."""
    arg(kt, 2, False, b"kt", &a.kt)
    arg(work, 2, True, b"work", &a.work)
    arg(buf, 1, True, b"buf", &a.buf)
    arg(q, 1, False, b"q", &a.q)
    arg(v, 1, False, b"v", &a.v)
    arg(tau, 1, False, b"tau", &a.tau)
    a.fext.data, a.fext.n0, a.fext.n1 = NULL, 0, 6
    if fext is not None:
        arg(fext, 2, False, b"fext", &a.fext)
    return 0


cdef long rows_status(const int* ki, Py_ssize_t L, Py_ssize_t nq, Py_ssize_t nv,
                      const double* q) noexcept nogil:
    """The table's joints and q's unit quaternions and (cos, sin) pairs, in one pass over the
    rows: -2 when a joint is of no known type, or not in order (each joint's first coordinate
    and velocity where the previous ones end, its number of velocities its type's, the last
    ending at nq and nv), or its normalised coordinates (NORM0, NORMSZ) are not within its own;
    else -1 for a zero quaternion or (cos, sin) pair in q (entry.pxi's valid_state), else 0.
    arrays.pxd's table_fits and parents_fit read two cache lines of every row (the columns NQ
    and PARENT on the second); the passes need neither (the parents are the modules'), so this
    reads the first line of a row, prefetched ahead, and the second only for a joint with
    normalised coordinates: the checks of a JVP on a 100,000-link chain 6.6 % of it in three
    passes, 3.6 % in one over two lines (perf)."""
    cdef Py_ssize_t k, j, iq = 0, iv = 0, i0, n
    cdef const int* i
    cdef double x
    cdef bint zero = False
    cdef int jt
    for k in range(L):
        i = ki + k * NI
        if k + CHECK_AHEAD < L:  # a light loop: further ahead than the passes' AHEAD
            prefetch(i + CHECK_AHEAD * NI)
        jt = joint_type(i)
        if jt > TRANSLATION or i[IDX_Q] != iq or i[IDX_V] != iv or i[NV] != JOINT_NV[jt]:
            return -2
        if jt == CONTINUOUS or jt == SPHERICAL or jt == FREEFLYER or jt == PLANAR:
            i0, n = i[NORM0], i[NORMSZ]
            if not (iq <= i0 and 0 < n and i0 + n <= iq + JOINT_NQ[jt]):
                return -2
            x = 0.0
            for j in range(i0, i0 + n):
                x += q[j] * q[j]
            zero = zero or not sqrt(x) >= MIN_NORM
        iq += JOINT_NQ[jt]
        iv += JOINT_NV[jt]
    if iq != nq or iv != nv:
        return -2
    return -1 if zero else 0


cdef long checked(const Arrays* a, State* s, const Arr* x, int n_in, int n) noexcept nogil:
    """The status of a call on the state arrays a and the vectors x[:n], the first n_in of them
    inputs: -2 when a length does not fit (the table's, the state's or a vector's, nv entries),
    -1 when a value is invalid (the state's or an input vector's), else 0."""
    cdef long status
    cdef int j
    if a.kt.n1 != NT:
        return -2
    s.ki, s.kf, s.L = <const int*>a.kt.data, a.kt.data, a.kt.n0
    s.nq, s.nv = model_nq(s.ki, s.L), model_nv(s.ki, s.L)
    if (a.work.n1 != W or a.work.n0 != work_rows(s.L, s.nv, n_modules(s.ki, s.L))
            or a.buf.n0 != s.L * BUF_PER_LINK + s.nv * BUF_PER_DOF or a.q.n0 != s.nq
            or a.v.n0 != s.nv or a.tau.n0 != s.nv
            or (a.fext.n0 != 0 and (a.fext.n0 != s.L or a.fext.n1 != 6))
            or not modules_fit(s.ki, s.L)):
        return -2
    for j in range(n):
        if x[j].n0 != s.nv:
            return -2
    s.work, s.buf, s.q, s.v, s.tau = a.work.data, a.buf.data, a.q.data, a.v.data, a.tau.data
    s.fext = a.fext.data if a.fext.n0 > 0 else NULL
    status = rows_status(s.ki, s.L, s.nq, s.nv, s.q)
    if status:
        return status
    if not (all_finite(s.q, s.nq) and all_finite(s.v, s.nv) and all_finite(s.tau, s.nv)
            and (s.fext == NULL or all_finite(s.fext, 6 * s.L))):
        return -1
    for j in range(n_in):
        if not all_finite(x[j].data, s.nv):
            return -1
    return 0


cdef long factorised_forward_dynamics(const State* s, double* qdd) noexcept nogil:
    """The forward dynamics' first two passes (000 Table 3), qdd = 0 for the wrenches w_k:
    the twists, the articulated factors and the geometry in ``work`` for the sweeps, which run
    step 2 (the accelerations) themselves; 0 or k + 1 (a singular articulated inertia of link
    k)."""
    cdef Py_ssize_t j, k
    for j in range(s.nv):
        qdd[j] = 0.0
    twist_forward_recursion(s.ki, s.kf, s.L, s.nv, s.q, s.nq, s.v, qdd, s.fext, s.work, False)
    k = articulated_backward_recursion(s.ki, s.kf, s.L, s.nv, s.tau, s.work, True)
    return k + 1 if k >= 0 else 0


cdef long jvp(const State* s, const double* dq, const double* dv, const double* dtau, double* qdd,
              double* out) noexcept nogil:
    """qdd = FD(q, v, tau) and out = M^-1 (dtau - dtau_dq dq - dtau_dv dv): the accelerations in
    the tangent forward sweep, the solve's step 1 in its backward sweep, then the solve's
    step 2."""
    cdef long status = factorised_forward_dynamics(s, qdd)
    if status:
        return status
    tangent_forward(s.ki, s.kf, s.L, s.nv, s.work, s.v, qdd, dq, dv, s.buf)
    status = finite_entries(qdd, s.nv)
    if status:
        return status
    tangent_backward(s.ki, s.kf, s.L, s.nv, s.work, dq, dtau, s.buf, out)
    acceleration_forward_links(s.ki, s.kf, s.L, s.nv, s.work, out, s.L)
    return finite_entries(out, s.nv)


cdef long vjp(const State* s, const double* lam, double* qdd, double* gq, double* gv,
              double* gtau) noexcept nogil:
    """qdd = FD(q, v, tau), gtau = mu = M^-1 lam, gq = -dtau_dq^T mu, gv = -dtau_dv^T mu: the
    solve's step 1, then the accelerations and its step 2 in the adjoint forward sweep."""
    cdef long status = factorised_forward_dynamics(s, qdd)
    if status:
        return status
    solve_backward(s.ki, s.kf, s.L, s.nv, s.work, lam, gtau)
    adjoint_forward(s.ki, s.kf, s.L, s.nv, s.work, s.v, qdd, gtau, True, s.buf)
    status = finite_entries(qdd, s.nv)
    if status:
        return status
    adjoint_backward(s.ki, s.kf, s.L, s.nv, s.work, gtau, s.buf, -1.0, gq, gv)
    status = finite_entries(gtau, s.nv)
    if status == 0:
        status = finite_entries(gq, s.nv)
    return status if status else finite_entries(gv, s.nv)


def forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out):
    """qdd = FD(q, v, tau) and out = dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv): the factorised
    forward dynamics, the tangent RNEA (one forward, one backward sweep) and one solve with the
    factors.  ``fext`` None, (0, any) for none, or (L, 6) in internal order; ``buf`` of
    buffer_size(L, nv) doubles.  Status: see the module docstring."""
    cdef Arrays a
    cdef Arr x[5]
    cdef State s
    cdef long status
    take_state(kt, work, buf, q, v, tau, fext, &a)
    arg(dq, 1, False, b"dq", &x[0])
    arg(dv, 1, False, b"dv", &x[1])
    arg(dtau, 1, False, b"dtau", &x[2])
    arg(qdd, 1, True, b"qdd", &x[3])
    arg(out, 1, True, b"out", &x[4])
    with nogil:
        status = checked(&a, &s, x, 3, 5)
        if status == 0:
            status = jvp(&s, x[0].data, x[1].data, x[2].data, x[3].data, x[4].data)
    return status


def forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau):
    """qdd = FD(q, v, tau), gtau = mu = M^-1 lam, gq = -dtau_dq^T mu, gv = -dtau_dv^T mu (the
    products of ``lam`` with dqdd_dq, dqdd_dv, dqdd_dtau).  Arguments and status as
    :func:`forward_dynamics_jvp_state`."""
    cdef Arrays a
    cdef Arr x[5]
    cdef State s
    cdef long status
    take_state(kt, work, buf, q, v, tau, fext, &a)
    arg(lam, 1, False, b"lam", &x[0])
    arg(qdd, 1, True, b"qdd", &x[1])
    arg(gq, 1, True, b"gq", &x[2])
    arg(gv, 1, True, b"gv", &x[3])
    arg(gtau, 1, True, b"gtau", &x[4])
    with nogil:
        status = checked(&a, &s, x, 1, 5)
        if status == 0:
            status = vjp(&s, x[0].data, x[1].data, x[2].data, x[3].data, x[4].data)
    return status


def tangent_sweeps_state(kt, work, buf, q, v, tau, fext, dq, dv, mu, qdd, jvp, gq, gv):
    """The sweeps alone at (q, v, qdd = FD(q, v, tau)), for tests: jvp = dtau_dq dq + dtau_dv dv
    (the tangent RNEA), gq = dtau_dq^T mu and gv = dtau_dv^T mu (its adjoint).  Arguments and
    status as :func:`forward_dynamics_jvp_state`."""
    cdef Arrays a
    cdef Arr x[7]
    cdef State s
    cdef long status
    take_state(kt, work, buf, q, v, tau, fext, &a)
    arg(dq, 1, False, b"dq", &x[0])
    arg(dv, 1, False, b"dv", &x[1])
    arg(mu, 1, False, b"mu", &x[2])
    arg(qdd, 1, True, b"qdd", &x[3])
    arg(jvp, 1, True, b"jvp", &x[4])
    arg(gq, 1, True, b"gq", &x[5])
    arg(gv, 1, True, b"gv", &x[6])
    with nogil:
        status = checked(&a, &s, x, 3, 7)
        if status == 0:
            status = factorised_forward_dynamics(&s, x[3].data)
        if status == 0:
            tangent_forward(s.ki, s.kf, s.L, s.nv, s.work, s.v, x[3].data, x[0].data, x[1].data, s.buf)
            status = finite_entries(x[3].data, s.nv)
        if status == 0:
            tangent_backward(s.ki, s.kf, s.L, s.nv, s.work, x[0].data, NULL, s.buf, x[4].data)
            adjoint_forward(s.ki, s.kf, s.L, s.nv, s.work, s.v, x[3].data, x[2].data, False, s.buf)
            adjoint_backward(s.ki, s.kf, s.L, s.nv, s.work, x[2].data, s.buf, 1.0, x[5].data, x[6].data)
    return status
