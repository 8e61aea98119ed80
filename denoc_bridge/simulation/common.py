"""What every simulation run shares: the forces of a run (actuation, wrenches, springs and
dampers), the methods, the steps and the saved states, the progress bar, the trajectory a run
returns and the error a failed run raises."""

from __future__ import annotations

import inspect
import math
import sys
import time
import warnings

import numpy as np

from denoc_bridge._resources import MEMORY_FRACTION, available_memory, check_memory, human_bytes
from denoc_bridge._text import did_you_mean
from denoc_bridge.core import configuration as _config
from denoc_bridge.core import systems as ki_
from denoc_bridge.core.systems import Forcing
from denoc_bridge.errors import InputError, InputTypeError, SimulationError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.simulation.trajectory import Trajectory
from denoc_bridge.spatial import internal_to_pin

FIXED_STEP_METHODS = ("rk4", "euler")
#: fixed-step implicit methods of trees (:mod:`.implicit`), Newton with the analytical derivatives
IMPLICIT_METHODS = ("implicit-euler", "sdirk2")


ADAPTIVE_METHODS = ("RK45", "DOP853", "Radau", "BDF", "LSODA")


#: above this many stored numbers, states are saved every few steps (see ``save_every``)
MAX_STORED = 50_000_000


#: a compiled run steps in chunks of about this many seconds between two looks at the progress
#: bar and Ctrl-C (see :func:`next_chunk`)
CHUNK_SECONDS = 0.2
#: the most steps of one chunk, whatever the clock says: on a machine fast enough (or a clock
#: that returns the same time twice) the chunk stops growing here instead of overflowing, and a
#: Ctrl-C still lands within one chunk of the steps
MAX_CHUNK = 1 << 20
#: the least work of one chunk, in steps times velocity DOF (see :func:`least_chunk`), whatever
#: the clock says: a clock with huge steps (a machine much slower than the work) shrank the
#: chunk to one step, and the loop's own cost per chunk (tens of microseconds: the call into the
#: compiled run, the clock, the bar) then cost 3-5 times the steps of a small robot
MIN_CHUNK_WORK = 4096


def run_end(interrupted: bool, failed: bool, t: float) -> tuple[str, str]:
    """``(status, message)`` of a run that stopped at time t: interrupted (Ctrl-C), failed or
    completed (the message says when the user interrupted it; empty otherwise)."""
    if interrupted:
        return "interrupted", f"interrupted by the user at t = {t:.6g} s"
    return ("failed" if failed else "completed"), ""


def limit_scratch_shape(n: int, nv: int, n_rows: int = 0) -> tuple[int, int]:
    """Shape of the joint limits' scratch ``lim_s`` of a compiled run (core/limits.pxi) for n
    limited joints of a tree with nv DOFs and ``n_rows`` constraint rows kept (a mimic model's
    ``K``)."""
    m = n + n_rows
    return 2 * m + 4, max(nv, m, 1)


def least_chunk(nv: int) -> int:
    """The fewest steps of a chunk of a run with ``nv`` velocity DOF: :data:`MIN_CHUNK_WORK` /
    ``nv``, at least 1 and at most :data:`MAX_CHUNK` (682 steps of a 6-DOF arm, a fraction of a
    millisecond; one step of a 4096-DOF chain or more: the clock decides alone)."""
    return max(1, min(MAX_CHUNK, MIN_CHUNK_WORK // max(1, int(nv))))


def next_chunk(chunk: int, elapsed: float, least: int = 1) -> int:
    """The steps of the next chunk of a compiled run whose last ``chunk`` steps took ``elapsed``
    seconds: aimed at :data:`CHUNK_SECONDS`, at most 4x the last one and :data:`MAX_CHUNK`, at
    least ``least`` (:func:`least_chunk`; 1 by default).  Bounded whatever the clock returns: 0 or
    a negative time (a coarse or stepped-back clock) counts as fast, NaN too, a huge time gives
    chunks of ``least`` steps (slow, never stalled)."""
    least = max(1, min(int(least), MAX_CHUNK))
    grown = min(4 * chunk, MAX_CHUNK)
    if not elapsed > 0:
        return max(least, grown)
    return max(least, min(grown, int(min(chunk * CHUNK_SECONDS / elapsed, MAX_CHUNK))))


def method_name(method: str) -> str:
    names = FIXED_STEP_METHODS + IMPLICIT_METHODS + ADAPTIVE_METHODS
    for m in names:
        if str(method).lower() == m.lower():
            return m
    raise InputError(f"method must be one of {', '.join(names)}, got {method!r}{did_you_mean(str(method), names)}")


def checked_vector(model, x, n, name):
    """A checked velocity-sized vector (v0)."""
    x = _inputs.real_array(x, name)
    if x.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) (model '{model.name}'), got {x.shape}")
    if not np.all(np.isfinite(x)):
        k = int(np.flatnonzero(~np.isfinite(x))[0])
        joint = model.joint_label(_inputs._owner(model, k, "v"))
        raise InputError(f"{name}[{k}] = {x[k]} is not finite (joint {joint})")
    return np.ascontiguousarray(x, dtype=float)


def _check_callback(name: str, fn) -> None:
    """A controller ``tau(t, q, v)`` (or ``f_ext(t, q, v)``) that cannot take three arguments is
    named before the run, not by Python's TypeError at the first stage."""
    if fn is None:
        return
    try:
        inspect.signature(fn).bind(0.0, None, None)
    except TypeError:
        raise InputError(
            f"{name} must be a function {name}(t, q, v) of the time and the state; "
            f"{getattr(fn, '__name__', repr(fn))}{inspect.signature(fn)} cannot take those three arguments"
        ) from None
    except ValueError:  # no signature to read (a builtin): the call will tell
        return


class Forces:
    """The user's tau and f_ext in the forms the kernels and the Python loops need."""

    def __init__(self, model, tau, f_ext, n_steps, method):
        nv = model.nv
        self.model = model
        self._links = getattr(model, "tree", model)  # a MimicModel's wrenches act on its tree's links
        self.tau_fn = tau if callable(tau) else None
        self.fext_fn = f_ext if callable(f_ext) else None
        for name, fn in (("tau", self.tau_fn), ("f_ext", self.fext_fn)):
            _check_callback(name, fn)
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
        self.passive = True  # the model's springs and dampers act (simulate's passive=); on the trajectory

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


class Run:
    """The wall clock, the optional progress bar and Ctrl-C of a run: ``with Run(...) as run:``
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


def bad_entry(model, arrays) -> tuple[str, str]:
    """(where, joint): the first non-finite entry of (name, array, 'q' or 'v') triples, as
    "name[i] of joint '...'", and its joint; ("", "") if every entry is finite."""
    for name, arr, kind in arrays:
        bad = np.flatnonzero(~np.isfinite(arr))
        if bad.size:
            i = int(bad[0])
            idx = model.idx_q if kind == "q" else model.idx_v
            k = int(np.searchsorted(idx, i, side="right") - 1)
            return f"{name}[{i}] of joint '{model.joint_names[k]}'", model.joint_names[k]
    return "", ""


def step_count(t_final, dt, method):
    """(t_final, dt, number of steps), checked."""
    t_final, dt = real_number(t_final, "t_final"), real_number(dt, "dt")
    if not (math.isfinite(t_final) and t_final > 0):
        raise InputError(f"t_final must be a positive number of seconds, got {t_final}")
    if not (math.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number of seconds, got {dt}")
    if t_final / dt > 2**62:
        raise InputError(
            f"t_final = {t_final:g} s at dt = {dt:g} s is {t_final / dt:.3g} steps: more than any run can take "
            "(a larger dt or a shorter t_final)"
        )
    n_steps = max(1, int(round(t_final / dt)))
    if method in FIXED_STEP_METHODS + IMPLICIT_METHODS and abs(n_steps * dt - t_final) > 1e-9 * max(1.0, t_final):
        raise InputError(f"t_final = {t_final} is not a whole number of steps dt = {dt}")
    return t_final, dt, n_steps


def real_number(x, name: str) -> float:
    """A real scalar argument as a float, or an error naming it."""
    if x is None:
        raise InputTypeError(f"{name} is None; expected a number")
    arr = _inputs.real_array(x, name)
    if arr.shape != ():
        raise InputError(f"{name} must be a number, got an array of shape {arr.shape}")
    return float(arr)


def check_tolerances(rtol, atol, max_step):
    """The adaptive methods' rtol, atol (positive) and max_step (positive, may be inf), checked."""
    rtol, atol, max_step = real_number(rtol, "rtol"), real_number(atol, "atol"), real_number(max_step, "max_step")
    for name, value in (("rtol", rtol), ("atol", atol)):
        if not (math.isfinite(value) and value > 0):
            raise InputError(f"{name} must be a positive number, got {value}")
    if not max_step > 0:
        raise InputError(f"max_step must be positive (inf: no limit), got {max_step}")
    return rtol, atol, max_step


def save_stride(model, n_steps, save_every, cases: int = 1):
    """The stride of the saved states: ``save_every``, or by default 1 unless ``cases`` runs
    would then store more than :data:`MAX_STORED` numbers (then the smallest stride that fits,
    with a warning)."""
    per_state = cases * (model.nq + 3 * model.nv)
    if save_every is None:
        fits = max(1, MAX_STORED // max(1, per_state) - 1)  # states that fit, the final one aside
        stride = max(1, -(-n_steps // fits))
        while stride > 1 and (n_steps // (stride - 1) + 1) * per_state <= MAX_STORED:
            stride -= 1
        if stride > 1:
            warnings.warn(
                f"saving one step in {stride} only: storing all {n_steps + 1} states of "
                f"'{model.name}'{f' in {cases} cases' if cases > 1 else ''} would hold "
                f"{(n_steps + 1) * per_state:.2e} numbers (pass save_every)",
                stacklevel=3,
            )
        return stride
    return check_save_every(save_every)


def state_bytes(model, python_lists: bool = False) -> int:
    """Bytes one saved state costs a run: q, v, a and tau (and a loop error and a stop energy);
    with ``python_lists`` (the runs stepped from Python), the list of small arrays it is first
    collected in (about 112 bytes per array and the numbers again)."""
    numbers = model.nq + 3 * model.nv + 2
    return 8 * numbers + ((4 * 112 + 8 * numbers) if python_lists else 0)


def check_saved_states(
    model,
    n_steps: int,
    stride: int,
    n_saves: int,
    cases: int = 1,
    python_lists: bool = False,
    adaptive: bool = False,
    stream: bool = False,
) -> None:
    """Refuse (:class:`~denoc_bridge.errors.ResourceError`, at once) a run whose saved states
    cannot fit in memory, naming the figure and the options that help (``stream``: the run could
    stream them to disk, ``save_to``)."""
    per = state_bytes(model, python_lists)
    need = cases * n_saves * per
    available, _ = available_memory()
    if available is None or need <= MEMORY_FRACTION * available:
        return
    who = f"{cases} runs of '{model.name}'" if cases > 1 else f"a run of '{model.name}'"
    what = f"{who} saving {n_saves:,} states of {per} bytes each"
    if adaptive:
        helps = "pass a larger dt (the interval of the saved states) or a shorter t_final"
    else:
        room = max(1.0, MEMORY_FRACTION * available / 2 / (cases * per))  # half the memory
        k = max(stride + 1, int(math.ceil(n_steps / room)))
        helps = f"pass save_every={k} (or more: every k-th state is kept), a shorter t_final or a larger dt"
    if cases > 1:
        helps += ", or fewer cases per call"
    if stream:
        helps += (
            f", or stream the states to disk with save_to='run.npy' (memory then holds one chunk of them; "
            f"{human_bytes(n_saves * per)} on disk)"
        )
    check_memory(need, what, helps)


def check_save_every(save_every) -> int:
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


def count_saves(n_steps, stride):
    """Rows to allocate: every stride-th step from 0, and the final step when stride does not divide n_steps."""
    return n_steps // stride + 1 + (1 if n_steps % stride else 0)


def saved_steps(saved, stride, final_step):
    """The step index of each of ``saved`` rows: every stride-th step, the last one ``final_step``
    (the final state, saved whether or not stride divides it) or None (a run that stopped early)."""
    steps = np.arange(saved) * stride
    if final_step is not None and saved:
        steps[-1] = final_step
    return steps


def limits_failure(t: float) -> SimulationError:
    """The error of a step whose joint-limit stop could not be applied (a tree's or a mimic model's)."""
    return SimulationError(
        f"simulation stopped at t = {t:.6g} s: the joint limits could not be applied (the mass matrix "
        "of the stopped joints is singular)",
        t,
        "",
        None,
    )


def passive_arrays(model, passive):
    use = bool(passive and (np.any(model.damping) or np.any(model.stiffness)))
    return (
        np.ascontiguousarray(model.stiffness),
        np.ascontiguousarray(model.damping),
        np.ascontiguousarray(model.rest_configuration),
        use,
    )


def passive_forces_into(kt, K, D, q_rest, use, q, v, d, out):
    """``out = -K (q (-) q_rest) - D v``, the joint springs and dampers of the tree whose table is
    ``kt`` at (q, v) (zero when not ``use``), with ``d`` (nv,) scratch; returns ``out``."""
    if use:
        _config.difference(kt, q_rest, q, d)
        np.multiply(-K, d, out=out)
        out -= D * v
    else:
        out[:] = 0.0
    return out


class System:
    """What a run integrates (the interface of the runners, :mod:`.runners`): a subclass supplies

    * ``accelerations(t, n, q, v, out)`` -> (status, tau) and ``saved_accelerations``, for the
      stages from Python and the saved states;
    * ``integrate(q, xi, out)``, ``dexpinv(xi, v, out)`` and ``normalise(Q)``: the maps of its
      configuration manifold;
    * ``kernel_system()``: its compiled form (:mod:`denoc_bridge.core.systems`) for the one
      compiled run (``denoc_bridge/core/run.pyx``), or None when it has none;

    and, for constraints that drift (loop closures), ``loops = True`` with ``end_step`` (the
    projection after a step), ``error`` (|phi| at a configuration) and ``drift``.
    """

    loops = False
    #: joint-limit stops: the saved states carry the energy the limits took (``stop_energy``)
    stops = False
    #: the limited joints (``stops``): (n, 2) q and v indices, (n, 2) limits, a name for each (None:
    #: the model's joint at the q index)
    lim_i: np.ndarray = np.zeros((0, 2), np.int64)
    lim_f: np.ndarray = np.zeros((0, 2))
    lim_names: list[str] | None = None
    #: a compiled run that meets a singular tree is rerun from Python (a mimic model's dense form)
    singular_fallback = False
    evals = 0
    nq: int
    nv: int
    forces: Forces
    K: np.ndarray
    D: np.ndarray
    q_rest: np.ndarray
    use_passive: bool

    def kernel_system(self):
        """The compiled form of the system (a named tuple of :mod:`denoc_bridge.core.systems`),
        or None: then its fixed-step runs go stage by stage from Python."""
        return None

    def forcing(self, taus=None) -> Forcing:
        """The compiled run's forces (``taus``: the actuation table, this run's by default)."""
        f = self.forces
        return Forcing(f.mode, f.table if taus is None else taus, f.fext, self.K, self.D, self.q_rest, self.use_passive)

    def end_step(self, q, v, t) -> None:
        """After a step from Python (a projection onto the constraints); may raise SimulationError."""

    def error(self, q) -> float:
        """The constraints' position error at q."""
        return 0.0

    @property
    def drift(self) -> float:
        """The largest error a step left before its projection (NaN: not projected)."""
        return float("nan")

    def failure(self, status, t, stage_arrays, traj) -> SimulationError:
        """The error of a run that stopped with ``status`` at time t."""
        return run_error(self.model, status, t, stage_arrays, traj)  # type: ignore[attr-defined]

    def stop_energy(self) -> float:
        """The energy the joint limits took so far (J; the stops of ``denoc_bridge/core/limits.pxi``)."""
        return 0.0

    def annotate(self, traj, E, stops=None) -> None:
        """The constraint errors of the saved states (``E``) and the drift, and the energy the
        joint-limit stops took up to each (``stops``), on the trajectory."""
        if self.loops:
            traj.constraint_error = np.array(E, dtype=float)
            traj.constraint_drift = self.drift
        if self.stops and stops is not None:
            traj.limit_work = np.array(stops, dtype=float)


def make_trajectory(model, t, Q, V, A, TAU, forces, method, dt, wall, steps, evals, status, message):
    return Trajectory(
        model, t, Q, V, A, TAU, forces.fext_pin, method, dt, wall, steps, evals, status, message, passive=forces.passive
    )


def run_error(model, status, t, stage_arrays, traj):
    if status > 0:
        k = int(status) - 1
        when = "is singular at the initial state" if t == 0 else "became singular"
        msg = (
            f"simulation stopped at t = {t:.6g} s: the articulated inertia of joint "
            f"'{model.joint_names[k]}' {when} (the links it moves offer no inertia to its motion, e.g. a "
            "massless leaf link)"
        )
        return SimulationError(msg, t, model.joint_names[k], traj)
    where, joint = bad_entry(model, stage_arrays)
    msg = (
        f"simulation stopped at t = {t:.6g} s: the state is no longer finite"
        + (f" ({where})" if where else "")
        + "; the trajectory up to the last valid state is attached "
        "(e.trajectory); a smaller dt or a more stable method may help"
    )
    return SimulationError(msg, t, joint, traj)


def batch_torques(model, tau, B, n_steps):
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


def actuation_table(model, forces, steps):
    """The actuation at the saved steps (indices ``steps``) of a run with a constant or tabulated tau."""
    if forces.mode == ki_.TAU_CONSTANT:
        return np.repeat(forces.table, len(steps), axis=0)
    if forces.mode == ki_.TAU_TABLE:
        return forces.table[np.minimum(steps, forces.table.shape[0] - 1)].copy()
    return np.zeros((len(steps), model.nv))


def normalise_rows(model, Q):
    """Unit quaternions and (cos, sin) pairs in each row of Q."""
    Q = Q.copy()
    for starts, size in ((model.quaternion_index, 4), (model.circle_index, 2)):
        for i0 in np.asarray(starts, dtype=int):
            block = Q[:, i0 : i0 + size]
            Q[:, i0 : i0 + size] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return Q
