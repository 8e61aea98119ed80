"""A :class:`~denoc_bridge.MimicModel` whose tree also has loop closures: two kinds of holonomic
constraint on one tree, solved by the functions every kind shares (:mod:`.solve`).

The state is reduced, ``(q_r, v_r)`` (the independent joints, Pinocchio's mimic layout), and
expanded to the tree: ``q = q_full(q_r)``, ``v = G v_r``.  On the tree's velocities the
constraints are the stacked rows

    J = [K; C(q)],     J a = gamma = [0; -Cdot v]     (mimic rows K: constant, ``K G = 0``;
                                                        loop rows C: 004 eqs. 12-15)

and the forward dynamics is the Lagrange solve of :func:`.solve.lagrange_accelerations` on the
tree (``M^-1 J^T`` by the O(n) forward dynamics, redundant rows removed), reduced at the end:
``a_r = a[independent]``.  Since ``a = G a_r`` and ``G^T K^T = 0`` this is the reduced KKT
system

    [G^T M G, (C G)^T; C G, 0] [a_r; -lambda] = [tau_r - G^T h; gamma_C].

On the reduced coordinates the loop rows are ``C G`` (:func:`loop_jacobian`): the projections
(Newton on ``phi(q_full(q_r))`` with Jacobian ``C G``, 004 eq. 26) and the closed-chain inverse
dynamics (004 eq. 14 read backwards with ``tau_tree = G^T ID(q, G v_r, G a_r)``) use them.

Refused by name, never NaN: a mimic joint whose relation takes the only degree(s) of freedom of
a loop (the loop's joints could no longer move: the relation and the loop fix them both;
:class:`~denoc_bridge.errors.ModelError` at a closed configuration, an
:class:`~denoc_bridge.errors.InputError` asking to close the loop first elsewhere, where the
ranks cannot tell it from a redundant coupling), and, at a state, redundant rows whose
accelerations disagree (a loop singular under the coupling, InputError naming the loop).
A redundant but consistent coupling (e.g. the two cranks of a parallelogram mimic-coupled with
multiplier 1) is solved: :func:`.solve.independent_rows` removes the row.
"""

from __future__ import annotations

import numpy as np

from denoc_bridge.algorithms.configuration import integrate
from denoc_bridge.algorithms.dynamics import tree_mass_matrix, tree_nonlinear_effects
from denoc_bridge.constraints import mimic as _mimic
from denoc_bridge.constraints.packed import tree_rows
from denoc_bridge.constraints.solve import (
    actuated_dofs,
    actuator_torques,
    check_consistent,
    closed_or_error,
    independent_rows,
    lagrange_accelerations,
    minv_columns,
    newton_closure,
    transformation,
)
from denoc_bridge.errors import InputError, ModelError, SingularInertiaError
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.constraints import JointCoupling
from denoc_bridge.multibody.mimic import MimicModel

__all__ = [
    "stacked_rows",
    "loop_residual",
    "loop_jacobian",
    "forward_dynamics",
    "closed_chain_inverse_dynamics",
    "project_configuration",
    "project_velocity",
    "velocity_transformation",
    "kinetic_projection",
]

#: redundant rows whose accelerations disagree by more than this (relative) make a singular loop
CONSISTENCY_RTOL = 1e-8
#: a loop whose position error is at most this (m or rad) is closed, for check_coupling
CLOSED_TOL = 1e-6


#: the Newton steps at most of :func:`project_configuration` (and of the compiled contact run's
#: closing of a MimicModel's loops, which takes it from the Python layer)
PROJECT_STEPS = 30


def _check(model) -> None:
    if not isinstance(model, MimicModel) or not model.loops:
        raise InputError("this function takes a MimicModel whose tree has loop closures")


def _full_configuration(model, q):
    qf = model.expand(q)
    if qf.ndim != 1:
        raise InputError("one configuration, not a batch")
    return inp.configuration(model.tree, qf, "q (expanded to the tree)")


def stacked_rows(model: MimicModel, q, v=None):
    """``(q_full, v_full, phi, J, gamma)`` at the reduced state: the tree's state and the rows on
    its velocities ``J = [K; C(q_full)]`` with ``phi = [0; phi_loops]`` and ``gamma = [0; -Cdot
    v_full]`` (zeros without v)."""
    _check(model)
    qf = _full_configuration(model, q)
    vf = None if v is None else model.expand(q, v)[1]
    phi, C, cdqd = tree_rows(model.tree, qf, vf)
    nc = model.n_constraints
    J = np.vstack([model.constraint_matrix(), C])
    gamma = np.concatenate([np.zeros(nc), -cdqd if cdqd is not None else np.zeros(len(phi))])
    return qf, vf, np.concatenate([np.zeros(nc), phi]), J, gamma


def loop_residual(model: MimicModel, q) -> np.ndarray:
    """The loops' position errors at ``q_full(q_r)`` (all rows)."""
    _check(model)
    return tree_rows(model.tree, _full_configuration(model, q))[0]


def loop_jacobian(model: MimicModel, q) -> np.ndarray:
    """``C G``: the loop rows on the reduced velocities (all rows, m x nv_r)."""
    _check(model)
    return model.reduce_forces(tree_rows(model.tree, _full_configuration(model, q))[1])


# ----------------------------------------------------------------------------- coupling checks
def _loop_dofs(model):
    """Per loop closure, the tree's velocity indices on the path between its two links."""
    tree = model.tree
    cache = model.__dict__.get("_loop_dofs")
    if cache is not None and cache[0] is tree.loops:
        return cache[1]

    def ancestors(k):
        out = set()
        while k >= 0:
            out.add(int(k))
            k = tree.parent[k]
        return out

    dofs = []
    for lc in tree.loops:
        path = set(lc.joints) if isinstance(lc, JointCoupling) else ancestors(lc.link1) ^ ancestors(lc.link2)
        idx = [i for k in sorted(path) for i in range(tree.idx_v[k], tree.idx_v[k] + tree.nv_joint[k])]
        dofs.append(np.array(idx, dtype=np.int64))
    model._loop_dofs = (tree.loops, dofs)
    return dofs


def check_coupling(model: MimicModel, C, phi=None) -> None:
    """Refuse a mimic relation that takes the only degree(s) of freedom of a loop: the loop's
    joints can move on the tree (mobility > 0, from the rank of its rows C, tree layout, all
    rows) but not under the coupling.  At a configuration that closes the loop (``phi``, None:
    closed) that is the model's fault, :class:`ModelError` naming the mimic joint; elsewhere
    the ranks may be those of a redundant coupling seen off the loop, :class:`InputError` (close
    the loop first)."""
    r0 = 0
    for lc, dofs in zip(model.loops, _loop_dofs(model)):
        rows = slice(r0, r0 + lc.n_rows)
        r0 += lc.n_rows
        if not dofs.size:
            continue
        Cl = C[rows]
        mob_tree = dofs.size - independent_rows(Cl[:, dofs]).size
        cols = np.unique(model._col[dofs])
        mob_coupled = cols.size - independent_rows(model.reduce_forces(Cl)[:, cols]).size
        if mob_tree == 0 or mob_coupled > 0:
            continue
        inside = [r for r, s in zip(model.mimic, model._s_v) if s in set(dofs.tolist())]
        names = ", ".join(f"'{r.joint}' (mimicking '{r.mimicked}')" for r in inside) or "?"
        error = 0.0 if phi is None else float(np.abs(phi[rows]).max())
        if error > CLOSED_TOL:
            raise InputError(
                f"{lc.label} of model '{model.tree.name}' is not closed at this configuration (error "
                f"{error:.2e}) and the mimic joint {names} leaves it no motion here: close it first "
                "(db.loops.project_configuration)"
            )
        raise ModelError(
            f"model '{model.tree.name}': the mimic joint {names} takes the only degree(s) of freedom "
            f"of {lc.label} ({mob_tree} on the tree): with the coupling its joints cannot move, "
            "and the relation and the loop fix them both; drop the <mimic> or the <loop_joint>"
        )


def _check_redundant(model, J, a, rhs, kept):
    """InputError naming the loop when a redundant row (dropped by independent_rows) is not
    satisfied by the accelerations: the loop is singular at this state under the coupling."""
    dropped = np.setdiff1d(np.arange(len(J)), kept)
    if not dropped.size:
        return
    err = np.abs(J[dropped] @ a - rhs[dropped])
    scale = 1.0 + np.abs(J).max() * np.abs(a).max() + np.abs(rhs).max()
    if err.max() <= CONSISTENCY_RTOL * scale:
        return
    row = int(dropped[int(np.argmax(err))]) - model.n_constraints
    r0 = 0
    for lc in model.loops:
        if row < r0 + lc.n_rows:
            break
        r0 += lc.n_rows
    raise InputError(
        f"{lc.label} of model '{model.tree.name}' is singular at this state under the mimic coupling: "
        f"its rows are dependent on the others and their accelerations disagree (error {err.max():.2e}); "
        "the state violates the loops (project_configuration, project_velocity) or the mechanism is at a "
        "singular position"
    )


# ----------------------------------------------------------------------------- dynamics
def forward_dynamics(
    model: MimicModel, q, v, tau, f_ext=None, *, baumgarte=(0.0, 0.0), method: str = "lagrange", return_forces=False
):
    """Reduced accelerations ``a_r`` of the coupled closed chain (module docstring).

    ``method="lagrange"`` (default): the stacked rows [K; C] on the tree by
    :func:`.solve.lagrange_accelerations` (O(n) per row); falls back to ``"dense"`` (the reduced
    KKT system with ``G^T M G``) when the tree alone has a singular articulated inertia.
    ``baumgarte = (alpha, beta)``: ``C a = -Cdot v - 2 alpha C v - beta^2 phi`` on the loop rows.
    A leading batch axis is allowed (state by state).  With ``return_forces``: ``(a_r, lambda,
    rows)``, lambda for the independent rows ``rows`` of the stacked J (tree layout)."""
    _check(model)
    if method not in ("lagrange", "dense"):
        raise InputError(f"method must be 'lagrange' or 'dense', got {method!r}")
    if np.ndim(q) == 2:
        fe = inp.per_state_wrenches(model.tree, f_ext, len(q))
        return np.array(
            [
                forward_dynamics(model, q[i], v[i], tau[i], fe[i], baumgarte=baumgarte, method=method)
                for i in range(len(q))
            ]
        )
    qf, vf, phi, J, gamma = stacked_rows(model, q, v)  # checks q and v first
    tau = model._reduced(tau, "tau", model.nv)
    check_coupling(model, J[model.n_constraints :], phi[model.n_constraints :])
    alpha, beta = inp.baumgarte(baumgarte)
    rhs = gamma - 2.0 * alpha * (J @ vf) - beta * beta * phi
    if method == "lagrange":
        try:
            a, lam, kept = lagrange_accelerations(model.tree, qf, vf, model.full_forces(tau), J, rhs, f_ext)
        except SingularInertiaError:
            method = "dense"
        except np.linalg.LinAlgError:
            a = None
    if method == "dense":
        a, lam, kept = _dense(model, qf, vf, tau, J, rhs, f_ext)
    if a is None or not np.all(np.isfinite(a)):
        raise InputError(
            f"the accelerations of model '{model.tree.name}' are not defined at this state (the stacked "
            "mimic and loop rows are singular: a singular position of the loops under the coupling)"
        )
    _check_redundant(model, J, a, rhs, kept)
    a_r = a[model._v_keep]
    return (a_r, lam, kept) if return_forces else a_r


def _dense(model, qf, vf, tau, J, rhs, f_ext):
    """(a_full, lambda, kept) from the reduced KKT system (dense, O(n^2) memory): the fallback when
    the tree alone is singular (e.g. massless fingers moved only by a mimic joint)."""
    tree, nc = model.tree, model.n_constraints
    M = tree_mass_matrix(tree, qf)
    h = tree_nonlinear_effects(tree, qf, vf, f_ext)
    Mr = model.reduce_forces(model.reduce_forces(M, axis=0), axis=1)
    CG = model.reduce_forces(J[nc:])
    keep = independent_rows(CG)
    A, b = CG[keep], rhs[nc:][keep]
    m = len(keep)
    kkt = np.block([[Mr, A.T], [A, np.zeros((m, m))]])
    try:
        x = np.linalg.solve(kkt, np.concatenate([tau - model.reduce_forces(h), b]))
    except np.linalg.LinAlgError:
        return None, None, np.zeros(0, dtype=np.int64)
    return model._full(x[: model.nv]), x[model.nv :], nc + keep


def closed_chain_inverse_dynamics(
    model: MimicModel, q, v, a, f_ext=None, *, actuated=None, return_forces=False, tol=1e-8
):
    """Torques on the actuated reduced coordinates that realise (q, v, a), the other joints passive.

    ``tau_tree = G^T ID(q_full, G v, G a)`` (the tree's torques seen by the reduced coordinates,
    :func:`denoc_bridge.mimic.inverse_dynamics`) must equal ``S tau_a + (C G)^T lambda``; with E
    the velocity transformation of ``C G`` (C G E = 0): ``E^T S tau_a = E^T tau_tree``, least
    squares of minimum norm (004 eqs. 14, 19-23).  ``actuated``: joint names or reduced indices
    (default all: the smallest torques); a mimic joint is not a coordinate (InputError: actuate
    its mimicked joint).  (q, v, a) must satisfy the loops (``tol``, relative)."""
    _check(model)
    q = model._reduced(q, "q", model.nq, "q")
    v = model._reduced(v, "v", model.nv)
    a = model._reduced(a, "a", model.nv)
    if q.ndim != 1 or v.ndim != 1 or a.ndim != 1:
        raise InputError("closed-chain inverse dynamics takes one state, not a batch")
    act = actuated_dofs(model, actuated)
    qf, vf, phi, J, gamma = stacked_rows(model, q, v)
    nc = model.n_constraints
    CG = model.reduce_forces(J[nc:])
    check_coupling(model, J[nc:], phi[nc:])
    check_consistent(model.loops, phi[nc:], CG, -gamma[nc:], v, a, tol)
    tau_tree = _mimic.inverse_dynamics(model, q, v, a, f_ext)

    def describe():
        owner = [k for k in range(model.n_links) if model.nv_joint[k]]
        names = {model.joint_names[k] for k in owner for i in act if model.idx_v[k] == i}
        return ", ".join(sorted(names))

    tau, rows = actuator_torques(CG, tau_tree, act, model.nv, describe)
    if not return_forces:
        return tau
    lam = np.linalg.lstsq(CG[rows].T, tau_tree - tau, rcond=None)[0]
    return tau, lam


# ----------------------------------------------------------------------------- projections
def _step(model, q, dv):
    """The reduced configuration moved by the reduced step dv (the tree's integrate of G dv)."""
    return model.reduce_configuration(integrate(model.tree, model.expand(q), model._full(dv)))


def velocity_transformation(model: MimicModel, q, independent=None):
    """``(E, dependent, independent)`` of the reduced coordinates: ``v_r = E v_r[independent]``,
    ``C G E = 0`` (004 eqs. 16, 23)."""
    _, dep, ind, E, _ = transformation(loop_jacobian(model, q), model.nv, independent)
    return E, dep, ind


def project_configuration(model: MimicModel, q, *, independent=None, tol: float = 1e-12, max_iter: int = PROJECT_STEPS):
    """Close the loops in reduced coordinates: Newton on ``phi(q_full(q_r))`` with the Jacobian
    ``C G`` on the dependent reduced coordinates (004 eq. 26), the mimic relations kept exactly.
    InputError naming the loop when it does not converge."""
    _check(model)
    q = model._reduced(q, "q", model.nq, "q")
    q = model.reduce_configuration(_full_configuration(model, q))  # normalised pairs

    def residual_jacobian(x):
        phi, C, _ = tree_rows(model.tree, model.expand(x))
        return phi, model.reduce_forces(C)

    q, phi = newton_closure(q, residual_jacobian, lambda x, dv: _step(model, x, dv), independent, tol, max_iter)
    q = closed_or_error(model.loops, q, phi, tol, max_iter)
    check_coupling(model, tree_rows(model.tree, model.expand(q))[1])  # closed: a locked loop is the model's
    return q


def project_velocity(model: MimicModel, q, v, *, independent=None):
    """The reduced velocity with ``C G v = 0`` and the same independent components (004 eq. 16)."""
    _check(model)
    v = model._reduced(v, "v", model.nv)
    E, _, ind = velocity_transformation(model, q, independent)
    return E @ v[ind]


def kinetic_projection(model: MimicModel, q, v, tol: float = 1e-12, max_iter: int = 20):
    """``(q, v, error before, error after)``: the state moved onto the loops by the smallest
    corrections in the kinetic-energy metric of the coupled system (the loop simulation's
    projection): Gauss-Newton ``dq = -M^-1 J^T (J M^-1 J^T)^-1 [0; phi]`` on the tree with the
    stacked rows (so ``K dq = 0``: the mimic relations hold), then ``v -= M^-1 J^T (J M^-1
    J^T)^-1 J v``.  Raises InputError when the loops do not close in ``max_iter`` steps."""
    tree, nc = model.tree, model.n_constraints
    K = model.constraint_matrix()
    err0 = None
    for _ in range(max_iter):
        qf = model.expand(q)
        phi, C, _ = tree_rows(tree, qf)
        err = float(np.abs(phi).max())
        if err0 is None:
            err0 = err
        if err <= tol:
            break
        J = np.vstack([K, C])
        kept = independent_rows(J)
        Jr = J[kept]
        Y = minv_columns(tree, qf, Jr.T)
        dq = -Y @ np.linalg.solve(Jr @ Y, np.concatenate([np.zeros(nc), phi])[kept])
        q = model.reduce_configuration(integrate(tree, qf, dq))
    else:
        qf = model.expand(q)
        err = float(np.abs(tree_rows(tree, qf)[0]).max())
        if err > 1e3 * tol:
            raise InputError(
                f"cannot close the loops ({', '.join(lc.name for lc in model.loops)}) near this configuration: "
                f"error {err:.2e} after {max_iter} Gauss-Newton steps"
            )
    qf, vf = model.expand(q, v)
    C = tree_rows(tree, qf)[1]
    J = np.vstack([K, C])
    kept = independent_rows(J)
    Jr = J[kept]
    Y = minv_columns(tree, qf, Jr.T)
    vf = vf - Y @ np.linalg.solve(Jr @ Y, Jr @ vf)
    return q, model.reduce_velocity(vf), err0, err
