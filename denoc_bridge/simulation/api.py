"""Simulation: O(n) forward dynamics followed by numerical integration (000 §3.2).

:func:`simulate` integrates ``I(q) a = tau + tau_passive(q, v) - C(q, v) v - g(q) + J^T f_ext``
on the configuration manifold and returns a :class:`~denoc_bridge.simulation.trajectory.Trajectory`.

Methods
-------
``"rk4"``
    Fixed-step classical Runge-Kutta, what the papers use; on the joints' Lie groups
    (free-flyer SE(3), spherical SO(3), planar SE(2)) as the Runge-Kutta-Munthe-Kaas
    scheme, which keeps fourth order; the stepping loop is compiled.
``"euler"``
    Semi-implicit (symplectic) Euler: ``v += dt a(q, v)``, ``q = q (+) dt v``; compiled.
``"implicit-euler"``, ``"sdirk2"``
    Implicit fixed-step methods for stiff trees (stiff joint springs and dampers, long damped
    chains) at steps far beyond the explicit methods' stability limits: backward Euler and
    the L-stable two-stage SDIRK of order 2, Newton on each stage with the Jacobian from the
    analytical derivatives (dense up to 300 DOFs, matrix-free GMRES with
    :func:`~denoc_bridge.forward_dynamics_jvp` beyond); see :mod:`denoc_bridge.simulation.implicit`.
    Trees only, step by step from Python; the joint limits hold as for rk4 and euler.
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
``passive=False``; its ``friction`` (URDF ``<dynamics friction>``) is never applied.  ``f_ext`` is a constant (n_links, 6) array or mapping of link names to
wrenches (Pinocchio's convention), or a callable ``f_ext(t, q, v)`` returning one.

Every model is a *system* (:func:`system_of`, the one place that decides): a tree, a
:class:`~denoc_bridge.constraints.mimic.MimicModel` in its reduced coordinates
(:mod:`denoc_bridge.simulation.mimic`), a tree with loop closures (:mod:`.loops`, with the
loops' stabilisation) or both (:mod:`.mimic_loops`); the one compiled run
(``denoc_bridge/core/run.pyx``) and the stages from Python (:mod:`.runners`) step them all.

Long runs show a progress bar on a terminal (``progress=True`` forces it) and stop cleanly
on Ctrl-C, returning what was computed with ``status = "interrupted"``.  A state that
stops being finite (or a singular articulated inertia) raises
:class:`~denoc_bridge.errors.SimulationError` naming the time and the joint, with the
partial trajectory attached.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from typing import Any, TypeAlias

import numpy as np
import numpy.typing as npt

from denoc_bridge.core import run as core_run
from denoc_bridge.core.systems import Saves
from denoc_bridge.errors import InputError, SimulationError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import describe_loops
from denoc_bridge.multibody.data import run_claimed
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation import contact as contact_simulation
from denoc_bridge.simulation import loops as loop_simulation
from denoc_bridge.simulation import mimic as mimic_simulation
from denoc_bridge.simulation import mimic_loops as mimic_loop_simulation
from denoc_bridge.simulation.common import (
    ADAPTIVE_METHODS,
    FIXED_STEP_METHODS,
    IMPLICIT_METHODS,
    Forces,
    System,
    batch_torques,
    check_save_every,
    check_saved_states,
    check_tolerances,
    checked_vector,
    count_saves,
    method_name,
    save_stride,
    step_count,
)
from denoc_bridge.simulation.implicit import ImplicitSteps
from denoc_bridge.simulation.loops import LoopSystem
from denoc_bridge.simulation.mimic import MimicSystem
from denoc_bridge.simulation.mimic_loops import MimicLoopSystem
from denoc_bridge.simulation.runners import (
    SingularTree,
    finish_run,
    run_adaptive,
    run_compiled,
    run_python,
)
from denoc_bridge.simulation.stream import StateStream, check_disk, record_dtype, stream_target
from denoc_bridge.simulation.trajectory import Trajectory
from denoc_bridge.simulation.tree import TreeSystem, start_on_limits

__all__ = ["simulate", "simulate_batch", "FIXED_STEP_METHODS", "ADAPTIVE_METHODS"]

#: ``tau`` of :func:`simulate`: an array, or a controller ``tau(t, q, v)``
TorquesLike: TypeAlias = npt.ArrayLike | Callable[[float, np.ndarray, np.ndarray], npt.ArrayLike]
#: ``f_ext`` of :func:`simulate`: wrenches, or ``f_ext(t, q, v)`` returning them
WrenchesInput: TypeAlias = WrenchesLike | Callable[[float, np.ndarray, np.ndarray], WrenchesLike]


def simulate(
    model: Model | MimicModel,
    q0: npt.ArrayLike,
    v0: npt.ArrayLike,
    t_final: float,
    dt: float = 1e-3,
    tau: TorquesLike | None = None,
    method: str = "rk4",
    *,
    f_ext: WrenchesInput | None = None,
    passive: bool = True,
    dynamics: str = "recursive",
    save_every: int | None = None,
    rtol: float = 1e-8,
    atol: float = 1e-10,
    max_step: float = np.inf,
    progress: bool | None = None,
    stabilization: str = "projection",
    baumgarte: tuple[float, float] = (10.0, 10.0),
    constraint_tol: float = 1e-12,
    limits: bool = True,
    save_to: str | os.PathLike[str] | None = None,
    contact: Any = None,
    contact_points: Any = None,
    hold: Any = None,
) -> Trajectory:
    """Simulate ``model`` from ``(q0, v0)`` for ``t_final`` seconds (see the module docstring).

    Parameters
    ----------
    dt : step of the fixed-step methods; interval of the saved states for the adaptive ones.
    save_every : keep every k-th step (fixed-step methods); by default every step, unless
        that would store more than ``MAX_STORED`` numbers in memory (then the smallest k that
        fits, with a warning; not when streaming with ``save_to``).
    rtol, atol, max_step : for the adaptive methods.
    limits : enforce the URDF's joint position limits (revolute and prismatic joints with
        finite limits, lower < upper) on a tree with the fixed-step methods (explicit and
        implicit): after each step a
        joint past a limit is put back on it, and the joints moving outwards at a limit are
        stopped by the smallest impulse in the kinetic-energy metric (a plastic impact: the
        kinetic energy drops by what the stop takes, never grows; ``denoc_bridge/core/limits.pxi``).
        A q0 outside the limits starts on them, with a warning naming the joints.  A mimic
        model's stops keep its mimic relations, and a mimic joint's limits act on the joint it
        mimics (:mod:`denoc_bridge.simulation.mimic`).  With ``method="contact-euler"`` the
        limits are one-sided rows beside the contacts, solved with them (the trajectory's
        ``limit_work`` is what their impulses took).  Not applied to the adaptive methods and
        to models with loop closures.
    stabilization, baumgarte, constraint_tol : for models with loop closures (rk4 or euler):
        ``"projection"`` onto the loops after each step to ``constraint_tol`` (default),
        ``"baumgarte"`` with ``baumgarte = (alpha, beta)`` in 1/s, or ``"none"``; see
        :mod:`denoc_bridge.simulation.loops`.  The trajectory then carries
        ``constraint_error`` (per saved state) and ``constraint_drift``.
    save_to : a ``.npy`` file (the suffix is appended when missing) the saved states are
        streamed to as the run goes (the fixed-step methods: rk4 and euler on every kind of
        model, implicit-euler and sdirk2 on trees): memory holds one
        chunk of states (:data:`~denoc_bridge.simulation.stream.STREAM_CHUNK_BYTES`) however
        long the run, and the trajectory returned reads the file lazily (memory-mapped; see
        :mod:`denoc_bridge.simulation.stream` for the format).  The file appears when the run
        ends, completed, interrupted (Ctrl-C) or failed, with the states up to there; until
        then the previous file stays.  The numbers are those of the run in memory, bit for
        bit.  A run whose states would not fit on the disk is refused at once.

    contact, contact_points : ground contact: a :class:`~denoc_bridge.multibody.contact.Ground`
        (or a list of them) with ``method="contact-euler"``, the only method that takes it (the
        others refuse it by name); the points that may touch (ContactPoints or link names; by
        default the ``<collision>`` shapes of the model's URDF).  See
        :mod:`denoc_bridge.simulation.contact`; the trajectory then carries ``contact_force``
        and ``contact_work``; the joint limits hold there too (``limits``).
    hold : a posture-holding joint PD (:func:`~denoc_bridge.simulation.hold.posture_hold`),
        implicit in the contact time stepper (stable at any gains and dt): with
        ``method="contact-euler"`` only.

    Returns
    -------
    Trajectory with t, q, v, a (accelerations at the saved states) and tau (actuation).
    """
    _check_model(model)
    if contact is not None or str(method).lower() in contact_simulation.CONTACT_METHODS:
        return contact_simulation.run(
            model, q0, v0, t_final, dt, tau, method, contact, contact_points, save_every, f_ext, hold, limits
        )
    if hold is not None:
        raise InputError(
            "hold= is the contact time stepper's posture hold (implicit in its step): use "
            "method='contact-euler' with contact=Ground(...), or pass a controller as tau"
        )
    method = method_name(method)
    if isinstance(model, MimicModel):
        q0 = mimic_simulation.initial_configuration(model, q0)
    else:
        q0 = np.ascontiguousarray(_inputs.configuration(model, q0, "q0"), dtype=float)  # normalised, named errors
    v0 = checked_vector(model, v0, model.nv, "v0")
    t_final, dt, n_steps = step_count(t_final, dt, method)
    if dynamics not in ("recursive", "cholesky"):
        raise InputError(f"dynamics must be 'recursive' or 'cholesky', got {dynamics!r}")
    forces = Forces(model, tau, f_ext, n_steps, method)
    forces.cholesky = dynamics == "cholesky"
    forces.passive = bool(passive)
    opts = None
    if model.loops:
        opts = loop_simulation.options(model, method, dynamics, stabilization, baumgarte, constraint_tol)
    limits = bool(limits) and method in FIXED_STEP_METHODS + IMPLICIT_METHODS
    system = system_of(model, forces, passive, opts, limits)
    if limits and system.stops:
        q0 = start_inside_limits(model, q0, system)
    if opts is not None:
        initial_state = (
            mimic_loop_simulation.initial_state if isinstance(model, MimicModel) else loop_simulation.initial_state
        )
        q0, v0 = initial_state(model, q0, v0, opts[2], opts[3])
    if save_to is not None and method not in FIXED_STEP_METHODS + IMPLICIT_METHODS:
        raise InputError(
            f"save_to streams the fixed-step runs (rk4, euler, implicit-euler, sdirk2); method {method!r} keeps "
            "its states in memory (a larger dt saves fewer states)"
        )
    if method in IMPLICIT_METHODS:
        if not isinstance(system, TreeSystem) or dynamics != "recursive":
            raise InputError(
                f"method {method!r} runs trees with the recursive dynamics (Newton with the analytical "
                f"derivatives); '{model.name}' "
                + (
                    "is a MimicModel or has loop closures"
                    if not isinstance(system, TreeSystem)
                    else "asks for cholesky"
                )
                + ": use rk4, euler or an adaptive method (Radau, BDF for stiff runs)"
            )
    steps = ImplicitSteps(system, method, dt) if method in IMPLICIT_METHODS else None
    if method in FIXED_STEP_METHODS + IMPLICIT_METHODS:
        python = steps is not None or forces.python_loop or forces.cholesky or system.kernel_system() is None
        run = (model, q0, v0, dt, n_steps, forces, method, passive)
        if save_to is not None:
            stride = 1 if save_every is None else check_save_every(save_every)
            target = stream_target(save_to)
            n_saves = count_saves(n_steps, stride)
            check_disk(target, record_dtype(system.nq, system.nv, system.loops, system.stops), n_saves, n_steps, stride)
            stream = StateStream(target, system.nq, system.nv, system.loops, system.stops, n_saves, stride)
            try:
                return _run_fixed(*run, stride, progress, system, python, opts, limits, stream, steps)
            finally:
                stream.abort()  # a no-op once the run has written its file; else the previous file stays
        stride = save_stride(model, n_steps, save_every)
        check_saved_states(model, n_steps, stride, count_saves(n_steps, stride), python_lists=python, stream=True)
        return _run_fixed(*run, stride, progress, system, python, opts, limits, None, steps)
    if save_every is not None:
        raise InputError("save_every is for the fixed-step methods; the adaptive ones save every dt")
    rtol, atol, max_step = check_tolerances(rtol, atol, max_step)
    check_saved_states(model, n_steps, 1, int(t_final / dt) + 2, python_lists=True, adaptive=True)
    return run_adaptive(model, q0, v0, t_final, dt, forces, method, passive, rtol, atol, max_step, progress, system)


def _run_fixed(
    model: Model | MimicModel,
    q0: npt.ArrayLike,
    v0: npt.ArrayLike,
    dt: float,
    n_steps: int,
    forces: Forces,
    method: str,
    passive: bool,
    stride: int,
    progress: bool | None,
    system: System,
    python: bool,
    opts: tuple | None,
    limits: bool,
    stream: StateStream | None = None,
    steps: ImplicitSteps | None = None,
) -> Trajectory:
    """The fixed-step run: compiled, or step by step from Python (``python``; the implicit
    methods' ``steps``); a mimic model whose tree alone becomes singular in the compiled run
    starts again from Python in its dense form."""
    if python:
        return run_python(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system, stream, steps)
    try:
        return run_compiled(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system, stream)
    except SingularTree:  # a mimic model's tree alone became singular: its dense form, from the start
        system = system_of(model, forces, passive, opts, limits)
        if stream is not None:
            stream.reset()
        return run_python(model, q0, v0, dt, n_steps, forces, method, passive, stride, progress, system, stream)


def simulate_batch(
    model: Model | MimicModel,
    q0: npt.ArrayLike,
    v0: npt.ArrayLike,
    t_final: float,
    dt: float = 1e-3,
    tau: npt.ArrayLike | None = None,
    method: str = "rk4",
    *,
    passive: bool = True,
    save_every: int | None = None,
    errors: str = "raise",
    limits: bool = True,
    contact: Any = None,
    contact_points: Any = None,
    hold: Any = None,
) -> list[Trajectory | SimulationError]:
    """:func:`simulate` of B cases of one model at once: compiled calls run every case's whole
    fixed-step run, cases in parallel on every core (a tree: threads of the compiled core, the
    GIL released).

    ``q0`` is (B, nq) or one (nq,) configuration for all, ``v0`` (B, nv) or (nv,); ``tau`` None,
    one (nv,) vector for all, (B, nv) (one constant vector per case) or (B, n_steps, nv); B is
    the leading size of whichever of them has one.
    ``method`` is ``"rk4"`` or ``"euler"``; the model has no loop closures, no external
    wrenches and no controller (use :func:`simulate` for those); a
    :class:`~denoc_bridge.constraints.mimic.MimicModel` runs its cases compiled alike
    (``run_batch_chunk`` of ``denoc_bridge/core/run.pyx``).  Each trajectory holds the
    same numbers as :func:`simulate` of that case alone; its ``wall_time`` is the batch's
    wall time divided by B.  A failed case raises its :class:`SimulationError` (``errors=
    "raise"``, the first in case order) or stands in the list as that exception (``errors=
    "return"``).

    Parameters
    ----------
    q0, v0 : arrays
        Initial states, as above (reduced coordinates on a MimicModel).
    t_final : float
        Simulated time in seconds.
    dt : float
        The fixed step (s).
    tau : None or array
        Joint torques, as above; None is zero.
    method : {"rk4", "euler"}
    passive : bool
        Apply the joints' damping ``-damping * v`` and springs, as :func:`simulate`.
    save_every : int, optional
        Keep every k-th step (the final state always); default every step, or fewer when the
        saved states would not fit in memory (as :func:`simulate`).
    errors : {"raise", "return"}
        What a failed case does (above).
    limits : bool
        Enforce the URDF's joint position limits as plastic stops, as :func:`simulate`.
    contact, contact_points, hold : ground contact with ``method="contact-euler"``, as
        :func:`simulate`: the cases then run one after another through the contact time stepper
        (a Python loop over compiled pieces, not one compiled parallel call); ``tau`` None, one
        (nv,) vector or (B, nv).

    Returns
    -------
    list of Trajectory (or SimulationError with ``errors="return"``), one per case, in order.

    Raises
    ------
    InputError
        Bad shapes or values (naming the case and entry), a model with loop closures, an
        unknown method or ``errors`` value.
    SimulationError
        The first failed case, with ``errors="raise"``.
    """
    _check_model(model)
    if contact is not None or hold is not None or str(method).lower() in contact_simulation.CONTACT_METHODS:
        case = partial(
            contact_simulation.run,
            model,
            t_final=t_final,
            dt=dt,
            method=method,
            contact=contact,
            contact_points=contact_points,
            save_every=save_every,
            f_ext=None,
            hold=hold,
        )
        return _contact_batch(q0, v0, tau, errors, case)
    method = method_name(method)
    if method not in FIXED_STEP_METHODS:
        raise InputError(
            f"simulate_batch runs the fixed-step methods {FIXED_STEP_METHODS}; got {method!r} "
            "(use simulate for the adaptive ones)"
        )
    if errors not in ("raise", "return"):
        raise InputError(f"errors must be 'raise' or 'return', got {errors!r}")
    if model.loops:
        raise InputError(
            f"simulate_batch: '{model.name}' has {describe_loops(model.loops)}; use simulate for each case"
        )
    Q0, V0 = _inputs.real_array(q0, "q0"), _inputs.real_array(v0, "v0")
    T0 = None if tau is None else _inputs.real_array(tau, "tau")
    leading = [
        a.shape[0]
        for a, batch_ndim in ((Q0, 2), (V0, 2), (T0, 2), (T0, 3))
        if a is not None and a.ndim == batch_ndim and (a is not T0 or a.shape[-1] == model.nv)
    ]
    B = max(leading, default=1)
    if B == 0:
        raise InputError("q0 (or v0, tau) holds no case: a batch needs at least one initial state (a row)")
    check = (
        partial(mimic_simulation.initial_configuration, model)
        if isinstance(model, MimicModel)
        else partial(_inputs.configuration, model)
    )
    Q0 = np.array(
        [check(row, f"q0[{b}]") for b, row in enumerate(np.broadcast_to(Q0, (B, model.nq)) if Q0.ndim == 1 else Q0)]
    )
    V0 = np.broadcast_to(V0, (B, model.nv)) if V0.ndim == 1 else V0
    if Q0.shape != (B, model.nq) or V0.shape != (B, model.nv):
        raise InputError(
            f"q0 and v0 must have shapes ({B}, {model.nq}) and ({B}, {model.nv}) (or one state for "
            f"all cases), got {np.shape(q0)} and {np.shape(v0)}"
        )
    V0 = np.ascontiguousarray([checked_vector(model, row, model.nv, f"v0[{b}]") for b, row in enumerate(V0)])
    t_final, dt, n_steps = step_count(t_final, dt, method)
    taus = batch_torques(model, tau, B, n_steps)
    forces = [Forces(model, tb, None, n_steps, method) for tb in taus]
    for f in forces:
        f.passive = bool(passive)
    stride = save_stride(model, n_steps, save_every, cases=B)
    n_saves = count_saves(n_steps, stride)
    check_saved_states(model, n_steps, stride, n_saves, cases=B)
    Qs, Vs, As = np.empty((B, n_saves, model.nq)), np.empty((B, n_saves, model.nv)), np.empty((B, n_saves, model.nv))
    table = np.ascontiguousarray(np.stack([f.table for f in forces]))
    system = system_of(model, forces[0], passive, None, limits)
    if system.stops:
        Q0 = np.array([start_inside_limits(model, row, system) for row in Q0])
    done, status, saved = (np.zeros(B, dtype=np.int64) for _ in range(3))
    stops = np.zeros((B, n_saves + 1 if system.stops else 0))
    saves = Saves(Qs, Vs, As, np.zeros((B, 0)), stops)
    Q, V = Q0.copy(), V0.copy()
    args = (system.kernel_system(), system.forcing(table), Q, V, n_steps, dt, stride, saves, done, status, saved)
    t0 = time.perf_counter()  # the compiled core: one case per task, on every core, the GIL released
    run_claimed(core_run.run_batch_chunk, B, *args, method == "euler")
    wall = (time.perf_counter() - t0) / B
    out: list[Trajectory | SimulationError] = []
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
                        limits=limits,
                    )
                )
            except SimulationError as exc:
                if errors == "raise":
                    raise
                out.append(exc)
            continue
        out.append(
            finish_run(
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
                system_of(model, forces[b], passive, None, limits),
                np.zeros(0),
                stops[b],
                float(stops[b, saved[b]]) if system.stops else None,
            )
        )
    return out


def system_of(
    model: Model | MimicModel, forces: Forces, passive: bool, loop_options: tuple | None = None, limits: bool = False
) -> System:
    """The simulation system of a model (the one place that tells a tree, a MimicModel, a tree
    with loop closures and a MimicModel with loops apart); ``loop_options`` as
    :func:`.loops.options` returns them; ``limits``: a tree's joint limits enforced."""
    if model.loops:
        opts = loop_options if loop_options is not None else (0.0, 0.0, False, 1e-12)
        if isinstance(model, MimicModel):
            return MimicLoopSystem(model, forces, passive, opts)
        return LoopSystem(model, forces, passive, opts)
    if isinstance(model, MimicModel):
        return MimicSystem(model, forces, passive, limits)
    return TreeSystem(model, forces, passive, limits)


def start_inside_limits(model: Model | MimicModel, q0: np.ndarray, system: System) -> np.ndarray:
    """q0 with the limited joints of ``system`` (a tree's or a mimic model's) outside their limits
    put on them, and a warning naming them."""
    return start_on_limits(model, q0, system.lim_i, system.lim_f, system.lim_names)


def _contact_batch(
    q0: Any, v0: Any, tau: Any, errors: str, case: Callable[..., Trajectory]
) -> list[Trajectory | SimulationError]:
    """:func:`simulate_batch` with ground contact: each case through the contact time stepper."""
    if errors not in ("raise", "return"):
        raise InputError(f"errors must be 'raise' or 'return', got {errors!r}")
    Q0, V0 = _inputs.real_array(q0, "q0"), _inputs.real_array(v0, "v0")
    T0 = None if tau is None else _inputs.real_array(tau, "tau")
    if T0 is not None and T0.ndim > 2:
        raise InputError(
            "simulate_batch with contact takes tau as None, one (nv,) vector or one per case (B, nv), "
            f"not a table per step {T0.shape}: use simulate with a controller tau(t, q, v)"
        )
    B = max([a.shape[0] for a in (Q0, V0, T0) if a is not None and a.ndim == 2], default=1)
    for name, a in (("q0", Q0), ("v0", V0), ("tau", T0)):
        if a is not None and a.ndim == 2 and a.shape[0] != B:
            raise InputError(f"{name} has {a.shape[0]} cases, another input {B}: one state for all or B of each")
    out: list[Trajectory | SimulationError] = []
    for b in range(B):
        q, v = (Q0[b] if Q0.ndim == 2 else Q0), (V0[b] if V0.ndim == 2 else V0)
        tb = None if T0 is None else (T0[b] if T0.ndim == 2 else T0)
        try:
            out.append(case(q0=q, v0=v, tau=tb))
        except SimulationError as exc:
            if errors == "raise":
                raise SimulationError(f"case {b}: {exc}") from None
            out.append(exc)
    return out
