"""URDF ``<mimic>`` joints as joint-space constraints (``load_urdf(path, mimic=True)``).

A mimic joint s follows its mimicked joint m: ``q_s = multiplier q_m + offset``.  The
relation is a linear constraint in joint space: with ``q_r``, ``v_r`` the coordinates
of the independent joints (the tree's q and v with the mimic joints' entries deleted),

    q_full = G q_r + offset,    v_full = G v_r,    a_full = G a_r,

with G the (nv_full x nv_r) coupling matrix (one non-zero per row: 1 for an
independent DOF, the multiplier for a mimic DOF, in the column of its mimicked DOF).
The power balance ``tau_r . v_r = tau_full . v_full`` gives the reduced dynamics on
the open tree's O(n) algorithms:

    M_r = G^T M(q_full) G,      tau_r = G^T ID_full(q_full, G v_r, G a_r),

and forward dynamics ``M_r a_r = tau_r - G^T h_full``.  Without forming M, each relation
is treated as a constraint row ``K a_full = 0`` of the full model (``K G = 0``; row
``e_s - multiplier e_m``), in Lagrange-multiplier form (as :mod:`denoc_bridge.constraints.loops`):

    a = a0 + M^-1 K^T lambda,   (K M^-1 K^T) lambda = -K a0,   a_r = a[independent],

with ``a0`` the open-tree forward dynamics for ``tau_full = G^+T tau_r`` (tau_r on the
independent DOFs) and ``M^-1 K^T`` from the same O(n) recursion, one right-hand side per
mimic joint.  Then ``G^T M a = G^T (tau_full - h)`` since ``G^T K^T = 0``: the reduced
equations hold exactly.  The inverse GIM follows as ``M_r^-1 = P[i, i]`` with
``P = M^-1 - M^-1 K^T (K M^-1 K^T)^-1 K M^-1 = G M_r^-1 G^T``.

Pinocchio 4.1 (verified here)
-----------------------------
* ``pin.buildModelFromUrdf(path, mimic=True)`` (also ``buildModelFromXML`` and with a
  root joint) keeps every joint, in the same order and with the same names as without
  ``mimic``; each mimic joint becomes a ``JointModelMimic`` (``scaling`` = multiplier,
  ``offset``) with nq = nv = 0 whose ``idx_q``/``idx_v`` are those of the mimicked
  joint.  ``model.nq``/``nv`` count the independent joints only: q and v are the tree's
  with the mimic entries deleted (``nvExtended`` is the tree's nv).
* ``rnea`` returns nv_r torques (= G^T tau_full), ``crba`` the nv_r x nv_r matrix
  G^T M G, ``nonLinearEffects``, ``integrate``, ``neutral`` (mimic offsets do not
  appear: zeros, (1, 0) pairs) and ``randomConfiguration`` work in that layout; ``aba``
  and ``computeMinverse`` raise "This algorithm does not support Joint Mimic type".
* Refused ("The parent joint of the mimic joint is not in the kinematic tree"): an unknown
  or fixed mimicked joint, a mimic of itself, and a mimicked joint that comes *later* in
  Pinocchio's depth-first order (siblings sorted by name), e.g. example-robot-data's
  ``romeo.urdf`` and ``talos_full_v2.urdf``.  Refused ("configuration spaces have different
  sizes"): chains (the mimicked joint is itself a mimic) and continuous/bounded mixes.
  A continuous joint may mimic a continuous one: ``angle_s = multiplier angle_m + offset``
  with ``angle = atan2(sin, cos)``.  ``<mimic>`` on fixed, planar and floating joints is
  ignored.  The multiplier defaults to 1 and the offset to 0.

Here: the same relations and layout; a mimicked joint may come anywhere in the tree
(only :func:`denoc_bridge.to_pinocchio` needs it first), a chain (the mimicked joint is itself
a mimic) is composed into one relation to its root (``model.mimic``; a cycle is refused
naming its joints), and a ``<mimic>`` on a planar or floating joint is refused
(:class:`~denoc_bridge.errors.ModelError`) instead of ignored.  A chain of continuous joints
composes on the angle: ``angle_a = m_ab (m_bc angle_c + o_bc) + o_ab``, not wrapped between
the links of the chain.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.dynamics import tree_forward_dynamics as _fd
from denoc_bridge.algorithms.dynamics import tree_inverse_dynamics as _id
from denoc_bridge.algorithms.dynamics import tree_inverse_mass_matrix as _imm
from denoc_bridge.algorithms.dynamics import tree_mass_matrix as _mm
from denoc_bridge.algorithms.dynamics import tree_nonlinear_effects as nonlinear_effects
from denoc_bridge.constraints.solve import lagrange_accelerations, minv_columns
from denoc_bridge.core import tree as _compiled
from denoc_bridge.errors import InputError, SingularInertiaError
from denoc_bridge.multibody.data import Data, work_of
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.mimic import MimicModel, TreeOnlyError

__all__ = ["MimicModel", "TreeOnlyError", "inverse_dynamics", "mass_matrix", "forward_dynamics", "inverse_mass_matrix"]

# ----------------------------------------------------------------------------- dynamics
_NO_WRENCH, _NONE = np.zeros((0, 6)), np.zeros(0)  # the entries' "no wrenches, no springs"


def _vectors(*xs: object) -> bool:
    """Whether every x is a 1-D C-contiguous float64 array (the compiled single-state entries)."""
    for x in xs:
        if type(x) is not np.ndarray or x.dtype != np.float64 or x.ndim != 1 or not x.flags.c_contiguous:
            return False
    return True


def _entry(model: MimicModel, data: Data | None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int, int]:
    """(tree table, work, index maps, float maps, tree nq, reach) for the compiled entries
    (core/mimic.pxi)."""
    imap, fmap, reach = model._kernel_maps()
    tree = model.tree  # its table changes with the gravity
    work = work_of(tree, data)
    return tree._kt, work, imap, fmap, tree.nq, reach


def inverse_dynamics(
    model: MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
) -> np.ndarray:
    """``tau_r = G^T ID_full(q_full, G v, G a)``: equals ``pin.rnea`` of the mimic model.
    ``f_ext`` per link as for the tree; ``data`` is a :class:`~denoc_bridge.Data` of ``model.tree``.
    One state without ``f_ext`` runs one compiled entry (``mimic_inverse_dynamics``, core/mimic.pxi);
    anything it refuses takes the checked path below, which names the problem."""
    if f_ext is None and _vectors(q, v, a):
        kt, work, im, fm, nqf, _ = _entry(model, data)
        out = np.empty(model.nv)
        if _compiled.mimic_inverse_dynamics(kt, work, im, fm, nqf, q, v, a, out) == 0:
            return out

    qf, vf, af = model.expand(q, v, a)
    return model.reduce_forces(_id(model.tree, qf, vf, af, f_ext, data=data))


def _reduced_mass(model: MimicModel, qf: np.ndarray, data: Data | None) -> np.ndarray:

    return model.reduce_forces(model.reduce_forces(_mm(model.tree, qf, data=data), axis=0), axis=1)


def mass_matrix(model: MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """``M_r = G^T M(q_full) G`` (nv x nv): equals ``pin.crba`` of the mimic model (one compiled
    entry for a float64 vector q, ``mimic_mass_matrix`` of core/mimic.pxi)."""
    if _vectors(q):
        kt, work, im, fm, nqf, _ = _entry(model, data)
        out = np.empty((model.nv, model.nv))
        if _compiled.mimic_mass_matrix(kt, work, im, fm, nqf, q, out) == 0:
            return out
    qf = model.expand(q)
    if qf.ndim != 1:
        raise InputError("mass_matrix takes one configuration, not a batch")
    return _reduced_mass(model, qf, data)


def forward_dynamics(
    model: MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    method: str = "lagrange",
    data: Data | None = None,
) -> np.ndarray:
    """Reduced accelerations ``a_r`` with ``M_r a_r = tau - G^T h_full`` (h: Coriolis, centrifugal,
    gravity and external forces of the tree at ``q_full``, ``G v``).

    ``method="lagrange"`` (default): the O(n) open-tree forward dynamics plus one O(n) right-hand
    side per mimic joint (module docstring; no matrix of size nv is formed), falling back to the
    dense solve when the tree alone has a singular articulated inertia (e.g. a massless link
    moved only by a mimic joint).  ``method="dense"``: Cholesky of ``M_r`` (O(n^2) memory).
    A leading batch axis is allowed.  One state without ``f_ext`` runs one compiled entry
    (``mimic_forward_dynamics`` of core/mimic.pxi: one forward dynamics of the tree that keeps
    its articulated factors, one solve with them per mimic joint and one for the correction);
    anything it refuses takes the checked path, which names the problem or solves densely."""
    if model.tree.loops:
        raise InputError(
            f"model '{model.tree.name}' has loop closures as well as mimic joints: its accelerations are "
            "db.forward_dynamics (denoc_bridge.constraints.mimic_loops), not the mimic-only solve"
        )
    if method == "lagrange" and f_ext is None and _vectors(q, v, tau):
        kt, work, im, fm, nqf, reach = _entry(model, data)
        out = np.empty(model.nv)
        if (
            _compiled.mimic_forward_dynamics(
                kt, work, im, fm, nqf, reach, q, v, tau, _NO_WRENCH, _NONE, _NONE, _NONE, False, out
            )
            == 0
        ):
            return out

    if method not in ("lagrange", "dense"):
        raise InputError(f"method must be 'lagrange' or 'dense', got {method!r}")
    qf, vf = model.expand(q, v)
    tf = model.full_forces(tau)
    if tf.shape[:-1] != qf.shape[:-1]:
        raise InputError(f"tau has shape {np.shape(tau)}, q has shape {np.shape(q)}: one state or the same batch")
    if method == "lagrange":
        try:
            if qf.ndim == 1 and model.n_constraints:  # the solve every constraint kind shares
                K = model.constraint_matrix()
                a = lagrange_accelerations(model.tree, qf, vf, tf, K, np.zeros(len(K)), f_ext)[0]
                return a[model._v_keep]
            a0 = _fd(model.tree, qf, vf, tf, f_ext, data=data)  # tree dynamics (loops: constraints.mimic_loops)
            if model.n_constraints == 0:
                return a0[..., model._v_keep]
            W = _minv_kt(model, qf)  # (B, nc, nv_full) = (M^-1 K^T)^T, one batched a0 above
        except SingularInertiaError:
            method = "dense"
        else:
            K = model.constraint_matrix()
            S = W @ K.T  # K M^-1 K^T (symmetric positive definite)
            lam = np.linalg.solve(S, -(a0 @ K.T)[..., None])[..., 0]
            return (a0 + np.einsum("...c,...cn->...n", lam, W))[..., model._v_keep]
    h = model.reduce_forces(nonlinear_effects(model.tree, qf, vf, f_ext, data=data))
    rhs = model._reduced(tau, "tau", model.nv) - h
    if rhs.ndim == 2:
        return np.array([_solve_spd(model, _reduced_mass(model, qf[i], data), rhs[i]) for i in range(len(rhs))])
    return _solve_spd(model, _reduced_mass(model, qf, data), rhs)


def _solve_spd(model: MimicModel, M: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        tree = model.tree
        k = int(tree.idx_v.searchsorted(model._v_keep[int(np.argmin(np.diag(M)))], side="right") - 1)
        raise SingularInertiaError(
            f"model '{tree.name}' with mimic joints as constraints: the reduced GIM G^T M G is singular, e.g. "
            f"joint {tree.joint_label(k)} and the mimic joints that follow it move no inertia (massless links); "
            "forward dynamics and the inverse GIM are undefined",
            joint=tree.joint_names[k],
            link=tree.link_names[k],
        ) from None
    return np.linalg.solve(L.T, np.linalg.solve(L, rhs))


def inverse_mass_matrix(model: MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """``M_r^-1 = (G^T M G)^-1`` as ``P[i, i]``, ``P = M^-1 - W (K W)^-1 W^T``, ``W = M^-1 K^T``
    (module docstring), from the tree's O(n^2) inverse GIM; Pinocchio 4.1's ``computeMinverse``
    refuses mimic models.  Falls back to inverting ``M_r`` when the tree's inverse is singular.
    One compiled call for a float64 vector q (``mimic_inverse_mass_matrix`` of the compiled core,
    denoc_bridge/core/mimic.pxi)."""
    if _vectors(q):
        kt, work, im, fm, nqf, _ = _entry(model, data)
        out = np.empty((model.nv, model.nv))
        if _compiled.mimic_inverse_mass_matrix(kt, work, im, fm, nqf, q, out) == 0:
            return out
    qf = model.expand(q)
    if qf.ndim != 1:
        raise InputError("inverse_mass_matrix takes one configuration, not a batch")
    try:
        Minv = _imm(model.tree, qf, data=data)
    except SingularInertiaError:
        return _solve_spd(model, _reduced_mass(model, qf, data), np.eye(model.nv))
    i = model._v_keep
    if model.n_constraints == 0:
        return Minv[np.ix_(i, i)]
    K = model.constraint_matrix()
    W = Minv @ K.T  # (nv_full, nc)
    P = Minv[np.ix_(i, i)] - W[i] @ np.linalg.solve(K @ W, W[i].T)
    return 0.5 * (P + P.T)


def _minv_kt(model: MimicModel, qf: np.ndarray) -> np.ndarray:
    """``M^-1 K^T`` as (..., nc, nv_full) rows, by the solve every constraint kind shares
    (:func:`denoc_bridge.constraints.solve.minv_columns`: forward dynamics of the gravity-free
    tree at v = 0, one O(n) call per row)."""
    Kt = model.constraint_matrix().T
    if qf.ndim == 1:
        return minv_columns(model.tree, qf, Kt).T
    return np.array([minv_columns(model.tree, q, Kt).T for q in qf])
