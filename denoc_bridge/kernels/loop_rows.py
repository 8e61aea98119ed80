"""Compiled kinematics of closed loops: the world kinematics of the links (positions, the DOFs'
world 6-vectors, velocities and accelerations at qddot = 0) and the constraint rows of the cut
joints, ``C qddot = gamma`` with the residual ``phi`` (004 eqs. 12-13; the readable version is
:mod:`denoc_bridge.constraints.loops`).  Used by the constrained dynamics of
:mod:`denoc_bridge.kernels.loops` and :mod:`denoc_bridge.kernels.mimic_loops`.

World kinematics convention (000 §2): ``R[k]``, ``o[k]`` orientation and origin of link k;
``Pw[j]`` the world 6-vector [angular; linear at o_k] of dof j of joint k; ``w, od`` the
angular velocity and origin velocity; ``wd0, odd0`` their rates at qddot = 0 without gravity.
The arrays ``mt`` (the model), ``lt`` (the cut joints) and the scratch views ``ws`` are those
that :func:`denoc_bridge.kernels.loops.unpack` carves (layout in that module's docstring).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.joints import CONTINUOUS as J_CONTINUOUS
from denoc_bridge.kernels.joints import REVOLUTE as J_REVOLUTE
from denoc_bridge.kernels.joints import UNIVERSAL as J_UNIVERSAL
from denoc_bridge.kernels.joints import joint_subspace, joint_subspace_rate, joint_transform, unit_pair

#: the cut joints' type codes (row 1 + L + l of ``pi``); a joint coupling's row is
#: [COUPLING, -1, -1, first row, its first term's row in ``lt``, number of terms] with its value
#: in column 0 of ``pf``, each term a row [TERM, link, -1, -1, 0, 0] with its coefficient there
WELD, SPHERICAL, REVOLUTE, PRISMATIC, COUPLING, TERM = 0, 1, 2, 3, 4, 5
#: columns of a coupling's ``pi`` row: where its terms are (rows of ``lt``) and how many
FIRST_TERM, N_TERMS = 4, 5


@njit(cache=True, inline="always")
def _cross(a, b, out):
    out[0] = a[1] * b[2] - a[2] * b[1]
    out[1] = a[2] * b[0] - a[0] * b[2]
    out[2] = a[0] * b[1] - a[1] * b[0]


@njit(cache=True, inline="always")
def _mul3(A, B):
    """A B for 3 x 3 matrices given as row-major 9-tuples."""
    return (
        A[0] * B[0] + A[1] * B[3] + A[2] * B[6],
        A[0] * B[1] + A[1] * B[4] + A[2] * B[7],
        A[0] * B[2] + A[1] * B[5] + A[2] * B[8],
        A[3] * B[0] + A[4] * B[3] + A[5] * B[6],
        A[3] * B[1] + A[4] * B[4] + A[5] * B[7],
        A[3] * B[2] + A[4] * B[5] + A[5] * B[8],
        A[6] * B[0] + A[7] * B[3] + A[8] * B[6],
        A[6] * B[1] + A[7] * B[4] + A[8] * B[7],
        A[6] * B[2] + A[7] * B[5] + A[8] * B[8],
    )


@njit(cache=True, inline="always")
def _mv3(A, x0, x1, x2):
    """A x for a row-major 9-tuple A."""
    return A[0] * x0 + A[1] * x1 + A[2] * x2, A[3] * x0 + A[4] * x1 + A[5] * x2, A[6] * x0 + A[7] * x1 + A[8] * x2


@njit(cache=True, inline="always")
def world_kinematics(mt, q, v, with_v, ws, n):
    """Forward recursion over the links before n: world placement, joint columns and (with_v)
    velocities and velocity-product accelerations (000 eqs. 7-8 in the inertial frame).
    Rotations are carried in 9-tuples; revolute joints are written out here, the other
    joint types go through :mod:`.joints` (scratch arrays)."""
    parent, jtype, axis, axis2, jrot, jtrans, idx_q, nq_j, idx_v, nv_j = mt  # jrot: (L, 9) row-major
    R, o, Pw, w, od, wd0, odd0 = ws[0], ws[1], ws[2], ws[3], ws[4], ws[5], ws[6]
    RJ, pJ, tmpR, Pl, cr = ws[7], ws[8], ws[9], ws[10], ws[11]
    for k in range(n):
        b, v0, z, jt = parent[k], idx_v[k], nv_j[k], jtype[k]
        R0 = (
            jrot[k, 0],
            jrot[k, 1],
            jrot[k, 2],
            jrot[k, 3],
            jrot[k, 4],
            jrot[k, 5],
            jrot[k, 6],
            jrot[k, 7],
            jrot[k, 8],
        )
        revolute = jt == J_REVOLUTE or jt == J_CONTINUOUS
        if revolute:  # R0 Rot(e, q) by Rodrigues
            e0, e1, e2 = axis[k, 0], axis[k, 1], axis[k, 2]
            iq = idx_q[k]
            if jt == J_REVOLUTE:
                c, sn = np.cos(q[iq]), np.sin(q[iq])
            else:  # (cos, sin), normalised on the fly
                c, sn = unit_pair(q[iq], q[iq + 1])
            tc = 1.0 - c
            A = _mul3(
                R0,
                (
                    c + tc * e0 * e0,
                    tc * e0 * e1 - sn * e2,
                    tc * e0 * e2 + sn * e1,
                    tc * e1 * e0 + sn * e2,
                    c + tc * e1 * e1,
                    tc * e1 * e2 - sn * e0,
                    tc * e2 * e0 - sn * e1,
                    tc * e2 * e1 + sn * e0,
                    c + tc * e2 * e2,
                ),
            )
            t0, t1, t2 = jtrans[k, 0], jtrans[k, 1], jtrans[k, 2]
        else:
            qk = q[idx_q[k] : idx_q[k] + nq_j[k]]
            joint_transform(jt, axis[k], axis2[k], qk, RJ, pJ, tmpR)
            joint_subspace(jt, axis[k], axis2[k], qk, Pl[:z])
            A = _mul3(R0, (RJ[0, 0], RJ[0, 1], RJ[0, 2], RJ[1, 0], RJ[1, 1], RJ[1, 2], RJ[2, 0], RJ[2, 1], RJ[2, 2]))
            t0, t1, t2 = _mv3(R0, pJ[0], pJ[1], pJ[2])
            t0, t1, t2 = t0 + jtrans[k, 0], t1 + jtrans[k, 1], t2 + jtrans[k, 2]
        if b >= 0:  # R_k = R_b R0 RJ, o_k = o_b + R_b (p0 + R0 pJ)
            Rb = (
                R[b, 0, 0],
                R[b, 0, 1],
                R[b, 0, 2],
                R[b, 1, 0],
                R[b, 1, 1],
                R[b, 1, 2],
                R[b, 2, 0],
                R[b, 2, 1],
                R[b, 2, 2],
            )
            Rk = _mul3(Rb, A)
            x0, x1, x2 = _mv3(Rb, t0, t1, t2)
            t0, t1, t2 = o[b, 0] + x0, o[b, 1] + x1, o[b, 2] + x2
        else:
            Rk = A
        o[k, 0], o[k, 1], o[k, 2] = t0, t1, t2
        R[k, 0, 0], R[k, 0, 1], R[k, 0, 2] = Rk[0], Rk[1], Rk[2]
        R[k, 1, 0], R[k, 1, 1], R[k, 1, 2] = Rk[3], Rk[4], Rk[5]
        R[k, 2, 0], R[k, 2, 1], R[k, 2, 2] = Rk[6], Rk[7], Rk[8]
        if revolute:  # P_k in world coordinates: [R_k e; 0]
            Pw[v0, 0], Pw[v0, 1], Pw[v0, 2] = _mv3(Rk, e0, e1, e2)
            Pw[v0, 3] = Pw[v0, 4] = Pw[v0, 5] = 0.0
        else:
            for dd in range(z):
                Pw[v0 + dd, 0], Pw[v0 + dd, 1], Pw[v0 + dd, 2] = _mv3(Rk, Pl[dd, 0], Pl[dd, 1], Pl[dd, 2])
                Pw[v0 + dd, 3], Pw[v0 + dd, 4], Pw[v0 + dd, 5] = _mv3(Rk, Pl[dd, 3], Pl[dd, 4], Pl[dd, 5])
        if with_v:
            c0 = c1 = c2 = 0.0
            if jt == J_UNIVERSAL:  # the only joint with dP/dt != 0 locally
                joint_subspace_rate(jt, axis[k], axis2[k], Pl[:z], v[v0 : v0 + z], cr, cr[3:6])
                c0, c1, c2 = _mv3(Rk, cr[0], cr[1], cr[2])
            _velocity_step(k, b, v0, z, v, o, Pw, w, od, wd0, odd0, c0, c1, c2)


@njit(cache=True, inline="always")
def _crossv(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _velocity_step(k, b, v0, z, v, o, Pw, w, od, wd0, odd0, c0, c1, c2):
    """omega_k, odot_k and their rates at qddot = 0 (the classical accelerations):
    omega_k = omega_b + P qdot, odot_k = odot_b + omega_b x d + P_lin qdot, and their rates
    with Pdot qdot = omega_k x (P qdot) + c (c = R_k dP_local/dt qdot: universal joints).
    The arrays are passed one by one: views made inside the loop cost reference counts."""
    u0 = u1 = u2 = t0 = t1 = t2 = 0.0  # P_k qdot_k, angular and linear
    for j in range(v0, v0 + z):
        x = v[j]
        u0 += Pw[j, 0] * x
        u1 += Pw[j, 1] * x
        u2 += Pw[j, 2] * x
        t0 += Pw[j, 3] * x
        t1 += Pw[j, 4] * x
        t2 += Pw[j, 5] * x
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
    """The rotation vector of the 3 x 3 rotation R, accurate at every angle (as
    :func:`denoc_bridge.constraints.loop_kinematics._log3`: theta from atan2, the axis from the
    symmetric part from pi / 2 on)."""
    w0, w1, w2 = R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]
    c = 0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0)
    s = 0.5 * np.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    th = np.arctan2(s, c)
    if c > 0.0:
        f = 0.5 * (1.0 + th * th / 6.0) if th < 1e-6 else th / (2.0 * s)
        out[0], out[1], out[2] = f * w0, f * w1, f * w2
        return
    kk = 0
    for i in range(1, 3):
        if R[i, i] > R[kk, kk]:
            kk = i
    nk = np.sqrt(max(R[kk, kk] - c, 1e-300) * (1.0 - c))
    wk = w0 if kk == 0 else (w1 if kk == 1 else w2)
    sgn = -1.0 if wk < 0.0 else 1.0
    for i in range(3):
        out[i] = sgn * th * ((0.5 * (R[i, kk] + R[kk, i]) - (c if i == kk else 0.0)) / nk)


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
def coupling_row(mt, li, lf, l, q, with_bias, phi, C, gamma):
    """The row of joint coupling l: phi = sum c_k q_k - value, C = sum c_k e_k, Cdot qdot = 0."""
    idx_q, idx_v = mt[6], mt[8]
    r, first, n = li[l, 3], li[l, FIRST_TERM], li[l, N_TERMS]
    phi[r] = -lf[l, 0]
    C[r, :] = 0.0
    for t in range(first, first + n):
        k, c = li[t, 1], lf[t, 0]
        phi[r] += c * q[idx_q[k]]
        C[r, idx_v[k]] = c
    if with_bias:
        gamma[r] = 0.0


@njit(cache=True, inline="always")
def loop_rows(mt, lt, ws, q, with_bias, phi, C, gamma):
    """phi, C = D* N (004 eq. 15) and Cdot qdot (eq. 13) of every cut joint (rows as in the
    table of :mod:`denoc_bridge.constraints.loops`) and joint coupling; world_kinematics must
    have run (with v for the bias)."""
    li, lf = lt
    J, t = ws[15], ws[16]  # Jw1, Jx1, Jw2, Jx2 (3 x nv each)
    RF1, RF2, Rrel, x1, x2, dvec, rot, lg = t[0:3], t[3:6], t[6:9], t[9], t[10], t[11], t[12], t[13]
    m1, m2, B, tmp = t[14:18], t[18:22], t[22:24], t[24]
    for l in range(li.shape[0]):
        typ, l1, l2, r = li[l, 0], li[l, 1], li[l, 2], li[l, 3]
        if typ == TERM:
            continue
        if typ == COUPLING:
            coupling_row(mt, li, lf, l, q, with_bias, phi, C, gamma)
            continue
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
                B[jn, i] = (
                    RF1[i, 0] * lf[l, 24 + 3 * jn] + RF1[i, 1] * lf[l, 25 + 3 * jn] + RF1[i, 2] * lf[l, 26 + 3 * jn]
                )
        if with_bias:
            _point_motion(ws, l1, x1, m1)
            _point_motion(ws, l2, x2, m2)
        if typ != PRISMATIC:  # x_2 - x_1 = 0: Jx2 - Jx1, xddot
            r = _three_rows(r, dvec, J, 3, 1, m1, m2, 3, with_bias, phi, C, gamma)
        if typ == WELD or typ == PRISMATIC:  # no relative rotation: Jw2 - Jw1, omegadot
            r = _three_rows(r, rot, J, 2, 0, m1, m2, 2, with_bias, phi, C, gamma)
        if typ == REVOLUTE or typ == PRISMATIC:
            _normal_rows(typ, r, l, lf, lg, B, dvec, J, m1, m2, with_bias, tmp, phi, C, gamma)


@njit(cache=True, inline="always")
def _three_rows(r, value, J, j2, j1, m1, m2, mrow, with_bias, phi, C, gamma):
    """Rows r..r+2: phi = value, C = J[j2] - J[j1] (link 2's Jacobian minus link 1's), and the
    bias m2[mrow] - m1[mrow]; returns the next row."""
    for i in range(3):
        phi[r + i] = value[i]
        for j in range(C.shape[1]):
            C[r + i, j] = J[j2, i, j] - J[j1, i, j]
        if with_bias:
            gamma[r + i] = m2[mrow, i] - m1[mrow, i]
    return r + 3


@njit(cache=True)
def _normal_rows(typ, r, l, lf, lg, B, dvec, J, m1, m2, with_bias, tmp, phi, C, gamma):
    """The two rows b_j . (...) of a revolute (relative rotation) or prismatic (offset) cut."""
    nv = C.shape[1]
    for jn in range(2):
        b = B[jn]
        if typ == REVOLUTE:
            phi[r + jn] = lf[l, 24 + 3 * jn] * lg[0] + lf[l, 25 + 3 * jn] * lg[1] + lf[l, 26 + 3 * jn] * lg[2]
            for j in range(nv):
                C[r + jn, j] = (
                    b[0] * (J[2, 0, j] - J[0, 0, j])
                    + b[1] * (J[2, 1, j] - J[0, 1, j])
                    + b[2] * (J[2, 2, j] - J[0, 2, j])
                )
            if with_bias:  # d/dt (b . wrel), bdot = w1 x b
                _cross(m1[0], b, tmp)
                g = 0.0
                for i in range(3):
                    g += tmp[i] * (m2[0, i] - m1[0, i]) + b[i] * (m2[2, i] - m1[2, i])
                gamma[r + jn] = g
        else:
            phi[r + jn] = b[0] * dvec[0] + b[1] * dvec[1] + b[2] * dvec[2]
            _cross(b, dvec, tmp)  # + (b x d) . omega_1
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
