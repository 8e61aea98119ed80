"""Forward kinematics and energies (O(n))."""

from __future__ import annotations

import numba
import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.dynamics import geometry
from denoc_bridge.kernels import energy as _ke
from denoc_bridge.kernels import kinematics as kk
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.data import Data, run_parallel
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = ["forward_kinematics", "center_of_mass", "kinetic_energy", "potential_energy", "energies"]


def forward_kinematics(
    model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Placements of the link frames in the base frame: ``(R, p)``, shapes (L, 3, 3) and (L, 3).

    Link k's frame is Pinocchio's ``data.oMi[k + 1]``.  A :class:`~denoc_bridge.constraints.mimic.MimicModel`
    takes reduced q.
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return forward_kinematics(model.tree, model.expand(q), data=data)
    geo = geometry(model, q, data=data)
    R = np.empty((model.n_links, 3, 3))
    p = np.empty((model.n_links, 3))
    kk.world_placements(model.parent, geo.E, geo.r, R, p)
    return R, p


def center_of_mass(model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """Centre of mass of the moving links in the base frame (``pin.centerOfMass``)."""
    _check_model(model)
    if isinstance(model, MimicModel):
        return center_of_mass(model.tree, model.expand(q), data=data)
    R, p = forward_kinematics(model, q, data=data)
    m = np.asarray(model.mass)
    if m.sum() <= 0:
        return np.zeros(3)
    c = p + np.einsum("kij,kj->ki", R, model.com)
    return (m[:, None] * c).sum(axis=0) / m.sum()


def energies(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, springs: bool = True
) -> tuple[float, float] | tuple[np.ndarray, np.ndarray]:
    """``(T, V)``: kinetic energy ``1/2 v^T I(q) v`` (armature included) and potential energy
    (gravity, plus the joint springs of the model unless ``springs=False``), in one compiled O(n)
    forward recursion (:mod:`denoc_bridge.kernels.energy`).  A leading batch axis gives arrays.
    A :class:`~denoc_bridge.constraints.mimic.MimicModel` takes reduced q and v."""
    _check_model(model)
    if isinstance(model, MimicModel):
        qf, vf = model.expand(q, v)
        return energies(model.tree, qf, vf, springs=springs)
    q, v, _, _, B = _inputs.state(model, q, v, v, None, "v")
    has_springs = bool(springs and np.any(model.stiffness))
    Q, V = (q, v) if B is not None else (q[None], v[None])
    n = Q.shape[0]
    kinetic, potential = np.empty(n), np.empty(n)
    chunks = max(1, min(n, 4 * numba.get_num_threads())) if n > 64 else 1
    run_parallel(
        _ke.energies_batch,
        model._kt,
        Q,
        V,
        model.stiffness,
        model.rest_configuration,
        has_springs,
        kinetic,
        potential,
        chunks,
    )
    bad = np.flatnonzero(~(np.isfinite(kinetic) & np.isfinite(potential)))
    if bad.size:  # a non-finite or zero-norm input, or an overflow
        b = int(bad[0])
        prefix = "" if B is None else f"state {b} of the batch: "
        _inputs.check_state(model, Q[b], V[b], V[b], "v", prefix)
        raise _inputs.overflow_error(model, prefix, q=Q[b], v=V[b])
    if B is None:
        return float(kinetic[0]), float(potential[0])
    return kinetic, potential


def potential_energy(model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> float | np.ndarray:
    """Potential energy: gravity ``V = -sum_k m_k g . c_k`` (``pin.computePotentialEnergy``)
    plus the joint springs ``1/2 K (q (-) q_rest)^2`` (none unless the model has stiffness)."""
    _check_model(model)
    return energies(model, q, np.zeros(np.shape(q)[:-1] + (model.nv,)))[1]


def kinetic_energy(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, data: Data | None = None
) -> float | np.ndarray:
    """``T = 1/2 sum_k t_k^T M_k t_k + 1/2 v^T diag(armature) v`` = ``1/2 v^T I(q) v``.

    Twists from the forward recursion of 000 Table 1 (O(n), compiled).  Equals ``1/2 v^T
    pin.crba v`` and Pinocchio 4.1's ``computeKineticEnergy``, armature included, except on a
    revolute joint about an arbitrary axis (``JointModelRevoluteUnaligned``), whose armature
    term Pinocchio's kinetic energy gets wrong (``tests/algorithms/test_energies.py``).
    """
    _check_model(model)
    return energies(model, q, v, springs=False)[0]
