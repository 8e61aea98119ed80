# ruff: noqa: F403, F405  (the layout's names come from the compiled core's Python twin, until numba goes)
"""Joint kinematics: placement of each link relative to its parent and the
joint-motion propagation matrices ``P_k`` (000 eq. 7b; 001 eq. A.4).

Joint type codes are those of :class:`denoc_bridge.multibody.joints.JointType`.
``P`` is stored one row per degree of freedom: ``P[idx_v[k] + d]`` is the
6-vector (internal order [angular; linear], child frame) of column ``d`` of
``P_k``.
"""

import numpy as np
from numba import njit

from denoc_bridge.core.layout import *
from denoc_bridge.kernels.spatial_ops import cross


@njit(cache=True, inline="always")
def unit_pair(a, b):
    """(a, b) / |(a, b)|, scaled by max(|a|, |b|) first so that the squares neither overflow
    (entries ~1e200) nor underflow; a (0, 0) pair is refused before (entry.valid_state)."""
    m = max(abs(a), abs(b))
    a, b = a / m, b / m
    n = np.sqrt(a * a + b * b)
    return a / n, b / n


@njit(cache=True)
def rotation_about_axis(e, c, s, R):
    """Rodrigues: R = c 1 + s ex + (1 - c) e e^T for a unit axis e."""
    t = 1.0 - c
    R[0, 0] = c + t * e[0] * e[0]
    R[0, 1] = t * e[0] * e[1] - s * e[2]
    R[0, 2] = t * e[0] * e[2] + s * e[1]
    R[1, 0] = t * e[1] * e[0] + s * e[2]
    R[1, 1] = c + t * e[1] * e[1]
    R[1, 2] = t * e[1] * e[2] - s * e[0]
    R[2, 0] = t * e[2] * e[0] - s * e[1]
    R[2, 1] = t * e[2] * e[1] + s * e[0]
    R[2, 2] = c + t * e[2] * e[2]


@njit(cache=True)
def quaternion_rotation(x, y, z, w, R):
    """Rotation matrix of the quaternion (x, y, z, w) (Pinocchio's order), normalised on the fly:
    R = 1 + s (w [v]x + [v]x^2) with s = 2 / |q|^2, after scaling by the largest entry so that
    |q|^2 can neither overflow nor underflow."""
    m = max(max(abs(x), abs(y)), max(abs(z), abs(w)))
    x, y, z, w = x / m, y / m, z / m, w / m
    s = 2.0 / (x * x + y * y + z * z + w * w)
    R[0, 0] = 1.0 - s * (y * y + z * z)
    R[0, 1] = s * (x * y - z * w)
    R[0, 2] = s * (x * z + y * w)
    R[1, 0] = s * (x * y + z * w)
    R[1, 1] = 1.0 - s * (x * x + z * z)
    R[1, 2] = s * (y * z - x * w)
    R[2, 0] = s * (x * z - y * w)
    R[2, 1] = s * (y * z + x * w)
    R[2, 2] = 1.0 - s * (x * x + y * y)


@njit(cache=True)
def joint_transform(jtype, axis, axis2, q, R, p, tmpR):
    """Motion of the joint: child frame = joint frame rotated by R and moved by p.

    ``q`` is the slice of the configuration that belongs to this joint; quaternions and
    (cos, sin) pairs need not be normalised (they are normalised on the fly).
    """
    for i in range(3):
        p[i] = 0.0
        for j in range(3):
            R[i, j] = 1.0 if i == j else 0.0
    if jtype == REVOLUTE:
        rotation_about_axis(axis, np.cos(q[0]), np.sin(q[0]), R)
    elif jtype == CONTINUOUS:
        c, s = unit_pair(q[0], q[1])  # (cos, sin) normalised on the fly
        rotation_about_axis(axis, c, s, R)
    elif jtype == PRISMATIC:
        for i in range(3):
            p[i] = axis[i] * q[0]
    elif jtype == SPHERICAL:
        quaternion_rotation(q[0], q[1], q[2], q[3], R)
    elif jtype == FREEFLYER:
        for i in range(3):
            p[i] = q[i]
        quaternion_rotation(q[3], q[4], q[5], q[6], R)
    elif jtype == UNIVERSAL:
        # R = Rot(axis, q0) Rot(axis2, q1): R1 in tmpR, R2 in R, then R1 R2 row by row
        # (p, still zero for this joint, serves as the row buffer and is reset afterwards)
        rotation_about_axis(axis, np.cos(q[0]), np.sin(q[0]), tmpR)
        rotation_about_axis(axis2, np.cos(q[1]), np.sin(q[1]), R)
        for i in range(3):
            for j in range(3):
                p[j] = tmpR[i, 0] * R[0, j] + tmpR[i, 1] * R[1, j] + tmpR[i, 2] * R[2, j]
            for j in range(3):
                tmpR[i, j] = p[j]
        for i in range(3):
            p[i] = 0.0
            for j in range(3):
                R[i, j] = tmpR[i, j]
    elif jtype == PLANAR:
        c, s = unit_pair(q[2], q[3])
        p[0] = q[0]
        p[1] = q[1]
        R[0, 0] = c
        R[0, 1] = -s
        R[1, 0] = s
        R[1, 1] = c
    elif jtype == TRANSLATION:
        for i in range(3):
            p[i] = q[i]


@njit(cache=True)
def joint_subspace(jtype, axis, axis2, q, P):
    """Rows of P_k (child frame, [angular; linear]); ``P`` has nv_k rows."""
    nrow = P.shape[0]
    for d in range(nrow):
        for i in range(6):
            P[d, i] = 0.0
    if jtype == REVOLUTE or jtype == CONTINUOUS:
        for i in range(3):
            P[0, i] = axis[i]
    elif jtype == PRISMATIC:
        for i in range(3):
            P[0, 3 + i] = axis[i]
    elif jtype == SPHERICAL:
        for d in range(3):
            P[d, d] = 1.0
    elif jtype == FREEFLYER:
        # Pinocchio's v = [linear; angular] in the child frame
        for d in range(3):
            P[d, 3 + d] = 1.0
            P[3 + d, d] = 1.0
    elif jtype == UNIVERSAL:
        # omega_rel = Rot(axis2, q1)^T axis qd0 + axis2 qd1
        c = np.cos(q[1])
        s = np.sin(q[1])
        e = axis2
        ee = e[0] * axis[0] + e[1] * axis[1] + e[2] * axis[2]
        # Rot(e, q1)^T a = c a - s (e x a) + (1 - c) (e.a) e
        ex0 = e[1] * axis[2] - e[2] * axis[1]
        ex1 = e[2] * axis[0] - e[0] * axis[2]
        ex2 = e[0] * axis[1] - e[1] * axis[0]
        P[0, 0] = c * axis[0] - s * ex0 + (1.0 - c) * ee * e[0]
        P[0, 1] = c * axis[1] - s * ex1 + (1.0 - c) * ee * e[1]
        P[0, 2] = c * axis[2] - s * ex2 + (1.0 - c) * ee * e[2]
        for i in range(3):
            P[1, i] = axis2[i]
    elif jtype == PLANAR:
        P[0, 3] = 1.0
        P[1, 4] = 1.0
        P[2, 2] = 1.0
    elif jtype == TRANSLATION:
        for d in range(3):
            P[d, 3 + d] = 1.0


@njit(cache=True)
def joint_subspace_rate(jtype, axis, axis2, P, qd, c, tmp):
    """c = (dP_k/dt) qdot_k in the child frame; nonzero only for the universal joint.

    For the universal joint, d/dt (Rot(axis2, q1)^T axis) = (Rot^T axis) x axis2 qd1,
    so c = [(P_0 x axis2) qd0 qd1; 0].
    """
    for i in range(6):
        c[i] = 0.0
    if jtype == UNIVERSAL:
        cross(P[0, 0:3], axis2, tmp)
        for i in range(3):
            c[i] = tmp[i] * qd[0] * qd[1]
