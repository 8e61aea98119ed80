# Configurations on the joint manifolds, joint by joint and for a whole model
# (numba's kernels/configuration.py before, second part): integrate q (+) v = q exp(v),
# difference q1 (-) q0 = log(q0^-1 q1), the coordinates' rate dq/dt, and dexp^-1 of the RKMK
# step.  q starts at index i of the configuration, v at index j of the velocity; results are
# normalised.  ``out`` may be ``q`` for integrate and the rate (every input of a joint is read
# before its outputs are written).


cdef void integrate_joint(int jt, const double* q, Py_ssize_t i, const double* v, Py_ssize_t j,
                          double* out) noexcept nogil:
    """out[i:i+nq] = q[i:i+nq] (+) v[j:j+nv] for one joint."""
    cdef double ca, sa, n, c, s, w0, w1, w2, a, b, x, y, z, w, nq, vx, vy, sw, cw, tx, ty
    cdef double t[3]
    cdef double d[3]
    cdef double e[4]
    cdef double r[4]
    cdef int m
    if jt == CONTINUOUS:  # SO(2) as (cos, sin)
        ca, sa = q[i], q[i + 1]
        n = sqrt(ca * ca + sa * sa)
        c, s = cos(v[j]), sin(v[j])
        out[i], out[i + 1] = (c * ca - s * sa) / n, (s * ca + c * sa) / n
    elif jt == SPHERICAL:  # q exp3(w)
        quat_exp(v[j], v[j + 1], v[j + 2], e)
        quat_mul(q[i], q[i + 1], q[i + 2], q[i + 3], e[0], e[1], e[2], e[3], r)
        n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
        for m in range(4):
            out[i + m] = r[m] / n
    elif jt == FREEFLYER:  # q exp6(v), v = [linear; angular]
        w0, w1, w2 = v[j + 3], v[j + 4], v[j + 5]
        V_coefficients(w0 * w0 + w1 * w1 + w2 * w2, &a, &b)
        apply_V(w0, w1, w2, a, b, v[j], v[j + 1], v[j + 2], t)  # V(w) v_linear
        x, y, z, w = q[i + 3], q[i + 4], q[i + 5], q[i + 6]
        nq = sqrt(x * x + y * y + z * z + w * w)
        x, y, z, w = x / nq, y / nq, z / nq, w / nq
        quat_rotate(x, y, z, w, t[0], t[1], t[2], d)  # p + R V(w) v_linear
        quat_exp(w0, w1, w2, e)
        quat_mul(x, y, z, w, e[0], e[1], e[2], e[3], r)
        n = hemisphere_norm(r, x, y, z, w)
        for m in range(3):
            out[i + m] = q[i + m] + d[m]
        for m in range(4):
            out[i + 3 + m] = r[m] / n
    elif jt == PLANAR:  # SE(2): q exp(v), v = [vx, vy, wz]
        ca, sa = q[i + 2], q[i + 3]
        n = sqrt(ca * ca + sa * sa)
        ca, sa = ca / n, sa / n
        vx, vy, w = v[j], v[j + 1], v[j + 2]
        if fabs(w) < 1e-4:
            sw, cw = 1.0 - w * w / 6.0, w / 2.0 - w * w * w / 24.0  # sin w / w, (1 - cos w) / w
        else:
            sw, cw = sin(w) / w, (1.0 - cos(w)) / w
        tx, ty = sw * vx - cw * vy, cw * vx + sw * vy
        c, s = cos(w), sin(w)
        out[i] = q[i] + ca * tx - sa * ty
        out[i + 1] = q[i + 1] + sa * tx + ca * ty
        out[i + 2], out[i + 3] = c * ca - s * sa, s * ca + c * sa
    else:  # vector spaces
        for m in range(vector_nv(jt)):
            out[i + m] = q[i + m] + v[j + m]


cdef void difference_joint(int jt, const double* q0, const double* q1, Py_ssize_t i, double* out,
                           Py_ssize_t j) noexcept nogil:
    """out[j:j+nv] = q1 (-) q0 = log(q0^-1 q1) for one joint (Pinocchio's ``difference``)."""
    cdef double c0, s0, c1, s1, na, nb, n0, n1, w, dx, dy, tx, ty, sw, cw, det, cv
    cdef double a[4]
    cdef double b[4]
    cdef double r[4]
    cdef double lw[3]
    cdef double d[3]
    cdef double u[3]
    cdef int o, m
    if jt == CONTINUOUS:
        c0, s0, c1, s1 = q0[i], q0[i + 1], q1[i], q1[i + 1]
        out[j] = atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    elif jt == SPHERICAL or jt == FREEFLYER:
        o = 0 if jt == SPHERICAL else 3
        for m in range(4):
            a[m] = q0[i + o + m]
            b[m] = q1[i + o + m]
        na = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
        nb = sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3])
        quat_mul(-a[0] / na, -a[1] / na, -a[2] / na, a[3] / na,
                 b[0] / nb, b[1] / nb, b[2] / nb, b[3] / nb, r)  # q0^-1 q1
        quat_log(r[0], r[1], r[2], r[3], lw)
        if jt == SPHERICAL:
            out[j], out[j + 1], out[j + 2] = lw[0], lw[1], lw[2]
        else:  # log6: linear = V(w)^-1 R0^T (p1 - p0)
            quat_rotate(-a[0] / na, -a[1] / na, -a[2] / na, a[3] / na,
                        q1[i] - q0[i], q1[i + 1] - q0[i + 1], q1[i + 2] - q0[i + 2], d)
            cv = Vinv_coefficient(lw[0] * lw[0] + lw[1] * lw[1] + lw[2] * lw[2])
            apply_V(lw[0], lw[1], lw[2], -0.5, cv, d[0], d[1], d[2], u)
            out[j], out[j + 1], out[j + 2] = u[0], u[1], u[2]
            out[j + 3], out[j + 4], out[j + 5] = lw[0], lw[1], lw[2]
    elif jt == PLANAR:
        n0 = sqrt(q0[i + 2] * q0[i + 2] + q0[i + 3] * q0[i + 3])
        n1 = sqrt(q1[i + 2] * q1[i + 2] + q1[i + 3] * q1[i + 3])
        c0, s0, c1, s1 = q0[i + 2] / n0, q0[i + 3] / n0, q1[i + 2] / n1, q1[i + 3] / n1
        w = atan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        dx, dy = q1[i] - q0[i], q1[i + 1] - q0[i + 1]
        tx, ty = c0 * dx + s0 * dy, -s0 * dx + c0 * dy  # R0^T (p1 - p0)
        if fabs(w) < 1e-4:
            sw, cw = 1.0 - w * w / 6.0, w / 2.0 - w * w * w / 24.0
        else:
            sw, cw = sin(w) / w, (1.0 - cos(w)) / w
        det = sw * sw + cw * cw  # V = [[sw, -cw], [cw, sw]]
        out[j] = (sw * tx + cw * ty) / det
        out[j + 1] = (-cw * tx + sw * ty) / det
        out[j + 2] = w
    else:
        for m in range(vector_nv(jt)):
            out[j + m] = q1[i + m] - q0[i + m]


cdef void rate_joint(int jt, const double* q, Py_ssize_t i, const double* v, Py_ssize_t j,
                     double* out) noexcept nogil:
    """out[i:i+nq] = dq/dt for the velocity v (the coordinates' time derivative)."""
    cdef double x, y, z, w, n2, c, s, a, b
    cdef double r[4]
    cdef double d[3]
    cdef int o, m
    if jt == CONTINUOUS:
        a, b = -q[i + 1] * v[j], q[i] * v[j]
        out[i], out[i + 1] = a, b
    elif jt == SPHERICAL or jt == FREEFLYER:
        o = 0 if jt == SPHERICAL else 3
        x, y, z, w = q[i + o], q[i + o + 1], q[i + o + 2], q[i + o + 3]
        quat_mul(x, y, z, w, 0.5 * v[j + o], 0.5 * v[j + o + 1], 0.5 * v[j + o + 2], 0.0, r)
        if jt == FREEFLYER:  # p' = R v_linear
            n2 = x * x + y * y + z * z + w * w
            quat_rotate(x, y, z, w, v[j] / n2, v[j + 1] / n2, v[j + 2] / n2, d)
            out[i], out[i + 1], out[i + 2] = d[0], d[1], d[2]
        for m in range(4):
            out[i + o + m] = r[m]
    elif jt == PLANAR:
        c, s = q[i + 2], q[i + 3]
        n2 = c * c + s * s
        a = (c * v[j] - s * v[j + 1]) / n2
        b = (s * v[j] + c * v[j + 1]) / n2
        out[i], out[i + 1] = a, b
        out[i + 2], out[i + 3] = -s * v[j + 2], c * v[j + 2]
    else:
        for m in range(vector_nv(jt)):
            out[i + m] = v[j + m]


cdef void dexpinv_joint(int jt, const double* xi, const double* v, Py_ssize_t j,
                        double* out) noexcept nogil:
    """out[j:j+nv] = v + 1/2 [xi, v] + 1/12 [xi, [xi, v]] for one joint (0 brackets on the
    commutative joints)."""
    cdef double a[6]
    cdef double b[6]
    cdef double u[6]
    cdef int m
    if jt == SPHERICAL:  # so(3): [xi, v] = xi x v
        cross3(xi[j], xi[j + 1], xi[j + 2], v[j], v[j + 1], v[j + 2], a)
        cross3(xi[j], xi[j + 1], xi[j + 2], a[0], a[1], a[2], b)
        for m in range(3):
            u[m] = v[j + m] + 0.5 * a[m] + b[m] / 12.0
        for m in range(3):
            out[j + m] = u[m]
    elif jt == FREEFLYER:  # se(3), xi = (p, f) = (linear, angular)
        ad6(xi[j], xi[j + 1], xi[j + 2], xi[j + 3], xi[j + 4], xi[j + 5],
            v[j], v[j + 1], v[j + 2], v[j + 3], v[j + 4], v[j + 5], a)
        ad6(xi[j], xi[j + 1], xi[j + 2], xi[j + 3], xi[j + 4], xi[j + 5],
            a[0], a[1], a[2], a[3], a[4], a[5], b)
        for m in range(6):
            u[m] = v[j + m] + 0.5 * a[m] + b[m] / 12.0
        for m in range(6):
            out[j + m] = u[m]
    elif jt == PLANAR:  # se(2) inside se(3)
        ad6(xi[j], xi[j + 1], 0.0, 0.0, 0.0, xi[j + 2], v[j], v[j + 1], 0.0, 0.0, 0.0, v[j + 2], a)
        ad6(xi[j], xi[j + 1], 0.0, 0.0, 0.0, xi[j + 2], a[0], a[1], a[2], a[3], a[4], a[5], b)
        u[0] = v[j] + 0.5 * a[0] + b[0] / 12.0
        u[1] = v[j + 1] + 0.5 * a[1] + b[1] / 12.0
        u[2] = v[j + 2] + 0.5 * a[5] + b[5] / 12.0
        out[j], out[j + 1], out[j + 2] = u[0], u[1], u[2]
    else:
        for m in range(vector_nv(jt)):
            out[j + m] = v[j + m]


# ----------------------------------------------------------------- whole configurations
cdef void model_integrate(const int* ki, Py_ssize_t L, const double* q, const double* v,
                          double* out) noexcept nogil:
    """out = q (+) v, joint by joint (out may be q)."""
    cdef Py_ssize_t k
    cdef const int* i
    for k in range(L):
        i = ki + k * NI
        integrate_joint(joint_type(i), q, i[IDX_Q], v, i[IDX_V], out)


cdef void model_difference(const int* ki, Py_ssize_t L, const double* q0, const double* q1,
                           double* out) noexcept nogil:
    """out = q1 (-) q0 (tangent at q0)."""
    cdef Py_ssize_t k
    cdef const int* i
    for k in range(L):
        i = ki + k * NI
        difference_joint(joint_type(i), q0, q1, i[IDX_Q], out, i[IDX_V])


cdef void model_configuration_rate(const int* ki, Py_ssize_t L, const double* q, const double* v,
                                   double* out) noexcept nogil:
    """out = dq/dt of the coordinates for the velocity v."""
    cdef Py_ssize_t k
    cdef const int* i
    for k in range(L):
        i = ki + k * NI
        rate_joint(joint_type(i), q, i[IDX_Q], v, i[IDX_V], out)


cdef void model_dexpinv(const int* ki, Py_ssize_t L, const double* xi, const double* v,
                        double* out) noexcept nogil:
    """out = dexp_xi^-1 v (RKMK, truncated after the second bracket)."""
    cdef Py_ssize_t k
    cdef const int* i
    for k in range(L):
        i = ki + k * NI
        dexpinv_joint(joint_type(i), xi, v, i[IDX_V], out)
