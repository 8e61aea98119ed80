"""The compiled GIM family (denoc_bridge.core.tree, Cython) next to Pinocchio, in one process
(issue 48).

    python benchmarks/cython_gim.py                     # panda, solo12, talos, chain100
    python benchmarks/cython_gim.py --repeats 31 --only panda
    python benchmarks/cython_gim.py --clock cpu         # minima of thread CPU time (loaded machine)

Rows per robot: the GIM (``mass_matrix_state``) against ``pin.crba``; the inverse GIM
(``inverse_mass_matrix_state``) against ``pin.computeMinverse``; the block factors
(``block_factors_state``, link and module level, U D U^T and the inverse factors), with
``cy/pin`` their time over ``pin.crba``'s.  Every call is the entry itself on preallocated arrays
(``kt``, the model's work array, q, outputs), as the public fast paths call them.  Before timing,
each compiled result is checked (relative difference, printed): the GIM and its inverse against
Pinocchio's (upper triangles), the factors by ``U D U^T = I`` and ``U^-T D^-1 U^-1 = I^-1``.
Timings are medians of interleaved repeats (cython, pinocchio, cython, ...) of batches of calls,
each batch at least 20 ms: the machine's load moves every column alike, so read the ratios.

History: the script timed numba's entries beside the compiled ones until they were deleted
(issues 48 and 49; numba is no longer a dependency).  Their last measurements (portable build,
thread CPU time, minima of 15 repeats, us per call, Cython / numba; ``docs/performance.md``):
the GIM panda 0.89 / 1.85, solo12 1.37 / 2.74, talos 3.31 / 4.94, chain100 16.0 / 20.2; the
inverse GIM panda 1.32 / 2.34, solo12 2.52 / 4.04, talos 7.92 / 9.36, chain100 52.9 / 56.7; the
block factors (``--repeats 5 --clock cpu``, link and module level, U D U^T and the inverse
factors) panda 0.34-0.50, solo12 0.50-0.57, talos 0.49-0.69, chain100 0.35-0.71 of numba's time.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import pinocchio as pin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import denoc_bridge as db  # noqa: E402
from denoc_bridge.core import tree as cy  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402

#: the clock: wall time (perf_counter, medians) or, with ``--clock cpu``, this thread's CPU time
#: (thread_time, minima of the repeats): steadier on a shared machine, where a loaded core
#: stretches wall-time medians unevenly
CLOCK = {"wall": (time.perf_counter, statistics.median), "cpu": (time.thread_time, min)}
clock, summary = CLOCK["wall"]


def per_call(fn, min_time: float = 0.02) -> float:
    n = 1
    while True:
        t0 = clock()
        for _ in range(n):
            fn()
        dt = clock() - t0
        if dt > min_time:
            return dt / n
        n *= 2


def interleaved(fns, repeats: int) -> list[float]:
    """Medians (or minima, ``--clock cpu``) in s per call of interleaved repeats of the callables."""
    for f in fns:
        f()
    ts: list[list[float]] = [[] for _ in fns]
    for _ in range(repeats):
        for f, t in zip(fns, ts):
            t.append(per_call(f))
    return [summary(t) for t in ts]


def rel(a, b) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def model_of(name: str):
    return serial_chain(int(name[5:])) if name.startswith("chain") else db.load_robot(name)


def rows(name: str, repeats: int):
    model = model_of(name)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    nv, kt = model.nv, model._kt
    q = np.asarray(db.random_configuration(model, np.random.default_rng(0)), dtype=float)
    w_cy = db.Data(model).work
    o_cy = np.empty((nv, nv))
    b_cy = np.empty((nv, nv))
    out = []
    for label, fn, ref in [
        ("GIM", "mass_matrix_state", lambda: pin.crba(pm, pd, q)),
        ("inverse GIM", "inverse_mass_matrix_state", lambda: pin.computeMinverse(pm, pd, q)),
    ]:
        f_cy = getattr(cy, fn)
        assert f_cy(kt, w_cy, q, o_cy) == 0
        err = rel(np.triu(o_cy), np.triu(ref()))  # Pinocchio fills the upper triangle
        t = interleaved([lambda: f_cy(kt, w_cy, q, o_cy), ref], repeats)
        out.append((name, label, *t, err))
    M, Minv = np.empty((nv, nv)), np.empty((nv, nv))
    assert cy.mass_matrix_state(kt, w_cy, q, M) == 0 and cy.inverse_mass_matrix_state(kt, w_cy, q, Minv) == 0
    for level in (False, True):
        for inverse in (False, True):
            label = f"{'inverse ' if inverse else ''}factors ({'module' if level else 'link'})"
            f_cy = cy.block_factors_state
            assert f_cy(kt, w_cy, q, o_cy, b_cy, level, inverse) == 0
            err = rel(o_cy.T @ b_cy @ o_cy, Minv) if inverse else rel(o_cy @ b_cy @ o_cy.T, M)
            t = interleaved(
                [lambda: f_cy(kt, w_cy, q, o_cy, b_cy, level, inverse), lambda: pin.crba(pm, pd, q)], repeats
            )
            out.append((name, label, *t, err))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=["panda", "solo12", "talos", "chain100"])
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = parser.parse_args(argv)
    global clock, summary
    clock, summary = CLOCK[args.clock]
    print(f"{'robot':9} {'call':26} {'cython us':>9} {'pin us':>8} {'cy/pin':>6} {'max rel diff':>12}")
    for name in args.only:
        for robot, label, t_cy, t_pin, err in rows(name, args.repeats):
            print(
                f"{robot:9} {label:26} {t_cy * 1e6:9.2f} {t_pin * 1e6:8.2f} {t_cy / t_pin:6.2f} {err:12.1e}",
                flush=True,
            )


if __name__ == "__main__":
    main()
