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
(``constraint_drift``).  RK4 with tau as None, a constant or a table runs compiled
(:func:`denoc_bridge.kernels.loops.rk4_loop_run`); semi-implicit Euler and callables
``tau(t, q, v)`` / ``f_ext(t, q, v)`` run stage by stage from Python.
"""

from __future__ import annotations

import time
import warnings

import numpy as np

from denoc_bridge.constraints import loops as lp
from denoc_bridge.errors import InputError, SimulationError
from denoc_bridge.kernels import configuration as kc
from denoc_bridge.kernels import integrators as ki_
from denoc_bridge.kernels import loops as kl
from denoc_bridge.kernels import tables as T
from denoc_bridge.simulation.common import (
    Run,
    actuation_table,
    count_saves,
    make_trajectory,
    passive_arrays,
    run_error,
    saved_steps,
)

STABILIZATIONS = ("projection", "baumgarte", "none")
MAX_ITER = 20


def options(model, method, dynamics, stabilization, baumgarte, constraint_tol):
    """(alpha, beta, project, tol) after checking the options for a model with loops."""
    if method not in ("rk4", "euler"):
        raise InputError(
            f"'{model.name}' has loop closures: simulate it with method='rk4' or 'euler' (the "
            f"projection onto the loops after each step does not fit the adaptive {method})"
        )
    if dynamics != "recursive":
        raise InputError(
            f"'{model.name}' has loop closures: only dynamics='recursive' (Lagrange multipliers on the "
            "O(n) forward dynamics) simulates them"
        )
    if stabilization not in STABILIZATIONS:
        raise InputError(f"stabilization must be one of {', '.join(STABILIZATIONS)}, got {stabilization!r}")
    try:
        alpha, beta = (float(x) for x in baumgarte)
    except (TypeError, ValueError):
        raise InputError(f"baumgarte must be two numbers (alpha, beta) in 1/s, got {baumgarte!r}") from None
    if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 0 and beta >= 0):
        raise InputError(f"baumgarte = ({alpha}, {beta}): alpha and beta must be finite and >= 0")
    tol = float(constraint_tol)
    if not (np.isfinite(tol) and tol > 0):
        raise InputError(f"constraint_tol must be a positive number, got {constraint_tol!r}")
    if stabilization != "baumgarte":
        alpha = beta = 0.0
    return alpha, beta, stabilization == "projection", tol


def _project(model, cp, q, v, tol, t):
    """Project (q, v) in place; returns the error before."""
    qn = np.empty(model.nq)
    status, err, err0 = kl.project(
        model._kt, cp.kt0, cp.work, cp.pi, cp.pf, cp.sb, q, v, lp.RANK_RTOL, tol, MAX_ITER, qn
    )
    if status:
        names = ", ".join(lc.name for lc in model.loops)
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
            _project(model, cp, q, v, tol, 0.0)
        except SimulationError:
            raise InputError(
                f"q0 is too far from closing the loops of '{model.name}' "
                f"({', '.join(lc.name for lc in model.loops)}); start from a configuration that "
                "closes them (denoc_bridge.constraints.loops.project_configuration)"
            ) from None
    return q, v


def run(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, opts):
    """The fixed-step run of a model with loops; returns the Trajectory."""

    alpha, beta, project, tol = opts
    q, v = initial_state(model, q0, v0, project, tol)
    cp = lp.compiled(model)
    K, D, q_rest, use_passive = passive_arrays(model, passive)
    nq, nv = model.nq, model.nv
    n_saves = count_saves(n_steps, stride)
    Q, V, A, E = np.empty((n_saves, nq)), np.empty((n_saves, nv)), np.empty((n_saves, nv)), np.empty(n_saves)
    scratch = np.zeros((kl.LOOP_SCRATCH_ROWS, max(nq, nv, 1)))
    compiled = method == "rk4" and not forces.python_loop
    stepper = _compiled_steps if compiled else _python_steps
    args = (alpha, beta, project, tol, K, D, q_rest, use_passive)
    step, saved, status, chunk = 0, 0, 0, 8
    with Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run_:
        while step < n_steps:
            n = min(chunk, n_steps - step)
            t0 = time.perf_counter()
            done, status, s = stepper(
                model, cp, q, v, step, n, dt, forces, method, stride, saved, Q, V, A, E, scratch, args
            )
            step += done
            saved += s
            if status:
                break
            chunk = max(1, min(4 * chunk, int(chunk * 0.2 / max(time.perf_counter() - t0, 1e-6))))
            run_.update(step)
    completed = not status and not run_.interrupted
    if completed:  # the final state
        tau = forces.tau_at(step * dt, q, v, step)
        total = _applied(model, q, v, tau, K, D, q_rest, use_passive)
        a, _, _ = lp.fast_lagrange(model, q, v, total, None, (alpha, beta), fext=forces.fext_at(step * dt, q, v))
        Q[saved], V[saved], A[saved], E[saved] = q, v, a, np.abs(lp.loop_residual(model, q)).max()
        saved += 1
    steps = saved_steps(saved, stride, step if completed else None)
    t = steps * dt

    TAU = actuation_table(model, forces, steps)
    state = "interrupted" if run_.interrupted else ("failed" if status else "completed")
    message = f"interrupted by the user at t = {step * dt:.6g} s" if run_.interrupted else ""
    traj = make_trajectory(
        model,
        t,
        Q[:saved],
        V[:saved],
        A[:saved],
        TAU,
        forces,
        method,
        dt,
        run_.wall,
        step,
        (4 if method == "rk4" else 1) * step,
        state,
        message,
    )
    traj.constraint_error = E[:saved].copy()
    traj.constraint_drift = float(scratch[kl.DRIFT_ROW, 0]) if project else float("nan")
    if status:
        raise _failure(model, status, step * dt, traj)
    if run_.interrupted:
        warnings.warn(message, stacklevel=3)
    return traj


def _failure(model, status, t, traj):

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


def _compiled_steps(model, cp, q, v, step, n, dt, forces, method, stride, saved, Q, V, A, E, scratch, args):
    alpha, beta, project, tol, K, D, q_rest, use_passive = args
    opts = np.array([alpha, beta, lp.RANK_RTOL, tol, 1.0 if project else 0.0, MAX_ITER])
    return kl.rk4_loop_run(
        model._kt,
        cp.kt0,
        cp.work,
        cp.pi,
        cp.pf,
        cp.sb,
        q,
        v,
        step,
        n,
        dt,
        forces.mode,
        forces.table,
        forces.fext,
        K,
        D,
        q_rest,
        use_passive,
        stride,
        saved,
        Q,
        V,
        A,
        E,
        scratch,
        opts,
    )


def _applied(model, q, v, tau, K, D, q_rest, use_passive):
    d, total = np.empty(model.nv), np.empty(model.nv)
    ki_.passive_forces(model._kt.view(T.INT), q, v, K, D, q_rest, use_passive, d, total)
    total += tau
    return total


def _python_steps(model, cp, q, v, step0, n, dt, forces, method, stride, saved0, Q, V, A, E, scratch, args):
    """n steps from Python (euler, or callables tau / f_ext), same interface as the kernel."""
    alpha, beta, project, tol, K, D, q_rest, use_passive = args
    ki = model._kt.view(T.INT)
    saved = 0

    def accel(t, k, qs, vs):
        if not (np.all(np.isfinite(qs)) and np.all(np.isfinite(vs))):
            return None
        total = _applied(model, qs, vs, forces.tau_at(t, qs, vs, k), K, D, q_rest, use_passive)
        try:
            a = lp.fast_lagrange(model, qs, vs, total, None, (alpha, beta), fext=forces.fext_at(t, qs, vs))[0]
        except InputError:
            return None
        return a

    for m in range(n):
        k = step0 + m
        t = k * dt
        a = accel(t, k, q, v)
        if a is None:
            return m, -1, saved
        if k % stride == 0:
            Q[saved0 + saved], V[saved0 + saved], A[saved0 + saved] = q, v, a
            E[saved0 + saved] = np.abs(cp.phi).max() if cp.m else 0.0
            saved += 1
        if method == "euler":
            v += dt * a
            kc.integrate(ki, q, dt * v, q)
        else:
            kx, kv = [v.copy()], [a]
            for c in (0.5, 0.5, 1.0):
                xi = c * dt * kx[-1]
                qs = np.empty_like(q)
                kc.integrate(ki, q, xi, qs)
                vs = v + c * dt * kv[-1]
                kxs = np.empty_like(v)
                kc.dexpinv(ki, xi, vs, kxs)
                a_s = accel(t + c * dt, k, qs, vs)
                if a_s is None:
                    return m, -1, saved
                kx.append(kxs)
                kv.append(a_s)
            xi = dt / 6.0 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3])
            v += dt / 6.0 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
            kc.integrate(ki, q, xi.copy(), q)
        if project:
            err0 = _project(model, cp, q, v, tol, t + dt)
            scratch[kl.DRIFT_ROW, 0] = max(scratch[kl.DRIFT_ROW, 0], err0)
    return n, 0, saved
