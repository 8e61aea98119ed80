"""Where the time of a GIM call goes (issue 22): per robot, the public call and its compiled entry
called directly with preallocated arrays (denoc_bridge.core.tree, Cython), next to Pinocchio's
calls and one (nv, nv) allocation.  CPU time of this thread, minima of interleaved repeats
(steady on the shared machine).

numba's GIM, inverse GIM and inverse dynamics entries, whose bodies and dispatch these rows
also timed, are gone (issue 48).

    python benchmarks/gim_profile.py panda talos solo12 chain100
"""

import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import denoc_bridge as db
from denoc_bridge.core import tree
from denoc_bridge.io.pinocchio_io import to_pinocchio
from denoc_bridge.io.robots import serial_chain


def per_call(fn, min_time=0.002, max_calls=1 << 20):
    """Seconds per call over at least ``min_time`` of CPU, or ``max_calls`` calls (a bound on any
    machine, and on a clock too coarse to see one call)."""
    n = 1
    while True:
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        dt = time.thread_time() - t0
        if dt > min_time or n >= max_calls:
            return dt / n
        n *= 2


R = 31


def main(names):
    for name in names:
        m = serial_chain(int(name[5:])) if name.startswith("chain") else db.load_robot(name)
        pm = to_pinocchio(m)
        pd = pm.createData()
        rng = np.random.default_rng(0)
        q = db.random_configuration(m, rng)
        v = rng.standard_normal(m.nv)
        a = rng.standard_normal(m.nv)
        nv = m.nv
        db.mass_matrix(m, q)
        kt, work = m._kt, m.thread_work()
        out = np.empty((nv, nv))
        A = np.empty((nv, nv))
        B = np.empty((nv, nv))
        tau = np.empty(nv)
        rows = {
            "pin.crba": lambda: pin.crba(pm, pd, q),
            "pin.computeMinverse": lambda: pin.computeMinverse(pm, pd, q),
            "pin.rnea": lambda: pin.rnea(pm, pd, q, v, a),
            "mass_matrix": lambda: db.mass_matrix(m, q),
            "  cython entry": lambda: tree.mass_matrix_state(kt, work, q, out),
            "inverse_mass_matrix": lambda: db.inverse_mass_matrix(m, q),
            "  cython entry ": lambda: tree.inverse_mass_matrix_state(kt, work, q, out),
            "udut": lambda: db.udut(m, q),
            "  cython entry  ": lambda: tree.block_factors_state(kt, work, q, A, B, True, False),
            "inverse_udut": lambda: db.inverse_udut(m, q),
            "  cython entry   ": lambda: tree.block_factors_state(kt, work, q, A, B, True, True),
            "inverse_dynamics": lambda: db.inverse_dynamics(m, q, v, a),
            "  cython entry    ": lambda: tree.inverse_dynamics_fast(kt, work, q, v, a, tau),
            "np.empty((nv, nv))": lambda: np.empty((nv, nv)),
        }
        for f in rows.values():
            f()
        ts = {k: [] for k in rows}
        for _ in range(R):
            for k, f in rows.items():
                ts[k].append(per_call(f))
        print(f"{name} ({nv} DOF), us per call")
        for k, t in ts.items():
            print(f"  {k:32s} {min(t) * 1e6:8.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["panda", "talos", "solo12"])
