"""The runs of a *system* (:class:`~denoc_bridge.simulation.common.System`: a tree, a MimicModel,
a tree with loop closures, both): the one compiled fixed-step run in chunks, the same steps
stage by stage from Python, and the adaptive methods of SciPy.  A system supplies the
accelerations, the configuration maps, its compiled form and, for loops, the projection after
each step."""

from __future__ import annotations

import math
import time
import warnings

import numpy as np

from denoc_bridge.core import run as core_run
from denoc_bridge.core import sized
from denoc_bridge.core import systems as cs_
from denoc_bridge.core.systems import Saves
from denoc_bridge.errors import SimulationError
from denoc_bridge.simulation.common import (
    Run,
    actuation_table,
    count_saves,
    least_chunk,
    make_trajectory,
    next_chunk,
    run_end,
    run_error,
    saved_steps,
)
from denoc_bridge.simulation.trajectory import Trajectory


def run_compiled(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system, stream=None):
    """The fixed-step methods as the one compiled run of ``system`` (the compiled core's,
    ``denoc_bridge/core/run.pyx``), in chunks sized for the progress bar and Ctrl-C.  With ``stream`` (a
    :class:`.stream.StateStream`) the saved rows go to its file a buffer at a time (the same
    calls, with at most a buffer's rows each) and the trajectory returned reads that file."""
    nq, nv = system.nq, system.nv
    n_saves = count_saves(n_steps, stride)
    rows = n_saves if stream is None else min(n_saves, stream.buffer_rows)
    Q, V, A = np.empty((rows, nq)), np.empty((rows, nv)), np.empty((rows, nv))
    E = np.zeros(rows if system.loops else 0)
    S = np.zeros(rows if system.stops else 0)
    out = Saves(Q, V, A, E, S)
    buf = _Buffer(stream, model, forces, dt, stride, Q, V, A, E, S)
    q, v = q0.copy(), v0.copy()
    ksys, fc = system.kernel_system(), system.forcing()
    s = np.zeros((cs_.RUN_ROWS, max(nq, nv, 1)))
    rk4 = method == "rk4"
    stepper = core_run.rk4_run if rk4 else core_run.euler_run  # the GIL released inside a chunk
    least = least_chunk(nv)  # the loop's own cost stays small beside the steps, whatever the clock says
    step, status, chunk = 0, 0, 8
    with Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run:
        while step < n_steps:
            n = min(chunk, n_steps - step)
            if stream is not None:
                if buf.filled == rows:
                    buf.flush()
                n = min(n, (rows - buf.filled) * stride)  # at most the rows left in the buffer
            t0 = time.perf_counter()
            done, status, k = stepper(ksys, fc, q, v, step, n, dt, stride, buf.filled, out, s)
            step += done
            buf.saved += k
            buf.filled += k
            if status:
                sized(status, "the compiled run")  # the compiled core's -2: lengths its caller sized
                break
            elapsed = time.perf_counter() - t0
            chunk = next_chunk(n, elapsed, least)  # n: the steps timed (a stream's buffer may cap them)
            run.update(step)
    interrupted, wall = run.interrupted, run.wall
    if status > 0 and system.singular_fallback:
        raise SingularTree(status)
    if stream is None:
        traj = finish_run(
            model, forces, method, dt, stride, step, q, v, Q, V, A, buf.saved, status, interrupted, wall, system, E, S
        )
    else:
        traj = finish_stream(buf, method, step, q, v, status, interrupted, wall, system, 4 if rk4 else 1)
    if status:
        raise system.failure(status, step * dt, failed_stage(s, rk4, q, v, nq, nv), traj)
    if interrupted:
        warnings.warn(traj.message, stacklevel=3)
    return traj


class _Buffer:
    """The rows of a compiled run not yet written to its stream: ``saved`` rows in all, the last
    ``filled`` of them in the buffer (Q, V, A, E, S).  :meth:`flush` writes the rows the stream
    does not hold yet, so that a Ctrl-C inside a flush writes no row twice."""

    def __init__(self, stream, model, forces, dt, stride, Q, V, A, E, S):
        self.stream, self.model, self.forces, self.dt, self.stride = stream, model, forces, dt, stride
        self.Q, self.V, self.A, self.E, self.S = Q, V, A, E, S
        self.saved = self.filled = 0

    def flush(self, final_step=None):
        """Write the buffer's rows (the last one the final state at ``final_step``, if given)."""
        first = self.saved - self.filled  # the run's index of the buffer's row 0
        skip = max(0, self.stream.rows - first)
        if skip < self.filled:
            steps = (first + np.arange(skip, self.filled)) * self.stride
            if final_step is not None:
                steps[-1] = final_step
            r = slice(skip, self.filled)
            self.stream.append(
                steps * self.dt,
                self.Q[r],
                self.V[r],
                self.A[r],
                actuation_table(self.model, self.forces, steps),
                self.E[r] if self.E.shape[0] else None,
                self.S[r] if self.S.shape[0] else None,
            )
        self.filled = 0


def _final_row(forces, system, dt, step, q, v, Q, V, A, E, S, r, final_stops=None):
    """The final state of a completed run into row r (with its acceleration, loop error, stops' energy)."""
    tau_end = forces.tau_at(step * dt, q, v, step)
    a_end = system.saved_accelerations([step * dt], q[None], v[None], tau_end[None])[0]
    Q[r], V[r], A[r] = q, v, a_end
    if system.loops:
        E[r] = system.error(q)
    if system.stops:
        S[r] = system.stop_energy() if final_stops is None else final_stops


def finish_stream(buf, method, step, q, v, status, interrupted, wall, system, evals_per_step):
    """The end of a streamed compiled run (completed, interrupted or failed): the final state when
    it completed, the last rows, the footer and the rename; the trajectory reads the file."""
    completed = not status and not interrupted
    if completed:
        if buf.filled == buf.Q.shape[0]:
            buf.flush()
        _final_row(buf.forces, system, buf.dt, step, q, v, buf.Q, buf.V, buf.A, buf.E, buf.S, buf.filled)
        buf.filled += 1
        buf.saved += 1
    buf.flush(step if completed else None)
    state, message = run_end(interrupted, bool(status), step * buf.dt)
    evals = evals_per_step * step + (1 if completed else 0)
    return stream_trajectory(
        buf.stream, buf.model, buf.forces, method, buf.dt, wall, step, evals, state, message, system
    )


def stream_trajectory(stream, model, forces, method, dt, wall, steps, evals, state, message, system):
    """Finish ``stream`` with the run's metadata and return its trajectory, read lazily."""
    f_ext = forces.fext_pin
    stream.finish(
        {
            "model": model.name,
            "joint_names": list(model.joint_names),
            "nq": model.nq,
            "nv": model.nv,
            "method": method,
            "dt": dt,
            "wall_time": wall,
            "n_steps": int(steps),
            "n_evaluations": int(evals),
            "status": state,
            "message": message,
            "passive": bool(forces.passive),
            "f_ext": None if f_ext is None else np.asarray(f_ext).tolist(),
            "constraint_drift": float(system.drift) if system.loops else float("nan"),
        }
    )
    return Trajectory.load(stream.target, model)


def failed_stage(s, rk4, q, v, nq, nv):
    """The arrays of the stage a compiled run stopped in, named (for :func:`.common.bad_entry`)."""
    if not rk4:
        return [("q", q, "q"), ("v", v, "v"), ("tau", s[cs_.TAU, :nv], "v"), ("a", s[cs_.KV, :nv], "v")]
    stage = [("q", s[cs_.QS, :nq], "q"), ("v", s[cs_.VS, :nv], "v"), ("tau", s[cs_.TAU, :nv], "v")]
    return stage + [("a", s[cs_.KV + i, :nv], "v") for i in range(4)]


class SingularTree(Exception):
    """A compiled run of a MimicModel met a singular articulated inertia of its tree alone
    (the Lagrange form needs it; the Python stages fall back to the dense form)."""


def finish_run(
    model,
    forces,
    method,
    dt,
    stride,
    step,
    q,
    v,
    Q,
    V,
    A,
    saved,
    status,
    interrupted,
    wall,
    system,
    E,
    S,
    final_stops=None,
):
    """The Trajectory of a compiled fixed-step run that stopped after ``step`` steps at (q, v) with
    ``saved`` rows of Q, V, A (and the loops' errors E) filled: the final state is appended when
    the run completed (also when stride does not divide the number of steps)."""
    completed = not status and not interrupted
    if completed:  # the final state
        _final_row(forces, system, dt, step, q, v, Q, V, A, E, S, saved, final_stops)
        saved += 1
    steps = saved_steps(saved, stride, step if completed else None)
    t = steps * dt
    TAU = actuation_table(model, forces, steps)
    state, message = run_end(interrupted, bool(status), step * dt)
    evals_per_step = 4 if method == "rk4" else 1
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
        wall,
        step,
        evals_per_step * step + (1 if state == "completed" else 0),
        state,
        message,
    )
    system.annotate(traj, E[:saved], S[:saved] if system.stops else None)
    return traj


class ExplicitSteps:
    """The explicit fixed-step methods (``"euler"``, ``"rk4"``) one step at a time from Python,
    on the manifold (Runge-Kutta-Munthe-Kaas): each step starts from the accelerations ``a0`` at
    (q, v) (``needs_start``) and advances q and v in place."""

    needs_start = True

    def __init__(self, system, method, dt):
        self.system, self.dt, self.rk4 = system, dt, method == "rk4"
        nq, nv = system.nq, system.nv
        self.xi, self.qs, self.vs = np.empty(nv), np.empty(nq), np.empty(nv)
        self.kx = [np.empty(nv) for _ in range(4)]
        self.kv = [np.empty(nv) for _ in range(4)]

    def step(self, t, step, q, v, a0):
        """One step from (q, v) at t; returns None, or the failure ``(status, t, named arrays)``."""
        system, dt = self.system, self.dt
        if not self.rk4:
            v += dt * a0
            system.integrate(q, dt * v, q)
            return None
        xi, qs, vs, kx, kv = self.xi, self.qs, self.vs, self.kx, self.kv
        kx[0][:], kv[0][:] = v, a0
        for i, (c, prev) in enumerate(((0.5, 0), (0.5, 1), (1.0, 2))):
            xi[:] = c * dt * kx[prev]
            system.integrate(q, xi, qs)
            vs[:] = v + c * dt * kv[prev]
            system.dexpinv(xi, vs, kx[i + 1])
            st, tau_s = system.accelerations(t + c * dt, step, qs, vs, kv[i + 1])
            if st:
                return (st, t, [("q", qs, "q"), ("v", vs, "v"), ("tau", tau_s, "v"), ("a", kv[i + 1], "v")])
        xi[:] = dt / 6.0 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3])
        v += dt / 6.0 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
        system.integrate(q, xi, q)
        return None

    def annotate(self, traj):
        """What the method adds to the trajectory (nothing)."""


def run_python(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system, stream=None, steps=None):
    """The fixed-step methods step by step from Python (a callable tau or f_ext, the dense
    forms, a system without a compiled form, the implicit methods): ``steps`` (default
    :class:`ExplicitSteps` of ``method``; :class:`.implicit.ImplicitSteps`) advances (q, v) by a
    step, each stage one call of ``system.accelerations``, and after each step
    ``system.end_step``.  With ``stream`` the saved rows go to its file a buffer at a time."""
    nq, nv = system.nq, system.nv
    f = system.accelerations
    steps = ExplicitSteps(system, method, dt) if steps is None else steps
    Q, V, A, TAU, E, S = [], [], [], [], [], []
    rows = _Rows(stream, stride, dt, nq, nv, (Q, V, A, TAU, E, S))
    q, v = q0.copy(), v0.copy()
    failed = None
    a0 = np.empty(nv)
    step = 0
    with Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run:
        for step in range(n_steps):
            t = step * dt
            save = step % stride == 0
            if save or steps.needs_start:
                st, tau = f(t, step, q, v, a0)
                if st:
                    failed = (st, t, [("q", q, "q"), ("v", v, "v"), ("tau", tau, "v"), ("a", a0, "v")])
                    break
            if save:
                Q.append(q.copy()), V.append(v.copy()), A.append(a0.copy()), TAU.append(np.array(tau))
                E.append(system.error(q))
                S.append(system.stop_energy())
                if stream is not None and len(Q) >= stream.buffer_rows:
                    rows.flush()
            failed = steps.step(t, step, q, v, a0)
            if failed:
                break
            try:
                system.end_step(q, v, t + dt)
            except SimulationError as exc:
                failed = (None, t + dt, str(exc))
                step += 1
                break
            if step % 100 == 0:
                run.update(step)
        else:
            step = n_steps
    interrupted, wall = run.interrupted, run.wall
    final = None
    if not failed and not interrupted:  # the final state
        t_end = n_steps * dt
        a_end = np.empty(nv)
        st, tau = f(t_end, n_steps, q, v, a_end)
        if not st:
            Q.append(q.copy()), V.append(v.copy()), A.append(a_end), TAU.append(np.array(tau))
            E.append(system.error(q))
            S.append(system.stop_energy())
            final = n_steps
    if stream is not None:
        rows.flush(final)
        state, message = run_end(interrupted, bool(failed), step * dt)
        traj = stream_trajectory(stream, model, forces, method, dt, wall, step, system.evals, state, message, system)
        steps.annotate(traj)
        return _python_end(system, failed, interrupted, message, traj)
    n = len(Q)

    def stack(x, width):
        return np.array(x).reshape(n, width)

    t = saved_steps(n, stride, final) * dt
    state, message = run_end(interrupted, bool(failed), step * dt)
    traj = make_trajectory(
        model,
        t,
        stack(Q, nq),
        stack(V, nv),
        stack(A, nv),
        stack(TAU, nv),
        forces,
        method,
        dt,
        wall,
        step,
        system.evals,
        state,
        message,
    )
    system.annotate(traj, E, S)
    steps.annotate(traj)
    return _python_end(system, failed, interrupted, message, traj)


def _python_end(system, failed, interrupted, message, traj):
    if failed:
        st, t_bad, detail = failed
        if st is None:
            raise SimulationError(detail, t_bad, "", traj)
        raise system.failure(st, t_bad, detail, traj)
    if interrupted:
        warnings.warn(message, stacklevel=4)
    return traj


class _Rows:
    """The saved rows of a run from Python (lists) not yet written to its stream: ``first`` is the
    run's index of the lists' first row.  :meth:`flush` writes the rows the stream does not hold
    yet (a Ctrl-C inside a flush writes no row twice) and empties the lists."""

    def __init__(self, stream, stride, dt, nq, nv, lists):
        self.stream, self.stride, self.dt, self.nq, self.nv, self.lists = stream, stride, dt, nq, nv, lists
        self.first = 0

    def flush(self, final_step=None):
        Q, V, A, TAU, E, S = self.lists
        n = len(Q)
        skip = max(0, self.stream.rows - self.first)
        if skip < n:
            steps = (self.first + np.arange(skip, n)) * self.stride
            if final_step is not None:
                steps[-1] = final_step
            stops = np.array(S[skip:n], dtype=float) if self.stream.stops else None
            self.stream.append(
                steps * self.dt,
                np.array(Q[skip:n]).reshape(-1, self.nq),
                np.array(V[skip:n]).reshape(-1, self.nv),
                np.array(A[skip:n]).reshape(-1, self.nv),
                np.array(TAU[skip:n]).reshape(-1, self.nv),
                np.array(E[skip:n], dtype=float) if self.stream.loops else None,
                stops,
            )
        self.first += n
        for x in self.lists:
            x.clear()


class _Bad(Exception):
    """A forward dynamics evaluation of an adaptive solver refused its state."""


def run_adaptive(model, q0, v0, t_final, dt, forces, method, passive, rtol, atol, max_step, progress, system):
    import scipy.integrate as si

    nq, nv = system.nq, system.nv
    qdot, a = np.empty(nq), np.empty(nv)

    def fun(t, y):
        q = np.ascontiguousarray(y[:nq])
        v = np.ascontiguousarray(y[nq:])
        st = system.ode(t, int(t / dt), q, v, qdot, a)
        if st:
            raise _Bad(st, t, q.copy(), v.copy())
        return np.concatenate([qdot, a])

    solver_cls = getattr(si, method)
    y0 = np.concatenate([q0, v0])
    solver = None
    t_save = _save_times(t_final, dt)
    n_saves = len(t_save)
    Y = [y0.copy()]
    failure = None
    with Run(progress, t_final, f"{method} {model.name}") as run:
        run.steps = 0
        try:  # the solver evaluates a(t = 0) already
            solver = solver_cls(fun, 0.0, y0, t_final, rtol=rtol, atol=atol, max_step=max_step)
            _adaptive_loop(solver, method, dt, n_saves, t_save, Y, run)
        except _Bad as exc:
            st, t_bad, qb, vb = exc.args
            failure = (st, t_bad, [("q", qb, "q"), ("v", vb, "v")])
        except _Failed as exc:
            failure = (-1, exc.args[0], exc.args[1])
    interrupted, wall, steps = run.interrupted, run.wall, run.steps
    Y = np.array(Y)
    Q = np.ascontiguousarray(Y[:, :nq])
    V = np.ascontiguousarray(Y[:, nq:])
    if Q.shape[0]:  # unit quaternions and (cos, sin) pairs
        Q = system.normalise(Q)
    t = t_save[: Q.shape[0]]
    TAU = np.array([forces.tau_at(t[i], Q[i], V[i], int(t[i] / dt)) for i in range(len(t))]).reshape(len(t), nv)
    A = system.saved_accelerations(t, Q, V, TAU)
    state, message = run_end(interrupted, bool(failure), solver.t if solver is not None else 0.0)
    traj = make_trajectory(model, t, Q, V, A, TAU, forces, method, dt, wall, steps, system.evals, state, message)
    if failure:
        st, t_bad, detail = failure
        if isinstance(detail, str):
            raise SimulationError(f"simulation stopped at t = {t_bad:.6g} s: {detail}", t_bad, "", traj)
        raise run_error(model, st, t_bad, detail, traj)
    if interrupted:
        warnings.warn(message, stacklevel=3)
    return traj


class _Failed(Exception):
    pass


def _save_times(t_final, dt):
    """The adaptive methods' saved times: 0, dt, 2 dt, ... and t_final itself (when dt does not
    divide it, or exceeds it)."""
    n = int(math.floor(t_final / dt + 1e-9)) + 1
    t = np.minimum(np.arange(n) * dt, t_final)
    if t_final - t[-1] > 1e-9 * max(1.0, t_final):
        t = np.append(t, t_final)
    return t


def _adaptive_loop(solver, method, dt, n_saves, t_save, Y, run):
    """Step the scipy solver, sampling its dense output at the save times into Y."""
    k = 1
    while solver.status == "running" and k < n_saves:
        msg = solver.step()
        run.steps += 1
        if solver.status == "failed":
            raise _Failed(solver.t, f"{method} failed: {msg}")
        if t_save[k] <= solver.t:
            dense = solver.dense_output()
            while k < n_saves and t_save[k] <= solver.t:
                Y.append(dense(t_save[k]))
                k += 1
        run.update(solver.t)
