"""Compiled closed-loop dynamics: cut-joint constraints, Lagrange multipliers, projection and a
constrained RK4 run (004 eqs. 12-15; the readable version is :mod:`denoc_bridge.loops`).

The entries take the model and its cut joints as two arrays built once per model by
:func:`denoc_bridge.loops._compiled` (few arguments: each array argument costs dispatch time):

``pi``  int64 (1 + L + n_loops, 6): row 0 = [L, n_loops, m rows, nv, nq, 0]; row 1 + k =
        [parent, joint type, idx_q, nq, idx_v, nv] of link k; row 1 + L + l = [type code,
        link1, link2, first row, 0, 0] of cut joint l;
``pf``  float64 (1 + L + n_loops, 30): row 1 + k = [axis, axis2, joint rotation (9,
        row-major), joint translation] of link k; row 1 + L + l = [R1 (9), p1, R2 (9), p2, b1,
        b2] of cut joint l, b1 and b2 the normals of its axis in the joint frame;
``sb``  float64 scratch of :func:`scratch_size` numbers, carved into the tuples ``ws``
        (kinematics) and ``ds`` (constraints) by :func:`_unpack`.

World kinematics convention (000 §2): ``R[k]``, ``o[k]`` orientation and origin of link k;
``Pw[j]`` the world 6-vector [angular; linear at o_k] of dof j of joint k; ``w, od`` the
angular velocity and origin velocity; ``wd0, odd0`` their rates at qddot = 0 without gravity.
"""

import numpy as np
from numba import njit, types

from .configuration import integrate
from .entry import forward_dynamics_unchecked, valid_state
from .integrators import applied, is_vector_space, step_configuration, tangent_rate
from .joints import joint_subspace, joint_subspace_rate, joint_transform

WELD, SPHERICAL, REVOLUTE, PRISMATIC = 0, 1, 2, 3
_M, _V, _F = types.float64[:, ::1], types.float64[::1], types.float64
ACCEL_SIGNATURE = types.UniTuple(types.int64, 2)(_M, _M, _M, types.int64[:, ::1], _M, _V, _V, _V, _V, _M, _F, _F,
                                                 _F, _V)


@njit(cache=True, inline="always")
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True)
def world_kinematics(mt, q, v, with_v, ws):
    """Forward recursion: world placement, joint columns and (with_v) velocities and
    velocity-product accelerations of every link (000 eqs. 7-8 in the inertial frame)."""
    parent, jtype, axis, axis2, jrot, jtrans, idx_q, nq_j, idx_v, nv_j = mt   # jrot: (L, 9) row-major
    R, o, Pw, w, od, wd0, odd0 = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6]
    RJ, pJ, tmpR, Pl, c, t3, d, u = ws[7], ws[8], ws[9], ws[10], ws[11], ws[12], ws[13], ws[14]
    for k in range(parent.shape[0]):
        b, v0, z = parent[k], idx_v[k], nv_j[k]
        qk = q[idx_q[k]:idx_q[k] + nq_j[k]]
        joint_transform(jtype[k], axis[k], axis2[k], qk, RJ, pJ, tmpR)
        joint_subspace(jtype[k], axis[k], axis2[k], qk, Pl[:z])
        for i in range(3):                                      # R_k = R_b R0 RJ, o_k = o_b + R_b (p0 + R0 pJ)
            for j in range(3):
                tmpR[i, j] = jrot[k, 3 * i] * RJ[0, j] + jrot[k, 3 * i + 1] * RJ[1, j] + jrot[k, 3 * i + 2] * RJ[2, j]
            t3[i] = jtrans[k, i] + jrot[k, 3 * i] * pJ[0] + jrot[k, 3 * i + 1] * pJ[1] + jrot[k, 3 * i + 2] * pJ[2]
        for i in range(3):
            if b < 0:
                o[k, i] = t3[i]
                for j in range(3):
                    R[k, i, j] = tmpR[i, j]
            else:
                o[k, i] = o[b, i] + R[b, i, 0] * t3[0] + R[b, i, 1] * t3[1] + R[b, i, 2] * t3[2]
                for j in range(3):
                    R[k, i, j] = R[b, i, 0] * tmpR[0, j] + R[b, i, 1] * tmpR[1, j] + R[b, i, 2] * tmpR[2, j]
        for dd in range(z):                                     # P_k in world coordinates
            for i in range(3):
                Pw[v0 + dd, i] = R[k, i, 0] * Pl[dd, 0] + R[k, i, 1] * Pl[dd, 1] + R[k, i, 2] * Pl[dd, 2]
                Pw[v0 + dd, 3 + i] = R[k, i, 0] * Pl[dd, 3] + R[k, i, 1] * Pl[dd, 4] + R[k, i, 2] * Pl[dd, 5]
        if with_v:
            _velocity_step(k, b, v0, z, jtype[k], axis[k], axis2[k], v, ws)


@njit(cache=True, inline="always")
def _crossv(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True)
def _velocity_step(k, b, v0, z, jt, ax, ax2, v, ws):
    """omega_k, odot_k and their rates at qddot = 0 (the classical accelerations):
    omega_k = omega_b + P qdot, odot_k = odot_b + omega_b x d + P_lin qdot, and their rates
    with Pdot qdot = omega_k x (P qdot) (+ R dP_local/dt qdot for the universal joint)."""
    R, o, Pw, w, od, wd0, odd0 = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6]
    Pl, c = ws[10], ws[11]
    u0 = u1 = u2 = t0 = t1 = t2 = 0.0                           # P_k qdot_k, angular and linear
    for dd in range(z):
        x = v[v0 + dd]
        p = Pw[v0 + dd]
        u0 += p[0] * x
        u1 += p[1] * x
        u2 += p[2] * x
        t0 += p[3] * x
        t1 += p[4] * x
        t2 += p[5] * x
    joint_subspace_rate(jt, ax, ax2, Pl[:z], v[v0:v0 + z], c, c[3:6])
    c0 = R[k, 0, 0] * c[0] + R[k, 0, 1] * c[1] + R[k, 0, 2] * c[2]
    c1 = R[k, 1, 0] * c[0] + R[k, 1, 1] * c[1] + R[k, 1, 2] * c[2]
    c2 = R[k, 2, 0] * c[0] + R[k, 2, 1] * c[1] + R[k, 2, 2] * c[2]
    if b >= 0:
        wb0, wb1, wb2, ob0, ob1, ob2 = w[b, 0], w[b, 1], w[b, 2], o[b, 0], o[b, 1], o[b, 2]
        vb0, vb1, vb2, ab0, ab1, ab2 = od[b, 0], od[b, 1], od[b, 2], wd0[b, 0], wd0[b, 1], wd0[b, 2]
        eb0, eb1, eb2 = odd0[b, 0], odd0[b, 1], odd0[b, 2]
    else:
        wb0 = wb1 = wb2 = ob0 = ob1 = ob2 = vb0 = vb1 = vb2 = ab0 = ab1 = ab2 = eb0 = eb1 = eb2 = 0.0
    d0, d1, d2 = o[k, 0] - ob0, o[k, 1] - ob1, o[k, 2] - ob2
    w0, w1, w2 = wb0 + u0, wb1 + u1, wb2 + u2
    x0, x1, x2 = _crossv(wb0, wb1, wb2, d0, d1, d2)
    v0_, v1_, v2_ = vb0 + x0 + t0, vb1 + x1 + t1, vb2 + x2 + t2
    w[k, 0], w[k, 1], w[k, 2] = w0, w1, w2
    od[k, 0], od[k, 1], od[k, 2] = v0_, v1_, v2_
    y0, y1, y2 = _crossv(w0, w1, w2, u0, u1, u2)
    wd0[k, 0], wd0[k, 1], wd0[k, 2] = ab0 + y0 + c0, ab1 + y1 + c1, ab2 + y2 + c2
    y0, y1, y2 = _crossv(w0, w1, w2, t0, t1, t2)
    x0, x1, x2 = _crossv(ab0, ab1, ab2, d0, d1, d2)
    s0, s1, s2 = _crossv(wb0, wb1, wb2, v0_ - vb0, v1_ - vb1, v2_ - vb2)
    odd0[k, 0] = eb0 + x0 + s0 + y0
    odd0[k, 1] = eb1 + x1 + s1 + y1
    odd0[k, 2] = eb2 + x2 + s2 + y2


@njit(cache=True)
def _log3(R, out):
    """The rotation vector of the 3 x 3 rotation R (robust near 0 and pi)."""
    cth = min(1.0, max(-1.0, (R[0, 0] + R[1, 1] + R[2, 2] - 1.0) / 2.0))
    th = np.arccos(cth)
    out[0], out[1], out[2] = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    if th < 1e-6:
        f = 0.5 * (1.0 + th * th / 6.0)
    elif np.pi - th < 1e-6:
        kk = 0
        for i in range(1, 3):
            if R[i, i] > R[kk, kk]:
                kk = i
        bkk = max(0.5 * (R[kk, kk] + 1.0), 1e-300)
        for i in range(3):
            out[i] = th * 0.5 * (R[i, kk] + (1.0 if i == kk else 0.0)) / np.sqrt(bkk)
        return
    else:
        f = th / (2.0 * np.sin(th))
    for i in range(3):
        out[i] *= f


@njit(cache=True)
def _frame(ws, link, Rloc, ploc, Rout, xout):
    """World orientation and origin of the frame (Rloc (9, row-major), ploc) on link (-1: the
    base)."""
    R, o = ws[0], ws[1]
    for i in range(3):
        if link < 0:
            xout[i] = ploc[i]
            for j in range(3):
                Rout[i, j] = Rloc[3 * i + j]
        else:
            xout[i] = o[link, i] + R[link, i, 0] * ploc[0] + R[link, i, 1] * ploc[1] + R[link, i, 2] * ploc[2]
            for j in range(3):
                Rout[i, j] = R[link, i, 0] * Rloc[j] + R[link, i, 1] * Rloc[3 + j] + R[link, i, 2] * Rloc[6 + j]


@njit(cache=True)
def _point_jacobian(mt, ws, link, x, sign, Jw, Jx):
    """Jw += sign * (angular velocity of link), Jx += sign * (velocity of the world point x on
    link): the columns A_{x,k} P_k of 000 eq. 7b along the path to the root."""
    parent, idx_v, nv_j = mt[0], mt[8], mt[9]
    o, Pw = ws[1], ws[2]
    k = link
    while k >= 0:
        s0, s1, s2 = o[k, 0] - x[0], o[k, 1] - x[1], o[k, 2] - x[2]
        for j in range(idx_v[k], idx_v[k] + nv_j[k]):
            p = Pw[j]
            Jw[0, j] += sign * p[0]
            Jw[1, j] += sign * p[1]
            Jw[2, j] += sign * p[2]
            Jx[0, j] += sign * (p[3] + s1 * p[2] - s2 * p[1])
            Jx[1, j] += sign * (p[4] + s2 * p[0] - s0 * p[2])
            Jx[2, j] += sign * (p[5] + s0 * p[1] - s1 * p[0])
        k = parent[k]


@njit(cache=True)
def _point_motion(ws, link, x, out):
    """out rows: omega, xdot, omegadot0, xddot0 of the world point x on link (zeros: base)."""
    if link < 0:
        out[:] = 0.0
        return
    o, w, od, wd0, odd0 = ws[1], ws[3], ws[4], ws[5], ws[6]
    s0, s1, s2 = x[0] - o[link, 0], x[1] - o[link, 1], x[2] - o[link, 2]
    w0, w1, w2 = w[link, 0], w[link, 1], w[link, 2]
    a0, a1, a2 = _crossv(w0, w1, w2, s0, s1, s2)
    b0, b1, b2 = _crossv(w0, w1, w2, a0, a1, a2)
    c0, c1, c2 = _crossv(wd0[link, 0], wd0[link, 1], wd0[link, 2], s0, s1, s2)
    out[0, 0], out[0, 1], out[0, 2] = w0, w1, w2
    out[1, 0], out[1, 1], out[1, 2] = od[link, 0] + a0, od[link, 1] + a1, od[link, 2] + a2
    out[2, 0], out[2, 1], out[2, 2] = wd0[link, 0], wd0[link, 1], wd0[link, 2]
    out[3, 0], out[3, 1], out[3, 2] = odd0[link, 0] + c0 + b0, odd0[link, 1] + c1 + b1, odd0[link, 2] + c2 + b2


@njit(cache=True)
def loop_rows(mt, lt, ws, with_bias, phi, C, gamma):
    """phi, C = D* N (004 eq. 15) and Cdot qdot (eq. 13) of every cut joint (rows as in the
    table of :mod:`denoc_bridge.loops`); world_kinematics must have run (with v for the bias)."""
    li, lf = lt
    J, t = ws[15], ws[16]                                       # Jw1, Jx1, Jw2, Jx2 (3 x nv each)
    RF1, RF2, Rrel, x1, x2, dvec, rot, lg = t[0:3], t[3:6], t[6:9], t[9], t[10], t[11], t[12], t[13]
    m1, m2, B, tmp = t[14:18], t[18:22], t[22:24], t[24]
    for l in range(li.shape[0]):
        typ, l1, l2, r = li[l, 0], li[l, 1], li[l, 2], li[l, 3]
        _frame(ws, l1, lf[l, 0:9], lf[l, 9:12], RF1, x1)
        _frame(ws, l2, lf[l, 12:21], lf[l, 21:24], RF2, x2)
        J[:] = 0.0
        _point_jacobian(mt, ws, l1, x1, 1.0, J[0], J[1])
        _point_jacobian(mt, ws, l2, x2, 1.0, J[2], J[3])
        for i in range(3):
            for j in range(3):
                Rrel[i, j] = RF1[0, i] * RF2[0, j] + RF1[1, i] * RF2[1, j] + RF1[2, i] * RF2[2, j]
        _log3(Rrel, lg)
        for i in range(3):
            dvec[i] = x2[i] - x1[i]
            rot[i] = RF1[i, 0] * lg[0] + RF1[i, 1] * lg[1] + RF1[i, 2] * lg[2]
        for jn in range(2):
            for i in range(3):
                B[jn, i] = RF1[i, 0] * lf[l, 24 + 3 * jn] + RF1[i, 1] * lf[l, 25 + 3 * jn] + RF1[i, 2] * lf[l, 26 + 3 * jn]
        if with_bias:
            _point_motion(ws, l1, x1, m1)
            _point_motion(ws, l2, x2, m2)
        if typ != PRISMATIC:                                    # x_2 - x_1 = 0
            for i in range(3):
                phi[r + i] = dvec[i]
                for j in range(C.shape[1]):
                    C[r + i, j] = J[3, i, j] - J[1, i, j]
                if with_bias:
                    gamma[r + i] = m2[3, i] - m1[3, i]
            r += 3
        if typ == WELD or typ == PRISMATIC:                     # no relative rotation
            for i in range(3):
                phi[r + i] = rot[i]
                for j in range(C.shape[1]):
                    C[r + i, j] = J[2, i, j] - J[0, i, j]
                if with_bias:
                    gamma[r + i] = m2[2, i] - m1[2, i]
            r += 3
        if typ == REVOLUTE or typ == PRISMATIC:
            _normal_rows(typ, r, l, lf, lg, B, dvec, J, m1, m2, with_bias, tmp, phi, C, gamma)


@njit(cache=True)
def _normal_rows(typ, r, l, lf, lg, B, dvec, J, m1, m2, with_bias, tmp, phi, C, gamma):
    """The two rows b_j . (...) of a revolute (relative rotation) or prismatic (offset) cut."""
    nv = C.shape[1]
    for jn in range(2):
        b = B[jn]
        if typ == REVOLUTE:
            phi[r + jn] = lf[l, 24 + 3 * jn] * lg[0] + lf[l, 25 + 3 * jn] * lg[1] + lf[l, 26 + 3 * jn] * lg[2]
            for j in range(nv):
                C[r + jn, j] = (b[0] * (J[2, 0, j] - J[0, 0, j]) + b[1] * (J[2, 1, j] - J[0, 1, j])
                                + b[2] * (J[2, 2, j] - J[0, 2, j]))
            if with_bias:                                       # d/dt (b . wrel), bdot = w1 x b
                _cross(m1[0], b, tmp)
                g = 0.0
                for i in range(3):
                    g += tmp[i] * (m2[0, i] - m1[0, i]) + b[i] * (m2[2, i] - m1[2, i])
                gamma[r + jn] = g
        else:
            phi[r + jn] = b[0] * dvec[0] + b[1] * dvec[1] + b[2] * dvec[2]
            _cross(b, dvec, tmp)                                # + (b x d) . omega_1
            for j in range(nv):
                s = 0.0
                for i in range(3):
                    s += b[i] * (J[3, i, j] - J[1, i, j]) + tmp[i] * J[0, i, j]
                C[r + jn, j] = s
            if with_bias:
                _prismatic_bias(b, dvec, m1, m2, r + jn, gamma)


@njit(cache=True)
def _prismatic_bias(b, dvec, m1, m2, row, gamma):
    """d2/dt2 (b . d) at qddot = 0 with b on link 1: 2 bdot.ddot + b.dd0 + bddot.d."""
    bd0, bd1, bd2 = _crossv(m1[0, 0], m1[0, 1], m1[0, 2], b[0], b[1], b[2])
    wb0, wb1, wb2 = _crossv(m1[0, 0], m1[0, 1], m1[0, 2], bd0, bd1, bd2)
    e0, e1, e2 = _crossv(m1[2, 0], m1[2, 1], m1[2, 2], b[0], b[1], b[2])
    g = 2.0 * (bd0 * (m2[1, 0] - m1[1, 0]) + bd1 * (m2[1, 1] - m1[1, 1]) + bd2 * (m2[1, 2] - m1[1, 2]))
    for i in range(3):
        g += b[i] * (m2[3, i] - m1[3, i])
    g += (e0 + wb0) * dvec[0] + (e1 + wb1) * dvec[1] + (e2 + wb2) * dvec[2]
    gamma[row] = g


@njit(cache=True)
def independent_rows(C, rtol, Q, rows):
    """Rank r and, in rows[:r] (increasing), a maximal set of independent rows of C: modified
    Gram-Schmidt with pivoting on the rows (as QR with column pivoting of C^T); Q is scratch."""
    m, nv = C.shape
    scale = 0.0
    for i in range(m):
        rows[i] = 0                                             # 0: free, 1: chosen
        s = 0.0
        for j in range(nv):
            Q[i, j] = C[i, j]
            s += C[i, j] * C[i, j]
        scale = max(scale, np.sqrt(s))
    rank = 0
    for _ in range(m):
        p, best = -1, rtol * scale
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(nv):
                    s += Q[i, j] * Q[i, j]
                if np.sqrt(s) > best:
                    p, best = i, np.sqrt(s)
        if p < 0:
            break
        rows[p] = 1
        rank += 1
        for j in range(nv):
            Q[p, j] /= best
        for i in range(m):
            if rows[i] == 0:
                s = 0.0
                for j in range(nv):
                    s += Q[i, j] * Q[p, j]
                for j in range(nv):
                    Q[i, j] -= s * Q[p, j]
    r = 0
    for i in range(m):
        if rows[i] == 1:
            rows[r] = i
            r += 1
    return rank


@njit(cache=True)
def cholesky_solve(K, b, x):
    """x = K^-1 b for a symmetric positive definite K (overwritten by its factor); False if
    K is not numerically positive definite."""
    n = K.shape[0]
    for j in range(n):
        s = K[j, j]
        for k in range(j):
            s -= K[j, k] * K[j, k]
        if not s > 0.0:
            return False
        K[j, j] = np.sqrt(s)
        for i in range(j + 1, n):
            t = K[i, j]
            for k in range(j):
                t -= K[i, k] * K[j, k]
            K[i, j] = t / K[j, j]
    for i in range(n):
        t = b[i]
        for k in range(i):
            t -= K[i, k] * x[k]
        x[i] = t / K[i, i]
    for i in range(n - 1, -1, -1):
        t = x[i]
        for k in range(i + 1, n):
            t -= K[k, i] * x[k]
        x[i] = t / K[i, i]
    return True


@njit(cache=True)
def minv_rows(kt0, work, q, C, r, Y, zero):
    """Y[j] = M^-1 C[j]^T for j < r: forward dynamics at v = 0 without gravity (000 Table 3),
    O(n) per row.  Returns the forward dynamics status."""
    ki0 = kt0.view(np.int32)
    for j in range(r):
        status = forward_dynamics_unchecked(ki0, kt0, work, q, zero, C[j], work[0:0], Y[j])
        if status:
            return status
    return 0


def scratch_size(L, nv, m):
    """Numbers of scratch that :func:`_unpack` carves."""
    return ds_start(L, nv) + m * (4 * nv + m + 4) + nv


@njit(cache=True)
def ds_start(L, nv):
    """Where ``ds`` begins in the scratch (``ws`` comes first)."""
    return 24 * L + 18 * nv + 147


def result_views(sb, L, nv, m):
    """(C rows, lambda) views of the scratch: the independent rows of C and the multipliers
    that :func:`constrained_accelerations` left there (first ``rank`` of each)."""
    at = ds_start(L, nv) + 2 * m + 2 * m * nv                  # after phi, C, gamma, Q
    return sb[at:at + m * nv].reshape((m, nv)), sb[at + 2 * m * nv + m * m:at + 2 * m * nv + m * m + m]


@njit(cache=True)
def _take(sb, at, n):
    return sb[at:at + n], at + n


@njit(cache=True)
def _unpack(pi, pf, sb):
    """(mt, lt, ws, ds): the tree, the cut joints and the scratch views (see the module
    docstring)."""
    L, nl, m, nv = pi[0, 0], pi[0, 1], pi[0, 2], pi[0, 3]
    J, K = pi[1:L + 1], pf[1:L + 1]
    mt = (J[:, 0], J[:, 1], K[:, 0:3], K[:, 3:6], K[:, 6:15], K[:, 15:18], J[:, 2], J[:, 3], J[:, 4], J[:, 5])
    lt = (pi[L + 1:L + 1 + nl], pf[L + 1:L + 1 + nl])
    at = 0
    R, at = _take(sb, at, 9 * L)
    o, at = _take(sb, at, 3 * L)
    Pw, at = _take(sb, at, 6 * nv)
    w, at = _take(sb, at, 3 * L)
    od, at = _take(sb, at, 3 * L)
    wd0, at = _take(sb, at, 3 * L)
    odd0, at = _take(sb, at, 3 * L)
    small, at = _take(sb, at, 72)
    Jb, at = _take(sb, at, 12 * nv)
    lr, at = _take(sb, at, 75)
    at = ds_start(L, nv)
    ws = (R.reshape((L, 3, 3)), o.reshape((L, 3)), Pw.reshape((nv, 6)), w.reshape((L, 3)), od.reshape((L, 3)),
          wd0.reshape((L, 3)), odd0.reshape((L, 3)), small[0:9].reshape((3, 3)), small[9:12],
          small[12:21].reshape((3, 3)), small[21:57].reshape((6, 6)), small[57:63], small[63:66], small[66:69],
          small[69:72], Jb.reshape((4, 3, nv)), lr.reshape((25, 3)))
    phi, at = _take(sb, at, m)
    C, at = _take(sb, at, m * nv)
    gamma, at = _take(sb, at, m)
    Q, at = _take(sb, at, m * nv)
    Cr, at = _take(sb, at, m * nv)
    Y, at = _take(sb, at, m * nv)
    Kb, at = _take(sb, at, m * m)
    lam, at = _take(sb, at, m)
    rhs, at = _take(sb, at, m)
    zero, at = _take(sb, at, nv)
    rows = np.empty(m, dtype=np.int64)
    ds = (phi, C.reshape((m, nv)), gamma, Q.reshape((m, nv)), rows, Cr.reshape((m, nv)), Y.reshape((m, nv)),
          Kb.reshape((m, m)), lam, rhs, zero)
    return mt, lt, ws, ds


@njit(cache=True)
def _selected(C, rtol, ds):
    """Copy the independent rows of C into Cr; returns their number."""
    Q, rows, Cr = ds[3], ds[4], ds[5]
    r = independent_rows(C, rtol, Q, rows)
    for j in range(r):
        Cr[j] = C[rows[j]]
    return r


@njit(cache=True, inline="always")
def _dot(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += a[i] * b[i]
    return s


@njit(cache=True)
def _gram(A, B, r, K):
    """K = A[:r] B[:r]^T."""
    for i in range(r):
        for j in range(r):
            K[i, j] = _dot(A[i], B[j])


@njit(cache=True)
def _accelerations(kt, kt0, work, mt, lt, ws, ds, q, v, tau, fext, alpha, beta, rtol, a):
    """Lagrange multipliers on the cut tree (004 eqs. 13-14): a = a0 + M^-1 C^T lambda with
    (C M^-1 C^T) lambda = -Cdot qdot - 2 alpha C qdot - beta^2 phi - C a0 (Baumgarte), over the
    independent rows; a0 and each M^-1 C[j]^T by the O(n) forward dynamics.  Returns (status,
    rank): status 0, k + 1 for a singular articulated inertia, -1 a non-finite result, -3
    a singular C M^-1 C^T.  lambda is left in ds[8][:rank] for the rows ds[4][:rank].

    The entry :func:`constrained_accelerations` returns (status, rank)."""
    phi, C, gamma, rows, Cr, Y, K, lam, rhs, zero = ds[0], ds[1], ds[2], ds[4], ds[5], ds[6], ds[7], ds[8], ds[9], ds[10]
    world_kinematics(mt, q, v, True, ws)                        # phi, C = D* N, Cdot qdot   (12-15)
    loop_rows(mt, lt, ws, True, phi, C, gamma)
    status = forward_dynamics_unchecked(kt.view(np.int32), kt, work, q, v, tau, fext, a)   # a0 (open tree)
    if status:
        return status, 0
    r = _selected(C, rtol, ds)
    for j in range(r):
        i = rows[j]
        rhs[j] = -gamma[i] - 2.0 * alpha * _dot(C[i], v) - beta * beta * phi[i] - _dot(C[i], a)
    status = minv_rows(kt0, work, q, Cr, r, Y, zero)            # Y = (M^-1 C^T)^T
    if status:
        return status, r
    _gram(Cr, Y, r, K)                                          # K = C M^-1 C^T
    if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):         # K lambda = rhs          (14)
        return -3, r
    for j in range(r):
        a += lam[j] * Y[j]                                      # qddot = a0 + M^-1 C^T lambda
    for i in range(a.shape[0]):
        if not np.isfinite(a[i]):
            return -1, r
    return 0, r


@njit(cache=True)
def project(kt, kt0, work, pi, pf, sb, q, v, rtol, tol, max_iter, qn):
    """:func:`project_state` on the packed model (the entry called from Python)."""
    mt, lt, ws, ds = _unpack(pi, pf, sb)
    return project_state(kt, kt0, work, mt, lt, ws, ds, q, v, rtol, tol, max_iter, qn)


@njit(cache=True)
def project_state(kt, kt0, work, mt, lt, ws, ds, q, v, rtol, tol, max_iter, qn):
    """Close the loops and remove the velocity that violates them, both in the kinetic-energy
    metric: Gauss-Newton on phi(q) = 0 with the steps dq = -M^-1 C^T (C M^-1 C^T)^-1 phi
    (the smallest correction in that metric), then v -= M^-1 C^T (C M^-1 C^T)^-1 C v.
    Returns (status, |phi| at the end, |phi| at the start): status -4 when the positions do
    not converge in max_iter."""
    ki = kt.view(np.int32)
    phi, C, gamma, Cr, Y, K, lam, rhs, zero = ds[0], ds[1], ds[2], ds[5], ds[6], ds[7], ds[8], ds[9], ds[10]
    err0 = -1.0
    for it in range(max_iter + 1):
        world_kinematics(mt, q, v, False, ws)
        loop_rows(mt, lt, ws, False, phi, C, gamma)
        err = np.max(np.abs(phi)) if phi.shape[0] else 0.0
        if err0 < 0.0:
            err0 = err
        r = _selected(C, rtol, ds)
        if err <= tol:
            break
        if it == max_iter:
            return -4, err, err0
        zero[:] = 0.0
        status = minv_rows(kt0, work, q, Cr, r, Y, zero)
        if status:
            return status, err, err0
        _gram(Cr, Y, r, K)
        for j in range(r):
            rhs[j] = phi[ds[4][j]]
        if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):
            return -3, err, err0
        for j in range(r):
            zero -= lam[j] * Y[j]                               # dq = -M^-1 C^T (C M^-1 C^T)^-1 phi
        integrate(ki, q, zero, qn)
        q[:] = qn
        zero[:] = 0.0
    status = minv_rows(kt0, work, q, Cr, r, Y, zero)
    if status:
        return status, err, err0
    _gram(Cr, Y, r, K)
    for j in range(r):
        rhs[j] = _dot(Cr[j], v)
    if not cholesky_solve(K[:r, :r], rhs[:r], lam[:r]):
        return -3, err, err0
    for j in range(r):
        v -= lam[j] * Y[j]
    return 0, err, err0


@njit(cache=True)
def _stage_accel(kt, kt0, work, mt, lt, ws, ds, q, v, tau_mode, taus, n, K, D, q_rest, passive, d, tau, fext,
                 alpha, beta, rtol, a):
    applied(kt.view(np.int32), q, v, tau_mode, taus, n, K, D, q_rest, passive, d, tau)
    return _accelerations(kt, kt0, work, mt, lt, ws, ds, q, v, tau, fext, alpha, beta, rtol, a)[0]


@njit(cache=True)
def rk4_loop_run(kt, kt0, work, pi, pf, sb, q, v, step0, n_steps, dt, tau_mode, taus, fext, K, D, q_rest,
                 passive, save_every, save0, Qs, Vs, As, Err, s, opts):
    """RK4 (RKMK) steps of a model with loops, as :func:`..integrators.rk4_run`, with the
    constrained accelerations and, after each step when opts[4] > 0, :func:`project_state`.
    opts = (alpha, beta, rtol, tol, project, max_iter).  Err[r] = |phi| of saved state r;
    s[13, 0] accumulates the largest |phi| found before a projection (the drift of one step).
    Returns (steps done, status, rows saved)."""
    mt, lt, ws, ds = _unpack(pi, pf, sb)
    ki = kt.view(np.int32)
    nq, nv = q.shape[0], v.shape[0]
    alpha, beta, rtol, tol, project, max_iter = opts[0], opts[1], opts[2], opts[3], opts[4] > 0, int(opts[5])
    qs, xi, vs, tau, d = s[0, :nq], s[1, :nv], s[2, :nv], s[3, :nv], s[4, :nv]
    kx, kv = s[5:9, :nv], s[9:13, :nv]
    flat = is_vector_space(ki)
    saved = 0
    for m in range(n_steps):
        n = step0 + m
        status = _stage_accel(kt, kt0, work, mt, lt, ws, ds, q, v, tau_mode, taus, n, K, D, q_rest, passive, d,
                              tau, fext, alpha, beta, rtol, kv[0])
        if status:
            return m, status, saved
        if n % save_every == 0:
            Qs[save0 + saved] = q
            Vs[save0 + saved] = v
            As[save0 + saved] = kv[0]
            Err[save0 + saved] = np.max(np.abs(ds[0])) if ds[0].shape[0] else 0.0
            saved += 1
        kx[0] = v
        for st in range(1, 4):                                  # stages 2-4
            h = dt if st == 3 else 0.5 * dt
            for i in range(nv):
                xi[i] = h * kx[st - 1, i]
                vs[i] = v[i] + h * kv[st - 1, i]
            step_configuration(ki, flat, q, xi, qs)
            tangent_rate(ki, flat, xi, vs, kx[st])
            status = _stage_accel(kt, kt0, work, mt, lt, ws, ds, qs, vs, tau_mode, taus, n, K, D, q_rest, passive,
                                  d, tau, fext, alpha, beta, rtol, kv[st])
            if status:
                return m, status, saved
        for i in range(nv):
            xi[i] = dt / 6.0 * (kx[0, i] + 2.0 * kx[1, i] + 2.0 * kx[2, i] + kx[3, i])
            v[i] += dt / 6.0 * (kv[0, i] + 2.0 * kv[1, i] + 2.0 * kv[2, i] + kv[3, i])
        step_configuration(ki, flat, q, xi, q)
        if project:
            status, err, err0 = project_state(kt, kt0, work, mt, lt, ws, ds, q, v, rtol, tol, max_iter, qs)
            s[13, 0] = max(s[13, 0], err0)
            if status:
                return m + 1, status, saved
    return n_steps, 0, saved


@njit(ACCEL_SIGNATURE, cache=True)
def constrained_accelerations(kt, kt0, work, pi, pf, sb, q, v, tau, fext, alpha, beta, rtol, a):
    """:func:`_accelerations` on the packed model (the entry called from Python), after the
    checks of :func:`..entry.valid_state` (status -2 a shape, -1 a value: the Python layer
    then names the culprit).  lambda and the rows of C are left in the scratch
    (:func:`result_views`)."""
    status = valid_state(kt.view(np.int32), q, v, tau, fext, a, work, v.shape[0])
    if status:
        return status, 0
    mt, lt, ws, ds = _unpack(pi, pf, sb)
    return _accelerations(kt, kt0, work, mt, lt, ws, ds, q, v, tau, fext, alpha, beta, rtol, a)
