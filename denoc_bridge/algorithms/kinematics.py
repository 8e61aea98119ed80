"""Forward kinematics and energies (O(n))."""

from __future__ import annotations

import numpy as np

from ..data import Data
from ..kernels import inverse_dynamics as kid
from ..kernels import kinematics as kk
from . import _inputs
from .dynamics import _data, _joint_kinematics

__all__ = ["forward_kinematics", "center_of_mass", "kinetic_energy", "potential_energy"]


def forward_kinematics(model, q, *, data: Data | None = None):
    """Placements of the link frames in the base frame: ``(R, p)``, shapes (L, 3, 3) and (L, 3).

    Link k's frame is Pinocchio's ``data.oMi[k + 1]``.
    """
    q = _inputs.configuration(model, q)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    R = np.empty((model.n_links, 3, 3))
    p = np.empty((model.n_links, 3))
    kk.world_placements(model.parent, data.E, data.r, R, p)
    return R, p


def center_of_mass(model, q, *, data: Data | None = None) -> np.ndarray:
    """Centre of mass of the moving links in the base frame (``pin.centerOfMass``)."""
    R, p = forward_kinematics(model, q, data=data)
    m = np.asarray(model.mass)
    if m.sum() <= 0:
        return np.zeros(3)
    c = p + np.einsum("kij,kj->ki", R, model.com)
    return (m[:, None] * c).sum(axis=0) / m.sum()


def potential_energy(model, q, *, data: Data | None = None) -> float:
    """Gravitational potential energy ``V = -sum_k m_k g . c_k`` (``pin.computePotentialEnergy``)."""
    R, p = forward_kinematics(model, q, data=data)
    c = p + np.einsum("kij,kj->ki", R, model.com)
    return float(-(np.asarray(model.mass) * (c @ np.asarray(model.gravity))).sum())


def kinetic_energy(model, q, v, *, data: Data | None = None) -> float:
    """``T = 1/2 sum_k t_k^T M_k t_k + 1/2 v^T diag(armature) v`` = ``1/2 v^T I(q) v``.

    Twists from the forward recursion of 000 Table 1 (O(n)).  Pinocchio's
    ``computeKineticEnergy`` leaves out the armature term.
    """
    q = _inputs.configuration(model, q)
    v = _inputs.vector(model, v, "v", "v")
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    zeros = data.zeros_nv
    kid.twist_forward_recursion(
        model.module_start, model.module_end, model.parent, model.joint_type, model.joint_axis,
        model.joint_axis2, data.E, data.r, data.P, model.idx_v, model.nv_joint, model.link_mass_matrix,
        v, zeros, np.zeros(3), np.zeros((model.n_links, 6)), data.t, data.tdot, data.w,
    )
    T = 0.5 * np.einsum("ki,kij,kj->", data.t, model.link_mass_matrix, data.t)
    return float(T + 0.5 * np.dot(np.asarray(model.armature) * v, v))
