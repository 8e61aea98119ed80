# The entries of the loops module, called from denoc_bridge/constraints/loops.py, packed.py and
# denoc_bridge/simulation/loops.py.  Every array is checked here (type, dtype, layout: a
# TypeError naming it; then lengths and indices: status -2, nothing computed) before compiled
# code indexes it; a state that is not finite, a zero quaternion or (cos, sin) pair, or an
# option out of its range is status -1.
#
# ``pi`` (int64, (1 + L + nl, 6)) and ``pf`` (float64, (1 + L + nl, 30)) are the packed model
# of constraints/packed.py: row 0 of pi = [L, nl, m, nv, nq, 0]; the rows 1 .. L (the links, as
# Python packs them) are not read here, the table ``kt`` is the tree; the rows
# 1 + L + l the cut joints (loop_rows.pxi).  ``sb`` the float64 scratch of scratch_size(L, nv, m)
# numbers (the world kinematics first, then at
# ds_start(L, nv): phi, C, gamma, Q, Cr, Y, K, lam, rhs, zero, rows (int64), xs, ys), so that
# packed.py's views read the rows and the multipliers an entry left there.

def ds_start(Py_ssize_t L, Py_ssize_t nv):
    """Where the constraint rows begin in the scratch (the world kinematics come first)."""
    return rows_start(L, nv)


def scratch_size(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t m):
    """The numbers of the scratch ``sb`` of a model of L links, nv DOFs and m constraint rows."""
    return scratch_numbers(L, nv, m)


cdef long model_of(object kt, object work, Loop* lp) except -100:
    """The model's table and work array: 0, or -2 for a table whose joints, modules or parents
    do not index within its arrays, or a work array not of its size."""
    cdef Py_ssize_t d[2]
    cdef double* f
    cdef Py_ssize_t dw[2]
    doubles(kt, 2, False, b"kt", &f, d)
    doubles(work, 2, True, b"work", &lp.work, dw)
    if d[1] != NT:
        return -2
    lp.kf, lp.ki, lp.L = f, <const int*>f, d[0]
    lp.nq, lp.nv = model_nq(lp.ki, lp.L), model_nv(lp.ki, lp.L)
    if not (table_fits(lp.ki, lp.L, lp.nq, lp.nv) and modules_fit(lp.ki, lp.L)
            and parents_fit(lp.ki, lp.L)):
        return -2
    if dw[1] != W or dw[0] != work_rows(lp.L, lp.nv, n_modules(lp.ki, lp.L)):
        return -2
    return 0


cdef int packed_of(object pi, object pf, object sb, Packed* pk) except -1:
    """The data pointers and lengths of pi (int64), pf (float64) and sb (float64, writeable)."""
    array_of(pi, 2, cnp.NPY_INT64, False, b"pi", <void**>&pk.ii, pk.dpi)
    doubles(pf, 2, False, b"pf", &pk.ff, pk.dpf)
    doubles(sb, 1, True, b"sb", &pk.s, pk.d)
    return 0


cdef long cuts_of(const Packed* pk, Loop* lp) noexcept nogil:
    """The cut joints of ``pi``, ``pf`` and the scratch ``sb`` carved into lp.fr and lp.ds: 0, or
    -2 for a length, a link, a row or a term that does not fit the model (the constraint rows
    must follow one another from row 0 to m, each coupling's terms be TERM rows of links of the
    tree), -1 for a cut joint's number that is not finite."""
    return stacked_cuts_of(pk, lp, 0, NULL)


cdef void widen_reach(Loop* lp, Py_ssize_t nk, const double* Kc) noexcept nogil:
    """The reach (cu.n, cu.hi) widened to the DOFs the nk constant rows Kc touch: hi past their
    last nonzero column, n past the link holding it (links hold increasing DOFs)."""
    cdef Py_ssize_t j, c, k, hi = lp.cu.hi
    for j in range(nk):
        for c in range(hi, lp.nv):
            if Kc[j * lp.nv + c] != 0.0:
                hi = c + 1
    for k in range(lp.cu.n, lp.L):
        if lp.ki[k * NI + NV] > 0 and lp.ki[k * NI + IDX_V] < hi:
            lp.cu.n = k + 1
            lp.cu.hi = max(hi, lp.ki[k * NI + IDX_V] + lp.ki[k * NI + NV])


cdef long stacked_cuts_of(const Packed* pk, Loop* lp, Py_ssize_t nk, const double* Kc) noexcept nogil:
    """cuts_of with nk constant rows Kc (nk, nv; finite, checked by the caller) stacked ahead of
    the cut joints' rows, J = [Kc; C(q)] (a MimicModel with loops: Kc = K, 004 eqs. 12-15 on the
    tree): the scratch ``sb`` holds nk + m rows (scratch_numbers(L, nv, nk + m)), the reach
    covers Kc's columns, and lp.ds.nk, lp.ds.Kc keep them for constraint_rows."""
    cdef const Py_ssize_t* dpi = pk.dpi
    cdef const Py_ssize_t* dpf = pk.dpf
    cdef const Py_ssize_t* d = pk.d
    cdef const cnp.int64_t* ii = pk.ii
    cdef const double* ff = pk.ff
    cdef double* s = pk.s
    cdef Py_ssize_t L = lp.L, nv = lp.nv, nl, m, cut, t, c, r = 0, last = -1, at
    cdef const cnp.int64_t* row
    cdef Cuts* cu = &lp.cu
    if nk < 0 or (nk > 0 and Kc == NULL):
        return -2
    if dpi[1] != LI or dpf[1] != LF or dpi[0] < 1 + L or dpf[0] != dpi[0]:
        return -2
    nl, m = ii[1], ii[2]
    if ii[0] != L or ii[3] != nv or ii[4] != lp.nq or nl < 0 or m < 0 or dpi[0] != 1 + L + nl:
        return -2
    if d[0] != scratch_numbers(L, nv, nk + m):
        return -2
    cu.nl, cu.m = nl, m
    cu.li, cu.lf = ii + LI * (1 + L), ff + LF * (1 + L)
    for cut in range(nl):
        row = cu.li + LI * cut
        if not CUT_WELD <= row[0] <= CUT_TERM:
            return -2
        if row[0] == CUT_TERM:
            if not 0 <= row[1] < L:
                return -2
            last = max(last, <Py_ssize_t>row[1])
            continue
        if row[3] != r:  # the rows in order, one after the other
            return -2
        r += cut_rows(row[0])
        if row[0] == CUT_COUPLING:
            if not (0 <= row[4] and 0 <= row[5] and row[4] + row[5] <= nl):
                return -2
            for t in range(row[4], row[4] + row[5]):
                if cu.li[LI * t] != CUT_TERM:
                    return -2
                if not isfinite(cu.lf[LF * t]):
                    return -1
            if not isfinite(cu.lf[LF * cut]):
                return -1
            continue
        if not (-1 <= row[1] < L and -1 <= row[2] < L):
            return -2
        last = max(last, <Py_ssize_t>row[1], <Py_ssize_t>row[2])
        for c in range(LF):
            if not isfinite(cu.lf[LF * cut + c]):
                return -1
    if r != m:
        return -2
    cu.n = last + 1  # the reach: the links before n, their DOFs before hi
    cu.hi = 0 if last < 0 else lp.ki[last * NI + IDX_V] + lp.ki[last * NI + NV]
    widen_reach(lp, nk, Kc)
    lp.ds.nk, lp.ds.Kc = nk, Kc
    m = nk + m  # the scratch's rows: the constant ones, then the cut joints'
    lp.fr.R = s
    lp.fr.p = s + 9 * L
    lp.fr.Pw = lp.fr.p + 3 * L
    lp.fr.w = lp.fr.Pw + 6 * nv
    lp.fr.od = lp.fr.w + 3 * L
    lp.fr.wd0 = lp.fr.od + 3 * L
    lp.fr.odd0 = lp.fr.wd0 + 3 * L
    lp.fr.J = lp.fr.odd0 + 3 * L
    at = rows_start(L, nv)
    lp.ds.phi = s + at
    lp.ds.C = lp.ds.phi + m
    lp.ds.gamma = lp.ds.C + m * nv
    lp.ds.Q = lp.ds.gamma + m
    lp.ds.Cr = lp.ds.Q + m * nv
    lp.ds.Y = lp.ds.Cr + m * nv
    lp.ds.K = lp.ds.Y + m * nv
    lp.ds.lam = lp.ds.K + m * m
    lp.ds.rhs = lp.ds.lam + m
    lp.ds.zero = lp.ds.rhs + m
    lp.ds.rows = <cnp.int64_t*>(lp.ds.zero + nv)
    lp.ds.xs = <double*>(lp.ds.rows + m)
    lp.ds.ys = lp.ds.xs + nv
    return 0


cdef bint finite(const double* x, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t j
    for j in range(n):
        if not isfinite(x[j]):
            return False
    return True


cdef int vector(object o, bint writable, const char* name, double** data, Py_ssize_t* n) except -1:
    """The data pointer and length of a 1-D float64 array (else TypeError)."""
    cdef Py_ssize_t d[2]
    doubles(o, 1, writable, name, data, d)
    n[0] = d[0]
    return 0


def loop_rows_state(kt, work, pi, pf, sb, q, v, bint with_bias):
    """phi, C and (with_bias) Cdot qdot of every cut joint of the tree at (q, v) into the
    scratch ``sb`` (read them at ds_start: phi (m,), C (m, nv), gamma (m,)): the world
    kinematics and the rows, nothing else.  0, -1 for a state that is not finite or a cut joint's
    number that is not, -2 for a length or an index that does not fit."""
    cdef Loop lp
    cdef Packed pk
    cdef double* aq
    cdef double* av
    cdef Py_ssize_t nq, nv
    packed_of(pi, pf, sb, &pk)
    vector(q, False, b"q", &aq, &nq)
    vector(v, False, b"v", &av, &nv)
    cdef long status = model_of(kt, work, &lp)
    if status == 0:
        status = cuts_of(&pk, &lp)
    if status == 0 and (nq != lp.nq or nv != lp.nv):
        status = -2
    if status == 0:
        status = configuration_status(lp.ki, lp.L, aq)
    if status == 0 and with_bias and not finite(av, lp.nv):
        status = -1
    if status:
        return status
    constraint_rows(&lp, aq, av, with_bias)
    return 0


def accelerations_state(kt, work, pi, pf, sb, q, v, tau, fext, double alpha, double beta, double rtol, a):
    """The constrained accelerations (004 eqs. 13-14, loop_accelerations) into ``a`` (nv):
    (status, rank), lambda and the independent rows' indices left in the scratch (packed.py's
    views).  ``fext`` (0, 6) for no wrenches or (L, 6) in internal order.  Status 0, k + 1 for a
    singular articulated inertia of link k, -1 for a state, an option (alpha, beta >= 0, rtol in
    [0, 1)) or a result that is not finite, -2 for a length or an index that does not fit,
    -3 for a singular C M^-1 C^T."""
    cdef Loop lp
    cdef double* aq
    cdef double* av
    cdef double* at
    cdef double* af
    cdef double* aa
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t nq, nv, nt, na
    cdef Py_ssize_t rank = 0
    cdef Packed pk
    packed_of(pi, pf, sb, &pk)
    vector(q, False, b"q", &aq, &nq)
    vector(v, False, b"v", &av, &nv)
    vector(tau, False, b"tau", &at, &nt)
    vector(a, True, b"a", &aa, &na)
    doubles(fext, 2, False, b"fext", &af, d)
    cdef long status = model_of(kt, work, &lp)
    if status == 0:
        status = cuts_of(&pk, &lp)
    if status == 0 and (nq != lp.nq or nv != lp.nv or nt != lp.nv or na != lp.nv
                        or (d[0] != 0 and (d[0] != lp.L or d[1] != 6))):
        status = -2
    if status == 0:
        status = configuration_status(lp.ki, lp.L, aq)
    if status == 0 and not (finite(av, lp.nv) and finite(at, lp.nv) and finite(af, d[0] * d[1])):
        status = -1
    if status == 0 and not (isfinite(alpha) and alpha >= 0.0 and isfinite(beta) and beta >= 0.0
                            and 0.0 <= rtol < 1.0):
        status = -1
    if status:
        return status, 0
    status = loop_accelerations(&lp, aq, av, at, af if d[0] else NULL, alpha, beta, rtol, aa, &rank)
    return status, rank


def project_state(kt, work, pi, pf, sb, q, v, double rtol, double tol, long max_iter, qn):
    """Project (q, v) onto the loops in place (project_loops; ``qn``: nq of scratch): (status, max
    |phi| at the end, at the start).  Status 0, k + 1 for a singular articulated inertia of link
    k, -1 for a state that is not finite or an option out of its range (rtol in [0, 1), tol
    >= 0, max_iter >= 0), -2 for a length or an index that does not fit (nothing computed), -3
    for a singular C M^-1 C^T, -4 when the positions do not converge in max_iter steps."""
    cdef Loop lp
    cdef Packed pk
    cdef double* aq
    cdef double* av
    cdef double* an
    cdef Py_ssize_t nq, nv, nn
    cdef double err = 0.0, err0 = 0.0
    packed_of(pi, pf, sb, &pk)
    vector(q, True, b"q", &aq, &nq)
    vector(v, True, b"v", &av, &nv)
    vector(qn, True, b"qn", &an, &nn)
    cdef long status = model_of(kt, work, &lp)
    if status == 0:
        status = cuts_of(&pk, &lp)
    if status == 0 and (nq != lp.nq or nv != lp.nv or nn != lp.nq):
        status = -2
    if status == 0:
        status = configuration_status(lp.ki, lp.L, aq)
    if status == 0 and not finite(av, lp.nv):
        status = -1
    if status == 0 and not (0.0 <= rtol < 1.0 and tol >= 0.0 and isfinite(tol) and max_iter >= 0):
        status = -1
    if status:
        return status, 0.0, 0.0
    status = project_loops(&lp, aq, av, rtol, tol, max_iter, an, &err, &err0)
    return status, err, err0
