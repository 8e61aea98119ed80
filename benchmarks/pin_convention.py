"""Pinocchio's calling convention (:mod:`denoc_bridge.pin`) next to Pinocchio's own functions, and
what the convention costs on top of denoc_bridge's own API, in one process.

    python benchmarks/pin_convention.py                 # panda, talos, solo12
    python benchmarks/pin_convention.py --repeats 31 --robots panda

1. ``dbp.aba``, ``dbp.rnea``, ``dbp.crba``, ``dbp.computeMinverse`` (and ``aba`` with ``fext``)
   against ``pin.aba`` & co. with the same ``pinocchio.Model``, ``Data`` and state (example-robot-data's
   loaders: talos and solo12 with their free-flyer);
2. the cost of the convention: ``dbp.aba(pin_model, data, ...)`` against
   ``db.forward_dynamics(converted_model, ...)`` (the same kernel), split into the pure cache
   lookup (the fast path's three checks: model entry, known ``data``, unchanged gravity) and the
   assignment ``data.ddq = out``.

Timings are medians of interleaved repeats (a, b, a, b, ...) of batches of calls from Python, each
batch at least 20 ms; the machine's load moves both sides alike, so read the ratios.  The results
are checked first (relative difference to Pinocchio printed per row).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import timeit
import warnings
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import denoc_bridge as db  # noqa: E402
import denoc_bridge.pin as dbp  # noqa: E402


def per_call(fn, min_time: float = 0.02) -> float:
    n = 1
    while True:
        t0 = timeit.default_timer()
        for _ in range(n):
            fn()
        dt = timeit.default_timer() - t0
        if dt > min_time:
            return dt / n
        n *= 2


def side_by_side(fa, fb, repeats: int) -> tuple[float, float]:
    """Medians (s per call) of interleaved repeats of fa and fb."""
    fa(), fb()
    ta, tb = [], []
    for _ in range(repeats):
        ta.append(per_call(fa))
        tb.append(per_call(fb))
    return statistics.median(ta), statistics.median(tb)


def robot(name: str):
    from example_robot_data import load

    pm = load(name).model
    rng = np.random.default_rng(0)
    q = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
    v, x = rng.standard_normal(pm.nv), rng.standard_normal(pm.nv)
    fext = pin.StdVec_Force()
    for _ in range(pm.njoints):
        fext.append(pin.Force(rng.standard_normal(6)))
    return pm, q, v, x, fext


def rel(a, b) -> float:
    return float(np.abs(np.asarray(a) - b).max() / max(np.abs(b).max(), 1e-300))


def lookup_ns(pm, data, repeats: int) -> tuple[float, float]:
    """(pure cache lookup, data.ddq assignment) in ns per call: the fast path's statements
    inline in a timeit loop, minus the same loop without them."""
    e = dbp._cache[id(pm)]
    out = np.empty(pm.nv)
    g = dict(_get=dbp._cache.get, model=pm, data=data, out=out, e=e)
    hit = "e = _get(id(model))\nok = e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes"
    write = "data.ddq = out"

    def ns(stmt: str) -> float:
        return min(timeit.repeat(stmt, globals=g, number=100_000, repeat=repeats)) / 100_000 * 1e9

    base = ns("pass")
    return ns(hit) - base, ns(write) - base


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robots", nargs="*", default=["panda", "talos", "solo12"])
    parser.add_argument("--repeats", type=int, default=15)
    args = parser.parse_args(argv)
    print(f"denoc_bridge {db.__version__}, Pinocchio {pin.__version__}; medians of {args.repeats} interleaved repeats")
    print(f"{'robot':8s} {'function':24s} {'denoc_bridge.pin':>16s} {'pinocchio':>12s} {'ratio':>7s} {'rel. diff':>9s}")
    for name in args.robots:
        pm, q, v, x, fext = robot(name)
        d_ours, d_pin = pm.createData(), pm.createData()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", db.PhysicsWarning)  # round-off inertias of real files
            dbp.aba(pm, d_ours, q, v, x)  # converts once
        tau = pin.rnea(pm, d_pin, q, v, x).copy()
        cases = [
            ("aba", (q, v, tau)),
            ("aba (fext)", (q, v, tau, fext)),
            ("rnea", (q, v, x)),
            ("rnea (fext)", (q, v, x, fext)),
            ("crba", (q,)),
            ("computeMinverse", (q,)),
            ("nonLinearEffects", (q, v)),
            ("computeGeneralizedGravity", (q,)),
        ]
        label = f"{name} ({pm.nv} DOF{', free-flyer' if pm.joints[1].shortname() == 'JointModelFreeFlyer' else ''})"
        print(label)
        for fname, xs in cases:
            f_ours, f_pin = getattr(dbp, fname.split()[0]), getattr(pin, fname.split()[0])
            diff = rel(f_ours(pm, d_ours, *xs), f_pin(pm, d_pin, *xs))
            to, tp = side_by_side(lambda: f_ours(pm, d_ours, *xs), lambda: f_pin(pm, d_pin, *xs), args.repeats)
            print(f"{'':8s} {fname:24s} {to * 1e6:13.2f} us {tp * 1e6:9.2f} us {to / tp:7.2f} {diff:9.1e}", flush=True)
        dm = dbp.denoc_model(pm)
        to, td = side_by_side(
            lambda: dbp.aba(pm, d_ours, q, v, tau), lambda: db.forward_dynamics(dm, q, v, tau), args.repeats
        )
        hit, write = lookup_ns(pm, d_ours, args.repeats)
        print(
            f"{'':8s} convention cost: dbp.aba {to * 1e6:.2f} us, db.forward_dynamics(converted) {td * 1e6:.2f} us,"
            f" difference {(to - td) * 1e9:+.0f} ns; of it cache lookup {hit:.0f} ns, data.ddq = out {write:.0f} ns"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
