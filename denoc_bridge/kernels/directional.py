"""Matrix-free derivatives of the forward dynamics of a tree in O(n): the directional derivative
(JVP) and the adjoint (VJP), each one forward and one backward recursion of 6-vectors (no 6x6
composite, no n x n array).

With ``qdd = FD(q, v, tau)`` and the implicit-function theorem on ``ID(q, v, FD) = tau``
(the dense derivatives, ``core/forward_derivatives.pxi``),

    dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv)                               (JVP)
    mu = M^-1 lam,  (dqdd_dq^T lam, dqdd_dv^T lam, dqdd_dtau^T lam)
        = (-dtau_dq^T mu, -dtau_dv^T mu, mu)                                   (VJP, M = M^T)

where ``dtau_dq`` and ``dtau_dv`` are the derivatives of inverse dynamics (RNEA, 000 eqs. 1-2b)
at (q, v, qdd).  The solves ``M^-1 x`` reuse the articulated factors of the forward dynamics
pass of the same call (000 Table 3, :func:`.lagrange.solve`).  Every link's quantities are in its
own frame (as Pinocchio's ``computeRNEADerivatives`` in local frames): motions pass from parent to
child by ``A_{k,b}`` and forces back by ``A_{k,b}^T`` (000 eqs. 4-5, the coded rotations E_k and
offsets r_k that the forward dynamics left in its work array), the link inertia is the table's 10
parameters and the joint axes S the rows of P_k, so no rotation matrix is formed.  The formulas
below are coordinate-free: each holds in any one frame.  For the
column ``c`` of joint k (``S_c``; the twist ``t_l`` and rate ``a_l`` of the frame the column moves
against, the parent's or a universal joint's node; ``t_n`` the twist after it)

    beta_c = S_c x t_l,   alpha_c = S_c x a_l - beta_c x t_l,   w_c = (t_l + t_n) x S_c

are the derivatives of the link twist and rate in the column's tangent direction (Carpentier &
Mansard 2018, the forward pass of ``core/derivative_passes.pxi``).  The tangent (forward-mode) RNEA carries,
per link, the tangents of its rate and twist and of its wrench ``F_k = I_k a_k + t_k x* I_k t_k``

    P_k = P_p + sum_c (w_c dv_c - alpha_c dq_c),   Q_k = Q_p + sum_c (S_c dv_c - beta_c dq_c)
    D_k = I_k P_k + C_k Q_k = I_k (P_k + Q_k x t_k) + Q_k x* h_k + t_k x* (I_k Q_k),  h_k = I_k t_k

(``C_k`` the link's Coriolis matrix, :func:`tangent_wrench`), and the backward force sweep sums
them with the rotation of the subtrees' wrenches by the joints below

    (dtau_dq dq + dtau_dv dv)_r = S_r^T E_j,   E_j = Dc_j + H_j,   E_p += A^T (E_k + s_k x* Fc_k)
    Dc_j = sum_{k in subtree(j)} D_k,   H_j = sum_{k strict descendant of j} s_k x* Fc_k

(``s_k = sum S_c dq_c`` over the columns of joint k, ``Fc`` the composite wrench; a universal
joint's first row also takes ``S_0^T (S_1 x* Fc_k) dq_1``).  The adjoint swaps the sums:

    U_k = U_p + sum_c S_c mu_c                      (forward: the rows' motion)
    Y_k = I_k U_k,  Z_k = C_k^T U_k = t_k x* (I_k U_k) - U_k x* h_k - I_k (t_k x U_k)
    (dtau_dq^T mu)_c = U_l . (S_c x* Fc_k) - Yc_k . alpha_c - Zc_k . beta_c
    (dtau_dv^T mu)_c = Zc_k . S_c + Yc_k . w_c       (backward: Yc, Zc, Fc subtree sums)

with ``U_l = U_p`` (``U_p + S_0 mu_0`` for the second column of a universal joint).  So a JVP is
the factorised forward dynamics, a forward and a backward sweep of 6-vectors and one solve; a VJP
one solve and the two transposed sweeps.  The sweeps run module by module (000's kinematic
modules, serial chains): along a module the recursions' vectors stay in registers, so a JVP
stores 12 doubles per link (D, F) and reads them back once.  O(n) time; the buffer
(:func:`buffer_size`) holds 48 doubles per link and 18 per DOF besides the forward dynamics work
array.  (An earlier version in base axes with 6x6 composite inertia and Coriolis matrices, formed
through per-link array views, cost about 3x more: the composites' congruences and the reference
counting of the views.)
"""

import numpy as np
from numba import njit, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared
from denoc_bridge.kernels.entry import finite_result, valid_state
from denoc_bridge.kernels.inverse_dynamics import modules, n_modules, offset, rotation, unit6
from denoc_bridge.kernels.joints import UNIVERSAL
from denoc_bridge.kernels.lagrange import factorised_forward_dynamics, solve
from denoc_bridge.kernels.prefetch import AHEAD, PREFETCH_LINKS, prefetch
from denoc_bridge.kernels.spatial6 import apply_A, apply_At, dot6, fcross, mcross

#: doubles of the buffer per link and per DOF (see :func:`_views`)
PER_LINK = 48
PER_DOF = 18

_M = types.float64[:, ::1]
_V = types.float64[::1]
#: kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out
JVP_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _V, _M, _V, _V, _V, _V, _V)
#: kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau
VJP_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _V, _M, _V, _V, _V, _V, _V)
ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True)
def buffer_size(L, nv):
    """Doubles of the buffer of a model of L links and nv DOFs."""
    return L * PER_LINK + nv * PER_DOF


@njit(cache=True)
def _views(buf, L, nv, wb):
    """(Wp, Wb, C): Wp a row of 24 per link, the (t, a, P, Q) or (t, a, U) that a module's last
    link passes to its child modules; Wb a row of ``wb`` per link for the backward sweep, (D or
    E, F) of the JVP (12) or (U, Y, Z, F) of the VJP (24); C a row of 18 per DOF, (alpha, beta,
    w) of the VJP."""
    Wp = buf[: 24 * L].reshape((L, 24))
    Wb = buf[24 * L : 24 * L + wb * L].reshape((L, wb))
    return Wp, Wb, buf[48 * L : 48 * L + PER_DOF * nv].reshape((nv, PER_DOF))


# 6-vectors as tuples (:mod:`.spatial6`: helpers on scalars cost no reference counting)
@njit(cache=True, inline="always")
def get6(A, k, o):
    return A[k, o], A[k, o + 1], A[k, o + 2], A[k, o + 3], A[k, o + 4], A[k, o + 5]


@njit(cache=True, inline="always")
def put6(A, k, o, x):
    A[k, o], A[k, o + 1], A[k, o + 2], A[k, o + 3], A[k, o + 4], A[k, o + 5] = x


@njit(cache=True, inline="always", fastmath={"contract"})
def add6(a, b):
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4], a[5] + b[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def axpy6(s, x, y):
    """y + s x."""
    return y[0] + s * x[0], y[1] + s * x[1], y[2] + s * x[2], y[3] + s * x[3], y[4] + s * x[4], y[5] + s * x[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def inertia_times(I, x):
    """M_k x = [I_O w + h x v; m v - h x w] for I = (m, h, I_O: xx xy xz yy yz zz), 000 eqs. 2a-2b."""
    m, h0, h1, h2 = I[0], I[1], I[2], I[3]
    w0, w1, w2, v0, v1, v2 = x
    return (
        I[4] * w0 + I[5] * w1 + I[6] * w2 + h1 * v2 - h2 * v1,
        I[5] * w0 + I[7] * w1 + I[8] * w2 + h2 * v0 - h0 * v2,
        I[6] * w0 + I[8] * w1 + I[9] * w2 + h0 * v1 - h1 * v0,
        m * v0 - h1 * w2 + h2 * w1,
        m * v1 - h2 * w0 + h0 * w2,
        m * v2 - h0 * w1 + h1 * w0,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def tangent_wrench(I, t, h, P, Q):
    """I P + C Q = I (P + Q x t) + Q x* h + t x* (I Q), h = I t: the tangent of the link wrench
    ``F = I a + t x* I t`` (000 eqs. 1-2b) for the tangents P of a and Q of t, with
    ``C u = I (u x t) + u x* h + t x* (I u)`` the link's Coriolis matrix."""
    x = inertia_times(I, add6(P, mcross(Q, t)))
    return add6(add6(x, fcross(Q, h)), fcross(t, inertia_times(I, Q)))


@njit(cache=True, inline="always", fastmath={"contract"})
def coriolis_transpose_times(I, t, h, U):
    """C^T U = t x* (I U) - U x* h - I (t x U), h = I t: the transpose of the Coriolis matrix of
    :func:`tangent_wrench` (from ``<f, a x b> = -<a x* f, b>``)."""
    x = fcross(t, inertia_times(I, U))
    return axpy6(-1.0, add6(fcross(U, h), inertia_times(I, mcross(t, U))), x)


@njit(cache=True, inline="always", fastmath={"contract"})
def link_wrench(I, t, a, fext, k, has_fext):
    """(h, F) = (I t, I a + t x* I t - f_ext) (000 eqs. 1-2b; f_ext [n; f] in the link frame
    about its origin)."""
    h = inertia_times(I, t)
    F = add6(inertia_times(I, a), fcross(t, h))
    if has_fext:
        F = axpy6(-1.0, (fext[k, 0], fext[k, 1], fext[k, 2], fext[k, 3], fext[k, 4], fext[k, 5]), F)
    return h, F


@njit(cache=True, inline="always")
def joint_axis(ki, work, L, nv, k, n):
    """S_c of column n of joint k in the link's axes: P_k = sign e_d, or the row of P_k."""
    d = T.dof_index(ki, k)
    if d >= 0:
        return unit6(d, float(T.dof_sign(ki, k)))
    return get6(work, T.p_row(L, nv, ki[k, T.IDX_V] + n), 0)


@njit(cache=True, inline="always")
def geometry(ki, kf, work, L, k):
    """E_k (code, c, s, e) and r_k with its zero pattern (000 eqs. 4-5, from the forward
    dynamics' geometry in ``work``)."""
    code, c, s, e = rotation(ki, work, k)
    r0, r1, r2 = offset(kf, work, L, k, code)
    rc = T.offset_code(ki, k) if code <= 2 else T.R_GENERAL
    return code, c, s, e, rc, r0, r1, r2


@njit(cache=True, inline="always", fastmath={"contract"})
def to_child(g, x):
    """A_{k,b} x: a motion of the parent's frame in link k's frame (:func:`.spatial6.apply_A`)."""
    return apply_A(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], x[0], x[1], x[2], x[3], x[4], x[5])


@njit(cache=True, inline="always", fastmath={"contract"})
def to_parent(g, y):
    """A_{k,b}^T y: a force of link k's frame in the parent's frame."""
    return apply_At(g[0], g[1], g[2], g[3], g[4], g[5], g[6], g[7], y[0], y[1], y[2], y[3], y[4], y[5])


@njit(cache=True, inline="always", fastmath={"contract"})
def rates(ki, work, L, nv, k, v, a, tp, ap):
    """(t_k, a_k, t_A, a_A): t_k = t_p + S qd, a_k = a_p + S qdd + t_p x S qd (000 eqs. 1-2b, the
    spatial rate) in link k's frame from the parent's (tp, ap, moved to it); for a universal
    joint the node between its rotations t_A = t_p + S_0 qd_0, a_A = a_p + S_0 qdd_0 +
    (t_p x S_0) qd_0 and the term ``(S_0 x S_1) qd_0 qd_1`` of a_k (else t_A, a_A = t_p, a_p)."""
    iv = ki[k, T.IDX_V]
    x, ak = ZERO6, ap
    for n in range(ki[k, T.NV]):
        s = joint_axis(ki, work, L, nv, k, n)
        x = axpy6(v[iv + n], s, x)
        ak = axpy6(a[iv + n], s, ak)
    ak = add6(ak, mcross(tp, x))
    if T.joint_type(ki, k) != UNIVERSAL:
        return add6(tp, x), ak, tp, ap
    s0, s1 = joint_axis(ki, work, L, nv, k, 0), joint_axis(ki, work, L, nv, k, 1)
    ak = axpy6(v[iv] * v[iv + 1], mcross(s0, s1), ak)
    ta = axpy6(v[iv], s0, tp)
    aa = axpy6(v[iv], mcross(tp, s0), axpy6(a[iv], s0, ap))
    return add6(tp, x), ak, ta, aa


@njit(cache=True, inline="always", fastmath={"contract"})
def column_terms(universal, n, s, tp, ap, tk, ta, aa):
    """(alpha, beta, w) of a column: beta = s x t_l, alpha = s x a_l - beta x t_l,
    w = (t_l + t_n) x s, the derivatives of the link twist (beta, w) and rate (alpha, w) in the
    column's tangent directions (dq, dqd); (t_l, a_l) the frame the column moves against, t_n
    the twist after it (a universal joint: its node)."""
    tl, al, tn = tp, ap, tk
    if universal and n == 1:
        tl, al = ta, aa
    elif universal and n == 0:
        tn = ta
    beta = mcross(s, tl)
    alpha = axpy6(-1.0, mcross(beta, tl), mcross(s, al))
    return alpha, beta, mcross(add6(tl, tn), s)


@njit(cache=True, fastmath={"contract"})
def tangent_forward(ki, kf, work, v, a, fext, dq, dv, buf):
    """The forward sweep of the tangent RNEA at (q, v, a) in the direction (dq, dv), in link
    frames, module by module (the kinematic modules of 000: serial chains, carried in
    registers; a module's last link keeps (t, a, P, Q) for its child modules): D_k and the
    wrench F_k of every link (000 eqs. 1-2b) for :func:`tangent_backward`."""
    L, nv = ki.shape[0], v.shape[0]
    Wp, Wb, _ = _views(buf, L, nv, 12)
    grav = (0.0, 0.0, 0.0, -kf[0, T.GRAV], -kf[0, T.GRAV + 1], -kf[0, T.GRAV + 2]) if L > 0 else ZERO6
    has_fext, far = fext.shape[0] > 0, L > PREFETCH_LINKS
    for i in range(n_modules(ki)):
        first, end, _ = modules(ki, i)
        p = ki[first, T.PARENT]
        if p < 0:  # the base at rest, gravity as its acceleration
            t, ab, P, Q = ZERO6, grav, ZERO6, ZERO6
        else:
            t, ab, P, Q = get6(Wp, p, 0), get6(Wp, p, 6), get6(Wp, p, 12), get6(Wp, p, 18)
        for k in range(first, end):  # (t, a, P, Q) of the parent, in its frame, to link k's
            if far:  # past the caches: the table's and the geometry's rows ahead
                prefetch(kf, k + AHEAD, 0)
                prefetch(kf, k + AHEAD, 8)
                prefetch(work, k + AHEAD, 0)
            iv = ki[k, T.IDX_V]
            g = geometry(ki, kf, work, L, k)
            tp, ap, P, Q = to_child(g, t), to_child(g, ab), to_child(g, P), to_child(g, Q)
            t, ab, ta, aa = rates(ki, work, L, nv, k, v, a, tp, ap)
            universal = T.joint_type(ki, k) == UNIVERSAL
            for n in range(ki[k, T.NV]):
                c = iv + n
                s = joint_axis(ki, work, L, nv, k, n)
                alpha, beta, w = column_terms(universal, n, s, tp, ap, t, ta, aa)
                P = axpy6(-dq[c], alpha, axpy6(dv[c], w, P))  # P_k = P_p + sum (w dv - alpha dq)
                Q = axpy6(-dq[c], beta, axpy6(dv[c], s, Q))  # Q_k = Q_p + sum (S dv - beta dq)
            I = T.inertia10(kf, k)
            h, F = link_wrench(I, t, ab, fext, k, has_fext)
            put6(Wb, k, 0, tangent_wrench(I, t, h, P, Q))  # D_k
            put6(Wb, k, 6, F)
        put6(Wp, end - 1, 0, t)
        put6(Wp, end - 1, 6, ab)
        put6(Wp, end - 1, 12, P)
        put6(Wp, end - 1, 18, Q)


@njit(cache=True, fastmath={"contract"})
def tangent_backward(ki, kf, work, nv, dq, buf, out):
    """out = dtau_dq dq + dtau_dv dv: the backward force sweep of the tangent RNEA after
    :func:`tangent_forward`, ``S_r^T E_j`` with ``E_j = Dc_j + H_j`` summed in one recursion,
    ``E_p += A^T (E_k + s_k x* Fc_k)`` and ``Fc_p += A^T Fc_k`` (module docstring; carried along
    a module, added to the parent module's last link)."""
    L = ki.shape[0]
    _, Wb, _ = _views(buf, L, nv, 12)
    far = L > PREFETCH_LINKS
    for i in range(n_modules(ki) - 1, -1, -1):
        first, end, _ = modules(ki, i)
        E, F = get6(Wb, end - 1, 0), get6(Wb, end - 1, 6)
        for k in range(end - 1, first - 1, -1):
            if far:  # past the caches: the rows behind
                prefetch(kf, k - AHEAD, 0)
                prefetch(work, k - AHEAD, 0)
                prefetch(Wb, k - AHEAD, 0)
            iv, p = ki[k, T.IDX_V], ki[k, T.PARENT]
            s = ZERO6  # s_k = sum S_c dq_c
            for n in range(ki[k, T.NV]):
                S = joint_axis(ki, work, L, nv, k, n)
                out[iv + n] = dot6(S, E)
                s = axpy6(dq[iv + n], S, s)
            if T.joint_type(ki, k) == UNIVERSAL:  # row 0, column 1: the first axis is an ancestor
                s0, s1 = joint_axis(ki, work, L, nv, k, 0), joint_axis(ki, work, L, nv, k, 1)
                out[iv] += dot6(s0, fcross(s1, F)) * dq[iv + 1]
            if p < 0:
                continue
            g = geometry(ki, kf, work, L, k)
            E, F = to_parent(g, add6(E, fcross(s, F))), to_parent(g, F)  # E_k + s_k x* Fc_k
            E, F = add6(get6(Wb, p, 0), E), add6(get6(Wb, p, 6), F)
            if k == first:
                put6(Wb, p, 0, E)
                put6(Wb, p, 6, F)


@njit(cache=True, fastmath={"contract"})
def adjoint_forward(ki, kf, work, v, a, fext, mu, buf):
    """The forward sweep of the adjoint at (q, v, a) for the weights mu, in link frames, module
    by module as :func:`tangent_forward`: each column's alpha, beta, w and each link's U,
    Y = I U, Z = C^T U and wrench F (000 eqs. 1-2b; module docstring)."""
    L, nv = ki.shape[0], v.shape[0]
    Wp, Wb, C = _views(buf, L, nv, 24)
    grav = (0.0, 0.0, 0.0, -kf[0, T.GRAV], -kf[0, T.GRAV + 1], -kf[0, T.GRAV + 2]) if L > 0 else ZERO6
    has_fext, far = fext.shape[0] > 0, L > PREFETCH_LINKS
    for i in range(n_modules(ki)):
        first, end, _ = modules(ki, i)
        p = ki[first, T.PARENT]
        if p < 0:
            t, ab, U = ZERO6, grav, ZERO6
        else:
            t, ab, U = get6(Wp, p, 0), get6(Wp, p, 6), get6(Wp, p, 12)
        for k in range(first, end):  # (t, a, U) of the parent, in its frame, to link k's
            if far:  # past the caches: the table's and the geometry's rows ahead
                prefetch(kf, k + AHEAD, 0)
                prefetch(kf, k + AHEAD, 8)
                prefetch(work, k + AHEAD, 0)
            iv = ki[k, T.IDX_V]
            g = geometry(ki, kf, work, L, k)
            tp, ap, U = to_child(g, t), to_child(g, ab), to_child(g, U)
            t, ab, ta, aa = rates(ki, work, L, nv, k, v, a, tp, ap)
            universal = T.joint_type(ki, k) == UNIVERSAL
            for n in range(ki[k, T.NV]):
                c = iv + n
                s = joint_axis(ki, work, L, nv, k, n)
                alpha, beta, w = column_terms(universal, n, s, tp, ap, t, ta, aa)
                put6(C, c, 0, alpha)
                put6(C, c, 6, beta)
                put6(C, c, 12, w)
                U = axpy6(mu[c], s, U)  # U_k = U_p + sum S_c mu_c
            I = T.inertia10(kf, k)
            h, F = link_wrench(I, t, ab, fext, k, has_fext)
            put6(Wb, k, 0, U)
            put6(Wb, k, 6, inertia_times(I, U))  # Y_k
            put6(Wb, k, 12, coriolis_transpose_times(I, t, h, U))  # Z_k
            put6(Wb, k, 18, F)
        put6(Wp, end - 1, 0, t)
        put6(Wp, end - 1, 6, ab)
        put6(Wp, end - 1, 12, U)


@njit(cache=True, fastmath={"contract"})
def adjoint_backward(ki, kf, work, nv, mu, buf, gq, gv):
    """gq = dtau_dq^T mu, gv = dtau_dv^T mu after :func:`adjoint_forward`: the subtree sums
    Yc, Zc, Fc (carried along a module) and, column by column, the products of the module
    docstring (``U_l = U_k - sum S_c mu_c``, + S_0 mu_0 for a universal joint's second column)."""
    L = ki.shape[0]
    _, Wb, C = _views(buf, L, nv, 24)
    far = L > PREFETCH_LINKS
    for i in range(n_modules(ki) - 1, -1, -1):
        first, end, _ = modules(ki, i)
        Y, Z, F = get6(Wb, end - 1, 6), get6(Wb, end - 1, 12), get6(Wb, end - 1, 18)
        for k in range(end - 1, first - 1, -1):
            if far:  # past the caches: the rows behind
                prefetch(kf, k - AHEAD, 0)
                prefetch(work, k - AHEAD, 0)
                prefetch(Wb, k - AHEAD, 0)
                prefetch(Wb, k - AHEAD, 16)
            iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
            U = get6(Wb, k, 0)
            for n in range(nvk):
                U = axpy6(-mu[iv + n], joint_axis(ki, work, L, nv, k, n), U)  # U_p in link k's frame
            universal = T.joint_type(ki, k) == UNIVERSAL
            for n in range(nvk):
                c = iv + n
                S = joint_axis(ki, work, L, nv, k, n)
                if universal and n == 1:  # the first axis is an ancestor of the second
                    U = axpy6(mu[iv], joint_axis(ki, work, L, nv, k, 0), U)
                gq[c] = dot6(U, fcross(S, F)) - dot6(Y, get6(C, c, 0)) - dot6(Z, get6(C, c, 6))
                gv[c] = dot6(Z, S) + dot6(Y, get6(C, c, 12))
            if p < 0:
                continue
            g = geometry(ki, kf, work, L, k)
            Y, Z, F = to_parent(g, Y), to_parent(g, Z), to_parent(g, F)
            Y, Z, F = add6(get6(Wb, p, 6), Y), add6(get6(Wb, p, 12), Z), add6(get6(Wb, p, 18), F)
            if k == first:
                put6(Wb, p, 6, Y)
                put6(Wb, p, 12, Z)
                put6(Wb, p, 18, F)


@njit(cache=True)
def _valid_vector(x, nv):
    """0, -2 for a wrong size, -1 for a value that is not finite."""
    if x.shape[0] != nv:
        return -2
    for i in range(nv):
        if not np.isfinite(x[i]):
            return -1
    return 0


@njit(cache=True)
def _prologue(kt, work, buf, q, v, tau, fext, qdd):
    """Checks, then the factorised forward dynamics into qdd (its factors and geometry stay in
    ``work`` for the solve and the sweeps).  Status as :mod:`.entry` (-4: ``buf`` has the wrong size)."""
    ki = kt.view(T.INT)
    nv = v.shape[0]
    L = ki.shape[0]
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    if work.shape[0] == 0 or buf.shape[0] != buffer_size(L, nv):
        return -4
    status = factorised_forward_dynamics(ki, kt, work, q, v, tau, fext, qdd)
    if status:
        return status
    return finite_result(qdd)


@njit_declared(JVP_SIGNATURE)
def forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out):
    """qdd = FD(q, v, tau) and out = dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv): the
    factorised forward dynamics, the tangent RNEA (one forward, one backward sweep) and one solve
    with the factors.  Status 0, -1 (a value), -2 (a shape), -3 (overflow), -4 (``buf``
    or ``work`` of the wrong size), k + 1 (singular articulated inertia of link k)."""
    nv = v.shape[0]
    status = _valid_vector(dq, nv) or _valid_vector(dv, nv) or _valid_vector(dtau, nv)
    if status:
        return status
    if out.shape[0] != nv:
        return -2
    status = _prologue(kt, work, buf, q, v, tau, fext, qdd)
    if status:
        return status
    ki = kt.view(T.INT)
    rhs = buf[48 * ki.shape[0] : 48 * ki.shape[0] + nv]  # the VJP's per-DOF rows, unused here
    tangent_forward(ki, kt, work, v, qdd, fext, dq, dv, buf)
    tangent_backward(ki, kt, work, nv, dq, buf, rhs)
    for i in range(nv):
        rhs[i] = dtau[i] - rhs[i]
    solve(ki, kt, work, rhs, out, ki.shape[0])
    return finite_result(out)


@njit_declared(VJP_SIGNATURE)
def forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau):
    """qdd = FD(q, v, tau), gtau = mu = M^-1 lam, gq = -dtau_dq^T mu, gv = -dtau_dv^T mu (the
    products of ``lam`` with dqdd_dq, dqdd_dv, dqdd_dtau).  Status as
    :func:`forward_dynamics_jvp_state`."""
    nv = v.shape[0]
    status = _valid_vector(lam, nv)
    if status:
        return status
    if gq.shape[0] != nv or gv.shape[0] != nv or gtau.shape[0] != nv:
        return -2
    status = _prologue(kt, work, buf, q, v, tau, fext, qdd)
    if status:
        return status
    ki = kt.view(T.INT)
    solve(ki, kt, work, lam, gtau, ki.shape[0])
    adjoint_forward(ki, kt, work, v, qdd, fext, gtau, buf)
    adjoint_backward(ki, kt, work, nv, gtau, buf, gq, gv)
    for i in range(nv):
        gq[i] = -gq[i]
        gv[i] = -gv[i]
    status = finite_result(gq)
    return status if status else finite_result(gv)
