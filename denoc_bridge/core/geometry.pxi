# Joint geometry: the placement of every link relative to its parent (A_{k,b}) and the
# joint-motion propagation matrices P_k (000 eq. 7b; 001 eq. A.4); numba's kernels/geometry.py,
# joints.py and trig.py before (deleted).
#
# E_k is kept as its rotation code: for codes 0-2 the (cos, sin) pair goes to the link row of
# the work array and r_k is the table's r0; for codes 3-4 E_k (9 doubles, row major) and r_k go
# to the link's two geometry rows (E_k from the first row's start, r_k in columns G_R.. of the
# second).  The rows of P_k go to the P region for joints without an aligned axis.  With
# ``full`` every E_k, r_k and P_k is written (for the O(n^2) algorithms).

cdef extern from *:
    """
    #define DB_TRIG_LIMIT (1.0e5)
    #define DB_INVPIO2 (6.36619772367581382433e-01)  /* 2 / pi */
    #define DB_PIO2_1 (1.57079632673412561417e00)  /* first 33 bits of pi/2 */
    #define DB_PIO2_2 (6.07710050630396597660e-11)  /* next 33 bits */
    #define DB_PIO2_2T (2.02226624879595063154e-21)  /* pi/2 - PIO2_1 - PIO2_2 */
    #define DB_S1 (-1.66666666666666324348e-01)
    #define DB_S2 (8.33333333332248946124e-03)
    #define DB_S3 (-1.98412698298579493134e-04)
    #define DB_S4 (2.75573137070700676789e-06)
    #define DB_S5 (-2.50507602534068634195e-08)
    #define DB_S6 (1.58969099521155010221e-10)
    #define DB_C1 (4.16666666666666019037e-02)
    #define DB_C2 (-1.38888888888741095749e-03)
    #define DB_C3 (2.48015872894767294178e-05)
    #define DB_C4 (-2.75573143513906633035e-07)
    #define DB_C5 (2.08757232129817482790e-09)
    #define DB_C6 (-1.13596475577881948265e-11)
    #define DB_ROUND_MAGIC (6755399441055744.0)  /* 1.5 * 2**52 */
    """
    double TRIG_LIMIT "DB_TRIG_LIMIT"
    double INVPIO2 "DB_INVPIO2"
    double PIO2_1 "DB_PIO2_1"
    double PIO2_2 "DB_PIO2_2"
    double PIO2_2T "DB_PIO2_2T"
    double S1 "DB_S1"
    double S2 "DB_S2"
    double S3 "DB_S3"
    double S4 "DB_S4"
    double S5 "DB_S5"
    double S6 "DB_S6"
    double C1 "DB_C1"
    double C2 "DB_C2"
    double C3 "DB_C3"
    double C4 "DB_C4"
    double C5 "DB_C5"
    double C6 "DB_C6"
    double ROUND_MAGIC "DB_ROUND_MAGIC"


cdef inline bint poly_ok(const double* q, Py_ssize_t nq) noexcept nogil:
    """True when every entry of q is within +-TRIG_LIMIT (then cos_sin is valid for all)."""
    cdef Py_ssize_t i
    for i in range(nq):
        if not fabs(q[i]) <= TRIG_LIMIT:
            return False
    return True


cdef union Bits:  # a double and its bit pattern
    double d
    long long i


cdef inline double flip_sign(double x, long long bit) noexcept nogil:
    """x with its sign flipped where ``bit`` (0 or 2**63) is set."""
    cdef Bits u
    u.d = x
    u.i = u.i ^ bit
    return u.d


cdef inline double select(long long mask, double a, double b) noexcept nogil:
    """a where ``mask`` is all ones, b where it is zero."""
    cdef Bits ua, ub
    ua.d = a
    ub.d = b
    ua.i = (ua.i & mask) | (ub.i & ~mask)
    return ua.d


cdef inline void cos_sin(double x, double* cs) noexcept nogil:
    """(cos x, sin x) for |x| <= TRIG_LIMIT within 1 ulp, without data-dependent branches:
    Cody-Waite reduction by pi/2 and fdlibm's __kernel_sin/__kernel_cos (trig.py; the
    coefficients and the split of pi/2 are fdlibm's: Copyright (C) 1993 by Sun Microsystems,
    Inc. All rights reserved.  Developed at SunSoft, a Sun Microsystems, Inc. business.
    Permission to use, copy, modify, and distribute this software is freely granted, provided
    that this notice is preserved).

    The floor and the quadrant are taken in double and 64-bit integer arithmetic only (adding
    1.5 2**52 rounds to an integer and leaves it in the low bits), so that a loop of calls
    vectorises with SSE2 alone: the same numbers as floor() and an int conversion."""
    cdef double y = x * INVPIO2 + 0.5
    cdef double t = (y + ROUND_MAGIC) - ROUND_MAGIC  # y rounded to an integer (|y| < 2**51)
    cdef double fn = t - <double>(t > y)  # floor(y): the nearest multiple of pi/2
    t = x - fn * PIO2_1  # exact
    cdef double w = fn * PIO2_2
    cdef double r = t - w
    w = fn * PIO2_2T - ((t - r) - w)
    cdef double y0 = r - w  # x - fn pi/2 = y0 + y1, |y0| <= pi/4
    cdef double y1 = (r - y0) - w
    cdef double z = y0 * y0
    cdef double v = z * y0
    cdef double rs = S2 + z * (S3 + z * (S4 + z * (S5 + z * S6)))
    cdef double ks = y0 - ((z * (0.5 * y1 - v * rs) - y1) - v * S1)  # __kernel_sin(y0, y1)
    cdef double rc = z * (C1 + z * (C2 + z * (C3 + z * (C4 + z * (C5 + z * C6)))))
    cdef double hz = 0.5 * z
    cdef double wc = 1.0 - hz
    cdef double kc = wc + (((1.0 - wc) - hz) + (z * rc - y0 * y1))  # __kernel_cos(y0, y1)
    cdef Bits nb
    nb.d = fn + ROUND_MAGIC  # n = fn in the low bits (two's complement modulo 2**51)
    cdef long long n = nb.i
    cdef long long odd = -(n & 1)  # quadrant n mod 4, by selects: all ones for odd n
    cs[0] = flip_sign(select(odd, ks, kc), ((n + 1) & 2) << 62)
    cs[1] = flip_sign(select(odd, kc, ks), (n & 2) << 62)


cdef inline void cos_sin_any(double x, bint poly, double* cs) noexcept nogil:
    """cos_sin when ``poly`` (from poly_ok), else the C library."""
    if poly:
        cos_sin(x, cs)
    else:
        cs[0] = cos(x)
        cs[1] = sin(x)


cdef inline void unit_pair(double a, double b, double* cs) noexcept nogil:
    """(a, b) / |(a, b)|, scaled by max(|a|, |b|) first (no overflow or underflow of the
    squares); a (0, 0) pair is refused before (valid_state)."""
    cdef double m = fmax2(fabs(a), fabs(b))
    a = a / m
    b = b / m
    cdef double n = sqrt(a * a + b * b)
    cs[0] = a / n
    cs[1] = b / n


cdef inline void rotation_about_axis(const double* e, double c, double s, double* R) noexcept nogil:
    """Rodrigues: R = c 1 + s ex + (1 - c) e e^T for a unit axis e (R row major)."""
    cdef double t = 1.0 - c
    R[0] = c + t * e[0] * e[0]
    R[1] = t * e[0] * e[1] - s * e[2]
    R[2] = t * e[0] * e[2] + s * e[1]
    R[3] = t * e[1] * e[0] + s * e[2]
    R[4] = c + t * e[1] * e[1]
    R[5] = t * e[1] * e[2] - s * e[0]
    R[6] = t * e[2] * e[0] - s * e[1]
    R[7] = t * e[2] * e[1] + s * e[0]
    R[8] = c + t * e[2] * e[2]


cdef inline void quaternion_rotation(double x, double y, double z, double w, double* R) noexcept nogil:
    """Rotation matrix of the quaternion (x, y, z, w) (Pinocchio's order), normalised on the fly:
    R = 1 + s (w [v]x + [v]x^2), s = 2 / |q|^2, after scaling by the largest entry."""
    cdef double m = fmax2(fmax2(fabs(x), fabs(y)), fmax2(fabs(z), fabs(w)))
    x = x / m
    y = y / m
    z = z / m
    w = w / m
    cdef double s = 2.0 / (x * x + y * y + z * z + w * w)
    R[0] = 1.0 - s * (y * y + z * z)
    R[1] = s * (x * y - z * w)
    R[2] = s * (x * z + y * w)
    R[3] = s * (x * y + z * w)
    R[4] = 1.0 - s * (x * x + z * z)
    R[5] = s * (y * z - x * w)
    R[6] = s * (x * z - y * w)
    R[7] = s * (y * z + x * w)
    R[8] = 1.0 - s * (x * x + y * y)


cdef void joint_transform(int jt, const double* f, const double* q, double* R,
                          double* p) noexcept nogil:
    """Motion of a multi-DOF joint (f: the link's table row, q: the joint's coordinates): child
    frame = joint frame rotated by R and moved by p; quaternions and (cos, sin) pairs are
    normalised on the fly."""
    cdef double R1[9]
    cdef double R2[9]
    cdef double cs[2]
    cdef int i, j
    for i in range(3):
        p[i] = 0.0
        for j in range(3):
            R[3 * i + j] = 1.0 if i == j else 0.0
    if jt == SPHERICAL:
        quaternion_rotation(q[0], q[1], q[2], q[3], R)
    elif jt == FREEFLYER:
        p[0] = q[0]
        p[1] = q[1]
        p[2] = q[2]
        quaternion_rotation(q[3], q[4], q[5], q[6], R)
    elif jt == UNIVERSAL:  # R = Rot(axis, q0) Rot(axis2, q1)
        rotation_about_axis(f + AXIS, cos(q[0]), sin(q[0]), R1)
        rotation_about_axis(f + AXIS2, cos(q[1]), sin(q[1]), R2)
        for i in range(3):
            for j in range(3):
                R[3 * i + j] = R1[3 * i] * R2[j] + R1[3 * i + 1] * R2[3 + j] + R1[3 * i + 2] * R2[6 + j]
    elif jt == PLANAR:
        unit_pair(q[2], q[3], cs)
        p[0] = q[0]
        p[1] = q[1]
        R[0] = cs[0]
        R[1] = -cs[1]
        R[3] = cs[1]
        R[4] = cs[0]
    elif jt == TRANSLATION:
        p[0] = q[0]
        p[1] = q[1]
        p[2] = q[2]
    elif jt == REVOLUTE:
        rotation_about_axis(f + AXIS, cos(q[0]), sin(q[0]), R)
    elif jt == CONTINUOUS:
        unit_pair(q[0], q[1], cs)
        rotation_about_axis(f + AXIS, cs[0], cs[1], R)
    elif jt == PRISMATIC:
        for i in range(3):
            p[i] = f[AXIS + i] * q[0]


cdef void joint_subspace(int jt, const double* f, const double* q, double* P,
                         int nrow) noexcept nogil:
    """Rows of P_k (child frame, [angular; linear]) into the P rows from P (rows of W)."""
    cdef int d, i
    cdef const double* a = f + AXIS
    cdef const double* e = f + AXIS2
    cdef double c, s, ee, ex0, ex1, ex2
    for d in range(nrow):
        for i in range(6):
            P[d * W + i] = 0.0
    if jt == REVOLUTE or jt == CONTINUOUS:
        for i in range(3):
            P[i] = a[i]
    elif jt == PRISMATIC:
        for i in range(3):
            P[3 + i] = a[i]
    elif jt == SPHERICAL:
        for d in range(3):
            P[d * W + d] = 1.0
    elif jt == FREEFLYER:  # Pinocchio's v = [linear; angular] in the child frame
        for d in range(3):
            P[d * W + 3 + d] = 1.0
            P[(3 + d) * W + d] = 1.0
    elif jt == UNIVERSAL:  # omega_rel = Rot(axis2, q1)^T axis qd0 + axis2 qd1
        c = cos(q[1])
        s = sin(q[1])
        ee = e[0] * a[0] + e[1] * a[1] + e[2] * a[2]
        ex0 = e[1] * a[2] - e[2] * a[1]  # Rot(e, q1)^T a = c a - s (e x a) + (1 - c) (e.a) e
        ex1 = e[2] * a[0] - e[0] * a[2]
        ex2 = e[0] * a[1] - e[1] * a[0]
        P[0] = c * a[0] - s * ex0 + (1.0 - c) * ee * e[0]
        P[1] = c * a[1] - s * ex1 + (1.0 - c) * ee * e[1]
        P[2] = c * a[2] - s * ex2 + (1.0 - c) * ee * e[2]
        for i in range(3):
            P[W + i] = e[i]
    elif jt == PLANAR:
        P[3] = 1.0
        P[W + 4] = 1.0
        P[2 * W + 2] = 1.0
    elif jt == TRANSLATION:
        for d in range(3):
            P[d * W + 3 + d] = 1.0


cdef inline void joint_rows(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                            const double* q, Py_ssize_t k, double* work) noexcept nogil:
    """Rows of P_k (P region of the work array)."""
    cdef const int* i = ki + k * NI
    joint_subspace(joint_type(i), kf + k * NT, q + i[IDX_Q], work + p_row(L, nv, i[IDX_V]) * W,
                   i[NV])


cdef inline void aligned_rotation(const double* f, int a, double c, double s, double* E) noexcept nogil:
    """E_k = (R0 R_J)^T for a rotation R_J by (c, s) about the coordinate axis a: row a of E_k
    is column a of R0, rows i and j (i = a + 1, j = a + 2 mod 3) are columns i and j of R0
    turned by the joint angle (row major, one straight-line case per axis)."""
    cdef const double* r = f + R0
    cdef double x0 = r[0], x1 = r[3], x2 = r[6]  # columns of R0
    cdef double y0 = r[1], y1 = r[4], y2 = r[7]
    cdef double z0 = r[2], z1 = r[5], z2 = r[8]
    if a == 0:
        E[0], E[1], E[2] = x0, x1, x2
        E[3], E[4], E[5] = c * y0 + s * z0, c * y1 + s * z1, c * y2 + s * z2
        E[6], E[7], E[8] = c * z0 - s * y0, c * z1 - s * y1, c * z2 - s * y2
    elif a == 1:
        E[0], E[1], E[2] = c * x0 - s * z0, c * x1 - s * z1, c * x2 - s * z2
        E[3], E[4], E[5] = y0, y1, y2
        E[6], E[7], E[8] = c * z0 + s * x0, c * z1 + s * x1, c * z2 + s * x2
    else:
        E[0], E[1], E[2] = c * x0 + s * y0, c * x1 + s * y1, c * x2 + s * y2
        E[3], E[4], E[5] = c * y0 - s * x0, c * y1 - s * x1, c * y2 - s * x2
        E[6], E[7], E[8] = z0, z1, z2


cdef void coded_rotation_and_offset(const int* i, const double* f, double c, double s,
                                    double* g) noexcept nogil:
    """For a full pass: the 3x3 E_k of a coded rotation (and r_k = r0 for codes 0-2) into the
    geometry rows from g."""
    cdef int code = rot_code(i)
    cdef int n
    cdef double o[3]
    for n in range(3):  # columns of E_k: E_k e_n
        rot3(code, c, s, NULL, 1.0 if n == 0 else 0.0, 1.0 if n == 1 else 0.0,
             1.0 if n == 2 else 0.0, o)
        g[n] = o[0]
        g[3 + n] = o[1]
        g[6 + n] = o[2]
    if code <= ROT_Z:
        for n in range(3):
            g[W + G_R + n] = f[T0 + n]


cdef void one_dof_general(const double* f, int jt, double x, double c, double s,
                          double* g) noexcept nogil:
    """E_k = (R0 R_J)^T and r_k for a revolute, continuous or prismatic joint about any axis e:
    R_J = c 1 + s ex + (1 - c) e e^T (Rodrigues) or, prismatic, R_J = 1 and r = r0 + R0 e x."""
    cdef double e0 = f[AXIS], e1 = f[AXIS + 1], e2 = f[AXIS + 2]
    cdef double RJ[9]
    cdef double t, a0, a1, a2
    cdef int i
    if jt == PRISMATIC:
        RJ[0], RJ[1], RJ[2], RJ[3], RJ[4], RJ[5], RJ[6], RJ[7], RJ[8] = (
            1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)
        for i in range(3):
            g[W + G_R + i] += (f[R0 + 3 * i] * e0 + f[R0 + 3 * i + 1] * e1
                               + f[R0 + 3 * i + 2] * e2) * x
    else:
        t = 1.0 - c
        RJ[0], RJ[1], RJ[2] = c + t * e0 * e0, t * e0 * e1 - s * e2, t * e0 * e2 + s * e1
        RJ[3], RJ[4], RJ[5] = t * e1 * e0 + s * e2, c + t * e1 * e1, t * e1 * e2 - s * e0
        RJ[6], RJ[7], RJ[8] = t * e2 * e0 - s * e1, t * e2 * e1 + s * e0, c + t * e2 * e2
    for i in range(3):  # row i of R0 R_J is column i of E
        a0, a1, a2 = f[R0 + 3 * i], f[R0 + 3 * i + 1], f[R0 + 3 * i + 2]
        g[i] = a0 * RJ[0] + a1 * RJ[3] + a2 * RJ[6]
        g[3 + i] = a0 * RJ[1] + a1 * RJ[4] + a2 * RJ[7]
        g[6 + i] = a0 * RJ[2] + a1 * RJ[5] + a2 * RJ[8]


cdef void multi_dof_general(const int* i, const double* f, const double* q,
                            double* g) noexcept nogil:
    """E_k = (R0 R_J)^T and r_k = r0 + R0 p_J for a multi-DOF joint (spherical, free-flyer,
    universal, planar, translation)."""
    cdef double RJ[9]
    cdef double pJ[3]
    cdef int a, b
    joint_transform(joint_type(i), f, q + i[IDX_Q], RJ, pJ)
    for a in range(3):
        for b in range(3):
            g[3 * b + a] = (f[R0 + 3 * a] * RJ[b] + f[R0 + 3 * a + 1] * RJ[3 + b]
                            + f[R0 + 3 * a + 2] * RJ[6 + b])
        g[W + G_R + a] += f[R0 + 3 * a] * pJ[0] + f[R0 + 3 * a + 1] * pJ[1] + f[R0 + 3 * a + 2] * pJ[2]


cdef void joint_geometry(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                         Py_ssize_t nv, double* work, bint full, Py_ssize_t first, Py_ssize_t end,
                         bint poly) noexcept nogil:
    """Geometry of links first..end-1, any joint, one by one."""
    cdef Py_ssize_t k, iq
    cdef const int* i
    cdef const double* f
    cdef double* g
    cdef int code, jt, n
    cdef double cs[2]
    for k in range(first, end):
        i = ki + k * NI
        f = kf + k * NT
        code = rot_code(i)
        jt = joint_type(i)
        iq = i[IDX_Q]
        if jt == REVOLUTE:
            cos_sin_any(q[iq], poly, cs)
        elif jt == CONTINUOUS:  # (cos, sin), normalised
            unit_pair(q[iq], q[iq + 1], cs)
        else:
            cs[0] = 1.0
            cs[1] = 0.0
        g = work + geometry_row(L, k) * W
        if code <= ROT_Z:  # rotation about a coordinate axis
            work[k * W + C_CS] = cs[0]
            work[k * W + C_CS + 1] = dof_sign(i) * cs[1]
            if full:
                coded_rotation_and_offset(i, f, cs[0], dof_sign(i) * cs[1], g)
                joint_rows(ki, kf, L, nv, q, k, work)
            continue
        for n in range(3):
            g[W + G_R + n] = f[T0 + n]
        if code == ROT_IDENTITY:  # prismatic: r = r0 + axis q
            for n in range(3):
                g[W + G_R + n] += f[AXIS + n] * q[iq]
            if full:
                coded_rotation_and_offset(i, f, cs[0], cs[1], g)
        elif dof_index(i) >= 0 and jt <= CONTINUOUS:  # axis e_a, general placement
            aligned_rotation(f, dof_index(i), cs[0], dof_sign(i) * cs[1], g)
        elif jt <= PRISMATIC:
            one_dof_general(f, jt, q[iq], cs[0], cs[1], g)
        else:
            multi_dof_general(i, f, q, g)
        if full or dof_index(i) < 0:
            joint_rows(ki, kf, L, nv, q, k, work)


cdef inline bint coordinate_axis_block(const int* ki, Py_ssize_t first, Py_ssize_t end) noexcept nogil:
    """True when every joint of links first..end-1 is revolute about a coordinate axis (the
    joints whose geometry is one (cos, sin) pair)."""
    cdef Py_ssize_t k
    for k in range(first, end):
        if (ki[k * NI + FLAGS] & 0xF07) > 2:
            return False
    return True


cdef void mixed_geometry(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                         Py_ssize_t nv, double* work, Py_ssize_t first, Py_ssize_t end) noexcept nogil:
    """joint_geometry_pass (not full, ``poly``) when some joint of the range is not revolute
    about a coordinate axis (panda's general placements and fingers, a free-flyer root): the
    cos/sin of every revolute joint in one vectorised loop per block, as the uniform path, then
    each link: (cos, sin) for the codes 0-2, E_k by aligned_rotation and r_k = r0 for a
    revolute joint about a coordinate axis of a general placement, joint_geometry otherwise."""
    cdef Py_ssize_t r = work_rows(L, nv, n_modules(ki, L)) - SCRATCH_ROWS
    cdef double* x = work + r * W  # contiguous scratch blocks of BLOCK numbers
    cdef double* c = work + (r + 8) * W
    cdef double* s = work + (r + 16) * W
    cdef Py_ssize_t b, e, n, j, k
    cdef const int* i
    cdef double* g
    cdef double cs[2]
    cdef double sg
    cdef int a
    b = first
    while b < end:  # blocks of BLOCK links
        e = min(b + BLOCK, end)
        n = e - b
        for j in range(n):  # each revolute joint's angle (0 for the others)
            i = ki + (b + j) * NI
            x[j] = q[i[IDX_Q]] if joint_type(i) == REVOLUTE else 0.0
        for j in range(n):  # cos and sin
            cos_sin(x[j], cs)
            c[j] = cs[0]
            s[j] = cs[1]
        for j in range(n):
            k = b + j
            i = ki + k * NI
            sg = dof_sign(i) * s[j]
            if (i[FLAGS] & 0xF07) <= 2:  # revolute, codes 0-2
                work[k * W + C_CS] = c[j]
                work[k * W + C_CS + 1] = sg
            elif joint_type(i) == REVOLUTE and rot_code(i) == ROT_GENERAL and dof_index(i) >= 0:
                g = work + geometry_row(L, k) * W
                for a in range(3):
                    g[W + G_R + a] = kf[k * NT + T0 + a]
                aligned_rotation(kf + k * NT, dof_index(i), c[j], sg, g)
            else:
                joint_geometry(ki, kf, L, q, nv, work, False, k, k + 1, True)
        b = e


cdef void joint_geometry_pass(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                              Py_ssize_t nv, double* work, bint full, Py_ssize_t first,
                              Py_ssize_t end, bint poly) noexcept nogil:
    """Geometry of links first..end-1 (the recursions call it block by block, so that the block
    is still in cache when they read it).  ``poly``: all of q is within the range of the
    branch-free cos_sin.  When every joint of the range is revolute about a coordinate axis,
    the angles are copied into a contiguous scratch block and their cos/sin computed in one
    loop that gcc vectorises; otherwise the joints are taken one by one."""
    if not poly or full:
        joint_geometry(ki, kf, L, q, nv, work, full, first, end, poly)
        return
    if not coordinate_axis_block(ki, first, end):
        mixed_geometry(ki, kf, L, q, nv, work, first, end)
        return
    cdef Py_ssize_t r = work_rows(L, nv, n_modules(ki, L)) - SCRATCH_ROWS
    cdef double* x = work + r * W  # contiguous scratch blocks of BLOCK numbers
    cdef double* c = work + (r + 8) * W
    cdef double* s = work + (r + 16) * W
    cdef Py_ssize_t b, e, n, j
    cdef double cs[2]
    b = first
    while b < end:  # blocks of BLOCK links
        e = min(b + BLOCK, end)
        n = e - b
        for j in range(n):  # every joint's first coordinate
            x[j] = q[ki[(b + j) * NI + IDX_Q]]
        for j in range(n):  # cos and sin
            cos_sin(x[j], cs)
            c[j] = cs[0]
            s[j] = cs[1]
        for j in range(n):  # scatter to the links, the sine signed by the axis (FLAGS bit 6)
            work[(b + j) * W + C_CS] = c[j]
            work[(b + j) * W + C_CS + 1] = -s[j] if ki[(b + j) * NI + FLAGS] & 64 else s[j]
        b = e
