"""Analytical derivatives of the reduced dynamics of mimic joints (Pinocchio 4.1's
``computeRNEADerivatives`` / ``computeABADerivatives`` refuse mimic models).

With the coupling ``q_full = G q_r + offset``, ``v_full = G v_r``, ``a_full = G a_r``
(:mod:`denoc_bridge.constraints.mimic`), the reduced inverse dynamics is
``tau_r = G^T ID(q_full, G v_r, G a_r)``.  A tangent step ``dq_r`` of the reduced
configuration is the tangent step ``G dq_r`` of the tree (mimic relations join 1-DOF joints,
whose tangent coordinates add; the other joints are copied), so by the chain rule

    dtau_r/dq_r = G^T (dtau/dq) G,    dtau_r/dv_r = G^T (dtau/dv) G,    M_r = G^T M G

with the tree's recursive derivatives (:mod:`denoc_bridge.algorithms.derivatives`) at
``(q_full, G v_r, G a_r)``.  The reduced forward dynamics ``a_r = FD_r(q_r, v_r, tau_r)``
satisfies ``ID_r(q_r, v_r, FD_r) = tau_r``; the implicit-function theorem gives

    da_r/dx = -M_r^-1 dtau_r/dx  (x = q_r, v_r),    da_r/dtau_r = M_r^-1

at ``a_r = FD_r(q_r, v_r, tau_r)`` (Cholesky of the SPD ``M_r``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import scipy.linalg

from denoc_bridge.algorithms.derivatives import tree_inverse_dynamics_derivatives
from denoc_bridge.constraints import mimic
from denoc_bridge.errors import SingularInertiaError
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.mimic import MimicModel

__all__ = ["mimic_inverse_dynamics_derivatives", "mimic_forward_dynamics_derivatives"]

Triple = tuple[np.ndarray, np.ndarray, np.ndarray]


def _reduce(G: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``G^T X G`` (also over a leading batch axis)."""
    return np.einsum("ia,...ij,jb->...ab", G, X, G)


def mimic_inverse_dynamics_derivatives(
    model: MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike, f_ext: WrenchesLike | None = None
) -> Triple:
    """``(dtau_dq, dtau_dv, M)`` of :func:`denoc_bridge.mimic.inverse_dynamics` in the reduced
    coordinates (tangent space, as for a tree): ``G^T (.) G`` of the tree's derivatives at the
    expanded state (module docstring).  A leading batch axis gives (B, nv, nv) arrays."""
    qf, vf, af = model.expand(q, v, a)
    dq, dv, M = tree_inverse_dynamics_derivatives(model.tree, qf, vf, af, f_ext)
    G = model.coupling_matrix()
    return _reduce(G, dq), _reduce(G, dv), _reduce(G, M)


def _spd_inverse(model: MimicModel, M: np.ndarray) -> np.ndarray:
    try:
        c = scipy.linalg.cho_factor(M)
    except np.linalg.LinAlgError:
        raise SingularInertiaError(
            f"model '{model.tree.name}' with mimic joints: the reduced GIM G^T M G is singular (a joint "
            "moves no inertia); forward dynamics and its derivatives are undefined"
        ) from None
    inv = scipy.linalg.cho_solve(c, np.eye(len(M)))
    return 0.5 * (inv + inv.T)


def mimic_forward_dynamics_derivatives(
    model: MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, tau: npt.ArrayLike, f_ext: WrenchesLike | None = None
) -> Triple:
    """``(da_dq, da_dv, M_r^-1)`` of the reduced forward dynamics
    (:func:`denoc_bridge.mimic.forward_dynamics`): the implicit-function theorem on the reduced
    inverse dynamics at ``a_r = FD_r(q, v, tau)`` (module docstring).  A leading batch axis
    gives (B, nv, nv) arrays."""
    a = mimic.forward_dynamics(model, q, v, tau, f_ext)
    dq, dv, M = mimic_inverse_dynamics_derivatives(model, q, v, a, f_ext)
    if M.ndim == 3:
        Minv = np.array([_spd_inverse(model, m) for m in M])
    else:
        Minv = _spd_inverse(model, M)
    return -(Minv @ dq), -(Minv @ dv), Minv
