"""Will an explicit step survive the model's joint dampers?  The linear answer, before a run.

Joint damping ``-D v`` alone gives ``M(q) a = -D v``: velocities decay with the rates ``lambda``
of ``M^-1 D`` (the generalized eigenvalues of ``(D, M)``).  An explicit step of length ``dt``
is stable on ``a = -lambda v`` only while ``lambda dt`` stays inside its stability interval
(``STABILITY_LIMIT``: classical RK4 2.785, semi-implicit Euler 2).  A URDF that puts a damping
of 1 N m s/rad on a joint that moves a nearly massless link (iCub's head, a fingertip) makes
``lambda`` huge: the run overflows in its first steps at any practical ``dt``.  The adaptive
explicit methods (``RK45``, ``DOP853``) do not overflow, they shrink their steps below
``limit / lambda`` and take hours.

:func:`damping_stiffness` measures ``lambda`` at one configuration and names the joint that
makes it; the command line stops at once with it (``--no-passive`` drops the dampers, a
shorter ``--dt`` keeps them).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg

from denoc_bridge.dynamics import forward_dynamics, inverse_mass_matrix, mass_matrix
from denoc_bridge.errors import DenocError
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = ["STABILITY_LIMIT", "DampingStiffness", "damping_stiffness"]

#: ``lambda dt`` beyond which a step on ``a = -lambda v`` grows (the stability interval on the
#: negative real axis): RK4 2.785, semi-implicit Euler 2, Dormand-Prince 5(4) ~3.3, DOP853 ~6
STABILITY_LIMIT = {"rk4": 2.785, "euler": 2.0, "RK45": 3.3, "DOP853": 6.0}

#: above this many degrees of freedom the dense check (O(nv^3)) is skipped
MAX_NV = 1000


@dataclass(frozen=True)
class DampingStiffness:
    """The fastest damping rate of a model at one configuration, and the joint behind it.

    ``rate`` (1/s) is the largest eigenvalue of ``M^-1 D``; ``joint`` / ``link`` the joint (and
    the link it moves) whose damper dissipates most of that fastest mode, with ``damping`` ``d`` (N m s/rad
    or N s/m), ``inertia`` ``I = 1 / (M^-1)_kk`` (the inertia that joint feels with every other
    joint free; kg m^2 or kg) and ``mass`` the link's mass (kg).
    """

    rate: float
    joint: str
    link: str
    mass: float
    damping: float
    inertia: float
    #: a prismatic joint (N s/m and kg), else rotational (N m s/rad and kg m^2)
    linear: bool = False

    @property
    def time_constant(self) -> float:
        """``1 / rate`` (s): how fast the dampers stop the fastest motion."""
        return 1.0 / self.rate if self.rate > 0 else math.inf

    def max_dt(self, method: str) -> float:
        """The longest stable step of ``method`` (``inf`` for implicit or unknown methods)."""
        limit = STABILITY_LIMIT.get(method)
        return limit / self.rate if limit is not None and self.rate > 0 else math.inf


def damping_stiffness(model: Model | MimicModel, q: np.ndarray) -> DampingStiffness | None:
    """The fastest damping rate of ``model`` at ``q`` (see :class:`DampingStiffness`); None when
    the model has no damping, more than ``MAX_NV`` degrees of freedom, or a singular mass matrix
    (then the forward dynamics says which joint)."""
    tree = model.tree if isinstance(model, MimicModel) else model
    d_tree = np.asarray(tree.damping, dtype=float)
    if not np.any(d_tree) or model.nv > MAX_NV:
        return None
    if isinstance(model, MimicModel):
        found = _mimic_rate(model, q, d_tree)
    else:
        found = _tree_rate(model, q, d_tree)
    if found is None:
        return None
    rate, k_tree, Minv_kk, d_k = found
    if not (math.isfinite(rate) and Minv_kk > 0):
        return None
    joint = int(np.searchsorted(tree.idx_v, k_tree, side="right") - 1)
    return DampingStiffness(
        rate=rate,
        joint=tree.joint_names[joint],
        link=tree.link_names[joint],
        mass=float(tree.mass[joint]),
        damping=float(d_k),
        inertia=float(1.0 / Minv_kk),
        linear=int(tree.joint_type[joint]) == int(JointType.PRISMATIC),
    )


def _tree_rate(model: Model, q: np.ndarray, d: np.ndarray) -> tuple[float, int, float, float] | None:
    """(rate, joint's v index, (M^-1)_kk, d_k) of a tree: with D = diag(d) the rates of M^-1 D
    are the eigenvalues of the symmetric ``S = D^1/2 M^-1 D^1/2`` and, with y an eigenvector of
    S, ``x = D^-1/2 y`` is the velocity mode, so the damper k dissipates ``d_k x_k^2 = y_k^2``
    of it.  M^-1 comes column by column from the O(n) forward dynamics of the model without
    gravity at v = 0 (``M^-1 e_j = FD(q, 0, e_j)``): no mass matrix is formed, no Cholesky of
    a GIM as ill-conditioned as iCub's (cond ~ 1e19), and no kernel compiles that a simulation
    does not also use."""
    free = model.replace(gravity=(0.0, 0.0, 0.0))
    zero = np.zeros(model.nv)
    Minv = np.empty((model.nv, model.nv))
    e = np.zeros(model.nv)
    try:
        for j in range(model.nv):
            e[j] = 1.0
            Minv[:, j] = forward_dynamics(free, q, zero, e)
            e[j] = 0.0
    except DenocError:
        return None
    Minv = 0.5 * (Minv + Minv.T)
    root = np.sqrt(d)
    S = root[:, None] * Minv * root[None, :]
    try:
        rates, modes = scipy.linalg.eigh(S, subset_by_index=[model.nv - 1, model.nv - 1])
    except (np.linalg.LinAlgError, ValueError):
        return None
    k = int(np.argmax(modes[:, -1] ** 2))  # the damper that dissipates most of the fastest mode
    return float(rates[-1]), k, float(Minv[k, k]), float(d[k])


def _mimic_rate(model: MimicModel, q: np.ndarray, d_tree: np.ndarray) -> tuple[float, int, float, float] | None:
    """(rate, tree v index, (M_r^-1)_kk, reduced d_kk) of a mimic model: the generalized
    eigenproblem of the reduced ``(G^T D G, G^T M G)``; when the reduced GIM is not numerically
    positive definite, the recursive inverse and the bound ``lambda_max(M^-1 D) >= max_k d_k
    (M^-1)_kk``, which the fastest damper attains."""
    M = np.asarray(mass_matrix(model, q), dtype=float)
    G = model.coupling_matrix()
    D = G.T @ (d_tree[:, None] * G)
    d = np.diag(D)
    try:
        rates, modes = scipy.linalg.eigh(D, M, subset_by_index=[model.nv - 1, model.nv - 1])
        Minv_diag = np.diag(np.linalg.inv(M))  # numpy's: no warning on cond(M) ~ 1e19
        rate, x = float(rates[-1]), modes[:, -1]
        k = int(np.argmax(d * x**2))  # the damper that dissipates most of the fastest mode
    except (np.linalg.LinAlgError, ValueError):
        try:
            Minv_diag = np.diag(np.asarray(inverse_mass_matrix(model, q), dtype=float))
        except DenocError:
            return None
        k = int(np.argmax(d * Minv_diag))
        rate = float(d[k] * Minv_diag[k])
    k_tree = int(np.argmax(np.abs(G[:, k]) * d_tree))
    return rate, k_tree, float(Minv_diag[k]), float(d[k])
