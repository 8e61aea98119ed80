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
(``threads_per_worker=1``, the batch threads shared out), on an existing cluster with
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
that resuming runs them again."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge._resources import check_memory, human_bytes
from denoc_bridge._text import count
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.common import (
    FIXED_STEP_METHODS,
    MAX_STORED,
    count_saves,
    state_bytes,
    step_count,
)
from denoc_bridge.simulation.trajectory import Trajectory
from denoc_bridge.sweeps.cases import (
    SIMULATE_KWARGS,
    case_ids,
    check_cases,
    checked_base_state,
    normalised_cases,
    step_method,
)
from denoc_bridge.sweeps.execution import (
    Job,
    SweepProgress,
    execute,
    make_tasks,
    refuse_in_bootstrapping_worker,
    scheduler_problem,
)
from denoc_bridge.sweeps.metrics import DEFAULT_METRICS, metric_functions
from denoc_bridge.sweeps.results import SweepResult
from denoc_bridge.sweeps.store import finished_rows, make_manifest, prepare_out, save_case, write_summary

__all__ = ["sweep"]


def check_sweep_memory(
    model: Model | MimicModel,
    kwargs: Mapping[str, Any],
    case_list: Sequence[Mapping[str, Any]],
    ids: Sequence[str],
    batch_size: int,
    concurrent: int,
) -> None:
    """Refuse (:class:`~denoc_bridge.errors.ResourceError`, before any case runs) a sweep whose
    largest batch, times the batches running at once on this machine, cannot fit in memory: a
    batch holds its cases' saved states twice (the trajectories and their npz bytes)."""
    defaults = {"dt": 1e-3, "method": "rk4", "save_every": None}
    worst, worst_case, seen = 0, "", set()
    for cid, case in zip(ids, case_list):
        opts = {**defaults, **kwargs, **{k: case[k] for k in ("t_final", *defaults) if k in case}}
        key = (opts["t_final"], opts["dt"], opts["method"], opts["save_every"])
        if key in seen:
            continue
        seen.add(key)
        method = step_method(opts["method"])
        _, _, n_steps = step_count(float(opts["t_final"]), float(opts["dt"]), method)
        fixed = method in FIXED_STEP_METHODS
        stride = (opts["save_every"] or max(1, -(-n_steps * (model.nq + 3 * model.nv) // MAX_STORED))) if fixed else 1
        need = 2 * count_saves(n_steps, int(stride)) * state_bytes(model, python_lists=not fixed)
        if need > worst:
            worst, worst_case = need, cid
    batch = min(batch_size, len(case_list))
    check_memory(
        worst * batch * concurrent,
        f"the sweep's batches ({concurrent} at once, {count(batch, 'case')} each; case {worst_case!r} saves "
        f"{human_bytes(worst / 2)} of states)",
        "pass save_every (every k-th state is kept), a shorter t_final, a smaller batch_size or fewer workers",
    )


def sweep(
    model: Model | MimicModel | Callable[..., Model | MimicModel],
    cases: Iterable[Mapping[str, Any]] | Mapping[str, Any] | str | os.PathLike[str],
    simulate_kwargs: Mapping[str, Any] | None = None,
    *,
    out: str | os.PathLike[str] | None = None,
    metrics: Iterable[str | Callable[[Trajectory], Any]] | Mapping[str, Callable[[Trajectory], Any]] = DEFAULT_METRICS,
    base_state: tuple[npt.ArrayLike, npt.ArrayLike, npt.ArrayLike | None] | None = None,
    client: Any = None,
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
        refuse_in_bootstrapping_worker()
    case_list = normalised_cases(cases)
    ids = case_ids(case_list)
    kwargs = dict(simulate_kwargs or {})
    unknown = set(kwargs) - SIMULATE_KWARGS
    if unknown:
        raise InputError(f"simulate_kwargs: unknown option(s) {sorted(unknown)}")
    if "t_final" not in kwargs and not all("t_final" in c for c in case_list):
        raise InputError("t_final is required, in simulate_kwargs or in every case")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise InputError(f"batch_size must be a positive integer, got {batch_size!r}")

    if not isinstance(model, (Model, MimicModel)) and not callable(model):
        raise InputError(f"model must be a denoc_bridge Model or a factory returning one, got {type(model).__name__}")
    base = checked_base_state(model, base_state)
    fns = metric_functions(metrics)
    why = scheduler_problem(scheduler) if isinstance(scheduler, str) and scheduler != "inline" else ""
    if why:
        raise InputError(f"scheduler {scheduler!r} is not a Dask scheduler address (tcp://HOST:PORT): {why}")
    check_cases(model, base, kwargs, case_list, ids, base_given=base_state is not None)
    if isinstance(model, (Model, MimicModel)) and client is None and (not scheduler or scheduler == "inline"):
        concurrent = 1 if scheduler == "inline" else int(workers or os.cpu_count() or 1)
        check_sweep_memory(model, kwargs, case_list, ids, batch_size, concurrent)
    out_dir = None
    if out is not None:
        out_dir = prepare_out(out, make_manifest(model, base_state, case_list, ids, kwargs, list(fns)), resume)
    done_rows = finished_rows(out_dir, ids) if (out_dir is not None and resume) else {}
    tasks = make_tasks(case_list, ids, done_rows, batch_size)
    job = Job(model, base, kwargs, fns, save_trajectories and out_dir is not None, compress=compress)
    n_todo = sum(len(t.ids) for t in tasks)
    rows = dict(done_rows)
    if tasks:
        with SweepProgress(progress, len(ids), len(done_rows)) as bar:

            def collect(result_rows: list[tuple[dict[str, Any], bytes | None]]) -> None:
                for row, blob in result_rows:
                    if out_dir is not None and row["status"] != "lost":
                        save_case(out_dir, row, blob)
                    rows[row["case"]] = row
                bar.advance(len(result_rows))

            execute(job, tasks, collect, client, scheduler, workers)
    ordered = [rows[c] for c in ids]
    result = SweepResult(ordered, out_dir, time.perf_counter() - t_start, n_todo, len(done_rows))
    if out_dir is not None:
        write_summary(out_dir, result)
    return result
