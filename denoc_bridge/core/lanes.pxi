# Forward and inverse dynamics of a batch, LANES states at a time: every quantity of the one-state passes
# (000 Table 1 step 1; eqs. 18-23 and Table 3; 003 eqs. 31-37) becomes LANES numbers, one per
# state (a "lane vector": component j of lane ln at [j * LANES + ln]), and every loop over the
# lanes is innermost, so that gcc turns each into a few vector instructions (-march=native).
# For trees whose joints all have one DOF (revolute, continuous or prismatic, any axis and
# placement) or are free-flyers at roots (lanes_fit), with or without external wrenches; the
# one-state passes serve the rest, and every group of states that an input check, a pivot test
# or a non-finite result stops (entry.pxi's dynamics_chunk), so that statuses and errors are the
# one-state entry's.
#
# Held in the link frames, as the one-state passes, with A_{k,b} = [E 0; -E [r]x E] (E_k parent
# to child coordinates, r_k from the parent's origin to the link's in the parent's, 000 eq. 7b)
# and P_k = [e; 0] (revolute) or [0; e] (prismatic), e the joint axis.  The three passes:
#   lanes_twists        links 1..n: E_k, r_k, t_k, tdot_k with qdd = 0, the link wrench w_k
#                       (000 eqs. 1-2b, 5-6, Table 1 step 1), M_k;
#   lanes_articulated   links n..1: PsiHat_k = Mhat_k P_k, Ihat_k, phihat_k, phitilde_k (001 eqs.
#                       A.4-A.5; 003 eqs. 31, 35), Mbar_k = Mhat_k - PsiHat_k Ihat_k^-1 PsiHat_k^T
#                       (001 eq. A.7), Mhat_b += A^T Mbar_k A and xi_b += A^T (xi_k + PsiHat_k
#                       phitilde_k) (000 eq. 20; 003 eq. 32);
#   lanes_accelerations links 1..n: mu~_k = A mu_b, qdd_k = phitilde_k - Psi_k^T mu~_k,
#                       mu_k = mu~_k + P_k qdd_k (003 eqs. 36-37).
# Inverse dynamics takes the first pass with tdot_k += P_k qdd_k, then lanes_joint_forces, links
# n..1: w~_k = w_k + sum_c A^T w~_c, tau_k = P_k^T w~_k (000 Table 1 step 2).
# A mass Mhat = [Mww Mwv; Mwv^T Mvv] is 21 lane numbers in the one-state passes' order
# (spatial.pxi's sym_index): Mww and Mvv symmetric (xx xy xz yy yz zz), Mwv row major; a link's
# own is [I_O [h]x; -[h]x m 1] (h = m c, about its origin).

cdef enum:
    LANES = 8  # states per group: one AVX-512 vector of doubles, two AVX2, four SSE2
    # fields of a link's block in the lane work array, in lane vectors
    L_E = 0  # E_k, 9, row major
    L_R = 9  # r_k, 3
    L_T = 12  # t_k = [w; v], 6
    L_TD = 18  # tdot_k with qdd = 0, 6
    L_XI = 24  # xi_k: the link wrench w_k, then w~_k + eta~_k (its subtree's), 6
    L_M = 30  # Mhat_k, 21: Mww (6), Mwv (9), Mvv (6)
    L_U = 51  # PsiHat_k, 6
    L_DINV = 57  # Ihat_k^-1
    L_PHIT = 58  # phitilde_k
    L_MU = 59  # mu_k, 6
    L_SCALE = 65  # the children's share of the pivot's scale
    L_FIELDS = 66
    L_WW = 0  # offsets inside a mass
    L_WV = 6
    L_VV = 15
    LANES_RTOL_FACTOR = 16  # lanes refuse a pivot at 16x the one-state test's bound (lanes_pivot)
    LANES_MAX_LINKS = 512  # larger models one state at a time (a link's block is 4.2 kB)


cdef inline double* block(double* lw, Py_ssize_t k) noexcept nogil:
    """Link k's block of the lane work array (k = L: the roots' parent)."""
    return lw + k * L_FIELDS * LANES


cdef inline void l_cross(const double* a, const double* b, double* o) noexcept nogil:
    """o = a x b (3-vectors of lanes; o is neither)."""
    cdef int ln
    for ln in range(LANES):
        o[ln] = a[LANES + ln] * b[2 * LANES + ln] - a[2 * LANES + ln] * b[LANES + ln]
        o[LANES + ln] = a[2 * LANES + ln] * b[ln] - a[ln] * b[2 * LANES + ln]
        o[2 * LANES + ln] = a[ln] * b[LANES + ln] - a[LANES + ln] * b[ln]


cdef inline void l_rot(const double* E, const double* x, double* o) noexcept nogil:
    """o = E x (o is not x)."""
    cdef int ln, a
    for a in range(3):
        for ln in range(LANES):
            o[a * LANES + ln] = (E[3 * a * LANES + ln] * x[ln] + E[(3 * a + 1) * LANES + ln] * x[LANES + ln]
                                 + E[(3 * a + 2) * LANES + ln] * x[2 * LANES + ln])


cdef inline void l_rot_t(const double* E, const double* x, double* o) noexcept nogil:
    """o = E^T x (o is not x)."""
    cdef int ln, a
    for a in range(3):
        for ln in range(LANES):
            o[a * LANES + ln] = (E[a * LANES + ln] * x[ln] + E[(3 + a) * LANES + ln] * x[LANES + ln]
                                 + E[(6 + a) * LANES + ln] * x[2 * LANES + ln])


cdef inline void l_sum(const double* a, const double* b, double* o, int n) noexcept nogil:
    """o = a + b, n lane numbers."""
    cdef int j
    for j in range(n * LANES):
        o[j] = a[j] + b[j]


cdef bint lanes_fit(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when every joint has one DOF (revolute, continuous, prismatic) or is a free-flyer at
    a root, and every parent comes before its child (the lanes take the links in index order)."""
    cdef Py_ssize_t k
    cdef int jt
    if L == 0:  # nothing to compute, and no row 0 to read gravity from
        return False
    for k in range(L):
        jt = joint_type(ki + k * NI)
        if ki[k * NI + PARENT] >= k or not (jt == REVOLUTE or jt == CONTINUOUS or jt == PRISMATIC
                                            or (jt == FREEFLYER and ki[k * NI + PARENT] < 0)):
            return False
    return True


cdef void lanes_free_geometry(const double* f, const double* q, double* blk) noexcept nogil:
    """E_k = (R0 R_J)^T and r_k = r0 + R0 p of a free-flyer, R_J the rotation of its unit
    quaternion (q[3:7], normalised on the fly) and p = q[0:3] (lane vectors)."""
    cdef const double* R = f + R0
    cdef double* E = blk + L_E * LANES
    cdef double* r = blk + L_R * LANES
    cdef double J[9 * LANES]
    cdef double RJ[9]
    cdef int a, b, ln
    for ln in range(LANES):
        quaternion_rotation(q[3 * LANES + ln], q[4 * LANES + ln], q[5 * LANES + ln], q[6 * LANES + ln], RJ)
        for a in range(9):
            J[a * LANES + ln] = RJ[a]
    for a in range(3):  # E[a][b] = (R0 R_J)[b][a]
        for b in range(3):
            for ln in range(LANES):
                E[(3 * a + b) * LANES + ln] = (R[3 * b] * J[a * LANES + ln] + R[3 * b + 1] * J[(3 + a) * LANES + ln]
                                               + R[3 * b + 2] * J[(6 + a) * LANES + ln])
        for ln in range(LANES):
            r[a * LANES + ln] = (f[T0 + a] + R[3 * a] * q[ln] + R[3 * a + 1] * q[LANES + ln]
                                 + R[3 * a + 2] * q[2 * LANES + ln])


cdef void lanes_geometry(const int* i, const double* f, const double* q, bint poly,
                         double* blk) noexcept nogil:
    """E_k = (R0 R_J)^T with R_J = c 1 + s [e]x + (1 - c) e e^T (Rodrigues; 1 for a prismatic
    joint), i.e. E_k = R0^T + s (-[e]x R0^T) + (1 - c) (e (R0 e)^T - R0^T), three matrices of
    the link's table row; r_k = r0, plus R0 e q for a prismatic joint (q: the joint's first
    coordinate, a lane vector, its second the next)."""
    cdef int jt = joint_type(i), ln, a, b
    cdef const double* R = f + R0
    cdef double e0 = f[AXIS], e1 = f[AXIS + 1], e2 = f[AXIS + 2]
    cdef double s[LANES]
    cdef double t[LANES]
    cdef double cs[2]
    cdef double Re[3]
    cdef double c[3]
    cdef double A[9]
    cdef double B[9]
    cdef double C[9]
    cdef double* E = blk + L_E * LANES
    cdef double* r = blk + L_R * LANES
    if jt == FREEFLYER:
        lanes_free_geometry(f, q, blk)
        return
    for a in range(3):
        Re[a] = R[3 * a] * e0 + R[3 * a + 1] * e1 + R[3 * a + 2] * e2  # R0 e
    for b in range(3):
        cross3(e0, e1, e2, R[3 * b], R[3 * b + 1], R[3 * b + 2], c)  # [e]x R0^T, column b
        for a in range(3):
            A[3 * a + b] = R[3 * b + a]  # R0^T
            B[3 * a + b] = -c[a]
            C[3 * a + b] = f[AXIS + a] * Re[b] - R[3 * b + a]
    for ln in range(LANES):
        s[ln], t[ln] = 0.0, 0.0
    if jt == REVOLUTE and poly:
        for ln in range(LANES):
            cos_sin(q[ln], cs)
            s[ln], t[ln] = cs[1], 1.0 - cs[0]
    elif jt == REVOLUTE:
        for ln in range(LANES):
            s[ln], t[ln] = sin(q[ln]), 1.0 - cos(q[ln])
    elif jt == CONTINUOUS:  # (cos, sin), normalised
        for ln in range(LANES):
            unit_pair(q[ln], q[LANES + ln], cs)
            s[ln], t[ln] = cs[1], 1.0 - cs[0]
    for a in range(9):
        for ln in range(LANES):
            E[a * LANES + ln] = A[a] + s[ln] * B[a] + t[ln] * C[a]
    for a in range(3):
        if jt != PRISMATIC:
            Re[a] = 0.0
        for ln in range(LANES):
            r[a * LANES + ln] = f[T0 + a] + Re[a] * q[ln]


cdef void lanes_twist(const int* i, const double* f, const double* qd, const double* pb,
                      double* blk) noexcept nogil:
    """t_k = A t_b + P qd and tdot_k = A tdot_b + Adot t_b + Omega_k P qd (000 eqs. 5-6, Table 1
    step 1, qdd = 0) from the parent's block pb (qd: the joint's rates, a lane vector)."""
    cdef const double* E = blk + L_E * LANES
    cdef const double* r = blk + L_R * LANES
    cdef const double* wb = pb + L_T * LANES  # t_b = [w_b; v_b], tdot_b = [wdot_b; vdot_b]
    cdef const double* ab = pb + L_TD * LANES
    cdef double* t = blk + L_T * LANES
    cdef double* td = blk + L_TD * LANES
    cdef double x[3 * LANES]
    cdef double y[3 * LANES]
    cdef double z[3 * LANES]
    cdef double ew[3 * LANES]
    cdef double u[3 * LANES]
    cdef double p[3 * LANES]
    cdef double g[3 * LANES]
    cdef int j, ln
    l_cross(wb, r, x)  # w_b x r
    l_rot(E, wb, ew)  # E w_b
    l_sum(wb + 3 * LANES, x, y, 3)
    l_rot(E, y, t + 3 * LANES)  # E (v_b + w_b x r)
    l_cross(wb, x, y)  # w_b x (w_b x r)
    l_cross(ab, r, z)  # wdot_b x r
    l_sum(y, z, g, 3)
    l_sum(g, ab + 3 * LANES, y, 3)
    l_rot(E, y, u)  # E (vdot_b + wdot_b x r + w_b x (w_b x r))
    l_rot(E, ab, td)  # E wdot_b
    for j in range(3):
        for ln in range(LANES):
            p[j * LANES + ln] = f[AXIS + j] * qd[ln]  # P_k qd_k, angular or linear
    if joint_type(i) == FREEFLYER:  # P_k qd_k = [qd[3:6]; qd[0:3]] (Pinocchio's v = [linear; angular])
        l_sum(ew, qd + 3 * LANES, t, 3)  # w_k = E w_b + qd_ang
        l_cross(t, qd + 3 * LANES, g)  # w_k x qd_ang
        for j in range(3 * LANES):
            t[3 * LANES + j] += qd[j]
            td[j] += g[j]
            y[j] = ew[j] + t[j]
        l_cross(y, qd, g)  # (E w_b + w_k) x qd_lin
        for j in range(3 * LANES):
            td[3 * LANES + j] = u[j] + g[j]
    elif joint_type(i) == PRISMATIC:  # t_k = [E w_b; E (v_b + w_b x r) + e qd]
        l_sum(ew, ew, y, 3)
        l_cross(y, p, g)  # (E w_b + w_k) x e qd
        for j in range(3 * LANES):
            t[j] = ew[j]
            t[3 * LANES + j] += p[j]
            td[3 * LANES + j] = u[j] + g[j]
    else:  # t_k = [E w_b + e qd; E (v_b + w_b x r)]
        l_sum(ew, p, t, 3)
        l_cross(t, p, g)  # w_k x e qd
        for j in range(3 * LANES):
            td[j] += g[j]
            td[3 * LANES + j] = u[j]


cdef void lanes_link_wrench(const double* f, double* blk, bint masses) noexcept nogil:
    """w_k = M_k tdot_k + Omega_k M_k t_k (000 eqs. 1-2b) into xi_k, as link_wrench:
    n = I_O wdot + h x odotdot + w x (I_O w), f = m odotdot + wdot x h + w x (w x h); with
    ``masses``, Mhat_k = M_k (the children add theirs in lanes_articulated)."""
    cdef double m = f[MASS], h0 = f[H], h1 = f[H + 1], h2 = f[H + 2]
    cdef double Ixx = f[IO], Ixy = f[IO + 1], Ixz = f[IO + 2]
    cdef double Iyy = f[IO + 3], Iyz = f[IO + 4], Izz = f[IO + 5]
    cdef const double* t = blk + L_T * LANES
    cdef const double* td = blk + L_TD * LANES
    cdef double* xi = blk + L_XI * LANES
    cdef double* M = blk + L_M * LANES
    cdef double c[3]
    cdef double d[3]
    cdef double e[3]
    cdef double g[3]
    cdef double h[3]
    cdef double w0, w1, w2, a0, a1, a2, b0, b1, b2
    cdef double link[21]
    cdef int ln, j
    for ln in range(LANES):
        w0, w1, w2 = t[ln], t[LANES + ln], t[2 * LANES + ln]
        a0, a1, a2 = td[ln], td[LANES + ln], td[2 * LANES + ln]
        b0, b1, b2 = td[3 * LANES + ln], td[4 * LANES + ln], td[5 * LANES + ln]
        cross3(w0, w1, w2, Ixx * w0 + Ixy * w1 + Ixz * w2, Ixy * w0 + Iyy * w1 + Iyz * w2,
               Ixz * w0 + Iyz * w1 + Izz * w2, c)
        cross3(h0, h1, h2, b0, b1, b2, d)
        cross3(w0, w1, w2, h0, h1, h2, e)
        cross3(w0, w1, w2, e[0], e[1], e[2], g)
        cross3(a0, a1, a2, h0, h1, h2, h)
        xi[ln] = Ixx * a0 + Ixy * a1 + Ixz * a2 + c[0] + d[0]
        xi[LANES + ln] = Ixy * a0 + Iyy * a1 + Iyz * a2 + c[1] + d[1]
        xi[2 * LANES + ln] = Ixz * a0 + Iyz * a1 + Izz * a2 + c[2] + d[2]
        xi[3 * LANES + ln] = m * b0 + h[0] + g[0]
        xi[4 * LANES + ln] = m * b1 + h[1] + g[1]
        xi[5 * LANES + ln] = m * b2 + h[2] + g[2]
    if not masses:
        return
    link[0], link[1], link[2], link[3], link[4], link[5] = Ixx, Ixy, Ixz, Iyy, Iyz, Izz
    link[6], link[7], link[8] = 0.0, -h2, h1  # [h]x
    link[9], link[10], link[11] = h2, 0.0, -h0
    link[12], link[13], link[14] = -h1, h0, 0.0
    link[15], link[16], link[17], link[18], link[19], link[20] = m, 0.0, 0.0, m, 0.0, m
    for j in range(21):
        for ln in range(LANES):
            M[j * LANES + ln] = link[j]
    for ln in range(LANES):
        blk[L_SCALE * LANES + ln] = 0.0


cdef void lanes_plus_rate(const int* i, const double* f, const double* qdd, double* blk) noexcept nogil:
    """tdot_k += P_k qdd_k (000 Table 1 step 1; qdd: the joint's accelerations, a lane vector)."""
    cdef double* td = blk + L_TD * LANES
    cdef int jt = joint_type(i), j, ln
    if jt == FREEFLYER:  # [qdd[3:6]; qdd[0:3]]
        for j in range(3 * LANES):
            td[j] += qdd[3 * LANES + j]
            td[3 * LANES + j] += qdd[j]
        return
    if jt == PRISMATIC:
        td = td + 3 * LANES
    for j in range(3):
        for ln in range(LANES):
            td[j * LANES + ln] += f[AXIS + j] * qdd[ln]


cdef void lanes_minus_wrench(const double* fe, Py_ssize_t L, Py_ssize_t k, double* blk) noexcept nogil:
    """xi_k -= f_ext,k (fe: the group's first state's wrenches, (L, 6) per state in the kernels'
    order, the states L * 6 apart), as store_link_wrench."""
    cdef double* xi = blk + L_XI * LANES
    cdef int j, ln
    for j in range(6):
        for ln in range(LANES):
            xi[j * LANES + ln] -= fe[ln * 6 * L + 6 * k + j]


cdef void lanes_twists(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                       const double* v, const double* qdd, const double* fe, bint poly,
                       double* lw) noexcept nogil:
    """The forward pass over links 0..L-1 (q, v: lane vectors of the group's coordinates and
    rates; qdd: its accelerations for inverse dynamics, NULL for forward dynamics, which also
    sets Mhat_k = M_k; fe: the first state's external wrenches or NULL; the roots' parent is
    block L, t = 0, tdot = [0; -g])."""
    cdef Py_ssize_t k, b
    cdef const int* i
    for k in range(L):
        i = ki + k * NI
        b = i[PARENT]
        lanes_geometry(i, kf + k * NT, q + i[IDX_Q] * LANES, poly, block(lw, k))
        lanes_twist(i, kf + k * NT, v + i[IDX_V] * LANES, block(lw, b if b >= 0 else L), block(lw, k))
        if qdd != NULL:
            lanes_plus_rate(i, kf + k * NT, qdd + i[IDX_V] * LANES, block(lw, k))
        lanes_link_wrench(kf + k * NT, block(lw, k), qdd == NULL)
        if fe != NULL:
            lanes_minus_wrench(fe, L, k, block(lw, k))


cdef bint lanes_pivot(const int* i, const double* f, const double* tau, double* blk) noexcept nogil:
    """PsiHat_k = Mhat_k P_k, Ihat_k = P_k^T PsiHat_k + armature (001 eqs. A.4-A.5), phihat_k =
    tau_k - P_k^T xi_k (003 eq. 31), phitilde_k = phihat_k / Ihat_k (eq. 35) (tau: the joint's
    torques, a lane vector).  False when a lane's Ihat_k is not larger than LANES_RTOL_FACTOR *
    SINGULAR_RTOL times the larger of the link's scale and its children's share
    (lanes_to_parent): at least the one-state test's bound (its cancellation term (A^T
    PsiHat)_d^2 / Ihat is at most 6 max diag(Mhat) (1 + |r|)^2 by Cauchy-Schwarz, Mhat
    positive semi-definite: physical inertias), so that every state that test would refuse goes
    to it, and it names the joint."""
    cdef bint prismatic = joint_type(i) == PRISMATIC
    cdef double e0 = f[AXIS], e1 = f[AXIS + 1], e2 = f[AXIS + 2]
    cdef const double* M = blk + L_M * LANES
    cdef const double* xi = blk + L_XI * LANES
    cdef const double* sc = blk + L_SCALE * LANES
    cdef const double* Pu  # the part of PsiHat and xi that P_k picks
    cdef const double* Px
    cdef double* U = blk + L_U * LANES
    cdef double* dinv = blk + L_DINV * LANES
    cdef double* phit = blk + L_PHIT * LANES
    cdef double margin[LANES]
    cdef double bound = LANES_RTOL_FACTOR * SINGULAR_RTOL
    cdef double Ihat
    cdef int ln, a, w0, w1, w2, v0, v1, v2
    for a in range(3):  # PsiHat = [Mwv e; Mvv e] (prismatic) or [Mww e; Mwv^T e]
        if prismatic:  # the rows' indices first: the loops over the lanes then vectorise
            w0, w1, w2 = L_WV + 3 * a, L_WV + 3 * a + 1, L_WV + 3 * a + 2
            v0, v1, v2 = L_VV + sym_index(a, 0), L_VV + sym_index(a, 1), L_VV + sym_index(a, 2)
        else:
            w0, w1, w2 = L_WW + sym_index(a, 0), L_WW + sym_index(a, 1), L_WW + sym_index(a, 2)
            v0, v1, v2 = L_WV + a, L_WV + 3 + a, L_WV + 6 + a
        for ln in range(LANES):
            U[a * LANES + ln] = M[w0 * LANES + ln] * e0 + M[w1 * LANES + ln] * e1 + M[w2 * LANES + ln] * e2
            U[(3 + a) * LANES + ln] = M[v0 * LANES + ln] * e0 + M[v1 * LANES + ln] * e1 + M[v2 * LANES + ln] * e2
    Pu = U + 3 * LANES if prismatic else U
    Px = xi + 3 * LANES if prismatic else xi
    for ln in range(LANES):
        Ihat = e0 * Pu[ln] + e1 * Pu[LANES + ln] + e2 * Pu[2 * LANES + ln] + f[ARM0]  # 001 (A.4)
        margin[ln] = Ihat - bound * fmax2(f[SCALE], sc[ln])
        dinv[ln] = 1.0 / Ihat
        phit[ln] = (tau[ln] - (e0 * Px[ln] + e1 * Px[LANES + ln] + e2 * Px[2 * LANES + ln])) * dinv[ln]  # 003 (31, 35)
    for ln in range(LANES):
        if not margin[ln] > 0.0:
            return False
    return True


cdef inline void l_rotate_sym(const double* E, const double* S, double* o) noexcept nogil:
    """o = E^T S E for a symmetric 3x3 S (6 lane numbers)."""
    cdef double C[9 * LANES]
    cdef int a, b, ln, j0, j1, j2
    for a in range(3):  # C = S E
        j0, j1, j2 = sym_index(a, 0), sym_index(a, 1), sym_index(a, 2)
        for b in range(3):
            for ln in range(LANES):
                C[(3 * a + b) * LANES + ln] = (S[j0 * LANES + ln] * E[b * LANES + ln]
                                               + S[j1 * LANES + ln] * E[(3 + b) * LANES + ln]
                                               + S[j2 * LANES + ln] * E[(6 + b) * LANES + ln])
    for a in range(3):  # E^T C, upper triangle
        for b in range(a, 3):
            j0 = sym_index(a, b)
            for ln in range(LANES):
                o[j0 * LANES + ln] = (E[a * LANES + ln] * C[b * LANES + ln]
                                      + E[(3 + a) * LANES + ln] * C[(3 + b) * LANES + ln]
                                      + E[(6 + a) * LANES + ln] * C[(6 + b) * LANES + ln])


cdef inline void l_rotate_full(const double* E, const double* G, double* o) noexcept nogil:
    """o = E^T G E for a 3x3 G (9 lane numbers, row major)."""
    cdef double C[9 * LANES]
    cdef int a, b, ln
    for a in range(3):  # C = G E
        for b in range(3):
            for ln in range(LANES):
                C[(3 * a + b) * LANES + ln] = (G[3 * a * LANES + ln] * E[b * LANES + ln]
                                               + G[(3 * a + 1) * LANES + ln] * E[(3 + b) * LANES + ln]
                                               + G[(3 * a + 2) * LANES + ln] * E[(6 + b) * LANES + ln])
    for a in range(3):  # E^T C
        for b in range(3):
            for ln in range(LANES):
                o[(3 * a + b) * LANES + ln] = (E[a * LANES + ln] * C[b * LANES + ln]
                                               + E[(3 + a) * LANES + ln] * C[(3 + b) * LANES + ln]
                                               + E[(6 + a) * LANES + ln] * C[(6 + b) * LANES + ln])


cdef void lanes_projected_mass(const double* blk, double* B) noexcept nogil:
    """Mbar_k = Mhat_k - PsiHat_k PsiHat_k^T / Ihat_k (001 eq. A.7) into B (21 lane numbers)."""
    cdef const double* M = blk + L_M * LANES
    cdef const double* u = blk + L_U * LANES
    cdef const double* di = blk + L_DINV * LANES
    cdef int a, b, ln, j
    for a in range(3):
        for b in range(3):
            for ln in range(LANES):
                B[(L_WV + 3 * a + b) * LANES + ln] = (M[(L_WV + 3 * a + b) * LANES + ln]
                                                      - u[a * LANES + ln] * u[(3 + b) * LANES + ln] * di[ln])
        for b in range(a, 3):
            j = sym_index(a, b)
            for ln in range(LANES):
                B[(L_WW + j) * LANES + ln] = M[(L_WW + j) * LANES + ln] - u[a * LANES + ln] * u[b * LANES + ln] * di[ln]
                B[(L_VV + j) * LANES + ln] = (M[(L_VV + j) * LANES + ln]
                                              - u[(3 + a) * LANES + ln] * u[(3 + b) * LANES + ln] * di[ln])


cdef void lanes_shift_into(const double* r, const double* O, double* Mb) noexcept nogil:
    """Mb += the shift of O (a mass already in the parent's orientation) by R = [r]x:
    Mvv' = Mvv, Mwv' = Mwv + R Mvv, Mww' = Mww + R Mwv^T - Mwv' R, entry (a, b) of the last
    (r x row_b Mwv)_a + (r x row_a Mwv')_b; (r x v)_a = r_a1 v_a2 - r_a2 v_a1 with a1 = a + 1,
    a2 = a + 2 (mod 3), the indices taken before each loop over the lanes (which vectorises)."""
    cdef const double* Owv = O + L_WV * LANES
    cdef double X[9 * LANES]
    cdef double* x
    cdef const double* y
    cdef const double* v1
    cdef const double* v2
    cdef int a, b, ln, a1, a2, b1, b2, j
    for a in range(3):  # Mwv' = Mwv + R Mvv
        a1, a2 = (a + 1) % 3, (a + 2) % 3
        for b in range(3):
            x = X + (3 * a + b) * LANES
            y = Owv + (3 * a + b) * LANES
            v1, v2 = O + (L_VV + sym_index(a1, b)) * LANES, O + (L_VV + sym_index(a2, b)) * LANES
            for ln in range(LANES):
                x[ln] = y[ln] + r[a1 * LANES + ln] * v2[ln] - r[a2 * LANES + ln] * v1[ln]
    for a in range(3):  # Mww'
        a1, a2 = (a + 1) % 3, (a + 2) % 3
        for b in range(a, 3):
            b1, b2 = (b + 1) % 3, (b + 2) % 3
            j = L_WW + sym_index(a, b)
            for ln in range(LANES):
                Mb[j * LANES + ln] += (O[j * LANES + ln]
                                       + r[a1 * LANES + ln] * Owv[(3 * b + a2) * LANES + ln]
                                       - r[a2 * LANES + ln] * Owv[(3 * b + a1) * LANES + ln]
                                       + r[b1 * LANES + ln] * X[(3 * a + b2) * LANES + ln]
                                       - r[b2 * LANES + ln] * X[(3 * a + b1) * LANES + ln])
    for j in range(9 * LANES):
        Mb[L_WV * LANES + j] += X[j]
    for j in range(6 * LANES):
        Mb[L_VV * LANES + j] += O[L_VV * LANES + j]


cdef inline void lanes_wrench_to_parent(const double* E, const double* r, const double* x,
                                        double* xb) noexcept nogil:
    """xb += A^T x for a wrench x = [n; f] of the link: [E^T n + r x E^T f; E^T f]."""
    cdef double n[3 * LANES]
    cdef double g[3 * LANES]
    cdef double c[3 * LANES]
    cdef int j
    l_rot_t(E, x, n)
    l_rot_t(E, x + 3 * LANES, g)
    l_cross(r, g, c)
    for j in range(3 * LANES):
        xb[j] += n[j] + c[j]
        xb[3 * LANES + j] += g[j]


cdef void lanes_to_parent(const double* blk, double* pb) noexcept nogil:
    """Mhat_b += A^T Mbar_k A (000 eq. 20: E^T . E on each 3x3 block, then the shift by r_k)
    and xi_b += A^T (xi_k + PsiHat_k phitilde_k) (003 eq. 32; a wrench [n; f] becomes
    [E^T n + r x E^T f; E^T f]); the parent's scale takes max diag(Mhat_k) (1 + |r_k|)^2."""
    cdef const double* E = blk + L_E * LANES
    cdef const double* r = blk + L_R * LANES
    cdef const double* M = blk + L_M * LANES
    cdef const double* U = blk + L_U * LANES
    cdef const double* pt = blk + L_PHIT * LANES
    cdef double* sb = pb + L_SCALE * LANES
    cdef double B[21 * LANES]
    cdef double O[21 * LANES]
    cdef double x[6 * LANES]
    cdef double lever, big
    cdef int j, ln
    for ln in range(LANES):
        lever = 1.0 + sqrt(r[ln] * r[ln] + r[LANES + ln] * r[LANES + ln] + r[2 * LANES + ln] * r[2 * LANES + ln])
        big = fmax2(fmax2(fmax2(M[ln], M[3 * LANES + ln]), fmax2(M[5 * LANES + ln], M[15 * LANES + ln])),
                    fmax2(M[18 * LANES + ln], M[20 * LANES + ln]))
        sb[ln] = fmax2(sb[ln], big * lever * lever)
    lanes_projected_mass(blk, B)
    l_rotate_sym(E, B + L_WW * LANES, O + L_WW * LANES)
    l_rotate_full(E, B + L_WV * LANES, O + L_WV * LANES)
    l_rotate_sym(E, B + L_VV * LANES, O + L_VV * LANES)
    lanes_shift_into(r, O, pb + L_M * LANES)
    for j in range(6):
        for ln in range(LANES):
            x[j * LANES + ln] = blk[(L_XI + j) * LANES + ln] + U[j * LANES + ln] * pt[ln]  # 003 (32)
    lanes_wrench_to_parent(E, r, x, pb + L_XI * LANES)


cdef bint lanes_free_solve(const double* f, const double* tau, double* blk) noexcept nogil:
    """The accelerations of a free-flyer root, qdd = Ihat^-1 phihat with Ihat = P^T Mhat P +
    armatures and phihat = tau - P^T xi (001 eqs. A.4, A.6; 003 eqs. 31, 35; nothing to send to
    a parent), by Cholesky in the lanes; qdd into the PsiHat field.  False when a pivot is not
    larger than lanes_pivot's bound.  P^T picks [Mvv Mvw; Mwv Mww] (v = [linear; angular])."""
    cdef const double* M = blk + L_M * LANES
    cdef const double* xi = blk + L_XI * LANES
    cdef const double* sc = blk + L_SCALE * LANES
    cdef double* x = blk + L_U * LANES
    cdef double A[36 * LANES]
    cdef double d[LANES]
    cdef double bound = LANES_RTOL_FACTOR * SINGULAR_RTOL
    cdef int a, b, m, ln, j
    for a in range(6):
        for b in range(6):
            j = sym_index((a + 3) % 6, (b + 3) % 6)
            for ln in range(LANES):
                A[(6 * a + b) * LANES + ln] = M[j * LANES + ln] + (f[ARM + a] if a == b else 0.0)
        for ln in range(LANES):
            x[a * LANES + ln] = tau[a * LANES + ln] - xi[((a + 3) % 6) * LANES + ln]  # phihat
    for b in range(6):  # A = L L^T, L into the lower triangle
        for m in range(b):
            for ln in range(LANES):
                A[(6 * b + b) * LANES + ln] -= A[(6 * b + m) * LANES + ln] * A[(6 * b + m) * LANES + ln]
        for ln in range(LANES):
            d[ln] = A[(6 * b + b) * LANES + ln] - bound * fmax2(f[SCALE], sc[ln])
            A[(6 * b + b) * LANES + ln] = sqrt(fmax2(A[(6 * b + b) * LANES + ln], 0.0))
        for ln in range(LANES):
            if not d[ln] > 0.0:
                return False
        for a in range(b + 1, 6):
            for m in range(b):
                for ln in range(LANES):
                    A[(6 * a + b) * LANES + ln] -= A[(6 * a + m) * LANES + ln] * A[(6 * b + m) * LANES + ln]
            for ln in range(LANES):
                A[(6 * a + b) * LANES + ln] /= A[(6 * b + b) * LANES + ln]
    for a in range(6):  # L y = phihat
        for m in range(a):
            for ln in range(LANES):
                x[a * LANES + ln] -= A[(6 * a + m) * LANES + ln] * x[m * LANES + ln]
        for ln in range(LANES):
            x[a * LANES + ln] /= A[(6 * a + a) * LANES + ln]
    for a in range(5, -1, -1):  # L^T qdd = y
        for m in range(a + 1, 6):
            for ln in range(LANES):
                x[a * LANES + ln] -= A[(6 * m + a) * LANES + ln] * x[m * LANES + ln]
        for ln in range(LANES):
            x[a * LANES + ln] /= A[(6 * a + a) * LANES + ln]
    return True


cdef bint lanes_articulated(const int* ki, const double* kf, Py_ssize_t L, const double* tau,
                            double* lw) noexcept nogil:
    """The backward pass over links L-1..0; False when a lane's pivot fails lanes_pivot's test."""
    cdef Py_ssize_t k, b
    cdef const int* i
    for k in range(L - 1, -1, -1):
        i = ki + k * NI
        if joint_type(i) == FREEFLYER:  # a root (lanes_fit): its accelerations
            if not lanes_free_solve(kf + k * NT, tau + i[IDX_V] * LANES, block(lw, k)):
                return False
            continue
        if not lanes_pivot(i, kf + k * NT, tau + i[IDX_V] * LANES, block(lw, k)):
            return False
        b = i[PARENT]
        if b >= 0:
            lanes_to_parent(block(lw, k), block(lw, b))
    return True


cdef void lanes_accelerations(const int* ki, const double* kf, Py_ssize_t L, double* lw,
                              double* qdd) noexcept nogil:
    """The forward pass over links 0..L-1 (003 eqs. 36-37): mu~_k = A mu_b = [E w; E (v + w x r)],
    qdd_k = phitilde_k - PsiHat_k^T mu~_k / Ihat_k, mu_k = mu~_k + P_k qdd_k (qdd: lane vectors
    by DOF; block L's mu is 0)."""
    cdef Py_ssize_t k, b
    cdef const int* i
    cdef const double* f
    cdef double* blk
    cdef const double* mb
    cdef double* mu
    cdef const double* U
    cdef double* a
    cdef double x[3 * LANES]
    cdef double y[3 * LANES]
    cdef int ln, j, lin
    for k in range(L):
        i = ki + k * NI
        f = kf + k * NT
        b = i[PARENT]
        blk = block(lw, k)
        mb = block(lw, b if b >= 0 else L) + L_MU * LANES
        mu = blk + L_MU * LANES
        U = blk + L_U * LANES
        a = qdd + i[IDX_V] * LANES
        if joint_type(i) == FREEFLYER:  # a root: mu_k = P_k qdd_k, qdd_k from lanes_free_solve
            for j in range(3 * LANES):
                a[j], a[3 * LANES + j] = U[j], U[3 * LANES + j]
                mu[j], mu[3 * LANES + j] = U[3 * LANES + j], U[j]
            continue
        l_cross(mb, blk + L_R * LANES, x)
        l_rot(blk + L_E * LANES, mb, mu)  # mu~_k                003 (37)
        l_sum(mb + 3 * LANES, x, y, 3)
        l_rot(blk + L_E * LANES, y, mu + 3 * LANES)
        for ln in range(LANES):
            a[ln] = blk[L_PHIT * LANES + ln] - blk[L_DINV * LANES + ln] * (
                U[ln] * mu[ln] + U[LANES + ln] * mu[LANES + ln] + U[2 * LANES + ln] * mu[2 * LANES + ln]
                + U[3 * LANES + ln] * mu[3 * LANES + ln] + U[4 * LANES + ln] * mu[4 * LANES + ln]
                + U[5 * LANES + ln] * mu[5 * LANES + ln])  # qdd_k                 003 (36)
        lin = 3 if joint_type(i) == PRISMATIC else 0
        for j in range(3):  # mu_k = mu~_k + P_k qdd_k  003 (37)
            for ln in range(LANES):
                mu[(lin + j) * LANES + ln] += f[AXIS + j] * a[ln]


cdef void lanes_joint_forces(const int* ki, const double* kf, Py_ssize_t L, const double* qdd,
                             double* lw, double* tau) noexcept nogil:
    """Step 2 of 000 Table 1 over links L-1..0: w~_k = w_k + sum_c A_{c,k}^T w~_c (the wrench
    rows of the children add into their parent's xi) and tau_k = P_k^T w~_k + armature qdd_k
    (tau, qdd: lane vectors by DOF)."""
    cdef Py_ssize_t k, b
    cdef const int* i
    cdef const double* f
    cdef double* blk
    cdef const double* x
    cdef const double* a
    cdef double* o
    cdef int j, ln, jt
    for k in range(L - 1, -1, -1):
        i = ki + k * NI
        f = kf + k * NT
        blk = block(lw, k)
        x = blk + L_XI * LANES
        a = qdd + i[IDX_V] * LANES
        o = tau + i[IDX_V] * LANES
        jt = joint_type(i)
        if jt == FREEFLYER:  # P^T w~ = [f; n]
            for j in range(6):
                for ln in range(LANES):
                    o[j * LANES + ln] = x[((j + 3) % 6) * LANES + ln] + f[ARM + j] * a[j * LANES + ln]
        else:
            if jt == PRISMATIC:
                x = x + 3 * LANES
            for ln in range(LANES):
                o[ln] = (f[AXIS] * x[ln] + f[AXIS + 1] * x[LANES + ln] + f[AXIS + 2] * x[2 * LANES + ln]
                         + f[ARM0] * a[ln])
        b = i[PARENT]
        if b >= 0:
            lanes_wrench_to_parent(blk + L_E * LANES, blk + L_R * LANES, blk + L_XI * LANES,
                                   block(lw, b) + L_XI * LANES)


cdef inline Py_ssize_t lanes_size(Py_ssize_t L, Py_ssize_t nq, Py_ssize_t nv) noexcept nogil:
    """Doubles of a lane work array: L + 1 blocks, then q, v, tau and qdd as lane vectors."""
    return ((L + 1) * L_FIELDS + nq + 3 * nv) * LANES


cdef double* lanes_work(const double* kf, Py_ssize_t L, Py_ssize_t nq, Py_ssize_t nv) noexcept nogil:
    """A lane work array (NULL when out of memory), block L the roots' parent: t = 0,
    tdot = [0; -g] (gravity as the base's twist rate, 000 Table 1 note), mu = 0."""
    cdef double* lw = <double*>malloc(lanes_size(L, nq, nv) * sizeof(double))
    cdef double* base
    cdef int ln, j
    if lw == NULL:
        return NULL
    base = block(lw, L)
    for j in range(L_FIELDS * LANES):
        base[j] = 0.0
    for ln in range(LANES):
        for j in range(3):
            base[(L_TD + 3 + j) * LANES + ln] = -kf[GRAV + j]
    return lw


cdef inline void to_lanes(const double* x, Py_ssize_t n, double* o) noexcept nogil:
    """LANES rows of n numbers into n lane vectors."""
    cdef Py_ssize_t j
    cdef int ln
    for j in range(n):
        for ln in range(LANES):
            o[j * LANES + ln] = x[ln * n + j]


cdef bint lanes_dynamics(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                         Py_ssize_t nq, const double* v, const double* x, Py_ssize_t nv,
                         const double* fe, double* out, double* lw, bint inverse) noexcept nogil:
    """Forward dynamics (x = tau) or, with ``inverse``, inverse dynamics (x = qdd) of LANES
    consecutive states (rows of q, v, x and out; fe: their external wrenches, L * 6 numbers per
    state, or NULL) that valid_state passed; False (out not
    written: the caller may then read x again, even if out is x) when a pivot fails
    lanes_pivot's test or a result is not finite."""
    cdef double* ql = block(lw, L + 1)
    cdef double* vl = ql + nq * LANES
    cdef double* tl = vl + nv * LANES
    cdef double* al = tl + nv * LANES
    cdef Py_ssize_t j
    cdef int ln
    to_lanes(q, nq, ql)
    to_lanes(v, nv, vl)
    to_lanes(x, nv, tl)
    lanes_twists(ki, kf, L, ql, vl, tl if inverse else NULL, fe, poly_ok(ql, nq * LANES), lw)
    if inverse:
        lanes_joint_forces(ki, kf, L, tl, lw, al)
    elif lanes_articulated(ki, kf, L, tl, lw):
        lanes_accelerations(ki, kf, L, lw, al)
    else:
        return False
    if finite_entries(al, nv * LANES):
        return False
    for ln in range(LANES):
        for j in range(nv):
            out[ln * nv + j] = al[j * LANES + ln]
    return True
