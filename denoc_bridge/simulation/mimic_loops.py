"""Simulation of a :class:`~denoc_bridge.MimicModel` whose tree has loop closures (called by
:func:`denoc_bridge.simulate`).

The state is the reduced (q, v).  Each stage's accelerations come from the stacked rows
[K; C] solved on the tree (:func:`denoc_bridge.constraints.mimic_loops.forward_dynamics`,
``tau + G^T tau_passive`` as :class:`~denoc_bridge.simulation.mimic.MimicSystem`), the
configuration maps are the MimicSystem's (the tree's step restricted to the mimic relations).
``stabilization`` as for a model with loops (:mod:`denoc_bridge.simulation.loops`):
``"projection"`` (default) moves the state back onto the loops after every step by the
smallest corrections in the kinetic-energy metric of the coupled system
(:func:`~denoc_bridge.constraints.mimic_loops.kinetic_projection`), ``"baumgarte"``
stabilises the loop rows, ``"none"`` lets them drift.  The trajectory carries
``constraint_error`` (the loops' error at each saved state) and ``constraint_drift`` (the
largest error one step left before its projection).  RK4 and Euler, stage by stage from Python
(no compiled run).
"""

from __future__ import annotations

import warnings

import numpy as np

from denoc_bridge.constraints import mimic_loops as ml
from denoc_bridge.errors import InputError, SimulationError, SingularInertiaError
from denoc_bridge.kernels import integrators as ki_
from denoc_bridge.simulation.common import Run, make_trajectory, run_error, saved_steps
from denoc_bridge.simulation.mimic import MimicSystem


class MimicLoopSystem(MimicSystem):
    """A :class:`MimicSystem` whose accelerations are those of the stacked mimic and loop rows."""

    def __init__(self, model, forces, passive: bool, baumgarte=(0.0, 0.0)):
        super().__init__(model, forces, passive)
        self.baumgarte = baumgarte

    def _a(self, t, q, v, tau, out):
        m = self.model
        qf, vf = m.expand(q, v)
        ki_.passive_forces(self.ki, qf, vf, self.K, self.D, self.q_rest, self.use_passive, self.d, self.total)
        try:
            out[:] = ml.forward_dynamics(
                m, q, v, tau + m.reduce_forces(self.total), self.forces.fext_pin_at(t, q, v), baumgarte=self.baumgarte
            )
        except SingularInertiaError as exc:
            return 1 + self.tree.joint_names.index(exc.joint)
        except InputError:
            return -1
        return 0 if np.all(np.isfinite(out)) else -1

    def compiled(self, method, dt, stride):  # pragma: no cover - never asked: run() below steps from Python
        raise NotImplementedError("a MimicModel with loop closures is simulated stage by stage from Python")


def _project(model, q, v, tol, t):
    """Project (q, v) in place onto the loops; returns the error before."""
    try:
        qn, vn, err0, _ = ml.kinetic_projection(model, q, v, tol)
    except (InputError, np.linalg.LinAlgError, SingularInertiaError):
        raise SimulationError(
            f"simulation stopped at t = {t:.6g} s: the loops ({', '.join(lc.name for lc in model.loops)}) could "
            "not be closed by projection; a smaller dt may help",
            t,
            "",
            None,
        ) from None
    q[:], v[:] = qn, vn
    return err0


def run(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, opts):
    """The fixed-step run (rk4 or euler) with the loop options ``opts`` of
    :func:`denoc_bridge.simulation.loops.options`; returns the Trajectory."""
    alpha, beta, project, tol = opts
    system = MimicLoopSystem(model, forces, passive, (alpha, beta))
    nq, nv = model.nq, model.nv
    q, v = q0.copy(), v0.copy()
    if project:
        try:
            _project(model, q, v, tol, 0.0)
        except SimulationError:
            raise InputError(
                f"q0 is too far from closing the loops of '{model.name}' ({', '.join(lc.name for lc in model.loops)}); "
                "start from a configuration that closes them (db.loops.project_configuration)"
            ) from None
    _, _, phi, J, _ = ml.stacked_rows(model, q)
    ml.check_coupling(model, J[model.n_constraints :], phi[model.n_constraints :])  # a locked loop: named
    f = system.accelerations
    Q, V, A, TAU, E = [], [], [], [], []
    xi, qs, vs = np.empty(nv), np.empty(nq), np.empty(nv)
    kx = [np.empty(nv) for _ in range(4)]
    kv = [np.empty(nv) for _ in range(4)]
    drift, failed, step = 0.0, None, 0

    def error(x):
        return float(np.abs(ml.loop_residual(model, x)).max())

    with Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run_:
        for step in range(n_steps):
            t = step * dt
            st, tau = f(t, step, q, v, kv[0])
            if st:
                failed = (st, t, [("q", q, "q"), ("v", v, "v"), ("a", kv[0], "v")])
                break
            if step % stride == 0:
                Q.append(q.copy()), V.append(v.copy()), A.append(kv[0].copy()), TAU.append(np.array(tau))
                E.append(error(q))
            if method == "euler":
                v += dt * kv[0]
                system.integrate(q, dt * v, q)
            else:
                kx[0][:] = v
                for i, (c, prev) in enumerate(((0.5, 0), (0.5, 1), (1.0, 2))):
                    xi[:] = c * dt * kx[prev]
                    system.integrate(q, xi, qs)
                    vs[:] = v + c * dt * kv[prev]
                    system.dexpinv(xi, vs, kx[i + 1])
                    st, _ = f(t + c * dt, step, qs, vs, kv[i + 1])
                    if st:
                        failed = (st, t, [("q", qs, "q"), ("v", vs, "v"), ("a", kv[i + 1], "v")])
                        break
                if failed:
                    break
                xi[:] = dt / 6.0 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3])
                v += dt / 6.0 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
                system.integrate(q, xi, q)
            if project:
                try:
                    drift = max(drift, _project(model, q, v, tol, t + dt))
                except SimulationError as exc:
                    failed = (None, t + dt, str(exc))
                    break
            if step % 100 == 0:
                run_.update(step)
        else:
            step = n_steps
    final = None
    if not failed and not run_.interrupted:  # the final state
        a_end = np.empty(nv)
        st, tau = f(n_steps * dt, n_steps, q, v, a_end)
        if not st:
            Q.append(q.copy()), V.append(v.copy()), A.append(a_end), TAU.append(np.array(tau)), E.append(error(q))
            final = n_steps
    n = len(Q)
    t_saved = saved_steps(n, stride, final) * dt
    state = "interrupted" if run_.interrupted else ("failed" if failed else "completed")
    message = f"interrupted by the user at t = {step * dt:.6g} s" if run_.interrupted else ""
    traj = make_trajectory(
        model,
        t_saved,
        np.array(Q).reshape(n, nq),
        np.array(V).reshape(n, nv),
        np.array(A).reshape(n, nv),
        np.array(TAU).reshape(n, nv),
        forces,
        method,
        dt,
        run_.wall,
        step,
        system.evals,
        state,
        message,
    )
    traj.constraint_error = np.array(E)
    traj.constraint_drift = drift if project else float("nan")
    if failed:
        st, t_bad, detail = failed
        if st is None:
            raise SimulationError(detail, t_bad, "", traj)
        raise run_error(model, st, t_bad, detail, traj)
    if run_.interrupted:
        warnings.warn(message, stacklevel=3)
    return traj
