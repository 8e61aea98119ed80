# The entries of the contact module, called from denoc_bridge/constraints/contact.py and
# denoc_bridge/simulation/contact.py.  Every array is checked here (type, dtype, layout: a
# TypeError naming it; then lengths and indices: status -2, nothing computed) before compiled
# code indexes it; a configuration that is not finite, or a zero quaternion or (cos, sin) pair,
# is status -1.

cdef int taken(object o, int ndim, bint writable, const char* name, double** data,
               Py_ssize_t* dims) except -1:
    """arrays.pxd's take (float64; 3 dimensions taken as the 2 they are in memory) into a pointer
    and two lengths."""
    cdef Arr a
    take(o, ndim, writable, name, &a)
    data[0], dims[0], dims[1] = a.data, a.n0, a.n1
    return 0


cdef int integers(object o, int ndim, bint writable, const char* name, cnp.int64_t** data,
                  Py_ssize_t* dims) except -1:
    """array_of for int64."""
    dims[1] = 1
    return array_of(o, ndim, cnp.NPY_INT64, writable, name, <void**>data, dims)


cdef int vector(object o, Py_ssize_t n, bint writable, const char* name,
                double** data) except -1:
    """1 when ``o`` (a 1-D float64 array, else TypeError) has n entries, else 0."""
    cdef Py_ssize_t d[2]
    taken(o, 1, writable, name, data, d)
    return d[0] == n


cdef int matrix(object o, int ndim, Py_ssize_t n0, Py_ssize_t n1, bint writable,
                const char* name, double** data) except -1:
    """1 when ``o`` (a float64 array of ndim dimensions, else TypeError) is (n0, n1) in memory
    (a 3-D one's last two lengths multiplied), else 0."""
    cdef Py_ssize_t d[2]
    taken(o, ndim, writable, name, data, d)
    return d[0] == n0 and d[1] == n1


cdef long model_of(object kt, object work, const int** ki, const double** kf, Py_ssize_t* L,
                   double** wk) except -100:
    """The model's table and work array: 0, or -2 for a table whose joints, modules or parents
    do not index within its arrays, or a work array not of its size."""
    cdef Py_ssize_t d[2]
    cdef double* f
    taken(kt, 2, False, b"kt", &f, d)
    if d[1] != NT:
        return -2
    kf[0], ki[0], L[0] = f, <const int*>f, d[0]
    cdef Py_ssize_t nq = model_nq(ki[0], d[0]), nv = model_nv(ki[0], d[0])
    if not (table_fits(ki[0], d[0], nq, nv) and modules_fit(ki[0], d[0]) and parents_fit(ki[0], d[0])):
        return -2
    taken(work, 2, True, b"work", wk, d)
    if d[1] != W or d[0] != work_rows(L[0], nv, n_modules(ki[0], L[0])):
        return -2
    return 0


cdef long points_of(object points, const int* ki, Py_ssize_t L, Points* pts) except -100:
    """The packed points, grounds and joint limits ``(cl, cp, crad, cmar, lb, gB, goff, gmu,
    grest, li, lf, lmar)``: 0, or -2 for a length, a link or a joint index that does not fit."""
    cl, cp, crad, cmar, lb, gB, goff, gmu, grest, li, lf, lmar = points
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t n, ng, i
    cdef cnp.int64_t* c
    integers(cl, 1, False, b"cl", &c, d)
    pts.cl, n = c, d[0]
    pts.n = n
    taken(cp, 2, False, b"cp", <double**>&pts.cp, d)
    if d[0] != n or d[1] != 3:
        return -2
    if not (vector(crad, n, False, b"crad", <double**>&pts.crad)
            and vector(cmar, n, False, b"cmar", <double**>&pts.cmar)):
        return -2
    taken(lb, 2, False, b"lb", <double**>&pts.lb, d)
    if d[0] != L or d[1] != 5:
        return -2
    taken(gB, 3, False, b"gB", <double**>&pts.gB, d)
    ng = d[0]
    pts.ng = ng
    if not (d[1] == 9 and vector(goff, ng, False, b"goff", <double**>&pts.goff)
            and vector(gmu, ng, False, b"gmu", <double**>&pts.gmu)
            and vector(grest, ng, False, b"grest", <double**>&pts.grest)):
        return -2
    for i in range(n):
        if not 0 <= c[i] < L:
            return -2
    integers(li, 2, False, b"li", <cnp.int64_t**>&pts.li, d)
    pts.nl = d[0]
    if d[1] != 2 or not matrix(lf, 2, pts.nl, 2, False, b"lf", <double**>&pts.lf):
        return -2
    pts.lmar = lmar
    if not isfinite(pts.lmar):
        return -2
    for i in range(pts.nl):  # a 1-DOF joint's q and v index
        if not (0 <= pts.li[2 * i] < model_nq(ki, L) and 0 <= pts.li[2 * i + 1] < model_nv(ki, L)):
            return -2
    return 0


cdef long rows_of(object rows, Py_ssize_t nv, Rows* rw) except -100:
    """The buffers ``(J, Y, dist, pos, pair)`` of at most m_max contacts: 0, or -2."""
    J, Y, dist, pos, pair = rows
    cdef Py_ssize_t d[2]
    taken(J, 2, True, b"J", &rw.J, d)
    rw.m_max = d[0] // 3
    if d[0] != 3 * rw.m_max or d[1] != nv:
        return -2
    taken(Y, 2, True, b"Y", &rw.Y, d)
    if d[0] != 3 * rw.m_max or d[1] != nv:
        return -2
    taken(dist, 1, True, b"dist", &rw.dist, d)
    if d[0] != rw.m_max:
        return -2
    taken(pos, 2, True, b"pos", &rw.pos, d)
    if d[0] != rw.m_max or d[1] != 3:
        return -2
    integers(pair, 2, True, b"pair", &rw.pair, d)
    if d[0] != rw.m_max or d[1] != 2:
        return -2
    return 0


cdef int frames_scratch(Py_ssize_t L, Py_ssize_t nv, Rows* rw) except -1:
    """The rows' scratch (R, p, Pw, clear), freed by free_frames."""
    rw.R = <double*>malloc((12 * L + 6 * nv + 1) * sizeof(double))
    rw.clear = <unsigned char*>malloc(L + 1)
    if rw.R == NULL or rw.clear == NULL:
        free_frames(rw)
        raise MemoryError()
    rw.p = rw.R + 9 * L
    rw.Pw = rw.p + 3 * L
    return 0


cdef void free_frames(Rows* rw) noexcept nogil:
    free(rw.R)
    free(rw.clear)
    rw.R, rw.clear = NULL, NULL


def contact_rows_state(kt, work, q, points, rows):
    """The active contacts at the tree's q (float64, nq): their number m, their rows, distances,
    points and pairs in the first m (3 m) entries of ``rows = (J, Y, dist, pos, pair)``;
    ``points`` the ContactSet's ``(cl, cp, crad, cmar, lb, gB, goff, gmu, grest)``.  -1 for a q
    that is not a configuration, -2 for a length that does not fit."""
    cdef const int* ki
    cdef const double* kf
    cdef double* wk
    cdef double* aq
    cdef Py_ssize_t L, m
    cdef Py_ssize_t d[2]
    cdef Points pts
    cdef Rows rw
    cdef long status = model_of(kt, work, &ki, &kf, &L, &wk)
    taken(q, 1, False, b"q", &aq, d)
    if status == 0:
        status = points_of(points, ki, L, &pts)
    if status == 0:
        status = rows_of(rows, model_nv(ki, L), &rw)
    if status == 0 and d[0] != model_nq(ki, L):
        status = -2
    if status == 0:
        status = configuration_status(ki, L, aq)
    if status:
        return status
    frames_scratch(L, model_nv(ki, L), &rw)
    with nogil:
        m = active_contacts(ki, kf, L, model_nv(ki, L), wk, aq, d[0], &pts, &rw)
    free_frames(&rw)
    return m


def delassus_state(kt, work, q, J, Py_ssize_t r, Y, G):
    """G (r, r) = J M^-1 J^T of the first r rows of J (rows, nv) and Y[:r] = (M^-1 J^T)^T: one
    factorisation of the articulated inertias at q, one O(n) substitution per row.  0, k + 1 for
    a singular articulated inertia of link k, -1 for a q that is not a configuration, -2 for a
    length, -3 for a G that is not finite."""
    cdef const int* ki
    cdef const double* kf
    cdef double* wk
    cdef double* aq
    cdef double* aJ
    cdef double* aY
    cdef double* aG
    cdef double* zeros
    cdef Py_ssize_t L, nv
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t dJ[2]
    cdef Py_ssize_t dY[2]
    cdef Py_ssize_t dG[2]
    cdef long status = model_of(kt, work, &ki, &kf, &L, &wk)
    taken(q, 1, False, b"q", &aq, d)
    taken(J, 2, False, b"J", &aJ, dJ)
    taken(Y, 2, True, b"Y", &aY, dY)
    taken(G, 2, True, b"G", &aG, dG)
    if status:
        return status
    nv = model_nv(ki, L)
    if (d[0] != model_nq(ki, L) or dJ[1] != nv or dY[1] != nv or not 0 <= r <= dJ[0]
            or dY[0] < r or dG[0] != r or dG[1] != r):
        return -2
    status = configuration_status(ki, L, aq)
    if status:
        return status
    zeros = <double*>calloc(2 * nv + 1, sizeof(double))
    if zeros == NULL:
        raise MemoryError()
    with nogil:
        status = forward_dynamics_passes(ki, kf, L, nv, wk, aq, d[0], zeros, zeros, NULL,
                                         zeros + nv, True)
        if status == 0 and not delassus(ki, kf, L, nv, wk, aJ, r, aY, aG):
            status = -3
    free(zeros)
    return status


def pgs_state(G, g, mu, Py_ssize_t m, lam, sigma, double tol, long max_iter):
    """PGS on the contact problem of m contacts (contact_solver.pxi): ``G`` (3m, 3m), ``g`` (3m,),
    ``mu`` (m,), ``lam`` (3m,, the warm start, updated), ``sigma`` (3m,, out).  Returns (sweeps,
    the last sweep's largest velocity change); sweeps = max_iter + 1 if not converged; -2 (and
    nothing computed) for a length that does not fit."""
    cdef double* aG
    cdef double* ag
    cdef double* amu
    cdef double* al
    cdef double* asg
    cdef Py_ssize_t dG[2]
    cdef Py_ssize_t dg[2]
    cdef Py_ssize_t dm[2]
    cdef Py_ssize_t dl[2]
    cdef Py_ssize_t ds[2]
    cdef double last = 0.0
    cdef long sweeps
    taken(G, 2, False, b"G", &aG, dG)
    taken(g, 1, False, b"g", &ag, dg)
    taken(mu, 1, False, b"mu", &amu, dm)
    taken(lam, 1, True, b"lam", &al, dl)
    taken(sigma, 1, True, b"sigma", &asg, ds)
    if (m < 0 or dG[0] != 3 * m or dG[1] != 3 * m or dg[0] != 3 * m or dm[0] != m
            or dl[0] != 3 * m or ds[0] != 3 * m or max_iter < 0):
        return -2, 0.0
    with nogil:
        sweeps = pgs(aG, ag, amu, m, al, asg, tol, max_iter, &last)
    return sweeps, last


cdef long drive_of(object drive, Py_ssize_t nq, Py_ssize_t nv, Drive* dr) except -100:
    """``(tau, damping, stiffness, spring_rate, q_rest, kp, q_ref, hold_rate, passive, hold)``."""
    cdef double* x[8]
    cdef Py_ssize_t i
    names = (b"tau", b"damping", b"stiffness", b"spring_rate", b"q_rest", b"kp", b"q_ref",
             b"hold_rate")
    for i in range(8):  # q_rest and q_ref are configurations, the others (nv,)
        if not vector(drive[i], nq if i == 4 or i == 6 else nv, False, names[i], &x[i]):
            return -2
        if not all_finite(x[i], nq if i == 4 or i == 6 else nv):
            return -2
    dr.tau, dr.damping, dr.stiffness, dr.spring_rate = x[0], x[1], x[2], x[3]
    dr.q_rest, dr.kp, dr.q_ref, dr.hold_rate = x[4], x[5], x[6], x[7]
    dr.passive, dr.hold = bool(drive[8]), bool(drive[9])
    return 0


cdef long state_of(object state, object solver, Run* s) except -100:
    """``state = (q, v, previous, work_done, lam)`` and ``solver = (dt, tol, max_sweeps, slop,
    group_of_pair)``; q and v of nqs and nvs entries (a MimicModel's reduced ones: the run's own
    tree state, run_scratch, expands them)."""
    q, v, previous, work_done, lam = state
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t pairs = s.pts.n * s.pts.ng, i
    taken(q, 1, True, b"q", &s.qs, d)
    if d[0] != s.nqs:
        return -2
    taken(v, 1, True, b"v", &s.vs, d)
    if d[0] != s.nvs:
        return -2
    s.q, s.v = s.qs, s.vs
    taken(previous, 2, True, b"previous", &s.previous, d)
    if d[0] != pairs + 2 * s.pts.nl or d[1] != 3:
        return -2
    taken(work_done, 1, True, b"work_done", &s.work_done, d)
    if d[0] != 3:
        return -2
    taken(lam, 1, True, b"lam", &s.lam, d)
    if d[0] != 3 * s.rw.m_max:
        return -2
    s.dt, s.tol, s.max_sweeps, s.slop = solver[0], solver[1], solver[2], solver[3]
    if not (isfinite(s.dt) and s.dt > 0.0 and s.max_sweeps >= 0 and isfinite(s.slop)):
        return -2
    integers(solver[4], 1, False, b"group_of_pair", <cnp.int64_t**>&s.group_of_pair, d)
    if d[0] != pairs:
        return -2
    return 0


cdef long saves_of(object saves, Py_ssize_t save_every, Py_ssize_t k1, Run* s) except -100:
    """``(T, Q, V, A, TAU, F, P, W)`` with room for the rows up to step k1; sets n_groups.  Q,
    V, A and TAU have nqs and nvs columns (a MimicModel's reduced coordinates)."""
    T, Q, V, A, TAU, F, P, Wk = saves
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t S, i
    taken(T, 1, True, b"T", &s.T, d)
    S = d[0]
    if save_every < 1 or k1 // save_every >= S:
        return -2
    s.save_every = save_every
    taken(F, 3, True, b"F", &s.F, d)
    s.n_groups = d[1] // 3
    if not (matrix(Q, 2, S, s.nqs, True, b"Q", &s.Q) and matrix(V, 2, S, s.nvs, True, b"V", &s.V)
            and matrix(A, 2, S, s.nvs, True, b"A", &s.A)
            and matrix(TAU, 2, S, s.nvs, True, b"TAU", &s.TAU)
            and matrix(F, 3, S, 3 * s.n_groups, True, b"F", &s.F)
            and matrix(P, 3, S, 3 * s.n_groups, True, b"P", &s.P)
            and matrix(Wk, 2, S, 3, True, b"W", &s.Wk)):
        return -2
    for i in range(s.pts.n * s.pts.ng):
        if not 0 <= s.group_of_pair[i] < s.n_groups:
            return -2
    return 0


cdef long bilateral_of(object loops, Run* s) except -100:
    """``loops = (pi, pf, sb, rtol, tol, max_iter)``: the cut joints and couplings of
    constraints/packed.py (their scratch ``sb``) and the projection's options (the rank tolerance
    in [0, 1), the loops' tolerance >= 0, Gauss-Newton steps >= 0) into s.bl: 0, or -2 for a
    length, an index, a number or an option that does not fit (loops.pxd cuts_of).  A
    MimicModel's (after mimic_of): its rows K stacked ahead of its tree's cut joints
    (stacked_cuts_of, ``sb`` sized for nc + m rows), the tree's loops closed after each step by
    close_mimic_loops (contact_mimic.pxi)."""
    cdef Packed pk
    cdef Loop* lp = &s.bl.lp
    pi, pf, sb, rtol, tol, max_iter = loops
    packed_of(pi, pf, sb, &pk)
    lp.ki, lp.kf, lp.L, lp.nq, lp.nv, lp.work = s.ki, s.kf, s.L, s.nq, s.nv, s.work
    if stacked_cuts_of(&pk, lp, s.mm.nc if s.mimic else 0, s.Kc) != 0:
        return -2
    s.bl.rtol, s.bl.tol, s.bl.max_iter = rtol, tol, max_iter
    if not (0.0 <= s.bl.rtol < 1.0 and isfinite(s.bl.tol) and s.bl.tol >= 0.0 and s.bl.max_iter >= 0):
        return -2
    s.bl.on = True
    return 0


cdef long mimic_of(object mimic, Run* s) except -100:
    """``mimic = (imap, fmap, K)``: a MimicModel's maps (tree.pxd mimic_maps, on the tree's nq
    and nv) and its rows K (nc, nv; finite) into s.mm, s.Kc, the state's lengths nqs, nvs the
    reduced ones: 0, or -2 for a length, an index or a number that does not fit."""
    imap, fmap, K = mimic
    cdef Py_ssize_t d[2]
    if mimic_maps(imap, fmap, s.nq, s.nv, &s.mm) != 0:
        return -2
    taken(K, 2, False, b"K", <double**>&s.Kc, d)
    if d[0] != s.mm.nc or (d[0] > 0 and d[1] != s.nv) or not all_finite(s.Kc, s.mm.nc * s.nv):
        return -2
    s.mimic, s.nqs, s.nvs = True, s.mm.nq, s.mm.nv
    return 0


cdef int run_scratch(Run* s) except -1:
    """The run's scratch (freed by free_run)."""
    cdef Py_ssize_t nv = s.nv, mm = s.rw.m_max
    s.tau_a = <double*>calloc(7 * nv + s.nq + 10 * mm + 6 * s.n_groups + 1, sizeof(double))
    s.ids = <cnp.int64_t*>calloc(mm + 1, sizeof(cnp.int64_t))
    s.G, s.G_cap = NULL, 0
    s.rows_next = False
    s.rw.R, s.rw.clear = NULL, NULL
    cdef Py_ssize_t mc = s.bl.lp.ds.nk + s.bl.lp.cu.m if s.bl.on else 0  # the stacked rows
    s.bl.YC = (<double*>calloc(mc * (nv + mc + 6 * mm) + s.nq + 1, sizeof(double)) if s.bl.on
               else NULL)
    s.qr = (<double*>calloc(s.nq + s.nv + s.nqs + s.nvs + 1, sizeof(double)) if s.mimic
            else NULL)  # the run's tree state, then a reduced one (contact_mimic.pxi)
    if s.tau_a == NULL or s.ids == NULL or (s.bl.on and s.bl.YC == NULL) or (s.mimic and s.qr == NULL):
        free_run(s)
        raise MemoryError()
    if newton_scratch(s) != 0:
        free_run(s)
        raise MemoryError()
    if s.bl.on:  # (no arithmetic on a NULL pointer otherwise)
        s.bl.GC = s.bl.YC + mc * nv
        s.bl.B = s.bl.GC + mc * mc
        s.bl.X = s.bl.B + 3 * mm * mc
        s.bl.qn = s.bl.X + 3 * mm * mc
    s.pull = s.tau_a + nv
    s.a = s.pull + nv
    s.v_free = s.a + nv
    s.v_plus = s.v_free + nv
    s.dq = s.v_plus + nv
    s.zeros = s.dq + nv
    s.q_plus = s.zeros + nv
    s.lam2 = s.q_plus + s.nq
    s.sigma = s.lam2 + 3 * mm
    s.g = s.sigma + 3 * mm
    s.mu = s.g + 3 * mm
    s.force = s.mu + mm
    s.point = s.force + 3 * s.n_groups
    if s.mimic:
        s.vr = s.qr + s.nqs
        s.q = s.vr + s.nvs
        s.v = s.q + s.nq
    try:
        frames_scratch(s.L, nv, &s.rw)
    except MemoryError:  # what was taken above goes too
        free_run(s)
        raise
    return 0


cdef int newton_scratch(Run* s) noexcept nogil:
    """The scratch of close_mimic_loops (a MimicModel whose tree has loops; nt.m = 0 for any
    other run): 0, or -1 when the memory is not there."""
    cdef Py_ssize_t m = s.bl.lp.cu.m if (s.mimic and s.bl.on) else 0, n = s.nvs
    s.nt.m = m
    if m == 0:
        return 0
    s.nt.CG = <double*>calloc(4 * m * n + m * m + m + n + s.nv + 1, sizeof(double))
    s.nt.rows = <cnp.int64_t*>calloc(2 * m + 2 * n + 1, sizeof(cnp.int64_t))
    if s.nt.CG == NULL or s.nt.rows == NULL:
        return -1
    s.nt.Cr = s.nt.CG + m * n
    s.nt.Q = s.nt.Cr + m * n
    s.nt.T = s.nt.Q + m * n
    s.nt.A = s.nt.T + m * n
    s.nt.b = s.nt.A + m * m
    s.nt.dv = s.nt.b + m
    s.nt.dvf = s.nt.dv + n
    s.nt.piv = s.nt.rows + m
    s.nt.dep = s.nt.piv + n
    s.nt.isdep = s.nt.dep + m
    return 0


cdef void free_run(Run* s) noexcept nogil:
    free(s.tau_a)
    free(s.ids)
    free(s.G)
    free(s.bl.YC)
    free(s.qr)
    free(s.nt.CG)
    free(s.nt.rows)
    free_frames(&s.rw)
    s.tau_a, s.ids, s.G, s.bl.YC, s.qr = NULL, NULL, NULL, NULL, NULL
    s.nt.CG, s.nt.rows = NULL, NULL


def contact_steps(kt, work, drive, points, rows, solver, state, saves, Py_ssize_t save_every,
                  Py_ssize_t k0, Py_ssize_t k1, loops=None, mimic=None):
    """Steps k0 .. k1 - 1 of a contact run (contact_run.pxi) on the tree's table ``kt`` (the
    implicit terms on its armature) and work array: returns (k, status): (k1, STEP_DONE), or the step
    k that the Python layer must take (the state is the one before it) and STEP_PYTHON or
    STEP_STALLED; (k0, -2) for a length that does not fit (nothing computed), (k0, -1) for a
    state that is not a configuration.  ``drive``, ``points``, ``rows``, ``solver``, ``state``,
    ``saves`` and ``loops`` (None for a tree without loop closures or joint couplings): see
    drive_of, points_of, rows_of, state_of, saves_of and bilateral_of; ``mimic`` (None but for
    a MimicModel, whose ``kt``, ``work``, drive and rows are its tree's, its state and saves
    reduced, and whose ``loops`` are its tree's cut joints, if any): see mimic_of."""
    cdef Run s
    cdef Py_ssize_t k = k0
    s.bl.on, s.bl.YC, s.mimic, s.qr, s.Kc = False, NULL, False, NULL, NULL
    s.nt.m, s.nt.CG, s.nt.rows = 0, NULL, NULL
    cdef long status = model_of(kt, work, &s.ki, &s.kf, &s.L, &s.work)
    if status:
        return k0, status
    s.nq, s.nv = model_nq(s.ki, s.L), model_nv(s.ki, s.L)
    s.nqs, s.nvs = s.nq, s.nv
    if mimic is not None:
        status = mimic_of(mimic, &s) if loops is not None else -2
    if status == 0:
        status = points_of(points, s.ki, s.L, &s.pts)
    if status == 0:
        status = rows_of(rows, s.nv, &s.rw)
    if status == 0:
        status = drive_of(drive, s.nq, s.nv, &s.dr)
    if status == 0:
        status = state_of(state, solver, &s)
    if status == 0 and not 0 <= k0 <= k1:
        status = -2
    if status == 0:
        status = saves_of(saves, save_every, k1, &s)
    if status == 0 and loops is not None:
        status = bilateral_of(loops, &s)
    if status == 0 and not (all_finite(s.qs, s.nqs) and all_finite(s.vs, s.nvs)):
        status = -1
    if status:
        return k0, status
    run_scratch(&s)
    if s.mimic:
        state_in(&s)
    if configuration_status(s.ki, s.L, s.q):
        free_run(&s)
        return k0, -1
    with nogil:
        while k < k1:
            status = contact_step(&s, k)
            if status != STEP_DONE:
                break
            k += 1
        if s.mimic:
            state_out(&s)
    free_run(&s)
    return k, status
