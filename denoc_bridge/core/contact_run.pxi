# The contact time stepper: runs of steps of the ``contact-euler`` method
# (denoc_bridge/simulation/contact.py gives the scheme and keeps the Python step it is tested
# against), one call for many steps.  One step from (q, v), as the Python step does it:
#
# 1. tau_a = tau + passive - dt K v + Kp (q_ref (-) q) - (Kd + dt Kp) v: the joint springs and
#    dampers and the posture hold, implicit (their dt D + dt^2 K is on the model's armature);
# 2. v_free = v + dt M^-1 (tau_a - h): the O(n) forward dynamics (000 Table 3), its factors kept;
# 3. the active contacts at q, G = J M^-1 J^T on those factors, g = J v_free shifted by the gaps
#    and the restitution, the impulses by the warm-started PGS;
# 4. v+ = v_free + (M^-1 J^T) lambda, q+ = q (+) dt v+, the position correction where a contact
#    penetrates deeper than slop.
#
# On a model with loop closures or joint couplings (``Bilateral``, contact_loops.pxi) step 2 is
# the constrained forward dynamics (loops.pxd), G and M^-1 J^T in steps 3 and 4 are the
# constrained system's (the bilateral impulses eliminated), and after step 4 the loops are
# closed again: q+ by Gauss-Newton to the tolerance, then v+ projected onto C v = 0, both in
# the kinetic-energy metric (loops.pxd project_loops).
#
# A MimicModel (``s.mimic``, contact_mimic.pxi) steps on its tree's coordinates: its mimic rows
# K are constant bilateral rows stacked ahead of its tree's loops (if any) on the same layer,
# the state is expanded on entry, moved back onto the relations (q = G q_r + offset,
# v = G v_r from the kept entries) where the Python step's reduced state would be, and saved
# reduced (q_r = q[q_keep], v_r = v[v_keep]).  Its tree's loops are closed after step 4 as the
# Python step closes them: Newton on the dependent reduced coordinates, then v = E v_i (004
# eqs. 26 and 16; close_mimic_loops).
#
# A step that needs more than PGS (the Python layer's fallbacks: the all-sticking solution,
# ADMM) or meets a non-finite value or a singular articulated inertia (named there) is left
# undone: the run returns its index with the state as it was before it.

cdef enum:
    CORRECTION_SWEEPS = 10000  # the position correction's frictionless PGS: at most these sweeps
    STEP_DONE = 0  # every step taken
    STEP_PYTHON = 1  # the step at the returned index needs the Python layer
    STEP_STALLED = 2  # the same, because PGS stalled: lam[:3m] holds where it stopped


cdef double CORRECTION_TOL = 1e-14  # ... to this tolerance


cdef struct Drive:  # the joint forces of step 1, each (nv,) or (nq,)
    const double* tau
    const double* damping
    const double* stiffness
    const double* spring_rate
    const double* q_rest
    const double* kp
    const double* q_ref
    const double* hold_rate
    bint passive  # the model has joint springs or dampers
    bint hold  # a posture hold is given


cdef struct Run:
    const int* ki
    const double* kf
    Py_ssize_t L, nq, nv
    double* work
    Drive dr
    Points pts
    Rows rw
    double dt, tol, slop
    long max_sweeps
    const cnp.int64_t* group_of_pair  # (n ng,) each (point, ground) pair's (link, ground) group
    Py_ssize_t n_groups
    double* q  # the state, updated step by step
    double* v
    double* previous  # (n ng + 2 nl, 3) the last impulses of each pair: the warm start
    double* work_done  # (3,) the work so far (resultants' three)
    double w[3]  # the step's
    double* lam  # (3 m_max,) the step's impulses
    double* T  # the saves: (S,), (S, nq), (S, nv) x 3, (S, n_groups, 3) x 2, (S, 3)
    double* Q
    double* V
    double* A
    double* TAU
    double* F
    double* P
    double* Wk
    Py_ssize_t save_every
    double* tau_a  # scratch: nv each
    double* pull
    double* a
    double* v_free
    double* v_plus
    double* dq
    double* zeros
    double* q_plus  # nq
    double* lam2  # 3 m_max each
    double* sigma
    double* g
    double* mu  # m_max
    double* force  # n_groups x 3 each
    double* point
    cnp.int64_t* ids  # m_max
    double* G  # r x r, grown on demand
    Py_ssize_t G_cap
    Py_ssize_t m_next  # the active contacts at q+ when the step's check found nothing to
    bint rows_next  # correct (rows_next): the next step's at its q, in the buffers already (a
    # step that fails ends the run, and the next run finds its own)
    Bilateral bl  # the loops (bl.on) of a model with loop closures or joint couplings
    bint mimic  # a MimicModel: the steps on its tree, its rows K in bl (contact_mimic.pxi)
    MimicMaps mm  # its maps (tree.pxd)
    const double* Kc  # (nc, nv) its rows K_j = e_s - mult e_m
    Py_ssize_t nqs, nvs  # the state's and the saves' lengths (a MimicModel's reduced ones)
    double* qs  # the caller's state (nqs,), (nvs,): q and v themselves but on a MimicModel
    double* vs
    double* qr  # scratch nqs + nvs: a reduced state (a MimicModel)
    double* vr
    Newton nt  # a MimicModel whose tree has loops: their closing (contact_mimic.pxi)


cdef inline bint room_for(Run* s, Py_ssize_t r) noexcept nogil:
    """G holds r x r numbers (regrown when too small); False when the memory is not there."""
    cdef double* grown
    if r * r <= s.G_cap:
        return True
    grown = <double*>realloc(s.G, r * r * sizeof(double))
    if grown == NULL:
        return False
    s.G, s.G_cap = grown, r * r
    return True


cdef void applied_forces(Run* s) noexcept nogil:
    """tau_a at (q, v) (step 1); the pull of the hold, Kp (q_ref (-) q), left in ``pull``
    (zero without a hold)."""
    cdef const Drive* d = &s.dr
    cdef Py_ssize_t i
    for i in range(s.nv):
        s.tau_a[i] = d.tau[i]
    if d.passive:  # -K (q (-) q_rest) - D v, then -dt K v (implicit)
        model_difference(s.ki, s.L, d.q_rest, s.q, s.pull)
        for i in range(s.nv):
            s.tau_a[i] = (s.tau_a[i] + (-d.damping[i] * s.v[i] - d.stiffness[i] * s.pull[i])
                          - d.spring_rate[i] * s.v[i])
    for i in range(s.nv):
        s.pull[i] = 0.0
    if d.hold:  # Kp (q_ref (-) q) - (Kd + dt Kp) v
        model_difference(s.ki, s.L, s.q, d.q_ref, s.pull)
        for i in range(s.nv):
            s.pull[i] = d.kp[i] * s.pull[i]
            s.tau_a[i] = s.tau_a[i] + s.pull[i] - d.hold_rate[i] * s.v[i]


cdef bint step_delassus(Run* s, Py_ssize_t r) noexcept nogil:
    """G (r x r) and Y[:r] of the active contacts' first r rows on the factors of the last
    forward dynamics, the constrained system's on a model with loops (its rows at the same
    configuration in s.bl): False where G is not finite (or no memory)."""
    if not room_for(s, r) or not delassus(s.ki, s.kf, s.L, s.nv, s.work, s.rw.J, r, s.rw.Y, s.G):
        return False
    return not s.bl.on or eliminate_bilateral(&s.bl, s.rw.J, r, s.rw.Y, s.G)


cdef void impulse_response(Run* s, Py_ssize_t r, const double* lam, double* out) noexcept nogil:
    """out = M^-1 J^T lam = Y^T lam for the first r rows of the Delassus operator's Y."""
    cdef Py_ssize_t row, j
    for j in range(s.nv):
        out[j] = 0.0
    for row in range(r):
        for j in range(s.nv):
            out[j] += s.rw.Y[row * s.nv + j] * lam[row]


cdef Py_ssize_t impulses(Run* s) noexcept nogil:
    """The active contacts at q and their impulses (step 3) into ``lam[:3m]`` on the factors of
    the step's forward dynamics, their pair indices into ``ids[:m]``: m, -1 where G is not
    finite (or no memory), -2 where PGS does not converge (``lam[:3m]``: where it stopped)."""
    cdef Rows* rw = &s.rw
    cdef Py_ssize_t m, r, i, j, c, row, gr
    cdef double acc, vn, last, e
    if s.rows_next:  # found at the end of the step before
        m, s.rows_next = s.m_next, False
    else:
        m = active_contacts(s.ki, s.kf, s.L, s.nv, s.work, s.q, s.nq, &s.pts, rw)
    r = 3 * m
    if m == 0:
        return 0
    if not step_delassus(s, r):
        return -1
    for i in range(m):  # a joint limit: no friction, no restitution
        gr = rw.pair[2 * i + 1]
        s.ids[i] = pair_id(&s.pts, rw.pair[2 * i], gr)
        s.mu[i] = s.pts.gmu[gr] if rw.pair[2 * i] < s.pts.n else 0.0
        for c in range(3):
            s.lam[3 * i + c] = s.previous[3 * s.ids[i] + c]
    for row in range(r):  # g = J v_free
        acc = 0.0
        for j in range(s.nv):
            acc += rw.J[row * s.nv + j] * s.v_free[j]
        s.g[row] = acc
    for i in range(m):  # the normal rows: the gap, then Newton's restitution on the approach
        vn = 0.0
        for j in range(s.nv):
            vn += rw.J[(3 * i + 2) * s.nv + j] * s.v[j]
        e = s.pts.grest[rw.pair[2 * i + 1]] if rw.pair[2 * i] < s.pts.n else 0.0
        s.g[3 * i + 2] += fmax(rw.dist[i], 0.0) / s.dt + e * fmin(vn, 0.0)
    if pgs(s.G, s.g, s.mu, m, s.lam, s.sigma, s.tol, s.max_sweeps, &last) > s.max_sweeps:
        return -2
    return m


cdef bint correct_positions(Run* s) noexcept nogil:
    """q+ moved onto the surfaces where a contact penetrates deeper than slop (step 4, in
    place): q+ (+) M^-1 J_n^T delta with delta >= 0 the frictionless impulses that close the
    penetrations in the mass metric.  False where G is not finite, the articulated inertia
    singular or the frictionless PGS does not converge.  Where nothing is corrected, the rows
    found at q+ are kept for the next step (rows_next)."""
    cdef Rows* rw = &s.rw
    cdef Py_ssize_t m = active_contacts(s.ki, s.kf, s.L, s.nv, s.work, s.q_plus, s.nq, &s.pts, rw)
    cdef Py_ssize_t r = 3 * m, i, j, row
    cdef double deepest = 0.0, last
    for i in range(m):
        deepest = fmin(deepest, rw.dist[i])
    if m == 0 or deepest >= -s.slop:
        s.m_next, s.rows_next = m, True
        return True
    if forward_dynamics_passes(s.ki, s.kf, s.L, s.nv, s.work, s.q_plus, s.nq, s.zeros, s.zeros,
                               NULL, s.dq, True):
        return False
    if s.bl.on:  # the loops' rows at q+
        bilateral_rows(&s.bl, s.q_plus)
    if not step_delassus(s, r):
        return False
    for i in range(m):
        s.g[3 * i] = s.g[3 * i + 1] = 0.0
        s.g[3 * i + 2] = fmin(rw.dist[i], 0.0)
        s.mu[i] = 0.0
    for row in range(r):
        s.lam2[row] = 0.0
    if pgs(s.G, s.g, s.mu, m, s.lam2, s.sigma, CORRECTION_TOL, CORRECTION_SWEEPS, &last) > CORRECTION_SWEEPS:
        return False
    impulse_response(s, r, s.lam2, s.dq)  # q (+) M^-1 J_n^T delta
    model_integrate(s.ki, s.L, s.q_plus, s.dq, s.q_plus)
    if s.mimic:
        onto_relations(s, s.q_plus, NULL)
    return True


cdef bint close_loops(Run* s) noexcept nogil:
    """(q+, v+) projected onto the loops (loops.pxd project_loops): False where the projection
    fails or leaves the finite numbers.  The rows found at q+ for the next step stay only where
    q+ was already closed (and so not moved)."""
    cdef double err = 0.0, err0 = 0.0
    if project_loops(&s.bl.lp, s.q_plus, s.v_plus, s.bl.rtol, s.bl.tol, s.bl.max_iter, s.bl.qn,
                     &err, &err0):
        return False
    if err0 > s.bl.tol:
        s.rows_next = False
    return all_finite(s.q_plus, s.nq) and all_finite(s.v_plus, s.nv)


cdef void resultants(Run* s, Py_ssize_t m) noexcept nogil:
    """The step's work into ``w`` (3: the contacts' lambda . J v+, their impacts'
    -1/2 lambda . J (v+ - v) (Kelvin), the joint limits' both), the resultant force of each
    (link, ground) group into ``force`` (world frame, N) and its centre of pressure into
    ``point`` (the contact points weighted by their normal impulses; NaN where the group pushes
    nothing)."""
    cdef const Rows* rw = &s.rw
    cdef Py_ssize_t ng = s.pts.ng, row, i, j, c, gr, group
    cdef const double* B
    cdef double after, before, f, push
    s.w[0] = s.w[1] = s.w[2] = 0.0
    for row in range(3 * m):
        after = 0.0
        before = 0.0
        for j in range(s.nv):
            after += rw.J[row * s.nv + j] * s.v_plus[j]
            before += rw.J[row * s.nv + j] * s.v[j]
        if rw.pair[2 * (row // 3)] < s.pts.n:
            s.w[0] += s.lam[row] * after
            s.w[1] -= 0.5 * s.lam[row] * (after - before)
        else:
            s.w[2] += s.lam[row] * after - 0.5 * s.lam[row] * (after - before)
    for j in range(3 * s.n_groups):
        s.force[j] = 0.0
        s.point[j] = 0.0
    for i in range(m):
        if rw.pair[2 * i] >= s.pts.n:  # a joint limit
            continue
        gr, group = rw.pair[2 * i + 1], s.group_of_pair[s.ids[i]]
        B = s.pts.gB + 9 * gr
        for c in range(3):  # B lambda_i / dt, B = [t1 t2 n]; sum lambda_n x_i
            f = B[3 * c] * s.lam[3 * i] + B[3 * c + 1] * s.lam[3 * i + 1] + B[3 * c + 2] * s.lam[3 * i + 2]
            s.force[3 * group + c] += f / s.dt
            s.point[3 * group + c] += s.lam[3 * i + 2] * rw.pos[3 * i + c]
    for group in range(s.n_groups):  # / sum lambda_n = dt n . F (the tangents are normal to n)
        B = s.pts.gB + 9 * (group % ng)
        push = s.dt * (B[2] * s.force[3 * group] + B[5] * s.force[3 * group + 1]
                       + B[8] * s.force[3 * group + 2])
        for c in range(3):
            s.point[3 * group + c] = s.point[3 * group + c] / push if push > 0.0 else NAN


cdef void take_step(Run* s, Py_ssize_t m) noexcept nogil:
    """The state moves to (q+, v+): the contact work, the warm start of the next step, the
    mean acceleration (v+ - v) / dt into ``a`` and the joint forces applied into ``tau_a`` (the
    hold's at v+, as denoc_bridge/simulation/hold.py says)."""
    cdef Py_ssize_t i, c, j
    for i in range(3):
        s.work_done[i] += s.w[i]
    for i in range(3 * (s.pts.n * s.pts.ng + 2 * s.pts.nl)):
        s.previous[i] = 0.0
    for i in range(m):
        for c in range(3):
            s.previous[3 * s.ids[i] + c] = s.lam[3 * i + c]
    for j in range(s.nv):
        s.a[j] = (s.v_plus[j] - s.v[j]) / s.dt
        s.tau_a[j] = (s.dr.tau[j] + s.pull[j] - s.dr.hold_rate[j] * s.v_plus[j] if s.dr.hold
                      else s.dr.tau[j])
        s.v[j] = s.v_plus[j]
    for j in range(s.nq):
        s.q[j] = s.q_plus[j]


cdef void save(Run* s, Py_ssize_t k) noexcept nogil:
    """Saved state (k + 1) / save_every at its time (the accelerations, forces and contact forces
    and points of the step that ended there go to the row before, as the other methods save
    them); a MimicModel's reduced: its tree's kept entries."""
    cdef Py_ssize_t row = (k + 1) // s.save_every, j, i, G3 = 3 * s.n_groups
    s.T[row] = (k + 1) * s.dt
    for j in range(3):
        s.Wk[3 * row + j] = s.work_done[j]
    for j in range(s.nqs):
        i = s.mm.q_keep[j] if s.mimic else j
        s.Q[row * s.nqs + j] = s.q[i]
    for j in range(s.nvs):
        i = s.mm.v_keep[j] if s.mimic else j
        s.V[row * s.nvs + j] = s.v[i]
        s.A[(row - 1) * s.nvs + j] = s.a[i]
        s.TAU[(row - 1) * s.nvs + j] = s.tau_a[i]
    for j in range(G3):
        s.F[(row - 1) * G3 + j] = s.force[j]
        s.P[(row - 1) * G3 + j] = s.point[j]


cdef long contact_step(Run* s, Py_ssize_t k) noexcept nogil:
    """Step k (the module's steps 1-4): STEP_DONE, or STEP_PYTHON / STEP_STALLED with the state as it
    was."""
    cdef Py_ssize_t m, j, nv = s.nv
    applied_forces(s)  # 1
    if s.bl.on:  # 2, constrained: the loops' rows at q stay in s.bl for step 3
        if loop_accelerations(&s.bl.lp, s.q, s.v, s.tau_a, NULL, 0.0, 0.0, s.bl.rtol, s.a, &s.bl.k):
            return STEP_PYTHON
    elif forward_dynamics_passes(s.ki, s.kf, s.L, nv, s.work, s.q, s.nq, s.v, s.tau_a, NULL, s.a,
                                 True):  # 2
        return STEP_PYTHON
    for j in range(nv):
        s.v_free[j] = s.v[j] + s.dt * s.a[j]
    if not all_finite(s.v_free, nv):
        return STEP_PYTHON
    if s.mimic:  # v_free = G v_free_r
        onto_relations(s, NULL, s.v_free)
    m = impulses(s)  # 3
    if m < 0:
        return STEP_STALLED if m == -2 else STEP_PYTHON
    impulse_response(s, 3 * m, s.lam, s.v_plus)  # 4
    for j in range(nv):
        s.v_plus[j] += s.v_free[j]
    if s.mimic:  # v+ = G (v_free_r + (Y^T lambda)[v_keep])
        onto_relations(s, NULL, s.v_plus)
    resultants(s, m)
    for j in range(nv):
        s.dq[j] = s.dt * s.v_plus[j]
    model_integrate(s.ki, s.L, s.q, s.dq, s.q_plus)
    if not all_finite(s.q_plus, s.nq):
        return STEP_PYTHON
    if s.mimic:  # q+ = G q+_r + offset
        onto_relations(s, s.q_plus, NULL)
    if not (correct_positions(s) and all_finite(s.q_plus, s.nq)):
        return STEP_PYTHON
    if s.bl.on and not (close_mimic_loops(s) if s.mimic else close_loops(s)):
        return STEP_PYTHON
    take_step(s, m)
    if (k + 1) % s.save_every == 0:
        save(s, k)
    return STEP_DONE
