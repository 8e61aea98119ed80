"""Kinetic and potential energy in one O(n) forward recursion, for one state: the potential
that the joint limits of the numba runs conserve (:mod:`.limits`; the public energies are
compiled, denoc_bridge/core/energy.pxi).

Twists as in the forward recursion of inverse dynamics (000 Table 1, step 1:
``t_k = A_{k,b} t_b + P_k qd_k``), ``T = sum_k 1/2 t_k^T M_k t_k`` (000 eq. 2b)
plus the armature's ``1/2 sum_i J_i qd_i^2``; the link orientation is carried as
``W_k = E_k W_b`` (world to link coordinates) and the origin as
``p_k = p_b + W_b^T r_k``, so that the gravitational potential is
``V_g = -sum_k (m_k g . p_k + (W_k g) . h_k)`` (h = m c, the first moment).
Joint springs add ``1/2 sum_i K_i d_i^2`` with ``d = q (-) q_rest``.
"""

from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.configuration import difference
from denoc_bridge.kernels.geometry import joint_geometry_pass
from denoc_bridge.kernels.inverse_dynamics import (
    GEOMETRY_BLOCK,
    general_joint_rates,
    gravity,
    kinetic_energy_term,
    module_row,
    modules,
    n_modules,
    offset,
    rotation,
    unit6,
)
from denoc_bridge.kernels.spatial6 import apply_A, rot3
from denoc_bridge.kernels.trig import poly_ok


@njit(cache=True, fastmath={"contract"})
def energy_forward_recursion(ki, kf, q, v, work):
    """(kinetic energy of the links, gravitational potential energy) at (q, v)."""
    L, nv = ki.shape[0], v.shape[0]
    g0, g1, g2 = gravity(kf) if L > 0 else (0.0, 0.0, 0.0)
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    kinetic = 0.0
    potential = 0.0
    t = zero
    W = (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0)  # columns of W_b, then p_b
    p = (0.0, 0.0, 0.0)
    done = 0
    poly = poly_ok(q)
    for i in range(n_modules(ki)):  # inter-modular: M_1 .. M_s
        first, end, parent = modules(ki, i)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k >= done:
                done = min(k + GEOMETRY_BLOCK, L)
                joint_geometry_pass(ki, kf, q, nv, work, False, k, done, poly)
            if k == first:
                if parent < 0:
                    t, W, p = zero, (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)
                else:  # last link of the parent module
                    b = module_row(L, nv, parent)
                    tw, f = b + T.M_TWIST, b + T.M_FRAME
                    t = (work[tw, 0], work[tw, 1], work[tw, 2], work[tw, 3], work[tw, 4], work[tw, 5])
                    W = (
                        work[f, 0],
                        work[f, 1],
                        work[f, 2],
                        work[f, 3],
                        work[f, 4],
                        work[f, 5],
                        work[f, 6],
                        work[f, 7],
                        work[f + 1, 0],
                    )
                    p = (work[f + 1, T.G_R], work[f + 1, T.G_R + 1], work[f + 1, T.G_R + 2])
            code, c, s, e = rotation(ki, work, k)
            r0, r1, r2 = offset(kf, work, L, k, code)
            d = T.dof_index(ki, k)
            if d >= 0:
                pq = unit6(d, T.dof_sign(ki, k) * v[ki[k, T.IDX_V]])
            else:
                pq, _, _ = general_joint_rates(ki, kf, work, k, v, v)
            x = apply_A(code, c, s, e, T.R_GENERAL, r0, r1, r2, t[0], t[1], t[2], t[3], t[4], t[5])
            t = (x[0] + pq[0], x[1] + pq[1], x[2] + pq[2], x[3] + pq[3], x[4] + pq[4], x[5] + pq[5])  # 000 (5)
            # p_k = p_b + W_b^T r_k, then W_k = E_k W_b column by column
            p = (
                p[0] + W[0] * r0 + W[3] * r1 + W[6] * r2,
                p[1] + W[1] * r0 + W[4] * r1 + W[7] * r2,
                p[2] + W[2] * r0 + W[5] * r1 + W[8] * r2,
            )
            a0, a1, a2 = rot3(code, c, s, e, W[0], W[3], W[6])
            b0, b1, b2 = rot3(code, c, s, e, W[1], W[4], W[7])
            c0, c1, c2 = rot3(code, c, s, e, W[2], W[5], W[8])
            W = (a0, b0, c0, a1, b1, c1, a2, b2, c2)
            m, h0, h1, h2 = kf[k, T.MASS], kf[k, T.H], kf[k, T.H + 1], kf[k, T.H + 2]
            I = (kf[k, T.IO], kf[k, T.IO + 1], kf[k, T.IO + 2], kf[k, T.IO + 3], kf[k, T.IO + 4], kf[k, T.IO + 5])
            kinetic += kinetic_energy_term(m, h0, h1, h2, I, t)
            wg0 = W[0] * g0 + W[1] * g1 + W[2] * g2  # W_k g: gravity in link coordinates
            wg1 = W[3] * g0 + W[4] * g1 + W[5] * g2
            wg2 = W[6] * g0 + W[7] * g1 + W[8] * g2
            potential -= m * (g0 * p[0] + g1 * p[1] + g2 * p[2]) + wg0 * h0 + wg1 * h1 + wg2 * h2
        b = module_row(L, nv, i)  # for the child modules: t, W and p of the last link
        tw, f = b + T.M_TWIST, b + T.M_FRAME
        for j in range(6):
            work[tw, j] = t[j]
        for j in range(8):
            work[f, j] = W[j]
        work[f + 1, 0] = W[8]
        work[f + 1, T.G_R], work[f + 1, T.G_R + 1], work[f + 1, T.G_R + 2] = p[0], p[1], p[2]
    return kinetic, potential


@njit(cache=True)
def energies_state(kt, work, q, v, K, q_rest, springs, d):
    """(kinetic, potential) with the armature and the joint springs; ``d`` is (nv,) scratch."""
    ki = kt.view(T.INT)
    kinetic, potential = energy_forward_recursion(ki, kt, q, v, work)
    for k in range(ki.shape[0]):
        a0 = ki[k, T.IDX_V]
        for n in range(ki[k, T.NV]):
            kinetic += 0.5 * kt[k, T.ARM + n] * v[a0 + n] * v[a0 + n]
    if springs:
        difference(ki, q_rest, q, d)
        for i in range(v.shape[0]):
            potential += 0.5 * K[i] * d[i] * d[i]
    return kinetic, potential
