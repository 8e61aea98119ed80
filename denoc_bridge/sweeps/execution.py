"""Running the cases: batches of cases as tasks, on this machine or on a Dask cluster, and the
progress of a sweep."""

from __future__ import annotations

import contextlib
import io
import logging
import os
import signal
import sys
import threading
from dataclasses import dataclass
from typing import Any

import numpy as np

from denoc_bridge.algorithms.configuration import neutral_configuration
from denoc_bridge.errors import DenocError, InputError, SimulationError
from denoc_bridge.multibody.data import max_threads, set_num_threads
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.api import simulate, simulate_batch
from denoc_bridge.simulation.common import (
    FIXED_STEP_METHODS,
)
from denoc_bridge.sweeps.cases import case_base, case_key, case_state, inputs_of, split_case, vary
from denoc_bridge.sweeps.metrics import error_row, metric_row


def scheduler_problem(scheduler: str) -> str:
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


@dataclass
class Task:
    """One batch of cases that share a model and options."""

    params: dict
    options: dict
    ids: list
    states: list  # per case: the state entries
    inputs: list  # per case: the row's input columns


@dataclass
class Job:
    """What every task needs: the model (or factory), the base state, the options, metrics."""

    source: Any
    base: tuple
    simulate_kwargs: dict
    metrics: dict
    save: bool
    threads: int | None = None  # each worker's share of the batch threads (set_num_threads)
    compress: bool = False


def run_task(job: Job, task: Task) -> list:
    """Run a batch of cases; returns per case (row, npz bytes or None).  Never raises for a
    case: a failing case is a row with its error."""
    if job.threads:  # the share the client computed, at most this worker's CPUs (a remote one may have fewer)
        set_num_threads(min(job.threads, max_threads()))
    try:
        model = case_model(job, task.params)
    except Exception as exc:
        return [(error_row(cid, inp, "error", exc), None) for cid, inp in zip(task.ids, task.inputs)]

    base = job.base if job.base is not None else (neutral_configuration(model), np.zeros(model.nv), None)
    base, kwargs = case_base(base, {**job.simulate_kwargs, **task.options})
    t_final = kwargs.pop("t_final")
    states, errors = [], {}
    for i, st in enumerate(task.states):
        try:
            states.append(case_state(model, base, st))
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
    rows: list[tuple[dict[str, Any], bytes | None]] = []
    for i, (cid, inp) in enumerate(zip(task.ids, task.inputs)):
        if i in errors:
            rows.append((error_row(cid, inp, "error", errors[i]), None))
            continue
        res = results[i]
        traj = res.trajectory if isinstance(res, SimulationError) else res
        row = {
            "case": cid,
            **inp,
            "status": "failed" if isinstance(res, SimulationError) else traj.status,
            "error": str(res) if isinstance(res, SimulationError) else "",
        }
        row.update(metric_row(job.metrics, traj, row))
        blob = None
        if job.save and traj is not None:
            buf = io.BytesIO()
            traj.to_npz(buf, compress=job.compress)
            blob = buf.getvalue()
        rows.append((row, blob))
    return rows


def case_model(job: Job, params):

    if isinstance(job.source, (Model, MimicModel)):
        return vary(job.source, params)
    model = job.source(**params)
    if not isinstance(model, (Model, MimicModel)):
        raise InputError(f"the model factory returned {type(model).__name__}, not a denoc_bridge Model")
    return model


def make_tasks(case_list, ids, done, batch_size) -> list[Task]:
    """The pending cases grouped by (model parameters, options), cut into batches."""
    groups: dict[tuple, list] = {}
    order = []
    for cid, case in zip(ids, case_list):
        if cid in done:
            continue
        state, options, params = split_case(case)
        key = (case_key(params), case_key(options))
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((cid, state, options, params, inputs_of(case)))
    tasks = []
    for key in order:
        members = groups[key]
        for i in range(0, len(members), batch_size):
            chunk = members[i : i + batch_size]
            tasks.append(
                Task(
                    params=chunk[0][3],
                    options=chunk[0][2],
                    ids=[m[0] for m in chunk],
                    states=[m[1] for m in chunk],
                    inputs=[m[4] for m in chunk],
                )
            )
    return tasks


def execute(job, tasks, collect, client, scheduler, workers):
    if scheduler == "inline":
        if client is not None:
            raise InputError("scheduler='inline' runs without Dask; do not pass a client too")
        for task in tasks:
            collect(run_task(job, task))
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
                    with workers_ignore_ctrl_c():
                        own_cluster = LocalCluster(
                            n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
                        )
                except Exception as exc:
                    raise ClusterStartError(start_problem(exc)) from exc
                client = own_client = Client(own_cluster)
                job.threads = max(1, (os.cpu_count() or 1) // n)
        elif scheduler or workers:
            raise InputError("pass either client or scheduler/workers, not both")
        _run_on_client(client, job, tasks, collect, as_completed)
    finally:
        if sys.exc_info()[0] is KeyboardInterrupt:  # Ctrl-C: close the cluster without its log lines
            logging.getLogger("distributed").setLevel(logging.CRITICAL)
            if own_client is not None:  # the workers' cancelled tasks too
                with contextlib.suppress(Exception):
                    own_client.run(_quiet_distributed_logs)
        if own_client is not None:
            own_client.close()
        if own_cluster is not None:
            own_cluster.close()


def _quiet_distributed_logs() -> None:
    logging.getLogger("distributed").setLevel(logging.CRITICAL)


@contextlib.contextmanager
def workers_ignore_ctrl_c():
    """Start worker processes with SIGINT ignored (Python keeps an ignored SIGINT ignored): a
    Ctrl-C at the terminal reaches the whole process group, and only this process should act on
    it (it closes the cluster, :func:`execute`), not each worker with its own traceback."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    saved = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


class ClusterStartError(DenocError, RuntimeError):
    """The worker processes of the sweep's own ``LocalCluster`` did not start."""


_GUARD = (
    "Python starts Dask's worker processes by importing the main module again (the spawn "
    'start method), so a script must call sweep() under `if __name__ == "__main__":`; '
    'or pass scheduler="inline" (no worker processes)'
)


def refuse_in_bootstrapping_worker():
    """A worker process that is still importing the main script must not start a cluster of its
    own (an unguarded script calls sweep() again while being imported there)."""
    import multiprocessing

    if getattr(multiprocessing.current_process(), "_inheriting", False):
        raise ClusterStartError(f"sweep() was called while a worker process imported the main script: {_GUARD}")


def start_problem(exc) -> str:
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
    futures = {client.submit(run_task, job_future, task, pure=False): task for task in tasks}
    for fut in as_completed(futures):
        task = futures[fut]
        try:
            collect(fut.result())
        except Exception as exc:
            collect([(error_row(cid, inp, "lost", exc), None) for cid, inp in zip(task.ids, task.inputs)])


def _identity(x):
    return x


class SweepProgress:
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


ClusterStartError.__module__ = "denoc_bridge.sweeps"  # its public home
