"""The compiled tree core (denoc_bridge/core/tree.pyx) against the numba entries it replaces and
against Pinocchio, side by side in one process (issue 48).

    python benchmarks/cython_vs_numba.py                 # every row
    python benchmarks/cython_vs_numba.py --only panda --repeats 21

Rows: the per-call floor (a one-link model: the entry's checks and dispatch, almost no
arithmetic), then forward and inverse dynamics on panda, solo12, talos, a 100-link and a
10,000-link chain.  Each is timed as batches of calls from Python (each batch at least
``--batch-ms``), the three implementations interleaved within every repeat in a rotating
order; the table gives the median time per call and the ratios.  ``--clock cpu`` (the default)
times the thread's CPU time (``time.thread_time``), which a loaded machine's preemptions do not
inflate; ``--clock wall`` times ``time.perf_counter``.  ``--stat min`` gives the fastest repeat
instead of the median (on a machine shared with other jobs).  The Cython and numba entries
run on the same model table and work array (``model._kt``, ``model.thread_work()``).

numba's ``inverse_dynamics_fast`` is gone (nothing called it once the Python layer moved to the
compiled core), so the inverse rows have no numba column.  Measured here just before it went
(2 loaded cores, CPU time, medians), Cython / numba: panda 0.56 (1.53 / 2.73 us), a 100-link
chain 0.77 (7.79 / 10.17 us).  Forward dynamics keeps its numba column: the contact runs still
call numba's ``forward_dynamics_fast``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.core import tree
from denoc_bridge.kernels import entry
from denoc_bridge.testing import random_model

MODELS = {
    "floor (1 link)": lambda: random_model(seed=0, n_links=1, joint_types=(db.JointType.REVOLUTE,)),
    "panda": lambda: db.load_robot("panda"),
    "solo12": lambda: db.load_robot("solo12"),
    "talos": lambda: db.load_robot("talos"),
    "chain 100": lambda: db.generators.chain(100),
    "chain 10,000": lambda: db.generators.chain(10_000),
}


CLOCK = {"cpu": time.thread_time, "wall": time.perf_counter}


def per_call(fn, batch_s: float, clock=time.thread_time) -> float:
    """Seconds per call of ``fn`` over a batch of at least ``batch_s`` (the count fixed on the
    first call)."""
    n = per_call.counts.get(fn)
    if n is None:
        n, t = 1, 0.0
        while t < batch_s:
            n *= 2
            t0 = clock()
            for _ in range(n):
                fn()
            t = clock() - t0
        per_call.counts[fn] = n
    t0 = clock()
    for _ in range(n):
        fn()
    return (clock() - t0) / n


per_call.counts = {}


def calls(model: db.Model):
    """{(algorithm, implementation): a call without arguments}."""
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    v, x = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    kt, work, out = model._kt, model.thread_work(), np.empty(model.nv)
    pm = db.to_pinocchio(model)
    try:
        pd = pm.createData()
    except MemoryError:  # Pinocchio's Data holds nv x nv matrices: 10,000 DOF do not fit
        pd = None
    fd_c, fd_n, id_c = tree.forward_dynamics_fast, entry.forward_dynamics_fast, tree.inverse_dynamics_fast
    for f in (fd_c, fd_n, id_c):
        assert f(kt, work, q, v, x, out) == 0
    fns = {
        ("forward", "cython"): lambda: fd_c(kt, work, q, v, x, out),
        ("forward", "numba"): lambda: fd_n(kt, work, q, v, x, out),
        ("forward", "pinocchio"): lambda: pin.aba(pm, pd, q, v, x),
        ("inverse", "cython"): lambda: id_c(kt, work, q, v, x, out),
        ("inverse", "pinocchio"): lambda: pin.rnea(pm, pd, q, v, x),
    }
    return fns if pd is not None else {k: f for k, f in fns.items() if k[1] != "pinocchio"}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--only", help="rows whose name contains this")
    p.add_argument("--clock", choices=list(CLOCK), default="cpu")
    p.add_argument("--stat", choices=["median", "min"], default="median", help="of the repeats")
    args = p.parse_args(argv)
    print(f"{'model':<15} {'algorithm':<8} {'cython us':>10} {'numba us':>9} {'pin us':>9}  cy/numba  cy/pin")
    for name, make in MODELS.items():
        if args.only and args.only not in name:
            continue
        fns = calls(make())
        keys = list(fns)
        times = {k: [] for k in keys}
        for r in range(args.repeats):
            order = keys[r % len(keys) :] + keys[: r % len(keys)]  # each one first in turn
            for k in order:
                times[k].append(per_call(fns[k], args.batch_ms / 1e3, CLOCK[args.clock]))
        for alg in ("forward", "inverse"):
            stat = statistics.median if args.stat == "median" else min
            c, n, pn = (stat(times.get((alg, i), [float("nan")])) * 1e6 for i in ("cython", "numba", "pinocchio"))
            # nan where a column is missing: no numba inverse dynamics, no Pinocchio at 10,000 DOF
            print(f"{name:<15} {alg:<8} {c:>10.3f} {n:>9.3f} {pn:>9.3f}  {c / n:>8.2f}  {c / pn:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
