"""Configurations on the joint manifolds: integrate, difference, rates and dexp^-1, per joint.

Pinocchio's conventions, joint by joint (``q (+) v = q . exp(v)``, velocities in
the child frame): revolute, prismatic, universal and translation joints are
vector spaces; continuous joints are SO(2) as a (cos, sin) pair; spherical
joints SO(3) as a unit quaternion (x, y, z, w); free-flyers SE(3) as
[translation, quaternion] with v = [linear; angular] (``exp6``); planar joints
SE(2) as [x, y, cos, sin] with v = [vx, vy, wz].  Results are normalised.

``dexpinv`` gives the RKMK correction of the fourth-order Runge-Kutta step on
the Lie groups (Munthe-Kaas): in local coordinates xi around q_n,
``q = q_n exp(xi)`` and the body velocity v satisfy ``v = dexp_{-xi}(xi')``, so
``xi' = dexp_{-xi}^-1(v) = v + 1/2 [xi, v] + 1/12 [xi, [xi, v]] + O(xi^4)``, with the
brackets of so(3), se(3) and se(2); zero for the commutative joints.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.joints import CONTINUOUS, FREEFLYER, PLANAR, SPHERICAL


# ------------------------------------------------------------------ SO(3) and SE(3) on scalars
@njit(cache=True, inline="always")
def quat_mul(a0, a1, a2, a3, b0, b1, b2, b3):
    """Hamilton product a b of quaternions (x, y, z, w)."""
    return (
        a3 * b0 + a0 * b3 + a1 * b2 - a2 * b1,
        a3 * b1 - a0 * b2 + a1 * b3 + a2 * b0,
        a3 * b2 + a0 * b1 - a1 * b0 + a2 * b3,
        a3 * b3 - a0 * b0 - a1 * b1 - a2 * b2,
    )


@njit(cache=True, inline="always")
def quat_exp(w0, w1, w2):
    """exp3 of the rotation vector w as a unit quaternion (x, y, z, w)."""
    t2 = w0 * w0 + w1 * w1 + w2 * w2
    t = np.sqrt(t2)
    if t < 1e-4:  # sin(t/2)/t and cos(t/2), Taylor
        s = 0.5 - t2 / 48.0 + t2 * t2 / 3840.0
        c = 1.0 - t2 / 8.0 + t2 * t2 / 384.0
    else:
        s = np.sin(0.5 * t) / t
        c = np.cos(0.5 * t)
    return s * w0, s * w1, s * w2, c


@njit(cache=True, inline="always")
def quat_log(x, y, z, w):
    """Rotation vector of the unit quaternion (x, y, z, w), angle in [0, pi]."""
    if w < 0.0:
        x, y, z, w = -x, -y, -z, -w
    n = np.sqrt(x * x + y * y + z * z)
    if n < 1e-8:  # t / sin(t/2) ~ 2 (1 + t^2 / 24)
        f = 2.0 / w * (1.0 - n * n / (3.0 * w * w))
    else:
        f = 2.0 * np.arctan2(n, w) / n
    return f * x, f * y, f * z


@njit(cache=True, inline="always")
def quat_rotate(x, y, z, w, v0, v1, v2):
    """R(q) v for a unit quaternion."""
    t0, t1, t2 = 2.0 * (y * v2 - z * v1), 2.0 * (z * v0 - x * v2), 2.0 * (x * v1 - y * v0)
    return (v0 + w * t0 + y * t2 - z * t1, v1 + w * t1 + z * t0 - x * t2, v2 + w * t2 + x * t1 - y * t0)


@njit(cache=True, inline="always")
def _V_coefficients(t2):
    """(a, b) with V(w) = 1 + a [w]x + b [w]x^2: a = (1 - cos t)/t^2, b = (t - sin t)/t^3."""
    if t2 < 1e-8:
        return 0.5 - t2 / 24.0 + t2 * t2 / 720.0, 1.0 / 6.0 - t2 / 120.0 + t2 * t2 / 5040.0
    t = np.sqrt(t2)
    return (1.0 - np.cos(t)) / t2, (t - np.sin(t)) / (t2 * t)


@njit(cache=True, inline="always")
def _Vinv_coefficient(t2):
    """c with V(w)^-1 = 1 - 1/2 [w]x + c [w]x^2: c = (1 - t sin t / (2 (1 - cos t))) / t^2."""
    if t2 < 1e-6:
        return 1.0 / 12.0 + t2 / 720.0 + t2 * t2 / 30240.0
    t = np.sqrt(t2)
    return (1.0 - t * np.sin(t) / (2.0 * (1.0 - np.cos(t)))) / t2


@njit(cache=True, inline="always")
def _cross(a0, a1, a2, b0, b1, b2):
    return a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0


@njit(cache=True, inline="always")
def _apply_V(w0, w1, w2, a, b, u0, u1, u2):
    """(1 + a [w]x + b [w]x^2) u."""
    c0, c1, c2 = _cross(w0, w1, w2, u0, u1, u2)
    d0, d1, d2 = _cross(w0, w1, w2, c0, c1, c2)
    return u0 + a * c0 + b * d0, u1 + a * c1 + b * d1, u2 + a * c2 + b * d2


@njit(cache=True, inline="always")
def _hemisphere_norm(r, x, y, z, w):
    """|r|, negated when r points away from (x, y, z, w): Pinocchio keeps the quaternion of an
    integrated free-flyer in the hemisphere of the one it started from (not that of a
    spherical joint)."""
    n = np.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
    return -n if r[0] * x + r[1] * y + r[2] * z + r[3] * w < 0.0 else n


# ------------------------------------------------------------------ per joint
@njit(cache=True)
def integrate_joint(jt, q, i, v, j, out):
    """out[i:i+nq] = q[i:i+nq] (+) v[j:j+nv] for one joint."""
    if jt == CONTINUOUS:
        ca, sa = q[i], q[i + 1]
        n = np.sqrt(ca * ca + sa * sa)
        c, s = np.cos(v[j]), np.sin(v[j])
        out[i], out[i + 1] = (c * ca - s * sa) / n, (s * ca + c * sa) / n
    elif jt == SPHERICAL:
        e = quat_exp(v[j], v[j + 1], v[j + 2])
        r = quat_mul(q[i], q[i + 1], q[i + 2], q[i + 3], e[0], e[1], e[2], e[3])
        n = np.sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2] + r[3] * r[3])
        for m in range(4):
            out[i + m] = r[m] / n
    elif jt == FREEFLYER:  # q exp6(v), v = [linear; angular]
        w0, w1, w2 = v[j + 3], v[j + 4], v[j + 5]
        a, b = _V_coefficients(w0 * w0 + w1 * w1 + w2 * w2)
        t = _apply_V(w0, w1, w2, a, b, v[j], v[j + 1], v[j + 2])
        x, y, z, w = q[i + 3], q[i + 4], q[i + 5], q[i + 6]
        nq = np.sqrt(x * x + y * y + z * z + w * w)
        x, y, z, w = x / nq, y / nq, z / nq, w / nq
        d = quat_rotate(x, y, z, w, t[0], t[1], t[2])
        e = quat_exp(w0, w1, w2)
        r = quat_mul(x, y, z, w, e[0], e[1], e[2], e[3])
        n = _hemisphere_norm(r, x, y, z, w)
        for m in range(3):
            out[i + m] = q[i + m] + d[m]
        for m in range(4):
            out[i + 3 + m] = r[m] / n
    elif jt == PLANAR:  # SE(2): q exp(v), v = [vx, vy, wz]
        ca, sa = q[i + 2], q[i + 3]
        n = np.sqrt(ca * ca + sa * sa)
        ca, sa = ca / n, sa / n
        vx, vy, w = v[j], v[j + 1], v[j + 2]
        if abs(w) < 1e-4:
            sw, cw = 1.0 - w * w / 6.0, w / 2.0 - w * w * w / 24.0  # sin w / w, (1 - cos w) / w
        else:
            sw, cw = np.sin(w) / w, (1.0 - np.cos(w)) / w
        tx, ty = sw * vx - cw * vy, cw * vx + sw * vy
        c, s = np.cos(w), np.sin(w)
        out[i] = q[i] + ca * tx - sa * ty
        out[i + 1] = q[i + 1] + sa * tx + ca * ty
        out[i + 2], out[i + 3] = c * ca - s * sa, s * ca + c * sa
    else:  # vector spaces
        nv = 1 if jt <= 2 else (2 if jt == 5 else 3)
        for m in range(nv):
            out[i + m] = q[i + m] + v[j + m]


@njit(cache=True)
def difference_joint(jt, q0, q1, i, out, j):
    """out[j:j+nv] = q1 (-) q0 = log(q0^-1 q1) for one joint (Pinocchio's ``difference``)."""
    if jt == CONTINUOUS:
        c0, s0, c1, s1 = q0[i], q0[i + 1], q1[i], q1[i + 1]
        out[j] = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
    elif jt == SPHERICAL or jt == FREEFLYER:
        o = 0 if jt == SPHERICAL else 3
        a = (q0[i + o], q0[i + o + 1], q0[i + o + 2], q0[i + o + 3])
        b = (q1[i + o], q1[i + o + 1], q1[i + o + 2], q1[i + o + 3])
        na = np.sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3])
        nb = np.sqrt(b[0] * b[0] + b[1] * b[1] + b[2] * b[2] + b[3] * b[3])
        r = quat_mul(-a[0] / na, -a[1] / na, -a[2] / na, a[3] / na, b[0] / nb, b[1] / nb, b[2] / nb, b[3] / nb)
        w0, w1, w2 = quat_log(r[0], r[1], r[2], r[3])
        if jt == SPHERICAL:
            out[j], out[j + 1], out[j + 2] = w0, w1, w2
        else:  # log6: linear = V(w)^-1 R0^T (p1 - p0)
            d = quat_rotate(
                -a[0] / na,
                -a[1] / na,
                -a[2] / na,
                a[3] / na,
                q1[i] - q0[i],
                q1[i + 1] - q0[i + 1],
                q1[i + 2] - q0[i + 2],
            )
            c = _Vinv_coefficient(w0 * w0 + w1 * w1 + w2 * w2)
            u = _apply_V(w0, w1, w2, -0.5, c, d[0], d[1], d[2])
            out[j], out[j + 1], out[j + 2] = u[0], u[1], u[2]
            out[j + 3], out[j + 4], out[j + 5] = w0, w1, w2
    elif jt == PLANAR:
        n0 = np.sqrt(q0[i + 2] * q0[i + 2] + q0[i + 3] * q0[i + 3])
        n1 = np.sqrt(q1[i + 2] * q1[i + 2] + q1[i + 3] * q1[i + 3])
        c0, s0, c1, s1 = q0[i + 2] / n0, q0[i + 3] / n0, q1[i + 2] / n1, q1[i + 3] / n1
        w = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
        dx, dy = q1[i] - q0[i], q1[i + 1] - q0[i + 1]
        tx, ty = c0 * dx + s0 * dy, -s0 * dx + c0 * dy  # R0^T (p1 - p0)
        if abs(w) < 1e-4:
            sw, cw = 1.0 - w * w / 6.0, w / 2.0 - w * w * w / 24.0
        else:
            sw, cw = np.sin(w) / w, (1.0 - np.cos(w)) / w
        det = sw * sw + cw * cw  # V = [[sw, -cw], [cw, sw]]
        out[j] = (sw * tx + cw * ty) / det
        out[j + 1] = (-cw * tx + sw * ty) / det
        out[j + 2] = w
    else:
        nv = 1 if jt <= 2 else (2 if jt == 5 else 3)
        for m in range(nv):
            out[j + m] = q1[i + m] - q0[i + m]


@njit(cache=True)
def rate_joint(jt, q, i, v, j, out):
    """out[i:i+nq] = dq/dt for the velocity v (the coordinates' time derivative)."""
    if jt == CONTINUOUS:
        out[i], out[i + 1] = -q[i + 1] * v[j], q[i] * v[j]
    elif jt == SPHERICAL or jt == FREEFLYER:
        o = 0 if jt == SPHERICAL else 3
        x, y, z, w = q[i + o], q[i + o + 1], q[i + o + 2], q[i + o + 3]
        wo = 0 if jt == SPHERICAL else 3
        r = quat_mul(x, y, z, w, 0.5 * v[j + wo], 0.5 * v[j + wo + 1], 0.5 * v[j + wo + 2], 0.0)
        for m in range(4):
            out[i + o + m] = r[m]
        if jt == FREEFLYER:  # p' = R v_linear
            n2 = x * x + y * y + z * z + w * w
            d = quat_rotate(x, y, z, w, v[j] / n2, v[j + 1] / n2, v[j + 2] / n2)
            out[i], out[i + 1], out[i + 2] = d[0], d[1], d[2]
    elif jt == PLANAR:
        c, s = q[i + 2], q[i + 3]
        n2 = c * c + s * s
        out[i] = (c * v[j] - s * v[j + 1]) / n2
        out[i + 1] = (s * v[j] + c * v[j + 1]) / n2
        out[i + 2], out[i + 3] = -s * v[j + 2], c * v[j + 2]
    else:
        nv = 1 if jt <= 2 else (2 if jt == 5 else 3)
        for m in range(nv):
            out[i + m] = v[j + m]


@njit(cache=True, inline="always")
def _ad6(p0, p1, p2, f0, f1, f2, u0, u1, u2, w0, w1, w2):
    """ad_xi eta for xi = (p, f) (linear, angular) and eta = (u, w) in se(3)."""
    a = _cross(f0, f1, f2, u0, u1, u2)
    b = _cross(p0, p1, p2, w0, w1, w2)
    c = _cross(f0, f1, f2, w0, w1, w2)
    return a[0] + b[0], a[1] + b[1], a[2] + b[2], c[0], c[1], c[2]


@njit(cache=True)
def dexpinv_joint(jt, xi, v, j, out):
    """out[j:j+nv] = v + 1/2 [xi, v] + 1/12 [xi, [xi, v]] for one joint (0 brackets on the
    commutative joints)."""
    if jt == SPHERICAL:
        a = _cross(xi[j], xi[j + 1], xi[j + 2], v[j], v[j + 1], v[j + 2])
        b = _cross(xi[j], xi[j + 1], xi[j + 2], a[0], a[1], a[2])
        for m in range(3):
            out[j + m] = v[j + m] + 0.5 * a[m] + b[m] / 12.0
    elif jt == FREEFLYER:
        p, f = (xi[j], xi[j + 1], xi[j + 2]), (xi[j + 3], xi[j + 4], xi[j + 5])
        a = _ad6(p[0], p[1], p[2], f[0], f[1], f[2], v[j], v[j + 1], v[j + 2], v[j + 3], v[j + 4], v[j + 5])
        b = _ad6(p[0], p[1], p[2], f[0], f[1], f[2], a[0], a[1], a[2], a[3], a[4], a[5])
        for m in range(6):
            out[j + m] = v[j + m] + 0.5 * a[m] + b[m] / 12.0
    elif jt == PLANAR:  # se(2) inside se(3)
        a = _ad6(xi[j], xi[j + 1], 0.0, 0.0, 0.0, xi[j + 2], v[j], v[j + 1], 0.0, 0.0, 0.0, v[j + 2])
        b = _ad6(xi[j], xi[j + 1], 0.0, 0.0, 0.0, xi[j + 2], a[0], a[1], a[2], a[3], a[4], a[5])
        out[j] = v[j] + 0.5 * a[0] + b[0] / 12.0
        out[j + 1] = v[j + 1] + 0.5 * a[1] + b[1] / 12.0
        out[j + 2] = v[j + 2] + 0.5 * a[5] + b[5] / 12.0
    else:
        nv = 1 if jt <= 2 else (2 if jt == 5 else 3)
        for m in range(nv):
            out[j + m] = v[j + m]


# ------------------------------------------------------------------ whole configurations
@njit(cache=True)
def integrate(ki, q, v, out):
    """out = q (+) v, joint by joint (out may be q)."""
    for k in range(ki.shape[0]):
        integrate_joint(T.joint_type(ki, k), q, ki[k, T.IDX_Q], v, ki[k, T.IDX_V], out)


@njit(cache=True)
def difference(ki, q0, q1, out):
    """out = q1 (-) q0 (tangent at q0)."""
    for k in range(ki.shape[0]):
        difference_joint(T.joint_type(ki, k), q0, q1, ki[k, T.IDX_Q], out, ki[k, T.IDX_V])


@njit(cache=True)
def configuration_rate(ki, q, v, out):
    """out = dq/dt of the coordinates for the velocity v."""
    for k in range(ki.shape[0]):
        rate_joint(T.joint_type(ki, k), q, ki[k, T.IDX_Q], v, ki[k, T.IDX_V], out)


@njit(cache=True)
def dexpinv(ki, xi, v, out):
    """out = dexp_xi^-1 v (RKMK, truncated after the second bracket)."""
    for k in range(ki.shape[0]):
        dexpinv_joint(T.joint_type(ki, k), xi, v, ki[k, T.IDX_V], out)
