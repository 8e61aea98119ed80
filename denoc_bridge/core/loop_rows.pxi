# The constraint rows of the cut joints and joint couplings (004 eqs. 12-13, 15): phi, C = D* N
# and Cdot qdot, in world coordinates; the table of rows per cut-joint type and the readable
# version are denoc_bridge/constraints/loops.py and loop_kinematics.py.
#
# World kinematics (000 §2): R_k, o_k the placement of link k (world_frames: row-major rotation,
# link to world); Pw[j] the world 6-vector [angular; linear at o_k] of DOF j; w, od the angular
# velocity of link k and the velocity of its origin; wd0, odd0 their rates at qddot = 0 without
# gravity (the classical accelerations).


cdef enum:  # the cut joints' type codes (row 1 + L + l of ``pi``: constraints/packed.py)
    CUT_WELD = 0
    CUT_SPHERICAL = 1
    CUT_REVOLUTE = 2
    CUT_PRISMATIC = 3
    CUT_COUPLING = 4  # [COUPLING, -1, -1, first row, its first term's row, number of terms]
    CUT_TERM = 5  # [TERM, link, -1, -1, 0, 0], its coefficient in column 0 of pf
    LI = 6  # int64 columns of a cut joint's row of pi
    LF = 30  # float64 columns of its row of pf


cdef inline Py_ssize_t cut_rows(cnp.int64_t kind) noexcept nogil:
    """The number of constraint rows of a cut joint (or coupling) of this type code."""
    if kind == CUT_WELD:
        return 6
    if kind == CUT_SPHERICAL:
        return 3
    if kind == CUT_REVOLUTE or kind == CUT_PRISMATIC:
        return 5
    if kind == CUT_COUPLING:
        return 1
    return 0


cdef void world_velocities(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           const double* work, const double* v, Py_ssize_t n,
                           Frames* fr) noexcept nogil:
    """omega_k, odot_k and their rates at qddot = 0 of the links before n, after world_frames:
    omega_k = omega_b + P qdot, odot_k = odot_b + omega_b x d + P_lin qdot, and the rates with
    Pdot qdot = omega_k x (P qdot) + c, c = R_k (dP/dt)_local qdot (the universal joint's
    [(P_0 x axis2) qd_0 qd_1; 0], the only joint whose P_k moves in its own frame)."""
    cdef Py_ssize_t k, b, j, v0
    cdef const int* i
    cdef const double* P
    cdef const double* Rk
    cdef double u[3]
    cdef double t[3]
    cdef double c[3]
    cdef double cl[3]
    cdef double d[3]
    cdef double x[3]
    cdef double y[3]
    cdef double s[3]
    cdef double e[3]
    cdef double wb[3]
    cdef double vb[3]
    cdef double ab[3]
    cdef double eb[3]
    cdef double ob[3]
    cdef double fq
    cdef int a
    for k in range(n):
        i = ki + k * NI
        b, v0 = i[PARENT], i[IDX_V]
        for a in range(3):
            u[a] = 0.0
            t[a] = 0.0
            c[a] = 0.0
        for j in range(v0, v0 + i[NV]):  # P_k qdot_k, angular and linear
            P = fr.Pw + 6 * j
            for a in range(3):
                u[a] += P[a] * v[j]
                t[a] += P[3 + a] * v[j]
        Rk = fr.R + 9 * k
        if joint_type(i) == UNIVERSAL:
            P = work + p_row(L, nv, v0) * W
            cross3(P[0], P[1], P[2], kf[k * NT + AXIS2], kf[k * NT + AXIS2 + 1], kf[k * NT + AXIS2 + 2], cl)
            fq = v[v0] * v[v0 + 1]
            for a in range(3):
                c[a] = (Rk[3 * a] * cl[0] + Rk[3 * a + 1] * cl[1] + Rk[3 * a + 2] * cl[2]) * fq
        for a in range(3):
            if b >= 0:
                wb[a], ob[a], vb[a] = fr.w[3 * b + a], fr.p[3 * b + a], fr.od[3 * b + a]
                ab[a], eb[a] = fr.wd0[3 * b + a], fr.odd0[3 * b + a]
            else:
                wb[a] = ob[a] = vb[a] = ab[a] = eb[a] = 0.0
            d[a] = fr.p[3 * k + a] - ob[a]
        cross3(wb[0], wb[1], wb[2], d[0], d[1], d[2], x)
        for a in range(3):
            fr.w[3 * k + a] = wb[a] + u[a]
            fr.od[3 * k + a] = vb[a] + x[a] + t[a]
        cross3(fr.w[3 * k], fr.w[3 * k + 1], fr.w[3 * k + 2], u[0], u[1], u[2], y)
        for a in range(3):
            fr.wd0[3 * k + a] = ab[a] + y[a] + c[a]
        cross3(fr.w[3 * k], fr.w[3 * k + 1], fr.w[3 * k + 2], t[0], t[1], t[2], y)
        cross3(ab[0], ab[1], ab[2], d[0], d[1], d[2], x)
        for a in range(3):
            e[a] = fr.od[3 * k + a] - vb[a]
        cross3(wb[0], wb[1], wb[2], e[0], e[1], e[2], s)
        for a in range(3):
            fr.odd0[3 * k + a] = eb[a] + x[a] + s[a] + y[a]


cdef void log3(const double* R, double* out) noexcept nogil:
    """The rotation vector theta n of the row-major 3 x 3 rotation R, accurate at every angle:
    theta = atan2(|w| / 2, (tr R - 1) / 2) from the skew part w = vee(R - R^T) = 2 sin(theta) n;
    below pi / 2, theta / (2 sin theta) w (its series near 0); from pi / 2 on, n from the
    symmetric part (R + R^T) / 2 - cos(theta) 1 = (1 - cos(theta)) n n^T (its largest diagonal
    entry's column), its sign from w: there theta / (2 sin theta) would multiply the rounding
    of w by up to 1 / sin(theta) (1e6 at 1e-6 from pi)."""
    cdef double w0 = R[7] - R[5], w1 = R[2] - R[6], w2 = R[3] - R[1]
    cdef double c = 0.5 * (R[0] + R[4] + R[8] - 1.0)
    cdef double s = 0.5 * sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    cdef double th = atan2(s, c), f, d, nk, sgn
    cdef double B[3]
    cdef int a, kk = 0
    if c > 0.0:
        f = 0.5 * (1.0 + th * th / 6.0) if th < 1e-6 else th / (2.0 * s)
        out[0], out[1], out[2] = f * w0, f * w1, f * w2
        return
    d = 1.0 - c  # in [1, 2]
    for a in range(3):
        B[a] = R[4 * a] - c  # the diagonal of (1 - cos) n n^T
    for a in range(1, 3):
        if B[a] > B[kk]:
            kk = a
    nk = sqrt(fmax(B[kk], 1e-300) * d)  # (1 - cos) |n_k|
    sgn = -1.0 if (w0 if kk == 0 else (w1 if kk == 1 else w2)) < 0.0 else 1.0
    for a in range(3):
        out[a] = sgn * th * ((0.5 * (R[3 * a + kk] + R[3 * kk + a]) - (c if a == kk else 0.0)) / nk)


cdef inline void joint_frame(const Frames* fr, Py_ssize_t link, const double* Rloc,
                             const double* ploc, double* Rout, double* xout) noexcept nogil:
    """World orientation (row major) and origin of the frame (Rloc row major, ploc) on link
    (-1: the base)."""
    cdef int a, j
    cdef const double* R
    for a in range(3):
        if link < 0:
            xout[a] = ploc[a]
            for j in range(3):
                Rout[3 * a + j] = Rloc[3 * a + j]
        else:
            R = fr.R + 9 * link + 3 * a
            xout[a] = fr.p[3 * link + a] + R[0] * ploc[0] + R[1] * ploc[1] + R[2] * ploc[2]
            for j in range(3):
                Rout[3 * a + j] = R[0] * Rloc[j] + R[1] * Rloc[3 + j] + R[2] * Rloc[6 + j]


cdef inline void point_jacobian(const int* ki, Py_ssize_t nv, const Frames* fr, Py_ssize_t link,
                                const double* x, double* Jw, double* Jx) noexcept nogil:
    """Jw += the angular velocity of link, Jx += the velocity of the world point x on link, per
    unit rate (3 rows of nv each): the columns A_{x,k} P_k of 000 eq. 7b along the path to the
    root."""
    cdef Py_ssize_t k = link, j
    cdef const double* P
    cdef double s0, s1, s2
    while k >= 0:
        s0, s1, s2 = fr.p[3 * k] - x[0], fr.p[3 * k + 1] - x[1], fr.p[3 * k + 2] - x[2]
        for j in range(ki[k * NI + IDX_V], ki[k * NI + IDX_V] + ki[k * NI + NV]):
            P = fr.Pw + 6 * j
            Jw[j] += P[0]
            Jw[nv + j] += P[1]
            Jw[2 * nv + j] += P[2]
            Jx[j] += P[3] + s1 * P[2] - s2 * P[1]
            Jx[nv + j] += P[4] + s2 * P[0] - s0 * P[2]
            Jx[2 * nv + j] += P[5] + s0 * P[1] - s1 * P[0]
        k = ki[k * NI + PARENT]


cdef inline void point_motion(const Frames* fr, Py_ssize_t link, const double* x,
                              double* out) noexcept nogil:
    """out (4 rows of 3): omega, xdot, omegadot0, xddot0 of the world point x on link (zeros for
    the base)."""
    cdef int a
    cdef double s[3]
    cdef double wa[3]
    cdef double wwa[3]
    cdef double ea[3]
    cdef const double* w
    if link < 0:
        for a in range(12):
            out[a] = 0.0
        return
    w = fr.w + 3 * link
    for a in range(3):
        s[a] = x[a] - fr.p[3 * link + a]
    cross3(w[0], w[1], w[2], s[0], s[1], s[2], wa)
    cross3(w[0], w[1], w[2], wa[0], wa[1], wa[2], wwa)
    cross3(fr.wd0[3 * link], fr.wd0[3 * link + 1], fr.wd0[3 * link + 2], s[0], s[1], s[2], ea)
    for a in range(3):
        out[a] = w[a]
        out[3 + a] = fr.od[3 * link + a] + wa[a]
        out[6 + a] = fr.wd0[3 * link + a]
        out[9 + a] = fr.odd0[3 * link + a] + ea[a] + wwa[a]


cdef void coupling_row(const int* ki, Py_ssize_t nv, const Cuts* cu, Py_ssize_t cut,
                       const double* q, bint with_bias, double* phi, double* C,
                       double* gamma) noexcept nogil:
    """The row of the joint coupling ``cut``: phi = sum c_k q_k - value, C = sum c_k e_k, Cdot qdot = 0."""
    cdef const cnp.int64_t* row = cu.li + LI * cut
    cdef Py_ssize_t r = row[3], t, k, j
    cdef double c
    phi[r] = -cu.lf[LF * cut]
    for j in range(nv):
        C[r * nv + j] = 0.0
    for t in range(row[4], row[4] + row[5]):
        k, c = cu.li[LI * t + 1], cu.lf[LF * t]
        phi[r] += c * q[ki[k * NI + IDX_Q]]
        C[r * nv + ki[k * NI + IDX_V]] = c
    if with_bias:
        gamma[r] = 0.0


cdef inline Py_ssize_t three_rows(Py_ssize_t r, Py_ssize_t nv, const double* value, const double* J2,
                                  const double* J1, const double* m1, const double* m2, bint with_bias,
                                  double* phi, double* C, double* gamma) noexcept nogil:
    """Rows r..r+2: phi = value, C = J2 - J1 (link 2's Jacobian minus link 1's, 3 rows of nv
    each), the bias m2 - m1; returns the next row."""
    cdef int a
    cdef Py_ssize_t j
    for a in range(3):
        phi[r + a] = value[a]
        for j in range(nv):
            C[(r + a) * nv + j] = J2[a * nv + j] - J1[a * nv + j]
        if with_bias:
            gamma[r + a] = m2[a] - m1[a]
    return r + 3


cdef void normal_rows(cnp.int64_t kind, Py_ssize_t r, Py_ssize_t nv, const double* lf,
                      const double* lg, const double* B, const double* dvec, const double* J,
                      const double* m1, const double* m2, bint with_bias, double* phi, double* C,
                      double* gamma) noexcept nogil:
    """The two rows b_j . (...) of a revolute (relative rotation) or prismatic (offset) cut; B
    the two normals in the world, lf the cut joint's row of pf (its normals in the joint frame
    at columns 24 and 27)."""
    cdef int jn, a
    cdef Py_ssize_t j
    cdef const double* b
    cdef double tmp[3]
    cdef double bd[3]
    cdef double wb[3]
    cdef double e[3]
    cdef double g, s
    for jn in range(2):
        b = B + 3 * jn
        if kind == CUT_REVOLUTE:
            phi[r + jn] = lf[24 + 3 * jn] * lg[0] + lf[25 + 3 * jn] * lg[1] + lf[26 + 3 * jn] * lg[2]
            for j in range(nv):
                C[(r + jn) * nv + j] = (b[0] * (J[6 * nv + j] - J[j]) + b[1] * (J[7 * nv + j] - J[nv + j])
                                        + b[2] * (J[8 * nv + j] - J[2 * nv + j]))
            if with_bias:  # d/dt (b . wrel), bdot = w1 x b
                cross3(m1[0], m1[1], m1[2], b[0], b[1], b[2], tmp)
                g = 0.0
                for a in range(3):
                    g += tmp[a] * (m2[a] - m1[a]) + b[a] * (m2[6 + a] - m1[6 + a])
                gamma[r + jn] = g
        else:
            phi[r + jn] = b[0] * dvec[0] + b[1] * dvec[1] + b[2] * dvec[2]
            cross3(b[0], b[1], b[2], dvec[0], dvec[1], dvec[2], tmp)  # + (b x d) . omega_1
            for j in range(nv):
                s = 0.0
                for a in range(3):
                    s += b[a] * (J[(9 + a) * nv + j] - J[(3 + a) * nv + j]) + tmp[a] * J[a * nv + j]
                C[(r + jn) * nv + j] = s
            if with_bias:  # d2/dt2 (b . d) at qddot = 0, b on link 1: 2 bdot.ddot + b.dd0 + bddot.d
                cross3(m1[0], m1[1], m1[2], b[0], b[1], b[2], bd)
                cross3(m1[0], m1[1], m1[2], bd[0], bd[1], bd[2], wb)
                cross3(m1[6], m1[7], m1[8], b[0], b[1], b[2], e)
                g = 2.0 * (bd[0] * (m2[3] - m1[3]) + bd[1] * (m2[4] - m1[4]) + bd[2] * (m2[5] - m1[5]))
                for a in range(3):
                    g += b[a] * (m2[9 + a] - m1[9 + a])
                g += (e[0] + wb[0]) * dvec[0] + (e[1] + wb[1]) * dvec[1] + (e[2] + wb[2]) * dvec[2]
                gamma[r + jn] = g


cdef void loop_rows(const int* ki, Py_ssize_t nv, const Cuts* cu, const Frames* fr,
                    const double* q, bint with_bias, double* phi, double* C,
                    double* gamma) noexcept nogil:
    """phi, C = D* N (004 eq. 15) and Cdot qdot (eq. 13) of every cut joint and joint coupling
    (C: m rows of nv), after world_frames (and world_velocities for the bias)."""
    cdef Py_ssize_t cut, r, j
    cdef cnp.int64_t kind, l1, l2
    cdef const double* lf
    cdef double* J = fr.J
    cdef double RF1[9]
    cdef double RF2[9]
    cdef double Rrel[9]
    cdef double x1[3]
    cdef double x2[3]
    cdef double dvec[3]
    cdef double rot[3]
    cdef double lg[3]
    cdef double B[6]
    cdef double m1[12]
    cdef double m2[12]
    cdef int a, c, jn
    for cut in range(cu.nl):
        kind, l1, l2, r = cu.li[LI * cut], cu.li[LI * cut + 1], cu.li[LI * cut + 2], cu.li[LI * cut + 3]
        if kind == CUT_TERM:
            continue
        if kind == CUT_COUPLING:
            coupling_row(ki, nv, cu, cut, q, with_bias, phi, C, gamma)
            continue
        lf = cu.lf + LF * cut
        joint_frame(fr, l1, lf, lf + 9, RF1, x1)
        joint_frame(fr, l2, lf + 12, lf + 21, RF2, x2)
        for j in range(12 * nv):
            J[j] = 0.0
        point_jacobian(ki, nv, fr, l1, x1, J, J + 3 * nv)
        point_jacobian(ki, nv, fr, l2, x2, J + 6 * nv, J + 9 * nv)
        for a in range(3):  # R_1^T R_2
            for c in range(3):
                Rrel[3 * a + c] = RF1[a] * RF2[c] + RF1[3 + a] * RF2[3 + c] + RF1[6 + a] * RF2[6 + c]
        log3(Rrel, lg)
        for a in range(3):
            dvec[a] = x2[a] - x1[a]
            rot[a] = RF1[3 * a] * lg[0] + RF1[3 * a + 1] * lg[1] + RF1[3 * a + 2] * lg[2]
        for jn in range(2):
            for a in range(3):
                B[3 * jn + a] = (RF1[3 * a] * lf[24 + 3 * jn] + RF1[3 * a + 1] * lf[25 + 3 * jn]
                                 + RF1[3 * a + 2] * lf[26 + 3 * jn])
        if with_bias:
            point_motion(fr, l1, x1, m1)
            point_motion(fr, l2, x2, m2)
        if kind != CUT_PRISMATIC:  # x_2 - x_1 = 0: Jx2 - Jx1, xddot
            r = three_rows(r, nv, dvec, J + 9 * nv, J + 3 * nv, m1 + 9, m2 + 9, with_bias, phi, C, gamma)
        if kind == CUT_WELD or kind == CUT_PRISMATIC:  # no relative rotation: Jw2 - Jw1, omegadot
            r = three_rows(r, nv, rot, J + 6 * nv, J, m1 + 6, m2 + 6, with_bias, phi, C, gamma)
        if kind == CUT_REVOLUTE or kind == CUT_PRISMATIC:
            normal_rows(kind, r, nv, lf, lg, B, dvec, J, m1, m2, with_bias, phi, C, gamma)
