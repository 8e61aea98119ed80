"""Simulation of models with loop closures (called by :func:`denoc_bridge.simulate`).

Each stage evaluates the constrained accelerations by Lagrange multipliers on the cut tree
(004 eqs. 13-14, :mod:`denoc_bridge.constraints.loops`).  The acceleration constraint alone lets the
loops drift apart (its error grows with time); ``stabilization`` chooses the remedy:

``"projection"`` (default)
    after every step, the positions are brought back onto the constraint manifold by
    Gauss-Newton iterations ``dq = -M^-1 C^T (C M^-1 C^T)^-1 phi`` (to ``constraint_tol``),
    and the velocities by ``v -= M^-1 C^T (C M^-1 C^T)^-1 C v``: both the smallest
    corrections in the kinetic-energy metric (the velocity projection never adds kinetic
    energy).  The initial state is projected the same way.
``"baumgarte"``
    Baumgarte's stabilisation ``C qddot = -Cdot qdot - 2 alpha C qdot - beta^2 phi`` with
    ``baumgarte = (alpha, beta)`` in 1/s; no projection.
``"none"``
    the exact acceleration constraint, no correction (to watch the drift).

The trajectory reports the loop-closure error of every saved state (``constraint_error``)
and, with projection, the largest error a single step produced before it was projected away
(``constraint_drift``).  RK4 and semi-implicit Euler with tau as None, a constant or a table
run in the one compiled run (:class:`LoopSystem`, ``denoc_bridge/core/run.pyx``); callables
``tau(t, q, v)`` / ``f_ext(t, q, v)`` run stage by stage from Python, the same steps.
"""

from __future__ import annotations

import numpy as np

from denoc_bridge.constraints import loops as lp
from denoc_bridge.core import loops as core_loops
from denoc_bridge.core import sized
from denoc_bridge.core import systems as ks
from denoc_bridge.errors import InputError, SimulationError
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.constraints import describe_loops
from denoc_bridge.simulation.common import passive_forces_into, run_error
from denoc_bridge.simulation.tree import TreeSystem

STABILIZATIONS = ("projection", "baumgarte", "none")
MAX_ITER = 20


def options(model, method, dynamics, stabilization, baumgarte, constraint_tol):
    """(alpha, beta, project, tol) after checking the options for a model with loops."""
    if method not in ("rk4", "euler"):
        raise InputError(
            f"'{model.name}' has {describe_loops(model.loops)}: simulate it with method='rk4' or 'euler' (the "
            f"projection onto the loops after each step does not fit the adaptive {method})"
        )
    if dynamics != "recursive":
        raise InputError(
            f"'{model.name}' has loop closures: only dynamics='recursive' (Lagrange multipliers on the "
            "O(n) forward dynamics) simulates them"
        )
    if stabilization not in STABILIZATIONS:
        raise InputError(f"stabilization must be one of {', '.join(STABILIZATIONS)}, got {stabilization!r}")
    alpha, beta = inp.baumgarte(baumgarte)
    tol = float(constraint_tol)
    if not (np.isfinite(tol) and tol > 0):
        raise InputError(f"constraint_tol must be a positive number, got {constraint_tol!r}")
    if stabilization != "baumgarte":
        alpha = beta = 0.0
    return alpha, beta, stabilization == "projection", tol


def close_loops(model, cp, q, v, tol, t):
    """Project (q, v) in place onto the loops in the kinetic-energy metric (the module
    docstring; ``cp`` the model's :func:`~denoc_bridge.constraints.loops.compiled`); returns the
    error before."""
    qn = np.empty(model.nq)
    status, err, err0 = core_loops.project_state(
        model._kt, cp.work, cp.pi, cp.pf, cp.sb, q, v, lp.RANK_RTOL, tol, MAX_ITER, qn
    )
    if sized(status, "project_state"):
        names = ", ".join(lc.name for lc in model.loops)
        if status == -1:  # q or v left the finite numbers
            raise SimulationError(
                f"simulation stopped at t = {t:.6g} s: the state is not finite (loops {names})", t, "", None
            )
        raise SimulationError(
            f"simulation stopped at t = {t:.6g} s: the loops ({names}) could not be closed by "
            f"projection (error {err:.3e} after {MAX_ITER} Gauss-Newton steps); a smaller dt may help",
            t,
            "",
            None,
        )
    return err0


def initial_state(model, q0, v0, project, tol):
    """The initial state, projected onto the loops when ``project``."""
    q, v = q0.copy(), v0.copy()
    if project:
        cp = lp.compiled(model)
        try:
            close_loops(model, cp, q, v, tol, 0.0)
        except SimulationError:
            raise InputError(
                f"q0 is too far from closing the loops of '{model.name}' "
                f"({', '.join(lc.name for lc in model.loops)}); start from a configuration that "
                "closes them (denoc_bridge.constraints.loops.project_configuration)"
            ) from None
    return q, v


class LoopSystem(TreeSystem):
    """A tree with loop closures as a simulation system (:class:`.common.System`): the
    constrained accelerations (:func:`denoc_bridge.constraints.loops.fast_lagrange`, compiled:
    :class:`denoc_bridge.core.systems.LoopSystem`), the tree's configuration maps and the
    projection after each step."""

    loops = True

    def __init__(self, model, forces, passive, opts):
        super().__init__(model, forces, passive)  # (joint limits: on trees only)
        self.alpha, self.beta, self.project, self.tol = opts
        self.cp = lp.compiled(model)
        self._drift = np.zeros(1)  # the compiled run's and the Python stages' largest error before a projection

    def accelerations(self, t, n, q, v, out):
        """(status, tau): ``out`` = the constrained accelerations at (t, q, v); status -1 when
        they cannot be computed (not finite, singular)."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return -1, np.zeros(self.nv)
        tau = self._total(t, n, q, v)
        try:
            out[:] = lp.fast_lagrange(
                self.model, q, v, self.total.copy(), None, (self.alpha, self.beta), fext=self.forces.fext_at(t, q, v)
            )[0]
        except InputError:
            return -1, tau
        return (0 if np.all(np.isfinite(out)) else -1), tau

    def saved_accelerations(self, t, Q, V, TAU):
        A = np.empty((len(t), self.nv))
        for i in range(len(t)):
            total = _applied(self.model, Q[i], V[i], TAU[i], self.K, self.D, self.q_rest, self.use_passive)
            A[i] = lp.fast_lagrange(
                self.model, Q[i], V[i], total, None, (self.alpha, self.beta), fext=self.forces.fext_at(t[i], Q[i], V[i])
            )[0]
        return A

    def kernel_system(self):
        """The compiled form (:class:`denoc_bridge.core.systems.LoopSystem`, run by
        ``denoc_bridge/core/run.pyx``)."""
        cp = self.cp
        opts = np.array([self.alpha, self.beta, lp.RANK_RTOL, self.tol, 1.0 if self.project else 0.0, MAX_ITER])
        return ks.LoopSystem(self.model._kt, cp.work, cp.pi, cp.pf, cp.sb, opts, self._drift)

    def end_step(self, q, v, t):
        if self.project:
            self._drift[0] = max(self._drift[0], close_loops(self.model, self.cp, q, v, self.tol, t))

    def error(self, q):
        return float(np.abs(lp.loop_residual(self.model, q)).max()) if self.cp.m else 0.0

    @property
    def drift(self):
        return float(self._drift[0]) if self.project else float("nan")

    def failure(self, status, t, stage_arrays, traj):
        return failure(self.model, status, t, traj)

    def ode(self, t, n, q, v, qdot, a):  # pragma: no cover - options() refuses the adaptive methods
        raise InputError("a model with loop closures is simulated by rk4 or euler")


def failure(model, status, t, traj):
    """The SimulationError of a run of a model with loops that stopped with ``status``."""
    if status == -3:
        return SimulationError(
            f"simulation stopped at t = {t:.6g} s: the loop constraints became singular "
            "(C M^-1 C^T is not positive definite): the mechanism reached a singular position",
            t,
            "",
            traj,
        )
    if status == -4:
        return SimulationError(
            f"simulation stopped at t = {t:.6g} s: the loops could not be closed by projection "
            f"in {MAX_ITER} Gauss-Newton steps; a smaller dt may help",
            t,
            "",
            traj,
        )
    return run_error(model, status, t, [], traj)


def _applied(model, q, v, tau, K, D, q_rest, use_passive):
    total = passive_forces_into(model._kt, K, D, q_rest, use_passive, q, v, np.empty(model.nv), np.empty(model.nv))
    total += tau
    return total
