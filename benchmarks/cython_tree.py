"""The compiled tree core (denoc_bridge/core/tree.pyx) against Pinocchio, side by side in one
process: forward and inverse dynamics through their compiled entries (issue 48).

    python benchmarks/cython_tree.py                 # every row
    python benchmarks/cython_tree.py --only panda --repeats 21
    python benchmarks/cython_tree.py --floor --repeats 61  # the per-call floor (issue 48)
    python benchmarks/cython_tree.py --floor --old /tmp/tree.so  # and an older build's, side by side

Rows: the per-call floor (a one-link model: the entry's checks and dispatch, almost no
arithmetic), then forward and inverse dynamics on panda, solo12, talos, a 100-link and a
10,000-link chain.  Each is timed as batches of calls from Python (each batch at least
``--batch-ms``; :func:`timing.per_call`), the implementations interleaved within every repeat
in a rotating order; the table gives the median time per call and the ratio.  ``--clock cpu``
(the default) times the thread's CPU time (``time.thread_time``), which a loaded machine's
preemptions do not inflate; ``--clock wall`` times ``time.perf_counter``.  ``--stat min`` gives
the fastest repeat instead of the median (on a machine shared with other jobs).  The entries run
on the model's table and work array (``model._kt``, ``model.thread_work()``).

``--floor`` times the per-call floor instead (three arrays in, one out): the compiled method
``model._core.forward_dynamics(q, v, tau)`` (a new result; and into a given ``out``), the
public ``db.forward_dynamics(model, q, v, tau)`` and ``pin.aba`` on a one-link chain (a
revolute joint about a coordinate axis, no placement: the least arithmetic), the random
one-link model of the rows above (a general axis and placement) and panda.  Each is a
``timeit`` statement (no Python function around the call, whose 25-30 ns would count), in
batches of ``--batch-ms``, the statements interleaved in a rotating order; the table gives the
minimum and the median over the repeats, ns per call.  ``--old PATH`` loads another build of
``core/tree`` (a copy of its ``.so``, taken before a rebuild) beside the current one and times
its compiled method on the same tables.

History: this script was ``cython_vs_numba.py`` and timed the numba entries the core replaced
beside it, on the same table and work array, until they were deleted (issues 48 and 49; numba
is no longer a dependency).  Its last measurements, Cython / numba, thread CPU time, medians of
15 repeats, us per call, 2026-12-07 (``docs/performance.md``): forward dynamics on the one-link
floor 0.39 / 2.39, panda 1.64 / 3.12, solo12 2.32 / 5.14, talos 4.94 / 8.70, the 100-link chain
9.35 / 10.74, the 10,000-link chain 1052 / 1066; inverse dynamics, measured just before numba's
``inverse_dynamics_fast`` went, panda 0.56x (1.53 / 2.73 us) and the 100-link chain 0.77x
(7.79 / 10.17 us).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.core import tree
from denoc_bridge.testing import random_model

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import CLOCK, per_call, timing_arguments  # the batches of calls the cython_* scripts share

MODELS = {
    "floor (1 link)": lambda: random_model(seed=0, n_links=1, joint_types=(db.JointType.REVOLUTE,)),
    "panda": lambda: db.load_robot("panda"),
    "solo12": lambda: db.load_robot("solo12"),
    "talos": lambda: db.load_robot("talos"),
    "chain 100": lambda: db.generators.chain(100),
    "chain 10,000": lambda: db.generators.chain(10_000),
}


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
    fd_c, id_c = tree.forward_dynamics_fast, tree.inverse_dynamics_fast
    for f in (fd_c, id_c):
        assert f(kt, work, q, v, x, out) == 0
    fns = {
        ("forward", "cython"): lambda: fd_c(kt, work, q, v, x, out),
        ("forward", "pinocchio"): lambda: pin.aba(pm, pd, q, v, x),
        ("inverse", "cython"): lambda: id_c(kt, work, q, v, x, out),
        ("inverse", "pinocchio"): lambda: pin.rnea(pm, pd, q, v, x),
    }
    return fns if pd is not None else {k: f for k, f in fns.items() if k[1] != "pinocchio"}


FLOOR_MODELS = {
    "chain 1": lambda: db.generators.chain(1),
    "random 1 link": MODELS["floor (1 link)"],
    "panda": lambda: db.load_robot("panda"),
}


def old_tree(path: str):
    """Another build of ``denoc_bridge.core.tree`` (a copy of its ``.so``), loaded beside the
    current one without replacing it in ``sys.modules``."""
    spec = importlib.util.spec_from_file_location("denoc_bridge.core.tree", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def floor(args) -> dict[tuple[str, str], list[float]]:
    """The per-call floor table (``--floor``): ns per call, minimum and median of the repeats;
    returns the seconds per call of every repeat, by (model, call)."""
    old = old_tree(args.old) if args.old else None
    stmts: dict[tuple[str, str], str] = {}
    names: dict[str, object] = {"db": db, "pin": pin}
    for name, make in FLOOR_MODELS.items():
        if args.only and args.only not in name:
            continue
        model = make()
        rng = np.random.default_rng(0)
        k = len(names)
        pm = db.to_pinocchio(model)
        names.update({
            f"m{k}": model, f"c{k}": model._core, f"q{k}": db.random_configuration(model, rng),
            f"v{k}": rng.standard_normal(model.nv), f"t{k}": rng.standard_normal(model.nv),
            f"o{k}": np.empty(model.nv), f"pm{k}": pm, f"pd{k}": pm.createData(),
        })  # fmt: skip
        state = f"q{k}, v{k}, t{k}"
        assert type(model._core.forward_dynamics(names[f"q{k}"], names[f"v{k}"], names[f"t{k}"])) is np.ndarray
        stmts[name, "model._core.forward_dynamics"] = f"c{k}.forward_dynamics({state})"
        stmts[name, "  ... into out"] = f"c{k}.forward_dynamics({state}, o{k})"
        if old is not None:
            names[f"old{k}"] = old.CompiledTree(model._kt)
            stmts[name, "  ... the old build"] = f"old{k}.forward_dynamics({state})"
            stmts[name, "  ... the old build, into out"] = f"old{k}.forward_dynamics({state}, o{k})"
        stmts[name, "db.forward_dynamics"] = f"db.forward_dynamics(m{k}, {state})"
        stmts[name, "pin.aba"] = f"pin.aba(pm{k}, pd{k}, {state})"
    clock = CLOCK[args.clock]
    timers = {key: timeit.Timer(s, globals=names, timer=clock) for key, s in stmts.items()}
    counts = {}
    for key, t in timers.items():  # a batch of at least --batch-ms each
        n = 1
        while t.timeit(n) < args.batch_ms / 1e3:
            n *= 2
        counts[key] = n
    keys = list(timers)
    times: dict[tuple[str, str], list[float]] = {key: [] for key in keys}
    for r in range(args.repeats):
        for key in keys[r % len(keys) :] + keys[: r % len(keys)]:  # each one first in turn
            times[key].append(timers[key].timeit(counts[key]) / counts[key])
    print(f"{'model':<14} {'call':<32} {'min ns':>8} {'median ns':>10}")
    for (name, call), ts in times.items():
        print(f"{name:<14} {call:<32} {min(ts) * 1e9:>8.1f} {statistics.median(ts) * 1e9:>10.1f}")
    return times


def main(argv=None) -> dict[tuple[str, str], list[float]] | None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    timing_arguments(p)
    p.add_argument("--stat", choices=["median", "min"], default="median", help="of the repeats")
    p.add_argument("--floor", action="store_true", help="the per-call floor table instead")
    p.add_argument("--old", help="with --floor: an older build's core/tree .so, timed beside this one")
    args = p.parse_args(argv)
    if args.floor:
        return floor(args)
    print(f"{'model':<15} {'algorithm':<8} {'cython us':>10} {'pin us':>9}  cy/pin")
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
            c, pn = (stat(times.get((alg, i), [float("nan")])) * 1e6 for i in ("cython", "pinocchio"))
            # nan where Pinocchio is missing: its Data does not fit at 10,000 DOF
            print(f"{name:<15} {alg:<8} {c:>10.3f} {pn:>9.3f}  {c / pn:>6.2f}", flush=True)
    return None


if __name__ == "__main__":
    main()
