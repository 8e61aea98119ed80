# SO(3), SE(3) and SE(2) on scalars: quaternions (x, y, z, w), exp/log, V(w) and its inverse
# (numba's kernels/configuration.py before, first part); the cross product is vectors.pxd's.
#
# Small vectors are C arrays written through an output pointer after every input is read (an
# output may alias an input); gcc keeps them in registers once inlined.


cdef inline void quat_mul(double a0, double a1, double a2, double a3, double b0, double b1,
                          double b2, double b3, double* o) noexcept nogil:
    """Hamilton product a b of quaternions (x, y, z, w)."""
    o[0] = a3 * b0 + a0 * b3 + a1 * b2 - a2 * b1
    o[1] = a3 * b1 - a0 * b2 + a1 * b3 + a2 * b0
    o[2] = a3 * b2 + a0 * b1 - a1 * b0 + a2 * b3
    o[3] = a3 * b3 - a0 * b0 - a1 * b1 - a2 * b2


cdef inline void quat_exp(double w0, double w1, double w2, double* o) noexcept nogil:
    """exp3 of the rotation vector w as a unit quaternion (x, y, z, w)."""
    cdef double t2 = w0 * w0 + w1 * w1 + w2 * w2
    cdef double t = sqrt(t2)
    cdef double s, c
    if t < 1e-4:  # sin(t/2)/t and cos(t/2), Taylor
        s = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0
        c = 1.0 - t2 / 8.0 + t2 * t2 / 384.0
    else:
        s = sin(0.5 * t) / t
        c = cos(0.5 * t)
    o[0] = s * w0
    o[1] = s * w1
    o[2] = s * w2
    o[3] = c


cdef inline void quat_log(double x, double y, double z, double w, double* o) noexcept nogil:
    """Rotation vector of the unit quaternion (x, y, z, w), angle in [0, pi]."""
    cdef double n, f
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    n = sqrt(x * x + y * y + z * z)
    if n < 1e-8:  # t / sin(t/2) ~ 2 (1 + t^2 / 24)
        f = 2.0 / w * (1.0 - n * n / (3.0 * w * w))
    else:
        f = 2.0 * atan2(n, w) / n
    o[0] = f * x
    o[1] = f * y
    o[2] = f * z


cdef inline void quat_rotate(double x, double y, double z, double w, double v0, double v1,
                             double v2, double* o) noexcept nogil:
    """R(q) v for a unit quaternion."""
    cdef double t0 = 2.0 * (y * v2 - z * v1)
    cdef double t1 = 2.0 * (z * v0 - x * v2)
    cdef double t2 = 2.0 * (x * v1 - y * v0)
    o[0] = v0 + w * t0 + y * t2 - z * t1
    o[1] = v1 + w * t1 + z * t0 - x * t2
    o[2] = v2 + w * t2 + x * t1 - y * t0


cdef inline void V_coefficients(double t2, double* a, double* b) noexcept nogil:
    """(a, b) with V(w) = 1 + a [w]x + b [w]x^2: a = (1 - cos t)/t^2, b = (t - sin t)/t^3."""
    cdef double t
    if t2 < 1e-8:
        a[0] = 0.5 - t2 / 24.0 + t2 * t2 / 720.0
        b[0] = 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
        return
    t = sqrt(t2)
    a[0] = (1.0 - cos(t)) / t2
    b[0] = (t - sin(t)) / (t2 * t)


cdef inline double Vinv_coefficient(double t2) noexcept nogil:
    """c with V(w)^-1 = 1 - 1/2 [w]x + c [w]x^2: c = (1 - t sin t / (2 (1 - cos t))) / t^2."""
    cdef double t
    if t2 < 1e-6:
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    t = sqrt(t2)
    return (1.0 - t * sin(t) / (2.0 * (1.0 - cos(t)))) / t2


cdef inline void apply_V(double w0, double w1, double w2, double a, double b, double u0,
                         double u1, double u2, double* o) noexcept nogil:
    """o = (1 + a [w]x + b [w]x^2) u."""
    cdef double c[3]
    cdef double d[3]
    cross3(w0, w1, w2, u0, u1, u2, c)
    cross3(w0, w1, w2, c[0], c[1], c[2], d)
    o[0] = u0 + a * c[0] + b * d[0]
    o[1] = u1 + a * c[1] + b * d[1]
    o[2] = u2 + a * c[2] + b * d[2]


cdef inline double hemisphere_norm(const double* r, double x, double y, double z,
                                   double w) noexcept nogil:
    """|r|, negated when r points away from (x, y, z, w): Pinocchio keeps the quaternion of an
    integrated free-flyer in the hemisphere of the one it started from (not that of a
    spherical joint)."""
    cdef double n = sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    return -n if r[0] * x + r[1] * y + r[2] * z + r[3] * w < 0.0 else n


cdef inline void ad6(double p0, double p1, double p2, double f0, double f1, double f2, double u0,
                     double u1, double u2, double w0, double w1, double w2,
                     double* o) noexcept nogil:
    """o = ad_xi eta for xi = (p, f) (linear, angular) and eta = (u, w) in se(3)."""
    cdef double a[3]
    cdef double b[3]
    cdef double c[3]
    cross3(f0, f1, f2, u0, u1, u2, a)
    cross3(p0, p1, p2, w0, w1, w2, b)
    cross3(f0, f1, f2, w0, w1, w2, c)
    o[0] = a[0] + b[0]
    o[1] = a[1] + b[1]
    o[2] = a[2] + b[2]
    o[3] = c[0]
    o[4] = c[1]
    o[5] = c[2]


cdef inline int vector_nv(int jt) noexcept nogil:
    """nv of a vector-space joint (revolute, prismatic: 1; universal: 2; translation: 3)."""
    return 1 if jt <= 2 else (2 if jt == UNIVERSAL else 3)
