"""Scalar spatial algebra for the hot recursions: twist propagation ``A_{k,b}`` and the
congruence ``A^T M A`` of symmetric 6x6 masses, on tuples of floats.

Why tuples: a compiled helper that receives arrays pays reference counting for
each of them on every call, which costs more than a link's arithmetic; helpers
on scalars cost nothing and are inlined by LLVM.  So 3- and 6-vectors are
tuples, a rotation ``E_k`` is its code, (cos, sin) and, for the general code,
a 9-tuple ``e`` (row major), and a symmetric 6x6 mass ``M = [[J, H], [H^T, Q]]``
is the 21-tuple ``J (xx, xy, xz, yy, yz, zz) + H (row major) + Q (like J)``.

Conventions of :mod:`denoc_bridge.spatial`: ``A_{k,b} = [[E, 0], [-E rx, E]]``
with ``E`` parent to child coordinates; rotation codes of :mod:`.tables`:
0/1/2 = ``E = R^T`` with ``R`` the rotation about x/y/z by (c, s), 3 = identity,
4 = general.
"""

from numba import njit


@njit(cache=True, inline="always", fastmath={"contract"})
def cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always", fastmath={"contract"})
def cross_wr(rc, w0, w1, w2, r0, r1, r2):
    """w x r for an offset r with the zero pattern rc (tables.R_*: zero, along x, y or z
    only, general): the products with zero components are not formed."""
    if rc == 0:
        return 0.0, 0.0, 0.0
    if rc == 1:
        return 0.0, w2 * r0, -w1 * r0
    if rc == 2:
        return -w2 * r1, 0.0, w0 * r1
    if rc == 3:
        return w1 * r2, -w0 * r2, 0.0
    return cross3(w0, w1, w2, r0, r1, r2)


@njit(cache=True, inline="always", fastmath={"contract"})
def rot3(code, c, s, e, x0, x1, x2):
    """E x (parent to child coordinates)."""
    if code == 0:
        return x0, c * x1 + s * x2, c * x2 - s * x1
    if code == 1:
        return c * x0 - s * x2, x1, s * x0 + c * x2
    if code == 2:
        return c * x0 + s * x1, c * x1 - s * x0, x2
    if code == 3:
        return x0, x1, x2
    return (e[0] * x0 + e[1] * x1 + e[2] * x2, e[3] * x0 + e[4] * x1 + e[5] * x2, e[6] * x0 + e[7] * x1 + e[8] * x2)


@njit(cache=True, inline="always", fastmath={"contract"})
def rot3t(code, c, s, e, x0, x1, x2):
    """E^T x (child to parent coordinates)."""
    if code == 0:
        return x0, c * x1 - s * x2, c * x2 + s * x1
    if code == 1:
        return c * x0 + s * x2, x1, c * x2 - s * x0
    if code == 2:
        return c * x0 - s * x1, c * x1 + s * x0, x2
    if code == 3:
        return x0, x1, x2
    return (e[0] * x0 + e[3] * x1 + e[6] * x2, e[1] * x0 + e[4] * x1 + e[7] * x2, e[2] * x0 + e[5] * x1 + e[8] * x2)


@njit(cache=True, inline="always", fastmath={"contract"})
def apply_A(code, c, s, e, rc, r0, r1, r2, x0, x1, x2, x3, x4, x5):
    """A_{k,b} x = [E x_w; E (x_v + x_w x r)] (rc: zero pattern of r, see :func:`cross_wr`)."""
    u0, u1, u2 = cross_wr(rc, x0, x1, x2, r0, r1, r2)
    y0, y1, y2 = rot3(code, c, s, e, x0, x1, x2)
    y3, y4, y5 = rot3(code, c, s, e, x3 + u0, x4 + u1, x5 + u2)
    return y0, y1, y2, y3, y4, y5


@njit(cache=True, inline="always", fastmath={"contract"})
def apply_At(code, c, s, e, rc, r0, r1, r2, y0, y1, y2, y3, y4, y5):
    """A_{k,b}^T y = [E^T y_n + r x (E^T y_f); E^T y_f] (r x f = -(f x r), see :func:`cross_wr`)."""
    f0, f1, f2 = rot3t(code, c, s, e, y3, y4, y5)
    n0, n1, n2 = rot3t(code, c, s, e, y0, y1, y2)
    u0, u1, u2 = cross_wr(rc, f0, f1, f2, r0, r1, r2)
    return n0 - u0, n1 - u1, n2 - u2, f0, f1, f2


# --------------------------------------------------------------- symmetric 6x6 masses
@njit(cache=True, inline="always", fastmath={"contract"})
def mcross(a, b):
    """a x b for motions [w; v]: [aw x bw; aw x bv + av x bw]."""
    return (
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
        a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1],
        a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2],
        a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0],
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def fcross(a, f):
    """a x* f for a motion a and a force f = [n; f]: [aw x n + av x f; aw x f]."""
    return (
        a[1] * f[2] - a[2] * f[1] + a[4] * f[5] - a[5] * f[4],
        a[2] * f[0] - a[0] * f[2] + a[5] * f[3] - a[3] * f[5],
        a[0] * f[1] - a[1] * f[0] + a[3] * f[4] - a[4] * f[3],
        a[1] * f[5] - a[2] * f[4],
        a[2] * f[3] - a[0] * f[5],
        a[0] * f[4] - a[1] * f[3],
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def sym_index(a, b):
    """Position of entry (a, b) of a symmetric 6x6 mass in its 21-tuple."""
    if a > b:
        a, b = b, a
    if b < 3:
        return a * (5 - a) // 2 + b
    if a < 3:
        return 6 + 3 * a + (b - 3)
    a -= 3
    b -= 3
    return 15 + a * (5 - a) // 2 + b


# Cyclic changes of coordinates (x, y, z) -> (y, z, x) ("1") and (z, x, y) ("2") and back, so that a
# rotation about y or z becomes a rotation about the first axis.  Straight-line code, one per case:
# a single branch on the rotation code then selects a path without further branching.
@njit(cache=True, inline="always")
def _sym_to1(x):
    return x[3], x[4], x[1], x[5], x[2], x[0]


@njit(cache=True, inline="always")
def _sym_to2(x):
    return x[5], x[2], x[4], x[0], x[1], x[3]


@njit(cache=True, inline="always")
def _sym_from1(y):
    return y[5], y[2], y[4], y[0], y[1], y[3]


@njit(cache=True, inline="always")
def _sym_from2(y):
    return y[3], y[4], y[1], y[5], y[2], y[0]


@njit(cache=True, inline="always")
def _gen_to1(h):
    return h[4], h[5], h[3], h[7], h[8], h[6], h[1], h[2], h[0]


@njit(cache=True, inline="always")
def _gen_to2(h):
    return h[8], h[6], h[7], h[2], h[0], h[1], h[5], h[3], h[4]


@njit(cache=True, inline="always")
def _gen_from1(n):
    return n[8], n[6], n[7], n[2], n[0], n[1], n[5], n[3], n[4]


@njit(cache=True, inline="always")
def _gen_from2(n):
    return n[4], n[5], n[3], n[7], n[8], n[6], n[1], n[2], n[0]


@njit(cache=True, inline="always", fastmath={"contract"})
def _rotx_sym(c, s, x):
    """R X R^T for R the rotation about the first axis by (c, s), X symmetric."""
    x00, x01, x02, x11, x12, x22 = x
    cc, ss, cs = c * c, s * s, c * s
    return (
        x00,
        c * x01 - s * x02,
        s * x01 + c * x02,
        cc * x11 - 2.0 * cs * x12 + ss * x22,
        cs * (x11 - x22) + (cc - ss) * x12,
        ss * x11 + 2.0 * cs * x12 + cc * x22,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def _rotx_gen(c, s, h):
    """R H R^T for R the rotation about the first axis by (c, s), H general."""
    h00, h01, h02, h10, h11, h12, h20, h21, h22 = h
    a10, a11, a12 = c * h10 - s * h20, c * h11 - s * h21, c * h12 - s * h22  # rows: R H
    a20, a21, a22 = s * h10 + c * h20, s * h11 + c * h21, s * h12 + c * h22
    return (
        h00,
        c * h01 - s * h02,
        s * h01 + c * h02,  # columns: (R H) R^T
        a10,
        c * a11 - s * a12,
        s * a11 + c * a12,
        a20,
        c * a21 - s * a22,
        s * a21 + c * a22,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def _congruence_gen(e, h):
    """E^T H E for a general 3x3 H (e row major)."""
    h00, h01, h02, h10, h11, h12, h20, h21, h22 = h
    b00 = h00 * e[0] + h01 * e[3] + h02 * e[6]  # B = H E
    b01 = h00 * e[1] + h01 * e[4] + h02 * e[7]
    b02 = h00 * e[2] + h01 * e[5] + h02 * e[8]
    b10 = h10 * e[0] + h11 * e[3] + h12 * e[6]
    b11 = h10 * e[1] + h11 * e[4] + h12 * e[7]
    b12 = h10 * e[2] + h11 * e[5] + h12 * e[8]
    b20 = h20 * e[0] + h21 * e[3] + h22 * e[6]
    b21 = h20 * e[1] + h21 * e[4] + h22 * e[7]
    b22 = h20 * e[2] + h21 * e[5] + h22 * e[8]
    return (
        e[0] * b00 + e[3] * b10 + e[6] * b20,
        e[0] * b01 + e[3] * b11 + e[6] * b21,
        e[0] * b02 + e[3] * b12 + e[6] * b22,
        e[1] * b00 + e[4] * b10 + e[7] * b20,
        e[1] * b01 + e[4] * b11 + e[7] * b21,
        e[1] * b02 + e[4] * b12 + e[7] * b22,
        e[2] * b00 + e[5] * b10 + e[8] * b20,
        e[2] * b01 + e[5] * b11 + e[8] * b21,
        e[2] * b02 + e[5] * b12 + e[8] * b22,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def _sym_as_gen(x):
    return x[0], x[1], x[2], x[1], x[3], x[4], x[2], x[4], x[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _gen_as_sym(h):
    return h[0], h[1], h[2], h[4], h[5], h[8]


@njit(cache=True, inline="always", fastmath={"contract"})
def rotate_to_parent(code, c, s, e, M):
    """blockdiag(E^T) M blockdiag(E) of a 21-tuple mass (each block X -> E^T X E = R X R^T)."""
    J, H, Q = M[0:6], M[6:15], M[15:21]
    if code == 0:
        return _rotx_sym(c, s, J) + _rotx_gen(c, s, H) + _rotx_sym(c, s, Q)
    if code == 1:
        return (
            _sym_from1(_rotx_sym(c, s, _sym_to1(J)))
            + _gen_from1(_rotx_gen(c, s, _gen_to1(H)))
            + _sym_from1(_rotx_sym(c, s, _sym_to1(Q)))
        )
    if code == 2:
        return (
            _sym_from2(_rotx_sym(c, s, _sym_to2(J)))
            + _gen_from2(_rotx_gen(c, s, _gen_to2(H)))
            + _sym_from2(_rotx_sym(c, s, _sym_to2(Q)))
        )
    if code == 4:
        return (
            _gen_as_sym(_congruence_gen(e, _sym_as_gen(J)))
            + _congruence_gen(e, H)
            + _gen_as_sym(_congruence_gen(e, _sym_as_gen(Q)))
        )
    return M


@njit(cache=True, inline="always", fastmath={"contract"})
def shift_to_parent_origin(r0, r1, r2, M):
    """S^T M S with S = [[1, 0], [-rx, 1]] (parent coordinates): H' = H + rx Q and
    J' = J - H' rx - (H rx)^T for the 21-tuple mass M = [[J, H], [H^T, Q]]."""
    j00, j01, j02, j11, j12, j22 = M[0:6]
    h00, h01, h02, h10, h11, h12, h20, h21, h22 = M[6:15]
    q00, q01, q02, q11, q12, q22 = M[15:21]
    t00 = h01 * r2 - h02 * r1  # (H rx)^T, entries m <= n needed
    t10 = h11 * r2 - h12 * r1
    t20 = h21 * r2 - h22 * r1
    t11 = -h10 * r2 + h12 * r0
    t21 = -h20 * r2 + h22 * r0
    t22 = h20 * r1 - h21 * r0
    g00, g10, g20 = cross3(r0, r1, r2, q00, q01, q02)  # rx Q, column by column
    g01, g11, g21 = cross3(r0, r1, r2, q01, q11, q12)
    g02, g12, g22 = cross3(r0, r1, r2, q02, q12, q22)
    h00, h01, h02 = h00 + g00, h01 + g01, h02 + g02
    h10, h11, h12 = h10 + g10, h11 + g11, h12 + g12
    h20, h21, h22 = h20 + g20, h21 + g21, h22 + g22
    return (
        j00 - (h01 * r2 - h02 * r1) - t00,
        j01 - (-h00 * r2 + h02 * r0) - t10,
        j02 - (h00 * r1 - h01 * r0) - t20,
        j11 - (-h10 * r2 + h12 * r0) - t11,
        j12 - (h10 * r1 - h11 * r0) - t21,
        j22 - (h20 * r1 - h21 * r0) - t22,
        h00,
        h01,
        h02,
        h10,
        h11,
        h12,
        h20,
        h21,
        h22,
        q00,
        q01,
        q02,
        q11,
        q12,
        q22,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def shift_along_x(p, M):
    """shift_to_parent_origin for r = (p, 0, 0), the products with zeros left out (the general
    formula with r1 = r2 = 0, expanded)."""
    return (
        M[0],
        M[1] - p * M[8],
        M[2] + p * M[7],
        M[3] + p * (p * M[20] - 2.0 * M[11]),
        M[4] + p * (M[10] - M[14] - p * M[19]),
        M[5] + p * (2.0 * M[13] + p * M[18]),
        M[6],
        M[7],
        M[8],
        M[9] - p * M[17],
        M[10] - p * M[19],
        M[11] - p * M[20],
        M[12] + p * M[16],
        M[13] + p * M[18],
        M[14] + p * M[19],
        M[15],
        M[16],
        M[17],
        M[18],
        M[19],
        M[20],
    )


@njit(cache=True, inline="always")
def _mass_to1(M):
    return _sym_to1(M[0:6]) + _gen_to1(M[6:15]) + _sym_to1(M[15:21])


@njit(cache=True, inline="always")
def _mass_from1(M):
    return _sym_from1(M[0:6]) + _gen_from1(M[6:15]) + _sym_from1(M[15:21])


@njit(cache=True, inline="always")
def _mass_to2(M):
    return _sym_to2(M[0:6]) + _gen_to2(M[6:15]) + _sym_to2(M[15:21])


@njit(cache=True, inline="always")
def _mass_from2(M):
    return _sym_from2(M[0:6]) + _gen_from2(M[6:15]) + _sym_from2(M[15:21])


@njit(cache=True, inline="always", fastmath={"contract"})
def shift_along(rc, r0, r1, r2, M):
    """S^T M S for the offset r with the zero pattern rc: nothing for r = 0, the x formula in
    cyclically permuted coordinates for r along one axis, the general formula otherwise."""
    if rc == 0:
        return M
    if rc == 1:
        return shift_along_x(r0, M)
    if rc == 2:
        return _mass_from1(shift_along_x(r1, _mass_to1(M)))
    if rc == 3:
        return _mass_from2(shift_along_x(r2, _mass_to2(M)))
    return shift_to_parent_origin(r0, r1, r2, M)


@njit(cache=True, inline="always", fastmath={"contract"})
def congruence_to_parent(code, c, s, e, rc, r0, r1, r2, M):
    """A_{k,b}^T M A_{k,b} of a symmetric 21-tuple mass: rotate, then shift (000 eq. 20)."""
    return shift_along(rc, r0, r1, r2, rotate_to_parent(code, c, s, e, M))


@njit(cache=True, inline="always")
def column(M, d):
    """Column d of the symmetric 21-tuple mass (static indices: no spill of the tuple)."""
    if d == 0:
        return M[0], M[1], M[2], M[6], M[7], M[8]
    if d == 1:
        return M[1], M[3], M[4], M[9], M[10], M[11]
    if d == 2:
        return M[2], M[4], M[5], M[12], M[13], M[14]
    if d == 3:
        return M[6], M[9], M[12], M[15], M[16], M[17]
    if d == 4:
        return M[7], M[10], M[13], M[16], M[18], M[19]
    return M[8], M[11], M[14], M[17], M[19], M[20]


@njit(cache=True, inline="always")
def pick6(x, d):
    """x[d] for a 6-tuple and a run-time d, with static indices."""
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


@njit(cache=True, inline="always", fastmath={"contract"})
def minus_outer(M, x, y):
    """M - x y^T for a symmetric result (x y^T symmetric, as PsiHat Psi^T is)."""
    return (
        M[0] - x[0] * y[0],
        M[1] - x[0] * y[1],
        M[2] - x[0] * y[2],
        M[3] - x[1] * y[1],
        M[4] - x[1] * y[2],
        M[5] - x[2] * y[2],
        M[6] - x[0] * y[3],
        M[7] - x[0] * y[4],
        M[8] - x[0] * y[5],
        M[9] - x[1] * y[3],
        M[10] - x[1] * y[4],
        M[11] - x[1] * y[5],
        M[12] - x[2] * y[3],
        M[13] - x[2] * y[4],
        M[14] - x[2] * y[5],
        M[15] - x[3] * y[3],
        M[16] - x[3] * y[4],
        M[17] - x[3] * y[5],
        M[18] - x[4] * y[4],
        M[19] - x[4] * y[5],
        M[20] - x[5] * y[5],
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def plus_link_mass(M, I):
    """M + M_k with M_k = [[I_O, hx], [-hx, m 1]] (000 eq. 2b), I = (m, h, I_O) the ten numbers
    of :func:`.tables.inertia10`."""
    m, h0, h1, h2, i0, i1, i2, i3, i4, i5 = I
    return (
        M[0] + i0,
        M[1] + i1,
        M[2] + i2,
        M[3] + i3,
        M[4] + i4,
        M[5] + i5,
        M[6],
        M[7] - h2,
        M[8] + h1,
        M[9] + h2,
        M[10],
        M[11] - h0,
        M[12] - h1,
        M[13] + h0,
        M[14],
        M[15] + m,
        M[16],
        M[17],
        M[18] + m,
        M[19],
        M[20] + m,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def diagonal_max(M):
    return max(M[0], M[3], M[5], M[15], M[18], M[20])
