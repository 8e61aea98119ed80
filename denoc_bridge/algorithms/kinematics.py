"""Forward kinematics and energies (O(n))."""

from __future__ import annotations

import numpy as np

from ..data import Data
from ..kernels import kinematics as kk
from .dynamics import geometry

__all__ = ["forward_kinematics", "center_of_mass", "kinetic_energy", "potential_energy"]


def forward_kinematics(model, q, *, data: Data | None = None):
    """Placements of the link frames in the base frame: ``(R, p)``, shapes (L, 3, 3) and (L, 3).

    Link k's frame is Pinocchio's ``data.oMi[k + 1]``.
    """
    geo = geometry(model, q, data=data)
    R = np.empty((model.n_links, 3, 3))
    p = np.empty((model.n_links, 3))
    kk.world_placements(model.parent, geo.E, geo.r, R, p)
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
    T = geometry(model, q, v, data=data).energy
    v = np.asarray(v, dtype=float)
    return T + 0.5 * float(np.dot(np.asarray(model.armature) * v, v))
