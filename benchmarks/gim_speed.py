"""The GIM, its block factors and its inverse next to Pinocchio's CRBA and computeMinverse, in one
process (issue 22).

    python benchmarks/gim_speed.py                      # this checkout against Pinocchio
    python benchmarks/gim_speed.py --before 6b85f1a     # ... and against the package of a commit
    python benchmarks/gim_speed.py --repeats 31 --only panda

Rows: ``mass_matrix`` vs ``pin.crba`` and ``inverse_mass_matrix`` vs ``pin.computeMinverse`` on
panda, talos, solo12 (free-flyers) and the 100- and 300-DOF benchmark chains
(:func:`denoc_bridge.io.robots.serial_chain`); ``udut`` and ``inverse_udut`` against
``mass_matrix`` (the issue's target: within 1.5x); ``inverse_dynamics`` vs ``pin.rnea`` on panda;
batches of B panda states (``mass_matrix(model, Q)``, ``inverse_mass_matrix(model, Q)``) against
a Python loop over ``pin.crba`` / ``pin.computeMinverse`` that fills a (B, nv, nv) array.

The Pinocchio models are the conversions of the same models (``to_pinocchio``).  Before timing,
every result is checked against Pinocchio's (relative difference max|a - b| / max|b| at most
1e-12; printed in the last column) and the batches against the single calls (bit for bit).  With
``--before REV`` the package of commit REV is loaded beside this one (as in
``benchmarks/commits_ab.py``) and timed on the same calls.  Timings are medians of interleaved
repeats (a, b, [old], a, b, ...) of batches of calls from Python, each batch at least 20 ms: the
machine's load moves every column alike, so read the ratios.  ``--clock cpu`` times the single
calls by this thread's CPU time instead (minima of the repeats): steadier on a shared machine,
where a loaded core stretches wall-time medians unevenly.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import denoc_bridge as db  # noqa: E402
from denoc_bridge.io.pinocchio_io import to_pinocchio  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402
from denoc_bridge.validation import relative_error  # noqa: E402

TOL = 1e-12


#: the clock of the single-call rows: wall time (perf_counter, medians) or, with ``--clock cpu``,
#: this thread's CPU time (thread_time, minima of the repeats): the time the calls ran, without the
#: time the shared machine gave the core to others.  Batches (two threads) are always wall time.
CLOCK = {"wall": (time.perf_counter, statistics.median), "cpu": (time.thread_time, min)}
clock, summary = CLOCK["wall"]


def per_call(fn, min_time: float = 0.02, timer=None) -> float:
    timer = timer or clock
    n = 1
    while True:
        t0 = timer()
        for _ in range(n):
            fn()
        dt = timer() - t0
        if dt > min_time:
            return dt / n
        n *= 2


def interleaved(fns, repeats: int, wall: bool = False) -> list[float]:
    """Medians (or minima, ``--clock cpu``) in s per call of interleaved repeats of the callables
    (None: not timed); ``wall``: wall time and medians whatever the clock (parallel batches)."""
    timer, reduce = CLOCK["wall"] if wall else (clock, summary)
    for f in fns:
        if f is not None:
            f()
    ts: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for f, t in zip(fns, ts):
            if f is not None:
                t.append(per_call(f, timer=timer))
    return [reduce(t) if t else float("nan") for t in ts]


def build(pkg, name: str):
    if name.startswith("chain"):
        return pkg.io.robots.serial_chain(int(name[5:])) if pkg is not db else serial_chain(int(name[5:]))
    return pkg.load_robot(name)


def pin_model(model):
    pm = to_pinocchio(model)
    # pin.Data allocates n^3 derivative tensors (half of createData's): 0.9 GB at 300 DOF
    return pm, (pin.Data(pm) if model.nv > 150 else pm.createData())


def us(t: float) -> str:
    return "n/a" if t != t else f"{t * 1e6:9.2f}"


def row(label: str, times: list[float], rel: float | str, has_old: bool) -> None:
    new, ref = times[0], times[1]
    cols = f"{label:44s} {us(new)} {us(ref)} {new / ref:6.2f}x"
    if has_old:
        cols += f"  {us(times[2])} {times[2] / ref:6.2f}x"
    cols += f"   {rel if isinstance(rel, str) else f'{rel:.1e}'}"
    print(cols, flush=True)


def check(label: str, ours, ref) -> float:
    err = relative_error(np.asarray(ours), np.asarray(ref))
    if not err <= TOL:
        raise SystemExit(f"{label}: relative difference {err:.2e} to Pinocchio > {TOL:g}: not timed")
    return err


def bound(f, *args):
    return lambda: f(*args)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=None, help="a commit whose package is timed beside this one")
    parser.add_argument("--repeats", type=int, default=11)
    parser.add_argument("--batch", type=int, default=4096)
    parser.add_argument("--only", nargs="*", default=[], help="rows whose label contains one of these words")
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall", help="single calls: wall or thread CPU time")
    args = parser.parse_args(argv)
    global clock, summary
    clock, summary = CLOCK[args.clock]
    old = None
    if args.before:
        from commits_ab import load_commit

        old = load_commit(args.before)
    has_old = old is not None
    print(
        f"denoc_bridge {db.__version__} ({ROOT}); Pinocchio {pin.__version__}; batch threads "
        f"{db.get_num_threads()}; load {os.getloadavg()[0]:.2f}; medians of "
        f"{args.repeats} interleaved repeats"
        + ("" if args.clock == "wall" else " (single calls: minima of this thread's CPU time)")
    )
    head = f"{'case':44s} {'ours us':>9s} {'pin us':>9s} {'ratio':>7s}"
    if has_old:
        head += f"  {'before us':>9s} {'ratio':>7s}"
    print(head + "   rel. diff")

    def want(label: str) -> bool:
        return not args.only or any(w in label for w in args.only)

    rng = np.random.default_rng(0)
    for name in ("panda", "talos", "solo12", "chain100", "chain300"):
        if not any(want(f"{fn} {name}") for fn in ("mass_matrix", "inverse_mass_matrix", "udut")):
            continue
        m = build(db, name)
        pm, pd = pin_model(m)
        q = db.random_configuration(m, rng)
        mo = build(old, name) if has_old else None
        for fn, pfn in (("mass_matrix", pin.crba), ("inverse_mass_matrix", pin.computeMinverse)):
            label = f"{fn} {name} ({m.nv} DOF)"
            if not want(label):
                continue
            ours = getattr(db, fn)
            rel = check(label, ours(m, q), pfn(pm, pd, q))
            fo = bound(getattr(old, fn), mo, q) if has_old else None
            row(label, interleaved([lambda: ours(m, q), lambda: pfn(pm, pd, q), fo], args.repeats), rel, has_old)
        if name in ("panda", "talos", "solo12"):
            M = db.mass_matrix(m, q)
            for fn in ("udut", "inverse_udut"):
                label = f"{fn} {name} vs our mass_matrix"
                if not want(label):
                    continue
                f = getattr(db, fn)
                A, B = f(m, q)
                if fn == "udut":
                    err = relative_error(A @ B @ A.T, M)
                else:
                    err = relative_error(A.T @ B @ A, db.inverse_mass_matrix(m, q))
                fo = bound(getattr(old, fn), mo, q) if has_old else None
                times = interleaved([lambda: f(m, q), lambda: db.mass_matrix(m, q), fo], args.repeats)
                row(label, times, f"{err:.1e} (vs I / I^-1)", has_old)
    m = db.load_robot("panda")
    pm, pd = pin_model(m)
    q, v, a = db.random_configuration(m, rng), rng.standard_normal(m.nv), rng.standard_normal(m.nv)
    if want("inverse_dynamics panda"):
        mo = build(old, "panda") if has_old else None
        rel = check("inverse_dynamics", db.inverse_dynamics(m, q, v, a), pin.rnea(pm, pd, q, v, a))
        fo = (lambda: old.inverse_dynamics(mo, q, v, a)) if has_old else None
        times = interleaved(
            [lambda: db.inverse_dynamics(m, q, v, a), lambda: pin.rnea(pm, pd, q, v, a), fo], args.repeats
        )
        row("inverse_dynamics panda", times, rel, has_old)
    B = args.batch
    Q = np.array([db.random_configuration(m, rng) for _ in range(B)])
    out = np.empty((B, m.nv, m.nv))
    for fn, pfn in (("mass_matrix", pin.crba), ("inverse_mass_matrix", pin.computeMinverse)):
        label = f"{fn} batch B={B} panda (per state)"
        if not want(label):
            continue
        ours = getattr(db, fn)

        def loop(pfn=pfn):
            for i in range(B):
                out[i] = pfn(pm, pd, Q[i])

        res = ours(m, Q)
        loop()
        rel = check(label, res, out)
        if not all(np.array_equal(res[i], ours(m, Q[i])) for i in range(B)):
            raise SystemExit(f"{label}: the batch differs from the single calls")
        buf = np.empty_like(out)
        times = interleaved([lambda: ours(m, Q, out=buf), loop], max(3, args.repeats // 2), wall=True)
        row(label, [t / B for t in times] + [float("nan")], rel, has_old)
    return 0


if __name__ == "__main__":
    sys.exit(main())
