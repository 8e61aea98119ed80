"""The compiled configuration maps (denoc_bridge/core/configuration.pyx), energies and kinematics
(tree.pyx: energy.pxi, kinematics.pxi) against Pinocchio, side by side in one process (issue 48).

    python benchmarks/cython_configuration.py                 # every row
    python benchmarks/cython_configuration.py --only panda --repeats 21

Rows: integrate, difference (against ``pin.integrate`` / ``pin.difference``), the energies
(against ``pin.computeMechanicalEnergy``, which computes both energies without armature or
springs), the placements of the links and their twists (against ``pin.forwardKinematics`` with
q, and with q and v) on panda, talos and a 100-link chain, then batches: integrate of 1,000
panda states and the energies of 4,096 panda states (in chunks on a thread pool as
``db.energies`` calls them, multibody.data.run_chunks).  Each call is timed as batches of calls
from Python (each batch at least ``--batch-ms``; :func:`timing.per_call`), the implementations
interleaved within every repeat in a rotating order; the table gives the median time per call
and the ratio.  Single-state rows time the thread's CPU time (``time.thread_time``), which a
loaded machine's preemptions do not inflate; the batch rows wall time (``time.perf_counter``),
since the batches run on several threads.

History: the script timed the numba kernels these entries replaced beside them, on the same
``model._kt``, until they were deleted (issues 48 and 49; numba is no longer a dependency).
Measured against the compiled entries at commit 7949504 (2 loaded cores, medians, Cython /
numba): integrate 0.14-0.19x (panda 0.132 / 0.965 us), difference 0.22-0.52x (panda 0.164 /
0.740 us), the energies 0.32-0.41x, placements 0.39-0.52x numba's geometry pass and kernel,
twists 0.32-0.51x, the batches 0.06x (integrate x1000) and 0.61x (energies x4096).
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
from denoc_bridge.core import configuration as cc
from denoc_bridge.core import tree as ct
from denoc_bridge.core.layout import INT, NMOD, W, work_rows
from denoc_bridge.multibody.data import run_chunks

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import per_call  # the batches of calls the cython_* scripts share

ROWS = ("integrate", "difference", "energies", "placements", "twists")

MODELS = {
    "panda": lambda: db.load_robot("panda"),
    "talos": lambda: db.load_robot("talos"),
    "chain 100": lambda: db.generators.chain(100),
}
BATCH = 1000  # states of the integrate batch
ENERGY_BATCH = 4096


def work_of(model: db.Model) -> np.ndarray:
    ki = model._kt.view(INT)
    return np.zeros((work_rows(model.n_links, model.nv, ki[0, NMOD] if model.n_links else 0), W))


def single_calls(model: db.Model):
    """{(row, implementation): a call without arguments} for one state."""
    rng = np.random.default_rng(0)
    q0, q1 = db.random_configuration(model, rng), db.random_configuration(model, rng)
    v = rng.standard_normal(model.nv)
    kt = model._kt
    oq, ov, d = np.empty(model.nq), np.empty(model.nv), np.empty(model.nv)
    wc = work_of(model)
    R, p, t = np.empty((model.n_links, 3, 3)), np.empty((model.n_links, 3)), np.empty((model.n_links, 6))
    K, q_rest = model.stiffness, model.rest_configuration
    springs = bool(np.any(K))
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    assert cc.integrate(kt, q0, v, oq) == 0 and cc.difference(kt, q0, q1, ov) == 0
    assert ct.placements_state(kt, wc, q0, R, p) == 0 and ct.twists_state(kt, wc, q0, v, t) == 0
    return {
        ("integrate", "cython"): lambda: cc.integrate(kt, q0, v, oq),
        ("integrate", "pinocchio"): lambda: pin.integrate(pm, q0, v),
        ("difference", "cython"): lambda: cc.difference(kt, q0, q1, ov),
        ("difference", "pinocchio"): lambda: pin.difference(pm, q0, q1),
        ("energies", "cython"): lambda: ct.energies_state(kt, wc, q0, v, K, q_rest, springs, d),
        ("energies", "pinocchio"): lambda: pin.computeMechanicalEnergy(pm, pd, q0, v),
        ("placements", "cython"): lambda: ct.placements_state(kt, wc, q0, R, p),
        ("placements", "pinocchio"): lambda: pin.forwardKinematics(pm, pd, q0),
        ("twists", "cython"): lambda: ct.twists_state(kt, wc, q0, v, t),
        ("twists", "pinocchio"): lambda: pin.forwardKinematics(pm, pd, q0, v),
    }


def batch_calls(model: db.Model):
    """{(row, implementation): a call} for the batches on one model."""
    rng = np.random.default_rng(1)
    Q = np.array([db.random_configuration(model, rng) for _ in range(max(BATCH, ENERGY_BATCH))])
    V = rng.standard_normal((len(Q), model.nv))
    kt = model._kt
    Qb, Vb, OUT = Q[:BATCH].copy(), V[:BATCH].copy(), np.empty((BATCH, model.nq))
    K, q_rest = model.stiffness, model.rest_configuration
    springs = bool(np.any(K))
    T, P = np.empty(ENERGY_BATCH), np.empty(ENERGY_BATCH)
    Qe, Ve = Q[:ENERGY_BATCH].copy(), V[:ENERGY_BATCH].copy()
    return {
        (f"integrate x{BATCH}", "cython"): lambda: cc.integrate_batch(kt, Qb, Vb, OUT),
        (f"energies x{ENERGY_BATCH}", "cython"): lambda: run_chunks(
            ct.energies_chunk, ENERGY_BATCH, kt, Qe, Ve, K, q_rest, springs, T, P
        ),
    }


def run(fns, repeats: int, batch_s: float, clock):
    keys = list(fns)
    times = {k: [] for k in keys}
    for r in range(repeats):
        order = keys[r % len(keys) :] + keys[: r % len(keys)]  # each one first in turn
        for k in order:
            times[k].append(per_call(fns[k], batch_s, clock))
    return {k: statistics.median(t) * 1e6 for k, t in times.items()}


def line(name: str, row: str, t: dict, fmt: str) -> str:
    """One row of the table: the times and the ratio there are ("-" where Pinocchio has none)."""
    c, pn = (t.get((row, i)) for i in ("cython", "pinocchio"))
    cells = [fmt.format(x) if x is not None else "-" for x in (c, pn)]
    ratio = f"{c / pn:.2f}" if pn is not None else "-"
    return f"{name:<10} {row:<16} {cells[0]:>10} {cells[1]:>9}  {ratio:>6}"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--only", help="models whose name contains this")
    args = p.parse_args(argv)
    print(f"{'model':<10} {'row':<16} {'cython us':>10} {'pin us':>9}  cy/pin")
    for name, make in MODELS.items():
        if args.only and args.only not in name:
            continue
        model = make()
        t = run(single_calls(model), args.repeats, args.batch_ms / 1e3, time.thread_time)
        for row in ROWS:
            print(line(name, row, t, "{:.3f}"), flush=True)
        if name == "panda":
            t = run(batch_calls(model), args.repeats, args.batch_ms / 1e3, time.perf_counter)
            for row in sorted({k[0] for k in t}):
                print(line(name, row, t, "{:.1f}"), flush=True)


if __name__ == "__main__":
    main()
