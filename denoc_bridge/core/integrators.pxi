# The steps of a run: the applied forces, the accelerations of a stage, RK4 (RKMK on the joint
# Lie groups) and semi-implicit Euler of every system (a tree, mimic joints, loop closures,
# both); numba's kernels/run.py, integrators.py and systems.py before them (deleted).
#
# A system is a tree, a tree with loop closures (``loops``; core/systems.py LoopSystem: the
# constrained accelerations of loops.pyx, Lagrange multipliers on the tree, and after each step
# the projection of (q, v) onto the loops), or a tree with mimic joints as constraints in reduced
# coordinates (``mimic``; core/systems.py MimicSystem): its state (q_r, v_r) expands to the tree's,
# q_full = G q_r + o, v_full = G v_r (mimic.pxi); its accelerations are mimic_accelerations at
# the expanded state under the tree's springs and dampers there; q_r (+) xi_r and the RKMK rates
# are the tree's maps at the expanded arguments, restricted to the kept entries.  A tree with
# mimic joints and loop closures is both (``mimic`` and ``loops``; core/systems.py
# MimicLoopSystem): the mimic system's state, maps and forces, its accelerations those of the
# stacked rows J = [K; C(q_full)] (loops.pyx with the constant rows K ahead, stacked_cuts_of),
# its projection after each step the loop system's on the expanded state (K dq = 0 keeps the
# mimic relations).
#
# Per step the applied generalized force is tau_n + tau_passive(q, v), with the joints' springs
# and dampers -K (q (-) q_rest) - D v, and the constant external wrenches fext; tau_n is zero,
# one constant vector, or row n of a table (held over the step).  A run stops at the first
# step whose accelerations refuse their state: the state before that step is kept and the
# status is returned with the step.

cdef enum:  # the actuation of a run (denoc_bridge/core/systems.py TAU_*)
    TAU_NONE = 0
    TAU_CONSTANT = 1
    TAU_TABLE = 2

cdef enum:  # rows of a run's scratch (width max(nq, nv, 1)): core/systems.py's, read back by
    # the Python layer when a run fails (the stage it failed in)
    S_QS = 0  # the stage's q
    S_XI = 1  # its step in the tangent space
    S_VS = 2  # the stage's v
    S_TAU = 3  # its tau
    S_D = 4  # q (-) q_rest of the springs
    S_KX = 5  # rows S_KX .. S_KX + 3: the RKMK rates of the four stages
    S_KV = 9  # rows S_KV .. S_KV + 3: the accelerations of the four stages (Euler's: S_KV)
    S_Q1 = 13  # the next stage's q
    S_V1 = 14  # the next stage's v
    S_VACC = 15  # k1 + 2 k2 + 2 k3
    S_ZEROS = 16
    S_ROWS = 17


cdef struct Limits:  # the limited joints of a system (limits.pxi); n = 0: none
    Py_ssize_t n
    const cnp.int64_t* idx  # (n, 2): q index, v index (in the system's state)
    const double* bounds  # (n, 2): lower, upper
    double* S  # scratch (rows, cols) = (2 m + 4, max(tree nv, m, 1)), m = n + nr
    Py_ssize_t rows, cols
    cnp.int64_t* active  # (n,): the joints being stopped
    double* energy  # [0]: the energy the stops took so far
    const double* R  # (nr, tree nv): the constraint rows the stops keep (a mimic system's K)
    Py_ssize_t nr
    const cnp.int64_t* tv  # (n,): the tree's v index of each limited joint; NULL: idx's (a tree)


cdef struct Mimic:  # a tree with mimic joints: its maps and the run's scratch (mimic_scratch)
    MimicMaps mm
    Py_ssize_t reach  # the links before it hold every mimic and mimicked DOF
    double* qf  # the expanded state and forces: q_full (tree nq), v_full, xi_full (tree nv)
    double* vf
    double* xf
    double* tp  # the tree's springs and dampers (tree nv), then q_full (-) q_rest (tree nv)
    double* tf  # the tree's forces
    double* q1  # q_full (+) xi_full (tree nq), or the tree's RKMK rate
    double* acc  # mimic_accelerations' scratch
    cnp.int64_t* tv  # the limited joints' tree v index (Limits.tv)


cdef struct LoopRun:  # a tree with loop closures (core/systems.py LoopSystem, MimicLoopSystem)
    Loop lp  # the table, the work array, the cut joints, the scratch (loops.pxd)
    Packed pk  # pi, pf, sb as taken (a batch's thread carves its own scratch from them)
    const double* K  # a MimicLoopSystem's mimic rows (nc, tree nv) stacked ahead; NULL: none
    double accept  # the projection's |phi| taken as closed after max_iter steps
    double alpha, beta  # Baumgarte's terms (0, 0: the exact acceleration constraint)
    double rtol  # the independent rows' relative tolerance
    double tol  # the projection's tolerance on |phi|
    bint project  # project (q, v) onto the loops after each step
    long max_iter  # the projection's Gauss-Newton steps
    double* drift  # [0]: the largest |phi| a step left before its projection


cdef struct Tree:  # the system: the model table, its work array, its limits
    const int* ki
    const double* kf
    Py_ssize_t L, nq, nv  # the state's lengths: the tree's, or a mimic system's reduced ones
    Py_ssize_t nqt, nvt  # the tree's
    double* work
    bint flat  # every joint a vector space: q (+) xi = q + xi, dexp^-1 = 1
    bint swept  # revolute chains: the RK4 stages fused (stage_sweep)
    bint mimic  # a tree with mimic joints (mi)
    Mimic mi
    bint loops  # a tree with loop closures (lr); no limits
    LoopRun lr
    Limits lim


cdef struct Forcing:  # the forces of a run (core/systems.py Forcing)
    int tau_mode
    const double* taus  # one row (TAU_CONSTANT) or one per step (TAU_TABLE), nv each
    const double* fext  # (L, 6) or NULL
    const double* K
    const double* D
    const double* q_rest
    bint passive


cdef struct Saves:  # the saved rows (core/systems.py Saves)
    double* Qs
    double* Vs
    double* As
    double* stops  # the stops' energy per row, NULL: no limits
    Py_ssize_t n_stops
    double* err  # a loop system's |phi| per row, NULL: not a loop system
    Py_ssize_t n_err


cdef struct Outcome:  # what a call returns: (steps done, status, rows saved)
    Py_ssize_t done
    long status
    Py_ssize_t saved


cdef inline double* srow(double* s, Py_ssize_t width, int r) noexcept nogil:
    """Row r of a run's scratch."""
    return s + r * width


cdef void applied_forces(const Tree* t, const Forcing* fc, const double* q, const double* v,
                         Py_ssize_t n, double* d, double* tau) noexcept nogil:
    """tau = tau_n - K (q (-) q_rest) - D v (springs and dampers when ``passive``; a mimic
    system's act on its tree, in its accelerations: tau_n alone here); ``d``: nv scratch."""
    cdef Py_ssize_t i, nv = t.nv
    if fc.passive and not t.mimic:
        model_difference(t.ki, t.L, fc.q_rest, q, d)
        for i in range(nv):
            tau[i] = -fc.K[i] * d[i] - fc.D[i] * v[i]
    else:
        for i in range(nv):
            tau[i] = 0.0
    if fc.tau_mode == TAU_CONSTANT:
        for i in range(nv):
            tau[i] += fc.taus[i]
    elif fc.tau_mode == TAU_TABLE:
        for i in range(nv):
            tau[i] += fc.taus[n * nv + i]


cdef inline long finite_status(const double* a, Py_ssize_t nv) noexcept nogil:
    """-1 when an entry of a is not finite (a state that left the finite numbers), else 0."""
    return 0 if all_finite(a, nv) else -1


cdef long mimic_state_accelerations(const Tree* t, const Forcing* fc, const double* q,
                                    const double* v, const double* tau, double* a) noexcept nogil:
    """A mimic system's accelerations: the state expanded, the tree's forces at it
    (mimic_tree_forces: the springs and dampers there), then mimic_accelerations (mimic.pxi), or
    with loops mimic_loop_accelerations: -1, k + 1, -3 or 0."""
    cdef const Mimic* mi = &t.mi
    cdef const MimicMaps* mm = &mi.mm
    cdef Py_ssize_t nvt = t.nvt
    expand_configuration(mm, q, mi.qf)
    expand_velocity(mm, nvt, v, mi.vf)
    mimic_tree_forces(mm, t.ki, t.L, nvt, mi.qf, mi.vf, tau, fc.K, fc.D, fc.q_rest, fc.passive, mi.tp, mi.tf)
    if t.loops:
        return mimic_loop_accelerations(t, fc, a)
    return mimic_accelerations(mm, t.ki, t.kf, t.L, t.nqt, nvt, mi.reach, t.work, mi.qf, mi.vf,
                               mi.tf, fc.fext, mi.acc, a)


cdef long mimic_loop_accelerations(const Tree* t, const Forcing* fc, double* a) noexcept nogil:
    """a_r of a mimic system with loops at the expanded state and forces (mi.qf, mi.vf, mi.tf),
    Lagrange multipliers on the tree with the stacked rows (004 (13)-(14), loops.pyx):

        J = [K; C(q)],   J a = [0; -Cdot v - 2 alpha C v - beta^2 phi]   (004 (12)-(15))
        a = a0 + M^-1 J^T lambda over J's independent rows,   a_r = a[v_keep]

    Returns 0, k + 1, -1 (not finite) or -3 (J M^-1 J^T singular)."""
    cdef const Mimic* mi = &t.mi
    cdef Py_ssize_t rank, i
    cdef long status = loop_accelerations(<Loop*>&t.lr.lp, mi.qf, mi.vf, mi.tf, fc.fext, t.lr.alpha,
                                          t.lr.beta, t.lr.rtol, mi.acc, &rank)
    if status:
        return status
    for i in range(t.nv):
        a[i] = mi.acc[mi.mm.v_keep[i]]
    return 0


cdef long accelerations(const Tree* t, const Forcing* fc, const double* q, const double* v,
                        const double* tau, double* a) noexcept nogil:
    """Forward dynamics inside a run (000 Table 3): the state is not checked (the previous
    stage's accelerations were), the accelerations are: -1, k + 1 or 0."""
    cdef Py_ssize_t rank
    if t.mimic:
        return mimic_state_accelerations(t, fc, q, v, tau, a)
    if t.loops:  # 004 eqs. 13-14 (loops.pyx)
        return loop_accelerations(<Loop*>&t.lr.lp, q, v, tau, fc.fext, t.lr.alpha, t.lr.beta, t.lr.rtol, a,
                                  &rank)
    cdef long status = forward_dynamics_passes(t.ki, t.kf, t.L, t.nv, t.work, q, t.nq, v, tau,
                                               fc.fext, a, False)
    return status if status else finite_status(a, t.nv)


cdef long stage(const Tree* t, const Forcing* fc, const double* qs, const double* vs,
                const double* tau, double* a, const double* vb, const double* vacc, double h,
                const double* q1, double* v1) noexcept nogil:
    """The accelerations ``a`` of one RK4 stage at (qs, vs) under tau, and the next stage's
    rates v1 = vb + h (vacc + a) (its configuration q1 is known).  On revolute chains
    (``swept``) the stage's twists are already in ``work``: the articulated backward recursion,
    then stage_sweep, which also sweeps the twists at (q1, v1) for the next stage."""
    cdef Py_ssize_t i, k
    cdef long status
    if t.swept:
        k = articulated_backward_recursion(t.ki, t.kf, t.L, t.nv, tau, t.work, False)
        if k >= 0:
            return k + 1
        stage_sweep(t.ki, t.kf, t.L, t.nv, t.work, a, vb, vacc, h, q1, t.nq, v1, fc.fext)
        return finite_status(a, t.nv)
    status = accelerations(t, fc, qs, vs, tau, a)
    if status == 0:
        for i in range(t.nv):
            v1[i] = vb[i] + h * (vacc[i] + a[i])
    return status


cdef inline void configuration_step(const Tree* t, const double* q, const double* xi,
                                    double* out) noexcept nogil:
    """out = q (+) xi (``out`` may be q); a mimic system's: the tree's q_full (+) G xi, its kept
    entries."""
    cdef Py_ssize_t i
    if t.mimic:
        expand_configuration(&t.mi.mm, q, t.mi.qf)
        expand_velocity(&t.mi.mm, t.nvt, xi, t.mi.xf)
        model_integrate(t.ki, t.L, t.mi.qf, t.mi.xf, t.mi.q1)
        reduce_configuration(&t.mi.mm, t.mi.q1, out)
    elif t.flat:
        for i in range(t.nq):
            out[i] = q[i] + xi[i]
    else:
        model_integrate(t.ki, t.L, q, xi, out)


cdef inline void tangent_rate(const Tree* t, const double* xi, const double* v,
                              double* out) noexcept nogil:
    """out = dexp_{-xi}^-1 v, the RKMK rate (v itself on vector spaces); a mimic system's: the
    tree's dexp_{-G xi}^-1 (G v), its kept entries."""
    cdef Py_ssize_t i
    if t.mimic:
        expand_velocity(&t.mi.mm, t.nvt, xi, t.mi.xf)
        expand_velocity(&t.mi.mm, t.nvt, v, t.mi.vf)
        model_dexpinv(t.ki, t.L, t.mi.xf, t.mi.vf, t.mi.q1)
        for i in range(t.nv):
            out[i] = t.mi.q1[t.mi.mm.v_keep[i]]
    elif t.flat:
        for i in range(t.nv):
            out[i] = v[i]
    else:
        model_dexpinv(t.ki, t.L, xi, v, out)


cdef Py_ssize_t save(const Tree* t, Py_ssize_t n, Py_ssize_t save_every, Py_ssize_t r,
                     const double* q, const double* v, const double* a,
                     const Saves* out) noexcept nogil:
    """When n % save_every == 0, (q, v, a), the stops' energy and a loop system's |phi| (of the
    accelerations at (q, v), just evaluated) into row r; returns the rows saved (0 or 1)."""
    cdef Py_ssize_t i
    if n % save_every:
        return 0
    if out.n_stops:
        out.stops[r] = t.lim.energy[0]
    if out.n_err:  # the loops' error (a mimic system's rows K hold at its expanded state)
        out.err[r] = largest(t.lr.lp.ds.phi + t.lr.lp.ds.nk, t.lr.lp.cu.m)
    for i in range(t.nq):
        out.Qs[r * t.nq + i] = q[i]
    for i in range(t.nv):
        out.Vs[r * t.nv + i] = v[i]
        out.As[r * t.nv + i] = a[i]
    return 1


cdef long mimic_projection(Tree* t, double* q, double* v, double* err, double* err0) noexcept nogil:
    """A mimic system with loops projected onto its loops: (q_full, v_full) expanded, the loop
    system's projection with the stacked rows [K; C] on the tree (dq = -M^-1 J^T (J M^-1 J^T)^-1
    [0; phi], so K dq = 0; then v -= M^-1 J^T (J M^-1 J^T)^-1 J v), their kept entries back
    (also after a failure, as far as it got).  Returns project_within's status."""
    cdef Mimic* mi = &t.mi
    expand_configuration(&mi.mm, q, mi.qf)
    expand_velocity(&mi.mm, t.nvt, v, mi.vf)
    cdef long status = project_within(&t.lr.lp, mi.qf, mi.vf, t.lr.rtol, t.lr.tol, t.lr.max_iter,
                                      t.lr.accept, mi.q1, err, err0)
    reduce_configuration(&mi.mm, mi.qf, q)
    reduce_velocity(&mi.mm, mi.vf, v)
    return status


cdef long end_step(Tree* t, const Forcing* fc, double* q, double* v, double* s,
                   Py_ssize_t width) noexcept nogil:
    """After a step: a loop system's projection onto its loops (loops.pyx project_loops, its
    largest |phi| before it kept in ``drift``); the joint limits (limits.pxi), a stop on a fused
    tree sweeping the next stage's twists again, at the new state.  Returns the status."""
    cdef Py_ssize_t stopped
    cdef long status
    cdef double err, err0
    if t.loops:
        if not t.lr.project:
            return 0
        if t.mimic:
            status = mimic_projection(t, q, v, &err, &err0)
        else:
            status = project_within(&t.lr.lp, q, v, t.lr.rtol, t.lr.tol, t.lr.max_iter, t.lr.accept,
                                    srow(s, width, S_QS), &err, &err0)
        if err0 > t.lr.drift[0]:
            t.lr.drift[0] = err0
        return status
    if t.lim.n == 0:
        return 0
    status = enforce_limits(t, fc, q, v, &stopped)
    if stopped and t.swept and status == 0:
        first_sweep(t.ki, t.kf, t.L, t.nv, t.work, q, t.nq, v, srow(s, width, S_KV),
                    srow(s, width, S_ZEROS), srow(s, width, S_V1), fc.fext)
    return status


cdef long inner_stage(const Tree* t, const Forcing* fc, const double* q, const double* v,
                      Py_ssize_t n, double h_next, double* kx, double* kv, double* s,
                      Py_ssize_t width) noexcept nogil:
    """RK4 stage 2 or 3 at (qs, vs) = (q1, v1), prepared by the previous stage with xi its
    step in the tangent space: kx = dexp^-1 vs, kv = a(qs, vs); the next stage's state
    q1 = q (+) h_next kx, v1 = v + h_next kv.  Returns the status."""
    cdef double* qs = srow(s, width, S_QS)
    cdef double* xi = srow(s, width, S_XI)
    cdef double* vs = srow(s, width, S_VS)
    cdef double* tau = srow(s, width, S_TAU)
    cdef double* q1 = srow(s, width, S_Q1)
    cdef double* v1 = srow(s, width, S_V1)
    cdef Py_ssize_t i
    for i in range(t.nq):
        qs[i] = q1[i]
    for i in range(t.nv):
        vs[i] = v1[i]
    tangent_rate(t, xi, vs, kx)
    applied_forces(t, fc, qs, vs, n, srow(s, width, S_D), tau)
    for i in range(t.nv):
        xi[i] = h_next * kx[i]
    configuration_step(t, q, xi, q1)
    return stage(t, fc, qs, vs, tau, kv, v, srow(s, width, S_ZEROS), h_next, q1, v1)


cdef long rk4_last_stage(Tree* t, const Forcing* fc, double* q, double* v, Py_ssize_t n,
                         double dt, double* s, Py_ssize_t width) noexcept nogil:
    """Stage 4 at (q1, v1) and the step: xi = dt/6 (k1 + 2 k2 + 2 k3 + k4) in the tangent
    space at q, v likewise; q, v <- q (+) xi, v + dt/6 (...).  Returns the status."""
    cdef double* xi = srow(s, width, S_XI)
    cdef double* qs = srow(s, width, S_QS)
    cdef double* vs = srow(s, width, S_VS)
    cdef double* q1 = srow(s, width, S_Q1)
    cdef double* v1 = srow(s, width, S_V1)
    cdef double* vacc = srow(s, width, S_VACC)
    cdef double* kx = srow(s, width, S_KX)
    cdef double* kv = srow(s, width, S_KV)
    cdef Py_ssize_t i, nv = t.nv, nw = width
    cdef long status
    for i in range(t.nq):
        qs[i] = q1[i]
    for i in range(nv):
        vs[i] = v1[i]
    tangent_rate(t, xi, vs, kx + 3 * nw)
    applied_forces(t, fc, qs, vs, n, srow(s, width, S_D), srow(s, width, S_TAU))
    for i in range(nv):
        xi[i] = dt / 6.0 * (kx[i] + 2.0 * kx[nw + i] + 2.0 * kx[2 * nw + i] + kx[3 * nw + i])
        vacc[i] = kv[i] + 2.0 * kv[nw + i] + 2.0 * kv[2 * nw + i]
    configuration_step(t, q, xi, q1)
    status = stage(t, fc, qs, vs, srow(s, width, S_TAU), kv + 3 * nw, v, vacc, dt / 6.0, q1, v1)
    if status == 0:
        for i in range(t.nq):
            q[i] = q1[i]
        for i in range(nv):
            v[i] = v1[i]
    return status


cdef void rk4_steps(Tree* t, const Forcing* fc, double* q, double* v, Py_ssize_t step0,
                    Py_ssize_t n_steps, double dt, Py_ssize_t save_every, Py_ssize_t save0,
                    const Saves* out, double* s, Py_ssize_t width, Outcome* o) noexcept nogil:
    """n_steps RK4 steps from (q, v) (updated in place), global step index step0 at the start;
    before step n, when n % save_every == 0, the state and its acceleration go to row save0 +
    (rows saved so far).  The configuration of stage s + 1, q (+) c dt kx_s, is known before
    stage s's accelerations, and its rates v + c dt kv_s follow them (stage)."""
    cdef double* xi = srow(s, width, S_XI)
    cdef double* k1v = srow(s, width, S_KV)
    cdef double* zeros = srow(s, width, S_ZEROS)
    cdef Py_ssize_t m, n, i, nw = width
    o.done, o.status, o.saved = 0, 0, 0
    for i in range(t.nv):
        zeros[i] = 0.0
    if n_steps > 0 and t.swept:  # stage 1 of the first step: its twists
        first_sweep(t.ki, t.kf, t.L, t.nv, t.work, q, t.nq, v, k1v, zeros, srow(s, width, S_V1), fc.fext)
    for m in range(n_steps):
        n = step0 + m
        o.done = m
        applied_forces(t, fc, q, v, n, srow(s, width, S_D), srow(s, width, S_TAU))  # stage 1
        for i in range(t.nv):
            xi[i] = 0.5 * dt * v[i]
        configuration_step(t, q, xi, srow(s, width, S_Q1))
        o.status = stage(t, fc, q, v, srow(s, width, S_TAU), k1v, v, zeros, 0.5 * dt,
                         srow(s, width, S_Q1), srow(s, width, S_V1))
        if o.status:
            return
        o.saved += save(t, n, save_every, save0 + o.saved, q, v, k1v, out)
        for i in range(t.nv):
            srow(s, width, S_KX)[i] = v[i]
        o.status = inner_stage(t, fc, q, v, n, 0.5 * dt, srow(s, width, S_KX) + nw, k1v + nw, s, width)
        if o.status == 0:
            o.status = inner_stage(t, fc, q, v, n, dt, srow(s, width, S_KX) + 2 * nw, k1v + 2 * nw, s, width)
        if o.status == 0:
            o.status = rk4_last_stage(t, fc, q, v, n, dt, s, width)
        if o.status:
            return
        o.done = m + 1
        o.status = end_step(t, fc, q, v, s, width)
        if o.status:
            return
    o.done = n_steps
    end_row(t, save0 + o.saved, out)


cdef inline void end_row(const Tree* t, Py_ssize_t r, const Saves* out) noexcept nogil:
    """The stops' energy at the run's last state into the row after the saved ones (the row of
    the final state, when there is one)."""
    if out.n_stops > r:
        out.stops[r] = t.lim.energy[0]


cdef void euler_steps(Tree* t, const Forcing* fc, double* q, double* v, Py_ssize_t step0,
                      Py_ssize_t n_steps, double dt, Py_ssize_t save_every, Py_ssize_t save0,
                      const Saves* out, double* s, Py_ssize_t width, Outcome* o) noexcept nogil:
    """Semi-implicit (symplectic) Euler: v += dt a(q, v); q = q (+) dt v.  As rk4_steps."""
    cdef double* xi = srow(s, width, S_XI)
    cdef double* tau = srow(s, width, S_TAU)
    cdef double* a = srow(s, width, S_KV)
    cdef Py_ssize_t m, n, i
    o.done, o.status, o.saved = 0, 0, 0
    for m in range(n_steps):
        n = step0 + m
        o.done = m
        applied_forces(t, fc, q, v, n, srow(s, width, S_D), tau)
        o.status = accelerations(t, fc, q, v, tau, a)
        if o.status:
            return
        o.saved += save(t, n, save_every, save0 + o.saved, q, v, a, out)
        for i in range(t.nv):
            v[i] += dt * a[i]
            xi[i] = dt * v[i]
        configuration_step(t, q, xi, q)
        o.done = m + 1
        o.status = end_step(t, fc, q, v, s, width)
        if o.status:
            return
    o.done = n_steps
    end_row(t, save0 + o.saved, out)
