# The entries of a model with mimic joints as constraints (denoc_bridge/constraints/mimic.py,
# whose module docstring derives them; numba's kernels/gim_mimic.py and kernels/mimic.py entries,
# which they replace), on the tree's compiled passes at the expanded state q_full = G q_r + o,
# v_full = G v_r: the inverse dynamics tau_r = G^T ID(q_full, G v_r, G a_r), the GIM
# M_r = G^T M G, and its inverse M_r^-1 = (G^T M G)^-1 = P[i, i] with P = M^-1 - W (K W)^-1 W^T,
# W = M^-1 K^T, K the mimic rows e_s - mult e_m, from the tree's inverse GIM (no dense inverse);
# and the forward dynamics by the Lagrange form, O(n) per mimic joint (mimic_accelerations).
#
# The maps come packed by denoc_bridge/multibody/mimic.py ``pack_maps``: imap = [nq_r, nv_r, nc, nv,
# q_keep (nq_r), v_keep (nv_r), s_q, m_q, s_v, m_v, circ (nc each), col (nv)] (int64) and
# fmap = [mult, off (nc each), scale (nv)] (their struct MimicMaps is in tree.pxd, for the runs of
# run.pyx); every index is checked against the tree before use.

cdef inline bint indices_in(const cnp.int64_t* x, Py_ssize_t n, Py_ssize_t end) noexcept nogil:
    """True when the n indices x are in 0 .. end - 1."""
    cdef Py_ssize_t j
    for j in range(n):
        if not 0 <= x[j] < end:
            return False
    return True


cdef long mimic_maps(object imap, object fmap, Py_ssize_t nqf, Py_ssize_t nvf, MimicMaps* mm) except -100:
    """The maps of :func:`pack` into ``mm``: TypeError for an array of another kind, -2 when their
    lengths do not fit one another or an index leaves the tree's nqf coordinates or nvf DOFs."""
    cdef void* p
    cdef Py_ssize_t ni, nf, o, j
    array_of(imap, 1, cnp.NPY_INT64, False, b"imap", &p, &ni)
    cdef const cnp.int64_t* im = <const cnp.int64_t*>p
    array_of(fmap, 1, cnp.NPY_DOUBLE, False, b"fmap", &p, &nf)
    if ni < 4 or im[3] != nvf or min(im[0], im[1], im[2]) < 0:
        return -2
    mm.nq, mm.nv, mm.nc = im[0], im[1], im[2]
    if ni != 4 + mm.nq + mm.nv + 5 * mm.nc + nvf or nf != 2 * mm.nc + nvf:
        return -2
    o = 4
    mm.q_keep, mm.v_keep = im + o, im + o + mm.nq
    o += mm.nq + mm.nv
    mm.s_q, mm.m_q, mm.s_v = im + o, im + o + mm.nc, im + o + 2 * mm.nc
    mm.m_v, mm.circ, mm.col = im + o + 3 * mm.nc, im + o + 4 * mm.nc, im + o + 5 * mm.nc
    mm.mult, mm.off, mm.scale = <const double*>p, <const double*>p + mm.nc, <const double*>p + 2 * mm.nc
    if not (indices_in(mm.q_keep, mm.nq, nqf) and indices_in(mm.v_keep, mm.nv, nvf)
            and indices_in(mm.s_v, mm.nc, nvf) and indices_in(mm.m_v, mm.nc, nvf)
            and indices_in(mm.col, nvf, mm.nv)):
        return -2
    for j in range(mm.nc):  # a continuous pair's two coordinates, else one
        if not (0 <= mm.s_q[j] < nqf - (mm.circ[j] != 0) and 0 <= mm.m_q[j] < nqf - (mm.circ[j] != 0)):
            return -2
    return 0


cdef void expand_configuration(const MimicMaps* mm, const double* qr, double* qf) noexcept nogil:
    """qf = G q_r + offset: the kept coordinates, then each mimic joint's from its mimicked
    joint's (a continuous mimic joint: angle = mult atan2(sin, cos) + off)."""
    cdef Py_ssize_t i, j
    cdef double angle
    for i in range(mm.nq):
        qf[mm.q_keep[i]] = qr[i]
    for j in range(mm.nc):
        if mm.circ[j]:
            angle = mm.mult[j] * atan2(qf[mm.m_q[j] + 1], qf[mm.m_q[j]]) + mm.off[j]
            qf[mm.s_q[j]] = cos(angle)
            qf[mm.s_q[j] + 1] = sin(angle)
        else:
            qf[mm.s_q[j]] = mm.mult[j] * qf[mm.m_q[j]] + mm.off[j]


cdef void expand_velocity(const MimicMaps* mm, Py_ssize_t nvf, const double* xr,
                          double* xf) noexcept nogil:
    """xf = G x_r."""
    cdef Py_ssize_t i
    for i in range(nvf):
        xf[i] = xr[mm.col[i]] * mm.scale[i]


cdef inline void reduce_forces(const MimicMaps* mm, const double* tf, double* out) noexcept nogil:
    """out = G^T tf: a kept DOF's entry plus multiplier times each of its mimic DOFs'."""
    cdef Py_ssize_t i, j
    for i in range(mm.nv):
        out[i] = tf[mm.v_keep[i]]
    for j in range(mm.nc):  # col: the mimicked DOF's reduced index
        out[mm.col[mm.s_v[j]]] += mm.mult[j] * tf[mm.s_v[j]]


cdef void reduced_mass(const MimicMaps* mm, const double* M, Py_ssize_t nvf, double* R,
                       double* out) noexcept nogil:
    """M_r = G^T M G into ``out`` (nv, nv) from the tree's M (nvf, nvf); ``R``: nv nvf zeros."""
    cdef Py_ssize_t nv = mm.nv, i, j
    for i in range(nvf):  # R = G^T M
        for j in range(nvf):
            R[mm.col[i] * nvf + j] += mm.scale[i] * M[i * nvf + j]
    for i in range(nv * nv):
        out[i] = 0.0
    for i in range(nv):  # out = R G
        for j in range(nvf):
            out[i * nv + mm.col[j]] += R[i * nvf + j] * mm.scale[j]


cdef long reduced_inverse(const MimicMaps* mm, const double* Minv, Py_ssize_t nvf, double* scratch,
                          double* out) noexcept nogil:
    """M_r^-1 = P[i, i] into ``out`` (nv, nv) from the tree's M^-1 (nvf, nvf); ``scratch``: nvf nc
    + nc nc + nc nv doubles.  0, or -4 when K W = K M^-1 K^T is not positive definite."""
    cdef Py_ssize_t nv = mm.nv, nc = mm.nc, a, b, i, j, m, r
    cdef double* Wt = scratch  # W = M^-1 K^T (nvf, nc)
    cdef double* S = Wt + nvf * nc  # K W, then its Cholesky factor (lower)
    cdef double* Y = S + nc * nc  # Y = L^-1 W[i]^T (nc, nv)
    cdef double s, x
    for a in range(nv):
        for b in range(nv):
            out[a * nv + b] = Minv[mm.v_keep[a] * nvf + mm.v_keep[b]]
    if nc == 0:
        return 0
    for i in range(nvf):
        for r in range(nc):
            Wt[i * nc + r] = Minv[i * nvf + mm.s_v[r]] - mm.mult[r] * Minv[i * nvf + mm.m_v[r]]
    for a in range(nc):
        for r in range(nc):
            S[a * nc + r] = Wt[mm.s_v[a] * nc + r] - mm.mult[a] * Wt[mm.m_v[a] * nc + r]
    if not cholesky_factor(S, nc, nc):
        return -4
    for b in range(nv):
        for j in range(nc):
            s = Wt[mm.v_keep[b] * nc + j]
            for m in range(j):
                s -= S[j * nc + m] * Y[m * nv + b]
            Y[j * nv + b] = s / S[j * nc + j]
    for a in range(nv):  # P = M^-1[i, i] - Y^T Y, symmetric
        for b in range(a, nv):
            s = 0.0
            for j in range(nc):
                s += Y[j * nv + a] * Y[j * nv + b]
            x = 0.5 * (out[a * nv + b] + out[b * nv + a]) - s
            out[a * nv + b] = x
            out[b * nv + a] = x
    return 0


cdef double* scratch_and_work(Arr* w, const int* ki, Py_ssize_t L, Py_ssize_t nvf, Py_ssize_t n,
                              double** wk) except NULL:
    """n zeroed doubles of scratch, and in ``wk`` the caller's work array or a new one
    (work_or_new); :func:`release` frees what was allocated here."""
    wk[0] = work_or_new(w, ki, L, nvf)
    cdef double* scratch = <double*>calloc(n + 1, sizeof(double))
    if scratch == NULL:
        release(w, wk[0], NULL)
        raise MemoryError()
    return scratch


cdef inline void release(const Arr* w, double* wk, double* scratch) noexcept nogil:
    """Free the scratch of :func:`scratch_and_work`, and its work array if it made one."""
    free(scratch)
    if w.n0 == 0:
        free(wk)


cdef long mimic_call(object kt, object work, object imap, object fmap, Py_ssize_t nqf, object qr, object out,
                     int out_dims, Arr* t, Arr* w, Arr* aq, Arr* ao, MimicMaps* mm) except -100:
    """The checks the mimic entries share: TypeError for an array of another kind; -2 for a map
    or a length that does not fit (``out`` of ``out_dims`` dimensions, nv_r each), -1 for a qr
    that is not finite."""
    cdef Py_ssize_t j
    take(kt, 2, False, b"kt", t)
    take(work, 2, True, b"work", w)
    take(qr, 1, False, b"qr", aq)
    take(out, out_dims, True, b"out", ao)
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nvf = model_nv(ki, L)
    if nqf != model_nq(ki, L):
        return -2
    cdef long status = mimic_maps(imap, fmap, nqf, nvf, mm)
    if status == 0 and (aq.n0 != mm.nq or ao.n0 != mm.nv or ao.n1 != (mm.nv if out_dims == 2 else 1)
                        or (w.n0 != 0 and (w.n1 != W or w.n0 != work_rows(L, nvf, n_modules(ki, L))))):
        status = -2
    if status:
        return status
    for j in range(mm.nq):
        if not isfinite(aq.data[j]):
            return -1
    return 0


def mimic_inverse_dynamics(kt, work, imap, fmap, Py_ssize_t nqf, qr, vr, ar, out):
    """tau_r = G^T ID(q_full, G v_r, G a_r) of one state without external wrenches (equals
    ``pin.rnea`` of Pinocchio's mimic model) into ``out`` (nv,): 0, -1 (a value that is not
    finite or a zero quaternion), -2 (a length or a map that does not fit) or -3 (overflow)."""
    cdef Arr t, w, aq, ao, av, aa, qfa, vfa, afa, tfa, fe
    cdef MimicMaps mm
    cdef Py_ssize_t j
    cdef long status = mimic_call(kt, work, imap, fmap, nqf, qr, out, 1, &t, &w, &aq, &ao, &mm)
    take(vr, 1, False, b"vr", &av)
    take(ar, 1, False, b"ar", &aa)
    if status == 0 and (av.n0 != mm.nv or aa.n0 != mm.nv):
        status = -2
    if status:
        return status
    for j in range(mm.nv):
        if not (isfinite(av.data[j]) and isfinite(aa.data[j])):
            return -1
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nvf = model_nv(ki, L)
    cdef double* wk
    cdef double* qf = scratch_and_work(&w, ki, L, nvf, nqf + 3 * nvf, &wk)
    qfa.data, qfa.n0, qfa.n1 = qf, nqf, 1
    vfa.data, vfa.n0, vfa.n1 = qf + nqf, nvf, 1
    afa.data, afa.n0, afa.n1 = qf + nqf + nvf, nvf, 1
    tfa.data, tfa.n0, tfa.n1 = qf + nqf + 2 * nvf, nvf, 1
    fe.data, fe.n0, fe.n1 = NULL, 0, 6
    expand_configuration(&mm, aq.data, qfa.data)
    expand_velocity(&mm, nvf, av.data, vfa.data)
    expand_velocity(&mm, nvf, aa.data, afa.data)
    status = valid_state(ki, L, &qfa, &vfa, &afa, &fe, &tfa, &w)
    if status == 0:
        status = state_dynamics(ki, t.data, L, &qfa, &vfa, &afa, &fe, &tfa, wk, True)
    if status == 0:
        reduce_forces(&mm, tfa.data, ao.data)
    release(&w, wk, qf)
    return status


cdef long mimic_matrix(object kt, object work, object imap, object fmap, Py_ssize_t nqf, object qr, object out,
                       bint inverse) except -100:  # never a status
    """M_r = G^T M(q_full) G or, with ``inverse``, M_r^-1 = P[i, i] into ``out`` (nv, nv): the
    tree's GIM or inverse GIM at the expanded configuration (gim_of_state), then reduced."""
    cdef Arr t, w, aq, ao, qfa
    cdef MimicMaps mm
    cdef long status = mimic_call(kt, work, imap, fmap, nqf, qr, out, 2, &t, &w, &aq, &ao, &mm)
    if status:
        return status
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nvf = model_nv(ki, L)
    cdef Py_ssize_t reducing = nvf * mm.nc + mm.nc * mm.nc + mm.nc * mm.nv if inverse else mm.nv * nvf
    cdef double* wk
    cdef double* qf = scratch_and_work(&w, ki, L, nvf, nqf + nvf * nvf + reducing, &wk)
    cdef double* M = qf + nqf  # the tree's GIM or its inverse, then the reduction's scratch
    expand_configuration(&mm, aq.data, qf)
    qfa.data, qfa.n0, qfa.n1 = qf, nqf, 1
    status = valid_configuration(ki, L, &qfa, &w)
    if status == 0:
        status = gim_of_state(ki, t.data, L, qf, nqf, nvf, wk, M, inverse, WAY_CHOSEN)
    if status == 0 and inverse:
        status = reduced_inverse(&mm, M, nvf, M + nvf * nvf, ao.data)
    elif status == 0:
        reduced_mass(&mm, M, nvf, M + nvf * nvf, ao.data)
    release(&w, wk, qf)
    if status == OUT_OF_MEMORY:
        raise MemoryError()
    return status


def mimic_mass_matrix(kt, work, imap, fmap, Py_ssize_t nqf, qr, out):
    """M_r = G^T M(q_full) G into ``out`` (nv, nv) (equals ``pin.crba`` of Pinocchio's mimic
    model): 0, -1, -2 or -3 as :func:`mimic_inverse_dynamics`."""
    return mimic_matrix(kt, work, imap, fmap, nqf, qr, out, False)


def mimic_inverse_mass_matrix(kt, work, imap, fmap, Py_ssize_t nqf, qr, out):
    """``M_r^-1`` at the reduced configuration qr into ``out`` (nv, nv): 0; -1 (qr, or the tree's
    configuration from it, not finite or a zero quaternion), -2 (a length or a map that does not
    fit), the status of the tree's inverse GIM (k + 1, -3: the Python layer then names it or takes
    the dense form), or -4 when K M^-1 K^T is not positive definite."""
    return mimic_matrix(kt, work, imap, fmap, nqf, qr, out, True)


cdef void mimic_tree_forces(const MimicMaps* mm, const int* ki, Py_ssize_t L, Py_ssize_t nvf,
                            const double* qf, const double* vf, const double* tau, const double* K,
                            const double* D, const double* q_rest, bint passive, double* tp,
                            double* tf) noexcept nogil:
    """The tree's forces ``tf`` = G^+T (tau + G^T tau_p) at (q_full, v_full): the reduced forces
    ``tau`` and, with ``passive``, the tree's springs and dampers tau_p = -K (q_full (-) q_rest)
    - D v_full on the kept DOFs, mult tau_p of each mimic joint on its mimicked joint's; ``tp``:
    2 nvf scratch (tau_p, then q_full (-) q_rest)."""
    cdef Py_ssize_t i, j
    if passive:
        model_difference(ki, L, q_rest, qf, tp + nvf)
        for i in range(nvf):
            tp[i] = -K[i] * tp[nvf + i] - D[i] * vf[i]
    else:
        for i in range(nvf):
            tp[i] = 0.0
    for i in range(nvf):
        tf[i] = 0.0
    for i in range(mm.nv):
        tf[mm.v_keep[i]] = tau[i] + tp[mm.v_keep[i]]
    for j in range(mm.nc):
        tf[mm.m_v[j]] += mm.mult[j] * tp[mm.s_v[j]]


cdef long mimic_accelerations(const MimicMaps* mm, const int* ki, const double* kf, Py_ssize_t L,
                              Py_ssize_t nqf, Py_ssize_t nvf, Py_ssize_t reach, double* work,
                              const double* qf, const double* vf, const double* tf,
                              const double* fext, double* f, double* out) noexcept nogil:
    """a_r under the tree's forces tf at (q_full, v_full) into ``out`` (nv_r), the Lagrange form
    (constraints/mimic.py; numba's kernels/mimic.py ``mimic_accelerations``):

        a0 = FD_tree(q_full, v_full, tf),           keeping the articulated factors of M
        W_j = M^-1 K_j^T,                            K_j = e_s - mult e_m, solved up to ``reach``
        (K W^T) lambda = -K a0,  a_r = (a0 + M^-1 K^T lambda)[v_keep]

    ``reach``: the links before it hold every mimic and mimicked DOF; ``fext`` (L, 6) or NULL;
    ``f``: scratch of (3 + nc) nvf + nc (nc + 2) doubles.  0, k + 1 (the tree's articulated
    inertia of link k is singular) or -1 (K W^T not positive definite, or a result that is not
    finite: numba's Cholesky gave NaN there, the same status)."""
    cdef Py_ssize_t nc = mm.nc, i, j, c
    cdef double* a0 = f
    cdef double* d = f + nvf
    cdef double* x = f + 2 * nvf
    cdef double* Wt = f + 3 * nvf  # row j: W_j = M^-1 K_j^T
    cdef double* S = Wt + nc * nvf  # nc x (nc + 1): [K W^T | -K a0]
    cdef double* lam = S + nc * (nc + 1)
    cdef long status = forward_dynamics_passes(ki, kf, L, nvf, work, qf, nqf, vf, tf, fext, a0, True)
    if status:
        return status
    for i in range(nvf):
        x[i] = 0.0
    for j in range(nc):  # W_j = M^-1 K_j^T over the links before reach
        x[mm.s_v[j]] = 1.0
        x[mm.m_v[j]] -= mm.mult[j]
        factorised_solve(ki, kf, L, nvf, work, x, Wt + j * nvf, reach)
        x[mm.s_v[j]] = 0.0
        x[mm.m_v[j]] = 0.0
    for j in range(nc):  # K W^T, -K a0
        for c in range(nc):
            S[j * (nc + 1) + c] = Wt[c * nvf + mm.s_v[j]] - mm.mult[j] * Wt[c * nvf + mm.m_v[j]]
        d[j] = -(a0[mm.s_v[j]] - mm.mult[j] * a0[mm.m_v[j]])
    if not cholesky_solve(S, nc, nc + 1, d, lam):  # lambda
        return -1
    for j in range(nc):  # K^T lambda
        x[mm.s_v[j]] += lam[j]
        x[mm.m_v[j]] -= mm.mult[j] * lam[j]
    if nc:
        factorised_solve(ki, kf, L, nvf, work, x, d, L)  # M^-1 K^T lambda
    else:
        for i in range(nvf):
            d[i] = 0.0
    for i in range(mm.nv):  # a_r = (a0 + M^-1 K^T lambda)[v_keep]
        out[i] = a0[mm.v_keep[i]] + d[mm.v_keep[i]]
    return -1 if finite_entries(out, mm.nv) else 0


def mimic_forward_dynamics(kt, work, imap, fmap, Py_ssize_t nqf, Py_ssize_t reach, qr, vr, tau, fext, K, D,
                           q_rest, bint passive, out):
    """a_r of one state into ``out`` (nv,), by :func:`mimic_accelerations` at q_full = G q_r + o,
    v_full = G v_r under the reduced forces ``tau``, the wrenches ``fext`` ((0, 6) for none, else
    (L, 6) in internal order) and, with ``passive``, the tree's springs and dampers
    tau_p = -K (q_full (-) q_rest) - D v_full (K, D: nv of the tree, q_rest: nq); the tree's forces
    are tau_full = tau + tau_p on the kept DOFs, with mult tau_p of each mimic joint added to its
    mimicked joint's (G^+T (tau + G^T tau_p)).  0, -1 (a value that is not finite, a zero
    quaternion, K M^-1 K^T not positive definite or a result that is not finite), -2 (a length, a
    map or ``reach`` that does not fit) or k + 1 (the tree's articulated inertia of link k is
    singular): the Python layer then names the problem or takes the dense form."""
    cdef Arr t, w, aq, ao, av, at, fe, aK, aD, ar, qfa, vfa, tfa
    cdef MimicMaps mm
    cdef Py_ssize_t j
    cdef long status = mimic_call(kt, work, imap, fmap, nqf, qr, out, 1, &t, &w, &aq, &ao, &mm)
    take(vr, 1, False, b"vr", &av)
    take(tau, 1, False, b"tau", &at)
    take(fext, 2, False, b"fext", &fe)
    take(K, 1, False, b"K", &aK)
    take(D, 1, False, b"D", &aD)
    take(q_rest, 1, False, b"q_rest", &ar)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nvf = model_nv(ki, L)
    if status == 0 and (av.n0 != mm.nv or at.n0 != mm.nv or not 0 <= reach <= L
                        or (passive and (aK.n0 != nvf or aD.n0 != nvf or ar.n0 != nqf))):
        status = -2
    if status:
        return status
    for j in range(mm.nv):
        if not (isfinite(av.data[j]) and isfinite(at.data[j])):
            return -1
    cdef Py_ssize_t nc = mm.nc
    cdef double* wk
    cdef double* qf = scratch_and_work(&w, ki, L, nvf, nqf + 4 * nvf + (3 + nc) * nvf + nc * (nc + 2), &wk)
    cdef double* tp = qf + nqf + nvf  # the springs and dampers, then their difference
    qfa.data, qfa.n0, qfa.n1 = qf, nqf, 1
    vfa.data, vfa.n0, vfa.n1 = qf + nqf, nvf, 1
    tfa.data, tfa.n0, tfa.n1 = tp + 2 * nvf, nvf, 1  # zeroed by scratch_and_work
    expand_configuration(&mm, aq.data, qfa.data)
    expand_velocity(&mm, nvf, av.data, vfa.data)
    status = valid_state(ki, L, &qfa, &vfa, &tfa, &fe, &tfa, &w)
    if status == 0:
        mimic_tree_forces(&mm, ki, L, nvf, qf, vfa.data, at.data, aK.data, aD.data, ar.data, passive, tp,
                          tfa.data)
        status = mimic_accelerations(&mm, ki, t.data, L, nqf, nvf, reach, wk, qfa.data, vfa.data,
                                     tfa.data, fe.data if fe.n0 > 0 else NULL, tfa.data + nvf, ao.data)
    release(&w, wk, qf)
    return status
