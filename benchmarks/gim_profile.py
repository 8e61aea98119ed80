"""Where the time of a GIM call goes (issue 22): per robot, the public call, its entry called
directly with preallocated arrays, the numba kernel body per state of a compiled loop (no
dispatch), numba's dispatch of the same arguments to an empty kernel and one (nv, nv)
allocation, next to Pinocchio's calls.  CPU time of this thread, minima of interleaved repeats
(steady on the shared machine).

The public calls run the compiled core (denoc_bridge.core.tree, Cython).  The GIM and its
inverse still have numba entries (the numba code of mimic joints and the integrators calls them):
their rows time both.  The block factors and inverse dynamics without wrenches have only the
compiled entries (numba's went with issue 48); inverse dynamics' numba body is the state entry
without wrenches, which is what numba's fast entry ran.

    python benchmarks/gim_profile.py panda talos solo12 chain100
"""

import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin
from numba import njit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import denoc_bridge as db
from denoc_bridge.core import tree
from denoc_bridge.io.pinocchio_io import to_pinocchio
from denoc_bridge.io.robots import serial_chain
from denoc_bridge.kernels import entry


def per_call(fn, min_time=0.002):
    n = 1
    while True:
        t0 = time.thread_time()
        for _ in range(n):
            fn()
        dt = time.thread_time() - t0
        if dt > min_time:
            return dt / n
        n *= 2


@njit(cache=True)
def noop4(kt, work, q, out):
    return 0


@njit(cache=True)
def noop6(kt, work, q, v, a, out):
    return 0


@njit(cache=True)
def noop7(kt, work, q, A, B, m, i):
    return 0


@njit(cache=True)
def body_mm(kt, work, q, out, n):
    s = 0
    for _ in range(n):
        s += entry.mass_matrix_state(kt, work, q, out)
    return s


@njit(cache=True)
def body_imm(kt, work, q, out, n):
    s = 0
    for _ in range(n):
        s += entry.inverse_mass_matrix_state(kt, work, q, out)
    return s


@njit(cache=True)
def body_id(kt, work, q, v, a, out, n):
    s = 0
    for _ in range(n):
        s += entry.inverse_dynamics_state(kt, work, q, v, a, work[0:0], out)
    return s


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
        kt, work = m._kt, m._local.work
        out = np.empty((nv, nv))
        A = np.empty((nv, nv))
        B = np.empty((nv, nv))
        tau = np.empty(nv)
        K = 1000 if nv < 50 else 50
        rows = {
            "pin.crba": lambda: pin.crba(pm, pd, q),
            "pin.computeMinverse": lambda: pin.computeMinverse(pm, pd, q),
            "pin.rnea": lambda: pin.rnea(pm, pd, q, v, a),
            "mass_matrix": lambda: db.mass_matrix(m, q),
            "  entry": lambda: entry.mass_matrix_state(kt, work, q, out),
            "  cython entry": lambda: tree.mass_matrix_state(kt, work, q, out),
            "  body": lambda: body_mm(kt, work, q, out, K),
            "inverse_mass_matrix": lambda: db.inverse_mass_matrix(m, q),
            "  entry ": lambda: entry.inverse_mass_matrix_state(kt, work, q, out),
            "  cython entry ": lambda: tree.inverse_mass_matrix_state(kt, work, q, out),
            "  body ": lambda: body_imm(kt, work, q, out, K),
            "udut": lambda: db.udut(m, q),
            "  cython entry  ": lambda: tree.block_factors_state(kt, work, q, A, B, True, False),
            "inverse_udut": lambda: db.inverse_udut(m, q),
            "  cython entry   ": lambda: tree.block_factors_state(kt, work, q, A, B, True, True),
            "inverse_dynamics": lambda: db.inverse_dynamics(m, q, v, a),
            "  cython entry    ": lambda: tree.inverse_dynamics_fast(kt, work, q, v, a, tau),
            "  body    ": lambda: body_id(kt, work, q, v, a, tau, K),
            "dispatch, 4 arrays": lambda: noop4(kt, work, q, out),
            "dispatch, 5 arrays": lambda: noop6(kt, work, q, v, a, tau),
            "dispatch, 5 arrays + 2 bools": lambda: noop7(kt, work, q, A, B, True, False),
            "np.empty((nv, nv))": lambda: np.empty((nv, nv)),
        }
        for f in rows.values():
            f()
        ts = {k: [] for k in rows}
        for _ in range(R):
            for k, f in rows.items():
                ts[k].append(per_call(f))
        print(f"{name} ({nv} DOF), us per call (body: per state of a compiled loop)")
        for k, t in ts.items():
            x = min(t) * 1e6 / (K if k.strip() == "body" else 1)
            print(f"  {k:32s} {x:8.2f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["panda", "talos", "solo12"])
