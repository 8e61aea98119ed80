"""The cases of a sweep: grids, case files, model parameters (``vary``), each case's state and
options, and the checks made before any case runs."""

from __future__ import annotations

import csv
import inspect
import io
import itertools
import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, overload

import numpy as np

from denoc_bridge.algorithms.configuration import neutral_configuration
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.inputs import configuration, real_array
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.api import simulate
from denoc_bridge.simulation.common import (
    FIXED_STEP_METHODS,
    check_save_every,
    checked_vector,
    method_name,
    step_count,
)
from denoc_bridge.simulation.contact import CONTACT_METHODS
from denoc_bridge.simulation.loops import options as loop_options
from denoc_bridge.simulation.mimic import initial_configuration

_STATE_KEYS = ("q0", "v0", "tau")


_OPTION_KEYS = ("t_final", "dt", "method", "save_every", "passive")


_ENTRY = re.compile(r"^(q0|v0|tau)(?:\[(\d+)\]|\.(.+))$")


_CASE_ID = re.compile(r"^[A-Za-z0-9._-]{1,128}$")


_MODEL_SCALARS = ("mass_scale", "length_scale", "damping", "stiffness", "gravity_scale")


_MODEL_PREFIXES = ("mass.", "length_scale.", "damping.", "stiffness.")


def grid(axes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The cases of a full factorial design: every combination of the values of ``axes``
    (``{"mass_scale": [0.5, 1, 2], "v0[0]": np.linspace(0, 1, 5)}`` gives 15 cases), the last
    axis varying fastest."""
    names = list(axes)
    values = [
        list(np.asarray(axes[n]).reshape(-1)) if not isinstance(axes[n], (str, bytes)) else [axes[n]] for n in names
    ]
    return [{n: plain(x) for n, x in zip(names, combo)} for combo in itertools.product(*values)]


def read_cases(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
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
    out: list[dict[str, Any]] = []
    for i, row in enumerate(rows, start=2):
        case: dict[str, Any] = {}
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


def plain(x):
    """A numpy scalar as the Python number (for JSON and CSV)."""
    if isinstance(x, np.generic):
        return x.item()
    return x


_CASES_EXPECTED = "a list of mappings (one per case), a mapping of columns, grid(...) output or a CSV file path"


def normalised_cases(cases) -> list[dict]:
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
        out = [{k: plain(v[i]) for k, v in cases.items()} for i in range(n)]
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


def case_ids(cases) -> list[str]:
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


@overload
def vary(model: Model, params: Mapping[str, Any]) -> Model: ...
@overload
def vary(model: MimicModel, params: Mapping[str, Any]) -> MimicModel: ...
def vary(model: Model | MimicModel, params: Mapping[str, Any]) -> Model | MimicModel:
    """A copy of ``model`` with the sweep's model parameters applied:

    * ``mass_scale``: every link's mass and rotational inertia times s;
    * ``mass.<link>``: that link's mass set (its inertia scaled by the same ratio);
    * ``length_scale`` / ``length_scale.<link>``: the link scaled geometrically at constant
      mass: its centre of mass and the placements of its child joints times s, its
      rotational inertia times s^2 (all links, or one);
    * ``damping`` / ``stiffness`` (every degree of freedom) and ``damping.<joint>`` /
      ``stiffness.<joint>`` (that joint's);
    * ``gravity_scale``: gravity times s.

    A :class:`~denoc_bridge.constraints.mimic.MimicModel` is varied through its tree (``damping.<joint>``
    of a mimic joint is its own damper, acting through its multiplier).
    """
    if not params:
        return model

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


def split_case(case: Mapping):
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


def case_state(model, base, state: Mapping):
    """(q0, v0, tau) of a case: ``base`` with the case's vectors and entries."""

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
        if what == "q0":
            q0[i] = value
        elif what == "v0":
            v0[i] = value
        else:
            if tau is None:
                tau = np.zeros(model.nv)
            tau[i] = value
    return q0, v0, tau


def check_cases(model, base, kwargs, case_list, ids, base_given: bool):
    """Refuse, before any case runs, what would make a case an ``"error"`` row whatever its
    dynamics: bad options, unknown columns, bad model parameters or state entries, two columns
    that give one entry (an InputError naming the case and the column, or ``simulate_kwargs``).
    With a factory only the options are checked here: the columns depend on its models."""

    has_model = isinstance(model, (Model, MimicModel))
    if has_model:
        if base_given:
            try:
                _check_state(model, *base)
            except InputError as exc:
                raise InputError(f"base_state: {exc}") from None
        base, run_kwargs = case_base(base, kwargs)
        controller = callable(run_kwargs.get("tau"))
    seen_options, seen_params = set(), set()
    for cid, case in zip(ids, case_list):
        state, options, params = split_case(case)
        key = case_key(options)
        if key not in seen_options:
            seen_options.add(key)
            _check_options(
                model if has_model else None, {**kwargs, **options}, f"case {cid!r}" if options else "simulate_kwargs"
            )
        if not has_model:
            continue
        try:
            key = case_key(params)
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
            _check_state(model, *case_state(model, base, state))
        except InputError as exc:
            raise InputError(f"case {cid!r}: {exc}") from None


def _check_state(model, q0, v0, tau):
    """The checks of simulate on the initial state and a constant tau (InputError)."""

    if isinstance(model, MimicModel):
        initial_configuration(model, q0)
    else:
        configuration(model, q0, "q0")
    checked_vector(model, v0, model.nv, "v0")
    if tau is not None and np.ndim(tau) == 1:  # a table is checked by simulate
        checked_vector(model, tau, model.nv, "tau")


def step_method(name) -> str:
    """The method ``name`` for the checks of the steps and the saved states: the contact time
    stepper counts as a fixed step (euler's rules: a whole number of steps, save_every)."""
    if str(name).lower() in CONTACT_METHODS:
        return "euler"
    return method_name(name)


def _check_options(model, options: Mapping, where: str):
    """Refuse (an InputError naming ``where``) the options that :func:`~denoc_bridge.simulate`
    refuses before it runs: the method, t_final and dt (a whole number of steps for rk4 and
    euler), save_every, dynamics, and the options of a model with loop closures."""

    defaults = {
        k: p.default
        for k, p in inspect.signature(simulate).parameters.items()
        if p.default is not inspect.Parameter.empty
    }
    opts = {**defaults, **options}
    try:
        method = step_method(opts["method"])
        if "t_final" in opts:
            step_count(_option_number(opts, "t_final"), _option_number(opts, "dt"), method)
        every = opts["save_every"]
        if every is not None:
            check_save_every(every)
            if method not in FIXED_STEP_METHODS:
                raise InputError(
                    f"save_every is for the fixed-step methods {FIXED_STEP_METHODS}; {method} saves every dt"
                )
        if opts["dynamics"] not in ("recursive", "cholesky"):
            raise InputError(f"dynamics must be 'recursive' or 'cholesky', got {opts['dynamics']!r}")
        if model is not None and model.loops:
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


def case_key(mapping) -> str:
    """A mapping of columns as text: equal for equal values (to group cases)."""
    return json.dumps(sorted((k, plain(v)) for k, v in mapping.items()), default=str)


def case_base(base, kwargs):
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


SIMULATE_KWARGS = {
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
    "contact",
    "contact_points",
    "hold",
}


def checked_base_state(model, base_state):
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

    if isinstance(model, (Model, MimicModel)):
        return neutral_configuration(model), np.zeros(model.nv), None
    return None


def inputs_of(case) -> dict:
    """The input columns of a row: scalars as they are, vectors as their JSON text."""
    out = {}
    for k, v in case.items():
        if k == "case":
            continue
        v = plain(v)
        out[k] = v if isinstance(v, (int, float, str, bool)) or v is None else json.dumps(np.asarray(v).tolist())
    return out
