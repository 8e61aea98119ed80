"""Simulation: O(n) forward dynamics followed by numerical integration (000 §3.2).

:func:`simulate` integrates ``I(q) a = tau + tau_passive(q, v) - C(q, v) v - g(q) + J^T f_ext``
on the configuration manifold and returns a :class:`~denoc_bridge.trajectory.Trajectory`.

Methods
-------
``"rk4"``
    Fixed-step classical Runge-Kutta, what the papers use; on the joints' Lie groups
    (free-flyer SE(3), spherical SO(3), planar SE(2)) as the Runge-Kutta-Munthe-Kaas
    scheme, which keeps fourth order; the stepping loop is compiled.
``"euler"``
    Semi-implicit (symplectic) Euler: ``v += dt a(q, v)``, ``q = q (+) dt v``; compiled.
``"RK45"``, ``"DOP853"``, ``"Radau"``, ``"BDF"``, ``"LSODA"``
    Adaptive integrators of :mod:`scipy.integrate` (``RK45`` is MATLAB's ``ode45``;
    ``Radau`` and ``BDF`` are implicit, for stiff chains) with ``rtol`` / ``atol``, stepped one
    step at a time; ``dt`` is then the interval of the saved states.  They integrate the
    coordinates q themselves (quaternions and (cos, sin) pairs normalised on output).

Dynamics: ``dynamics="recursive"`` (default) is the O(n) forward dynamics of 000 Table 3;
``dynamics="cholesky"`` is the non-recursive algorithm of 003 §5 (the GIM from
``mass_matrix``, Cholesky factorisation, two triangular solves), for comparison; it runs
its stages from Python.

Forces: ``tau`` is None (passive), a constant (nv,) array, an (n_steps, nv) array (row n
held over step n), or a callable ``tau(t, q, v)`` (a controller).  The model's joint
``damping`` and ``stiffness`` (springs relaxed at ``rest_configuration``) act unless
``passive=False``.  ``f_ext`` is a constant (n_links, 6) array or mapping of link names to
wrenches (Pinocchio's convention), or a callable ``f_ext(t, q, v)`` returning one.

A :class:`~denoc_bridge.mimic.MimicModel` is simulated in its reduced coordinates, stage by
stage from Python (:mod:`denoc_bridge.mimic_simulation`).

Long runs show a progress bar on a terminal (``progress=True`` forces it) and stop cleanly
on Ctrl-C, returning what was computed with ``status = "interrupted"``.  A state that
stops being finite (or a singular articulated inertia) raises
:class:`~denoc_bridge.errors.SimulationError` naming the time and the joint, with the
partial trajectory attached.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from functools import partial

import numpy as np

from .algorithms import _inputs
from .algorithms._inputs import check_model as _check_model
from .data import run_parallel
from .errors import InputError, InputTypeError, SimulationError
from .kernels import configuration as kc
from .kernels import entry
from .kernels import integrators as ki_
from .kernels import tables as T
from .mimic import MimicModel
from .spatial import internal_to_pin
from .trajectory import Trajectory

__all__ = ["simulate", "simulate_batch", "FIXED_STEP_METHODS", "ADAPTIVE_METHODS"]

FIXED_STEP_METHODS = ("rk4", "euler")
ADAPTIVE_METHODS = ("RK45", "DOP853", "Radau", "BDF", "LSODA")
#: above this many stored numbers, states are saved every few steps (see ``save_every``)
MAX_STORED = 50_000_000
_CHUNK_SECONDS = 0.2


def _method_name(method: str) -> str:
    for m in FIXED_STEP_METHODS + ADAPTIVE_METHODS:
        if str(method).lower() == m.lower():
            return m
    raise InputError(f"method must be one of {', '.join(FIXED_STEP_METHODS + ADAPTIVE_METHODS)}, got {method!r}")


def _vector(model, x, n, name):
    """A checked velocity-sized vector (v0)."""
    x = _inputs.real_array(x, name)
    if x.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) (model '{model.name}'), got {x.shape}")
    if not np.all(np.isfinite(x)):
        k = int(np.flatnonzero(~np.isfinite(x))[0])
        joint = model.joint_label(_inputs._owner(model, k, "v"))
        raise InputError(f"{name}[{k}] = {x[k]} is not finite (joint {joint})")
    return np.ascontiguousarray(x, dtype=float)


class _Forces:
    """The user's tau and f_ext in the forms the kernels and the Python loops need."""

    def __init__(self, model, tau, f_ext, n_steps, method):
        nv = model.nv
        self.model = model
        self._links = getattr(model, "tree", model)  # a MimicModel's wrenches act on its tree's links
        self.tau_fn = tau if callable(tau) else None
        self.fext_fn = f_ext if callable(f_ext) else None
        if tau is None or self.tau_fn is not None:
            self.mode, self.table = ki_.TAU_NONE, np.zeros((1, nv))
        else:
            arr = _inputs.real_array(tau, "tau")
            if arr.shape == (nv,):
                self.mode, self.table = ki_.TAU_CONSTANT, np.ascontiguousarray(arr[None], dtype=float)
            elif arr.ndim == 2 and arr.shape[1] == nv:
                if arr.shape[0] < n_steps:
                    raise InputError(
                        f"tau has {arr.shape[0]} rows, but the simulation takes {n_steps} steps (one row per step)"
                    )
                self.mode, self.table = ki_.TAU_TABLE, np.ascontiguousarray(arr, dtype=float)
            else:
                raise InputError(
                    f"tau must be None, a ({nv},) array, an (n_steps, {nv}) array or a callable "
                    f"tau(t, q, v); got shape {arr.shape}"
                )
            bad = np.argwhere(~np.isfinite(self.table))
            if bad.size:
                r, i = (int(x) for x in bad[0])
                where = f"tau[{i}]" if self.mode == ki_.TAU_CONSTANT else f"tau[{r}, {i}] (step {r})"
                raise InputError(
                    f"{where} = {self.table[r, i]} is not finite "
                    f"(joint {model.joint_label(_inputs._owner(model, i, 'v'))})"
                )
        if f_ext is None or self.fext_fn is not None:
            self.fext_pin, self.fext = None, _inputs.NO_FEXT
        else:
            self.fext = np.ascontiguousarray(_inputs.external_wrenches(self._links, f_ext))  # internal order
            self.fext_pin = internal_to_pin(self.fext)
        self.python_loop = self.tau_fn is not None or self.fext_fn is not None
        self.cholesky = False

    def fext_pin_at(self, t, q, v):
        """The external wrenches in Pinocchio's order (None for none)."""
        if self.fext_fn is None:
            return self.fext_pin
        return internal_to_pin(self.fext_at(t, q, v))

    def tau_at(self, t, q, v, n):
        """The actuation at step n / time t."""
        if self.tau_fn is not None:
            out = np.asarray(self.tau_fn(t, q.copy(), v.copy()), dtype=float)
            if out.shape != (self.model.nv,) or not np.all(np.isfinite(out)):
                raise InputError(
                    f"tau(t, q, v) must return {self.model.nv} finite numbers; at t = {t:g} it returned {out!r}"
                )
            return out
        if self.mode == ki_.TAU_CONSTANT:
            return self.table[0]
        if self.mode == ki_.TAU_TABLE:
            return self.table[min(n, self.table.shape[0] - 1)]
        return np.zeros(self.model.nv)

    def fext_at(self, t, q, v):
        if self.fext_fn is None:
            return self.fext
        return np.ascontiguousarray(_inputs.external_wrenches(self._links, self.fext_fn(t, q.copy(), v.copy())))


class _Run:
    """The wall clock, the optional progress bar and Ctrl-C of a run: ``with _Run(...) as run:``
    lets a KeyboardInterrupt end the loop (``run.interrupted``) and always closes the bar."""

    def __init__(self, enabled, total, label):
        if enabled is None:
            enabled = bool(getattr(sys.stderr, "isatty", lambda: False)())
        self.bar = None
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self.bar = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                TextColumn("{task.percentage:>5.1f}%"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=Console(stderr=True),
            )  # stdout stays the results'
            self.bar.start()
            self.bar.add_task(label, total=total)
        self.interrupted = False
        self.wall = 0.0

    def update(self, done):
        if self.bar is not None:
            self.bar.update(self.bar.task_ids[0], completed=done)

    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, kind, exc, tb):
        self.wall = time.perf_counter() - self.t0
        if self.bar is not None:
            self.bar.stop()
        if kind is KeyboardInterrupt:
            self.interrupted = True
            return True
        return False


def _bad_entry(model, arrays) -> str:
    """The joint of the first non-finite entry of (name, array, 'q' or 'v') triples."""
    for name, arr, kind in arrays:
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            i = int(bad[0])
            idx = model.idx_q if kind == "q" else model.idx_v
            k = int(np.searchsorted(idx, i, side="right") - 1)
            return f"{name}[{i}] of joint '{model.joint_names[k]}'", model.joint_names[k]
    return "", ""


def simulate(
    model,
    q0,
    v0,
    t_final: float,
    dt: float = 1e-3,
    tau=None,
    method: str = "rk4",
    *,
    f_ext=None,
    passive: bool = True,
    dynamics: str = "recursive",
    save_every: int | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_step: float = np.inf,
    progress: bool | None = None,
    stabilization: str = "projection",
    baumgarte=(10.0, 10.0),
    constraint_tol: float = 1e-12,
) -> Trajectory:
    """Simulate ``model`` from ``(q0, v0)`` for ``t_final`` seconds (see the module docstring).

    Parameters
    ----------
    dt : step of the fixed-step methods; interval of the saved states for the adaptive ones.
    save_every : keep every k-th step (fixed-step methods); by default every step, unless
        that would store more than ``MAX_STORED`` numbers (then the smallest k that fits,
        with a warning).
    rtol, atol, max_step : for the adaptive methods.
    stabilization, baumgarte, constraint_tol : for models with loop closures (rk4 or euler):
        ``"projection"`` onto the loops after each step to ``constraint_tol`` (default),
        ``"baumgarte"`` with ``baumgarte = (alpha, beta)`` in 1/s, or ``"none"``; see
        :mod:`denoc_bridge.loop_simulation`.  The trajectory then carries
        ``constraint_error`` (per saved state) and ``constraint_drift``.

    Returns
    -------
    Trajectory with t, q, v, a (accelerations at the saved states) and tau (actuation).
    """
    _check_model(model)
    method = _method_name(method)
    if isinstance(model, MimicModel):
        from . import mimic_simulation

        q0 = mimic_simulation.initial_configuration(model, q0)
    else:
        q0 = np.ascontiguousarray(_inputs.configuration(model, q0, "q0"), dtype=float)  # normalised, named errors
    v0 = _vector(model, v0, model.nv, "v0")
    t_final, dt, n_steps = _steps(t_final, dt, method)
    if dynamics not in ("recursive", "cholesky"):
        raise InputError(f"dynamics must be 'recursive' or 'cholesky', got {dynamics!r}")
    forces = _Forces(model, tau, f_ext, n_steps, method)
    forces.cholesky = dynamics == "cholesky"
    if model.loops:
        from . import loop_simulation

        opts = loop_simulation.options(model, method, dynamics, stabilization, baumgarte, constraint_tol)
        return loop_simulation.run(
            model, q0, v0, dt, n_steps, forces, method, passive, _stride(model, n_steps, save_every), progress, opts
        )
    system = None
    if isinstance(model, MimicModel):
        system = mimic_simulation.MimicSystem(model, forces, passive)
    if method in FIXED_STEP_METHODS:
        stride = _stride(model, n_steps, save_every)
        if forces.python_loop or forces.cholesky:
            return _run_python(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system)
        try:
            return _run_compiled(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system)
        except _SingularTree:  # a mimic model's tree alone became singular: its dense form, from the start
            return _run_python(
                model,
                q0,
                v0,
                dt,
                n_steps,
                forces,
                method,
                passive,
                stride,
                progress,
                mimic_simulation.MimicSystem(model, forces, passive),
            )
    if save_every is not None:
        raise InputError("save_every is for the fixed-step methods; the adaptive ones save every dt")
    rtol, atol, max_step = _tolerances(rtol, atol, max_step)
    return _run_adaptive(model, q0, v0, t_final, dt, forces, method, passive, rtol, atol, max_step, progress, system)


def _steps(t_final, dt, method):
    """(t_final, dt, number of steps), checked."""
    t_final, dt = _number(t_final, "t_final"), _number(dt, "dt")
    if not (math.isfinite(t_final) and t_final > 0):
        raise InputError(f"t_final must be a positive number of seconds, got {t_final}")
    if not (math.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number of seconds, got {dt}")
    n_steps = max(1, int(round(t_final / dt)))
    if method in FIXED_STEP_METHODS and abs(n_steps * dt - t_final) > 1e-9 * max(1.0, t_final):
        raise InputError(f"t_final = {t_final} is not a whole number of steps dt = {dt}")
    return t_final, dt, n_steps


def _number(x, name: str) -> float:
    """A real scalar argument as a float, or an error naming it."""
    if x is None:
        raise InputTypeError(f"{name} is None; expected a number")
    arr = _inputs.real_array(x, name)
    if arr.shape != ():
        raise InputError(f"{name} must be a number, got an array of shape {arr.shape}")
    return float(arr)


def _tolerances(rtol, atol, max_step):
    """The adaptive methods' rtol, atol (positive) and max_step (positive, may be inf), checked."""
    rtol, atol, max_step = _number(rtol, "rtol"), _number(atol, "atol"), _number(max_step, "max_step")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"{name} must be a positive number, got {value}")
    if not max_step > 0:
        raise InputError(f"max_step must be positive (inf: no limit), got {max_step}")
    return rtol, atol, max_step


def _stride(model, n_steps, save_every):
    per_state = model.nq + 3 * model.nv
    if save_every is None:
        stride = 1
        while (n_steps // stride + 1) * per_state > MAX_STORED:
            stride += 1
        if stride > 1:
            warnings.warn(
                f"saving every {stride}th step only: storing all {n_steps + 1} states of "
                f"'{model.name}' would hold {(n_steps + 1) * per_state:.2e} numbers (pass save_every)",
                stacklevel=3,
            )
        return stride
    return _save_every(save_every)


def _save_every(save_every) -> int:
    """``save_every`` (not None) as the stride, or an InputError."""
    whole = (
        isinstance(save_every, (int, np.integer, float, np.floating))
        and not isinstance(save_every, bool)
        and math.isfinite(save_every)
        and save_every == int(save_every)
    )
    if not whole or save_every < 1:
        raise InputError(f"save_every must be a positive integer, got {save_every!r}")
    return int(save_every)


def _n_saves(n_steps, stride):
    """Rows to allocate: every stride-th step from 0, and the final step when stride does not divide n_steps."""
    return n_steps // stride + 1 + (1 if n_steps % stride else 0)


def _saved_steps(saved, stride, final_step):
    """The step index of each of ``saved`` rows: every stride-th step, the last one ``final_step``
    (the final state, saved whether or not stride divides it) or None (a run that stopped early)."""
    steps = np.arange(saved) * stride
    if final_step is not None and saved:
        steps[-1] = final_step
    return steps


def _passive_arrays(model, passive):
    use = bool(passive and (np.any(model.damping) or np.any(model.stiffness)))
    return (
        np.ascontiguousarray(model.stiffness),
        np.ascontiguousarray(model.damping),
        np.ascontiguousarray(model.rest_configuration),
        use,
    )


def _trajectory(model, t, Q, V, A, TAU, forces, method, dt, wall, steps, evals, status, message):
    return Trajectory(model, t, Q, V, A, TAU, forces.fext_pin, method, dt, wall, steps, evals, status, message)


def _fail(model, status, t, stage_arrays, traj):
    if status > 0:
        k = int(status) - 1
        when = "is singular at the initial state" if t == 0 else "became singular"
        msg = (
            f"simulation stopped at t = {t:.6g} s: the articulated inertia of joint "
            f"'{model.joint_names[k]}' {when} (the links it moves offer no inertia to its motion, e.g. a "
            "massless leaf link)"
        )
        return SimulationError(msg, t, model.joint_names[k], traj)
    where, joint = _bad_entry(model, stage_arrays)
    msg = (
        f"simulation stopped at t = {t:.6g} s: the state is no longer finite"
        + (f" ({where})" if where else "")
        + "; the trajectory up to the last valid state is attached "
        "(e.error.trajectory); a smaller dt or a more stable method may help"
    )
    return SimulationError(msg, t, joint, traj)


def _run_compiled(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system=None):
    """The fixed-step methods as compiled runs of steps (chunks sized for the progress bar and
    Ctrl-C); ``system`` (a tree's by default, or a MimicModel's) supplies the kernel."""
    system = system or _TreeSystem(model, forces, passive)
    nq, nv = model.nq, model.nv
    n_saves = _n_saves(n_steps, stride)
    Q, V, A = np.empty((n_saves, nq)), np.empty((n_saves, nv)), np.empty((n_saves, nv))
    q, v = q0.copy(), v0.copy()
    stepper, stage = system.compiled(method, dt, stride)
    step, saved, status, chunk = 0, 0, 0, 8
    with _Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run:
        while step < n_steps:
            n = min(chunk, n_steps - step)
            t0 = time.perf_counter()
            done, status, s = stepper(q, v, step, n, saved, Q, V, A)
            step += done
            saved += s
            if status:
                break
            elapsed = time.perf_counter() - t0
            chunk = max(1, min(4 * chunk, int(chunk * _CHUNK_SECONDS / max(elapsed, 1e-6))))
            run.update(step)
    interrupted, wall = run.interrupted, run.wall
    traj = _finish(model, forces, method, dt, stride, step, q, v, Q, V, A, saved, status, interrupted, wall, system)
    if status:
        if status > 0 and getattr(system, "singular_fallback", False):
            raise _SingularTree(status)
        raise _fail(model, status, step * dt, stage(q, v), traj)
    if interrupted:
        warnings.warn(traj.message, stacklevel=3)
    return traj


class _SingularTree(Exception):
    """A compiled run of a MimicModel met a singular articulated inertia of its tree alone
    (the Lagrange form needs it; the Python stages fall back to the dense form)."""


def _finish(model, forces, method, dt, stride, step, q, v, Q, V, A, saved, status, interrupted, wall, system):
    """The Trajectory of a compiled fixed-step run that stopped after ``step`` steps at (q, v) with
    ``saved`` rows of Q, V, A filled: the final state is appended when the run completed (also
    when stride does not divide the number of steps)."""
    completed = not status and not interrupted
    if completed:  # the final state
        tau_end = forces.tau_at(step * dt, q, v, step)
        a_end = system.saved_accelerations([step * dt], q[None], v[None], tau_end[None])[0]
        Q[saved], V[saved], A[saved] = q, v, a_end
        saved += 1
    steps = _saved_steps(saved, stride, step if completed else None)
    t = steps * dt
    TAU = _actuation_table(model, forces, steps)
    state = "interrupted" if interrupted else ("failed" if status else "completed")
    message = f"interrupted by the user at t = {step * dt:.6g} s" if interrupted else ""
    evals_per_step = 4 if method == "rk4" else 1
    return _trajectory(
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


def simulate_batch(
    model,
    q0,
    v0,
    t_final: float,
    dt: float = 1e-3,
    tau=None,
    method: str = "rk4",
    *,
    passive: bool = True,
    save_every: int | None = None,
    errors: str = "raise",
) -> list:
    """:func:`simulate` of B cases of one model at once: one compiled call runs every case's
    whole fixed-step run, cases in parallel on numba's threads.

    ``q0`` is (B, nq) or one (nq,) configuration for all, ``v0`` (B, nv) or (nv,); ``tau`` None,
    one (nv,) vector for all, (B, nv) (one constant vector per case) or (B, n_steps, nv); B is
    the leading size of whichever of them has one.
    ``method`` is ``"rk4"`` or ``"euler"``; the model has no loop closures, no external
    wrenches and no controller (use :func:`simulate` for those); a
    :class:`~denoc_bridge.mimic.MimicModel` runs its cases compiled alike
    (:func:`denoc_bridge.mimic_simulation.run_batch`).  Each trajectory holds the
    same numbers as :func:`simulate` of that case alone; its ``wall_time`` is the batch's
    wall time divided by B.  A failed case raises its :class:`SimulationError` (``errors=
    "raise"``, the first in case order) or stands in the list as that exception (``errors=
    "return"``).
    """
    _check_model(model)
    method = _method_name(method)
    if method not in FIXED_STEP_METHODS:
        raise InputError(
            f"simulate_batch runs the fixed-step methods {FIXED_STEP_METHODS}; got {method!r} "
            "(use simulate for the adaptive ones)"
        )
    if errors not in ("raise", "return"):
        raise InputError(f"errors must be 'raise' or 'return', got {errors!r}")
    if model.loops:
        raise InputError(f"simulate_batch: '{model.name}' has loop closures; use simulate for each case")
    mimic = isinstance(model, MimicModel)
    if mimic:
        from . import mimic_simulation
    Q0, V0 = _inputs.real_array(q0, "q0"), _inputs.real_array(v0, "v0")
    T0 = None if tau is None else _inputs.real_array(tau, "tau")
    leading = [
        a.shape[0]
        for a, batch_ndim in ((Q0, 2), (V0, 2), (T0, 2), (T0, 3))
        if a is not None and a.ndim == batch_ndim and (a is not T0 or a.shape[-1] == model.nv)
    ]
    B = max(leading, default=1)
    check = partial(mimic_simulation.initial_configuration, model) if mimic else partial(_inputs.configuration, model)
    Q0 = np.array(
        [check(row, f"q0[{b}]") for b, row in enumerate(np.broadcast_to(Q0, (B, model.nq)) if Q0.ndim == 1 else Q0)]
    )
    V0 = np.broadcast_to(V0, (B, model.nv)) if V0.ndim == 1 else V0
    if Q0.shape != (B, model.nq) or V0.shape != (B, model.nv):
        raise InputError(
            f"q0 and v0 must have shapes ({B}, {model.nq}) and ({B}, {model.nv}) (or one state for "
            f"all cases), got {np.shape(q0)} and {np.shape(v0)}"
        )
    V0 = np.ascontiguousarray([_vector(model, row, model.nv, f"v0[{b}]") for b, row in enumerate(V0)])
    t_final, dt, n_steps = _steps(t_final, dt, method)
    taus = _batch_torques(model, tau, B, n_steps)
    forces = [_Forces(model, tb, None, n_steps, method) for tb in taus]
    stride = _stride(model, n_steps, save_every)
    n_saves = _n_saves(n_steps, stride)
    Qs, Vs, As = np.empty((B, n_saves, model.nq)), np.empty((B, n_saves, model.nv)), np.empty((B, n_saves, model.nv))
    mode = forces[0].mode
    table = np.ascontiguousarray(np.stack([f.table for f in forces]))
    K, D, q_rest, use_passive = _passive_arrays(model.tree if mimic else model, passive)
    done, status, saved = (np.zeros(B, dtype=np.int64) for _ in range(3))
    Q, V = Q0.copy(), V0.copy()
    t0 = time.perf_counter()
    if mimic:
        mimic_simulation.run_batch(
            model,
            Q,
            V,
            n_steps,
            dt,
            mode,
            table,
            K,
            D,
            q_rest,
            use_passive,
            stride,
            Qs,
            Vs,
            As,
            done,
            status,
            saved,
            method,
        )
    else:
        run_parallel(
            ki_.run_batch,
            model._kt,
            Q,
            V,
            n_steps,
            dt,
            mode,
            table,
            _inputs.NO_FEXT,
            K,
            D,
            q_rest,
            use_passive,
            stride,
            Qs,
            Vs,
            As,
            done,
            status,
            saved,
            method == "euler",
        )
    wall = (time.perf_counter() - t0) / B
    out = []
    for b in range(B):
        if status[b]:  # the same numbers again, alone, for the error that names time and joint
            try:
                out.append(
                    simulate(
                        model,
                        Q0[b],
                        V0[b],
                        t_final,
                        dt,
                        taus[b],
                        method,
                        passive=passive,
                        save_every=stride,
                        progress=False,
                    )
                )
            except SimulationError as exc:
                if errors == "raise":
                    raise
                out.append(exc)
            continue
        out.append(
            _finish(
                model,
                forces[b],
                method,
                dt,
                stride,
                int(done[b]),
                Q[b],
                V[b],
                Qs[b],
                Vs[b],
                As[b],
                int(saved[b]),
                0,
                False,
                wall,
                _system(model, forces[b], passive),
            )
        )
    return out


def _system(model, forces, passive):
    if isinstance(model, MimicModel):
        from .mimic_simulation import MimicSystem

        return MimicSystem(model, forces, passive)
    return _TreeSystem(model, forces, passive)


def _batch_torques(model, tau, B, n_steps):
    """Per case: None, an (nv,) vector or an (n_steps, nv) table (all cases the same kind)."""
    if tau is None:
        return [None] * B
    arr = _inputs.real_array(tau, "tau")
    nv = model.nv
    if arr.shape == (nv,):
        return [arr] * B
    if arr.shape == (B, nv) or (arr.ndim == 3 and arr.shape[0] == B and arr.shape[2] == nv):
        return list(arr)
    raise InputError(
        f"tau must be None, an ({nv},) vector, a ({B}, {nv}) array (one constant vector per case) "
        f"or a ({B}, {n_steps}, {nv}) array; got shape {arr.shape}"
    )


def _actuation_table(model, forces, steps):
    """The actuation at the saved steps (indices ``steps``) of a run with a constant or tabulated tau."""
    if forces.mode == ki_.TAU_CONSTANT:
        return np.repeat(forces.table, len(steps), axis=0)
    if forces.mode == ki_.TAU_TABLE:
        return forces.table[np.minimum(steps, forces.table.shape[0] - 1)].copy()
    return np.zeros((len(steps), model.nv))


def _acceleration(model, q, v, tau, fext, K, D, q_rest, use_passive):
    d, total = np.empty(model.nv), np.empty(model.nv)
    ki_.passive_forces(model._kt.view(T.INT), q, v, K, D, q_rest, use_passive, d, total)
    total += tau
    a = np.empty(model.nv)
    status = entry.forward_dynamics_state(model._kt, model.thread_work(), q, v, total, fext, a)
    if status:
        a[:] = np.nan
    return a


def _cholesky_accelerations(model, q, v, total, fext_pin, out):
    """The non-recursive forward dynamics (003 §5): I(q) a = tau - h(q, v) by Cholesky."""
    import scipy.linalg as sl

    from .algorithms.dynamics import mass_matrix, nonlinear_effects

    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        return -1
    M = mass_matrix(model, q)
    phi = total - nonlinear_effects(model, q, v, fext_pin)
    try:
        out[:] = sl.cho_solve(sl.cho_factor(M, lower=True, check_finite=False), phi, check_finite=False)
    except np.linalg.LinAlgError:
        return 1
    return 0 if np.all(np.isfinite(out)) else -1


class _TreeSystem:
    """A tree model's stages for the Python steppers (:func:`_run_python`, :func:`_run_adaptive`):
    accelerations with the actuation, springs, dampers and external wrenches of a run, and the
    configuration maps (each one compiled call).  :mod:`denoc_bridge.mimic_simulation` has the
    same interface for a :class:`~denoc_bridge.mimic.MimicModel`."""

    def __init__(self, model, forces, passive):
        self.model, self.forces = model, forces
        self.nq, self.nv = model.nq, model.nv
        self.ki = model._kt.view(T.INT)
        self.K, self.D, self.q_rest, self.use_passive = _passive_arrays(model, passive)
        self.work = model.thread_work()
        self.d, self.total = np.empty(model.nv), np.empty(model.nv)
        self.evals = 0

    def _total(self, t, n, q, v):
        """The actuation at (t, step n); ``self.total`` = actuation + springs + dampers."""
        tau = self.forces.tau_at(t, q, v, n)
        ki_.passive_forces(self.ki, q, v, self.K, self.D, self.q_rest, self.use_passive, self.d, self.total)
        self.total[:] += tau
        self.evals += 1
        return tau

    def accelerations(self, t, n, q, v, out):
        """(status, tau): ``out`` = a(t, q, v); status 0, k + 1 (joint k's articulated inertia is
        singular) or -1 (the state or the result is not finite)."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return -1, np.zeros(self.nv)  # the state left the finite numbers
        tau = self._total(t, n, q, v)
        f = self.forces
        if f.cholesky:
            return _cholesky_accelerations(self.model, q, v, self.total, f.fext_pin_at(t, q, v), out), tau
        st = entry.forward_dynamics_state(self.model._kt, self.work, q, v, self.total, f.fext_at(t, q, v), out)
        if st == 0 and not np.all(np.isfinite(out)):  # overflowed: as the compiled steppers
            st = -1
        return st, tau

    def ode(self, t, n, q, v, qdot, a):
        """Status of the adaptive solvers' right-hand side ``qdot`` = dq/dt (q, v), ``a``."""
        self._total(t, n, q, v)
        f = self.forces
        if f.cholesky:
            kc.configuration_rate(self.ki, q, v, qdot)
            return _cholesky_accelerations(self.model, q, v, self.total, f.fext_pin_at(t, q, v), a)
        return ki_.ode_rhs(self.model._kt, self.work, q, v, self.total, f.fext_at(t, q, v), qdot, a)

    def saved_accelerations(self, t, Q, V, TAU):
        """The accelerations at saved states (not counted as evaluations)."""
        return np.array(
            [
                _acceleration(
                    self.model,
                    Q[i],
                    V[i],
                    TAU[i],
                    self.forces.fext_at(t[i], Q[i], V[i]),
                    self.K,
                    self.D,
                    self.q_rest,
                    self.use_passive,
                )
                for i in range(len(t))
            ]
        ).reshape(len(t), self.nv)

    def compiled(self, method, dt, stride):
        """(run, stage) for :func:`_run_compiled`: ``run(q, v, step, n, saved, Q, V, A)`` makes n
        compiled steps -> (steps done, status, rows saved); ``stage(q, v)`` names the arrays of
        the stage that failed."""
        f, nq, nv = self.forces, self.nq, self.nv
        scratch = np.zeros((ki_.SCRATCH_ROWS, max(nq, nv, 1)))
        stepper = ki_.rk4_run if method == "rk4" else ki_.euler_run
        kt, work, K, D, q_rest, use = self.model._kt, self.work, self.K, self.D, self.q_rest, self.use_passive

        def run(q, v, step, n, saved, Q, V, A):
            return stepper(
                kt, work, q, v, step, n, dt, f.mode, f.table, f.fext, K, D, q_rest, use, stride, saved, Q, V, A, scratch
            )

        def stage(q, v):
            if method == "euler":
                return [("q", q, "q"), ("v", v, "v"), ("tau", scratch[3, :nv], "v"), ("a", scratch[9, :nv], "v")]
            return [("q", scratch[0, :nq], "q"), ("v", scratch[2, :nv], "v"), ("tau", scratch[3, :nv], "v")] + [
                ("a", scratch[9 + i, :nv], "v") for i in range(4)
            ]

        return run, stage

    def integrate(self, q, xi, out):
        """``out = q (+) xi`` (``out`` may be ``q``)."""
        kc.integrate(self.ki, q, xi, out)

    def dexpinv(self, xi, v, out):
        """The rate of the Lie-algebra coordinates xi with joint velocities v (RKMK stages)."""
        kc.dexpinv(self.ki, xi, v, out)

    def normalise(self, Q):
        """Unit quaternions and (cos, sin) pairs in each row of Q."""
        return _normalise_rows(self.model, Q)


def _run_python(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system=None):
    """The fixed-step methods with a callable tau or f_ext (or a MimicModel, through its
    ``system``): the same steps, stage by stage from Python (each stage one forward dynamics
    call)."""
    system = system or _TreeSystem(model, forces, passive)
    nq, nv = system.nq, system.nv
    f = system.accelerations
    Q, V, A, TAU = [], [], [], []
    q, v = q0.copy(), v0.copy()
    failed = None
    xi, qs, vs = np.empty(nv), np.empty(nq), np.empty(nv)
    kx = [np.empty(nv) for _ in range(4)]
    kv = [np.empty(nv) for _ in range(4)]
    step = 0
    with _Run(progress if n_steps > 1000 else False, n_steps, f"{method} {model.name}") as run:
        for step in range(n_steps):
            t = step * dt
            st, tau = f(t, step, q, v, kv[0])
            if st:
                failed = (st, t, [("q", q, "q"), ("v", v, "v"), ("tau", tau, "v"), ("a", kv[0], "v")])
                break
            if step % stride == 0:
                Q.append(q.copy()), V.append(v.copy()), A.append(kv[0].copy()), TAU.append(np.array(tau))
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
                    st, tau_s = f(t + c * dt, step, qs, vs, kv[i + 1])
                    if st:
                        failed = (st, t, [("q", qs, "q"), ("v", vs, "v"), ("tau", tau_s, "v"), ("a", kv[i + 1], "v")])
                        break
                if failed:
                    break
                xi[:] = dt / 6.0 * (kx[0] + 2 * kx[1] + 2 * kx[2] + kx[3])
                v += dt / 6.0 * (kv[0] + 2 * kv[1] + 2 * kv[2] + kv[3])
                system.integrate(q, xi, q)
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
            final = n_steps
    n = len(Q)

    def stack(x, width):
        return np.array(x).reshape(n, width)

    t = _saved_steps(n, stride, final) * dt
    state = "interrupted" if interrupted else ("failed" if failed else "completed")
    message = f"interrupted by the user at t = {step * dt:.6g} s" if interrupted else ""
    traj = _trajectory(
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
    if failed:
        raise _fail(model, failed[0], failed[1], failed[2], traj)
    if interrupted:
        warnings.warn(message, stacklevel=3)
    return traj


class _Bad(Exception):
    """A forward dynamics evaluation of an adaptive solver refused its state."""


def _run_adaptive(model, q0, v0, t_final, dt, forces, method, passive, rtol, atol, max_step, progress, system=None):
    import scipy.integrate as si

    system = system or _TreeSystem(model, forces, passive)
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
    with _Run(progress, t_final, f"{method} {model.name}") as run:
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
    state = "interrupted" if interrupted else ("failed" if failure else "completed")
    t_stop = solver.t if solver is not None else 0.0
    message = f"interrupted by the user at t = {t_stop:.6g} s" if interrupted else ""
    traj = _trajectory(model, t, Q, V, A, TAU, forces, method, dt, wall, steps, system.evals, state, message)
    if failure:
        st, t_bad, detail = failure
        if isinstance(detail, str):
            raise SimulationError(f"simulation stopped at t = {t_bad:.6g} s: {detail}", t_bad, "", traj)
        raise _fail(model, st, t_bad, detail, traj)
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


def _normalise_rows(model, Q):
    """Unit quaternions and (cos, sin) pairs in each row of Q."""
    Q = Q.copy()
    for starts, size in ((model.quaternion_index, 4), (model.circle_index, 2)):
        for i0 in np.asarray(starts, dtype=int):
            block = Q[:, i0 : i0 + size]
            Q[:, i0 : i0 + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return Q
