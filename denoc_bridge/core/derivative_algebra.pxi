# Spatial algebra of the recursive derivatives (derivative_passes.pxi): link inertias about the
# base origin in their ten numbers, the matrices C in their twelve, and their actions on
# 6-vectors.  Spatial vectors are [angular; linear] about the base origin in base axes (the
# papers' order); a link's inertia is that of 000 eqs. 2a-2b (m, h = m c and I_O of the model
# table) moved to the base origin:
#
#     I = [[A, [h']x], [-[h']x, m 1]],  h' = m p + R h,                                     (I10)
#     A = R I_O R^T + m (|p|^2 1 - p p^T) + 2 (p . R h) 1 - p (R h)^T - (R h) p^T
#
# for the link placement (R, p), kept as I10 = [A (xx xy xz yy yz zz), h' (3), m].  The
# variation of the link wrench I tdot + t x* (I t) with the twist t along u is
#
#     C u = I (u x t) + u x* (I t) + t x* (I u)                                              (C)
#
# whose matrix, with P = [w]x A, h = I t = [hn; hf] and t = [w; v], is
#
#     C = [[C11, 0], [[c21]x, 0]],                                                        (C12)
#     C11 = P + P^T - v h'^T - h' v^T + 2 (v . h') 1 - [hn]x,  c21 = -2 hf
#
# (the variation t x* I - I t x plus the force cross matrix of h; its right column is zero),
# kept as C12 = [C11 (row major), c21].  Sums of I10 and of C12 over a subtree are the
# composites Ic and Cc.  Motion and force cross products of 6-vectors:
#
#     a x b  = [aw x bw; aw x bv + av x bw],   a x* f = [aw x fn + av x ff; aw x ff]        (X)


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    """a . b of two 6-vectors."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


cdef inline double dot3(const double* a, const double* b) noexcept nogil:
    """a . b of two 3-vectors (the angular parts)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


cdef inline void mcross(const double* a, const double* b, double* o) noexcept nogil:
    """o = a x b for motions (X); o may alias neither a nor b."""
    o[0] = a[1] * b[2] - a[2] * b[1]
    o[1] = a[2] * b[0] - a[0] * b[2]
    o[2] = a[0] * b[1] - a[1] * b[0]
    o[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    o[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    o[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


cdef inline void fcross(const double* a, const double* f, double* o) noexcept nogil:
    """o = a x* f for a motion a and a force f (X); o may alias neither."""
    o[0] = a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4]
    o[1] = a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5]
    o[2] = a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3]
    o[3] = a[1] * f[5] - a[2] * f[4]
    o[4] = a[2] * f[3] - a[0] * f[5]
    o[5] = a[0] * f[4] - a[1] * f[3]


cdef inline void inertia10(const double* f, const double* R, const double* p, double* I10) noexcept nogil:
    """I10 of the link of table row f at the placement (R row major, link to base; p) (I10):
    B = R I_O, A = B R^T + d 1 - m p p^T - p g^T - g p^T with g = R h, d = m |p|^2 + 2 p . g."""
    cdef double m = f[MASS], h0 = f[H], h1 = f[H + 1], h2 = f[H + 2]
    cdef double i0 = f[IO], i1 = f[IO + 1], i2 = f[IO + 2], i3 = f[IO + 3], i4 = f[IO + 4], i5 = f[IO + 5]
    cdef double b00 = R[0] * i0 + R[1] * i1 + R[2] * i2
    cdef double b01 = R[0] * i1 + R[1] * i3 + R[2] * i4
    cdef double b02 = R[0] * i2 + R[1] * i4 + R[2] * i5
    cdef double b10 = R[3] * i0 + R[4] * i1 + R[5] * i2
    cdef double b11 = R[3] * i1 + R[4] * i3 + R[5] * i4
    cdef double b12 = R[3] * i2 + R[4] * i4 + R[5] * i5
    cdef double b20 = R[6] * i0 + R[7] * i1 + R[8] * i2
    cdef double b21 = R[6] * i1 + R[7] * i3 + R[8] * i4
    cdef double b22 = R[6] * i2 + R[7] * i4 + R[8] * i5
    cdef double g0 = R[0] * h0 + R[1] * h1 + R[2] * h2
    cdef double g1 = R[3] * h0 + R[4] * h1 + R[5] * h2
    cdef double g2 = R[6] * h0 + R[7] * h1 + R[8] * h2
    cdef double p0 = p[0], p1 = p[1], p2 = p[2]
    cdef double d = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * g0 + p1 * g1 + p2 * g2)
    I10[0] = b00 * R[0] + b01 * R[1] + b02 * R[2] + d - m * p0 * p0 - 2.0 * p0 * g0
    I10[1] = b00 * R[3] + b01 * R[4] + b02 * R[5] - m * p0 * p1 - p0 * g1 - g0 * p1
    I10[2] = b00 * R[6] + b01 * R[7] + b02 * R[8] - m * p0 * p2 - p0 * g2 - g0 * p2
    I10[3] = b10 * R[3] + b11 * R[4] + b12 * R[5] + d - m * p1 * p1 - 2.0 * p1 * g1
    I10[4] = b10 * R[6] + b11 * R[7] + b12 * R[8] - m * p1 * p2 - p1 * g2 - g1 * p2
    I10[5] = b20 * R[6] + b21 * R[7] + b22 * R[8] + d - m * p2 * p2 - 2.0 * p2 * g2
    I10[6] = m * p0 + g0
    I10[7] = m * p1 + g1
    I10[8] = m * p2 + g2
    I10[9] = m


cdef inline void iact(const double* I10, const double* x, double* o) noexcept nogil:
    """o = I x for the ten numbers I10: [A xw + h' x xv; m xv - h' x xw]; o may not alias x."""
    cdef double h0 = I10[6], h1 = I10[7], h2 = I10[8], m = I10[9]
    o[0] = I10[0] * x[0] + I10[1] * x[1] + I10[2] * x[2] + h1 * x[5] - h2 * x[4]
    o[1] = I10[1] * x[0] + I10[3] * x[1] + I10[4] * x[2] + h2 * x[3] - h0 * x[5]
    o[2] = I10[2] * x[0] + I10[4] * x[1] + I10[5] * x[2] + h0 * x[4] - h1 * x[3]
    o[3] = m * x[3] - h1 * x[2] + h2 * x[1]
    o[4] = m * x[4] - h2 * x[0] + h0 * x[2]
    o[5] = m * x[5] - h0 * x[1] + h1 * x[0]


cdef inline void coriolis12(const double* I10, const double* t, const double* h, double* C) noexcept nogil:
    """C12 (C12) from I10, the twist t = [w; v] and h = I t."""
    cdef double w0 = t[0], w1 = t[1], w2 = t[2], v0 = t[3], v1 = t[4], v2 = t[5]
    cdef double a00 = I10[0], a01 = I10[1], a02 = I10[2], a11 = I10[3], a12 = I10[4], a22 = I10[5]
    cdef double g0 = I10[6], g1 = I10[7], g2 = I10[8]
    cdef double p00 = w1 * a02 - w2 * a01  # P = [w]x A
    cdef double p01 = w1 * a12 - w2 * a11
    cdef double p02 = w1 * a22 - w2 * a12
    cdef double p10 = w2 * a00 - w0 * a02
    cdef double p11 = w2 * a01 - w0 * a12
    cdef double p12 = w2 * a02 - w0 * a22
    cdef double p20 = w0 * a01 - w1 * a00
    cdef double p21 = w0 * a11 - w1 * a01
    cdef double p22 = w0 * a12 - w1 * a02
    cdef double d = 2.0 * (v0 * g0 + v1 * g1 + v2 * g2)
    C[0] = 2.0 * p00 - 2.0 * v0 * g0 + d
    C[1] = p01 + p10 - v0 * g1 - g0 * v1 + h[2]
    C[2] = p02 + p20 - v0 * g2 - g0 * v2 - h[1]
    C[3] = p10 + p01 - v1 * g0 - g1 * v0 - h[2]
    C[4] = 2.0 * p11 - 2.0 * v1 * g1 + d
    C[5] = p12 + p21 - v1 * g2 - g1 * v2 + h[0]
    C[6] = p20 + p02 - v2 * g0 - g2 * v0 + h[1]
    C[7] = p21 + p12 - v2 * g1 - g2 * v1 - h[0]
    C[8] = 2.0 * p22 - 2.0 * v2 * g2 + d
    C[9] = -2.0 * h[3]
    C[10] = -2.0 * h[4]
    C[11] = -2.0 * h[5]


cdef inline void cact(const double* C, const double* x, double* o) noexcept nogil:
    """o = C [xw; 0] for the twelve numbers C12 (only x's angular part acts); o may not alias x."""
    o[0] = C[0] * x[0] + C[1] * x[1] + C[2] * x[2]
    o[1] = C[3] * x[0] + C[4] * x[1] + C[5] * x[2]
    o[2] = C[6] * x[0] + C[7] * x[1] + C[8] * x[2]
    o[3] = C[10] * x[2] - C[11] * x[1]
    o[4] = C[11] * x[0] - C[9] * x[2]
    o[5] = C[9] * x[1] - C[10] * x[0]


cdef inline void cact_transposed(const double* C, const double* s, double* z) noexcept nogil:
    """z = (C^T s)'s angular part for C12 (its linear part is zero):
    C11^T sw + sv x c21."""
    z[0] = C[0] * s[0] + C[3] * s[1] + C[6] * s[2] + s[4] * C[11] - s[5] * C[10]
    z[1] = C[1] * s[0] + C[4] * s[1] + C[7] * s[2] + s[5] * C[9] - s[3] * C[11]
    z[2] = C[2] * s[0] + C[5] * s[1] + C[8] * s[2] + s[3] * C[10] - s[4] * C[9]
