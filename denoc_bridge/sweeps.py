"""Many simulations at once: a sweep of cases on this machine or on a Dask cluster.

:func:`sweep` runs one :func:`~denoc_bridge.simulate` per *case* and returns a tidy
:class:`SweepResult` (one row per case: its inputs, its status, the summary numbers asked
for), with each case's trajectory saved in ``out`` as it finishes.

Cases
-----
A case is a mapping (a row of a CSV file, an element of a list, a point of :func:`grid`).
Its keys:

``case``
    its identifier (letters, digits, ``._-``; default ``case00000``, ``case00001``, ...):
    the name of its files in ``out``.
``q0``, ``v0``, ``tau``
    the initial configuration and velocity and a constant actuation, as vectors in
    Pinocchio's layout; or entry by entry, ``q0[3]``, ``v0[0]``, ``tau[5]``, or by joint name
    for joints with one coordinate, ``q0.shoulder``, ``v0.elbow``, ``tau.wrist``.  Entries not
    given are those of ``base_state`` (default the neutral configuration, at rest, no torque).
``t_final``, ``dt``, ``method``, ``save_every``, ``passive``
    per-case options of :func:`~denoc_bridge.simulate` (the others come from
    ``simulate_kwargs``).
model parameters
    with a :class:`~denoc_bridge.Model`, the keys of :func:`vary`: ``mass_scale``,
    ``mass.<link>``, ``length_scale``, ``length_scale.<link>``, ``damping``,
    ``damping.<joint>``, ``stiffness``, ``stiffness.<joint>``, ``gravity_scale``; with a
    factory (a callable returning a model), every other key is passed to it as a keyword
    argument (``factory(**params)``; it must be picklable to run on a cluster).

Execution
---------
Cases that share a model and options run together through
:func:`~denoc_bridge.simulate_batch` (one compiled call for the batch; fixed-step methods, no
loops, constant torques), the others one by one.  The batches are Dask tasks: by default on a
``LocalCluster`` of ``workers`` processes started for the sweep and closed after it
(``threads_per_worker=1``, numba's threads shared out), on an existing cluster with
``scheduler="tcp://HOST:PORT"`` or ``client=``: the same code path.  ``scheduler="inline"``
runs the same tasks in this process, without Dask.

Results and files
-----------------
``out/sweep.json`` records what identifies the sweep: the model (its name, source and a
SHA-256 of its arrays; a factory by its qualified name), the base state, each case's values,
the options and the metrics.  Each finished case leaves ``out/cases/<case>.npz`` (its
trajectory, :meth:`Trajectory.load` reads it; with ``save_trajectories=True``) and then
``out/cases/<case>.json`` (its row); both are written by this process, atomically, as each
task returns, so a worker that dies loses only the cases it was running (Dask runs them again
elsewhere) and a sweep started again with the same ``out`` (``resume=True``) skips the cases
whose row exists; a folder whose ``sweep.json`` records a different sweep is refused
(:class:`DifferentSweepError`) rather than mixed with this one.  At the end
``out/summary.csv`` (and ``out/summary.parquet`` when pyarrow is installed) hold the table in
case order.

Bad input is refused before any case runs: :func:`sweep` raises
:class:`~denoc_bridge.errors.InputError` naming the option, or the case and the column (an
unknown column, a model parameter or state entry that :func:`~denoc_bridge.simulate` would
refuse, two columns that give the same entry).  With a factory, the columns that depend on the
model are checked when each case's model is built (such a case is an ``"error"`` row).  A case
that fails while it runs is a row with ``status`` ``"failed"`` (the simulation stopped:
:class:`SimulationError`, e.g. a singular articulated inertia or a divergence; its partial
trajectory saved) or ``"error"`` (any other exception, e.g. a factory that raised), with the
message in ``error``; the sweep goes on.  Cases lost to the infrastructure (a task that
killed its workers ``allowed-failures`` times) are ``"lost"`` rows, returned but not saved, so
that resuming runs them again.
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import hashlib
import inspect
import io
import itertools
import json
import math
import os
import re
import sys
import time
import traceback
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ._text import count as _count
from .errors import DenocError, InputError, InputTypeError, SimulationError

__all__ = ["sweep", "grid", "read_cases", "vary", "SweepResult", "DifferentSweepError", "ClusterStartError", "METRICS"]

_STATE_KEYS = ("q0", "v0", "tau")
_OPTION_KEYS = ("t_final", "dt", "method", "save_every", "passive")
_ENTRY = re.compile(r"^(q0|v0|tau)(?:\[(\d+)\]|\.(.+))$")
_CASE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")
_MODEL_SCALARS = ("mass_scale", "length_scale", "damping", "stiffness", "gravity_scale")
_MODEL_PREFIXES = ("mass.", "length_scale.", "damping.", "stiffness.")


# ---------------------------------------------------------------------------- metrics
def _energy_drift(traj):
    d = traj.energy_drift(relative=True)
    return float(np.max(np.abs(d))) if len(d) else float("nan")


#: Summary numbers by name: each maps a Trajectory to a number or a vector (a vector becomes
#: the columns ``name[0]``, ``name[1]``, ...).
METRICS: dict[str, Callable] = {
    "t_end": lambda tr: float(tr.t[-1]) if len(tr) else 0.0,
    "n_steps": lambda tr: int(tr.n_steps),
    "wall_time": lambda tr: float(tr.wall_time),
    "energy_drift": _energy_drift,
    "kinetic_energy_end": lambda tr: float(tr.kinetic_energy[-1]),
    "potential_energy_end": lambda tr: float(tr.potential_energy[-1]),
    "total_energy_end": lambda tr: float(tr.total_energy[-1]),
    "max_abs_v": lambda tr: float(np.max(np.abs(tr.v))) if tr.v.size else 0.0,
    "q_end": lambda tr: tr.q[-1],
    "v_end": lambda tr: tr.v[-1],
}
DEFAULT_METRICS = ("t_end", "wall_time", "energy_drift", "total_energy_end")
#: columns that differ between two runs of the same cases (timings)
TIMING_COLUMNS = ("wall_time",)


def _metric_functions(metrics) -> dict:
    if isinstance(metrics, Mapping):
        items = dict(metrics)
    else:
        items = {}
        for m in metrics:
            if callable(m):
                items[getattr(m, "__name__", f"metric{len(items)}")] = m
            elif m in METRICS:
                items[m] = METRICS[m]
            else:
                raise InputError(f"unknown metric {m!r}; known: {', '.join(METRICS)} (or pass callables)")
    for name, fn in items.items():
        if not callable(fn):
            raise InputError(f"metric {name!r} is not callable")
    return items


# ---------------------------------------------------------------------------- cases
def grid(axes: Mapping[str, Iterable]) -> list[dict]:
    """The cases of a full factorial design: every combination of the values of ``axes``
    (``{"mass_scale": [0.5, 1, 2], "v0[0]": np.linspace(0, 1, 5)}`` gives 15 cases), the last
    axis varying fastest."""
    names = list(axes)
    values = [
        list(np.asarray(axes[n]).reshape(-1)) if not isinstance(axes[n], (str, bytes)) else [axes[n]] for n in names
    ]
    return [{n: _plain(x) for n, x in zip(names, combo)} for combo in itertools.product(*values)]


def read_cases(path) -> list[dict]:
    """Cases from a CSV file with a header row: one case per row, numbers parsed as floats
    (the ``case`` and ``method`` columns stay text; an empty cell leaves the key out)."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"cases file {path}: {exc.strerror or exc}") from None
    header = [k.strip() for k in next(csv.reader(io.StringIO(text)), [])]
    for j, key in enumerate(header):
        if key in header[:j]:
            raise InputError(
                f"cases file {path}: column {key!r} appears twice in the header (columns "
                f"{header.index(key) + 1} and {j + 1})"
            )
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows:
        raise InputError(f"cases file {path}: no rows (a header line and one row per case expected)")
    out = []
    for i, row in enumerate(rows, start=2):
        case = {}
        for key, raw in row.items():
            if key is None:
                raise InputError(f"cases file {path}, line {i}: more cells than header columns")
            key, raw = key.strip(), (raw or "").strip()
            if raw == "":
                continue
            if key in ("case", "method"):
                case[key] = raw
                continue
            try:
                case[key] = float(raw)
            except ValueError:
                raise InputError(f"cases file {path}, line {i}, column {key!r}: {raw!r} is not a number") from None
        out.append(case)
    return out


def _plain(x):
    """A numpy scalar as the Python number (for JSON and CSV)."""
    if isinstance(x, np.generic):
        return x.item()
    return x


_CASES_EXPECTED = "a list of mappings (one per case), a mapping of columns, grid(...) output or a CSV file path"


def _case_list(cases) -> list[dict]:
    if isinstance(cases, (str, os.PathLike)):
        out = read_cases(cases)
    elif isinstance(cases, Mapping):  # columns: {key: [values per case]}
        for k, v in cases.items():
            if isinstance(v, (str, bytes, Mapping)) or not hasattr(v, "__len__") or getattr(v, "ndim", 1) == 0:
                raise InputError(
                    f"cases: a mapping is read as columns (name -> one value per case), but column "
                    f"{k!r} is {type(v).__name__} {v!r}; for a single case pass a list: [{{{k!r}: "
                    f"{v!r}, ...}}]"
                )
        lengths = {k: len(v) for k, v in cases.items()}
        if len(set(lengths.values())) > 1:
            raise InputError(f"cases given as columns must have equal lengths, got {lengths}")
        n = next(iter(lengths.values()), 0)
        out = [{k: _plain(v[i]) for k, v in cases.items()} for i in range(n)]
    else:
        try:
            items = iter(cases)
        except TypeError:
            raise InputTypeError(f"cases must be {_CASES_EXPECTED}; got {type(cases).__name__}") from None
        out = []
        for i, c in enumerate(items):
            if not isinstance(c, Mapping):
                raise InputTypeError(f"cases[{i}] must be a mapping of column names to values, got {type(c).__name__}")
            out.append(dict(c))
    for i, c in enumerate(out):
        for k in c:
            if not isinstance(k, str):
                raise InputTypeError(f"cases[{i}]: column names must be text, got {k!r}")
    return out


def _case_ids(cases) -> list[str]:
    ids = []
    for i, c in enumerate(cases):
        cid = str(c.get("case", f"case{i:05d}"))
        if not _CASE_ID.match(cid):
            raise InputError(f"case {i}: identifier {cid!r} must be 1-128 letters, digits, '.', '_' or '-'")
        ids.append(cid)
    seen = set()
    for cid in ids:
        if cid in seen:
            raise InputError(f"case identifier {cid!r} appears twice")
        seen.add(cid)
    return ids


# ---------------------------------------------------------------------------- model parameters
def vary(model, params: Mapping[str, Any]):
    """A copy of ``model`` with the sweep's model parameters applied:

    * ``mass_scale``: every link's mass and rotational inertia times s;
    * ``mass.<link>``: that link's mass set (its inertia scaled by the same ratio);
    * ``length_scale`` / ``length_scale.<link>``: the link scaled geometrically at constant
      mass: its centre of mass and the placements of its child joints times s, its
      rotational inertia times s^2 (all links, or one);
    * ``damping`` / ``stiffness`` (every degree of freedom) and ``damping.<joint>`` /
      ``stiffness.<joint>`` (that joint's);
    * ``gravity_scale``: gravity times s.

    A :class:`~denoc_bridge.mimic.MimicModel` is varied through its tree (``damping.<joint>``
    of a mimic joint is its own damper, acting through its multiplier).
    """
    if not params:
        return model
    from .mimic import MimicModel

    if isinstance(model, MimicModel):  # the tree varied, the relations kept
        return MimicModel(vary(model.tree, params))
    return model.replace(**_varied_arrays(model, params))


def _varied_arrays(model, params: Mapping[str, Any]) -> dict:
    """The arrays of ``vary(model, params)`` (a Model, not a MimicModel), every parameter
    checked; builds no model (the sweep checks its cases with it before running any)."""
    mass, com, inertia = model.mass.copy(), model.com.copy(), model.inertia.copy()
    translation = model.joint_translation.copy()
    damping, stiffness = model.damping.copy(), model.stiffness.copy()
    gravity = np.array(model.gravity)
    for key, raw in params.items():
        value = _number(key, raw)
        if key == "mass_scale":
            _positive(key, value)
            mass *= value
            inertia *= value
        elif key == "length_scale":
            _positive(key, value)
            com *= value
            inertia *= value * value
            translation[model.parent >= 0] *= value  # a root's placement belongs to the base
        elif key == "gravity_scale":
            gravity = gravity * value
        elif key in ("damping", "stiffness"):
            _non_negative(key, value)
            (damping if key == "damping" else stiffness)[:] = value
        elif key.startswith("mass."):
            k = _link(model, key)
            _non_negative(key, value)
            if model.mass[k] <= 0.0:
                raise InputError(f"{key}: link '{model.link_names[k]}' has zero mass; its inertia cannot be scaled")
            inertia[k] *= value / mass[k]
            mass[k] = value
        elif key.startswith("length_scale."):
            k = _link(model, key)
            _positive(key, value)
            com[k] *= value
            inertia[k] *= value * value
            translation[model.parent == k] *= value
        elif key.startswith(("damping.", "stiffness.")):
            what, k = key.split(".", 1)[0], _joint(model, key)
            _non_negative(key, value)
            i0, n = model.idx_v[k], model.nv_joint[k]
            (damping if what == "damping" else stiffness)[i0 : i0 + n] = value
        else:
            raise InputError(
                f"unknown model parameter {key!r}; known: {', '.join(_MODEL_SCALARS)}, "
                f"{', '.join(p + '<name>' for p in _MODEL_PREFIXES)}"
            )
    return dict(
        mass=mass,
        com=com,
        inertia=inertia,
        joint_translation=translation,
        damping=damping,
        stiffness=stiffness,
        gravity=gravity,
    )


def _number(key, raw) -> float:
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise InputError(f"model parameter {key} = {raw!r} is not a number") from None
    if not math.isfinite(value):
        raise InputError(f"model parameter {key} = {value} is not finite")
    return value


def _positive(key, value):
    if not value > 0:
        raise InputError(f"model parameter {key} = {value} must be positive")


def _non_negative(key, value):
    if value < 0:
        raise InputError(f"model parameter {key} = {value} must not be negative")


def _link(model, key) -> int:
    name = key.split(".", 1)[1]
    if name not in model._link_index:
        raise InputError(f"{key}: '{model.name}' has no link '{name}'")
    return model._link_index[name]


def _joint(model, key) -> int:
    name = key.split(".", 1)[1]
    if name not in model._joint_index:
        raise InputError(f"{key}: '{model.name}' has no joint '{name}'")
    return model._joint_index[name]


# ---------------------------------------------------------------------------- one case's inputs
def _split(case: Mapping):
    """(state entries, simulate options, model parameters) of a case."""
    state, options, params = {}, {}, {}
    for key, value in case.items():
        if key == "case":
            continue
        if key in _STATE_KEYS or _ENTRY.match(key):
            state[key] = value
        elif key in _OPTION_KEYS:
            options[key] = value
        else:
            params[key] = value
    return state, options, params


def _state(model, base, state: Mapping):
    """(q0, v0, tau) of a case: ``base`` with the case's vectors and entries."""
    from .algorithms._inputs import real_array
    from .mimic import MimicModel

    q0 = np.array(base[0], dtype=float)
    v0 = np.array(base[1], dtype=float)
    tau = None if base[2] is None else np.array(base[2], dtype=float)
    given: dict[tuple, str] = {}  # (vector, index) -> the column that sets it
    for key in state:
        m = _ENTRY.match(key)
        if m and m.group(1) in state:
            raise InputError(
                f"columns {m.group(1)!r} and {key!r} both give {key} (give the whole vector or its entries, not both)"
            )
    for key in _STATE_KEYS:
        if key in state:
            arr = real_array(state[key], key)
            if key == "q0":
                q0 = arr
            elif key == "v0":
                v0 = arr
            else:
                tau = arr
    for key, value in state.items():
        m = _ENTRY.match(key)
        if not m:
            continue
        what, index, joint = m.groups()
        size = model.nq if what == "q0" else model.nv
        if index is not None:
            i = int(index)
            if i >= size:
                raise InputError(f"{key}: index {i} is out of range ({what} has {size} entries)")
        else:
            if joint not in model.joint_names:
                raise InputError(f"{key}: '{model.name}' has no joint '{joint}'")
            k = list(model.joint_names).index(joint)
            n = model.nq_joint[k] if what == "q0" else model.nv_joint[k]
            if n == 0 and isinstance(model, MimicModel):
                raise InputError(
                    f"{key}: joint '{joint}' is a mimic joint (it follows the joint it mimics); set that joint instead"
                )
            if n != 1:
                raise InputError(f"{key}: joint '{joint}' has {n} coordinates; give them by index ({what}[i])")
            i = int(model.idx_q[k] if what == "q0" else model.idx_v[k])
        if (what, i) in given:
            raise InputError(f"columns {given[what, i]!r} and {key!r} both give {what}[{i}]")
        given[what, i] = key
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InputError(f"{key} = {value!r} is not a number") from None
        if what == "tau" and tau is None:
            tau = np.zeros(model.nv)
        target = q0 if what == "q0" else (v0 if what == "v0" else tau)
        target[i] = value
    return q0, v0, tau


# ---------------------------------------------------------------------------- checks before any case runs
def _check_cases(model, base, kwargs, case_list, ids, base_given: bool):
    """Refuse, before any case runs, what would make a case an ``"error"`` row whatever its
    dynamics: bad options, unknown columns, bad model parameters or state entries, two columns
    that give one entry (an InputError naming the case and the column, or ``simulate_kwargs``).
    With a factory only the options are checked here: the columns depend on its models."""
    from .mimic import MimicModel
    from .model import Model

    has_model = isinstance(model, (Model, MimicModel))
    if has_model:
        if base_given:
            try:
                _check_state(model, *base)
            except InputError as exc:
                raise InputError(f"base_state: {exc}") from None
        base, run_kwargs = _case_base(base, kwargs)
        controller = callable(run_kwargs.get("tau"))
    seen_options, seen_params = set(), set()
    for cid, case in zip(ids, case_list):
        state, options, params = _split(case)
        key = _key(options)
        if key not in seen_options:
            seen_options.add(key)
            _check_options(
                model if has_model else None, {**kwargs, **options}, f"case {cid!r}" if options else "simulate_kwargs"
            )
        if not has_model:
            continue
        try:
            key = _key(params)
            if key not in seen_params:
                seen_params.add(key)
                _varied_arrays(model.tree if isinstance(model, MimicModel) else model, params)
            if controller:
                column = next((k for k in state if k == "tau" or k.startswith(("tau[", "tau."))), None)
                if column:
                    raise InputError(
                        f"column {column!r} would be ignored: simulate_kwargs['tau'] is a controller "
                        "(a callable) for every case"
                    )
            _check_state(model, *_state(model, base, state))
        except InputError as exc:
            raise InputError(f"case {cid!r}: {exc}") from None


def _check_state(model, q0, v0, tau):
    """The checks of simulate on the initial state and a constant tau (InputError)."""
    from .algorithms._inputs import configuration
    from .mimic import MimicModel
    from .simulation import _vector

    if isinstance(model, MimicModel):
        from .mimic_simulation import initial_configuration

        initial_configuration(model, q0)
    else:
        configuration(model, q0, "q0")
    _vector(model, v0, model.nv, "v0")
    if tau is not None and np.ndim(tau) == 1:  # a table is checked by simulate
        _vector(model, tau, model.nv, "tau")


def _check_options(model, options: Mapping, where: str):
    """Refuse (an InputError naming ``where``) the options that :func:`~denoc_bridge.simulate`
    refuses before it runs: the method, t_final and dt (a whole number of steps for rk4 and
    euler), save_every, dynamics, and the options of a model with loop closures."""
    from .simulation import FIXED_STEP_METHODS, _method_name, _save_every, _steps, simulate

    defaults = {
        k: p.default
        for k, p in inspect.signature(simulate).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    opts = {**defaults, **options}
    try:
        method = _method_name(opts["method"])
        if "t_final" in opts:
            _steps(_option_number(opts, "t_final"), _option_number(opts, "dt"), method)
        every = opts["save_every"]
        if every is not None:
            _save_every(every)
            if method not in FIXED_STEP_METHODS:
                raise InputError(
                    f"save_every is for the fixed-step methods {FIXED_STEP_METHODS}; {method} saves every dt"
                )
        if opts["dynamics"] not in ("recursive", "cholesky"):
            raise InputError(f"dynamics must be 'recursive' or 'cholesky', got {opts['dynamics']!r}")
        if model is not None and model.loops:
            from .loop_simulation import options as loop_options

            loop_options(
                model, method, opts["dynamics"], opts["stabilization"], opts["baumgarte"], opts["constraint_tol"]
            )
    except InputError as exc:
        raise InputError(f"{where}: {exc}") from None


def _option_number(opts, key) -> float:
    try:
        return float(opts[key])
    except (TypeError, ValueError):
        raise InputError(f"{key} = {opts[key]!r} is not a number") from None


def _key(mapping) -> str:
    """A mapping of columns as text: equal for equal values (to group cases)."""
    return json.dumps(sorted((k, _plain(v)) for k, v in mapping.items()), default=str)


def _scheduler_problem(scheduler: str) -> str:
    """Why ``scheduler`` is not a Dask scheduler address ("" if it is one, or if
    dask.distributed, which reads them, is not installed)."""
    try:
        from distributed.comm.addressing import get_address_host_port, parse_address
    except ImportError:
        return ""
    try:
        if parse_address(scheduler)[0] != "inproc":
            get_address_host_port(scheduler)
    except (ValueError, TypeError) as exc:
        return str(exc)
    return ""


# ---------------------------------------------------------------------------- the task (runs on a worker)
@dataclass
class _Task:
    """One batch of cases that share a model and options."""

    params: dict
    options: dict
    ids: list
    states: list  # per case: the state entries
    inputs: list  # per case: the row's input columns


@dataclass
class _Job:
    """What every task needs: the model (or factory), the base state, the options, metrics."""

    source: Any
    base: tuple
    simulate_kwargs: dict
    metrics: dict
    save: bool
    numba_threads: int | None = None
    compress: bool = False


def _run_task(job: _Job, task: _Task) -> list:
    """Run a batch of cases; returns per case (row, npz bytes or None).  Never raises for a
    case: a failing case is a row with its error."""
    if job.numba_threads:
        import numba

        numba.set_num_threads(max(1, min(job.numba_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        model = _model(job, task.params)
    except Exception as exc:
        return [(_error_row(cid, inp, "error", exc), None) for cid, inp in zip(task.ids, task.inputs)]
    from .configuration import neutral_configuration
    from .simulation import FIXED_STEP_METHODS, simulate, simulate_batch

    base = job.base if job.base is not None else (neutral_configuration(model), np.zeros(model.nv), None)
    base, kwargs = _case_base(base, {**job.simulate_kwargs, **task.options})
    t_final = kwargs.pop("t_final")
    states, errors = [], {}
    for i, st in enumerate(task.states):
        try:
            states.append(_state(model, base, st))
        except Exception as exc:
            errors[i] = exc
            states.append(None)
    good = [i for i in range(len(states)) if states[i] is not None]
    results: dict[int, Any] = {}
    batchable = (
        len(good) > 1
        and not model.loops
        and kwargs.get("method", "rk4") in FIXED_STEP_METHODS
        and set(kwargs) <= {"dt", "method", "passive", "save_every"}
        and len({None if states[i][2] is None else "tau" for i in good}) == 1
    )
    if batchable:
        tau = None if states[good[0]][2] is None else np.array([states[i][2] for i in good])
        try:
            out = simulate_batch(
                model,
                np.array([states[i][0] for i in good]),
                np.array([states[i][1] for i in good]),
                t_final,
                tau=tau,
                errors="return",
                **kwargs,
            )
            results.update(zip(good, out))
        except DenocError:  # a bad input of one case: one by one, below
            pass
    for i in good:
        if i in results:
            continue
        q0, v0, tau = states[i]
        try:
            if "tau" in kwargs:  # a controller for every case
                results[i] = simulate(model, q0, v0, t_final, progress=False, **kwargs)
            else:
                results[i] = simulate(model, q0, v0, t_final, tau=tau, progress=False, **kwargs)
        except SimulationError as exc:
            results[i] = exc
        except Exception as exc:
            errors[i] = exc
    rows = []
    for i, (cid, inp) in enumerate(zip(task.ids, task.inputs)):
        if i in errors:
            rows.append((_error_row(cid, inp, "error", errors[i]), None))
            continue
        res = results[i]
        traj = res.trajectory if isinstance(res, SimulationError) else res
        row = {
            "case": cid,
            **inp,
            "status": "failed" if isinstance(res, SimulationError) else traj.status,
            "error": str(res) if isinstance(res, SimulationError) else "",
        }
        row.update(_metrics(job.metrics, traj, row))
        blob = None
        if job.save and traj is not None:
            buf = io.BytesIO()
            traj.to_npz(buf, compress=job.compress)
            blob = buf.getvalue()
        rows.append((row, blob))
    return rows


def _case_base(base, kwargs):
    """(base state, simulate options) of the cases: a constant ``tau`` in the options is the
    default of the cases' tau (a callable one stays an option: a controller for every case)."""
    kwargs = dict(kwargs)
    if "tau" in kwargs:
        tau_all = kwargs.pop("tau")
        if callable(tau_all) or tau_all is None:
            kwargs["tau"] = tau_all
        else:
            base = (base[0], base[1], np.asarray(tau_all, dtype=float))
    return base, kwargs


def _model(job: _Job, params):
    from .mimic import MimicModel
    from .model import Model

    if isinstance(job.source, (Model, MimicModel)):
        return vary(job.source, params)
    model = job.source(**params)
    if not isinstance(model, (Model, MimicModel)):
        raise InputError(f"the model factory returned {type(model).__name__}, not a denoc_bridge Model")
    return model


def _metrics(metrics, traj, row) -> dict:
    out = {}
    for name, fn in metrics.items():
        try:
            value = fn(traj) if traj is not None and len(traj) else float("nan")
        except Exception as exc:
            row["error"] = (row["error"] + "; " if row["error"] else "") + f"metric {name}: {exc}"
            value = float("nan")
        arr = np.asarray(value)
        if arr.ndim == 0:
            out[name] = _plain(arr[()])
        else:
            out.update({f"{name}[{i}]": float(x) for i, x in enumerate(arr.reshape(-1))})
    return out


def _error_row(cid, inputs, status, exc) -> dict:
    message = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, DenocError):  # unexpected: keep where it came from
        tb = traceback.extract_tb(exc.__traceback__)
        if tb:
            message += f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})"
    return {"case": cid, **inputs, "status": status, "error": message}


# ---------------------------------------------------------------------------- the result
class SweepResult:
    """The rows of a sweep in case order (``rows``: one dict per case), with the output folder.

    ``column(name)`` is a NumPy array of one column (NaN where a row lacks it), ``failed`` the
    rows whose status is not ``"completed"``, ``trajectory(case, model)`` loads a saved one,
    ``to_pandas()`` the table as a DataFrame (when pandas is installed).
    """

    def __init__(self, rows: list[dict], out: Path | None, wall_time: float, n_run: int, n_resumed: int):
        self.rows = rows
        self.out = out
        self.wall_time = wall_time
        self.n_run = n_run
        self.n_resumed = n_resumed

    @property
    def columns(self) -> list[str]:
        cols: dict[str, None] = {}
        for r in self.rows:
            cols.update(dict.fromkeys(r))
        return list(cols)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self):
        return iter(self.rows)

    def __repr__(self) -> str:
        return (
            f"SweepResult({_count(len(self.rows), 'case')}, {len(self.rows) - len(self.failed)} completed, "
            f"{len(self.failed)} not; out={str(self.out) if self.out else None})"
        )

    def column(self, name: str) -> np.ndarray:
        if name not in self.columns:
            raise KeyError(f"no column {name!r}; columns: {', '.join(self.columns)}")
        values = [r.get(name, np.nan) for r in self.rows]
        return np.array(values, dtype=object if any(isinstance(v, str) for v in values) else float)

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.rows if r.get("status") != "completed"]

    def trajectory(self, case: str, model):
        """The saved trajectory of ``case`` (for ``model``, or the varied model of that case)."""
        from .trajectory import Trajectory

        if self.out is None:
            raise InputError("this sweep saved no files (out=None)")
        path = self.out / "cases" / f"{case}.npz"
        if not path.exists():
            raise InputError(f"no saved trajectory for case {case!r} ({path})")
        return Trajectory.load(path, model)

    def to_pandas(self):
        """The table as a pandas DataFrame (pandas is not a dependency of denoc_bridge)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError(
                "SweepResult.to_pandas needs pandas, which denoc_bridge does not install: pip install pandas"
            ) from None

        return pd.DataFrame(self.rows, columns=self.columns)

    def summary(self) -> str:
        by = {}
        for r in self.rows:
            by[r.get("status")] = by.get(r.get("status"), 0) + 1
        text = f"{_count(len(self.rows), 'case')}: " + ", ".join(f"{n} {s}" for s, n in sorted(by.items()))
        text += f" ({self.n_run} run now, {self.n_resumed} from an earlier run) in {self.wall_time:.2f} s"
        return text


# ---------------------------------------------------------------------------- the sweep
def sweep(
    model,
    cases,
    simulate_kwargs: Mapping | None = None,
    *,
    out=None,
    metrics=DEFAULT_METRICS,
    base_state=None,
    client=None,
    scheduler: str | None = None,
    workers: int | None = None,
    batch_size: int = 16,
    resume: bool = True,
    save_trajectories: bool = True,
    compress: bool = False,
    progress: bool | None = None,
) -> SweepResult:
    """Run one simulation per case (see the module docstring for the cases, the files and the
    execution).

    Parameters
    ----------
    model : a :class:`~denoc_bridge.Model` or a picklable factory ``f(**params) -> Model``.
    cases : list of mappings, a mapping of columns, :func:`grid` output, or a CSV path.
    simulate_kwargs : options of :func:`~denoc_bridge.simulate`; ``t_final`` is required
        (here or per case).  Callables (``tau``, ``f_ext``) are passed to every case.
    out : folder for the files (created); None keeps everything in memory (no resume).
    metrics : names of :data:`METRICS` and/or callables ``f(trajectory)``, or a mapping of
        names to callables: the summary columns of each row.
    base_state : (q0, v0, tau) that the cases modify; default (neutral, zero, None).
    client / scheduler / workers : where to run: a ``distributed.Client``; or a scheduler
        address ``"tcp://HOST:PORT"``; or ``"inline"`` (this process, no Dask); by default a
        LocalCluster of ``workers`` processes (default: the number of cores).  A script must
        call :func:`sweep` under ``if __name__ == "__main__":`` for that cluster (its workers
        start by importing the script again); without it :class:`ClusterStartError` says so.
    batch_size : cases per task (cases that share a model run as one batch).
    resume : skip the cases already saved in ``out`` (False recomputes them); a folder that
        holds another sweep (model, base state, cases, options or metrics) raises
        :class:`DifferentSweepError`.
    save_trajectories, compress : save each trajectory (npz, uncompressed by default).
    """
    t_start = time.perf_counter()
    if client is None and not scheduler:
        _refuse_in_bootstrapping_worker()
    case_list = _case_list(cases)
    ids = _case_ids(case_list)
    kwargs = dict(simulate_kwargs or {})
    unknown = set(kwargs) - _SIMULATE_KWARGS
    if unknown:
        raise InputError(f"simulate_kwargs: unknown option(s) {sorted(unknown)}")
    if "t_final" not in kwargs and not all("t_final" in c for c in case_list):
        raise InputError("t_final is required, in simulate_kwargs or in every case")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")
    from .mimic import MimicModel
    from .model import Model

    if not isinstance(model, (Model, MimicModel)) and not callable(model):
        raise InputError(f"model must be a denoc_bridge Model or a factory returning one, got {type(model).__name__}")
    base = _base_state(model, base_state)
    fns = _metric_functions(metrics)
    why = _scheduler_problem(scheduler) if isinstance(scheduler, str) and scheduler != "inline" else ""
    if why:
        raise InputError(f"scheduler {scheduler!r} is not a Dask scheduler address (tcp://HOST:PORT): {why}")
    _check_cases(model, base, kwargs, case_list, ids, base_given=base_state is not None)
    out_dir = None
    if out is not None:
        out_dir = _prepare_out(out, _manifest(model, base_state, case_list, ids, kwargs, list(fns)), resume)
    done_rows = _finished_rows(out_dir, ids) if (out_dir is not None and resume) else {}
    tasks = _tasks(case_list, ids, done_rows, batch_size)
    job = _Job(model, base, kwargs, fns, save_trajectories and out_dir is not None, compress=compress)
    n_todo = sum(len(t.ids) for t in tasks)
    rows = dict(done_rows)
    if tasks:
        with _Progress(progress, len(ids), len(done_rows)) as bar:

            def collect(result_rows):
                for row, blob in result_rows:
                    if out_dir is not None and row["status"] != "lost":
                        _save_case(out_dir, row, blob)
                    rows[row["case"]] = row
                bar.advance(len(result_rows))

            _execute(job, tasks, collect, client, scheduler, workers)
    ordered = [rows[c] for c in ids]
    result = SweepResult(ordered, out_dir, time.perf_counter() - t_start, n_todo, len(done_rows))
    if out_dir is not None:
        _write_summary(out_dir, result)
    return result


_SIMULATE_KWARGS = {
    "t_final",
    "dt",
    "tau",
    "method",
    "f_ext",
    "passive",
    "dynamics",
    "save_every",
    "rtol",
    "atol",
    "max_step",
    "stabilization",
    "baumgarte",
    "constraint_tol",
}


def _base_state(model, base_state):
    if base_state is not None:
        try:
            q0, v0, tau = base_state
        except (TypeError, ValueError):
            raise InputError("base_state must be (q0, v0, tau) (tau may be None)") from None
        return (
            np.asarray(q0, dtype=float),
            np.asarray(v0, dtype=float),
            None if tau is None else np.asarray(tau, dtype=float),
        )
    from .mimic import MimicModel
    from .model import Model

    if isinstance(model, (Model, MimicModel)):
        from .configuration import neutral_configuration

        return neutral_configuration(model), np.zeros(model.nv), None
    return None


def _tasks(case_list, ids, done, batch_size) -> list[_Task]:
    """The pending cases grouped by (model parameters, options), cut into batches."""
    groups: dict[tuple, list] = {}
    order = []
    for cid, case in zip(ids, case_list):
        if cid in done:
            continue
        state, options, params = _split(case)
        key = (_key(params), _key(options))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((cid, state, options, params, _inputs_of(case)))
    tasks = []
    for key in order:
        members = groups[key]
        for i in range(0, len(members), batch_size):
            chunk = members[i : i + batch_size]
            tasks.append(
                _Task(
                    params=chunk[0][3],
                    options=chunk[0][2],
                    ids=[m[0] for m in chunk],
                    states=[m[1] for m in chunk],
                    inputs=[m[4] for m in chunk],
                )
            )
    return tasks


def _inputs_of(case) -> dict:
    """The input columns of a row: scalars as they are, vectors as their JSON text."""
    out = {}
    for k, v in case.items():
        if k == "case":
            continue
        v = _plain(v)
        out[k] = v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(np.asarray(v).tolist())
    return out


def _execute(job, tasks, collect, client, scheduler, workers):
    if scheduler == "inline":
        if client is not None:
            raise InputError("scheduler='inline' runs without Dask; do not pass a client too")
        for task in tasks:
            collect(_run_task(job, task))
        return
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise InputError(
            "sweeps on Dask need dask.distributed: pip install 'denoc-bridge[sweep]' (or pass scheduler='inline')"
        ) from None
    own_cluster = own_client = None
    try:
        if client is None:
            if scheduler:
                try:
                    client = own_client = Client(scheduler, timeout="20s")
                except OSError as exc:
                    raise OSError(f"cannot connect to the Dask scheduler at {scheduler}: {exc}") from None
            else:
                n = int(workers or os.cpu_count() or 1)
                if n < 1:
                    raise InputError(f"workers must be at least 1, got {workers}")
                try:
                    own_cluster = LocalCluster(
                        n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
                    )
                except Exception as exc:
                    raise ClusterStartError(_start_problem(exc)) from exc
                client = own_client = Client(own_cluster)
                job.numba_threads = max(1, (os.cpu_count() or 1) // n)
        elif scheduler or workers:
            raise InputError("pass either client or scheduler/workers, not both")
        _run_on_client(client, job, tasks, collect, as_completed)
    finally:
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()


class ClusterStartError(DenocError, RuntimeError):
    """The worker processes of the sweep's own ``LocalCluster`` did not start."""


_GUARD = (
    "Python starts Dask's worker processes by importing the main module again (the spawn "
    'start method), so a script must call sweep() under `if __name__ == "__main__":`; '
    'or pass scheduler="inline" (no worker processes)'
)


def _refuse_in_bootstrapping_worker():
    """A worker process that is still importing the main script must not start a cluster of its
    own (an unguarded script calls sweep() again while being imported there)."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise ClusterStartError(f"sweep() was called while a worker process imported the main script: {_GUARD}")


def _start_problem(exc) -> str:
    main = sys.modules.get("__main__")
    path = getattr(main, "__file__", None)
    why = f"the LocalCluster's worker processes did not start ({type(exc).__name__}: {exc})"
    if path is None:
        return f'{why}; or pass scheduler="inline" (no worker processes)'
    if not os.path.isfile(path):
        return (
            f"{why}: the main module {os.path.basename(path)!r} is not a file that the workers can "
            f'import; run the code from a .py file, under `if __name__ == "__main__":`, or pass '
            f'scheduler="inline"'
        )
    return f"{why}. {_GUARD}"


def _run_on_client(client, job, tasks, collect, as_completed):
    """Submit every task and collect the rows as they complete (the one code path for a local
    cluster and a remote one)."""
    # the job (model, options) goes to the cluster once, as the result of a task: a worker that
    # dies holding it makes the scheduler compute it again (scattered data would be lost)
    job_future = client.submit(_identity, job, pure=False)
    futures = {client.submit(_run_task, job_future, task, pure=False): task for task in tasks}
    for fut in as_completed(futures):
        task = futures[fut]
        try:
            collect(fut.result())
        except Exception as exc:
            collect([(_error_row(cid, inp, "lost", exc), None) for cid, inp in zip(task.ids, task.inputs)])


def _identity(x):
    return x


# ---------------------------------------------------------------------------- files
_FORMAT = "denoc_bridge sweep 2"


class DifferentSweepError(InputError):
    """``out`` holds the files of another sweep: its ``sweep.json`` records another model,
    other cases, options or metrics (``differs``: what differs), so its rows are not this
    sweep's."""

    def __init__(self, out, differs):
        self.out, self.differs = Path(out), list(differs)
        super().__init__(
            f"{out} holds a different sweep (its sweep.json records {', '.join(self.differs)}); use "
            "another folder, or resume=False to run every case again"
        )


def _manifest(model, base_state, case_list, ids, kwargs, metric_names) -> dict:
    """What identifies a sweep (``sweep.json``), as it reads back from JSON."""
    cases = [{"case": cid, **{k: _describe(v) for k, v in c.items() if k != "case"}} for cid, c in zip(ids, case_list)]
    manifest = {
        "format": _FORMAT,
        "model": _model_record(model),
        "base_state": None if base_state is None else [_describe(x) for x in base_state],
        "cases": cases,
        "simulate_kwargs": {k: _describe(v) for k, v in sorted(kwargs.items())},
        "metrics": metric_names,
    }
    return json.loads(json.dumps(manifest))


def _model_record(model) -> dict:
    """A model by its name, source and a SHA-256 of its arrays (a factory by its name)."""
    from .mimic import MimicModel
    from .model import Model

    if not isinstance(model, (Model, MimicModel)):
        return {"factory": _describe(model)}
    tree = model.tree if isinstance(model, MimicModel) else model
    h = hashlib.sha256(type(model).__name__.encode())
    for key in sorted(vars(tree)):
        if not key.startswith("_") and key != "warnings":  # private: caches and derived kernel tables
            _digest(h, key)
            _digest(h, getattr(tree, key))
    _digest(h, tree.gravity)
    source = None if tree.source is None else str(tree.source)
    return {"name": model.name, "type": type(model).__name__, "source": source, "sha256": h.hexdigest()}


def _digest(h, value):
    """Feed ``value`` (arrays, numbers, text, sequences, mappings, dataclasses) to the hash ``h``."""
    if isinstance(value, np.ndarray) and value.dtype.kind != "O":
        h.update(f"array {value.dtype.str} {value.shape};".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, (list, tuple, np.ndarray)):
        h.update(f"sequence {len(value)};".encode())
        for x in value:
            _digest(h, x)
    elif isinstance(value, Mapping):
        h.update(f"mapping {len(value)};".encode())
        for k in sorted(value, key=str):
            _digest(h, k)
            _digest(h, value[k])
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        h.update(f"{type(value).__name__};".encode())
        for f in dataclasses.fields(value):
            _digest(h, getattr(value, f.name))
    else:
        h.update(f"{type(value).__name__} {value!r};".encode())


def _differences(old, new) -> list[str]:
    """What the recorded sweep ``old`` has that ``new`` has not (empty: the same sweep)."""
    if not isinstance(old, dict) or old.get("format") != new["format"]:
        return ["another format (another version of denoc_bridge wrote it, or it cannot be read)"]
    out = []
    for key, what in (
        ("model", "another model"),
        ("base_state", "another base_state"),
        ("cases", "other cases"),
        ("simulate_kwargs", "other options"),
        ("metrics", "other metrics"),
    ):
        before, now = old.get(key), new[key]
        if _canonical(before) == _canonical(now):
            continue
        if key == "model" and isinstance(before, dict) and before.get("name") != now.get("name"):
            what += f" ({before.get('name')!r}, not {now.get('name')!r})"
        elif key == "cases" and isinstance(before, list) and len(before) != len(now):
            what += f" ({len(before)}, not {len(now)})"
        elif key == "cases" and isinstance(before, list):
            first = next(b for b, n in zip(before, now) if _canonical(b) != _canonical(n))
            what += f" (the first that differs: {first.get('case') if isinstance(first, dict) else first!r})"
        out.append(what)
    return out


def _canonical(value) -> str:
    """``value`` (read from JSON) as text, whole numbers as floats: 1 and 1.0 give the same sweep."""

    def norm(v):
        if isinstance(v, int) and not isinstance(v, bool):
            return float(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def _prepare_out(out, manifest, resume) -> Path:
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise InputError(f"out: {out} is a file, not a folder")
    (out / "cases").mkdir(parents=True, exist_ok=True)
    path = out / "sweep.json"
    if resume and (path.exists() or any((out / "cases").glob("*.json"))):
        try:
            old = json.loads(path.read_text())
        except (OSError, ValueError):
            old = None
        differs = _differences(old, manifest)
        if differs:
            raise DifferentSweepError(out, differs)
    _atomic_write(path, json.dumps(manifest, indent=1).encode())
    if not resume:
        for p in (out / "cases").glob("*.json"):
            p.unlink()
    return out


def _describe(v):
    v = _plain(v)
    if isinstance(v, (int, float, str, bool)) or v is None:
        return v
    if isinstance(v, functools.partial):
        return f"{_describe(v.func)} (a functools.partial)"
    if callable(v):  # by name: a repr may hold an address
        named = v if hasattr(v, "__qualname__") else type(v)
        return f"callable {getattr(named, '__module__', '')}.{named.__qualname__}"
    return np.asarray(v).tolist()


def _finished_rows(out_dir, ids) -> dict:
    rows = {}
    for cid in ids:
        p = out_dir / "cases" / f"{cid}.json"
        if p.exists():
            try:
                rows[cid] = json.loads(p.read_text())
            except ValueError:  # a torn file cannot exist (atomic writes); run it again
                continue
    return rows


def _save_case(out_dir, row, blob):
    if blob is not None:
        _atomic_write(out_dir / "cases" / f"{row['case']}.npz", blob)
    _atomic_write(out_dir / "cases" / f"{row['case']}.json", json.dumps(row, default=_plain).encode())


def _atomic_write(path: Path, data: bytes):
    tmp = path.with_name(path.name + f".tmp{os.getpid()}")
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def _write_summary(out_dir, result):
    cols = result.columns
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, restval="", lineterminator="\n")
    w.writeheader()
    for r in result.rows:
        w.writerow({k: repr(v) if isinstance(v, float) else v for k, v in r.items()})
    _atomic_write(out_dir / "summary.csv", buf.getvalue().encode())
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        return
    columns = {}
    for c in cols:
        values = [r.get(c) for r in result.rows]
        if all(isinstance(v, str) or v is None for v in values):
            columns[c] = pa.array(values, type=pa.string())
        else:
            columns[c] = pa.array(
                [float(v) if v is not None and not isinstance(v, str) else float("nan") for v in values],
                type=pa.float64(),
            )
    tmp = out_dir / f"summary.parquet.tmp{os.getpid()}"
    pq.write_table(pa.table(columns), tmp)
    os.replace(tmp, out_dir / "summary.parquet")


# ---------------------------------------------------------------------------- progress
class _Progress:
    def __init__(self, enabled, total, done):
        self.enabled = sys.stderr.isatty() if enabled is None else bool(enabled)
        self.total, self.done = total, done
        self._p = None

    def __enter__(self):
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

            self._p = Progress(
                "sweep",
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                transient=False,
                console=Console(stderr=True),
            )
            self._p.start()
            self._task = self._p.add_task("sweep", total=self.total, completed=self.done)
        return self

    def advance(self, n):
        if self._p is not None:
            self._p.advance(self._task, n)

    def __exit__(self, *exc):
        if self._p is not None:
            self._p.stop()
        return False
