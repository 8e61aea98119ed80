"""The passes of the analytical first-order derivatives of the recursive inverse dynamics of a tree.

``tau = ID(q, v, a)`` (000 Table 1) is differentiated pass by pass: a forward
recursion of the link placements, twists and twist rates (:func:`kinematics_pass`), then a
backward recursion of composite quantities (:func:`composite_pass`) that yields ``dtau/dq``,
``dtau/dv`` and the GIM ``M = dtau/da`` (000 eq. 16) in one sweep over each link's supporting
chain, as in Carpentier & Mansard (2018, "Analytical derivatives of rigid body dynamics
algorithms"; Pinocchio's ``computeRNEADerivatives``).

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

Only ``alpha`` and ``F`` depend on the accelerations, and linearly: at ``a + da`` the rates
change by ``dtd_k = dtd_parent + S_k da_k``, alpha by ``s x dtd_lam`` and the composite wrench
by the composite of ``I_i dtd_i``.  So the forward dynamics (:mod:`.derivatives`) runs the two
passes at ``a = 0`` (giving M, dtau/dv and the bias ``tau(q, v, 0)``), solves
``M qdd = tau - bias`` and adds the terms of qdd by :func:`acceleration_pass` (dtau/dq only),
instead of a separate forward-dynamics pass.

Link inertias and their composites are kept in their ten numbers (:func:`.derivative_algebra.
_inertia10`), the matrices C in their twelve (:func:`.derivative_algebra._coriolis12`), and each
DOF's S, alpha, w and beta in one row of D, so that the walk along a supporting chain reads one
row per ancestor.  The passes index their arrays (``X[r, i]``) and carry 6-vectors as tuples: a
view (``X[r]``) made in a loop, or an array handed to a helper (inlined or not), costs a reference
count increment and decrement each time (atomic: about 1 us per pass on panda when the loop
bodies called five helpers with arrays), so the loop bodies are written out and only the
spatial algebra on tuples is factored out.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.derivative_algebra import (
    _add6,
    _axpy6,
    _cact,
    _coriolis12,
    _get6,
    _iact,
    _inertia10,
    _put6,
)
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

#: columns of the per-DOF rows D: S, alpha, w (6 each) and beta's angular part (the only part
#: the recursion reads: C's right column is zero)
_S, _AL, _WV, _BE, _DW = 0, 6, 12, 18, 21
#: columns of the per-DOF rows G: Y = Ic S, Z = (Cc^T S)'s angular part (its linear part is
#: zero), gam = s x* F - Ic alpha - Cc beta, rho = Cc s + Ic w
_Y, _Z, _GA, _RH, _GW = 0, 6, 9, 15, 21
_ZERO6 = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, inline="always")
def workspace(L, nv):
    """The arrays of the passes, row blocks of one (10 L + 2 nv + 13, 21) buffer (a row slice
    costs about 1 ns in compiled code, a ``reshape`` about 27): oR (rotations, row-major in 9
    columns), op, tw (twists about the base origin), td (twist rates, gravity as the base's), Ic
    (inertias, then composites), Il (link inertias), Cc (C, then composites), F (link wrenches,
    then composites), dtd and Fa (:func:`acceleration_pass`), D, G (per-DOF rows) and scratch
    rows (Pl, RJ, tmpR in their first columns, pJ and pl)."""
    B = np.empty((10 * L + 2 * nv + 13, _DW))
    o = 10 * L + 2 * nv
    return (
        B[:L],
        B[L : 2 * L],
        B[2 * L : 3 * L],
        B[3 * L : 4 * L],
        B[4 * L : 5 * L],
        B[5 * L : 6 * L],
        B[6 * L : 7 * L],
        B[7 * L : 8 * L],
        B[8 * L : 9 * L],
        B[9 * L : 10 * L],
        B[10 * L : 10 * L + nv],
        B[10 * L + nv : o],
        B[o : o + 13],
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def _sub6(a, b):
    return a[0] - b[0], a[1] - b[1], a[2] - b[2], a[3] - b[3], a[4] - b[4], a[5] - b[5]


@njit(cache=True, inline="always", fastmath={"contract"})
def _dot6(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


@njit(cache=True, fastmath={"contract"})
def kinematics_pass(ki, kf, q, v, a, fext, ws):
    """The forward recursion (000 Table 1, step 1) into the arrays ws of :func:`workspace`:
    placements, S, alpha, w, beta per DOF, twists, rates, link inertias (Ic and Il), C and
    wrenches."""
    L = ki.shape[0]
    has_fext = fext.shape[0] > 0
    oR, op, tw, td, Ic, Il, Cc, F, _, _, D, _, sc = ws
    Pl, RJ, tmpR, pJ, pl = sc[0:6], sc[6:9], sc[9:12], sc[12, 0:3], sc[12, 3:6]
    g = (kf[0, T.GRAV], kf[0, T.GRAV + 1], kf[0, T.GRAV + 2]) if L > 0 else (0.0, 0.0, 0.0)
    zero6 = _ZERO6
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
            pl[i] = kf[k, T.T0 + i] + r0 * pJ[0] + r1 * pJ[1] + r2 * pJ[2]
        pl0, pl1, pl2 = pl[0], pl[1], pl[2]
        if p < 0:
            for i in range(3):
                for j in range(3):
                    oR[k, 3 * i + j] = tmpR[i, j]
            op[k, 0], op[k, 1], op[k, 2] = pl0, pl1, pl2
            vp = zero6
            ap = (0.0, 0.0, 0.0, -g[0], -g[1], -g[2])
        else:
            for i in range(3):
                s0, s1, s2 = oR[p, 3 * i], oR[p, 3 * i + 1], oR[p, 3 * i + 2]
                for j in range(3):
                    oR[k, 3 * i + j] = s0 * tmpR[0, j] + s1 * tmpR[1, j] + s2 * tmpR[2, j]
                op[k, i] = op[p, i] + s0 * pl0 + s1 * pl1 + s2 * pl2
            vp = _get6(tw, p, 0)
            ap = _get6(td, p, 0)
        o0, o1, o2 = op[k, 0], op[k, 1], op[k, 2]
        x = zero6  # S qd
        y = zero6  # S qdd
        for n in range(nvk):  # S_k in the base frame: [R Pw; R Pv + o x R Pw]
            c = iv + n
            sw0 = oR[k, 0] * Pl[n, 0] + oR[k, 1] * Pl[n, 1] + oR[k, 2] * Pl[n, 2]
            sw1 = oR[k, 3] * Pl[n, 0] + oR[k, 4] * Pl[n, 1] + oR[k, 5] * Pl[n, 2]
            sw2 = oR[k, 6] * Pl[n, 0] + oR[k, 7] * Pl[n, 1] + oR[k, 8] * Pl[n, 2]
            sv0 = oR[k, 0] * Pl[n, 3] + oR[k, 1] * Pl[n, 4] + oR[k, 2] * Pl[n, 5]
            sv1 = oR[k, 3] * Pl[n, 3] + oR[k, 4] * Pl[n, 4] + oR[k, 5] * Pl[n, 5]
            sv2 = oR[k, 6] * Pl[n, 3] + oR[k, 7] * Pl[n, 4] + oR[k, 8] * Pl[n, 5]
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
                e[i] = oR[k, 3 * i] * fext[k, 0] + oR[k, 3 * i + 1] * fext[k, 1] + oR[k, 3 * i + 2] * fext[k, 2]
                e[3 + i] = oR[k, 3 * i] * fext[k, 3] + oR[k, 3 * i + 1] * fext[k, 4] + oR[k, 3 * i + 2] * fext[k, 5]
            e[0] += o1 * e[5] - o2 * e[4]
            e[1] += o2 * e[3] - o0 * e[5]
            e[2] += o0 * e[4] - o1 * e[3]
            fk = (fk[0] - e[0], fk[1] - e[1], fk[2] - e[2], fk[3] - e[3], fk[4] - e[4], fk[5] - e[5])
        _put6(F, k, 0, fk)
        for i in range(10):
            Il[k, i] = Ic[k, i]


@njit(cache=True, fastmath={"contract"})
def composite_pass(ki, kf, a, tau, dq, dv, M, ws, with_dq):
    """The backward recursion (000 Table 1, step 2) after :func:`kinematics_pass`: tau, dv, M
    (and dq if with_dq; else :func:`acceleration_pass` writes it) on every supporting chain,
    the composites Ic, Cc, F of each subtree left in place."""
    L = ki.shape[0]
    _, _, _, _, Ic, _, Cc, F, _, _, D, G, _ = ws
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
            if with_dq:  # gam = s x* F - Ic alpha - Cc beta
                ia = _iact(Ic, k, _get6(D, c, _AL))
                cb = _cact(Cc, k, (D[c, _BE], D[c, _BE + 1], D[c, _BE + 2], 0.0, 0.0, 0.0))
                _put6(G, c, _GA, _sub6(fcross(sc, Fk), _add6(ia, cb)))
            # rho = Cc s + Ic w
            _put6(G, c, _RH, _add6(_cact(Cc, k, sc), _iact(Ic, k, _get6(D, c, _WV))))
            tau[c] = sc[0] * Fk[0] + sc[1] * Fk[1] + sc[2] * Fk[2] + sc[3] * Fk[3] + sc[4] * Fk[4] + sc[5] * Fk[5]
            tau[c] += kf[k, T.ARM + n] * a[c]
        for r in range(iv, iv + nvk):  # rows and columns of joint k
            y6, z0, z1, z2 = _get6(G, r, _Y), G[r, _Z], G[r, _Z + 1], G[r, _Z + 2]
            for c in range(iv, iv + nvk):
                if with_dq:
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
        if with_dq and T.joint_type(ki, k) == UNIVERSAL:  # the first axis is fixed in the parent
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
                    wr = _get6(D, r, _WV)
                    if with_dq:
                        al = _get6(D, r, _AL)
                        b0, b1, b2 = D[r, _BE], D[r, _BE + 1], D[r, _BE + 2]
                        dq[r, c] = _dot6(s, ga)
                        dq[c, r] = -(_dot6(y6, al) + z0 * b0 + z1 * b1 + z2 * b2)
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


@njit(cache=True, fastmath={"contract"})
def acceleration_pass(ki, da, dq, ws):
    """dq at the accelerations ``a + da`` after :func:`kinematics_pass` at a and
    :func:`composite_pass` without dq: forward, ``dtd_k = dtd_parent + S_k da_k`` and alpha +=
    ``s x dtd_lam`` (the universal's second column: ``lam`` its node, ``dtd_parent + s_0 da_0``);
    backward, the composite wrench + the composite of ``Il dtd``, then gam and dq (as
    :func:`composite_pass`)."""
    L = ki.shape[0]
    _, _, _, _, Ic, Il, Cc, F, dtd, Fa, D, G, _ = ws
    for k in range(L):
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        dp = _get6(dtd, p, 0) if p >= 0 else _ZERO6
        x = dp
        universal = T.joint_type(ki, k) == UNIVERSAL
        for n in range(nvk):
            c = iv + n
            sc = _get6(D, c, _S)
            dl = _axpy6(da[iv], _get6(D, iv, _S), dp) if universal and n == 1 else dp
            _put6(D, c, _AL, _add6(_get6(D, c, _AL), mcross(sc, dl)))
            x = _axpy6(da[c], sc, x)
        _put6(dtd, k, 0, x)
        _put6(Fa, k, 0, _iact(Il, k, x))
    for k in range(L - 1, -1, -1):
        iv, nvk, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        fa = _get6(Fa, k, 0)
        Fk = _add6(_get6(F, k, 0), fa)
        if p >= 0:
            for i in range(6):
                Fa[p, i] += fa[i]
        for c in range(iv, iv + nvk):  # gam = s x* F - Ic alpha - Cc beta
            ia = _iact(Ic, k, _get6(D, c, _AL))
            cb = _cact(Cc, k, (D[c, _BE], D[c, _BE + 1], D[c, _BE + 2], 0.0, 0.0, 0.0))
            _put6(G, c, _GA, _sub6(fcross(_get6(D, c, _S), Fk), _add6(ia, cb)))
        for r in range(iv, iv + nvk):  # rows and columns of joint k
            y6, z0, z1, z2 = _get6(G, r, _Y), G[r, _Z], G[r, _Z + 1], G[r, _Z + 2]
            for c in range(iv, iv + nvk):
                dq[r, c] = -(_dot6(y6, _get6(D, c, _AL)) + z0 * D[c, _BE] + z1 * D[c, _BE + 1] + z2 * D[c, _BE + 2])
        if T.joint_type(ki, k) == UNIVERSAL:  # the first axis is fixed in the parent
            dq[iv, iv + 1] = _dot6(_get6(D, iv, _S), _get6(G, iv + 1, _GA))
        for c in range(iv, iv + nvk):  # the supporting chain: rows of the ancestors, column c and back
            y6, ga = _get6(G, c, _Y), _get6(G, c, _GA)
            z0, z1, z2 = G[c, _Z], G[c, _Z + 1], G[c, _Z + 2]
            j = ki[k, T.PARENT]
            while j >= 0:
                jv = ki[j, T.IDX_V]
                for r in range(jv, jv + ki[j, T.NV]):
                    dq[r, c] = _dot6(_get6(D, r, _S), ga)
                    dq[c, r] = -(_dot6(y6, _get6(D, r, _AL)) + z0 * D[r, _BE] + z1 * D[r, _BE + 1] + z2 * D[r, _BE + 2])
                j = ki[j, T.PARENT]


@njit(cache=True, fastmath={"contract"})
def derivatives_unchecked(ki, kf, q, v, a, fext, tau, dq, dv, M):
    """tau = ID(q, v, a), dtau/dq (tangent space), dtau/dv and M = dtau/da of a tree (every
    entry on the supporting chains; the others are left as they are): the two passes, fused."""
    L, nv = ki.shape[0], v.shape[0]
    ws = workspace(L, nv)
    kinematics_pass(ki, kf, q, v, a, fext, ws)
    composite_pass(ki, kf, a, tau, dq, dv, M, ws, True)
    return 0
