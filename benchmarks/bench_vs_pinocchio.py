"""Time per call of denoc_bridge and Pinocchio on the same inputs, in one process.

    python benchmarks/bench_vs_pinocchio.py [--repeats 15] [--out benchmarks/results/baseline.json]

Cases: panda (example-robot-data, 9 DOF) and a 100-DOF spatial serial chain
(revolute joints alternating x/y axes, built as a pinocchio.Model and passed
through from_pinocchio).  Each timing is the median over interleaved repeats
of the mean time of a batch of calls made from Python.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.robots import load_robot


def chain(n: int):
    pm = pin.Model()
    parent = 0
    for k in range(n):
        jm = pin.JointModelRX() if k % 2 == 0 else pin.JointModelRY()
        placement = pin.SE3(np.eye(3), np.array([0.0, 0.0, 0.1 if k else 0.0]))
        parent = pm.addJoint(parent, jm, placement, f"j{k}")
        pm.appendBodyToJoint(parent, pin.Inertia(1.0, np.array([0, 0, 0.05]), np.diag([1e-3, 1e-3, 5e-4])),
                             pin.SE3.Identity())
    return pm


def per_call(fn, calls: int) -> float:
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def bench(name, model, pm, repeats, calls):
    pd = pm.createData()
    data = db.Data(model)
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    pairs = {
        "inverse_dynamics / pin.rnea": (lambda: db.inverse_dynamics(model, q, v, tau, data=data),
                                        lambda: pin.rnea(pm, pd, q, v, tau)),
        "forward_dynamics / pin.aba": (lambda: db.forward_dynamics(model, q, v, tau, data=data),
                                       lambda: pin.aba(pm, pd, q, v, tau)),
        "mass_matrix / pin.crba": (lambda: db.mass_matrix(model, q, data=data), lambda: pin.crba(pm, pd, q)),
    }
    rows = []
    for label, (ours, theirs) in pairs.items():
        ours(), theirs()  # compile / warm up
        t_ours, t_pin = [], []
        for _ in range(repeats):  # interleaved
            t_ours.append(per_call(ours, calls))
            t_pin.append(per_call(theirs, calls))
        mo, mp = statistics.median(t_ours), statistics.median(t_pin)
        rows.append(dict(case=name, nv=model.nv, pair=label, denoc_us=mo * 1e6, pinocchio_us=mp * 1e6,
                         ratio=mo / mp))
        print(f"{name:<10} nv={model.nv:<4} {label:<30} denoc {mo * 1e6:9.2f} us   pinocchio {mp * 1e6:8.2f} us"
              f"   ratio {mo / mp:5.2f}")
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "results", "baseline.json"))
    args = parser.parse_args()
    panda = load_robot("panda")
    panda_pin = db.to_pinocchio(panda)
    pm100 = chain(100)
    rows = bench("panda", panda, panda_pin, args.repeats, 2000)
    rows += bench("chain100", db.from_pinocchio(pm100), pm100, args.repeats, 200)
    meta = dict(machine=platform.machine(), processor=platform.processor(), python=platform.python_version(),
                cpus=os.cpu_count(), pinocchio=pin.__version__, denoc_bridge=db.__version__,
                date=time.strftime("%Y-%m-%d"))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
