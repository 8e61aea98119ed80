# Scalar spatial algebra for the recursions (numba's kernels/spatial6.py and spatial_ops.py before,
# deleted).
#
# Vectors are small C arrays (3 or 6 doubles) written through an output pointer after every
# input is read, so an output may alias an input; gcc keeps them in registers once inlined.
# A rotation E_k is its code, (cos, sin) and, for the general code, e (9 doubles, row major);
# a symmetric 6x6 mass M = [[J, H], [H^T, Q]] is 21 doubles: J (xx, xy, xz, yy, yz, zz),
# H (row major), Q (like J).  Convention of denoc_bridge.spatial: A_{k,b} = [[E, 0], [-E rx, E]]
# with E parent to child coordinates; rotation codes 0/1/2: E = R^T with R the rotation about
# x/y/z by (c, s), 3: identity, 4: general.  The cross product cross3 is vectors.pxd's (shared
# with the configuration module).


cdef inline void cross_wr(int rc, double w0, double w1, double w2, double r0, double r1,
                          double r2, double* o) noexcept nogil:
    """w x r for an offset r with the zero pattern rc (R_*): products with zeros not formed."""
    if rc == R_ZERO:
        o[0] = 0.0
        o[1] = 0.0
        o[2] = 0.0
    elif rc == R_X:
        o[0] = 0.0
        o[1] = w2 * r0
        o[2] = -w1 * r0
    elif rc == R_Y:
        o[0] = -w2 * r1
        o[1] = 0.0
        o[2] = w0 * r1
    elif rc == R_Z:
        o[0] = w1 * r2
        o[1] = -w0 * r2
        o[2] = 0.0
    else:
        cross3(w0, w1, w2, r0, r1, r2, o)


cdef inline void rot3(int code, double c, double s, const double* e, double x0, double x1,
                      double x2, double* o) noexcept nogil:
    """E x (parent to child coordinates)."""
    if code == ROT_X:
        o[0] = x0
        o[1] = c * x1 + s * x2
        o[2] = c * x2 - s * x1
    elif code == ROT_Y:
        o[0] = c * x0 - s * x2
        o[1] = x1
        o[2] = s * x0 + c * x2
    elif code == ROT_Z:
        o[0] = c * x0 + s * x1
        o[1] = c * x1 - s * x0
        o[2] = x2
    elif code == ROT_IDENTITY:
        o[0] = x0
        o[1] = x1
        o[2] = x2
    else:
        o[0] = e[0] * x0 + e[1] * x1 + e[2] * x2
        o[1] = e[3] * x0 + e[4] * x1 + e[5] * x2
        o[2] = e[6] * x0 + e[7] * x1 + e[8] * x2


cdef inline void rot3t(int code, double c, double s, const double* e, double x0, double x1,
                       double x2, double* o) noexcept nogil:
    """E^T x (child to parent coordinates)."""
    if code == ROT_X:
        o[0] = x0
        o[1] = c * x1 - s * x2
        o[2] = c * x2 + s * x1
    elif code == ROT_Y:
        o[0] = c * x0 + s * x2
        o[1] = x1
        o[2] = c * x2 - s * x0
    elif code == ROT_Z:
        o[0] = c * x0 - s * x1
        o[1] = c * x1 + s * x0
        o[2] = x2
    elif code == ROT_IDENTITY:
        o[0] = x0
        o[1] = x1
        o[2] = x2
    else:
        o[0] = e[0] * x0 + e[3] * x1 + e[6] * x2
        o[1] = e[1] * x0 + e[4] * x1 + e[7] * x2
        o[2] = e[2] * x0 + e[5] * x1 + e[8] * x2


cdef inline void apply_A(int code, double c, double s, const double* e, int rc, const double* r,
                         const double* x, double* y) noexcept nogil:
    """y = A_{k,b} x = [E x_w; E (x_v + x_w x r)]  (000 eq. 7b)."""
    cdef double u[3]
    cdef double w[3]
    cdef double x3 = x[3], x4 = x[4], x5 = x[5]
    cross_wr(rc, x[0], x[1], x[2], r[0], r[1], r[2], u)
    rot3(code, c, s, e, x[0], x[1], x[2], w)
    rot3(code, c, s, e, x3 + u[0], x4 + u[1], x5 + u[2], y + 3)
    y[0] = w[0]
    y[1] = w[1]
    y[2] = w[2]


cdef inline void apply_At(int code, double c, double s, const double* e, int rc, const double* r,
                          const double* x, double* y) noexcept nogil:
    """y = A_{k,b}^T x = [E^T x_n + r x (E^T x_f); E^T x_f]  (r x f = -(f x r))."""
    cdef double f[3]
    cdef double n[3]
    cdef double u[3]
    rot3t(code, c, s, e, x[3], x[4], x[5], f)
    rot3t(code, c, s, e, x[0], x[1], x[2], n)
    cross_wr(rc, f[0], f[1], f[2], r[0], r[1], r[2], u)
    y[0] = n[0] - u[0]
    y[1] = n[1] - u[1]
    y[2] = n[2] - u[2]
    y[3] = f[0]
    y[4] = f[1]
    y[5] = f[2]


# ------------------------------------------------------------------ symmetric 6x6 masses
cdef inline int sym_index(int a, int b) noexcept nogil:
    """Position of entry (a, b) of a symmetric 6x6 mass in its 21 doubles."""
    cdef int t
    if a > b:
        t = a
        a = b
        b = t
    if b < 3:
        return a * (5 - a) // 2 + b
    if a < 3:
        return 6 + 3 * a + (b - 3)
    a -= 3
    b -= 3
    return 15 + a * (5 - a) // 2 + b


# Cyclic changes of coordinates (x, y, z) -> (y, z, x) ("1") and (z, x, y) ("2"), so that a
# rotation about y or z, or a shift along y or z, is the formula for the first axis: the
# formulas read and write the mass through an index map ``ix`` (21 positions: J, H, Q), the
# identity MASS_ID or the maps MASS_P1 and MASS_P2 (spatial6.py's _mass_to1 / _mass_to2, whose
# inverses write the result back to the same positions).  Inlined, the maps are constants: no
# numbers move.
cdef extern from *:
    """
    static const int DB_MASS_ID[21] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                       17, 18, 19, 20};
    static const int DB_MASS_P1[21] = {3, 4, 1, 5, 2, 0, 10, 11, 9, 13, 14, 12, 7, 8, 6, 18, 19,
                                       16, 20, 17, 15};
    static const int DB_MASS_P2[21] = {5, 2, 4, 0, 1, 3, 14, 12, 13, 8, 6, 7, 11, 9, 10, 20, 17,
                                       19, 15, 16, 18};
    """
    const int* MASS_ID "DB_MASS_ID"
    const int* MASS_P1 "DB_MASS_P1"
    const int* MASS_P2 "DB_MASS_P2"


cdef inline void rotx_sym(double c, double s, double* M, const int* ix) noexcept nogil:
    """R X R^T for R the rotation about the first axis by (c, s), X symmetric (6 positions)."""
    cdef double x01 = M[ix[1]], x02 = M[ix[2]], x11 = M[ix[3]], x12 = M[ix[4]], x22 = M[ix[5]]
    cdef double cc = c * c, ss = s * s, cs = c * s
    M[ix[1]] = c * x01 - s * x02
    M[ix[2]] = s * x01 + c * x02
    M[ix[3]] = cc * x11 - 2.0 * cs * x12 + ss * x22
    M[ix[4]] = cs * (x11 - x22) + (cc - ss) * x12
    M[ix[5]] = ss * x11 + 2.0 * cs * x12 + cc * x22


cdef inline void rotx_gen(double c, double s, double* M, const int* ix) noexcept nogil:
    """R H R^T for R the rotation about the first axis by (c, s), H general (9 positions, row
    major)."""
    cdef double h01 = M[ix[1]], h02 = M[ix[2]]
    cdef double h10 = M[ix[3]], h11 = M[ix[4]], h12 = M[ix[5]]
    cdef double h20 = M[ix[6]], h21 = M[ix[7]], h22 = M[ix[8]]
    cdef double a10 = c * h10 - s * h20, a11 = c * h11 - s * h21, a12 = c * h12 - s * h22
    cdef double a20 = s * h10 + c * h20, a21 = s * h11 + c * h21, a22 = s * h12 + c * h22
    M[ix[1]] = c * h01 - s * h02  # rows: R H, then columns: (R H) R^T
    M[ix[2]] = s * h01 + c * h02
    M[ix[3]] = a10
    M[ix[4]] = c * a11 - s * a12
    M[ix[5]] = s * a11 + c * a12
    M[ix[6]] = a20
    M[ix[7]] = c * a21 - s * a22
    M[ix[8]] = s * a21 + c * a22


cdef inline void rotx_mass(double c, double s, double* M, const int* ix) noexcept nogil:
    """blockdiag(R) M blockdiag(R^T) for R the rotation about the first axis of the map ix."""
    rotx_sym(c, s, M, ix)
    rotx_gen(c, s, M, ix + 6)
    rotx_sym(c, s, M, ix + 15)


cdef inline void congruence_gen(const double* e, double* h) noexcept nogil:
    """E^T H E for a general 3x3 H (e, h row major)."""
    cdef double b00 = h[0] * e[0] + h[1] * e[3] + h[2] * e[6]  # B = H E
    cdef double b01 = h[0] * e[1] + h[1] * e[4] + h[2] * e[7]
    cdef double b02 = h[0] * e[2] + h[1] * e[5] + h[2] * e[8]
    cdef double b10 = h[3] * e[0] + h[4] * e[3] + h[5] * e[6]
    cdef double b11 = h[3] * e[1] + h[4] * e[4] + h[5] * e[7]
    cdef double b12 = h[3] * e[2] + h[4] * e[5] + h[5] * e[8]
    cdef double b20 = h[6] * e[0] + h[7] * e[3] + h[8] * e[6]
    cdef double b21 = h[6] * e[1] + h[7] * e[4] + h[8] * e[7]
    cdef double b22 = h[6] * e[2] + h[7] * e[5] + h[8] * e[8]
    h[0] = e[0] * b00 + e[3] * b10 + e[6] * b20
    h[1] = e[0] * b01 + e[3] * b11 + e[6] * b21
    h[2] = e[0] * b02 + e[3] * b12 + e[6] * b22
    h[3] = e[1] * b00 + e[4] * b10 + e[7] * b20
    h[4] = e[1] * b01 + e[4] * b11 + e[7] * b21
    h[5] = e[1] * b02 + e[4] * b12 + e[7] * b22
    h[6] = e[2] * b00 + e[5] * b10 + e[8] * b20
    h[7] = e[2] * b01 + e[5] * b11 + e[8] * b21
    h[8] = e[2] * b02 + e[5] * b12 + e[8] * b22


cdef inline void congruence_sym(const double* e, double* x) noexcept nogil:
    """E^T X E for a symmetric X (6 doubles): B = X E, then the six entries m <= n of E^T B
    (congruence_gen's products for them, the three below the diagonal not formed)."""
    cdef double x00 = x[0], x01 = x[1], x02 = x[2], x11 = x[3], x12 = x[4], x22 = x[5]
    cdef double b00 = x00 * e[0] + x01 * e[3] + x02 * e[6]  # B = X E
    cdef double b01 = x00 * e[1] + x01 * e[4] + x02 * e[7]
    cdef double b02 = x00 * e[2] + x01 * e[5] + x02 * e[8]
    cdef double b10 = x01 * e[0] + x11 * e[3] + x12 * e[6]
    cdef double b11 = x01 * e[1] + x11 * e[4] + x12 * e[7]
    cdef double b12 = x01 * e[2] + x11 * e[5] + x12 * e[8]
    cdef double b20 = x02 * e[0] + x12 * e[3] + x22 * e[6]
    cdef double b21 = x02 * e[1] + x12 * e[4] + x22 * e[7]
    cdef double b22 = x02 * e[2] + x12 * e[5] + x22 * e[8]
    x[0] = e[0] * b00 + e[3] * b10 + e[6] * b20
    x[1] = e[0] * b01 + e[3] * b11 + e[6] * b21
    x[2] = e[0] * b02 + e[3] * b12 + e[6] * b22
    x[3] = e[1] * b01 + e[4] * b11 + e[7] * b21
    x[4] = e[1] * b02 + e[4] * b12 + e[7] * b22
    x[5] = e[2] * b02 + e[5] * b12 + e[8] * b22


cdef inline void rotate_to_parent(int code, double c, double s, const double* e,
                                  double* M) noexcept nogil:
    """blockdiag(E^T) M blockdiag(E) of a mass (each block X -> E^T X E = R X R^T)."""
    if code == ROT_X:
        rotx_mass(c, s, M, MASS_ID)
    elif code == ROT_Y:
        rotx_mass(c, s, M, MASS_P1)
    elif code == ROT_Z:
        rotx_mass(c, s, M, MASS_P2)
    elif code == ROT_GENERAL:
        congruence_sym(e, M)
        congruence_gen(e, M + 6)
        congruence_sym(e, M + 15)


cdef inline void shift_to_parent_origin(double r0, double r1, double r2, double* M) noexcept nogil:
    """S^T M S with S = [[1, 0], [-rx, 1]] (parent coordinates): H' = H + rx Q and
    J' = J - H' rx - (H rx)^T."""
    cdef double h00 = M[6], h01 = M[7], h02 = M[8], h10 = M[9], h11 = M[10], h12 = M[11]
    cdef double h20 = M[12], h21 = M[13], h22 = M[14]
    cdef double q00 = M[15], q01 = M[16], q02 = M[17], q11 = M[18], q12 = M[19], q22 = M[20]
    cdef double t00 = h01 * r2 - h02 * r1  # (H rx)^T, entries m <= n needed
    cdef double t10 = h11 * r2 - h12 * r1
    cdef double t20 = h21 * r2 - h22 * r1
    cdef double t11 = -h10 * r2 + h12 * r0
    cdef double t21 = -h20 * r2 + h22 * r0
    cdef double t22 = h20 * r1 - h21 * r0
    cdef double g[9]
    cross3(r0, r1, r2, q00, q01, q02, g)  # rx Q, column by column: g0n, g1n, g2n
    cross3(r0, r1, r2, q01, q11, q12, g + 3)
    cross3(r0, r1, r2, q02, q12, q22, g + 6)
    h00 = h00 + g[0]
    h01 = h01 + g[3]
    h02 = h02 + g[6]
    h10 = h10 + g[1]
    h11 = h11 + g[4]
    h12 = h12 + g[7]
    h20 = h20 + g[2]
    h21 = h21 + g[5]
    h22 = h22 + g[8]
    M[0] = M[0] - (h01 * r2 - h02 * r1) - t00
    M[1] = M[1] - (-h00 * r2 + h02 * r0) - t10
    M[2] = M[2] - (h00 * r1 - h01 * r0) - t20
    M[3] = M[3] - (-h10 * r2 + h12 * r0) - t11
    M[4] = M[4] - (h10 * r1 - h11 * r0) - t21
    M[5] = M[5] - (h20 * r1 - h21 * r0) - t22
    M[6] = h00
    M[7] = h01
    M[8] = h02
    M[9] = h10
    M[10] = h11
    M[11] = h12
    M[12] = h20
    M[13] = h21
    M[14] = h22


cdef inline void shift_along_x(double p, double* M, const int* ix) noexcept nogil:
    """shift_to_parent_origin for r = (p, 0, 0) along the first axis of the map ix, the
    products with zeros left out."""
    cdef double m1 = M[ix[1]] - p * M[ix[8]], m2 = M[ix[2]] + p * M[ix[7]]
    cdef double m3 = M[ix[3]] + p * (p * M[ix[20]] - 2.0 * M[ix[11]])
    cdef double m4 = M[ix[4]] + p * (M[ix[10]] - M[ix[14]] - p * M[ix[19]])
    cdef double m5 = M[ix[5]] + p * (2.0 * M[ix[13]] + p * M[ix[18]])
    M[ix[1]] = m1
    M[ix[2]] = m2
    M[ix[3]] = m3
    M[ix[4]] = m4
    M[ix[5]] = m5
    M[ix[9]] = M[ix[9]] - p * M[ix[17]]
    M[ix[10]] = M[ix[10]] - p * M[ix[19]]
    M[ix[11]] = M[ix[11]] - p * M[ix[20]]
    M[ix[12]] = M[ix[12]] + p * M[ix[16]]
    M[ix[13]] = M[ix[13]] + p * M[ix[18]]
    M[ix[14]] = M[ix[14]] + p * M[ix[19]]


cdef inline void shift_along(int rc, const double* r, double* M) noexcept nogil:
    """S^T M S for the offset r with the zero pattern rc: nothing for r = 0, the x formula in
    cyclically permuted coordinates for r along one axis, the general formula otherwise."""
    if rc == R_X:
        shift_along_x(r[0], M, MASS_ID)
    elif rc == R_Y:
        shift_along_x(r[1], M, MASS_P1)
    elif rc == R_Z:
        shift_along_x(r[2], M, MASS_P2)
    elif rc == R_GENERAL:
        shift_to_parent_origin(r[0], r[1], r[2], M)


cdef inline void congruence_to_parent(int code, double c, double s, const double* e, int rc,
                                      const double* r, double* M) noexcept nogil:
    """A_{k,b}^T M A_{k,b} of a mass: rotate, then shift (000 eq. 20)."""
    rotate_to_parent(code, c, s, e, M)
    shift_along(rc, r, M)


cdef inline void set6(double* o, double a, double b, double c, double d, double e,
                      double f) noexcept nogil:
    o[0] = a
    o[1] = b
    o[2] = c
    o[3] = d
    o[4] = e
    o[5] = f


cdef inline void column(const double* M, int d, double* o) noexcept nogil:
    """Column d of the symmetric mass (constant indices in each case, so that gcc can keep a
    mass that lives in local variables out of memory)."""
    if d == 0:
        set6(o, M[0], M[1], M[2], M[6], M[7], M[8])
    elif d == 1:
        set6(o, M[1], M[3], M[4], M[9], M[10], M[11])
    elif d == 2:
        set6(o, M[2], M[4], M[5], M[12], M[13], M[14])
    elif d == 3:
        set6(o, M[6], M[9], M[12], M[15], M[16], M[17])
    elif d == 4:
        set6(o, M[7], M[10], M[13], M[16], M[18], M[19])
    else:
        set6(o, M[8], M[11], M[14], M[17], M[19], M[20])


cdef inline double pick6(const double* x, int d) noexcept nogil:
    """x[d] for a run-time d, with constant indices (as column)."""
    if d == 0:
        return x[0]
    if d == 1:
        return x[1]
    if d == 2:
        return x[2]
    if d == 3:
        return x[3]
    if d == 4:
        return x[4]
    return x[5]


cdef inline void minus_outer(double* M, const double* x, const double* y) noexcept nogil:
    """M - x y^T for a symmetric result (x y^T symmetric, as PsiHat Psi^T is)."""
    M[0] -= x[0] * y[0]
    M[1] -= x[0] * y[1]
    M[2] -= x[0] * y[2]
    M[3] -= x[1] * y[1]
    M[4] -= x[1] * y[2]
    M[5] -= x[2] * y[2]
    M[6] -= x[0] * y[3]
    M[7] -= x[0] * y[4]
    M[8] -= x[0] * y[5]
    M[9] -= x[1] * y[3]
    M[10] -= x[1] * y[4]
    M[11] -= x[1] * y[5]
    M[12] -= x[2] * y[3]
    M[13] -= x[2] * y[4]
    M[14] -= x[2] * y[5]
    M[15] -= x[3] * y[3]
    M[16] -= x[3] * y[4]
    M[17] -= x[3] * y[5]
    M[18] -= x[4] * y[4]
    M[19] -= x[4] * y[5]
    M[20] -= x[5] * y[5]


cdef inline void plus_link_mass(double* M, const double* f) noexcept nogil:
    """M + M_k with M_k = [[I_O, hx], [-hx, m 1]] (000 eq. 2b) from the link's table row f."""
    cdef int j
    for j in range(6):
        M[j] += f[IO + j]
    M[7] -= f[H + 2]
    M[8] += f[H + 1]
    M[9] += f[H + 2]
    M[11] -= f[H]
    M[12] -= f[H + 1]
    M[13] += f[H]
    M[15] += f[MASS]
    M[18] += f[MASS]
    M[20] += f[MASS]


cdef inline double fmax2(double a, double b) noexcept nogil:
    """max(a, b) as Python's: a unless b is larger."""
    return b if b > a else a


cdef inline double diagonal_max(const double* M) noexcept nogil:
    return fmax2(fmax2(fmax2(M[0], M[3]), fmax2(M[5], M[15])), fmax2(M[18], M[20]))
