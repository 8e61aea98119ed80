"""Joint geometry: the placement of every link relative to its parent (``A_{k,b}``) and the
joint-motion propagation matrices ``P_k`` (000 eq. 7b; 001 eq. A.4).

``E_k`` is kept as its rotation code (:mod:`.tables`): for codes 0-2 the
(cos, sin) pair goes to the link row of the work array and ``r_k`` is the
constant ``r0`` of the table; for codes 3-4 the 3x3 ``E_k`` (row major) and
``r_k`` go to the link's two geometry rows (from row ``L + 2 k``; entry n of
E_k at ``(L + 2 k + n // 8, n % 8)``, r_k in columns 1-3 of the second row).  The
rows of ``P_k`` go to the P region for joints without an aligned axis.  With
``full`` every ``E_k``, ``r_k`` and ``P_k`` is written (for the O(n^2)
algorithms).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_one_version
from denoc_bridge.kernels.joints import joint_subspace, joint_transform, unit_pair
from denoc_bridge.kernels.spatial6 import rot3
from denoc_bridge.kernels.trig import cos_sin, cos_sin_any


@njit(cache=True, inline="always")
def geometry_row(L, k):
    """First of the two geometry rows of link k."""
    return L + 2 * k


@njit(cache=True, inline="always")
def set_e(work, g, n, x):
    """Entry n (0-8, row major) of E_k, g = geometry_row(L, k)."""
    work[g + (n >> 3), n & 7] = x


@njit_one_version(fastmath={"contract"})
def joint_geometry_pass(ki, kf, q, nv, work, full, first, end, poly):
    """Geometry of links first..end-1.  The links are independent here, so this loop is kept
    apart from the recursions (which call it block by block, so that the block is still in
    cache when they read it).  ``poly``: all of q is within the range of the branch-free
    cos/sin (:mod:`.trig`).  When every joint of the range is revolute about a coordinate axis
    (chains, ropes), the angles are copied into a contiguous block and their cos/sin computed
    in one loop that compiles to SIMD code (5 ns per joint instead of 8.5); otherwise the
    joints are taken one by one."""
    if not poly or full or not coordinate_axis_block(ki, first, end):
        joint_geometry(ki, kf, q, nv, work, full, first, end, poly)
        return
    for b in range(first, end, T.BLOCK):
        e = min(b + T.BLOCK, end)
        c, s = block_cos_sin(ki, q, work, b, e, True)
        for k in range(b, e):  # scatter to the links
            store_cos_sin(ki, work, k, c[k - b], s[k - b])


@njit(cache=True, fastmath={"contract"})
def coordinate_axis_block(ki, first, end):
    """True when every joint of links first..end-1 is revolute about a coordinate axis (the
    joints whose geometry is one (cos, sin) pair)."""
    for k in range(first, end):
        if (ki[k, T.FLAGS] & 0xF07) > 2:
            return False
    return True


@njit_one_version(fastmath={"contract"})
def block_cos_sin(ki, q, work, first, end, poly):
    """cos and sin of the first coordinate of the joints of links first..end-1 (at most
    T.BLOCK links) into the scratch rows of ``work``, in one loop that compiles to SIMD code
    when ``poly`` (every q within the range of :func:`.trig.cos_sin`), else by the C library;
    returns the two scratch blocks (c, s)."""
    r = work.shape[0] - T.SCRATCH_ROWS
    x = work[r : r + 8].reshape(T.BLOCK)  # contiguous scratch blocks
    c = work[r + 8 : r + 16].reshape(T.BLOCK)
    s = work[r + 16 : r + 24].reshape(T.BLOCK)
    n = end - first
    for i in range(n):  # every joint's first coordinate
        x[i] = q[ki[first + i, T.IDX_Q]]
    if poly:
        for i in range(n):  # cos and sin, SIMD
            c[i], s[i] = cos_sin(x[i])
    else:
        for i in range(n):
            c[i], s[i] = np.cos(x[i]), np.sin(x[i])
    return c, s


@njit(cache=True, inline="always")
def store_cos_sin(ki, work, k, c, s):
    """(cos, sin) of a revolute joint about a coordinate axis into link k's row, the sine
    signed by the direction of the axis (FLAGS bit 6)."""
    work[k, T.C_CS] = c
    work[k, T.C_CS + 1] = -s if ki[k, T.FLAGS] & 64 else s


@njit(cache=True, inline="always", fastmath={"contract"})
def joint_geometry(ki, kf, q, nv, work, full, first, end, poly):
    """Geometry of links first..end-1, any joint, one by one."""
    L = ki.shape[0]
    for k in range(first, end):
        code = T.rot_code(ki, k)
        jt = T.joint_type(ki, k)
        iq = ki[k, T.IDX_Q]
        if jt == 0:
            c, s = cos_sin_any(q[iq], poly)
        elif jt == 1:  # continuous: (cos, sin), normalised
            c, s = unit_pair(q[iq], q[iq + 1])
        else:
            c, s = 1.0, 0.0
        if code <= 2:  # rotation about a coordinate axis
            work[k, T.C_CS] = c
            work[k, T.C_CS + 1] = T.dof_sign(ki, k) * s
            if full:
                coded_rotation_and_offset(ki, kf, k, c, T.dof_sign(ki, k) * s, work)
                joint_rows(ki, kf, q, k, nv, work)
            continue
        g = geometry_row(L, k)
        for i in range(3):
            work[g + 1, T.G_R + i] = kf[k, T.T0 + i]
        if code == T.ROT_IDENTITY:  # prismatic: r = r0 + axis q
            x = q[iq]
            for i in range(3):
                work[g + 1, T.G_R + i] += kf[k, T.AXIS + i] * x
            if full:
                coded_rotation_and_offset(ki, kf, k, c, s, work)
        elif T.dof_index(ki, k) >= 0 and jt <= 1:  # axis e_a, general placement
            store_e(work, g, aligned_rotation(kf, k, T.dof_index(ki, k), c, T.dof_sign(ki, k) * s))
        elif jt <= 2:
            one_dof_general(kf, k, jt, q[iq], c, s, g, work)
        else:
            multi_dof_general(ki, kf, q, k, g, work)
        if full or T.dof_index(ki, k) < 0:
            joint_rows(ki, kf, q, k, nv, work)


@njit(cache=True, inline="always")
def store_e(work, g, e):
    """E_k (a row-major 9-tuple) into the geometry rows from g (static indices)."""
    work[g, 0], work[g, 1], work[g, 2], work[g, 3] = e[0], e[1], e[2], e[3]
    work[g, 4], work[g, 5], work[g, 6], work[g, 7] = e[4], e[5], e[6], e[7]
    work[g + 1, 0] = e[8]


@njit(cache=True, inline="always", fastmath={"contract"})
def aligned_rotation(kf, k, a, c, s):
    """E_k = (R0 R_J)^T for a rotation R_J by (c, s) about the coordinate axis a: row a of E_k is
    column a of R0, rows i and j (i = a + 1, j = a + 2 mod 3) are columns i and j of R0 turned
    by the joint angle (row major 9-tuple, one straight-line case per axis)."""
    r = (
        kf[k, T.R0],
        kf[k, T.R0 + 1],
        kf[k, T.R0 + 2],
        kf[k, T.R0 + 3],
        kf[k, T.R0 + 4],
        kf[k, T.R0 + 5],
        kf[k, T.R0 + 6],
        kf[k, T.R0 + 7],
        kf[k, T.R0 + 8],
    )
    x0, x1, x2 = r[0], r[3], r[6]  # columns of R0
    y0, y1, y2 = r[1], r[4], r[7]
    z0, z1, z2 = r[2], r[5], r[8]
    if a == 0:
        return (
            x0,
            x1,
            x2,
            c * y0 + s * z0,
            c * y1 + s * z1,
            c * y2 + s * z2,
            c * z0 - s * y0,
            c * z1 - s * y1,
            c * z2 - s * y2,
        )
    if a == 1:
        return (
            c * x0 - s * z0,
            c * x1 - s * z1,
            c * x2 - s * z2,
            y0,
            y1,
            y2,
            c * z0 + s * x0,
            c * z1 + s * x1,
            c * z2 + s * x2,
        )
    return (
        c * x0 + s * y0,
        c * x1 + s * y1,
        c * x2 + s * y2,
        c * y0 - s * x0,
        c * y1 - s * x1,
        c * y2 - s * x2,
        z0,
        z1,
        z2,
    )


@njit(cache=True)
def coded_rotation_and_offset(ki, kf, k, c, s, work):
    """For a full pass: the 3x3 E_k of a coded rotation (and r_k = r0 for codes 0-2) in the
    geometry slots."""
    g = geometry_row(ki.shape[0], k)
    code = T.rot_code(ki, k)
    e = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    for n in range(3):  # columns of E_k: E_k e_n
        e0, e1, e2 = rot3(code, c, s, e, 1.0 if n == 0 else 0.0, 1.0 if n == 1 else 0.0, 1.0 if n == 2 else 0.0)
        set_e(work, g, n, e0)
        set_e(work, g, 3 + n, e1)
        set_e(work, g, 6 + n, e2)
    if code <= 2:
        for i in range(3):
            work[g + 1, T.G_R + i] = kf[k, T.T0 + i]


@njit(cache=True, fastmath={"contract"})
def one_dof_general(kf, k, jt, x, c, s, g, work):
    """E_k = (R0 R_J)^T and r_k for a revolute, continuous or prismatic joint about any axis e:
    R_J = c 1 + s ex + (1 - c) e e^T (Rodrigues) or, prismatic, R_J = 1 and r = r0 + R0 e x."""
    e0, e1, e2 = kf[k, T.AXIS], kf[k, T.AXIS + 1], kf[k, T.AXIS + 2]
    if jt == 2:
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0
        for i in range(3):
            work[g + 1, T.G_R + i] += (
                kf[k, T.R0 + 3 * i] * e0 + kf[k, T.R0 + 3 * i + 1] * e1 + kf[k, T.R0 + 3 * i + 2] * e2
            ) * x
    else:
        t = 1.0 - c
        R00, R01, R02 = c + t * e0 * e0, t * e0 * e1 - s * e2, t * e0 * e2 + s * e1
        R10, R11, R12 = t * e1 * e0 + s * e2, c + t * e1 * e1, t * e1 * e2 - s * e0
        R20, R21, R22 = t * e2 * e0 - s * e1, t * e2 * e1 + s * e0, c + t * e2 * e2
    for i in range(3):  # row i of R0 R_J is column i of E
        a0, a1, a2 = kf[k, T.R0 + 3 * i], kf[k, T.R0 + 3 * i + 1], kf[k, T.R0 + 3 * i + 2]
        set_e(work, g, i, a0 * R00 + a1 * R10 + a2 * R20)
        set_e(work, g, 3 + i, a0 * R01 + a1 * R11 + a2 * R21)
        set_e(work, g, 6 + i, a0 * R02 + a1 * R12 + a2 * R22)


@njit(cache=True)
def multi_dof_general(ki, kf, q, k, g, work):
    """E_k = (R0 R_J)^T and r_k = r0 + R0 p_J for a multi-DOF joint (spherical, free-flyer,
    universal, planar, translation)."""
    RJ, pJ, tmpR = np.empty((3, 3)), np.empty(3), np.empty((3, 3))
    iq = ki[k, T.IDX_Q]
    joint_transform(
        T.joint_type(ki, k),
        kf[k, T.AXIS : T.AXIS + 3],
        kf[k, T.AXIS2 : T.AXIS2 + 3],
        q[iq : iq + ki[k, T.NQ]],
        RJ,
        pJ,
        tmpR,
    )
    for i in range(3):
        for j in range(3):
            set_e(
                work,
                g,
                3 * j + i,
                kf[k, T.R0 + 3 * i] * RJ[0, j]
                + kf[k, T.R0 + 3 * i + 1] * RJ[1, j]
                + kf[k, T.R0 + 3 * i + 2] * RJ[2, j],
            )
        work[g + 1, T.G_R + i] += (
            kf[k, T.R0 + 3 * i] * pJ[0] + kf[k, T.R0 + 3 * i + 1] * pJ[1] + kf[k, T.R0 + 3 * i + 2] * pJ[2]
        )


@njit(cache=True)
def joint_rows(ki, kf, q, k, nv, work):
    """Rows of P_k (P region of the work array)."""
    iq = ki[k, T.IDX_Q]
    row = 3 * ki.shape[0] + nv + ki[k, T.IDX_V]
    joint_subspace(
        T.joint_type(ki, k),
        kf[k, T.AXIS : T.AXIS + 3],
        kf[k, T.AXIS2 : T.AXIS2 + 3],
        q[iq : iq + ki[k, T.NQ]],
        work[row : row + ki[k, T.NV], 0:6],
    )
