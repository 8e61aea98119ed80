"""Analytical first-order derivatives of the recursive inverse dynamics of a tree.

``tau = ID(q, v, a)`` (000 Table 1) is differentiated pass by pass: a forward
recursion of the link placements, twists and twist rates, then a backward
recursion of composite quantities that yields ``dtau/dq``, ``dtau/dv`` and the
GIM ``M = dtau/da`` (000 eq. 16) in one sweep over each link's supporting
chain, as in Carpentier & Mansard (2018, "Analytical derivatives of rigid body
dynamics algorithms"; Pinocchio's ``computeRNEADerivatives``).

The recursion runs in the base frame (spatial vectors [angular; linear] about
the base origin, the papers' order), where a tangent perturbation ``dq_k``
of joint k (Pinocchio's ``integrate(q, dq)``: ``M_J(q + dq) = M_J(q) exp(S dq)``)
moves the subtree of k rigidly by the twist ``s = S_k dq_k``: every motion
subspace below k turns as ``s x S_j``, every link inertia as
``s x* I - I s x``, and the twists and twist rates of the subtree change by
(``lam`` = the body carrying joint k's axis, the parent link for a Lie-group joint)

    dt_i    = s x (t_i - t_lam)                                   (q)
    dtdot_i = s x (tdot_i - tdot_lam) - (s x t_lam) x (t_i - t_lam)
    dt_i    = s,  dtdot_i = s x t_i + (t_lam + t_node) x s       (qdot)

With the composite inertia ``Ic_k = sum I_i``, the composite wrench
``F_k = sum w_i`` and the composite of ``C_i(u) = I_i (u x t_i) + u x* (I_i t_i)
+ t_i x* (I_i u)`` over the subtree of k, the entries of column ``s`` (joint k)
are, for a row ``S_j`` of joint j,

    j in the subtree of k:  -S_j^T (Ic_j alpha + Cc_j beta),  S_j^T (Cc_j s + Ic_j w)
    j an ancestor of k:      S_j^T (s x* F_k - Ic_k alpha - Cc_k beta),  S_j^T (Cc_k s + Ic_k w)

with ``beta = s x t_lam``, ``alpha = s x tdot_lam - beta x t_lam`` and
``w = (t_lam + t_node) x s``.  The universal joint (two rotations, the first
axis fixed in the parent) is two such nodes: its first column is an ancestor
of its second.  Cost O(n d) for depth d, dense output.
"""

import numpy as np
from numba import njit, prange, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared
from denoc_bridge.kernels.entry import _nv, _work, finite_result, forward_dynamics_passes, valid_state
from denoc_bridge.kernels.gim import minv_from_factors, subtree_dofs
from denoc_bridge.kernels.joints import (
    CONTINUOUS,
    PRISMATIC,
    REVOLUTE,
    UNIVERSAL,
    joint_subspace,
    joint_transform,
    unit_pair,
)
from denoc_bridge.kernels.spatial6 import fcross, mcross

_M = types.float64[:, ::1]
_V = types.float64[::1]
#: kt, q, v, a, fext, tau, dtau_dq, dtau_dv, M: any other argument type raises TypeError (the
#: Python layer then converts), instead of compiling a new version
STATE_SIGNATURE = types.int64(_M, _V, _V, _V, _M, _V, _M, _M, _M)
#: kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv
FD_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _M, _V, _M, _M, _M)


@njit(cache=True, inline="always", fastmath={"contract"})
def _mcross(a, b, out):
    """out = a x b for motions [w; v]: [aw x bw; aw x bv + av x bw]."""
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]
    out[3] = a[1] * b[5] - a[2] * b[4] + a[4] * b[2] - a[5] * b[1]
    out[4] = a[2] * b[3] - a[0] * b[5] + a[5] * b[0] - a[3] * b[2]
    out[5] = a[0] * b[4] - a[1] * b[3] + a[3] * b[1] - a[4] * b[0]


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
    its ten numbers, for the placement (oR[k], op[k]): ``Ic[k] = [A (xx xy xz yy yz zz), h' (3),
    m]`` for ``[[A, [h']x], [-[h']x, m 1]]``."""
    m = kf[k, T.MASS]
    h0, h1, h2 = kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
    i0, i1, i2 = kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2]
    i3, i4, i5 = kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5]
    r00, r01, r02 = oR[k, 0, 0], oR[k, 0, 1], oR[k, 0, 2]
    r10, r11, r12 = oR[k, 1, 0], oR[k, 1, 1], oR[k, 1, 2]
    r20, r21, r22 = oR[k, 2, 0], oR[k, 2, 1], oR[k, 2, 2]
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


#: columns of the per-DOF rows D of :func:`derivatives_unchecked`: S, alpha, w (6 each) and
#: beta's angular part (the only part the recursion reads: C's right column is zero)
_S, _AL, _WV, _BE, _DW = 0, 6, 12, 18, 21
#: columns of the per-DOF rows G: Y = Ic S, Z = (Cc^T S)'s angular part (its linear part is
#: zero), gam = s x* F - Ic alpha - Cc beta, rho = Cc s + Ic w
_Y, _Z, _GA, _RH, _GW = 0, 6, 9, 15, 21
_LW = 9 + 3 + 6 + 6 + 10 + 12 + 6  # doubles per link: oR, op, tw, td, Ic, Cc, F


@njit(cache=True, fastmath={"contract"})
def derivatives_unchecked(ki, kf, q, v, a, fext, tau, dq, dv, M):
    """tau = ID(q, v, a), dtau/dq (tangent space), dtau/dv and M = dtau/da of a tree (every
    entry on the supporting chains; the others are left as they are).

    Link inertias and their composites are kept in their ten numbers (:func:`_inertia10`), the
    matrices C in their twelve (:func:`_coriolis12`), and each DOF's S, alpha, w and beta in one
    row of D, so that the walk along a supporting chain reads one row per ancestor."""
    L = ki.shape[0]
    nv = v.shape[0]
    has_fext = fext.shape[0] > 0
    buf = np.empty(L * _LW + nv * (_DW + _GW) + 60)  # one allocation, carved below
    oR = buf[0 : 9 * L].reshape((L, 3, 3))
    op = buf[9 * L : 12 * L].reshape((L, 3))
    tw = buf[12 * L : 18 * L].reshape((L, 6))  # twists about the base origin
    td = buf[18 * L : 24 * L].reshape((L, 6))  # twist rates (gravity as the base's rate)
    Ic = buf[24 * L : 34 * L].reshape((L, 10))  # inertias, then composites (:func:`_inertia10`)
    Cc = buf[34 * L : 46 * L].reshape((L, 12))  # C, then composites (:func:`_coriolis12`)
    F = buf[46 * L : 52 * L].reshape((L, 6))  # link wrenches, then composites
    o = _LW * L
    D = buf[o : o + _DW * nv].reshape((nv, _DW))
    G = buf[o + _DW * nv : o + (_DW + _GW) * nv].reshape((nv, _GW))
    o += (_DW + _GW) * nv
    RJ = buf[o : o + 9].reshape((3, 3))
    tmpR = buf[o + 9 : o + 18].reshape((3, 3))
    pJ = buf[o + 18 : o + 21]
    Pl = buf[o + 24 : o + 60].reshape((6, 6))
    g = (kf[0, T.GRAV], kf[0, T.GRAV + 1], kf[0, T.GRAV + 2]) if L > 0 else (0.0, 0.0, 0.0)
    zero6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for k in range(L):  # forward recursion (000 Table 1, step 1)
        jt = T.joint_type(ki, k)
        iq, nqk = ki[k, T.IDX_Q], ki[k, T.NQ]
        iv, nvk = ki[k, T.IDX_V], ki[k, T.NV]
        p = ki[k, T.PARENT]
        if jt == REVOLUTE or jt == CONTINUOUS or jt == PRISMATIC:  # inline: no views, no call
            e0, e1, e2 = kf[k, T.AXIS], kf[k, T.AXIS + 1], kf[k, T.AXIS + 2]
            for i in range(6):
                Pl[0, i] = 0.0
            if jt == PRISMATIC:
                for i in range(3):
                    for j in range(3):
                        RJ[i, j] = 1.0 if i == j else 0.0
                pJ[0], pJ[1], pJ[2] = e0 * q[iq], e1 * q[iq], e2 * q[iq]
                Pl[0, 3], Pl[0, 4], Pl[0, 5] = e0, e1, e2
            else:  # Rodrigues (:func:`.joints.rotation_about_axis`)
                if jt == REVOLUTE:
                    cq, sq = np.cos(q[iq]), np.sin(q[iq])
                else:
                    cq, sq = unit_pair(q[iq], q[iq + 1])
                t1 = 1.0 - cq
                RJ[0, 0] = cq + t1 * e0 * e0
                RJ[0, 1] = t1 * e0 * e1 - sq * e2
                RJ[0, 2] = t1 * e0 * e2 + sq * e1
                RJ[1, 0] = t1 * e1 * e0 + sq * e2
                RJ[1, 1] = cq + t1 * e1 * e1
                RJ[1, 2] = t1 * e1 * e2 - sq * e0
                RJ[2, 0] = t1 * e2 * e0 - sq * e1
                RJ[2, 1] = t1 * e2 * e1 + sq * e0
                RJ[2, 2] = cq + t1 * e2 * e2
                pJ[0], pJ[1], pJ[2] = 0.0, 0.0, 0.0
                Pl[0, 0], Pl[0, 1], Pl[0, 2] = e0, e1, e2
        else:
            axis = kf[k, T.AXIS : T.AXIS + 3]
            axis2 = kf[k, T.AXIS2 : T.AXIS2 + 3]
            qk = q[iq : iq + nqk]
            joint_transform(jt, axis, axis2, qk, RJ, pJ, tmpR)
            joint_subspace(jt, axis, axis2, qk, Pl[:nvk])
        # child -> parent: Rl = R0 RJ, pl = r0 + R0 pJ; then oR = oR_p Rl, op = op_p + oR_p pl
        for i in range(3):
            r0, r1, r2 = kf[k, T.R0 + 3 * i], kf[k, T.R0 + 3 * i + 1], kf[k, T.R0 + 3 * i + 2]
            tmpR[i, 0] = r0 * RJ[0, 0] + r1 * RJ[1, 0] + r2 * RJ[2, 0]
            tmpR[i, 1] = r0 * RJ[0, 1] + r1 * RJ[1, 1] + r2 * RJ[2, 1]
            tmpR[i, 2] = r0 * RJ[0, 2] + r1 * RJ[1, 2] + r2 * RJ[2, 2]
            buf[o + 21 + i] = kf[k, T.T0 + i] + r0 * pJ[0] + r1 * pJ[1] + r2 * pJ[2]
        pl0, pl1, pl2 = buf[o + 21], buf[o + 22], buf[o + 23]
        if p < 0:
            for i in range(3):
                for j in range(3):
                    oR[k, i, j] = tmpR[i, j]
            op[k, 0], op[k, 1], op[k, 2] = pl0, pl1, pl2
            vp = zero6
            ap = (0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
        else:
            for i in range(3):
                s0, s1, s2 = oR[p, i, 0], oR[p, i, 1], oR[p, i, 2]
                for j in range(3):
                    oR[k, i, j] = s0 * tmpR[0, j] + s1 * tmpR[1, j] + s2 * tmpR[2, j]
                op[k, i] = op[p, i] + s0 * pl0 + s1 * pl1 + s2 * pl2
            vp = _get6(tw, p, 0)
            ap = _get6(td, p, 0)
        o0, o1, o2 = op[k, 0], op[k, 1], op[k, 2]
        x = zero6  # S qd
        y = zero6  # S qdd
        for n in range(nvk):  # S_k in the base frame: [R Pw; R Pv + o x R Pw]
            c = iv + n
            sw0 = oR[k, 0, 0] * Pl[n, 0] + oR[k, 0, 1] * Pl[n, 1] + oR[k, 0, 2] * Pl[n, 2]
            sw1 = oR[k, 1, 0] * Pl[n, 0] + oR[k, 1, 1] * Pl[n, 1] + oR[k, 1, 2] * Pl[n, 2]
            sw2 = oR[k, 2, 0] * Pl[n, 0] + oR[k, 2, 1] * Pl[n, 1] + oR[k, 2, 2] * Pl[n, 2]
            sv0 = oR[k, 0, 0] * Pl[n, 3] + oR[k, 0, 1] * Pl[n, 4] + oR[k, 0, 2] * Pl[n, 5]
            sv1 = oR[k, 1, 0] * Pl[n, 3] + oR[k, 1, 1] * Pl[n, 4] + oR[k, 1, 2] * Pl[n, 5]
            sv2 = oR[k, 2, 0] * Pl[n, 3] + oR[k, 2, 1] * Pl[n, 4] + oR[k, 2, 2] * Pl[n, 5]
            sc = (sw0, sw1, sw2, sv0 + o1 * sw2 - o2 * sw1, sv1 + o2 * sw0 - o0 * sw2, sv2 + o0 * sw1 - o1 * sw0)
            _put6(D, c, _S, sc)
            x = _axpy6(v[c], sc, x)
            y = _axpy6(a[c], sc, y)
        # t_k = t_b + S qd, tdot_k = tdot_b + S qdd + t_b x S qd (+ universal)
        twk = _add6(vp, x)
        tdk = _add6(_add6(ap, y), mcross(vp, x))
        universal = jt == UNIVERSAL
        va, aa = vp, ap
        if universal:  # node between the two rotations: t_A, tdot_A
            s0, s1 = _get6(D, iv, _S), _get6(D, iv + 1, _S)
            tdk = _axpy6(v[iv] * v[iv + 1], mcross(s0, s1), tdk)
            va = _axpy6(v[iv], s0, vp)
            aa = _axpy6(v[iv], mcross(vp, s0), _axpy6(a[iv], s0, ap))
        _put6(tw, k, 0, twk)
        _put6(td, k, 0, tdk)
        for n in range(nvk):  # alpha, beta (dq) and w (dqdot) of each column
            c = iv + n
            sc = _get6(D, c, _S)
            vl, al = (va, aa) if universal and n == 1 else (vp, ap)
            vn = va if universal and n == 0 else twk
            be = mcross(sc, vl)
            al6 = mcross(sc, al)
            bv = mcross(be, vl)
            _put6(
                D,
                c,
                _AL,
                (al6[0] - bv[0], al6[1] - bv[1], al6[2] - bv[2], al6[3] - bv[3], al6[4] - bv[4], al6[5] - bv[5]),
            )
            _put6(D, c, _WV, mcross(_add6(vl, vn), sc))
            D[c, _BE], D[c, _BE + 1], D[c, _BE + 2] = be[0], be[1], be[2]
        _inertia10(kf, k, oR, op, Ic)
        h = _iact(Ic, k, twk)  # h = I t
        _coriolis12(Ic, k, twk, h, Cc)
        fk = _add6(_iact(Ic, k, tdk), fcross(twk, h))  # w_k = I tdot + t x* (I t) - f_ext (000 eqs. 1-2b)
        if has_fext:  # [n; f] in the link frame, about its origin -> base
            e = np.empty(6)
            for i in range(3):
                e[i] = oR[k, i, 0] * fext[k, 0] + oR[k, i, 1] * fext[k, 1] + oR[k, i, 2] * fext[k, 2]
                e[3 + i] = oR[k, i, 0] * fext[k, 3] + oR[k, i, 1] * fext[k, 4] + oR[k, i, 2] * fext[k, 5]
            e[0] += o1 * e[5] - o2 * e[4]
            e[1] += o2 * e[3] - o0 * e[5]
            e[2] += o0 * e[4] - o1 * e[3]
            fk = (fk[0] - e[0], fk[1] - e[1], fk[2] - e[2], fk[3] - e[3], fk[4] - e[4], fk[5] - e[5])
        _put6(F, k, 0, fk)
    for k in range(L - 1, -1, -1):  # backward recursion (000 Table 1, step 2)
        iv, nvk = ki[k, T.IDX_V], ki[k, T.NV]
        Fk = _get6(F, k, 0)
        for n in range(nvk):
            c = iv + n
            sc = _get6(D, c, _S)
            _put6(G, c, _Y, _iact(Ic, k, sc))  # Y = Ic S (= (S^T Ic)^T)
            # Z = Cc^T S = [C11^T Sw + Sv x c21; 0]
            G[c, _Z] = Cc[k, 0] * sc[0] + Cc[k, 3] * sc[1] + Cc[k, 6] * sc[2] + sc[4] * Cc[k, 11] - sc[5] * Cc[k, 10]
            G[c, _Z + 1] = Cc[k, 1] * sc[0] + Cc[k, 4] * sc[1] + Cc[k, 7] * sc[2] + sc[5] * Cc[k, 9] - sc[3] * Cc[k, 11]
            G[c, _Z + 2] = Cc[k, 2] * sc[0] + Cc[k, 5] * sc[1] + Cc[k, 8] * sc[2] + sc[3] * Cc[k, 10] - sc[4] * Cc[k, 9]
            # gam = s x* F - Ic alpha - Cc beta
            ia = _iact(Ic, k, _get6(D, c, _AL))
            cb = _cact(Cc, k, (D[c, _BE], D[c, _BE + 1], D[c, _BE + 2], 0.0, 0.0, 0.0))
            sf = fcross(sc, Fk)
            _put6(
                G,
                c,
                _GA,
                (
                    sf[0] - ia[0] - cb[0],
                    sf[1] - ia[1] - cb[1],
                    sf[2] - ia[2] - cb[2],
                    sf[3] - ia[3] - cb[3],
                    sf[4] - ia[4] - cb[4],
                    sf[5] - ia[5] - cb[5],
                ),
            )
            # rho = Cc s + Ic w
            _put6(G, c, _RH, _add6(_cact(Cc, k, sc), _iact(Ic, k, _get6(D, c, _WV))))
            tau[c] = sc[0] * Fk[0] + sc[1] * Fk[1] + sc[2] * Fk[2] + sc[3] * Fk[3] + sc[4] * Fk[4] + sc[5] * Fk[5]
            tau[c] += kf[k, T.ARM + n] * a[c]
        for r in range(iv, iv + nvk):  # rows and columns of joint k
            y6, z0, z1, z2 = _get6(G, r, _Y), G[r, _Z], G[r, _Z + 1], G[r, _Z + 2]
            for c in range(iv, iv + nvk):
                dq[r, c] = -(
                    y6[0] * D[c, _AL] + y6[1] * D[c, _AL + 1] + y6[2] * D[c, _AL + 2]
                    + y6[3] * D[c, _AL + 3] + y6[4] * D[c, _AL + 4] + y6[5] * D[c, _AL + 5]
                    + z0 * D[c, _BE] + z1 * D[c, _BE + 1] + z2 * D[c, _BE + 2]
                )  # fmt: skip
                dv[r, c] = (
                    z0 * D[c, 0] + z1 * D[c, 1] + z2 * D[c, 2]
                    + y6[0] * D[c, _WV] + y6[1] * D[c, _WV + 1] + y6[2] * D[c, _WV + 2]
                    + y6[3] * D[c, _WV + 3] + y6[4] * D[c, _WV + 4] + y6[5] * D[c, _WV + 5]
                )  # fmt: skip
                M[r, c] = (
                    y6[0] * D[c, 0] + y6[1] * D[c, 1] + y6[2] * D[c, 2]
                    + y6[3] * D[c, 3] + y6[4] * D[c, 4] + y6[5] * D[c, 5]
                )  # fmt: skip
            M[r, r] += kf[k, T.ARM + r - iv]
        if T.joint_type(ki, k) == UNIVERSAL:  # the first axis is fixed in the parent
            dq[iv, iv + 1] = (
                D[iv, 0] * G[iv + 1, _GA] + D[iv, 1] * G[iv + 1, _GA + 1] + D[iv, 2] * G[iv + 1, _GA + 2]
                + D[iv, 3] * G[iv + 1, _GA + 3] + D[iv, 4] * G[iv + 1, _GA + 4] + D[iv, 5] * G[iv + 1, _GA + 5]
            )  # fmt: skip
        for c in range(iv, iv + nvk):  # the supporting chain: rows of the ancestors, column c and back
            y6, ga, rh = _get6(G, c, _Y), _get6(G, c, _GA), _get6(G, c, _RH)
            z0, z1, z2 = G[c, _Z], G[c, _Z + 1], G[c, _Z + 2]
            j = ki[k, T.PARENT]
            while j >= 0:
                jv = ki[j, T.IDX_V]
                for r in range(jv, jv + ki[j, T.NV]):
                    s = _get6(D, r, _S)
                    al = _get6(D, r, _AL)
                    wr = _get6(D, r, _WV)
                    b0, b1, b2 = D[r, _BE], D[r, _BE + 1], D[r, _BE + 2]
                    dq[r, c] = s[0] * ga[0] + s[1] * ga[1] + s[2] * ga[2] + s[3] * ga[3] + s[4] * ga[4] + s[5] * ga[5]
                    dq[c, r] = -(
                        y6[0] * al[0] + y6[1] * al[1] + y6[2] * al[2] + y6[3] * al[3] + y6[4] * al[4] + y6[5] * al[5]
                        + z0 * b0 + z1 * b1 + z2 * b2
                    )  # fmt: skip
                    dv[r, c] = s[0] * rh[0] + s[1] * rh[1] + s[2] * rh[2] + s[3] * rh[3] + s[4] * rh[4] + s[5] * rh[5]
                    dv[c, r] = (
                        z0 * s[0] + z1 * s[1] + z2 * s[2]
                        + y6[0] * wr[0] + y6[1] * wr[1] + y6[2] * wr[2] + y6[3] * wr[3] + y6[4] * wr[4] + y6[5] * wr[5]
                    )  # fmt: skip
                    m = y6[0] * s[0] + y6[1] * s[1] + y6[2] * s[2] + y6[3] * s[3] + y6[4] * s[4] + y6[5] * s[5]
                    M[r, c] = m  # S_r^T Ic_k S_c
                    M[c, r] = m
                j = ki[j, T.PARENT]
        p = ki[k, T.PARENT]
        if p >= 0:  # composites: Ic, Cc, F of the parent's subtree
            for i in range(6):
                F[p, i] += F[k, i]
            for i in range(10):
                Ic[p, i] += Ic[k, i]
            for i in range(12):
                Cc[p, i] += Cc[k, i]
        # entries of rows outside the support and subtree of k stay zero
    return 0


@njit(cache=True, fastmath={"contract"})
def zero_unrelated(ki, nv, dq, dv, M):
    """Zero the entries (r, c) of dq, dv and M whose DOFs are on no common supporting chain (the
    entries :func:`derivatives_unchecked` leaves as they are).  With the depth-first numbering
    (the DOFs of the subtree of link k are idx_v[k] .. idx_v[k] + sub[k] - 1, checked here:
    every subtree's range inside its parent's), those of row r are the columns from the end of
    r's subtree on, and the transposed entries; otherwise every entry is zeroed."""
    L = ki.shape[0]
    sub = np.empty(L, dtype=np.int64)
    subtree_dofs(ki, sub)
    nested = True
    for k in range(L):
        iv, p = ki[k, T.IDX_V], ki[k, T.PARENT]
        lo, hi = (ki[p, T.IDX_V] + ki[p, T.NV], ki[p, T.IDX_V] + sub[p]) if p >= 0 else (0, nv)
        if iv < lo or iv + sub[k] > hi or p >= k:
            nested = False
    if not nested:
        for i in range(nv):
            for j in range(nv):
                dq[i, j] = 0.0
                dv[i, j] = 0.0
                M[i, j] = 0.0
        return
    for k in range(L):
        iv, end = ki[k, T.IDX_V], ki[k, T.IDX_V] + sub[k]
        for r in range(iv, iv + ki[k, T.NV]):
            for c in range(end, nv):
                dq[r, c] = 0.0
                dv[r, c] = 0.0
                M[r, c] = 0.0
                dq[c, r] = 0.0
                dv[c, r] = 0.0
                M[c, r] = 0.0


@njit(cache=True, fastmath={"contract"})
def all_finite(x, y, z):
    """Whether every entry of the three matrices is finite: one pass, no branch per entry
    (``inf * 0`` and ``nan * 0`` are nan)."""
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            acc += x[i, j] * 0.0 + y[i, j] * 0.0 + z[i, j] * 0.0
    return acc == 0.0


#: up to this many DOF the forward derivatives invert the GIM densely (:func:`cholesky_inverse`,
#: about nv^3 / 2 multiplications): below it that costs less than the recursive sweep of
#: :func:`.gim.minv_from_factors` (panda, 9 DOF: about 0.4 us against 1.8 us)
DENSE_MINV_MAX = 20


@njit(cache=True, fastmath={"contract"})
def cholesky_inverse(M, Minv, W):
    """Minv = M^-1 for a symmetric positive definite M by ``M = L L^T``: ``W = L^-1`` (lower; L in
    W's upper part first), ``Minv = W^T W``.  False (Minv unset) if a pivot is not positive
    (then the caller takes the recursive inverse, which reports a singular articulated inertia)."""
    n = M.shape[0]
    for j in range(n):  # L^T, row j, into W's upper triangle
        s = M[j, j]
        for k in range(j):
            s -= W[k, j] * W[k, j]
        if not s > 0.0:
            return False
        d = np.sqrt(s)
        W[j, j] = d
        for i in range(j + 1, n):
            t = M[j, i]
            for k in range(j):
                t -= W[k, j] * W[k, i]
            W[j, i] = t / d
    for j in range(n):  # L^-1 column j into W's lower part: W[i, j], i >= j (L[i, k] = W[k, i])
        Minv[j, j] = 1.0 / W[j, j]  # the diagonal of L^-1, kept in Minv while L's is in use
        for i in range(j + 1, n):
            t = W[j, i] * Minv[j, j]
            for k in range(j + 1, i):
                t += W[k, i] * W[k, j]
            W[i, j] = -t / W[i, i]
    for j in range(n):
        W[j, j] = Minv[j, j]
    for i in range(n):  # Minv = W^T W (lower-triangular W): entries k >= max(i, j)
        for j in range(i, n):
            t = 0.0
            for k in range(j, n):
                t += W[k, i] * W[k, j]
            Minv[i, j] = t
            Minv[j, i] = t
    return True


@njit_declared(STATE_SIGNATURE, fastmath={"contract"})
def inverse_dynamics_derivatives_state(kt, q, v, a, fext, tau, dq, dv, M):
    """Entry: checks the state (:func:`.entry.valid_state`), then the derivatives.  Status 0, -1
    (a value), -2 (a shape) or -3 (finite inputs, non-finite result)."""
    ki = kt.view(T.INT)
    nv = v.shape[0]
    status = valid_state(ki, q, v, a, fext, tau, np.empty((0, T.W)), nv)
    if status:
        return status
    if dq.shape != (nv, nv) or dv.shape != (nv, nv) or M.shape != (nv, nv):
        return -2
    zero_unrelated(ki, nv, dq, dv, M)
    derivatives_unchecked(ki, kt, q, v, a, fext, tau, dq, dv, M)
    if not all_finite(dq, dv, M):
        return -3
    return 0


@njit(cache=True, parallel=True)
def inverse_dynamics_derivatives_batch(kt, Q, V, A, FEXT, TAU, DQ, DV, MM, status):
    """The derivatives of every state of a leading batch axis, in parallel (FEXT (B, L, 6) or
    (0, 0, 6) for none)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        status[b] = inverse_dynamics_derivatives_state(kt, Q[b], V[b], A[b], fext, TAU[b], DQ[b], DV[b], MM[b])


@njit_declared(FD_SIGNATURE, fastmath={"contract"})
def forward_dynamics_derivatives_state(kt, work, q, v, tau, fext, qdd, ddq, ddv, Minv):
    """Entry: qdd = FD(q, v, tau) by the compiled O(n) forward dynamics (000 eqs. 18-23, as
    :func:`.entry.forward_dynamics_state`, which checks the inputs and reports a singular
    articulated inertia), ``M^-1 = U^-T D^-1 U^-1`` from the articulated factors of the same pass
    (002 eqs. A.13-A.22, :func:`.gim.minv_from_factors`, as ``inverse_mass_matrix``; up to
    :data:`DENSE_MINV_MAX` DOF the dense :func:`cholesky_inverse` of the GIM of the next pass,
    cheaper there), the derivatives of inverse dynamics at (q, v, qdd)
    (:func:`derivatives_unchecked`), then
    ``dqdd/dx = -M^-1 dtau/dx`` (implicit-function theorem) by two products, negated in the pass
    that checks them.  Status as :func:`inverse_dynamics_derivatives_state`."""
    ki, kf = kt.view(T.INT), kt
    nv = _nv(ki)
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    if ddq.shape != (nv, nv) or ddv.shape != (nv, nv) or Minv.shape != (nv, nv):
        return -2
    work = _work(ki, work, nv)
    status = forward_dynamics_passes(ki, kf, work, q, v, tau, fext, qdd, True)  # keeps Ihat, Ihat^-1
    if status:
        return status
    status = finite_result(qdd)
    if status:
        return status
    buf = np.empty(4 * nv * nv + nv)  # dtau_dq, dtau_dv, M, scratch and tau: one allocation
    dq = buf[: nv * nv].reshape((nv, nv))
    dv = buf[nv * nv : 2 * nv * nv].reshape((nv, nv))
    M = buf[2 * nv * nv : 3 * nv * nv].reshape((nv, nv))
    zero_unrelated(ki, nv, dq, dv, M)
    derivatives_unchecked(ki, kf, q, v, qdd, fext, buf[4 * nv * nv :], dq, dv, M)  # at qdd: inputs checked
    if not (nv <= DENSE_MINV_MAX and cholesky_inverse(M, Minv, buf[3 * nv * nv : 4 * nv * nv].reshape((nv, nv)))):
        minv_from_factors(ki, kf, work, nv, Minv)
    np.dot(Minv, dq, ddq)  # two square products (one nv x 2 nv product runs slower in BLAS here)
    np.dot(Minv, dv, ddv)
    acc = 0.0
    for i in range(nv):
        for j in range(nv):
            x, y = -ddq[i, j], -ddv[i, j]
            ddq[i, j] = x
            ddv[i, j] = y
            acc += x * 0.0 + y * 0.0 + Minv[i, j] * 0.0  # nan if any entry is not finite
    if not acc == 0.0:
        return -3
    return 0


@njit(cache=True, parallel=True)
def forward_dynamics_derivatives_batch(kt, Q, V, TAU, FEXT, QDD, DQ, DV, MINV, status):
    """:func:`forward_dynamics_derivatives_state` for every state of a leading batch axis, in
    parallel (each state with its own work array)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        work = np.empty((0, T.W))
        status[b] = forward_dynamics_derivatives_state(
            kt, work, Q[b], V[b], TAU[b], fext, QDD[b], DQ[b], DV[b], MINV[b]
        )
