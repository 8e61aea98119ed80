"""Linearisation of the dynamics around a state: the continuous-time state space ``(A, B)``.

The state is ``x = (dq, v)`` with ``dq`` in Pinocchio's tangent space at the linearisation
point ``q0``: a configuration near ``q0`` is ``q = integrate(q0, dq)`` (``pin.integrate``, the
exponential map of each joint's Lie group), so ``x`` has ``2 nv`` entries for every joint type.
With ``v`` the joint velocity (Pinocchio's, in the joint frame) the equations of motion read

    d(dq)/dt = dexp_{dq}^-1 v = v + 1/2 [dq, v] + O(|dq|^2 |v|)
    dv/dt    = FD(integrate(q0, dq), v, tau)

and their Jacobians at ``(dq, v, tau) = (0, v0, tau0)`` are

    A = [ -1/2 ad_{v0}    I       ]        B = [ 0     ]
        [ dqdd/dq         dqdd/dv ]            [ M^-1  ]

``dqdd/dq`` (derivative along ``integrate``, as ``pin.computeABADerivatives``), ``dqdd/dv`` and
``M^-1 = dqdd/dtau`` come from :func:`denoc_bridge.forward_dynamics_derivatives`, so a
:class:`~denoc_bridge.MimicModel` (reduced coordinates) and a model with loop closures
(constrained accelerations) are linearised too.  The upper-left block ``-1/2 ad_{v0}`` is the
derivative of the exponential map's inverse differential: zero for revolute, prismatic,
continuous, universal and translation joints (their tangent coordinates add), ``-1/2 [w]x``
for a spherical joint (``w`` its angular velocity), ``-1/2 [[ [w]x, [u]x ], [0, [w]x]]`` for
a free-flyer (``v0 = (u, w)``, linear then angular, as Pinocchio) and its SE(2) counterpart for
a planar joint; it vanishes at rest, where ``A`` is the textbook ``[[0, I], [dqdd/dq, dqdd/dv]]``.
Equivalently it is the Jacobian, at ``q1 = q0``, of ``dq/dt = J v`` with ``J`` the derivative
of ``pin.difference(q0, q1)`` with respect to q1 (``pin.dDifference(..., ARG1)``).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge.dynamics import forward_dynamics_derivatives
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = ["linearize", "tangent_rate_jacobian"]


def _skew(w: np.ndarray) -> np.ndarray:
    """[w]x along the last axis: (..., 3) -> (..., 3, 3)."""
    S = np.zeros((*w.shape[:-1], 3, 3))
    S[..., 0, 1], S[..., 0, 2] = -w[..., 2], w[..., 1]
    S[..., 1, 0], S[..., 1, 2] = w[..., 2], -w[..., 0]
    S[..., 2, 0], S[..., 2, 1] = -w[..., 1], w[..., 0]
    return S


def _tree_rate_jacobian(tree: Model, v: np.ndarray) -> np.ndarray:
    """``d(dexp_dq^-1 v)/d(dq)`` at ``dq = 0`` (= 1/2 ad_dq v as a linear map of dq, that is
    ``-1/2 ad_v``) of the tree, block diagonal over the Lie-group joints: (..., nv, nv)."""
    nv = tree.nv
    out = np.zeros((*v.shape[:-1], nv, nv))
    for k, jt in enumerate(tree.joint_type):
        j = int(tree.idx_v[k])
        if jt == JointType.SPHERICAL:
            out[..., j : j + 3, j : j + 3] = -0.5 * _skew(v[..., j : j + 3])
        elif jt == JointType.FREEFLYER:
            u, w = v[..., j : j + 3], v[..., j + 3 : j + 6]
            out[..., j : j + 3, j : j + 3] = -0.5 * _skew(w)
            out[..., j : j + 3, j + 3 : j + 6] = -0.5 * _skew(u)
            out[..., j + 3 : j + 6, j + 3 : j + 6] = -0.5 * _skew(w)
        elif jt == JointType.PLANAR:  # se(2): v = (ux, uy, w)
            ux, uy, w = v[..., j], v[..., j + 1], v[..., j + 2]
            out[..., j, j + 1], out[..., j, j + 2] = 0.5 * w, -0.5 * uy
            out[..., j + 1, j], out[..., j + 1, j + 2] = -0.5 * w, 0.5 * ux
    return out


def tangent_rate_jacobian(model: Model | MimicModel, v: npt.ArrayLike) -> np.ndarray:
    """The upper-left block of :func:`linearize`'s ``A``: the derivative of the tangent-space
    rate ``d(dq)/dt = dexp_{dq}^-1 v`` with respect to ``dq`` at ``dq = 0``, ``-1/2 ad_v``
    joint by joint (zero on every joint whose tangent coordinates commute; see the module
    docstring).  ``v`` is (nv,) or a batch (B, nv); the result (nv, nv) or (B, nv, nv).  On a
    :class:`~denoc_bridge.MimicModel`, in its reduced coordinates (mimic relations exist only
    between 1-DOF joints, whose blocks are zero)."""
    x = np.asarray(v, dtype=float)
    if isinstance(model, MimicModel):
        keep = model._v_keep
        full = _tree_rate_jacobian(model.tree, x @ model.coupling_matrix().T)  # v_full = G v
        return full[..., keep[:, None], keep[None, :]]
    return _tree_rate_jacobian(model, x)


def linearize(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """The continuous-time state space ``d/dt x = A x + B u`` of the dynamics around the
    state (q, v) and the torques tau: ``x = (dq, dv)`` (``2 nv``), ``u = dtau`` (``nv``).

    ``dq`` is the tangent-space deviation of the configuration, ``q = integrate(q0, dq)`` as
    ``pin.integrate`` (the module docstring gives the blocks and their convention):

        A = [[-1/2 ad_v, I], [dqdd/dq, dqdd/dv]],    B = [[0], [M^-1]]

    with the derivatives of :func:`~denoc_bridge.forward_dynamics_derivatives` (entry by entry
    ``pin.computeABADerivatives`` on a tree; reduced coordinates on a
    :class:`~denoc_bridge.MimicModel`; the constrained accelerations on a model with loop
    closures, where ``M^-1`` is the constrained ``dqdd/dtau``).  For a feedback law
    ``u = -K x`` take ``x = (difference(q0, q), v - v0)`` (:func:`denoc_bridge.difference`).

    Parameters
    ----------
    q : (nq,), v : (nv,), tau : (nv,)
        The linearisation point (a batch along a leading axis gives (B, 2nv, 2nv) and
        (B, 2nv, nv)).  At an equilibrium, ``tau = gravity_torques(model, q)`` and ``v = 0``.
    f_ext : external wrenches held constant (as :func:`~denoc_bridge.forward_dynamics`).

    Returns
    -------
    A : (2nv, 2nv), B : (2nv, nv)
    """
    ddq, ddv, Minv = forward_dynamics_derivatives(model, q, v, tau, f_ext)
    nv = ddq.shape[-1]
    lead = ddq.shape[:-2]
    A = np.zeros((*lead, 2 * nv, 2 * nv))
    B = np.zeros((*lead, 2 * nv, nv))
    A[..., :nv, :nv] = tangent_rate_jacobian(model, np.broadcast_to(np.asarray(v, dtype=float), (*lead, nv)))
    A[..., :nv, nv:] = np.eye(nv)
    A[..., nv:, :nv] = ddq
    A[..., nv:, nv:] = ddv
    B[..., nv:, :] = Minv
    return A, B
