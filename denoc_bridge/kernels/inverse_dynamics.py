"""Recursive DeNOC inverse dynamics (000 Table 1; 003 eqs. 4-8).

Two passes over the module graph: the forward recursion of twists, twist rates
and link wrenches, and the backward recursion of the wrenches to the joints
(``tau = N_d^T N_l^T w``).  Modules are visited in order M_1..M_s
(inter-modular recursion) and, inside a module, its links 1^i..eta^i
(intra-modular recursion); the first link of a module takes its parent twist
from the last link of the parent module (``A^{i,beta}``, 000 eq. 7a).
"""

import numpy as np
from numba import njit

from .joints import joint_subspace_rate
from .spatial_ops import apply_A, apply_At, cross


@njit(cache=True)
def joint_rates(P, qd, qdd, v0, z, Pq, Pqq):
    """Pq = P_k qdot_k and Pqq = P_k qddot_k."""
    for j in range(6):
        Pq[j] = 0.0
        Pqq[j] = 0.0
    for d in range(z):
        for j in range(6):
            Pq[j] += P[v0 + d, j] * qd[v0 + d]
            Pqq[j] += P[v0 + d, j] * qdd[v0 + d]


@njit(cache=True)
def add_twist_rate_terms(E_k, r_k, wb, t_k, Pq, Pqq, cJ, tdot_k, rc, tmp, tmp2):
    """tdot_k += Adot_{k,b} t_b + Omega_k P_k qd_k + P_k qdd_k + Pdot_k qd_k   (000 Table 1).

    ``wb`` is the parent's angular velocity in the child frame; Adot_{k,b} t_b =
    [0; w_b x (w_b x r + v_rel)] with v_rel the linear part of P_k qd_k.
    """
    for j in range(3):
        rc[j] = E_k[j, 0] * r_k[0] + E_k[j, 1] * r_k[1] + E_k[j, 2] * r_k[2]
    cross(wb, rc, tmp)
    for j in range(3):
        tmp[j] += Pq[3 + j]
    cross(wb, tmp, tmp2)
    for j in range(3):
        tdot_k[3 + j] += tmp2[j]                                # Adot_{k,b} t_b
    cross(t_k[0:3], Pq[0:3], tmp)
    cross(t_k[0:3], Pq[3:6], tmp2)
    for j in range(3):
        tdot_k[j] += tmp[j] + Pqq[j] + cJ[j]                    # Omega_k P_k qd_k + P_k qdd_k + Pdot_k qd_k
        tdot_k[3 + j] += tmp2[j] + Pqq[3 + j] + cJ[3 + j]


@njit(cache=True)
def twist_forward_recursion(module_start, module_end, parent, joint_type, joint_axis, joint_axis2,
                            E, r, P, idx_v, nv_joint, M, qd, qdd, g, fext, t, tdot, w):
    """Step 1 of 000 Table 1: t_k, tdot_k and w_k for every link.

    ``fext`` is (n_links, 6) in internal order (zeros when there is none).
    Gravity enters as the base twist rate [0; -g] (000 Table 1, note).
    """
    base_tdot = np.zeros(6)
    base_tdot[3:6] = -g
    zero6 = np.zeros(6)
    Pq = np.zeros(6)
    Pqq = np.zeros(6)
    cJ = np.zeros(6)
    wb = np.zeros(3)
    rc = np.zeros(3)
    tmp = np.zeros(3)
    tmp2 = np.zeros(3)
    h = np.zeros(6)
    for i in range(module_start.shape[0]):                      # inter-modular: M_1 .. M_s
        for k in range(module_start[i], module_end[i]):         # intra-modular: 1^i .. eta^i
            b = parent[k]
            tb = zero6 if b < 0 else t[b]
            tdb = base_tdot if b < 0 else tdot[b]
            v0 = idx_v[k]
            z = nv_joint[k]
            joint_rates(P, qd, qdd, v0, z, Pq, Pqq)
            apply_A(E[k], r[k], tb, t[k], tmp)
            wb[:] = t[k, 0:3]                                    # E omega_b
            for j in range(6):
                t[k, j] += Pq[j]                                 # t_k = A_{k,b} t_b + P_k qd_k   (5), (A.1)
            apply_A(E[k], r[k], tdb, tdot[k], tmp)               # A_{k,b} tdot_b
            joint_subspace_rate(joint_type[k], joint_axis[k], joint_axis2[k], P[v0:v0 + z],
                                qd[v0:v0 + z], cJ, tmp)          # Pdot_k qd_k (universal joint)
            add_twist_rate_terms(E[k], r[k], wb, t[k], Pq, Pqq, cJ, tdot[k], rc, tmp, tmp2)
            link_wrench(M[k], t[k], tdot[k], fext[k], w[k], h, tmp)   # w_k = M tdot + Omega M E t - f


@njit(cache=True)
def link_wrench(Mk, tk, tdotk, fextk, wk, h, tmp):
    """w_k = M_k tdot_k + Omega_k M_k E_k t_k - f_ext,k   (000 eqs. 1-2b)."""
    for i in range(6):
        s = 0.0
        for j in range(6):
            s += Mk[i, j] * tdotk[j]
        wk[i] = s - fextk[i]
        # M_k E_k t_k keeps only the angular part of the twist
        h[i] = Mk[i, 0] * tk[0] + Mk[i, 1] * tk[1] + Mk[i, 2] * tk[2]
    cross(tk[0:3], h[0:3], tmp)
    for i in range(3):
        wk[i] += tmp[i]
    cross(tk[0:3], h[3:6], tmp)
    for i in range(3):
        wk[3 + i] += tmp[i]


@njit(cache=True)
def wrench_backward_recursion(module_start, module_end, parent, E, r, P, idx_v, nv_joint,
                              armature, qdd, w, tau):
    """Step 2 of 000 Table 1: w~_k = w_k + sum_c A_{c,k}^T w~_c and tau_k = P_k^T w~_k.

    ``w`` is overwritten by the accumulated wrenches w~.
    """
    up = np.zeros(6)
    tmp = np.zeros(3)
    for i in range(module_start.shape[0] - 1, -1, -1):         # inter-modular: M_s .. M_1
        for k in range(module_end[i] - 1, module_start[i] - 1, -1):  # intra-modular: eta^i .. 1^i
            v0 = idx_v[k]
            for d in range(nv_joint[k]):
                s = 0.0
                for j in range(6):
                    s += P[v0 + d, j] * w[k, j]
                tau[v0 + d] = s + armature[v0 + d] * qdd[v0 + d]   # tau_k = P_k^T w~_k
            b = parent[k]
            if b >= 0:
                apply_At(E[k], r[k], w[k], up, tmp)
                for j in range(6):
                    w[b, j] += up[j]                            # w~_b += A_{k,b}^T w~_k
