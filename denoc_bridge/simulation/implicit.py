"""Implicit fixed-step integrators for stiff trees: backward Euler and a two-stage SDIRK, Newton
on the stage equations with the Jacobian from the analytical derivatives.

Both are diagonally implicit Runge-Kutta methods in the Runge-Kutta-Munthe-Kaas form of the
explicit steppers (:func:`.runners.run_python`): a configuration is ``q0 (+) xi`` with xi in
the tangent space at the step's start q0, and each stage solves, for its velocity V,

    R(V) = V - v_b - h g a(q0 (+) Xi, V) = 0,   Xi = xi_b + h g dexpinv(Xi, V)

(``v_b``, ``xi_b`` the known part of the stage, ``g`` the diagonal coefficient).  Newton's
matrix is ``J = 1 - h g da/dv - (h g)^2 da/dq`` with ``da/dx = dqdd/dx + M^-1 dtau_passive/dx``
(the springs ``-K (q (-) q_rest)`` and dampers ``-D v`` of the model): dense from
:func:`denoc_bridge.forward_dynamics_derivatives` up to ``DENSE_MAX_DOF`` DOFs, beyond that a
``scipy.sparse.linalg.LinearOperator`` applying J by one :func:`denoc_bridge.forward_dynamics_jvp`
(O(n)) solved by GMRES, preconditioned by ``P^-1 M`` with
``P = M + h g D + (h g)^2 (K + G)``: the dampers' and springs' part of J and the geometric
(tension) stiffness ``G = sum_k J_k^T X_k J_k`` of the loads the links carry (weights and
inertial forces, :func:`geometric_stiffness`), which makes a long hanging chain stiff.  ``P`` is
the GIM of the model with the armature ``h g D + (h g)^2 K`` and the extra rotational link
inertias ``(h g)^2 X_k``, so ``P^-1 M x`` is two O(n) recursions (inverse dynamics at rest,
then the articulated solve), and GMRES is left the Coriolis terms and what ``G`` misses: 2-5
iterations per Newton step on a 10,000-link chain at 100 times RK4's stability limit
(benchmarks/implicit_large.py; the dampers-and-springs preconditioner alone needed hundreds).
GMRES stops at ``gmres_rtol`` or a tenth of Newton's tolerance, whichever is larger.

The Jacobian takes the tangent map of ``q0 (+) Xi`` as ``h g`` times the identity (exact on vector spaces; on Lie groups Newton's matrix is then approximate, which
changes the number of iterations, not the solution).

* ``"implicit-euler"``: one stage, ``g = 1`` (first order, L-stable, dissipative);
* ``"sdirk2"``: two stages, ``g = 1 - 1/sqrt(2)`` (Alexander's L-stable second-order SDIRK,
  stiffly accurate: the step ends on the second stage).

Newton's steps are damped by a backtracking line search on the residual (large steps of a
falling chain start far from the solution).

They cover trees (models without mimic joints or loop closures), with the actuation, the
external wrenches and the joint springs and dampers of :func:`denoc_bridge.simulate`.  A
controller ``tau(t, q, v)`` and wrenches ``f_ext(t, q, v)`` are implicit too: they are evaluated at
each Newton iterate, and their derivatives in (q, v) enter Newton's matrix by forward differences
(``FD_STEP``; dense: 2 nv calls per Newton step, GMRES: one per product), the wrenches through
the Jacobians (inverse dynamics with and without them), so that a stiff PD controller on a light
robot converges as the same springs and dampers do (tested; left out of the matrix, Newton
diverged there).  The joint limits hold as for the explicit methods: after each step
(:meth:`.tree.TreeSystem.end_step`, plastic stops), outside Newton's equations.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sl
import scipy.sparse.linalg as spla

from denoc_bridge.algorithms.dynamics import link_forces, shifted_mass_solver
from denoc_bridge.algorithms.kinematics import forward_kinematics
from denoc_bridge.core import tree as compiled
from denoc_bridge.dynamics import (
    forward_dynamics_derivatives,
    forward_dynamics_jvp,
    inverse_dynamics,
)
from denoc_bridge.spatial import internal_to_pin

#: up to this many DOFs Newton's matrix is formed and factorised (O(n^2) memory)
DENSE_MAX_DOF = 300
#: Newton stops when the update is below NEWTON_TOL (1 + |V|) in the max norm
NEWTON_TOL = 1e-10
NEWTON_MAX = 60
#: ... or when the residual is below RESIDUAL_TOL (1 + |V|) (the round-off of a long chain's JVP
#: keeps GMRES from going further)
RESIDUAL_TOL = 1e-9
#: a residual that no step decreases any more is converged when below STALL_TOL (1 + |V|)
STALL_TOL = 1e-6
#: halvings of a Newton step at most
LINE_SEARCH = 12
GAMMA_SDIRK2 = 1.0 - 1.0 / math.sqrt(2.0)
#: the forward-difference step of the derivatives of a controller tau(t, q, v) and of wrenches
#: f_ext(t, q, v) (user callables, for Newton's matrix: its accuracy sets the convergence rate, not
#: the solution)
FD_STEP = 1e-7
#: the GMRES preconditioner: "geometric" (springs, dampers and the gravity load's geometric
#: stiffness) or "passive" (springs and dampers only)
PRECONDITIONER = "geometric"


def geometric_stiffness(model, q: np.ndarray, v: np.ndarray | None = None, a: np.ndarray | None = None) -> np.ndarray:
    """The geometric (tension) stiffness of the loads the links carry, per link: (L, 3, 3)
    symmetric positive semi-definite rotational stiffnesses ``X_k`` in the link frames, such
    that ``sum_k J_k^T X_k J_k`` (``J_k`` the angular rows of link k's Jacobian) approximates
    the part of ``d tau_ID / dq`` that makes a long hanging chain stiff.

    Link k carries the load ``f_k = -m_k (a_ck - g)`` at its centre of mass (its weight and, given
    (v, a), its inertial force: :func:`~denoc_bridge.algorithms.dynamics.link_forces`) and, at
    each child joint c, the load ``F_c`` of the child's subtree (the sum of its ``f``).  A
    constant force F at the offset r from the joint has the energy ``-F . R r``; its Hessian in
    a small rotation of the link is ``(F . r) 1 - sym(F r^T)``.  Summed over the link's points,
    with the weights alone this is the Hessian of the potential energy of a planar chain exactly
    (its absolute angles are linear in q); the loads of the motion add the centripetal tension of
    a swinging chain.  The negative eigenvalues (links in compression) are dropped so that the
    shifted inertias stay positive."""
    R, p = forward_kinematics(model, q)
    L = model.n_links
    m = np.asarray(model.mass)
    c = p + np.einsum("kij,kj->ki", R, model.com)
    if v is None or a is None:
        f = m[:, None] * np.asarray(model.gravity)[None, :]
    else:
        f = -np.einsum("kij,kj->ki", R, link_forces(model, q, v, a))
    F = np.empty((L, 3))
    compiled.subtree_sums(model._kt, f, F)
    parent = np.asarray(model.parent)
    child = np.nonzero(parent >= 0)[0]
    H = np.zeros((L, 3, 3))
    for links, force, r in ((np.arange(L), f, c - p), (parent[child], F[child], p[child] - p[parent[child]])):
        Fr = force[:, :, None] * r[:, None, :]
        Hk = np.einsum("kii->k", Fr)[:, None, None] * np.eye(3) - 0.5 * (Fr + np.transpose(Fr, (0, 2, 1)))
        np.add.at(H, links, Hk)
    w, U = np.linalg.eigh(H)
    U = np.einsum("kij,kil->kjl", R, U)  # the eigenvectors in the link frames
    return np.einsum("kij,kj,klj->kil", U, np.maximum(w, 0.0), U)


class _Stage:
    """Newton on one stage of a tree system (:class:`.tree.TreeSystem`)."""

    def __init__(self, system, dense: bool, gmres_rtol: float):
        self.s = system
        self.model = system.model
        self.nv, self.nq = system.nv, system.nq
        self.dense = dense
        self.gmres_rtol = gmres_rtol
        self.K = system.K if system.use_passive else np.zeros(self.nv)
        self.D = system.D if system.use_passive else np.zeros(self.nv)
        self.zero = np.zeros(self.nv)
        self.newton_iterations = 0
        self.linear_iterations = 0
        self.max_linear_iterations = 0

    def preconditioner(self, q, hg, V=None, a=None):
        """``x -> P^-1 M x`` with ``P = M + hg D + hg^2 (K + G)``, ``G = sum_k J_k^T X_k J_k`` from
        :func:`geometric_stiffness` at (q, V, a) (zero if PRECONDITIONER is ``"passive"``): two O(n)
        calls per product (:func:`~denoc_bridge.algorithms.dynamics.shifted_mass_solver`), the
        articulated solve of the model with the armature ``hg D + hg^2 K`` and the links' extra
        rotational inertias ``hg^2 X_k``."""
        L = self.model.n_links
        geometric = PRECONDITIONER == "geometric"
        X = hg * hg * geometric_stiffness(self.model, q, V, a) if geometric else np.zeros((L, 3, 3))
        solve = shifted_mass_solver(self.model, q, hg * self.D + hg * hg * self.K, X)
        return spla.LinearOperator((self.nv, self.nv), matvec=solve, dtype=float)

    def acceleration(self, t, n, q, V, out):
        st, _ = self.s.accelerations(t, n, q, V, out)
        return st

    def _evaluate(self, t, n, q0, xi_b, v_b, hg, Xi, V):
        """(status, Xi, q, a, R) at the stage velocity V: Xi updated by one fixed-point step of
        ``Xi = xi_b + hg dexpinv(Xi, V)``, the accelerations and the residual."""
        dxi = np.empty(self.nv)
        self.s.dexpinv(Xi, V, dxi)
        Xi = xi_b + hg * dxi
        q = np.empty(self.nq)
        self.s.integrate(q0, Xi, q)
        a = np.empty(self.nv)
        st = self.acceleration(t, n, q, V, a)
        return st, Xi, q, a, V - v_b - hg * a

    def _callable_forces(self, t, n, q, V, q_base, rest):
        """The generalized forces of the run's callables at (q, V): the controller
        ``tau(t, q, v)`` and the wrenches ``f_ext(t, q, v)`` mapped by the Jacobians at
        ``q_base`` (their dependence on q at fixed wrenches is in the analytical derivatives);
        ``rest`` = inverse dynamics at (q_base, 0, 0) without wrenches."""
        f = self.s.forces
        out = np.zeros(self.nv)
        if f.tau_fn is not None:
            out += f.tau_at(t, q, V, n)
        if f.fext_fn is not None:
            fx = _pin_fext(f.fext_at(t, q, V))
            if fx is not None:
                out += rest - inverse_dynamics(self.model, q_base, self.zero, self.zero, f_ext=fx)
        return out

    def _callables_change(self, t, n, q, V):
        """``(qe, Ve) -> g(qe, Ve) - g(q, V)``: the change of the callables' forces g
        (:meth:`_callable_forces`, the wrenches mapped by the Jacobians at q) from (q, V), or
        None without callables."""
        f = self.s.forces
        if f.tau_fn is None and f.fext_fn is None:
            return None
        rest = inverse_dynamics(self.model, q, self.zero, self.zero) if f.fext_fn is not None else None
        g0 = self._callable_forces(t, n, q, V, q, rest)
        return lambda qe, Ve: self._callable_forces(t, n, qe, Ve, q, rest) - g0

    def _callable_jacobians(self, t, n, q, V):
        """``(d g/dq, d g/dV)`` of the callables' forces g (:meth:`_callable_forces`) by forward
        differences on the manifold (q moved along its tangent directions), or None without
        callables: a controller or wrenches that depend on the state enter Newton's matrix, so
        that a stiff controller (a PD on a light robot) converges as the springs do."""
        change = self._callables_change(t, n, q, V)
        if change is None:
            return None
        nv = self.nv
        Cq, Cv = np.empty((nv, nv)), np.empty((nv, nv))
        dx, qe = np.zeros(nv), np.empty(self.nq)
        for i in range(nv):
            h = FD_STEP * (1.0 + abs(V[i]))
            dx[i] = h
            Cv[:, i] = change(q, V + dx) / h
            dx[i] = FD_STEP
            self.s.integrate(q, dx, qe)
            Cq[:, i] = change(qe, V) / FD_STEP
            dx[i] = 0.0
        return Cq, Cv

    def _newton_step(self, t, n, q, V, a, R, hg):
        """Newton's update: ``J delta = -R`` (dense LU, or GMRES on the JVP operator)."""
        nv = self.nv
        tau = self.s.total.copy()  # actuation + springs + dampers at (q, V)
        fx = _pin_fext(self.s.forces.fext_at(t, q, V))
        if self.dense:
            ddq, ddv, Minv = forward_dynamics_derivatives(self.model, q, V, tau, fx)
            J = np.eye(nv) - hg * (ddv - Minv * self.D) - hg * hg * (ddq - Minv * self.K)
            C = self._callable_jacobians(t, n, q, V)
            if C is not None:
                J -= Minv @ (hg * C[1] + hg * hg * C[0])
            return 0, -sl.solve(J, R, check_finite=False)
        if not np.any(R):
            return 0, np.zeros(nv)
        change = self._callables_change(t, n, q, V)
        qe = np.empty(self.nq)

        def apply(x):
            x = np.ascontiguousarray(x, dtype=float).ravel()
            dq = hg * x
            dtau = -self.K * dq - self.D * x
            if change is not None:  # the callables' directional derivative by a forward difference
                h = FD_STEP / max(np.abs(x).max(), 1e-300)
                self.s.integrate(q, h * dq, qe)
                dtau += change(qe, V + h * x) / h
            return x - hg * forward_dynamics_jvp(self.model, q, V, tau, dq, x, dtau, f_ext=fx)

        op = spla.LinearOperator((nv, nv), matvec=apply, dtype=float)
        count = [0]

        def cb(_):
            count[0] += 1

        # below a tenth of Newton's tolerance the JVP's round-off stalls GMRES: no need to go further
        floor = 0.1 * RESIDUAL_TOL * (1.0 + np.abs(V).max())
        delta, info = spla.gmres(
            op,
            -R,
            rtol=self.gmres_rtol,
            atol=floor,
            restart=100,
            maxiter=5,
            M=self.preconditioner(q, hg, V, a),
            callback=cb,
            callback_type="pr_norm",
        )
        self.linear_iterations += count[0]
        self.max_linear_iterations = max(self.max_linear_iterations, count[0])
        return (-1 if info < 0 else 0), delta

    def solve(self, t, n, q0, xi_b, v_b, hg, V):
        """V (in place) and Xi of the stage by Newton with a backtracking line search on |R|
        (the step is halved until the residual decreases, up to LINE_SEARCH times); returns
        (status, Xi, a): 0, k + 1 (singular inertia), -1 (not finite), -2 (no convergence)."""
        Xi = xi_b + hg * V
        st, Xi, q, a, R = self._evaluate(t, n, q0, xi_b, v_b, hg, Xi, V)
        if st:
            return st, Xi, a
        for _ in range(NEWTON_MAX):
            if np.abs(R).max() <= RESIDUAL_TOL * (1.0 + np.abs(V).max()):
                return 0, Xi, a
            st, delta = self._newton_step(t, n, q, V, a, R, hg)
            if st:
                return st, Xi, a
            self.newton_iterations += 1
            if not np.all(np.isfinite(delta)):
                return -1, Xi, a
            small = np.abs(delta).max() <= NEWTON_TOL * (1.0 + np.abs(V).max())
            r0, alpha = np.linalg.norm(R), 1.0  # the norm GMRES minimises: its steps descend
            for _ in range(LINE_SEARCH):
                trial = V + alpha * delta
                st, Xi_t, q_t, a_t, R_t = self._evaluate(t, n, q0, xi_b, v_b, hg, Xi, trial)
                if small or (st == 0 and np.linalg.norm(R_t) < r0):
                    break
                alpha *= 0.5
            else:  # no decrease: converged to the round-off of the residual, or failed
                stalled = st == 0 and np.abs(R).max() <= STALL_TOL * (1.0 + np.abs(V).max())
                return (0 if stalled else (st or -2)), Xi, a
            if st:
                return st, Xi, a
            V[:], Xi, q, a, R = trial, Xi_t, q_t, a_t, R_t
            if small:
                return 0, Xi, a
        return -2, Xi, a


def _pin_fext(fext):
    """The run's wrenches (internal order) in the public API's convention, or None."""
    return None if fext.shape[0] == 0 else internal_to_pin(fext)


class ImplicitSteps:
    """The implicit methods one step at a time, for :func:`.runners.run_python` (the one run from
    Python of the fixed-step methods: saving, streaming, progress and failures are its own):
    each step solves its stages by Newton (:class:`_Stage`) and advances q and v in place; the
    run's accelerations are only needed at the saved states (``needs_start`` False)."""

    needs_start = False

    def __init__(self, system, method, dt, jacobian="auto", gmres_rtol=1e-6):
        self.system, self.method, self.dt = system, method, dt
        self.dense = system.nv <= DENSE_MAX_DOF if jacobian == "auto" else jacobian == "dense"
        self.stage = _Stage(system, self.dense, gmres_rtol)
        self.g = 1.0 if method == "implicit-euler" else GAMMA_SDIRK2
        self.zero = np.zeros(system.nv)

    def step(self, t, step, q, v, a0):
        """One step from (q, v) at t; returns None, or the failure ``(None, t, message)``."""
        dt, g, stage = self.dt, self.g, self.stage
        hg = g * dt
        V1 = v.copy()
        st, Xi1, a1 = stage.solve(t + hg, step, q, self.zero, v, hg, V1)
        if st == 0 and self.method == "sdirk2":
            dxi1 = np.empty(self.system.nv)
            self.system.dexpinv(Xi1, V1, dxi1)
            xi_b = (1.0 - g) * dt * dxi1
            v_b = v + (1.0 - g) * dt * a1
            V2 = V1.copy()
            st, Xi1, a1 = stage.solve(t + dt, step, q, xi_b, v_b, hg, V2)
            V1 = V2
        if st:
            detail = (
                "Newton's iterations did not converge"
                if st == -2
                else "the implicit step failed (a state that is not finite or a singular inertia)"
            )
            return (None, t, f"simulation stopped at t = {t:.6g} s: {detail} with dt = {dt:g}; try a smaller dt")
        self.system.integrate(q, Xi1, q)
        v[:] = V1
        return None

    def annotate(self, traj):
        """Newton's and GMRES's iteration counts of the run in ``traj.solver_stats``."""
        traj.solver_stats.update(
            newton_iterations=self.stage.newton_iterations,
            linear_iterations=self.stage.linear_iterations,
            max_linear_iterations=self.stage.max_linear_iterations,
            jacobian="dense" if self.dense else "gmres",
        )
