# The entries of the runs, with numba's arguments (its kernels/run.py, gone): the named
# tuples TreeSystem, Forcing and Saves of denoc_bridge/core/systems.py, read and checked
# once per call into the structs of integrators.pxi.  Every array is checked here (type, dtype,
# layout, then lengths) before compiled code indexes it: TypeError for the first, status -2
# (nothing computed) for a length that does not fit the model or the run.

cdef bint vector_space(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when every joint is a vector space (revolute, prismatic, universal, translation):
    then q (+) xi = q + xi and dexp^-1 is the identity."""
    cdef Py_ssize_t k
    cdef int jt
    for k in range(L):
        jt = joint_type(ki + k * NI)
        if jt == CONTINUOUS or jt == SPHERICAL or jt == FREEFLYER or jt == PLANAR:
            return False
    return True


cdef long tree_of(object system, Tree* t) except -100:
    """The system of a TreeSystem or a MimicSystem (core/systems.py): its tree's table and
    work array, a mimic system's maps (mimic.pxi mimic_maps), the limits; 0, or -2 for a length,
    map or index that does not fit.  ``flat`` and ``swept`` are computed from the table (the same
    as the tuple's), so that a wrong flag cannot send a model down
    the wrong path.  A mimic system's scratch is not allocated here (mimic_scratch)."""
    cdef double* kf
    cdef double* work
    cdef Py_ssize_t d[2]
    cdef long status
    doubles(system.kt, 2, False, b"kt", &kf, d)
    if d[1] != NT:
        return -2
    t.kf, t.ki, t.L = kf, <const int*>kf, d[0]
    t.nqt, t.nvt = model_nq(t.ki, t.L), model_nv(t.ki, t.L)
    t.nq, t.nv = t.nqt, t.nvt
    if not (table_fits(t.ki, t.L, t.nqt, t.nvt) and modules_fit(t.ki, t.L)):
        return -2
    doubles(system.work, 2, True, b"work", &work, d)
    if d[1] != W or d[0] != work_rows(t.L, t.nvt, n_modules(t.ki, t.L)):
        return -2
    t.work = work
    t.flat, t.swept = vector_space(t.ki, t.L), sweepable(t.ki, t.L)
    t.mimic = t.loops = False
    t.mi.qf = t.mi.acc = NULL
    t.mi.tv = NULL
    kind = type(system).__name__
    if kind == "LoopSystem":
        return loop_system_of(system, t, NULL)
    if kind == "MimicSystem" or kind == "MimicLoopSystem":
        status = mimic_maps(system.imap, system.fmap, t.nqt, t.nvt, &t.mi.mm)
        if status or system.nqf != t.nqt:
            return -2
        t.mimic, t.flat, t.swept = True, False, False
        t.nq, t.nv = t.mi.mm.nq, t.mi.mm.nv
    if kind == "MimicLoopSystem":  # the rows K stacked ahead of the loops' (no limits)
        t.mi.reach = t.L
        doubles(system.mimic_rows, 2, False, b"mimic_rows", &kf, d)
        if d[0] != t.mi.mm.nc or d[1] != t.nvt or not all_finite(kf, d[0] * d[1]):
            return -2
        return loop_system_of(system, t, kf)
    if kind == "MimicSystem":
        if not 0 <= system.reach <= t.L:
            return -2
        t.mi.reach = system.reach
    return limits_of(system, t)


cdef long loop_system_of(object system, Tree* t, const double* K) except -100:
    """A LoopSystem's cut joints, scratch and options (core/systems.py: ``pi``, ``pf``, ``sb``
    of constraints/packed.py, ``opts`` = (alpha, beta, rank rtol, projection tol, project,
    max_iter), ``drift``) into t.lr, no limits: 0, or -2 for a length, an index or an option that
    does not fit (loops.pxd stacked_cuts_of; a cut joint's number that is not finite too).  A
    MimicLoopSystem's (after its maps, t.mimic): its mimic rows ``K`` (nc, tree nv) stacked ahead
    of the cut joints' (``sb`` sized for nc + m rows), its projection accepting 1e3 tol after
    max_iter steps (as constraints/mimic_loops.py kinetic_projection)."""
    cdef Packed* pk = &t.lr.pk
    cdef Loop* lp = &t.lr.lp
    cdef double* o
    cdef Py_ssize_t d[2]
    packed_of(system.pi, system.pf, system.sb, pk)
    doubles(system.opts, 1, False, b"opts", &o, d)
    if d[0] != 6:
        return -2
    doubles(system.drift, 1, True, b"drift", &t.lr.drift, d)
    if d[0] < 1:
        return -2
    t.loops, t.swept = True, False
    lp.ki, lp.kf, lp.L, lp.nq, lp.nv, lp.work = t.ki, t.kf, t.L, t.nqt, t.nvt, t.work
    t.lr.K = K
    if stacked_cuts_of(pk, lp, t.mi.mm.nc if t.mimic else 0, K) != 0 or not parents_fit(t.ki, t.L):
        return -2
    t.lr.alpha, t.lr.beta, t.lr.rtol, t.lr.tol, t.lr.project = o[0], o[1], o[2], o[3], o[4] > 0.0
    t.lr.accept = 1e3 * o[3] if t.mimic else o[3]
    if not (isfinite(o[0]) and o[0] >= 0.0 and isfinite(o[1]) and o[1] >= 0.0 and 0.0 <= o[2] < 1.0
            and isfinite(o[3]) and o[3] >= 0.0 and 0.0 <= o[5] < 1e9):
        return -2
    t.lr.max_iter = <long>o[5]
    t.lim.n, t.lim.nr, t.lim.rows, t.lim.cols = 0, 0, 0, 0  # no limits on a loop system
    t.lim.idx, t.lim.bounds, t.lim.S, t.lim.active, t.lim.energy = NULL, NULL, NULL, NULL, NULL
    t.lim.R, t.lim.tv = NULL, NULL
    return 0


cdef int mimic_scratch(Tree* t) except -1:
    """A mimic system's scratch (Mimic: the expanded state and forces, mimic_accelerations'
    scratch, the limited joints' tree v index), allocated for one run or one thread of a batch
    and freed by free_mimic; nothing for a tree."""
    if not t.mimic:
        return 0
    cdef Mimic* mi = &t.mi
    cdef Py_ssize_t nqt = t.nqt, nvt = t.nvt, nc = mi.mm.nc, j
    mi.qf = <double*>calloc(2 * nqt + 5 * nvt + (3 + nc) * nvt + nc * (nc + 2) + 1, sizeof(double))
    mi.tv = <cnp.int64_t*>calloc(t.lim.n + 1, sizeof(cnp.int64_t))
    if mi.qf == NULL or mi.tv == NULL:
        free_mimic(t)
        raise MemoryError()
    mi.vf = mi.qf + nqt
    mi.xf = mi.vf + nvt
    mi.tp = mi.xf + nvt
    mi.tf = mi.tp + 2 * nvt
    mi.q1 = mi.tf + nvt
    mi.acc = mi.q1 + nqt
    for j in range(t.lim.n):
        mi.tv[j] = mi.mm.v_keep[t.lim.idx[2 * j + 1]]
    t.lim.tv = mi.tv
    return 0


cdef void free_mimic(Tree* t) noexcept nogil:
    """Free what mimic_scratch allocated."""
    if t.mimic:
        free(t.mi.qf)
        free(t.mi.tv)
        t.mi.qf, t.mi.tv, t.lim.tv = NULL, NULL, NULL


def tree_flags(kt):
    """(flat, swept) of a tree's table: every joint a vector
    space; every joint revolute about a coordinate axis (the fused stage sweep).  TypeError for
    a ``kt`` that is not a model table's array, (False, False) for a table that does not fit."""
    cdef double* kf
    cdef Py_ssize_t d[2]
    doubles(kt, 2, False, b"kt", &kf, d)
    cdef const int* ki = <const int*>kf
    cdef Py_ssize_t L = d[0]
    if d[1] != NT or not (table_fits(ki, L, model_nq(ki, L), model_nv(ki, L)) and modules_fit(ki, L)):
        return False, False
    return vector_space(ki, L), sweepable(ki, L)


cdef long limits_of(object system, Tree* t) except -100:
    """The limits of a TreeSystem or a MimicSystem (lim_i, lim_f, lim_s, lim_a, lim_e, and a
    mimic system's rows lim_r, its K: nc x tree nv) into t.lim: 0, or -2 for a length or an
    index that does not fit."""
    cdef Limits* lm = &t.lim
    cdef void* p
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t j, n
    lm.R, lm.nr, lm.tv = NULL, 0, NULL
    if t.mimic:
        doubles(system.lim_r, 2, False, b"lim_r", <double**>&p, d)
        lm.R, lm.nr = <const double*>p, d[0]
        if d[0] != t.mi.mm.nc or d[1] != t.nvt:
            return -2
    array_of(system.lim_i, 2, cnp.NPY_INT64, False, b"lim_i", &p, d)
    lm.idx, n = <const cnp.int64_t*>p, d[0]
    if d[1] != 2:
        return -2
    for j in range(n):
        if not (0 <= lm.idx[2 * j] < t.nq and 0 <= lm.idx[2 * j + 1] < t.nv):
            return -2
    doubles(system.lim_f, 2, False, b"lim_f", <double**>&p, d)
    lm.bounds = <const double*>p
    if d[0] != n or d[1] != 2:
        return -2
    doubles(system.lim_s, 2, True, b"lim_s", &lm.S, d)
    lm.rows, lm.cols = d[0], d[1]
    if lm.rows != 2 * (n + lm.nr) + 4 or lm.cols != max(t.nvt, n + lm.nr, 1):
        return -2
    array_of(system.lim_a, 1, cnp.NPY_INT64, True, b"lim_a", &p, d)
    lm.active = <cnp.int64_t*>p
    if d[0] < n:
        return -2
    doubles(system.lim_e, 1, True, b"lim_e", &lm.energy, d)
    if d[0] < 1:
        return -2
    lm.n = n
    return 0


cdef long forcing_of(object fc, const Tree* t, Py_ssize_t tau_rows, Forcing* f) except -100:
    """A Forcing's arrays into f (``taus`` one case's: 2-D, or a batch's 3-D when
    ``tau_rows`` < 0, whose case is set later): 0, or -2 for a length that does not fit (a
    table needs ``tau_rows`` rows)."""
    cdef double* p
    cdef Py_ssize_t d[3]
    f.tau_mode = fc.tau_mode
    f.passive = fc.passive
    if not TAU_NONE <= f.tau_mode <= TAU_TABLE:
        return -2
    doubles(fc.taus, 2 if tau_rows >= 0 else 3, False, b"taus", &p, d)
    f.taus = p
    if tau_rows < 0:  # a batch: (B, rows, nv)
        d[0], d[1], tau_rows = d[1], d[2], -tau_rows - 1
    if d[1] != t.nv or (f.tau_mode == TAU_CONSTANT and d[0] < 1) or (
            f.tau_mode == TAU_TABLE and d[0] < tau_rows):
        return -2
    doubles(fc.fext, 2, False, b"fext", &p, d)
    f.fext = p if d[0] else NULL
    if d[0] != 0 and (d[0] != t.L or d[1] != 6):
        return -2
    doubles(fc.K, 1, False, b"K", &p, d)  # the tree's springs and dampers (a mimic system's too)
    f.K = p
    if d[0] != t.nvt:
        return -2
    doubles(fc.D, 1, False, b"D", &p, d)
    f.D = p
    if d[0] != t.nvt:
        return -2
    doubles(fc.q_rest, 1, False, b"q_rest", &p, d)
    f.q_rest = p
    return 0 if d[0] == t.nqt else -2


cdef Py_ssize_t count_saves(Py_ssize_t step0, Py_ssize_t n_steps, Py_ssize_t every) noexcept nogil:
    """The steps n of step0 .. step0 + n_steps - 1 with n % every == 0."""
    if n_steps <= 0:
        return 0
    return (step0 + n_steps - 1) // every - (step0 - 1) // every if step0 > 0 else (n_steps - 1) // every + 1


cdef long saves_of(object out, const Tree* t, Py_ssize_t ndim, Py_ssize_t rows_needed, Saves* o,
                   Py_ssize_t* rows) except -100:
    """A Saves' arrays into o (``ndim`` 2: one run's rows, 3: a batch's): 0, or -2 when they do
    not hold ``rows_needed`` rows of the model's lengths."""
    cdef Py_ssize_t d[3]
    cdef Py_ssize_t dq[3]
    cdef Py_ssize_t dv[3]
    doubles(out.Qs, ndim, True, b"Qs", &o.Qs, dq)
    doubles(out.Vs, ndim, True, b"Vs", &o.Vs, dv)
    doubles(out.As, ndim, True, b"As", &o.As, d)
    if (dq[ndim - 1] != t.nq or dv[ndim - 1] != t.nv or d[ndim - 1] != t.nv
            or dv[ndim - 2] != dq[ndim - 2] or d[ndim - 2] != dq[ndim - 2]
            or (ndim == 3 and (dv[0] != dq[0] or d[0] != dq[0]))):
        return -2
    rows[0] = dq[ndim - 2]
    doubles(out.Stops, ndim - 1, True, b"Stops", &o.stops, d)
    o.n_stops = d[ndim - 2]
    if rows[0] < rows_needed or (o.n_stops != 0 and o.n_stops < rows_needed):
        return -2
    if o.n_stops == 0:
        o.stops = NULL
    o.err, o.n_err = NULL, 0
    if t.loops:  # |phi| per saved row
        doubles(out.Err, ndim - 1, True, b"Err", &o.err, d)
        o.n_err = d[ndim - 2]
        if o.n_err < rows_needed or o.n_err < rows[0]:
            return -2
    return 0


cdef tuple fixed_step_run(object system, object fc, object q, object v, Py_ssize_t step0,
                          Py_ssize_t n_steps, double dt, Py_ssize_t save_every, Py_ssize_t save0,
                          object out, object s, bint rk4):
    """rk4_run or euler_run: the arrays checked, the steps run without the GIL."""
    cdef Tree t
    cdef Forcing f
    cdef Saves o
    cdef Outcome r
    cdef double* pq
    cdef double* pv
    cdef double* ps
    cdef Py_ssize_t d[2]
    cdef Py_ssize_t dq, rows
    cdef long status = tree_of(system, &t)
    doubles(q, 1, True, b"q", &pq, &dq)
    doubles(v, 1, True, b"v", &pv, d)
    if status or dq != t.nq or d[0] != t.nv or save_every < 1 or step0 < 0 or save0 < 0:
        return 0, -2, 0
    status = forcing_of(fc, &t, step0 + max(n_steps, 0), &f)
    status = status or saves_of(out, &t, 2, save0 + count_saves(step0, n_steps, save_every), &o, &rows)
    doubles(s, 2, True, b"s", &ps, d)
    if status or d[0] != S_ROWS or d[1] < max(t.nq, t.nv, 1):
        return 0, -2, 0
    mimic_scratch(&t)
    with nogil:
        if rk4:
            rk4_steps(&t, &f, pq, pv, step0, n_steps, dt, save_every, save0, &o, ps, d[1], &r)
        else:
            euler_steps(&t, &f, pq, pv, step0, n_steps, dt, save_every, save0, &o, ps, d[1], &r)
        free_mimic(&t)
    return r.done, r.status, r.saved


def rk4_run(system, fc, q, v, Py_ssize_t step0, Py_ssize_t n_steps, double dt,
            Py_ssize_t save_every, Py_ssize_t save0, out, s):
    """n_steps RK4 steps from (q, v) (updated in place), global step index step0 at the start:
    before step n, when n % save_every == 0, the state and its acceleration go to row save0 +
    (rows saved so far) of ``out``.  Returns (steps done, status, rows saved); the GIL is
    released while it runs."""
    return fixed_step_run(system, fc, q, v, step0, n_steps, dt, save_every, save0, out, s, True)


def euler_run(system, fc, q, v, Py_ssize_t step0, Py_ssize_t n_steps, double dt,
              Py_ssize_t save_every, Py_ssize_t save0, out, s):
    """Semi-implicit Euler steps: the interface of :func:`rk4_run`."""
    return fixed_step_run(system, fc, q, v, step0, n_steps, dt, save_every, save0, out, s, False)


cdef long one_state(object system, object fc, object q, object v, bint writable, Tree* t,
                    Forcing* f, double** pq, double** pv) except -100:
    """The tree, forces and state (q, v writeable when ``writable``) of a call on one state
    from Python (the stages of a run stepped from Python, simulation/tree.py): 0, or -2 for a
    length that does not fit."""
    cdef Py_ssize_t dq, dv
    cdef long status = tree_of(system, t)
    doubles(q, 1, writable, b"q", pq, &dq)
    doubles(v, 1, writable, b"v", pv, &dv)
    if status or dq != t.nq or dv != t.nv:
        return -2
    return forcing_of(fc, t, 0, f)


def enforce_joint_limits(system, fc, q, v):
    """The joint limits after a step from Python (limits.pxi's ``enforce_limits``, the compiled
    runs' stop): q clamped to the limits and the
    joints moving outwards at them stopped, in place; the energy the limits took is added to
    ``system.lim_e[0]``.  ``fc``'s springs (K, q_rest, passive) count in the potential energy.
    Returns (joints moved or stopped, status: 0, k + 1 for a singular articulated inertia of
    link k, -3 for a singular E^T M^-1 E, -2 for a length that does not fit: nothing done)."""
    cdef Tree t
    cdef Forcing f
    cdef double* pq
    cdef double* pv
    cdef Py_ssize_t stopped = 0
    cdef long status = one_state(system, fc, q, v, True, &t, &f, &pq, &pv)
    if status:
        return 0, -2
    if t.lim.n:
        mimic_scratch(&t)
        status = enforce_limits(&t, &f, pq, pv, &stopped)
        free_mimic(&t)
    return stopped, status


def passive_forces(system, fc, q, v, out):
    """out = -K (q (-) q_rest) - D v, the joint springs and dampers of ``fc`` at (q, v) (zero
    when ``fc.passive`` is False), as a compiled run forms them (``applied_forces`` without the
    actuation: numba's kernels/integrators.py ``passive_forces``).  0, or -2 for a length that
    does not fit (nothing written)."""
    cdef Tree t
    cdef Forcing f
    cdef double* pq
    cdef double* pv
    cdef double* po
    cdef Py_ssize_t d
    cdef long status = one_state(system, fc, q, v, False, &t, &f, &pq, &pv)
    doubles(out, 1, True, b"out", &po, &d)
    if status or d != t.nv or t.mimic:  # a mimic system's springs act on its tree's state
        return -2
    f.tau_mode = TAU_NONE
    applied_forces(&t, &f, pq, pv, 0, po, po)  # the difference d in out, then out from it
    return 0


cdef struct Own:  # one thread's arrays of a batch: work, scratch, the limits' and loops' scratch
    double* work
    double* s
    double* S
    cnp.int64_t* active
    double energy
    double* sb  # a loop system's scratch (its sb's numbers), NULL for none
    double drift


cdef int own_arrays(Tree* t, Py_ssize_t width, Own* w) except -1:
    """The arrays a thread of a batch runs its cases on (freed by free_own); a loop system's
    scratch carved from this thread's own sb (loops.pxd stacked_cuts_of: the same layout)."""
    cdef Packed pk
    w.work = <double*>calloc(work_rows(t.L, t.nvt, n_modules(t.ki, t.L)) * W, sizeof(double))
    w.s = <double*>calloc(S_ROWS * width, sizeof(double))
    w.S = <double*>calloc(t.lim.rows * t.lim.cols, sizeof(double))
    w.active = <cnp.int64_t*>calloc(max(t.lim.n, 1), sizeof(cnp.int64_t))
    w.sb = <double*>calloc(t.lr.pk.d[0] + 1, sizeof(double)) if t.loops else NULL
    if w.work == NULL or w.s == NULL or w.S == NULL or w.active == NULL or (t.loops and w.sb == NULL):
        free_own(w)
        raise MemoryError()
    if t.loops:
        pk = t.lr.pk
        pk.s = w.sb
        stacked_cuts_of(&pk, &t.lr.lp, t.mi.mm.nc if t.mimic else 0, t.lr.K)  # checked by tree_of: 0
    return 0


cdef void free_own(Own* w) noexcept nogil:
    free(w.work)
    free(w.s)
    free(w.S)
    free(w.active)
    free(w.sb)


cdef void run_case(Tree* t, const Forcing* fc, Own* w, double* q, double* v, Py_ssize_t n_steps,
                   double dt, Py_ssize_t save_every, const Saves* out, Py_ssize_t width,
                   bint euler, Outcome* r) noexcept nogil:
    """One case of a batch from a fresh state of its arrays, as a run of its own (numba's
    ``fresh`` system: zero scratch and limits, the energy from 0)."""
    cdef Py_ssize_t j
    for j in range(S_ROWS * width):
        w.s[j] = 0.0
    for j in range(t.lim.rows * t.lim.cols):
        w.S[j] = 0.0
    for j in range(max(t.lim.n, 1)):
        w.active[j] = 0
    w.energy = 0.0
    t.work, t.lim.S, t.lim.active, t.lim.energy = w.work, w.S, w.active, &w.energy
    if t.loops:  # a fresh system: its scratch and drift zero (the drift is not returned)
        for j in range(t.lr.pk.d[0]):
            w.sb[j] = 0.0
        w.drift = 0.0
        t.lr.lp.work, t.lr.drift = w.work, &w.drift
    if euler:
        euler_steps(t, fc, q, v, 0, n_steps, dt, save_every, 0, out, w.s, width, r)
    else:
        rk4_steps(t, fc, q, v, 0, n_steps, dt, save_every, 0, out, w.s, width, r)


cdef extern from *:
    """
    /* the next case of a batch for the calling thread: counter[0]++, atomically */
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline long long db_claim(long long* c) { return _InterlockedExchangeAdd64(c, 1); }
    #else
    static inline long long db_claim(long long* c) { return __atomic_fetch_add(c, 1, __ATOMIC_RELAXED); }
    #endif
    """
    long long claim "db_claim"(long long* counter) noexcept nogil


def run_batch_chunk(system, fc, Q, V, Py_ssize_t n_steps, double dt, Py_ssize_t save_every, out,
                    done, status, saved, bint euler, Py_ssize_t start, Py_ssize_t stop,
                    counter=None):
    """The whole fixed-step runs of the cases ``start:stop`` of a batch that shares a tree
    (numba's ``run_batch``): case b starts at (Q[b], V[b]) (updated in place to its last valid
    state), takes ``fc.taus[b]`` (B, rows, nv) and saves into row b of each array of ``out``
    ((B, rows, nq), (B, rows, nv), (B, rows, nv), Err (B, rows) for a loop system, Stops
    (B, rows + 1) or (B, 0)); ``done[b]``,
    ``status[b]``, ``saved[b]`` (int64) are :func:`rk4_run`'s.  With ``counter`` (an int64
    array shared by the threads of a batch) the call runs the cases start + counter[0]++ below
    ``stop`` that it claims, one at a time, until none is left (one case per task: the threads
    share the work whatever each case costs).  Each case runs on arrays of
    this call's own (the system's work and limit scratch are not touched) with the arithmetic
    of one run: the same numbers.  A loop system's cases save their |phi| rows (Err); the largest
    error a step left before its projection (a single run's ``drift``) is not kept per case (the
    public simulate_batch takes no loop models).  Runs without the GIL; returns 0, or -2 (nothing computed)
    when the arrays' lengths do not fit one another or the model."""
    cdef Tree t
    cdef Forcing f, fb
    cdef Saves o, ob
    cdef Own w
    cdef Outcome r
    cdef double* pQ
    cdef double* pV
    cdef void* p
    cdef cnp.int64_t* st[3]
    cdef Py_ssize_t dq[2]
    cdef Py_ssize_t dv[2]
    cdef Py_ssize_t d[3]
    cdef Py_ssize_t B, b, rows, rt, width, k
    cdef long bad = tree_of(system, &t)
    doubles(Q, 2, True, b"Q", &pQ, dq)
    doubles(V, 2, True, b"V", &pV, dv)
    B = dq[0]
    for k, x in enumerate((done, status, saved)):
        array_of(x, 1, cnp.NPY_INT64, True, b"done, status, saved", &p, d)
        st[k] = <cnp.int64_t*>p
        bad = bad or d[0] != B
    if bad or dq[1] != t.nq or dv[0] != B or dv[1] != t.nv or save_every < 1 or n_steps < 0:
        return -2
    bad = forcing_of(fc, &t, -n_steps - 1, &f) or saves_of(out, &t, 3, count_saves(0, n_steps, save_every), &o, &rows)
    doubles(fc.taus, 3, False, b"taus", <double**>&p, d)
    rt = d[1]
    doubles(out.Qs, 3, True, b"Qs", <double**>&p, d)
    doubles(out.Stops, 2, True, b"Stops", <double**>&p, dv)
    if t.loops:  # |phi| per saved row of each case
        doubles(out.Err, 2, True, b"Err", <double**>&p, dq)
        bad = bad or dq[0] != B
    if bad or d[0] != B or dv[0] != B or (f.tau_mode != TAU_NONE and cnp.PyArray_DIMS(<cnp.ndarray>fc.taus)[0] != B):
        return -2
    if not 0 <= start <= stop <= B:
        return -2
    cdef long long* next_case = NULL
    if counter is not None:
        array_of(counter, 1, cnp.NPY_INT64, True, b"counter", &p, d)
        if d[0] < 1:
            return -2
        next_case = <long long*>p
    width = max(t.nq, t.nv, 1)
    own_arrays(&t, width, &w)
    try:
        mimic_scratch(&t)
    except MemoryError:
        free_own(&w)
        raise
    with nogil:
        b = start
        while True:
            if next_case != NULL:
                b = start + claim(next_case)
            if b >= stop:
                break
            ob = o
            ob.Qs, ob.Vs, ob.As = o.Qs + b * rows * t.nq, o.Vs + b * rows * t.nv, o.As + b * rows * t.nv
            if o.n_stops:
                ob.stops = o.stops + b * o.n_stops
            if o.n_err:
                ob.err = o.err + b * o.n_err
            fb = f
            fb.taus = f.taus + b * rt * t.nv if f.tau_mode != TAU_NONE else f.taus
            run_case(&t, &fb, &w, pQ + b * t.nq, pV + b * t.nv, n_steps, dt, save_every, &ob, width, euler, &r)
            st[0][b], st[1][b], st[2][b] = r.done, r.status, r.saved
            b += 1
        free_mimic(&t)
    free_own(&w)
    return 0
