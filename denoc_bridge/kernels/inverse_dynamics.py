"""The forward recursion of recursive DeNOC inverse dynamics (000 Table 1, step 1; 003 eqs. 4-8):
twists, twist rates and link wrenches, for the numba forward dynamics and matrix-free derivatives
that still run it (issue 49 ports them; the dense derivatives are compiled, core/derivatives.pyx).  Inverse dynamics itself is compiled (``core/inverse_dynamics.pxi``,
both passes); numba's backward recursion of the wrenches to the joints
(``tau = N_d^T N_l^T w``) is gone (issue 48).  Modules are visited M_1..M_s (inter-modular
recursion) and, inside a module, its links 1^i..eta^i (intra-modular
recursion).  Inside a module the parent of a link is the previous link, so its
twist (forward) or accumulated wrench (backward) is carried in local
variables; only the last link of a module hands its values to the child modules,
and only the first link of a module adds into the accumulator of its parent
module (both in the module rows of the work array): 000 eq. (7a),
``A^{i,beta}`` acts on the last link of ``M_beta`` only.

Work array (:mod:`.tables`): link row k = ``work[k]`` ((cos, sin), w_k),
geometry rows of link k from row ``L + 2 k``, P rows from row ``3 L + nv``,
the rows of module i from row ``3 L + 4 nv + 6 i``.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_one_version
from denoc_bridge.kernels.geometry import geometry_row, joint_geometry_pass
from denoc_bridge.kernels.joints import UNIVERSAL
from denoc_bridge.kernels.prefetch import PREFETCH_LINKS, prefetch
from denoc_bridge.kernels.spatial6 import cross3, cross_wr, rot3
from denoc_bridge.kernels.trig import poly_ok

#: links per block of the geometry pass inside the forward recursion
GEOMETRY_BLOCK = T.BLOCK
NO_E = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)


@njit(cache=True, inline="always", fastmath={"contract"})
def rotation(ki, work, k):
    """(code, c, s, e) of E_k: e is read only for the general code."""
    code = T.rot_code(ki, k)
    if code == T.ROT_GENERAL:
        g = geometry_row(ki.shape[0], k)
        return (
            code,
            0.0,
            0.0,
            (
                work[g, 0],
                work[g, 1],
                work[g, 2],
                work[g, 3],
                work[g, 4],
                work[g, 5],
                work[g, 6],
                work[g, 7],
                work[g + 1, 0],
            ),
        )
    return code, work[k, T.C_CS], work[k, T.C_CS + 1], NO_E


@njit(cache=True, inline="always", fastmath={"contract"})
def offset(kf, work, L, k, code):
    """r_k: the table's r0 for the rotation codes 0-2, else the geometry rows.

    The passes branch on ``code <= 2`` themselves and call their per-link step once in each
    branch, with r0 read from the table in the first: a branch on the source of r_k inside the
    step cost a third of the pass's time (measured), as did decoding the code twice."""
    if code <= 2:
        return kf[k, T.T0], kf[k, T.T0 + 1], kf[k, T.T0 + 2]
    g = geometry_row(L, k) + 1
    return work[g, T.G_R], work[g, T.G_R + 1], work[g, T.G_R + 2]


@njit(cache=True, inline="always", fastmath={"contract"})
def modules(ki, i):
    """(first link, end link, parent module) of module i."""
    return ki[i, T.MFIRST], ki[i, T.MEND], ki[i, T.MPARENT]


@njit(cache=True, inline="always")
def module_row(L, nv, i):
    """First of the rows of module i."""
    return 3 * L + 4 * nv + T.MOD_ROWS * i


@njit(cache=True, inline="always", fastmath={"contract"})
def n_modules(ki):
    return ki[0, T.NMOD] if ki.shape[0] > 0 else 0


@njit(cache=True, inline="always", fastmath={"contract"})
def gravity(kf):
    return kf[0, T.GRAV], kf[0, T.GRAV + 1], kf[0, T.GRAV + 2]


@njit(cache=True, inline="always", fastmath={"contract"})
def unit6(d, a):
    """a e_d as a 6-tuple."""
    return (
        a if d == 0 else 0.0,
        a if d == 1 else 0.0,
        a if d == 2 else 0.0,
        a if d == 3 else 0.0,
        a if d == 4 else 0.0,
        a if d == 5 else 0.0,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def twist_rate_bias(code, c, s, e, rc, r0, r1, r2, tb, tdb, pq, pqq, cj):
    """(t_k, tdot_k) = (A t_b + P qd, A tdot_b + Adot t_b + Omega_k P qd + P qdd + Pdot qd)
    (000 Table 1, step 1), the A-terms formed in the parent frame and rotated once."""
    w0, w1, w2, v0, v1, v2 = tb
    dw0, dw1, dw2, dv0, dv1, dv2 = tdb
    x0, x1, x2 = cross_wr(rc, w0, w1, w2, r0, r1, r2)  # w_b x r
    tv0, tv1, tv2 = rot3(code, c, s, e, v0 + x0, v1 + x1, v2 + x2)
    e0, e1, e2 = rot3(code, c, s, e, w0, w1, w2)  # E w_b
    tw0, tw1, tw2 = e0 + pq[0], e1 + pq[1], e2 + pq[2]  # t_k             000 (5), 002 (A.1)
    tv0, tv1, tv2 = tv0 + pq[3], tv1 + pq[4], tv2 + pq[5]
    y0, y1, y2 = cross3(w0, w1, w2, x0, x1, x2)  # w_b x (w_b x r)
    z0, z1, z2 = cross_wr(rc, dw0, dw1, dw2, r0, r1, r2)  # wdot_b x r
    u0, u1, u2 = rot3(code, c, s, e, dv0 + y0 + z0, dv1 + y1 + z1, dv2 + y2 + z2)
    a0, a1, a2 = rot3(code, c, s, e, dw0, dw1, dw2)
    b0, b1, b2 = cross3(tw0, tw1, tw2, pq[0], pq[1], pq[2])  # Omega_k P_k qd_k (angular)
    d0, d1, d2 = cross3(e0 + tw0, e1 + tw1, e2 + tw2, pq[3], pq[4], pq[5])  # (E w_b + w_k) x v_rel
    return (
        (tw0, tw1, tw2, tv0, tv1, tv2),
        (
            a0 + b0 + pqq[0] + cj[0],
            a1 + b1 + pqq[1] + cj[1],
            a2 + b2 + pqq[2] + cj[2],
            u0 + d0 + pqq[3],
            u1 + d1 + pqq[4],
            u2 + d2 + pqq[5],
        ),
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def link_wrench(m, h0, h1, h2, I, t, td):
    """w_k = M_k tdot_k + Omega_k M_k E_k t_k (000 eqs. 1-2b) with M_k given by m, h = m d and
    I_O = I:  n = I_O wdot + h x odotdot + w x (I_O w),  f = m odotdot + wdot x h + w x (w x h)."""
    Ixx, Ixy, Ixz, Iyy, Iyz, Izz = I
    w0, w1, w2 = t[0], t[1], t[2]
    a0, a1, a2, b0, b1, b2 = td
    c0, c1, c2 = cross3(
        w0, w1, w2, Ixx * w0 + Ixy * w1 + Ixz * w2, Ixy * w0 + Iyy * w1 + Iyz * w2, Ixz * w0 + Iyz * w1 + Izz * w2
    )
    d0, d1, d2 = cross3(h0, h1, h2, b0, b1, b2)
    e0, e1, e2 = cross3(w0, w1, w2, h0, h1, h2)
    f0, f1, f2 = cross3(w0, w1, w2, e0, e1, e2)
    g0, g1, g2 = cross3(a0, a1, a2, h0, h1, h2)
    return (
        Ixx * a0 + Ixy * a1 + Ixz * a2 + c0 + d0,
        Ixy * a0 + Iyy * a1 + Iyz * a2 + c1 + d1,
        Ixz * a0 + Iyz * a1 + Izz * a2 + c2 + d2,
        m * b0 + g0 + f0,
        m * b1 + g1 + f1,
        m * b2 + g2 + f2,
    )


@njit(cache=True, inline="always", fastmath={"contract"})
def store_link_wrench(ki, kf, work, k, fext, has_fext, t, td):
    """w_k - f_ext,k into link k's row: w_k from :func:`link_wrench`, zero for a massless link
    (e.g. inside a universal joint)."""
    if T.massless(ki, k):
        for j in range(6):
            work[k, T.C_W + j] = -fext[k, j] if has_fext else 0.0
    else:
        I = (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5])
        wk = link_wrench(kf[k, T.MASS], kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2], I, t, td)
        for j in range(6):
            work[k, T.C_W + j] = wk[j] - fext[k, j] if has_fext else wk[j]


@njit(cache=True, inline="always", fastmath={"contract"})
def kinetic_energy_term(m, h0, h1, h2, I, t):
    """1/2 t_k^T M_k t_k = 1/2 (w^T I_O w + 2 w . (h x v) + m v . v)."""
    w0, w1, w2, v0, v1, v2 = t
    Iw = (
        w0 * (I[0] * w0 + I[1] * w1 + I[2] * w2)
        + w1 * (I[1] * w0 + I[3] * w1 + I[4] * w2)
        + w2 * (I[2] * w0 + I[4] * w1 + I[5] * w2)
    )
    x0, x1, x2 = cross3(h0, h1, h2, v0, v1, v2)
    return 0.5 * (Iw + 2.0 * (w0 * x0 + w1 * x1 + w2 * x2) + m * (v0 * v0 + v1 * v1 + v2 * v2))


@njit(cache=True, fastmath={"contract"})
def general_joint_rates(ki, kf, work, k, qd, qdd):
    """(P_k qd_k, P_k qdd_k, Pdot_k qd_k) for a joint without an aligned axis (multi-DOF,
    general axis); Pdot qd is non-zero for the universal joint only:
    [(P_0 x axis2) qd_0 qd_1; 0]."""
    v0 = ki[k, T.IDX_V]
    row = 3 * ki.shape[0] + qd.shape[0] + v0  # P rows
    a = np.zeros(6)
    b = np.zeros(6)
    for n in range(ki[k, T.NV]):
        for j in range(6):
            a[j] += work[row + n, j] * qd[v0 + n]
            b[j] += work[row + n, j] * qdd[v0 + n]
    cj = (0.0, 0.0, 0.0)
    if T.joint_type(ki, k) == UNIVERSAL:
        j0, j1, j2 = cross3(
            work[row, 0], work[row, 1], work[row, 2], kf[k, T.AXIS2], kf[k, T.AXIS2 + 1], kf[k, T.AXIS2 + 2]
        )
        f = qd[v0] * qd[v0 + 1]
        cj = (j0 * f, j1 * f, j2 * f)
    return (a[0], a[1], a[2], a[3], a[4], a[5]), (b[0], b[1], b[2], b[3], b[4], b[5]), cj


@njit_one_version(fastmath={"contract"})
def twist_forward_recursion(ki, kf, q, qd, qdd, fext, work, full):
    """Step 1 of 000 Table 1 for every link: geometry of A_{k,b} and P_k, t_k, tdot_k, w_k.

    Gravity enters as the base twist rate [0; -g] (000 Table 1, note).  ``fext`` is
    (n_links, 6) in internal order, or (0, 6) for none.  Returns the kinetic energy
    sum_k 1/2 t_k^T M_k t_k.
    """
    L, nv = ki.shape[0], qd.shape[0]
    far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    energy = 0.0
    has_fext = fext.shape[0] > 0
    g0, g1, g2 = gravity(kf) if L > 0 else (0.0, 0.0, 0.0)
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t, td = zero, zero
    done = 0  # links whose geometry is computed
    poly = poly_ok(q)
    for i in range(n_modules(ki)):  # inter-modular: M_1 .. M_s
        first, end, p = modules(ki, i)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k >= done:  # the geometry of the next block
                done = min(k + GEOMETRY_BLOCK, L)
                joint_geometry_pass(ki, kf, q, nv, work, full, k, done, poly)
            if k == first:
                if p < 0:
                    t, td = zero, (0.0, 0.0, 0.0, -g0, -g1, -g2)
                else:  # last link of the parent module
                    b = module_row(L, nv, p) + T.M_TWIST
                    t = (work[b, 0], work[b, 1], work[b, 2], work[b, 3], work[b, 4], work[b, 5])
                    b = module_row(L, nv, p) + T.M_RATE
                    td = (work[b, 0], work[b, 1], work[b, 2], work[b, 3], work[b, 4], work[b, 5])
            if far:  # the rows of the next geometry block
                prefetch(kf, k + GEOMETRY_BLOCK, 0)
                prefetch(kf, k + GEOMETRY_BLOCK, 8)
                prefetch(work, k + GEOMETRY_BLOCK, 0)
            code, c, s, e = rotation(ki, work, k)
            d = T.dof_index(ki, k)
            if d >= 0:  # P_k = sign e_d
                iv, sg = ki[k, T.IDX_V], T.dof_sign(ki, k)
                pq, pqq = unit6(d, sg * qd[iv]), unit6(d, sg * qdd[iv])
                cj = (0.0, 0.0, 0.0)
            else:
                pq, pqq, cj = general_joint_rates(ki, kf, work, k, qd, qdd)
            if code <= 2:  # r_k = r0: one path per source of r_k
                t, td = twist_rate_bias(
                    code,
                    c,
                    s,
                    NO_E,
                    T.offset_code(ki, k),
                    kf[k, T.T0],
                    kf[k, T.T0 + 1],
                    kf[k, T.T0 + 2],
                    t,
                    td,
                    pq,
                    pqq,
                    cj,
                )
            else:
                r0, r1, r2 = offset(kf, work, L, k, code)
                t, td = twist_rate_bias(code, c, s, e, T.R_GENERAL, r0, r1, r2, t, td, pq, pqq, cj)
            store_link_wrench(ki, kf, work, k, fext, has_fext, t, td)
            if full and not T.massless(ki, k):
                energy += kinetic_energy_term(
                    kf[k, T.MASS],
                    kf[k, T.H],
                    kf[k, T.H + 1],
                    kf[k, T.H + 2],
                    (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5]),
                    t,
                )
        b = module_row(L, nv, i)
        for j in range(6):
            work[b + T.M_TWIST, j] = t[j]
            work[b + T.M_RATE, j] = td[j]
    return energy
