"""Configurations in Pinocchio's layout: neutral and random."""

from __future__ import annotations

import numpy as np

from .joints import CIRCLE_OFFSET, QUATERNION_OFFSET, JointType, neutral_joint_configuration

__all__ = ["neutral_configuration", "random_configuration"]


def neutral_configuration(model) -> np.ndarray:
    """Zero angles and displacements, identity quaternions (``pin.neutral``)."""
    q = np.zeros(model.nq)
    for k in range(model.n_links):
        i0, n = int(model.idx_q[k]), int(model.nq_joint[k])
        q[i0:i0 + n] = neutral_joint_configuration(model.joint_type[k])
    return q


def random_configuration(model, rng=None) -> np.ndarray:
    """A random valid configuration.

    Revolute and prismatic joints are drawn uniformly within their position
    limits when both are finite and at most 1e6 apart (else in [-pi, pi] and [-1, 1]); angles of
    continuous, universal and planar joints in [-pi, pi]; quaternions uniformly
    on the unit sphere; free translations from a unit normal distribution.
    """
    rng = np.random.default_rng(rng)
    q = np.zeros(model.nq)
    for k in range(model.n_links):
        jt = JointType(model.joint_type[k])
        i0, n = int(model.idx_q[k]), int(model.nq_joint[k])
        qk = q[i0:i0 + n]
        lo, hi = model.lower_limit[i0:i0 + n], model.upper_limit[i0:i0 + n]
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            half = np.pi if jt == JointType.REVOLUTE else 1.0
            # Pinocchio marks "no limit" with +-max double: such ranges count as unbounded
            bounded = bool(abs(lo[0]) <= 1e6 and abs(hi[0]) <= 1e6 and hi[0] >= lo[0])
            qk[0] = rng.uniform(lo[0], hi[0]) if bounded else rng.uniform(-half, half)
        elif jt == JointType.UNIVERSAL:
            qk[:] = rng.uniform(-np.pi, np.pi, 2)
        elif jt in (JointType.FREEFLYER, JointType.TRANSLATION, JointType.PLANAR):
            qk[: 3 if jt != JointType.PLANAR else 2] = rng.standard_normal(3 if jt != JointType.PLANAR else 2)
        if jt in QUATERNION_OFFSET:
            quat = rng.standard_normal(4)
            qk[QUATERNION_OFFSET[jt]:QUATERNION_OFFSET[jt] + 4] = quat / np.linalg.norm(quat)
        if jt in CIRCLE_OFFSET:
            angle = rng.uniform(-np.pi, np.pi)
            qk[CIRCLE_OFFSET[jt]:CIRCLE_OFFSET[jt] + 2] = (np.cos(angle), np.sin(angle))
    return q
