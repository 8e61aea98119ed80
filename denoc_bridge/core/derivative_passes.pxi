# The passes of the analytical first-order derivatives of the recursive inverse dynamics of a
# tree (they replaced numba's kernels/derivative_passes.py, since deleted).
#
# tau = ID(q, v, a) (000 Table 1) is differentiated pass by pass: a forward recursion of the
# link placements, twists and twist rates (kinematics_pass), then a backward recursion of
# composite quantities (composite_pass) that yields dtau/dq, dtau/dv and the GIM M = dtau/da
# (000 eq. 16) in one sweep over each link's supporting chain, as in Carpentier & Mansard (2018,
# "Analytical derivatives of rigid body dynamics algorithms"; Pinocchio's
# computeRNEADerivatives).  The recursion runs in the base frame (derivative_algebra.pxi), where
# a tangent perturbation dq_k of joint k (Pinocchio's integrate(q, dq): M_J(q + dq) = M_J(q)
# exp(S dq)) moves the subtree of k rigidly by the twist s = S_k dq_k: every motion subspace
# below k turns as s x S_j, every link inertia as s x* I - I s x, and the twists and rates of
# the subtree change by (lam = the body carrying joint k's axis: the parent link, or a
# universal joint's node between its two rotations for its second column)
#
#     dt_i    = s x (t_i - t_lam)                                         d/dq_k      (T1)
#     dtdot_i = s x (tdot_i - tdot_lam) - (s x t_lam) x (t_i - t_lam)     d/dq_k      (T2)
#     dt_i    = s,   dtdot_i = s x t_i + (t_lam + t_node) x s             d/dqdot_k   (T3)
#
# With the composite inertia Ic_k = sum I_i, the composite wrench F_k = sum w_i and the
# composite Cc_k of the matrices C (derivative_algebra.pxi) over the subtree of k, the entries
# of column s (joint k) are, for a row S_j of joint j,
#
#     beta = s x t_lam,  alpha = s x tdot_lam - beta x t_lam,  w = (t_lam + t_node) x s      (D1)
#     j in the subtree of k:  dtau_j/dq_k = -S_j^T (Ic_j alpha + Cc_j beta)                  (D2)
#                             dtau_j/dqdot_k = S_j^T (Cc_j s + Ic_j w)                       (D3)
#     j an ancestor of k:     dtau_j/dq_k = S_j^T (s x* F_k - Ic_k alpha - Cc_k beta)        (D4)
#                             dtau_j/dqdot_k = S_j^T (Cc_k s + Ic_k w)                       (D5)
#     M_jk = S_j^T Ic_k S_k                                                    000 eq. 16   (D6)
#
# kept per DOF as Y = Ic S, Z = (Cc^T S)'s angular part (beta acts through its angular part
# only: C's right column is zero), gam = s x* F - Ic alpha - Cc beta and rho = Cc s + Ic w, so
# that (D2) = -(Y_j . alpha + Z_j . beta), (D3) = Z_j . s + Y_j . w, (D4) = S_j . gam,
# (D5) = S_j . rho and (D6) = Y_k . S_j.  The universal joint (two rotations, the first axis
# fixed in the parent) is two such nodes: its first column is an ancestor of its second.  Cost
# O(n d) for depth d, dense output.
#
# Only alpha and F depend on the accelerations, and linearly: at a + da the rates change by
#
#     dtd_k = dtd_parent + S_k da_k,  alpha += s x dtd_lam,  F_k += sum_i I_i dtd_i           (A1)
#
# so the forward derivatives run the two passes at a = 0 (M, dtau/dv and the bias tau(q, v, 0)),
# solve M qdd = tau - bias and add the terms of qdd by acceleration_pass (dtau/dq only).
#
# The entries are written the way Pinocchio's backward pass writes them, by blocks over the
# subtree of each joint (contiguous in the depth-first numbering, which the entries check): when
# the backward recursion reaches link k, the columns of every DOF below it are known, so the row
# of each DOF r of joint k over the columns c of its strict subtree is one sweep over stretches
# of memory,
#
#     dq_rc = S_r . gam_c,  dv_rc = S_r . rho_c,  M_rc = S_r . Y_c                 (D4, D5, D6)
#     dq_cr = -(alpha_r . Y_c + beta_r . Z_c),  dv_cr = s_r . Z_c + w_r . Y_c           (D2, D3)
#
# the second line into the rows r of two scratch matrices (Tq, Tv), transposed into the lower
# triangles at the end (and M mirrored), so that no sweep writes down a column.  Each row is
# zero past the end of the subtree: every entry is written.
#
# Arrays: the link placements (R_k row major, p_k) and the base-frame columns of every P_k come
# from tree's world_frames (the lean geometry pass of the model's work array); per link a
# LinkRow, per DOF a DofRow (a row's numbers in one stretch of memory) and its columns' numbers
# Y, Z, gam, rho one component per row of the (21, nv) Cols (a sweep over columns reads 21
# stretches); dq, dv, M, Tq, Tv (nv, nv) row major.

cdef struct LinkRow:
    double Ic[10]  # I10 of the link, then the composite Ic over its subtree
    double Il[10]  # I10 of the link alone (acceleration_pass)
    double C[12]  # C12 of the link, then the composite Cc
    double F[6]  # w_k - f_ext,k, then the composite F_k
    double t[6]  # twist t_k
    double td[6]  # twist rate tdot_k (gravity as the base's)
    double dtd[6]  # dtd_k of (A1)
    double Fa[6]  # the composite of I_i dtd_i (A1)

cdef struct DofRow:  # the forward pass's, read by the row sweeps of the DOF
    double S[6]  # the DOF's column of S_k in the base frame, about the base origin
    double al[6]  # alpha (D1)
    double w[6]  # w (D1)
    double be[3]  # beta's angular part (D1)

cdef enum:  # the rows of Cols (21, nv): Y = Ic S, Z = (Cc^T S)'s angular part, gam, rho
    C_Y = 0
    C_Z = 6
    C_GA = 9
    C_RH = 15
    C_ROWS = 21


cdef inline void base_column(const double* Pw, const double* o, double* S) noexcept nogil:
    """S = [Pw_w; Pw_v + o x Pw_w]: a DOF's column (world_frames: about its link's origin o) about
    the base origin."""
    S[0], S[1], S[2] = Pw[0], Pw[1], Pw[2]
    S[3] = Pw[3] + o[1] * Pw[2] - o[2] * Pw[1]
    S[4] = Pw[4] + o[2] * Pw[0] - o[0] * Pw[2]
    S[5] = Pw[5] + o[0] * Pw[1] - o[1] * Pw[0]


cdef inline void link_rates(const double* tb, const double* ab, const DofRow* d, int z,
                            bint universal, const double* v, const double* a, double* t,
                            double* td, double* tA, double* aA) noexcept nogil:
    """t_k = t_b + S qd, tdot_k = tdot_b + S qdd + t_b x S qd (000 Table 1, step 1, in the base
    frame) and the node (tA, aA) of a universal joint, t_A = t_b + qd_0 s_0, tdot_A = tdot_b +
    qdd_0 s_0 + qd_0 t_b x s_0, whose rate adds qd_0 qd_1 s_0 x s_1 to tdot_k."""
    cdef double x[6]
    cdef double c[6]
    cdef int n, j
    for j in range(6):
        x[j] = 0.0
        td[j] = ab[j]
        tA[j] = tb[j]
        aA[j] = ab[j]
    for n in range(z):
        for j in range(6):
            x[j] += v[n] * d[n].S[j]
            td[j] += a[n] * d[n].S[j]
    mcross(tb, x, c)
    for j in range(6):
        t[j] = tb[j] + x[j]
        td[j] += c[j]
    if universal:
        mcross(d[0].S, d[1].S, c)
        for j in range(6):
            td[j] += v[0] * v[1] * c[j]
        mcross(tb, d[0].S, c)
        for j in range(6):
            tA[j] = tb[j] + v[0] * d[0].S[j]
            aA[j] = ab[j] + a[0] * d[0].S[j] + v[0] * c[j]


cdef inline void column_terms(const double* tl, const double* al, const double* tn,
                              DofRow* d) noexcept nogil:
    """beta, alpha and w of one column s (D1), for the body lam of its axis (tl, al: t_lam,
    tdot_lam) and its node's twist tn."""
    cdef double be[6]
    cdef double x[6]
    cdef double y[6]
    cdef int j
    mcross(d.S, tl, be)  # beta = s x t_lam                          (D1)
    mcross(d.S, al, x)
    mcross(be, tl, y)
    for j in range(6):
        d.al[j] = x[j] - y[j]  # alpha = s x tdot_lam - beta x t_lam  (D1)
        y[j] = tl[j] + tn[j]
    mcross(y, d.S, d.w)  # w = (t_lam + t_node) x s                  (D1)
    d.be[0], d.be[1], d.be[2] = be[0], be[1], be[2]


cdef inline void link_wrench_terms(const double* f, const double* R, const double* o,
                                   const double* fe, LinkRow* l) noexcept nogil:
    """The link's I10, its C12 at t_k and w_k - f_ext,k = I tdot + t x* (I t) - f_ext (000 eqs.
    1-2b) in the base frame (fe: [n; f] in the link frame about its origin, or NULL)."""
    cdef double h[6]
    cdef double x[6]
    cdef double e[6]
    cdef int j
    inertia10(f, R, o, l.Ic)  # (I10)
    iact(l.Ic, l.t, h)  # h = I t
    coriolis12(l.Ic, l.t, h, l.C)  # (C12)
    iact(l.Ic, l.td, x)
    fcross(l.t, h, l.F)
    for j in range(6):
        l.F[j] += x[j]
    if fe != NULL:  # to the base: [R n + o x R f; R f]
        for j in range(3):
            e[j] = R[3 * j] * fe[0] + R[3 * j + 1] * fe[1] + R[3 * j + 2] * fe[2]
            e[3 + j] = R[3 * j] * fe[3] + R[3 * j + 1] * fe[4] + R[3 * j + 2] * fe[5]
        e[0] += o[1] * e[5] - o[2] * e[4]
        e[1] += o[2] * e[3] - o[0] * e[5]
        e[2] += o[0] * e[4] - o[1] * e[3]
        for j in range(6):
            l.F[j] -= e[j]
    for j in range(10):
        l.Il[j] = l.Ic[j]


cdef void kinematics_pass(const int* ki, const double* kf, Py_ssize_t L, const double* v,
                          const double* a, const double* fext, const double* R, const double* p,
                          const double* Pw, LinkRow* lk, DofRow* dr) noexcept nogil:
    """The forward recursion (000 Table 1, step 1) after world_frames (R, p, Pw): per DOF S,
    alpha, w, beta (D1); per link t, tdot, I10, C12 and the wrench.  fext: (L, 6) or NULL."""
    cdef double tb[6]
    cdef double ab[6]
    cdef double tA[6]
    cdef double aA[6]
    cdef Py_ssize_t k, b, v0
    cdef const int* i
    cdef int n, j, z
    cdef bint universal
    for k in range(L):
        i = ki + k * NI
        b, v0, z = i[PARENT], i[IDX_V], i[NV]
        for j in range(6):
            tb[j] = lk[b].t[j] if b >= 0 else 0.0
            ab[j] = lk[b].td[j] if b >= 0 else (-kf[GRAV + j - 3] if j >= 3 else 0.0)
        for n in range(z):
            base_column(Pw + 6 * (v0 + n), p + 3 * k, dr[v0 + n].S)
        universal = joint_type(i) == UNIVERSAL
        link_rates(tb, ab, dr + v0, z, universal, v + v0, a + v0, lk[k].t, lk[k].td, tA, aA)
        for n in range(z):
            if universal and n == 1:  # lam = the node, whose twist is t_A
                column_terms(tA, aA, lk[k].t, dr + v0 + n)
            elif universal:  # the node is the first column's body
                column_terms(tb, ab, tA, dr + v0 + n)
            else:
                column_terms(tb, ab, lk[k].t, dr + v0 + n)
        link_wrench_terms(kf + k * NT, R + 9 * k, p + 3 * k, fext + 6 * k if fext != NULL else NULL, lk + k)


cdef inline void gam_of(const LinkRow* l, const double* F, const DofRow* d, double* Cols,
                        Py_ssize_t nv, Py_ssize_t c) noexcept nogil:
    """gam_c = s x* F - Ic alpha - Cc beta of one column c into Cols, with the composites of its
    link and the composite wrench F."""
    cdef double x[6]
    cdef double y[6]
    cdef double be[6]
    cdef double g[6]
    cdef int j
    be[0], be[1], be[2] = d.be[0], d.be[1], d.be[2]
    fcross(d.S, F, g)
    iact(l.Ic, d.al, x)
    cact(l.C, be, y)
    for j in range(6):
        Cols[(C_GA + j) * nv + c] = g[j] - (x[j] + y[j])


cdef inline void joint_columns(const LinkRow* l, const DofRow* d, double* Cols, Py_ssize_t nv,
                               Py_ssize_t v0, int z, const double* arm, const double* a, double* tau,
                               bint with_gam) noexcept nogil:
    """Y, Z, rho (and gam) of the DOFs of one joint into Cols, with the composites of its link,
    and tau_c = S_c . F_k + armature a_c (000 Table 1, step 2)."""
    cdef double x[6]
    cdef double y[6]
    cdef double Z[3]
    cdef int n, j
    for n in range(z):
        iact(l.Ic, d[n].S, x)  # Y = Ic S
        cact_transposed(l.C, d[n].S, Z)  # Z = (Cc^T S)_w
        for j in range(6):
            Cols[(C_Y + j) * nv + v0 + n] = x[j]
        for j in range(3):
            Cols[(C_Z + j) * nv + v0 + n] = Z[j]
        if with_gam:
            gam_of(l, l.F, d + n, Cols, nv, v0 + n)
        cact(l.C, d[n].S, x)  # rho = Cc s + Ic w
        iact(l.Ic, d[n].w, y)
        for j in range(6):
            Cols[(C_RH + j) * nv + v0 + n] = x[j] + y[j]
        tau[n] = dot6(d[n].S, l.F) + arm[n] * a[n]


cdef inline double col_dot(const double* Cols, Py_ssize_t nv, int row, Py_ssize_t c, const double* x,
                           int n) noexcept nogil:
    """The dot product of the n components from row ``row`` of Cols at column c with x."""
    cdef double s = 0.0
    cdef int j
    for j in range(n):
        s += Cols[(row + j) * nv + c] * x[j]
    return s


cdef inline void joint_block(const DofRow* d, const double* Cols, Py_ssize_t v0, int z,
                             Py_ssize_t nv, const double* arm, double* dq, double* dv, double* M,
                             double* Tq, double* Tv, bint with_dq, bint with_dv,
                             bint universal) noexcept nogil:
    """The entries of the rows and columns of one joint (D2, D3, D6, + armature): the upper
    triangle and diagonal into dq, dv, M, the lower into Tq, Tv (transposed: the entry (r, c),
    r > c, at (c, r)); a universal joint's first column is an ancestor of its second (D4)."""
    cdef Py_ssize_t r, c, at
    cdef double x, y
    for r in range(z):
        for c in range(z):
            x = -(col_dot(Cols, nv, C_Y, v0 + r, d[c].al, 6) + col_dot(Cols, nv, C_Z, v0 + r, d[c].be, 3))  # (D2)
            y = col_dot(Cols, nv, C_Z, v0 + r, d[c].S, 3) + col_dot(Cols, nv, C_Y, v0 + r, d[c].w, 6)  # (D3)
            if r <= c:
                at = (v0 + r) * nv + v0 + c
                if with_dq:
                    dq[at] = x
                if with_dv:
                    dv[at] = y
                    M[at] = col_dot(Cols, nv, C_Y, v0 + r, d[c].S, 6) + (arm[r] if r == c else 0.0)  # (D6)
            else:
                at = (v0 + c) * nv + v0 + r
                if with_dq:
                    Tq[at] = x
                if with_dv:
                    Tv[at] = y
    if with_dq and universal:
        dq[v0 * nv + v0 + 1] = col_dot(Cols, nv, C_GA, v0 + 1, d[0].S, 6)  # (D4)


cdef inline void subtree_row_q(const DofRow* d, crow_t Cols, Py_ssize_t nv, Py_ssize_t c0,
                               Py_ssize_t n, row_t q, row_t t) noexcept nogil:
    """dq over the n columns from c0 of the strict subtree of one DOF (d): its row (D4) and its
    column, transposed (D2), into the rows from q and t: a sweep that vectorises (restrict
    parameters: gcc keeps them through inlining, not restrict locals, and gave up on the 30
    run-time alias checks of this loop)."""
    cdef double s0 = d.S[0], s1 = d.S[1], s2 = d.S[2], s3 = d.S[3], s4 = d.S[4], s5 = d.S[5]
    cdef double a0 = d.al[0], a1 = d.al[1], a2 = d.al[2], a3 = d.al[3], a4 = d.al[4], a5 = d.al[5]
    cdef double b0 = d.be[0], b1 = d.be[1], b2 = d.be[2]
    cdef crow_t Y0 = Cols + C_Y * nv + c0
    cdef crow_t Y1 = Y0 + nv
    cdef crow_t Y2 = Y1 + nv
    cdef crow_t Y3 = Y2 + nv
    cdef crow_t Y4 = Y3 + nv
    cdef crow_t Y5 = Y4 + nv
    cdef crow_t Z0 = Y5 + nv
    cdef crow_t Z1 = Z0 + nv
    cdef crow_t Z2 = Z1 + nv
    cdef crow_t G0 = Z2 + nv
    cdef crow_t G1 = G0 + nv
    cdef crow_t G2 = G1 + nv
    cdef crow_t G3 = G2 + nv
    cdef crow_t G4 = G3 + nv
    cdef crow_t G5 = G4 + nv
    cdef Py_ssize_t c
    for c in range(n):
        q[c] = s0 * G0[c] + s1 * G1[c] + s2 * G2[c] + s3 * G3[c] + s4 * G4[c] + s5 * G5[c]  # (D4)
        t[c] = -(a0 * Y0[c] + a1 * Y1[c] + a2 * Y2[c] + a3 * Y3[c] + a4 * Y4[c] + a5 * Y5[c]
                 + b0 * Z0[c] + b1 * Z1[c] + b2 * Z2[c])  # (D2)


cdef inline void subtree_row_v(const DofRow* d, crow_t Cols, Py_ssize_t nv, Py_ssize_t c0,
                               Py_ssize_t n, row_t v, row_t m, row_t t) noexcept nogil:
    """dv and M over the n columns from c0 of the strict subtree of one DOF (d): its rows (D5, D6)
    and its column of dv, transposed (D3), into the rows from v, m and t."""
    cdef double s0 = d.S[0], s1 = d.S[1], s2 = d.S[2], s3 = d.S[3], s4 = d.S[4], s5 = d.S[5]
    cdef double w0 = d.w[0], w1 = d.w[1], w2 = d.w[2], w3 = d.w[3], w4 = d.w[4], w5 = d.w[5]
    cdef crow_t Y0 = Cols + C_Y * nv + c0
    cdef crow_t Y1 = Y0 + nv
    cdef crow_t Y2 = Y1 + nv
    cdef crow_t Y3 = Y2 + nv
    cdef crow_t Y4 = Y3 + nv
    cdef crow_t Y5 = Y4 + nv
    cdef crow_t Z0 = Y5 + nv
    cdef crow_t Z1 = Z0 + nv
    cdef crow_t Z2 = Z1 + nv
    cdef crow_t H0 = Cols + C_RH * nv + c0
    cdef crow_t H1 = H0 + nv
    cdef crow_t H2 = H1 + nv
    cdef crow_t H3 = H2 + nv
    cdef crow_t H4 = H3 + nv
    cdef crow_t H5 = H4 + nv
    cdef Py_ssize_t c
    for c in range(n):
        v[c] = s0 * H0[c] + s1 * H1[c] + s2 * H2[c] + s3 * H3[c] + s4 * H4[c] + s5 * H5[c]  # (D5)
        m[c] = s0 * Y0[c] + s1 * Y1[c] + s2 * Y2[c] + s3 * Y3[c] + s4 * Y4[c] + s5 * Y5[c]  # (D6)
        t[c] = (s0 * Z0[c] + s1 * Z1[c] + s2 * Z2[c] + w0 * Y0[c] + w1 * Y1[c] + w2 * Y2[c]
                + w3 * Y3[c] + w4 * Y4[c] + w5 * Y5[c])  # (D3)


cdef inline void joint_rows(const int* i, Py_ssize_t nv, Py_ssize_t end, const DofRow* dr,
                            const double* Cols, double* dq, double* dv, double* M, double* Tq,
                            double* Tv, bint with_dq, bint with_dv) noexcept nogil:
    """The rows of the DOFs of one joint over its strict subtree (subtree_row_q, subtree_row_v; the
    subtree ends at column ``end``), zero after it."""
    cdef Py_ssize_t v0 = i[IDX_V], e = v0 + i[NV], r, o
    cdef size_t n = (nv - end) * sizeof(double)
    for r in range(v0, e):
        o = r * nv + e
        if with_dq:
            subtree_row_q(dr + r, Cols, nv, e, end - e, dq + o, Tq + o)
        if with_dv:
            subtree_row_v(dr + r, Cols, nv, e, end - e, dv + o, M + o, Tv + o)
        o = r * nv + end
        if with_dq:
            memset(dq + o, 0, n)
            memset(Tq + o, 0, n)
        if with_dv:
            memset(dv + o, 0, n)
            memset(Tv + o, 0, n)
            memset(M + o, 0, n)


cdef void composite_pass(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                         const double* a, double* tau, double* dq, double* dv, double* M,
                         double* Tq, double* Tv, LinkRow* lk, const DofRow* dr, double* Cols,
                         const Py_ssize_t* sub, bint with_dq) noexcept nogil:
    """The backward recursion (000 Table 1, step 2) after kinematics_pass: tau, the upper
    triangles of dv and M and the lower one of dv transposed into Tv (and dq, Tq if with_dq; else
    acceleration_pass writes them); the composites Ic, Cc, F of each subtree are left in lk.
    ``sub``: the DOFs of each link's subtree (subtree_dofs)."""
    cdef Py_ssize_t k, p, v0
    cdef const int* i
    cdef const double* f
    cdef int j, z
    for k in range(L - 1, -1, -1):
        i = ki + k * NI
        f = kf + k * NT
        v0, z, p = i[IDX_V], i[NV], i[PARENT]
        joint_columns(lk + k, dr + v0, Cols, nv, v0, z, f + ARM, a + v0, tau + v0, with_dq)
        joint_block(dr + v0, Cols, v0, z, nv, f + ARM, dq, dv, M, Tq, Tv, with_dq, True,
                    joint_type(i) == UNIVERSAL)
        joint_rows(i, nv, v0 + sub[k], dr, Cols, dq, dv, M, Tq, Tv, with_dq, True)
        if p >= 0:  # the composites of the parent's subtree
            for j in range(6):
                lk[p].F[j] += lk[k].F[j]
            for j in range(10):
                lk[p].Ic[j] += lk[k].Ic[j]
            for j in range(12):
                lk[p].C[j] += lk[k].C[j]


cdef inline void acceleration_rates(const int* ki, Py_ssize_t L, const double* da, LinkRow* lk,
                                    DofRow* dr) noexcept nogil:
    """The forward half of (A1): dtd_k = dtd_parent + S_k da_k, alpha += s x dtd_lam (a
    universal's second column: lam its node, dtd_parent + s_0 da_0), Fa_k = I_k dtd_k."""
    cdef double dl[6]
    cdef double x[6]
    cdef Py_ssize_t k, b, v0
    cdef int n, j
    cdef bint universal
    for k in range(L):
        b, v0 = ki[k * NI + PARENT], ki[k * NI + IDX_V]
        universal = joint_type(ki + k * NI) == UNIVERSAL
        for j in range(6):
            lk[k].dtd[j] = lk[b].dtd[j] if b >= 0 else 0.0
        for n in range(ki[k * NI + NV]):
            for j in range(6):
                dl[j] = lk[k].dtd[j] + (da[v0] * dr[v0].S[j] if universal and n == 1 else 0.0)
            mcross(dr[v0 + n].S, dl, x)
            for j in range(6):
                dr[v0 + n].al[j] += x[j]  # (A1)
        for n in range(ki[k * NI + NV]):
            for j in range(6):
                lk[k].dtd[j] += da[v0 + n] * dr[v0 + n].S[j]  # (A1)
        iact(lk[k].Il, lk[k].dtd, lk[k].Fa)


cdef void acceleration_pass(const int* ki, Py_ssize_t L, Py_ssize_t nv, const double* da,
                            double* dq, double* Tq, LinkRow* lk, DofRow* dr, double* Cols,
                            const Py_ssize_t* sub) noexcept nogil:
    """dq (upper triangle) and Tq at the accelerations a + da after kinematics_pass at a and
    composite_pass without dq (A1): forward, the rates and alpha; backward, the composite wrench
    plus the composite of I dtd, then gam and the entries as composite_pass."""
    cdef double F[6]
    cdef Py_ssize_t k, p, v0
    cdef const int* i
    cdef int j, n, z
    acceleration_rates(ki, L, da, lk, dr)
    for k in range(L - 1, -1, -1):
        i = ki + k * NI
        v0, z, p = i[IDX_V], i[NV], i[PARENT]
        for j in range(6):
            F[j] = lk[k].F[j] + lk[k].Fa[j]  # F_k at a + da                  (A1)
            if p >= 0:
                lk[p].Fa[j] += lk[k].Fa[j]
        for n in range(z):
            gam_of(lk + k, F, dr + v0 + n, Cols, nv, v0 + n)
        joint_block(dr + v0, Cols, v0, z, nv, NULL, dq, NULL, NULL, Tq, NULL, True, False,
                    joint_type(i) == UNIVERSAL)
        joint_rows(i, nv, v0 + sub[k], dr, Cols, dq, NULL, NULL, Tq, NULL, True, False)


cdef void lower_triangles(Py_ssize_t nv, double* dq, double* dv, double* M, const double* Tq,
                          const double* Tv) noexcept nogil:
    """dq_cr = Tq_rc, dv_cr = Tv_rc and M_cr = M_rc for r < c (dq NULL: dq left out; dv NULL: dv
    and M left out), in tiles of 8 x 8 (column by column, each write lands on another cache
    line)."""
    cdef Py_ssize_t r0, c0, r, c
    for r0 in range(0, nv, 8):
        for c0 in range(r0, nv, 8):
            for r in range(r0, min(r0 + 8, nv)):
                for c in range(max(c0, r + 1), min(c0 + 8, nv)):
                    if dq != NULL:
                        dq[c * nv + r] = Tq[r * nv + c]
                    if dv != NULL:
                        dv[c * nv + r] = Tv[r * nv + c]
                        M[c * nv + r] = M[r * nv + c]


cdef void subtree_dofs(const int* ki, Py_ssize_t L, Py_ssize_t* sub) noexcept nogil:
    """sub[k]: the DOFs of the subtree of link k."""
    cdef Py_ssize_t k
    for k in range(L):
        sub[k] = ki[k * NI + NV]
    for k in range(L - 1, -1, -1):
        if ki[k * NI + PARENT] >= 0:
            sub[ki[k * NI + PARENT]] += sub[k]


cdef bint depth_first(const int* ki, Py_ssize_t L, Py_ssize_t nv, const Py_ssize_t* sub) noexcept nogil:
    """Whether the DOFs of the subtree of every link k are idx_v[k] .. idx_v[k] + sub[k] - 1 (each
    subtree's range inside its parent's, after the parent's own DOFs), as the row sweeps need."""
    cdef Py_ssize_t k, p, iv, lo, hi
    for k in range(L):
        iv, p = ki[k * NI + IDX_V], ki[k * NI + PARENT]
        lo = ki[p * NI + IDX_V] + ki[p * NI + NV] if p >= 0 else 0
        hi = ki[p * NI + IDX_V] + sub[p] if p >= 0 else nv
        if iv < lo or iv + sub[k] > hi or p >= k:
            return False
    return True
