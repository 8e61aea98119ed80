"""What every constraint kind solves the same way.

Every holonomic constraint on a tree is a set of rows on the tree's velocities,
``J(q) v = 0``, with acceleration rows ``J a = gamma(q, v)``: a mimic coupling gives the
constant rows K (``gamma = 0``), a loop closure the rows C(q) (``gamma = -Cdot v``).  Here:
``M^-1 J^T`` columns by the O(n) forward dynamics of the tree (000 Table 3), the rank of the
rows, the Lagrange solve of the stacked rows (:func:`lagrange_accelerations`), the partition
into dependent and independent coordinates with its velocity transformation (004 eqs. 16-25),
the Newton closure of the position rows (004 eq. 26) and the torques of a closed chain's
actuators (004 eq. 14 read backwards)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt
import scipy.linalg

from denoc_bridge._text import count
from denoc_bridge.algorithms.dynamics import (
    tree_forward_dynamics,
)
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.constraints import JointCoupling, LoopClosure

RANK_RTOL = 1e-9  # relative to the largest singular value
SERIAL_COLUMNS = 32  # M^-1 X with at most this many columns: single-state calls, not the batch kernel


def independent_rows(C, rtol: float = RANK_RTOL) -> np.ndarray:
    """Indices of a maximal set of independent rows of C (QR with column pivoting of C^T),
    in increasing order; the others are redundant (004 §2.3)."""
    C = np.asarray(C, dtype=float)
    if C.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, Rf, piv = scipy.linalg.qr(C.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rf))
    scale = d[0] if d.size and d[0] > 0 else 1.0
    rank = int(np.sum(d > rtol * max(scale, 1e-300))) if d[0] > 0 else 0
    return np.sort(piv[:rank])


def gravity_free(model):
    """The model without gravity (cached on it; the tree and inertias of a model never change,
    its gravity does not matter here): forward dynamics at v = 0 is then M^-1 tau."""
    twin = model.__dict__.get("_gravity_free")
    if twin is None:
        twin = model.replace(gravity=(0.0, 0.0, 0.0))
        model._gravity_free = twin
    return twin


def minv_columns(model, q, X) -> np.ndarray:
    """M^-1 X (nv x m) by the O(n) forward dynamics, one right-hand side per column: forward
    dynamics at v = 0 without gravity is M^-1 tau (000 Table 3)."""

    m = X.shape[1]
    if m == 0:
        return np.zeros((model.nv, 0))
    twin = gravity_free(model)
    if m <= SERIAL_COLUMNS:  # one state at a time: the threaded batch kernel costs ~7 ms a call here
        z = np.zeros(model.nv)
        return np.column_stack([tree_forward_dynamics(twin, q, z, np.ascontiguousarray(x)) for x in X.T])
    Q = np.broadcast_to(q, (m, model.nq))
    return tree_forward_dynamics(twin, np.ascontiguousarray(Q), np.zeros((m, model.nv)), np.ascontiguousarray(X.T)).T


def partition(C, rtol: float = RANK_RTOL, independent=None):
    """(rows, dependent, independent): independent constraint rows, and a split of the
    coordinates with ``C[rows][:, dependent]`` invertible.  The dependent coordinates are chosen
    by a pivoted QR of C, preferring the joints listed last (those nearest the cut) on ties;
    ``independent`` (indices into v) imposes the independent ones."""
    C = np.asarray(C, dtype=float)
    rows = independent_rows(C, rtol)
    Cr = C[rows]
    nv = C.shape[1]
    if independent is not None:
        ind = np.sort(np.asarray(independent, dtype=np.int64))
        dep = np.setdiff1d(np.arange(nv), ind)
        if dep.size != rows.size or (
            dep.size and abs(np.linalg.det(Cr[:, dep])) <= rtol * np.abs(Cr).max() ** dep.size
        ):
            raise InputError(
                f"the coordinates {ind.tolist()} cannot be the independent ones: the constraint "
                f"Jacobian has rank {rows.size}, and the other {dep.size} columns must be invertible"
            )
        return rows, dep, ind
    if rows.size == 0:
        return rows, np.zeros(0, dtype=np.int64), np.arange(nv)
    _, _, piv = scipy.linalg.qr(Cr[:, ::-1], mode="economic", pivoting=True)
    dep = np.sort(nv - 1 - piv[: rows.size])
    return rows, dep, np.setdiff1d(np.arange(nv), dep)


def transformation(C, nv, independent=None, rhs=None):
    """(rows, dependent, independent, E, Edot qdot_i) of 004 eqs. 23 and 25 for the independent
    rows of C; ``rhs`` is the right-hand side of ``C qddot = rhs`` (None: no Edot qdot_i)."""
    rows, dep, ind = partition(C, independent=independent)
    Cr = C[rows]
    E = np.zeros((nv, ind.size))
    E[ind, np.arange(ind.size)] = 1.0
    Edqd = np.zeros(nv)
    if dep.size:
        # one LU solve (LAPACK gesv) for both; numpy's: scipy 1.17's lu_solve with several
        # right-hand sides takes ~8 ms on a 2 x 2 system with its multithreaded OpenBLAS (measured)
        b = Cr[:, ind] if rhs is None else np.column_stack([Cr[:, ind], rhs[rows]])
        x = np.linalg.solve(Cr[:, dep], b)
        E[dep] = -x[:, : ind.size]  # E = [1; -C_d^-1 C_i]    (23)
        if rhs is not None:
            Edqd[dep] = x[:, ind.size]  # Edot qdot_i             (25)
    return rows, dep, ind, E, Edqd


def lagrange_accelerations(tree, q, v, tau, rows, gamma, f_ext=None):
    """``(a, lambda, kept)``: the accelerations of ``tree`` under the rows ``J a = gamma``
    (004 eqs. 13-14 for any holonomic rows: mimic couplings, loop closures, or both stacked)::

        a = a0 + M^-1 J^T lambda,     (J M^-1 J^T) lambda = gamma - J a0

    with ``a0`` the open-tree forward dynamics (O(n)) for ``tau`` (tree layout) and ``f_ext``,
    ``M^-1 J^T`` one O(n) forward dynamics per row (:func:`minv_columns`), on the independent
    rows ``kept`` of J (:func:`independent_rows`; lambda is for those).  Raises
    :class:`~denoc_bridge.errors.SingularInertiaError` when the tree alone is singular."""
    J = np.asarray(rows, dtype=float)
    kept = independent_rows(J)
    Jr, gr = J[kept], np.asarray(gamma, dtype=float)[kept]
    a0 = tree_forward_dynamics(tree, q, v, tau, f_ext)
    Y = minv_columns(tree, q, Jr.T)  # M^-1 J^T, O(n) per row
    S = Jr @ Y
    lam = np.linalg.solve(S, gr - Jr @ a0)  # (J M^-1 J^T) lambda = ...   (13-14)
    return a0 + Y @ lam, lam, kept


def newton_closure(
    q: np.ndarray,
    residual_jacobian: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
    step: Callable[[np.ndarray, np.ndarray], np.ndarray],
    independent: npt.ArrayLike | None = None,
    tol: float = 1e-12,
    max_iter: int = 30,
) -> tuple[np.ndarray, np.ndarray]:
    """``(q, phi)``: Newton-Raphson on the dependent coordinates, ``C_d dq_d = -phi`` (004 eq.
    26), the independent ones kept, until ``max |phi| <= tol`` or ``max_iter`` steps.
    ``residual_jacobian(q)`` gives (phi, C) (C on the velocity coordinates), ``step(q, dv)`` the
    configuration moved by dv; ``phi`` is the residual at the returned q."""
    for _ in range(max_iter):
        phi, C = residual_jacobian(q)
        if np.abs(phi).max() <= tol:
            return q, phi
        rows, dep, _ = partition(C, independent=independent)
        dv = np.zeros(C.shape[1])
        dv[dep] = np.linalg.lstsq(C[rows][:, dep], -phi[rows], rcond=None)[0]
        q = step(q, dv)
    return q, residual_jacobian(q)[0]


def actuated_dofs(model, actuated) -> np.ndarray:
    """The velocity indices of the actuated joints (names, or indices into v); a joint with no
    velocity coordinates of its own (a mimic joint of a MimicModel) is refused by name."""
    if actuated is None:
        return np.arange(model.nv)
    dofs: list[int] = []
    for item in np.atleast_1d(np.asarray(actuated, dtype=object)):
        if isinstance(item, str):
            if item not in model.joint_names:
                raise InputError(f"actuated: no joint named '{item}' in '{model.name}'")
            k = model.joint_names.index(item)
            if model.nv_joint[k] == 0:
                raise InputError(
                    f"actuated: joint '{item}' is a mimic joint (it follows its mimicked joint and has no "
                    "coordinate of its own); actuate the mimicked joint instead"
                )
            dofs.extend(range(model.idx_v[k], model.idx_v[k] + model.nv_joint[k]))
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < model.nv:
            dofs.append(int(item))
        else:
            raise InputError(f"actuated: {item!r} is neither a joint name nor an index into v (0..{model.nv - 1})")
    out = np.unique(np.array(dofs, dtype=np.int64))
    if out.size != len(dofs):
        raise InputError("actuated: a joint or index is listed twice")
    return out


def check_consistent(loops, phi, C, gamma, v, a, tol):
    """Raise InputError naming the cut joint (of ``loops``, in the order of the rows) whose
    position, velocity or acceleration constraint (q, v, a) violates by more than tol (relative
    to the terms' scale); ``C @ a + gamma`` is the acceleration error (gamma = Cdot v)."""
    levels = (
        ("position", phi, 1.0),
        ("velocity", C @ v, 1.0 + np.abs(C).max() * np.abs(v).max()),
        ("acceleration", C @ a + gamma, 1.0 + np.abs(C).max() * np.abs(a).max() + np.abs(gamma).max()),
    )
    for level, err, scale in levels:
        r0 = 0
        for lc in loops:
            e = np.abs(err[r0 : r0 + lc.n_rows]).max()
            if e > tol * scale:
                raise InputError(
                    f"the motion does not satisfy {lc.label} at the {level} level (error {e:.2e}): "
                    "closed-chain inverse dynamics needs q, v, a consistent with the loops "
                    "(project_configuration, project_velocity, or accelerations from forward dynamics)"
                )
            r0 += lc.n_rows


def actuator_torques(C, tau_tree, act, nv, describe):
    """``(tau, lambda, rows)`` of a closed chain whose actuated coordinates are ``act``: ``E^T S
    tau_a = E^T tau_tree`` (E the velocity transformation of C, 004 eqs. 17-23; least squares of
    minimum norm when redundantly actuated), ``C^T lambda = tau_tree - S tau_a`` (004 eq. 14) on
    the independent rows ``rows`` of C.  ``describe()`` names the actuated joints when they
    cannot produce the motion (InputError)."""
    rows, dep, ind, E, _ = transformation(C, nv)
    A, b = E.T[:, act], E.T @ tau_tree  # E^T S tau_a = E^T tau_tree  (19-21)
    tau_a, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
    scale = np.abs(b).max(initial=0.0) + np.abs(E.T).max(initial=0.0) * np.abs(tau_tree).max() + 1e-300
    if rank < ind.size and np.abs(A @ tau_a - b).max() > 1e-9 * scale:
        raise InputError(
            f"the actuated joints ({describe() or 'none'}) cannot produce this motion: the closed "
            f"chain has {count(ind.size, 'degree')} of freedom and they act on {rank} of them"
        )
    tau = np.zeros(nv)
    tau[act] = tau_a
    return tau, rows


def closed_or_error(
    loop_closures: Sequence[LoopClosure | JointCoupling], q: np.ndarray, phi: np.ndarray, tol: float, max_iter: int
) -> np.ndarray:
    """q when the worst loop error is within 1e3 tol, else the InputError naming that loop."""
    worst: tuple[str, float] = ("", -1.0)
    r0 = 0
    for lc in loop_closures:
        e = float(np.abs(phi[r0 : r0 + lc.n_rows]).max())
        if e > worst[1]:
            worst = (lc.label, e)
        r0 += lc.n_rows
    if worst[1] <= 1e3 * tol:
        return q
    raise InputError(
        f"cannot close {worst[0]} near this configuration: error {worst[1]:.2e} after "
        f"{max_iter} Newton-Raphson steps (004 eq. 26)"
    )
