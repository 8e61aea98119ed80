"""The summary numbers of a case (``METRICS``) and the row of a failed case."""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from denoc_bridge.errors import DenocError, InputError
from denoc_bridge.sweeps.cases import plain


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


def metric_functions(metrics) -> dict:
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


def metric_row(metrics, traj, row) -> dict:
    out = {}
    for name, fn in metrics.items():
        try:
            value = fn(traj) if traj is not None and len(traj) else float("nan")
        except Exception as exc:
            row["error"] = (row["error"] + "; " if row["error"] else "") + f"metric {name}: {exc}"
            value = float("nan")
        arr = np.asarray(value)
        if arr.ndim == 0:
            out[name] = plain(arr[()])
        else:
            out.update({f"{name}[{i}]": float(x) for i, x in enumerate(arr.reshape(-1))})
    return out


def error_row(cid, inputs, status, exc) -> dict:
    message = f"{type(exc).__name__}: {exc}"
    if not isinstance(exc, DenocError):  # unexpected: keep where it came from
        tb = traceback.extract_tb(exc.__traceback__)
        if tb:
            message += f" ({Path(tb[-1].filename).name}:{tb[-1].lineno})"
    return {"case": cid, **inputs, "status": status, "error": message}
