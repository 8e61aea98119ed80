"""The one spatial convention of denoc_bridge, written down once.

Internal convention (used by every algorithm and kernel)
--------------------------------------------------------
The papers differ (000/002 order twists as [omega; v], 003 as [v; omega]); we
follow 000 eq. (2b) and 002 eq. (A.1) everywhere inside the package:

* **twist** of link k: ``t_k = [omega_k; v_k]`` -- angular velocity of the link
  and linear velocity of the link-frame origin ``O_k``.
* **twist rate**: ``tdot_k = [omegadot_k; odotdot_k]`` -- the classical time
  derivatives of omega_k and of the velocity of ``O_k`` (not Featherstone's
  spatial acceleration).  Gravity enters as a base twist rate ``[0; -g]``
  (000 Table 1, note).
* **wrench**: ``w_k = [n_k; f_k]`` -- moment about ``O_k`` and force.
* **mass matrix** of link k (000 eq. 2b):
  ``M_k = [[I_k, m_k dx_k], [-m_k dx_k, m_k 1]]`` with ``I_k`` the inertia
  about ``O_k``, ``d_k`` the vector from ``O_k`` to the centre of mass and
  ``dx`` the cross-product matrix (:func:`skew`).
* **frames**: the recursive kernels express the quantities of link k in the
  frame of link k (the frame of the joint that moves it, as in Pinocchio and
  URDF).  The twist-propagation matrix from the parent b to the child k is then

  ``A_{k,b} = [[E, 0], [-E rx, E]]``

  with ``E`` the rotation taking parent-frame coordinates to child-frame
  coordinates and ``r`` the position of ``O_k`` relative to ``O_b`` in the
  parent frame.  In the inertial frame (``E = 1``) this is exactly the
  papers' ``A_{k,k-1} = [[1, 0], [a~, 1]]`` with ``a = O_b - O_k``
  (000 eq. 7b); the explicit DeNOC matrices of :mod:`denoc_bridge.algorithms.reference`
  use that inertial-frame form.
* **joint motion propagation**: ``t_k = A_{k,b} t_b + P_k qdot_k`` where
  ``P_k`` is the 6 x z_k matrix of joint k (``p_k`` of 000 eq. 7b for one-DOF
  joints, ``P_k`` of 001 eq. A.4 for multi-DOF joints), in the child frame.

Boundary with Pinocchio
-----------------------
Pinocchio orders spatial vectors [linear; angular] (``pin.Motion`` is
[v; omega], ``pin.Force`` is [f; n]).  Generalised coordinates q, v, a, tau
use Pinocchio's layout unchanged; the only spatial quantities crossing the
public API are external wrenches ``f_ext`` (Pinocchio order [f; n], link
frame, about the link origin, exactly like the ``fext`` of ``pin.rnea``) and
link placements.  :func:`pin_to_internal` / :func:`internal_to_pin` swap the
halves at that boundary and nowhere else.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "skew",
    "rpy_to_matrix",
    "quaternion_to_matrix",
    "axis_angle_to_matrix",
    "twist_propagation",
    "link_mass_matrix",
    "link_mass_matrices",
    "inertia_about_origin",
    "pin_to_internal",
    "internal_to_pin",
]


def skew(x) -> np.ndarray:
    """Cross-product matrix: ``skew(x) @ y == np.cross(x, y)``."""
    x = np.asarray(x, dtype=float)
    return np.array([[0.0, -x[2], x[1]], [x[2], 0.0, -x[0]], [-x[1], x[0], 0.0]])


def rpy_to_matrix(rpy) -> np.ndarray:
    """URDF roll-pitch-yaw (fixed axes x, y, z): ``R = Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = (float(a) for a in rpy)
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array(
        [
            [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
            [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
            [-sp, cp * sr, cp * cr],
        ]
    )


def quaternion_to_matrix(quat) -> np.ndarray:
    """Rotation matrix of a unit quaternion in Pinocchio's order (x, y, z, w)."""
    x, y, z, w = (float(a) for a in quat)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def axis_angle_to_matrix(axis, angle: float) -> np.ndarray:
    """Rodrigues' formula for a unit ``axis``."""
    e = np.asarray(axis, dtype=float)
    c, s = np.cos(angle), np.sin(angle)
    ex = skew(e)
    return np.eye(3) + s * ex + (1.0 - c) * (ex @ ex)


def twist_propagation(E, r) -> np.ndarray:
    """6x6 ``A_{k,b} = [[E, 0], [-E rx, E]]`` (see the module docstring)."""
    E = np.asarray(E, dtype=float)
    A = np.zeros((6, 6))
    A[:3, :3] = E
    A[3:, 3:] = E
    A[3:, :3] = -E @ skew(r)
    return A


def inertia_about_origin(mass: float, com, inertia_com) -> np.ndarray:
    """Parallel-axis theorem: inertia about the frame origin from the one about the COM."""
    d = np.asarray(com, dtype=float)
    return np.asarray(inertia_com, dtype=float) + mass * (d @ d * np.eye(3) - np.outer(d, d))


def link_mass_matrix(mass: float, com, inertia_com) -> np.ndarray:
    """6x6 link mass matrix ``M_k`` of 000 eq. (2b) in the link frame."""
    d = np.asarray(com, dtype=float)
    M = np.zeros((6, 6))
    M[:3, :3] = inertia_about_origin(mass, d, inertia_com)
    M[:3, 3:] = mass * skew(d)
    M[3:, :3] = -mass * skew(d)
    M[3:, 3:] = mass * np.eye(3)
    return M


def link_mass_matrices(mass, com, inertia_com) -> np.ndarray:
    """:func:`link_mass_matrix` of a stack of links: mass (L,), com (L, 3), inertia_com (L, 3, 3)."""
    m = np.asarray(mass, dtype=float)
    d = np.asarray(com, dtype=float).reshape(-1, 3)
    L = m.shape[0]
    dx = np.zeros((L, 3, 3))
    dx[:, 0, 1], dx[:, 0, 2], dx[:, 1, 2] = -d[:, 2], d[:, 1], -d[:, 0]
    dx[:, 1, 0], dx[:, 2, 0], dx[:, 2, 1] = d[:, 2], -d[:, 1], d[:, 0]
    M = np.zeros((L, 6, 6))
    dd = np.einsum("ki,ki->k", d, d)
    M[:, :3, :3] = np.asarray(inertia_com, dtype=float).reshape(L, 3, 3) + m[:, None, None] * (
        dd[:, None, None] * np.eye(3) - np.einsum("ki,kj->kij", d, d)
    )
    M[:, :3, 3:] = m[:, None, None] * dx
    M[:, 3:, :3] = -m[:, None, None] * dx
    M[:, 3:, 3:] = m[:, None, None] * np.eye(3)
    return M


def pin_to_internal(x) -> np.ndarray:
    """Swap [linear; angular] (Pinocchio) to [angular; linear] (internal); last axis of size 6."""
    x = np.asarray(x, dtype=float)
    return np.concatenate([x[..., 3:], x[..., :3]], axis=-1)


def internal_to_pin(x) -> np.ndarray:
    """Swap [angular; linear] (internal) to [linear; angular] (Pinocchio); last axis of size 6."""
    return pin_to_internal(x)
