"""Closed kinematic loops: cut joints, their constraints, and the constrained dynamics.

A loop is cut at one joint (004 §2.3, Fig. 3): the model stays a tree (the *reduced
system*) and each cut joint becomes a :class:`LoopClosure` between two links, with the
joint's frame given on each side (they coincide when the loop is closed).  Cut-joint types
and the constraint rows they contribute, all in world coordinates (x_i = origin of the
joint frame on link i, n = joint axis, b_1, b_2 = two unit vectors normal to it, all
carried by link 1):

| type            | rows | constraint (position level; the velocity rows are its derivative)       |
|-----------------|------|-------------------------------------------------------------------------|
| ``weld``        | 6    | x_2 - x_1 = 0,  rotation of frame 2 relative to frame 1 = 0             |
| ``spherical``   | 3    | x_2 - x_1 = 0                                                           |
| ``revolute``    | 5    | x_2 - x_1 = 0,  b_j . (relative rotation) = 0 (axes stay parallel)      |
| ``prismatic``   | 5    | b_j . (x_2 - x_1) = 0,  relative rotation = 0                           |

The velocity rows are ``C qdot = D* N qdot = 0`` (004 eqs. 12 and 15, with the DeNOC ``N`` as
004's ``B``: :func:`cut_joint_jacobian` gives ``D*``, :func:`loop_jacobian` ``C``), and the
acceleration rows ``C qddot + Cdot qdot = 0`` (004 eq. 13, :func:`loop_bias` gives
``Cdot qdot``).  As 004 notes, ``D* N`` may carry redundant rows (a planar loop closed by a
revolute joint: 5 rows, rank 2); :func:`independent_rows` finds them by a QR factorisation
with column pivoting.

Dynamics (004 eq. 14): ``M qddot - C^T lambda = f`` with ``f = tau - C(q, v) v - g(q)``.
:func:`constrained_forward_dynamics` solves it two ways:

* ``method="lagrange"``: ``qddot = a0 + M^-1 C^T lambda`` with ``a0`` the open-tree forward
  dynamics (O(n)) and ``M^-1 C^T`` from the same O(n) block reverse Gaussian elimination, one
  right-hand side per constraint row (no dense M); ``lambda`` from the small system
  ``(C M^-1 C^T) lambda = -Cdot qdot - C a0``.
* ``method="partitioning"``: independent coordinates ``q_i`` (pivoted QR of C), the
  velocity transformation ``E = [1; -C_d^-1 C_i]`` (004 eq. 23), ``Edot qdot_i`` without
  differentiating E (eq. 25), the minimal equations ``E^T M E qddot_i = E^T (f - M Edot
  qdot_i)`` (eqs. 19-21)."""

from __future__ import annotations

from typing import Literal, NoReturn, overload

import numpy as np
import numpy.typing as npt
import scipy.linalg

from denoc_bridge.algorithms.configuration import integrate
from denoc_bridge.algorithms.dynamics import (
    singular_error,
    tree_inverse_dynamics,
    tree_mass_matrix,
    tree_nonlinear_effects,
)
from denoc_bridge.constraints import mimic_loops as _mimic_loops
from denoc_bridge.constraints.loop_derivatives import (  # public in db.loops
    ConstrainedDerivatives,
    constrained_dynamics_derivatives,
)
from denoc_bridge.constraints.loop_kinematics import (  # the public names of db.loops
    all_rows,
    constraint_report,
    cut_joint_jacobian,
    loop_bias,
    loop_jacobian,
    loop_kinematics,
    loop_residual,
)
from denoc_bridge.constraints.packed import _Compiled, compiled
from denoc_bridge.constraints.solve import (
    RANK_RTOL,
    actuated_dofs,
    actuator_torques,
    check_consistent,
    closed_or_error,
    independent_rows,
    lagrange_accelerations,
    newton_closure,
    partition,
    transformation,
)
from denoc_bridge.core import loops as _core
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import LOOP_TYPES, LoopClosure, body_name, make_loop_closure
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = [
    "LoopClosure",
    "LOOP_TYPES",
    "body_name",
    "make_loop_closure",
    "loop_kinematics",
    "loop_residual",
    "loop_jacobian",
    "loop_bias",
    "cut_joint_jacobian",
    "independent_rows",
    "constraint_report",
    "constrained_forward_dynamics",
    "constraint_forces",
    "partition",
    "velocity_transformation",
    "project_configuration",
    "project_velocity",
    "closed_chain_inverse_dynamics",
    "ConstrainedDerivatives",
    "constrained_dynamics_derivatives",
]


def _check_method(method: str) -> None:
    if method not in ("lagrange", "partitioning"):
        raise InputError(f"method must be 'lagrange' or 'partitioning', got {method!r}")


def _loop_status(model: Model, status: int, q: npt.ArrayLike) -> NoReturn:
    """Raise the error that a compiled status stands for (see denoc_bridge/core/loops.pyx)."""
    if status > 0:
        raise singular_error(model, status - 1)
    if status == -3:
        raise InputError(
            "the loop constraints are singular at this configuration (C M^-1 C^T is not positive "
            "definite): the mechanism is at a singular position, or the loops are not closed"
        )
    if status == -4:
        names = ", ".join(lc.name for lc in model.loops)
        raise InputError(f"cannot close the loops ({names}) near this configuration by Newton-Raphson")
    raise InputError("the constrained accelerations are not finite at this state")


def fast_lagrange(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None,
    baumgarte: tuple[float, float],
    checked: bool = False,
    fext: np.ndarray | None = None,
) -> tuple[np.ndarray, int, _Compiled]:
    """(qddot, rank, packed model) by the compiled kernel (lambda and the rows of C are then
    in ``cp.lam[:rank]``, ``cp.C[:rank]``); inputs that are not float64 C vectors, or that
    the kernel finds wrong, go through the checks of inp.  ``fext``: the wrenches already
    in the internal (n_links, 6) form, instead of ``f_ext``."""
    cp = model._local.__dict__.get("loops")
    if cp is None or cp.loops is not model.loops:
        cp = compiled(model)
    a = np.empty(model.nv)
    if fext is None:
        fext = NO_FEXT if f_ext is None else np.ascontiguousarray(inp.external_wrenches(model, f_ext))
    try:
        status, r = _core.accelerations_state(
            model._kt, cp.work, cp.pi, cp.pf, cp.sb, q, v, tau, fext, baumgarte[0], baumgarte[1], RANK_RTOL, a
        )
    except (TypeError, IndexError):
        status, r = -2, 0
    if status in (-1, -2) and not checked:
        q = np.ascontiguousarray(inp.configuration(model, q))
        v = np.ascontiguousarray(inp.vector(model, v, "v", "v"))
        tau = np.ascontiguousarray(inp.vector(model, tau, "tau", "v"))
        return fast_lagrange(model, q, v, tau, f_ext, inp.baumgarte(baumgarte), True, fext)
    if status:
        _loop_status(model, status, q)
    return a, r, cp


NO_FEXT = np.zeros((0, 6))


def _constrained(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None,
    method: str,
    baumgarte: tuple[float, float],
    independent: npt.ArrayLike | None,
    forces: bool,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """(qddot, lambda, C rows of lambda) of 004 eq. 14 (see constrained_forward_dynamics)."""
    _check_method(method)
    baumgarte = inp.baumgarte(baumgarte)
    if method == "lagrange":
        a, r, cp = fast_lagrange(model, q, v, tau, f_ext, baumgarte)
        return a, cp.lam[:r].copy(), cp.C[:r].copy()
    return reference_constrained(model, q, v, tau, f_ext, method, baumgarte, independent, forces)


def reference_constrained(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    method: str = "lagrange",
    baumgarte: tuple[float, float] = (0.0, 0.0),
    independent: npt.ArrayLike | None = None,
    forces: bool = True,
) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """The readable version of the constrained dynamics (dense C, NumPy/SciPy), which the
    compiled kernel is tested against: (qddot, lambda, C rows of lambda); with the
    partitioning method lambda is computed only when ``forces`` (else None)."""
    _check_model(model)

    _check_method(method)
    q = inp.configuration(model, q)
    v = inp.vector(model, v, "v", "v")
    tau = inp.vector(model, tau, "tau", "v")
    phi, C, cdqd = loop_kinematics(model, q, v)
    alpha, beta = inp.baumgarte(baumgarte)
    rhs = -cdqd - 2.0 * alpha * (C @ v) - beta * beta * phi
    if method == "lagrange":  # the solve every constraint kind shares (004 eqs. 13-14)
        a, lam, rows = lagrange_accelerations(model, q, v, tau, C, rhs, f_ext)
        return a, lam, C[rows]
    rows, dep, ind, E, Edqd = transformation(C, model.nv, independent, rhs)
    M = tree_mass_matrix(model, q)
    f = tau - tree_nonlinear_effects(model, q, v, f_ext)
    Mp = E.T @ M @ E  # M' = E^T M E            (20)
    fp = E.T @ (f - M @ Edqd)  # f' = E^T (f - M Edot qdot_i) (21)
    qdd_i = scipy.linalg.solve(Mp, fp, assume_a="pos")  # M' qdd_i = f'           (19)
    a = E @ qdd_i + Edqd  # (18), (24)
    Cr = C[rows]
    lam_p = np.linalg.lstsq(Cr.T, M @ a - f, rcond=None)[0] if forces else None  # C^T lambda = M qdd - f (14)
    return a, lam_p, Cr


@overload
def constrained_forward_dynamics(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    method: str = "lagrange",
    baumgarte: tuple[float, float] = (0.0, 0.0),
    independent: npt.ArrayLike | None = None,
    return_forces: Literal[False] = False,
) -> np.ndarray: ...
@overload
def constrained_forward_dynamics(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    method: str = "lagrange",
    baumgarte: tuple[float, float] = (0.0, 0.0),
    independent: npt.ArrayLike | None = None,
    return_forces: Literal[True],
) -> tuple[np.ndarray, np.ndarray | None]: ...
def constrained_forward_dynamics(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    method: str = "lagrange",
    baumgarte: tuple[float, float] = (0.0, 0.0),
    independent: npt.ArrayLike | None = None,
    return_forces: bool = False,
) -> np.ndarray | tuple[np.ndarray, np.ndarray | None]:
    """Accelerations of a model with loop closures (004 eqs. 13-14, or 19-25).

    ``baumgarte = (alpha, beta)`` stabilises drift (Baumgarte): the acceleration constraint
    becomes ``C qddot = -Cdot qdot - 2 alpha C qdot - beta^2 phi``; (0, 0) is the exact
    constraint.  With ``return_forces`` returns ``(qddot, lambda)``, ``lambda`` for the
    independent constraint rows (``C^T lambda`` are the generalized constraint forces;
    :func:`constraint_forces`).

    Parameters
    ----------
    q, v, tau : arrays
        The state and the joint torques of the tree's coordinates.
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``.
    method : {"lagrange", "partitioning"}
        Lagrange multipliers on the O(n) forward dynamics (004 eqs. 13-14, compiled), or
        coordinate partitioning (004 eqs. 19-25, dense).
    baumgarte : (alpha, beta)
        Drift stabilisation in 1/s, two finite numbers >= 0 (above).
    independent : indices into v, optional
        For ``"partitioning"``: the independent coordinates (default: chosen from C).
    return_forces : bool
        Also return the multipliers.

    Returns
    -------
    qdd : (nv,) array, or ``(qdd, lambda)`` with ``return_forces``

    Raises
    ------
    InputError
        Bad shapes, values or ``baumgarte``; rows of C that cannot be satisfied.
    SingularInertiaError
        A singular articulated inertia (naming the joint).
    """
    _check_model(model)
    if method == "lagrange" and not return_forces:
        return fast_lagrange(model, q, v, tau, f_ext, inp.baumgarte(baumgarte))[0]
    a, lam, _ = _constrained(model, q, v, tau, f_ext, method, baumgarte, independent, return_forces)
    return (a, lam) if return_forces else a


def constraint_forces(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    baumgarte: tuple[float, float] = (0.0, 0.0),
) -> tuple[np.ndarray | None, np.ndarray]:
    """``(lambda, C)``: the Lagrange multipliers of 004 eq. 14 for the independent constraint
    rows and those rows of C, so that ``C^T lambda`` is the generalized force the cut joints
    exert (``M qddot = tau - h + C^T lambda``)."""
    _check_model(model)
    _, lam, Cr = _constrained(model, q, v, tau, f_ext, "lagrange", baumgarte, None, True)
    return lam, Cr


def velocity_transformation(
    model: Model | MimicModel, q: npt.ArrayLike, independent: npt.ArrayLike | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(E, dependent, independent)``: qdot = E qdot_i (004 eqs. 16, 23), C E = 0 (eq. 17).
    ``independent`` (indices into v) imposes the independent coordinates; by default they are
    chosen by a pivoted QR of C (see :func:`partition`)."""
    _check_model(model)
    if isinstance(model, MimicModel):  # the loop rows on the reduced coordinates: C G
        return _mimic_loops.velocity_transformation(model, q, independent)
    _, dep, ind, E, _ = transformation(loop_jacobian(model, q), model.nv, independent)
    return E, dep, ind


def project_configuration(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    *,
    independent: npt.ArrayLike | None = None,
    tol: float = 1e-12,
    max_iter: int = 30,
) -> np.ndarray:
    """Close the loops: Newton-Raphson on the dependent coordinates, ``C_d dq_d = -phi``
    (004 eq. 26), the independent ones kept.  Returns the corrected q; raises
    :class:`~denoc_bridge.errors.InputError` naming the cut joint when it does not converge
    (the loops cannot be closed near q).

    Parameters
    ----------
    q : (nq,) array
        A configuration near the loops (reduced on a MimicModel).
    independent : indices into v, optional
        The coordinates kept (default: chosen by :func:`partition` from the constraint rows).
    tol : float
        Largest loop-closure error accepted (metres and radians).
    max_iter : int
        Newton-Raphson iterations before giving up.

    Returns
    -------
    q : (nq,) array
        The configuration with the loops closed.
    """
    _check_model(model)
    if isinstance(model, MimicModel):  # the loop rows on the reduced coordinates: C G
        return _mimic_loops.project_configuration(model, q, independent=independent, tol=tol, max_iter=max_iter)

    qc = inp.configuration(model, q).copy()
    qc, phi = newton_closure(
        qc, lambda x: all_rows(model, x)[:2], lambda x, dv: integrate(model, x, dv), independent, tol, max_iter
    )
    if np.abs(phi).max() <= tol:
        return qc
    return closed_or_error(model.loops, qc, phi, tol, max_iter)


def project_velocity(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, *, independent: npt.ArrayLike | None = None
) -> np.ndarray:
    """The velocity satisfying C v = 0 with the same independent components (004 eq. 16).

    Parameters
    ----------
    q : (nq,) array
        A configuration on the loops (reduced on a MimicModel).
    v : (nv,) array
        The velocity to correct.
    independent : indices into v, optional
        The components kept (default: chosen by :func:`partition`).

    Returns
    -------
    v : (nv,) array
        ``E v_i``: satisfies ``C v = 0``.
    """
    _check_model(model)
    if isinstance(model, MimicModel):  # the loop rows on the reduced coordinates: C G
        return _mimic_loops.project_velocity(model, q, v, independent=independent)

    v = inp.vector(model, v, "v", "v")
    E, dep, ind = velocity_transformation(model, q, independent)
    return E @ v[ind]


@overload
def closed_chain_inverse_dynamics(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    actuated: inp.JointsLike | None = None,
    return_forces: Literal[False] = False,
    tol: float = 1e-8,
) -> np.ndarray: ...
@overload
def closed_chain_inverse_dynamics(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    actuated: inp.JointsLike | None = None,
    return_forces: Literal[True],
    tol: float = 1e-8,
) -> tuple[np.ndarray, np.ndarray]: ...
def closed_chain_inverse_dynamics(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
    *,
    actuated: inp.JointsLike | None = None,
    return_forces: bool = False,
    tol: float = 1e-8,
) -> np.ndarray | tuple[np.ndarray, np.ndarray]:
    """Actuator torques of a closed chain that realise the motion (q, v, a), the other joints
    passive (zero torque).

    004 eq. 14 read backwards: the tree's inverse dynamics ``tau_tree = M a + h`` must equal
    ``S tau_a + C^T lambda`` (S selects the actuated coordinates).  Multiplying by the velocity
    transformation E (C E = 0, 004 eqs. 17, 23) removes the constraint forces:
    ``E^T S tau_a = E^T tau_tree`` (the minimal equations 19-21), solved for tau_a (least
    squares of minimum norm when the chain is redundantly actuated); then
    ``C^T lambda = tau_tree - S tau_a``.

    ``actuated``: joint names or indices into v (default: every joint, giving the smallest
    torques in the 2-norm).  Raises :class:`~denoc_bridge.errors.InputError` when (q, v, a)
    violates a loop (beyond ``tol``, relative) or when the actuated joints cannot produce the
    motion (fewer independent actuators than degrees of freedom of the closed chain, or
    actuators placed where they cannot move it).  Returns tau (nv,), with ``return_forces``
    ``(tau, lambda)`` (lambda for the independent rows of C, as :func:`constraint_forces`).
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return _mimic_loops.closed_chain_inverse_dynamics(
            model, q, v, a, f_ext, actuated=actuated, return_forces=return_forces, tol=tol
        )

    q = inp.configuration(model, q)
    v = inp.vector(model, v, "v", "v")
    a = inp.vector(model, a, "a", "v")
    act = actuated_dofs(model, actuated)
    phi, C, gamma = loop_kinematics(model, q, v)
    check_consistent(model.loops, phi, C, gamma, v, a, tol)
    tau_tree = tree_inverse_dynamics(model, q, v, a, f_ext)

    def describe() -> str:
        return ", ".join(
            sorted({model.joint_names[int(np.searchsorted(model.idx_v, i, side="right") - 1)] for i in act})
        )

    tau, rows = actuator_torques(C, tau_tree, act, model.nv, describe)
    if not return_forces:
        return tau
    Cr = C[rows]
    lam = np.linalg.lstsq(Cr.T, tau_tree - tau, rcond=None)[0]  # C^T lambda = tau_tree - S tau_a  (14)
    return tau, lam
