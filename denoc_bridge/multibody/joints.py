"""Joint types.

A joint moves a link relative to its parent with ``z_k`` degrees of freedom.
Its motion is described by the joint-motion propagation matrix ``P_k``
(6 x z_k, 001 eq. A.4; the vector ``p_k`` of 000 eq. 7b for one-DOF joints),
expressed in the frame of the moved link.  Configuration and velocity layouts
are Pinocchio's, joint by joint:

=============  ==  ==  ===========================================================
type           nq  nv  q / v
=============  ==  ==  ===========================================================
REVOLUTE        1   1  angle about ``axis``
CONTINUOUS      2   1  (cos, sin) of the angle (Pinocchio's ``RUB`` joints)
PRISMATIC       1   1  displacement along ``axis``
SPHERICAL       4   3  quaternion (x, y, z, w) / angular velocity, child frame
FREEFLYER       7   6  [x y z qx qy qz qw] / [linear; angular], child frame
UNIVERSAL       2   2  angles about ``axis`` then about ``axis2`` (moved frame)
PLANAR          4   3  [x y cos sin] / [vx vy wz], child frame (plane xy)
TRANSLATION     3   3  [x y z] / linear velocity
=============  ==  ==  ===========================================================

Fixed joints are not joints of the model: the loaders merge the child link into
its parent body (inertia lumped), as Pinocchio does.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from typing import Any

import numpy as np

from denoc_bridge.core import layout as _kj

__all__ = ["JointType", "joint_nq", "joint_nv", "limit_arrays"]


class JointType(enum.IntEnum):
    """Small integer codes of the joint types (stored in ``Model.joint_type``)."""

    REVOLUTE = _kj.REVOLUTE
    CONTINUOUS = _kj.CONTINUOUS
    PRISMATIC = _kj.PRISMATIC
    SPHERICAL = _kj.SPHERICAL
    FREEFLYER = _kj.FREEFLYER
    UNIVERSAL = _kj.UNIVERSAL
    PLANAR = _kj.PLANAR
    TRANSLATION = _kj.TRANSLATION

    @property
    def label(self) -> str:
        return self.name.lower()


_NQ = {
    JointType.REVOLUTE: 1,
    JointType.CONTINUOUS: 2,
    JointType.PRISMATIC: 1,
    JointType.SPHERICAL: 4,
    JointType.FREEFLYER: 7,
    JointType.UNIVERSAL: 2,
    JointType.PLANAR: 4,
    JointType.TRANSLATION: 3,
}
_NV = {
    JointType.REVOLUTE: 1,
    JointType.CONTINUOUS: 1,
    JointType.PRISMATIC: 1,
    JointType.SPHERICAL: 3,
    JointType.FREEFLYER: 6,
    JointType.UNIVERSAL: 2,
    JointType.PLANAR: 3,
    JointType.TRANSLATION: 3,
}

#: joint types whose configuration holds a unit quaternion, and where it starts
QUATERNION_OFFSET = {JointType.SPHERICAL: 0, JointType.FREEFLYER: 3}
#: joint types whose configuration holds a (cos, sin) pair, and where it starts
CIRCLE_OFFSET = {JointType.CONTINUOUS: 0, JointType.PLANAR: 2}
#: joint types with an axis (``axis2`` is used by UNIVERSAL only)
AXIAL = (JointType.REVOLUTE, JointType.CONTINUOUS, JointType.PRISMATIC, JointType.UNIVERSAL)


def joint_nq(jtype: int) -> int:
    """Number of configuration variables of a joint type."""
    return _NQ[JointType(jtype)]


def joint_nv(jtype: int) -> int:
    """Number of degrees of freedom (velocity variables) of a joint type."""
    return _NV[JointType(jtype)]


def neutral_joint_configuration(jtype: int) -> np.ndarray:
    """Pinocchio's neutral configuration of one joint (zero angle, identity quaternion)."""
    jtype = JointType(jtype)
    q = np.zeros(joint_nq(jtype))
    if jtype in QUATERNION_OFFSET:
        q[QUATERNION_OFFSET[jtype] + 3] = 1.0
    if jtype in CIRCLE_OFFSET:
        q[CIRCLE_OFFSET[jtype]] = 1.0
    return q


def neutral_q(joint_types: Iterable[int]) -> np.ndarray:
    """Pinocchio's neutral configuration of a model whose joints, in q order, have these types."""
    parts = [neutral_joint_configuration(jt) for jt in joint_types]
    return np.concatenate(parts) if parts else np.zeros(0)


def limit_arrays(model: Any) -> tuple[np.ndarray, np.ndarray]:
    """The joints whose position limits a simulation enforces: revolute and prismatic joints whose
    URDF limits are at most 1e6 in magnitude with lower < upper (``lower == upper``, URDF's
    default when the attributes are missing, and Pinocchio's largest double are no limit, as in
    :func:`denoc_bridge.random_configuration`).  Returns ((n, 2) q and v indices, (n, 2) limits)."""
    iq, iv = np.asarray(model.idx_q, dtype=np.int64), np.asarray(model.idx_v, dtype=np.int64)
    lo, hi = np.asarray(model.lower_limit, dtype=float)[iq], np.asarray(model.upper_limit, dtype=float)[iq]
    jt = np.asarray(model.joint_type)
    kept = (
        ((jt == int(JointType.REVOLUTE)) | (jt == int(JointType.PRISMATIC)))
        & (np.abs(lo) <= 1e6)
        & (np.abs(hi) <= 1e6)
        & (lo < hi)
    )
    return np.column_stack([iq[kept], iv[kept]]).reshape(-1, 2), np.column_stack([lo[kept], hi[kept]]).reshape(-1, 2)
