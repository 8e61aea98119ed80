# The terms of the matrix-free derivatives (directional.pyx states the math): the 6-vector algebra
# of motions and forces, the link's inertia and Coriolis products, the joint columns, rates and
# column terms, and the placement A_{k,b} of a link read from the forward dynamics' work array.
#
# 6-vectors are small C arrays, motions [w; v] and forces [n; f] (moment about the link origin),
# written through an output pointer after every input is read, so that an output may alias an
# input.  A link inertia is the table's 10 parameters from column MASS: I = (m, h = m c, I_O:
# xx xy xz yy yz zz) (000 eqs. 2a-2b).


cdef struct Frame:  # A_{k,b} of link k: E_k by its code, (c, s) or 9 doubles e; r_k, zero pattern rc
    int code
    int rc
    double c
    double s
    const double* e
    const double* r


cdef inline void frame_of(const int* i, const double* f, const double* work, Py_ssize_t L,
                          Py_ssize_t k, Frame* g) noexcept nogil:
    """E_k and r_k as the forward dynamics left them (geometry.pxi): (cos, sin) in the link row
    and r_k = r0 for the codes 0-2; E_k and r_k in the geometry rows otherwise, r_k = r0 with its
    zero pattern for a revolute or continuous joint (inverse_dynamics.pxi's r_is_r0)."""
    cdef const double* gr = work + geometry_row(L, k) * W
    g.code = rot_code(i)
    if g.code <= ROT_Z:
        g.c, g.s, g.e = work[k * W + C_CS], work[k * W + C_CS + 1], NULL
        g.rc, g.r = offset_code(i), f + T0
    else:
        g.c, g.s, g.e = 0.0, 0.0, gr
        if joint_type(i) <= CONTINUOUS:
            g.rc, g.r = offset_code(i), f + T0
        else:
            g.rc, g.r = R_GENERAL, gr + W + G_R


cdef inline void to_child(const Frame* g, const double* x, double* y) noexcept nogil:
    """y = A_{k,b} x: a motion of the parent's frame in link k's (000 eq. 7b)."""
    apply_A(g.code, g.c, g.s, g.e, g.rc, g.r, x, y)


cdef inline void to_parent(const Frame* g, const double* x, double* y) noexcept nogil:
    """y = A_{k,b}^T x: a force of link k's frame in the parent's."""
    apply_At(g.code, g.c, g.s, g.e, g.rc, g.r, x, y)


# ------------------------------------------------------------------ 6-vectors
cdef inline void zero6(double* x) noexcept nogil:
    x[0] = 0.0
    x[1] = 0.0
    x[2] = 0.0
    x[3] = 0.0
    x[4] = 0.0
    x[5] = 0.0


cdef inline void copy6(const double* x, double* y) noexcept nogil:
    """y = x."""
    y[0] = x[0]
    y[1] = x[1]
    y[2] = x[2]
    y[3] = x[3]
    y[4] = x[4]
    y[5] = x[5]


cdef inline void add6(const double* x, double* y) noexcept nogil:
    """y += x."""
    y[0] += x[0]
    y[1] += x[1]
    y[2] += x[2]
    y[3] += x[3]
    y[4] += x[4]
    y[5] += x[5]


cdef inline void axpy6(double a, const double* x, double* y) noexcept nogil:
    """y += a x."""
    y[0] += a * x[0]
    y[1] += a * x[1]
    y[2] += a * x[2]
    y[3] += a * x[3]
    y[4] += a * x[4]
    y[5] += a * x[5]


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


cdef inline void mcross(const double* a, const double* b, double* o) noexcept nogil:
    """o = a x b for motions: [aw x bw; aw x bv + av x bw]."""
    cdef double o0 = a[1] * b[2] - a[2] * b[1]
    cdef double o1 = a[2] * b[0] - a[0] * b[2]
    cdef double o2 = a[0] * b[1] - a[1] * b[0]
    cdef double o3 = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    cdef double o4 = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    cdef double o5 = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]
    o[0], o[1], o[2], o[3], o[4], o[5] = o0, o1, o2, o3, o4, o5


cdef inline void fcross(const double* a, const double* f, double* o) noexcept nogil:
    """o = a x* f for a motion a and a force f = [n; f]: [aw x n + av x f; aw x f]."""
    cdef double o0 = a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    cdef double o1 = a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    cdef double o2 = a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    cdef double o3 = a[1] * f[5] - a[2] * f[4]
    cdef double o4 = a[2] * f[3] - a[0] * f[5]
    cdef double o5 = a[0] * f[4] - a[1] * f[3]
    o[0], o[1], o[2], o[3], o[4], o[5] = o0, o1, o2, o3, o4, o5


# A joint axis about or along a coordinate axis, S = a e_d (P_k = sign e_d, 000 eq. 7b): its
# products without the zeros, one straight-line case per d (as spatial.pxi's column), so that the
# vectors stay in registers.
cdef inline void axis_cross(int d, double a, const double* x, double* o) noexcept nogil:
    """o = (a e_d) x x for a motion x: [a e_d x x_w; a e_d x x_v] (d < 3) or [0; a e_(d-3) x x_w]."""
    cdef double x0 = a * x[0], x1 = a * x[1], x2 = a * x[2], x3 = a * x[3], x4 = a * x[4], x5 = a * x[5]
    if d == 0:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, -x2, x1, 0.0, -x5, x4
    elif d == 1:
        o[0], o[1], o[2], o[3], o[4], o[5] = x2, 0.0, -x0, x5, 0.0, -x3
    elif d == 2:
        o[0], o[1], o[2], o[3], o[4], o[5] = -x1, x0, 0.0, -x4, x3, 0.0
    elif d == 3:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, 0.0, 0.0, 0.0, -x2, x1
    elif d == 4:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, 0.0, 0.0, x2, 0.0, -x0
    else:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, 0.0, 0.0, -x1, x0, 0.0


cdef inline void axis_fcross(int d, double a, const double* f, double* o) noexcept nogil:
    """o = (a e_d) x* f for a force f = [n; f]: [a e_d x n; a e_d x f] (d < 3) or
    [a e_(d-3) x f; 0]."""
    cdef double n0 = a * f[0], n1 = a * f[1], n2 = a * f[2], f0 = a * f[3], f1 = a * f[4], f2 = a * f[5]
    if d == 0:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, -n2, n1, 0.0, -f2, f1
    elif d == 1:
        o[0], o[1], o[2], o[3], o[4], o[5] = n2, 0.0, -n0, f2, 0.0, -f0
    elif d == 2:
        o[0], o[1], o[2], o[3], o[4], o[5] = -n1, n0, 0.0, -f1, f0, 0.0
    elif d == 3:
        o[0], o[1], o[2], o[3], o[4], o[5] = 0.0, -f2, f1, 0.0, 0.0, 0.0
    elif d == 4:
        o[0], o[1], o[2], o[3], o[4], o[5] = f2, 0.0, -f0, 0.0, 0.0, 0.0
    else:
        o[0], o[1], o[2], o[3], o[4], o[5] = -f1, f0, 0.0, 0.0, 0.0, 0.0


cdef inline void add_axis(int d, double a, double* o) noexcept nogil:
    """o += a e_d."""
    if d == 0:
        o[0] += a
    elif d == 1:
        o[1] += a
    elif d == 2:
        o[2] += a
    elif d == 3:
        o[3] += a
    elif d == 4:
        o[4] += a
    else:
        o[5] += a


# ------------------------------------------------------------------ a link's inertia terms
cdef inline void inertia_times(const double* I, const double* x, double* o) noexcept nogil:
    """o = M_k x = [I_O w + h x v; m v - h x w] for x = [w; v] (000 eqs. 2a-2b)."""
    cdef double m = I[0], h0 = I[1], h1 = I[2], h2 = I[3]
    cdef double w0 = x[0], w1 = x[1], w2 = x[2], v0 = x[3], v1 = x[4], v2 = x[5]
    o[0] = I[4] * w0 + I[5] * w1 + I[6] * w2 + h1 * v2 - h2 * v1
    o[1] = I[5] * w0 + I[7] * w1 + I[8] * w2 + h2 * v0 - h0 * v2
    o[2] = I[6] * w0 + I[8] * w1 + I[9] * w2 + h0 * v1 - h1 * v0
    o[3] = m * v0 - h1 * w2 + h2 * w1
    o[4] = m * v1 - h2 * w0 + h0 * w2
    o[5] = m * v2 - h0 * w1 + h1 * w0


cdef inline void tangent_wrench(const double* I, const double* t, const double* h, const double* P,
                                const double* Q, double* D) noexcept nogil:
    """D = I P + C Q = I (P + Q x t) + Q x* h + t x* (I Q): the tangent of the link wrench F for
    the tangents P of a and Q of t, ``C u = I (u x t) + u x* h + t x* (I u)`` the link's
    Coriolis matrix."""
    cdef double x[6]
    cdef double y[6]
    mcross(Q, t, x)
    add6(P, x)  # P + Q x t
    inertia_times(I, x, D)
    fcross(Q, h, x)
    add6(x, D)  # + Q x* h
    inertia_times(I, Q, y)
    fcross(t, y, x)
    add6(x, D)  # + t x* (I Q)


cdef inline void coriolis_transpose_times(const double* I, const double* t, const double* h,
                                          const double* U, const double* Y, double* Z) noexcept nogil:
    """Z = C^T U = t x* Y - U x* h - I (t x U) for Y = I U (from ``<f, a x b> = -<a x* f, b>``)."""
    cdef double x[6]
    cdef double y[6]
    fcross(t, Y, Z)  # t x* (I U)
    fcross(U, h, x)
    axpy6(-1.0, x, Z)  # - U x* h
    mcross(t, U, x)
    inertia_times(I, x, y)
    axpy6(-1.0, y, Z)  # - I (t x U)


# ------------------------------------------------------------------ joint columns and rates
cdef inline void joint_axis(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv, int n,
                            double* S) noexcept nogil:
    """S_c of column n of joint k in the link's axes: P_k = sign e_d, or row n of P_k (the P
    region of the work array, written by the forward dynamics' geometry)."""
    cdef int d = dof_index(i)
    cdef int j
    if d >= 0:
        for j in range(6):
            S[j] = dof_sign(i) if j == d else 0.0
    else:
        copy6(work + p_row(L, nv, i[IDX_V] + n) * W, S)


cdef inline void joint_rates(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                             const double* v, const double* a, const double* tp, const double* ap,
                             double* t, double* ak, double* ta, double* aa) noexcept nogil:
    """t_k = t_p + S qd, a_k = a_p + S qdd + t_p x S qd (000 eqs. 1-2b, the spatial rate) in
    link k's frame from the parent's (tp, ap, moved to it); (ta, aa) the frame of a universal
    joint's node between its rotations, t_A = t_p + S_0 qd_0, a_A = a_p + S_0 qdd_0 +
    (t_p x S_0) qd_0, with the term ``(S_0 x S_1) qd_0 qd_1`` of a_k (else t_A, a_A = t_p, a_p)."""
    cdef Py_ssize_t iv = i[IDX_V]
    cdef double x[6]
    cdef double S[6]
    cdef double y[6]
    cdef int n, d = dof_index(i)
    cdef double c = dof_sign(i)
    copy6(ap, ak)
    copy6(tp, ta)
    copy6(ap, aa)
    if d >= 0:  # S = sign e_d
        add_axis(d, c * a[iv], ak)  # a_p + S qdd
        axis_cross(d, -c * v[iv], tp, y)
        add6(y, ak)  # + t_p x S qd = - (S qd) x t_p
        copy6(tp, t)
        add_axis(d, c * v[iv], t)  # t_k = t_p + S qd
        return
    zero6(x)
    for n in range(i[NV]):
        joint_axis(i, work, L, nv, n, S)
        axpy6(v[iv + n], S, x)  # S qd
        axpy6(a[iv + n], S, ak)  # + S qdd
    mcross(tp, x, y)
    add6(y, ak)  # + t_p x S qd
    copy6(tp, t)
    add6(x, t)  # t_k = t_p + S qd
    if joint_type(i) == UNIVERSAL:
        joint_axis(i, work, L, nv, 0, S)
        joint_axis(i, work, L, nv, 1, x)
        mcross(S, x, y)
        axpy6(v[iv] * v[iv + 1], y, ak)  # + (S_0 x S_1) qd_0 qd_1
        axpy6(v[iv], S, ta)  # t_A = t_p + S_0 qd_0
        mcross(tp, S, y)
        axpy6(a[iv], S, aa)
        axpy6(v[iv], y, aa)  # a_A = a_p + S_0 qdd_0 + (t_p x S_0) qd_0


cdef inline void terms_against(const double* S, const double* tl, const double* al, const double* tn,
                               double* alpha, double* beta, double* w) noexcept nogil:
    """The column terms against the frame (t_l, a_l), t_n the twist after the column."""
    cdef double x[6]
    mcross(S, tl, beta)  # beta_c = S_c x t_l
    mcross(S, al, alpha)
    mcross(beta, tl, x)
    axpy6(-1.0, x, alpha)  # alpha_c = S_c x a_l - beta_c x t_l
    copy6(tl, x)
    add6(tn, x)
    mcross(x, S, w)  # w_c = (t_l + t_n) x S_c


cdef inline void aligned_rate_terms(int d, double c, const double* tl, const double* al,
                                    double* alpha, double* beta) noexcept nogil:
    """alpha_c and beta_c of terms_against for the axis S = c e_d."""
    cdef double x[6]
    axis_cross(d, c, tl, beta)  # beta_c = S_c x t_l
    axis_cross(d, c, al, alpha)
    mcross(beta, tl, x)
    axpy6(-1.0, x, alpha)  # alpha_c = S_c x a_l - beta_c x t_l


cdef inline void aligned_terms(int d, double c, const double* tl, const double* al, const double* tn,
                               double* alpha, double* beta, double* w) noexcept nogil:
    """terms_against for the axis S = c e_d."""
    cdef double x[6]
    aligned_rate_terms(d, c, tl, al, alpha, beta)
    copy6(tl, x)
    add6(tn, x)
    axis_cross(d, -c, x, w)  # w_c = (t_l + t_n) x S_c = - S_c x (t_l + t_n)


cdef inline void column_terms(const int* i, int n, const double* S, const double* tp,
                              const double* ap, const double* tk, const double* ta, const double* aa,
                              double* alpha, double* beta, double* w) noexcept nogil:
    """(alpha, beta, w) of column n of joint k: the derivatives of the link twist (beta, w) and
    rate (alpha, w) in the column's tangent directions (dq, dqd), against the parent's frame
    (t_p, a_p) and before t_k, or for a universal joint against its node (second column) or
    before it (first column).  One call per case, so that every vector is a known array."""
    cdef bint universal = joint_type(i) == UNIVERSAL
    if dof_index(i) >= 0:
        aligned_terms(dof_index(i), dof_sign(i), tp, ap, tk, alpha, beta, w)
    elif universal and n == 1:
        terms_against(S, ta, aa, tk, alpha, beta, w)
    elif universal:
        terms_against(S, tp, ap, ta, alpha, beta, w)
    else:
        terms_against(S, tp, ap, tk, alpha, beta, w)


cdef inline Py_ssize_t module_parent(const int* ki, Py_ssize_t m) noexcept nogil:
    """The parent link of module m's first link: the last link of its parent module (000 eq. 7a:
    a module hangs from the last link of another, A^{i,beta} acts on it only), or -1 (the
    base).  The sweeps take the parents from the modules, as the tree's passes do, so that the
    table's PARENT column is never read (its cache line is not read by the checks either)."""
    cdef Py_ssize_t mp = ki[m * NI + MPARENT]
    return ki[mp * NI + MEND] - 1 if mp >= 0 else -1


cdef inline void module_start(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t p,
                              const double* Wp, int nvec, double* t, double* a, double* X,
                              double* Y) noexcept nogil:
    """The vectors a module starts from: the base at rest, gravity as its acceleration
    (t, a = 0, [0; -g]; X, Y = 0), or those its parent module's last link p left in its row of
    Wp (t, a, X and, for ``nvec`` = 4, Y)."""
    cdef const double* row
    if p < 0:
        zero6(t)
        zero6(a)
        a[3], a[4], a[5] = -kf[GRAV], -kf[GRAV + 1], -kf[GRAV + 2]
        zero6(X)
        if nvec == 4:
            zero6(Y)
        return
    row = Wp + 24 * p
    copy6(row, t)
    copy6(row + 6, a)
    copy6(row + 12, X)
    if nvec == 4:
        copy6(row + 18, Y)


cdef inline void module_accelerations(const int* ki, Py_ssize_t L, Py_ssize_t nv,
                                      const double* work, Py_ssize_t m, double* mu) noexcept nogil:
    """The forward vector mu of 000 Table 3 (step 2) a module starts from: zero at the base, else
    what its parent module's last link left in that module's vector row (as
    acceleration_forward_links, tree module)."""
    cdef Py_ssize_t mp = ki[m * NI + MPARENT]
    if mp < 0:
        zero6(mu)
    else:
        copy6(work + (module_row(L, nv, mp) + M_VEC) * W, mu)
