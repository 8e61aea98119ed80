"""The compiled GIM family (denoc_bridge.core.tree, Cython) next to the numba entries that the numba
code still calls and Pinocchio, in one process (issue 48).

    python benchmarks/cython_gim.py                     # panda, solo12, talos, chain100
    python benchmarks/cython_gim.py --repeats 31 --only panda
    python benchmarks/cython_gim.py --clock cpu         # minima of thread CPU time (loaded machine)

Rows per robot: the GIM (``mass_matrix_state``) against numba's and ``pin.crba``; the inverse
GIM (``inverse_mass_matrix_state``) against numba's and ``pin.computeMinverse``; the block
factors (``block_factors_state``, link and module level, U D U^T and the inverse factors), with
``cy/pin`` their time over ``pin.crba``'s.  Every call is the entry itself on preallocated arrays
(``kt``, the model's work array, q, outputs), as the public fast paths call them.  Before timing,
each compiled result is checked (relative difference, printed): the GIM and its inverse against
numba's, the factors by ``U D U^T = I`` and ``U^-T D^-1 U^-1 = I^-1``.  Timings are medians of
interleaved repeats (cython, numba, pinocchio, cython, ...) of batches of calls, each batch at
least 20 ms: the machine's load moves every column alike, so read the ratios.

numba's block factors (``kernels.entry.block_factors_state``) are gone (nothing called them once
the Python layer moved to the compiled core).  Measured here just before they went (2 loaded
cores, ``--repeats 5 --clock cpu``), Cython / numba: panda 0.34-0.50, solo12 0.50-0.57, talos
0.49-0.69, chain100 0.35-0.71 (link and module level, U D U^T and the inverse factors; the
largest relative difference 5.9e-15).
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
from denoc_bridge.kernels import entry as nb  # noqa: E402

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
    w_cy, w_nb = db.Data(model).work, db.Data(model).work
    o_cy, o_nb = np.empty((nv, nv)), np.empty((nv, nv))
    b_cy = np.empty((nv, nv))
    out = []
    for label, fn, ref in [
        ("GIM", "mass_matrix_state", lambda: pin.crba(pm, pd, q)),
        ("inverse GIM", "inverse_mass_matrix_state", lambda: pin.computeMinverse(pm, pd, q)),
    ]:
        f_cy, f_nb = getattr(cy, fn), getattr(nb, fn)
        assert f_cy(kt, w_cy, q, o_cy) == 0 and f_nb(kt, w_nb, q, o_nb) == 0
        err = rel(o_cy, o_nb)
        t = interleaved([lambda: f_cy(kt, w_cy, q, o_cy), lambda: f_nb(kt, w_nb, q, o_nb), ref], repeats)
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
            out.append((name, label, t[0], None, t[1], err))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--only", nargs="*", default=["panda", "solo12", "talos", "chain100"])
    parser.add_argument("--clock", choices=sorted(CLOCK), default="wall")
    args = parser.parse_args(argv)
    global clock, summary
    clock, summary = CLOCK[args.clock]
    print(
        f"{'robot':9} {'call':26} {'cython us':>9} {'numba us':>9} {'pin us':>8} {'cy/nb':>6} {'cy/pin':>6} "
        f"{'max rel diff':>12}"
    )
    for name in args.only:
        for robot, label, t_cy, t_nb, t_pin, err in rows(name, args.repeats):
            nb_us = f"{t_nb * 1e6:9.2f}" if t_nb else f"{'-':>9}"
            nb_ratio = f"{t_cy / t_nb:6.2f}" if t_nb else f"{'-':>6}"
            print(
                f"{robot:9} {label:26} {t_cy * 1e6:9.2f} {nb_us} {t_pin * 1e6:8.2f} {nb_ratio} {t_cy / t_pin:6.2f} "
                f"{err:12.1e}",
                flush=True,
            )


if __name__ == "__main__":
    main()
