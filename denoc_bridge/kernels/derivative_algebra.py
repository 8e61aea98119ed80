"""Spatial algebra of the recursive derivatives (:mod:`.derivative_passes`): link inertias about
the base origin in their ten numbers, the matrices ``C u = I (u x t) + u x* (I t) + t x* (I u)``
(the variation of a link wrench with its twist) in their twelve, their actions on 6-vectors
carried as tuples, and the 6x6 forms they are checked against.

Spatial vectors are [angular; linear] about the base origin in base axes (the papers' order);
the link inertia is that of 000 eqs. 2a-2b (m, h = m c, I_O of the model table).
"""

from numba import njit

from denoc_bridge.kernels import tables as T


@njit(cache=True, inline="always", fastmath={"contract"})
def _cross3(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, fastmath={"contract"})
def _world_inertia(kf, k, R, p, Iw):
    """Iw: the 6x6 mass matrix of link k (000 eqs. 2a-2b; m, h = m c and I_O of the table) about
    the base origin in base axes, for the link placement (R, p):
    ``[[I_0, [h']x], [-[h']x, m 1]]`` with ``h' = m p + R h`` and
    ``I_0 = R I_O R^T + m S(p) + 2 (p . R h) 1 - p (R h)^T - (R h) p^T``, ``S(x) = |x|^2 1 - x x^T``."""
    m = kf[k, T.MASS]
    h0, h1, h2 = kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
    io = (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5])
    # A = R I_O (I_O symmetric: xx xy xz / yy yz / zz)
    for i in range(3):
        a0 = R[i, 0] * io[0] + R[i, 1] * io[1] + R[i, 2] * io[2]
        a1 = R[i, 0] * io[1] + R[i, 1] * io[3] + R[i, 2] * io[4]
        a2 = R[i, 0] * io[2] + R[i, 1] * io[4] + R[i, 2] * io[5]
        for j in range(3):
            Iw[i, j] = a0 * R[j, 0] + a1 * R[j, 1] + a2 * R[j, 2]
    g = (
        R[0, 0] * h0 + R[0, 1] * h1 + R[0, 2] * h2,
        R[1, 0] * h0 + R[1, 1] * h1 + R[1, 2] * h2,
        R[2, 0] * h0 + R[2, 1] * h1 + R[2, 2] * h2,
    )
    pp = p[0] * p[0] + p[1] * p[1] + p[2] * p[2]
    pg = p[0] * g[0] + p[1] * g[1] + p[2] * g[2]
    for i in range(3):
        for j in range(3):
            d = m * pp + 2.0 * pg if i == j else 0.0
            Iw[i, j] += d - m * p[i] * p[j] - p[i] * g[j] - g[i] * p[j]
    hw0, hw1, hw2 = m * p[0] + g[0], m * p[1] + g[1], m * p[2] + g[2]
    # n = I_0 w + h' x v,  f = m v - h' x w
    Iw[0, 3], Iw[0, 4], Iw[0, 5] = 0.0, -hw2, hw1
    Iw[1, 3], Iw[1, 4], Iw[1, 5] = hw2, 0.0, -hw0
    Iw[2, 3], Iw[2, 4], Iw[2, 5] = -hw1, hw0, 0.0
    for i in range(3):
        for j in range(3):
            Iw[3 + i, j] = Iw[j, 3 + i]
            Iw[3 + i, 3 + j] = m if i == j else 0.0


@njit(cache=True, fastmath={"contract"})
def _coriolis_matrix(Iw, t, C):
    """C u = I (u x t) + u x* (I t) + t x* (I u) (the variation of the link wrench with t),
    column by column (u = e_j)."""
    hn0 = Iw[0, 0] * t[0] + Iw[0, 1] * t[1] + Iw[0, 2] * t[2] + Iw[0, 3] * t[3] + Iw[0, 4] * t[4] + Iw[0, 5] * t[5]
    hn1 = Iw[1, 0] * t[0] + Iw[1, 1] * t[1] + Iw[1, 2] * t[2] + Iw[1, 3] * t[3] + Iw[1, 4] * t[4] + Iw[1, 5] * t[5]
    hn2 = Iw[2, 0] * t[0] + Iw[2, 1] * t[1] + Iw[2, 2] * t[2] + Iw[2, 3] * t[3] + Iw[2, 4] * t[4] + Iw[2, 5] * t[5]
    hf0 = Iw[3, 0] * t[0] + Iw[3, 1] * t[1] + Iw[3, 2] * t[2] + Iw[3, 3] * t[3] + Iw[3, 4] * t[4] + Iw[3, 5] * t[5]
    hf1 = Iw[4, 0] * t[0] + Iw[4, 1] * t[1] + Iw[4, 2] * t[2] + Iw[4, 3] * t[3] + Iw[4, 4] * t[4] + Iw[4, 5] * t[5]
    hf2 = Iw[5, 0] * t[0] + Iw[5, 1] * t[1] + Iw[5, 2] * t[2] + Iw[5, 3] * t[3] + Iw[5, 4] * t[4] + Iw[5, 5] * t[5]
    for j in range(6):
        e0 = 1.0 if j % 3 == 0 else 0.0
        e1 = 1.0 if j % 3 == 1 else 0.0
        e2 = 1.0 if j % 3 == 2 else 0.0
        if j < 3:  # u = [e; 0]: u x t = [e x tw; e x tv], u x* h = [e x hn; e x hf]
            x0, x1, x2 = _cross3(e0, e1, e2, t[0], t[1], t[2])
            x3, x4, x5 = _cross3(e0, e1, e2, t[3], t[4], t[5])
            y0, y1, y2 = _cross3(e0, e1, e2, hn0, hn1, hn2)
            y3, y4, y5 = _cross3(e0, e1, e2, hf0, hf1, hf2)
        else:  # u = [0; e]: u x t = [0; e x tw], u x* h = [e x hf; 0]
            x0, x1, x2 = 0.0, 0.0, 0.0
            x3, x4, x5 = _cross3(e0, e1, e2, t[0], t[1], t[2])
            y0, y1, y2 = _cross3(e0, e1, e2, hf0, hf1, hf2)
            y3, y4, y5 = 0.0, 0.0, 0.0
        # t x* (I e_j) = [tw x n + tv x f; tw x f] with [n; f] column j of I
        n0, n1, n2, f0, f1, f2 = Iw[0, j], Iw[1, j], Iw[2, j], Iw[3, j], Iw[4, j], Iw[5, j]
        a0, a1, a2 = _cross3(t[0], t[1], t[2], n0, n1, n2)
        b0, b1, b2 = _cross3(t[3], t[4], t[5], f0, f1, f2)
        c0, c1, c2 = _cross3(t[0], t[1], t[2], f0, f1, f2)
        z = (a0 + b0 + y0, a1 + b1 + y1, a2 + b2 + y2, c0 + y3, c1 + y4, c2 + y5)
        for i in range(6):
            C[i, j] = (
                Iw[i, 0] * x0 + Iw[i, 1] * x1 + Iw[i, 2] * x2 + Iw[i, 3] * x3 + Iw[i, 4] * x4 + Iw[i, 5] * x5 + z[i]
            )


# The kernel below indexes its arrays (``X[r, i]``) and carries 6-vectors as tuples: a view
# (``X[r]``) made in a loop costs a reference count increment and decrement each time.


@njit(cache=True, inline="always")
def _get6(X, r, o):
    return X[r, o], X[r, o + 1], X[r, o + 2], X[r, o + 3], X[r, o + 4], X[r, o + 5]


@njit(cache=True, inline="always")
def _put6(X, r, o, x):
    X[r, o], X[r, o + 1], X[r, o + 2] = x[0], x[1], x[2]
    X[r, o + 3], X[r, o + 4], X[r, o + 5] = x[3], x[4], x[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _axpy6(s, x, y):
    """s x + y."""
    return s * x[0] + y[0], s * x[1] + y[1], s * x[2] + y[2], s * x[3] + y[3], s * x[4] + y[4], s * x[5] + y[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _inertia10(kf, k, oR, op, Ic):
    """The mass matrix of link k about the base origin in base axes (:func:`_world_inertia`) in
    its ten numbers, for the placement (oR[k] (row-major, 9 numbers), op[k]): ``Ic[k] = [A (xx xy xz yy yz zz), h' (3),
    m]`` for ``[[A, [h']x], [-[h']x, m 1]]``."""
    m = kf[k, T.MASS]
    h0, h1, h2 = kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
    i0, i1, i2 = kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2]
    i3, i4, i5 = kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5]
    r00, r01, r02 = oR[k, 0], oR[k, 1], oR[k, 2]
    r10, r11, r12 = oR[k, 3], oR[k, 4], oR[k, 5]
    r20, r21, r22 = oR[k, 6], oR[k, 7], oR[k, 8]
    # B = R I_O, A0 = B R^T (symmetric: the upper triangle)
    b00 = r00 * i0 + r01 * i1 + r02 * i2
    b01 = r00 * i1 + r01 * i3 + r02 * i4
    b02 = r00 * i2 + r01 * i4 + r02 * i5
    b10 = r10 * i0 + r11 * i1 + r12 * i2
    b11 = r10 * i1 + r11 * i3 + r12 * i4
    b12 = r10 * i2 + r11 * i4 + r12 * i5
    b20 = r20 * i0 + r21 * i1 + r22 * i2
    b21 = r20 * i1 + r21 * i3 + r22 * i4
    b22 = r20 * i2 + r21 * i4 + r22 * i5
    g0 = r00 * h0 + r01 * h1 + r02 * h2
    g1 = r10 * h0 + r11 * h1 + r12 * h2
    g2 = r20 * h0 + r21 * h1 + r22 * h2
    p0, p1, p2 = op[k, 0], op[k, 1], op[k, 2]
    d = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * g0 + p1 * g1 + p2 * g2)
    # + m |p|^2 1 + 2 (p . g) 1 - m p p^T - p g^T - g p^T
    Ic[k, 0] = b00 * r00 + b01 * r01 + b02 * r02 + d - m * p0 * p0 - 2.0 * p0 * g0
    Ic[k, 1] = b00 * r10 + b01 * r11 + b02 * r12 - m * p0 * p1 - p0 * g1 - g0 * p1
    Ic[k, 2] = b00 * r20 + b01 * r21 + b02 * r22 - m * p0 * p2 - p0 * g2 - g0 * p2
    Ic[k, 3] = b10 * r10 + b11 * r11 + b12 * r12 + d - m * p1 * p1 - 2.0 * p1 * g1
    Ic[k, 4] = b10 * r20 + b11 * r21 + b12 * r22 - m * p1 * p2 - p1 * g2 - g1 * p2
    Ic[k, 5] = b20 * r20 + b21 * r21 + b22 * r22 + d - m * p2 * p2 - 2.0 * p2 * g2
    Ic[k, 6], Ic[k, 7], Ic[k, 8] = m * p0 + g0, m * p1 + g1, m * p2 + g2
    Ic[k, 9] = m


@njit(cache=True, inline="always", fastmath={"contract"})
def _iact(I, k, x):
    """I x for the ten numbers I[k] of :func:`_inertia10`: ``[A xw + h x xv; m xv - h x xw]``."""
    h0, h1, h2, m = I[k, 6], I[k, 7], I[k, 8], I[k, 9]
    return (
        I[k, 0] * x[0] + I[k, 1] * x[1] + I[k, 2] * x[2] + h1 * x[5] - h2 * x[4],
        I[k, 1] * x[0] + I[k, 3] * x[1] + I[k, 4] * x[2] + h2 * x[3] - h0 * x[5],
        I[k, 2] * x[0] + I[k, 4] * x[1] + I[k, 5] * x[2] + h0 * x[4] - h1 * x[3],
        m * x[3] - h1 * x[2] + h2 * x[1],
        m * x[4] - h2 * x[0] + h0 * x[2],
        m * x[5] - h0 * x[1] + h1 * x[0],
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def _coriolis12(I, k, t, h, C):
    """The matrix of ``C u = I (u x t) + u x* (I t) + t x* (I u)`` (:func:`_coriolis_matrix`) in
    closed form from the ten numbers I[k], the twist t = [w; v] and h = I t = [hn; hf]: with
    ``P = [w]x A``, ``C = [[C11, 0], [[c21]x, 0]]``, ``C11 = P + P^T - v h'^T - h' v^T +
    2 (v . h') 1 - [hn]x`` and ``c21 = -2 hf`` (the variation ``t x* I - I t x`` plus the force
    cross matrix of h; its right column is zero).  ``C[k] = [C11 (row-major), c21]``."""
    w0, w1, w2, v0, v1, v2 = t
    a00, a01, a02, a11, a12, a22 = I[k, 0], I[k, 1], I[k, 2], I[k, 3], I[k, 4], I[k, 5]
    g0, g1, g2 = I[k, 6], I[k, 7], I[k, 8]
    # P = [w]x A: rows (w1 A2 - w2 A1, w2 A0 - w0 A2, w0 A1 - w1 A0) with A_i row i of A
    p00 = w1 * a02 - w2 * a01
    p01 = w1 * a12 - w2 * a11
    p02 = w1 * a22 - w2 * a12
    p10 = w2 * a00 - w0 * a02
    p11 = w2 * a01 - w0 * a12
    p12 = w2 * a02 - w0 * a22
    p20 = w0 * a01 - w1 * a00
    p21 = w0 * a11 - w1 * a01
    p22 = w0 * a12 - w1 * a02
    d = 2.0 * (v0 * g0 + v1 * g1 + v2 * g2)
    C[k, 0] = 2.0 * p00 - 2.0 * v0 * g0 + d
    C[k, 1] = p01 + p10 - v0 * g1 - g0 * v1 + h[2]
    C[k, 2] = p02 + p20 - v0 * g2 - g0 * v2 - h[1]
    C[k, 3] = p10 + p01 - v1 * g0 - g1 * v0 - h[2]
    C[k, 4] = 2.0 * p11 - 2.0 * v1 * g1 + d
    C[k, 5] = p12 + p21 - v1 * g2 - g1 * v2 + h[0]
    C[k, 6] = p20 + p02 - v2 * g0 - g2 * v0 + h[1]
    C[k, 7] = p21 + p12 - v2 * g1 - g2 * v1 - h[0]
    C[k, 8] = 2.0 * p22 - 2.0 * v2 * g2 + d
    C[k, 9], C[k, 10], C[k, 11] = -2.0 * h[3], -2.0 * h[4], -2.0 * h[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _cact(C, k, x):
    """C x for the twelve numbers C[k] of :func:`_coriolis12` (only x's angular part acts)."""
    return (
        C[k, 0] * x[0] + C[k, 1] * x[1] + C[k, 2] * x[2],
        C[k, 3] * x[0] + C[k, 4] * x[1] + C[k, 5] * x[2],
        C[k, 6] * x[0] + C[k, 7] * x[1] + C[k, 8] * x[2],
        C[k, 10] * x[2] - C[k, 11] * x[1],
        C[k, 11] * x[0] - C[k, 9] * x[2],
        C[k, 9] * x[1] - C[k, 10] * x[0],
    )
