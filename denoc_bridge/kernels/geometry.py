"""Joint geometry: the placement of every link relative to its parent (``A_{k,b}``) and the
joint-motion propagation matrices ``P_k`` (000 eq. 7b; 001 eq. A.4).

``E_k`` is kept as its rotation code (:mod:`.tables`): for codes 0-2 the
(cos, sin) pair in the link row of the work array; for the general code the 3x3
matrix (row major) in row ``L + k``.  The link row also receives the offset
``r_k`` of the link origin in the parent frame; the rows of ``P_k`` go to the P
region (row ``2 L + nv + v``) for joints without an aligned axis.  With
``full`` every ``E_k`` and every ``P_k`` is written (for the O(n^2) algorithms).
"""

import numpy as np
from numba import njit

from . import tables as T
from .joints import joint_subspace, joint_transform
from .spatial6 import rot3


@njit(cache=True, fastmath={"contract"})
def joint_geometry_pass(ki, kf, q, nv, work, full):
    """Geometry of every link.  The links are independent here, so this loop is kept apart
    from the recursions: the cos/sin of consecutive joints then overlap in the pipeline."""
    L = ki.shape[0]
    for k in range(L):
        code = ki[k, T.ROT]
        jt = ki[k, T.JTYPE]
        iq = ki[k, T.IDX_Q]
        work[k, T.C_R] = kf[k, T.T0]
        work[k, T.C_R + 1] = kf[k, T.T0 + 1]
        work[k, T.C_R + 2] = kf[k, T.T0 + 2]
        if jt == 0:
            c, s = np.cos(q[iq]), np.sin(q[iq])
        elif jt == 1:                                           # continuous: (cos, sin), normalised
            n = np.sqrt(q[iq] * q[iq] + q[iq + 1] * q[iq + 1])
            c, s = q[iq] / n, q[iq + 1] / n
        else:
            c, s = 1.0, 0.0
        if code <= 2:                                           # rotation about a coordinate axis
            work[k, T.C_CS] = c
            work[k, T.C_CS + 1] = ki[k, T.SIGN] * s
        elif code == T.ROT_IDENTITY:                            # prismatic: r = r0 + axis q
            x = q[iq]
            work[k, T.C_R] += kf[k, T.AXIS] * x
            work[k, T.C_R + 1] += kf[k, T.AXIS + 1] * x
            work[k, T.C_R + 2] += kf[k, T.AXIS + 2] * x
        elif ki[k, T.DOF] >= 0 and jt <= 1:                     # axis e_a, general placement: E = (R0 R_J)^T,
            a = ki[k, T.DOF]                                    # R0 R_J keeps column a of R0 and turns
            i, j = (a + 1) % 3, (a + 2) % 3                     # columns i, j by the joint angle
            s = ki[k, T.SIGN] * s
            for m in range(3):
                work[L + k, 3 * a + m] = kf[k, T.R0 + 3 * m + a]
                ri, rj = kf[k, T.R0 + 3 * m + i], kf[k, T.R0 + 3 * m + j]
                work[L + k, 3 * i + m] = c * ri + s * rj
                work[L + k, 3 * j + m] = c * rj - s * ri
        elif jt <= 2:
            one_dof_general(kf, k, jt, q[iq], c, s, L, work)
        else:
            multi_dof_general(ki, kf, q, k, work)
        if full or ki[k, T.DOF] < 0:
            joint_rows(ki, kf, q, k, nv, work, full)


@njit(cache=True, fastmath={"contract"})
def one_dof_general(kf, k, jt, x, c, s, L, work):
    """E_k = (R0 R_J)^T and r_k for a revolute, continuous or prismatic joint about any axis e:
    R_J = c 1 + s ex + (1 - c) e e^T (Rodrigues) or, prismatic, R_J = 1 and r = r0 + R0 e x."""
    e0, e1, e2 = kf[k, T.AXIS], kf[k, T.AXIS + 1], kf[k, T.AXIS + 2]
    if jt == 2:
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
        for i in range(3):
            work[k, T.C_R + i] += (kf[k, T.R0 + 3 * i] * e0 + kf[k, T.R0 + 3 * i + 1] * e1
                                   + kf[k, T.R0 + 3 * i + 2] * e2) * x
    else:
        t = 1.0 - c
        R00, R01, R02 = c + t * e0 * e0, t * e0 * e1 - s * e2, t * e0 * e2 + s * e1
        R10, R11, R12 = t * e1 * e0 + s * e2, c + t * e1 * e1, t * e1 * e2 - s * e0
        R20, R21, R22 = t * e2 * e0 - s * e1, t * e2 * e1 + s * e0, c + t * e2 * e2
    for i in range(3):                                          # row i of R0 R_J is column i of E
        a0, a1, a2 = kf[k, T.R0 + 3 * i], kf[k, T.R0 + 3 * i + 1], kf[k, T.R0 + 3 * i + 2]
        work[L + k, i] = a0 * R00 + a1 * R10 + a2 * R20
        work[L + k, 3 + i] = a0 * R01 + a1 * R11 + a2 * R21
        work[L + k, 6 + i] = a0 * R02 + a1 * R12 + a2 * R22


@njit(cache=True)
def multi_dof_general(ki, kf, q, k, work):
    """E_k = (R0 R_J)^T and r_k = r0 + R0 p_J for a multi-DOF joint (spherical, free-flyer,
    universal, planar, translation)."""
    RJ, pJ, tmpR = np.empty((3, 3)), np.empty(3), np.empty((3, 3))
    iq = ki[k, T.IDX_Q]
    joint_transform(ki[k, T.JTYPE], kf[k, T.AXIS:T.AXIS + 3], kf[k, T.AXIS2:T.AXIS2 + 3], q[iq:iq + ki[k, T.NQ]],
                    RJ, pJ, tmpR)
    L = ki.shape[0]
    for i in range(3):
        for j in range(3):
            work[L + k, 3 * j + i] = kf[k, T.R0 + 3 * i] * RJ[0, j] + kf[k, T.R0 + 3 * i + 1] * RJ[1, j] \
                + kf[k, T.R0 + 3 * i + 2] * RJ[2, j]
        work[k, T.C_R + i] += kf[k, T.R0 + 3 * i] * pJ[0] + kf[k, T.R0 + 3 * i + 1] * pJ[1] \
            + kf[k, T.R0 + 3 * i + 2] * pJ[2]


@njit(cache=True)
def joint_rows(ki, kf, q, k, nv, work, full):
    """Rows of P_k (P region of the work array), and with ``full`` the 3x3 E_k of a coded rotation."""
    L = ki.shape[0]
    code = ki[k, T.ROT]
    if full and code != T.ROT_GENERAL:
        c, s = work[k, T.C_CS], work[k, T.C_CS + 1]
        e = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
        for n in range(3):                                      # columns of E_k: E_k e_n
            e0, e1, e2 = rot3(code, c, s, e, 1.0 if n == 0 else 0.0, 1.0 if n == 1 else 0.0, 1.0 if n == 2 else 0.0)
            work[L + k, n], work[L + k, 3 + n], work[L + k, 6 + n] = e0, e1, e2
    iq = ki[k, T.IDX_Q]
    row = 2 * L + nv + ki[k, T.IDX_V]
    joint_subspace(ki[k, T.JTYPE], kf[k, T.AXIS:T.AXIS + 3], kf[k, T.AXIS2:T.AXIS2 + 3], q[iq:iq + ki[k, T.NQ]],
                   work[row:row + ki[k, T.NV], 0:6])
