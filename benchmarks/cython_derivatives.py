"""The compiled derivatives (denoc_bridge/core/derivatives.pyx) against Pinocchio, side by side in
one process (the port's measurements, issue 49).

    python benchmarks/cython_derivatives.py                  # every row
    python benchmarks/cython_derivatives.py --only panda --repeats 21

Rows: panda, talos, solo12 and a 100-link chain (``db.load_robot("chain:100")``), inverse
(``inverse``) and forward (``forward``) derivatives at one random state without external
wrenches.  Columns: the compiled entry that allocates its results (``*_new``, the public call's
fast path), the public call (``db.inverse_dynamics_derivatives`` /
``db.forward_dynamics_derivatives``), and ``pin.computeRNEADerivatives`` /
``pin.computeABADerivatives`` on the Pinocchio model of the same layout.  The results are
checked equal first.  Each is timed as batches of calls from Python (each batch at least
``--batch-ms``; :func:`timing.per_call`), the implementations interleaved within every repeat in
a rotating order; the table gives the median time per call and the ratios.  ``--clock cpu`` (the
default) times the thread's CPU time, ``--clock wall`` the wall clock.

History: the script timed numba's entries beside the compiled ones (results allocated the way
numba's Python layer did, ``np.empty`` per result) until they were deleted (issue 49; numba is
no longer a dependency).  Their last measurement, commit 80c9487 (thread CPU time, medians, us
per call, Cython entry / numba entry): inverse derivatives panda 1.70 / 3.01 (0.56), talos
6.09 / 8.95 (0.68), solo12 2.80 / 4.43 (0.63), the 100-link chain 26.75 / 48.69 (0.55); forward
derivatives panda 2.70 / 4.12 (0.66), talos 13.74 / 24.82 (0.55), solo12 5.09 / 7.97 (0.64),
the 100-link chain 104.17 / 158.59 (0.66).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.algorithms.derivatives import derivative_work
from denoc_bridge.core import derivatives as compiled

sys.path.insert(0, str(Path(__file__).resolve().parent))
from timing import CLOCK, per_call, timing_arguments  # the batches of calls the cython_* scripts share

MODELS = ("panda", "talos", "solo12", "chain:100")


def calls(model: db.Model) -> dict:
    """{(algorithm, implementation): a call without arguments}, after checking that the
    implementations agree."""
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    v, x = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    kt, work = model._kt, derivative_work(model)
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    fns = {
        ("inverse", "cython"): lambda: compiled.inverse_dynamics_derivatives_new(kt, work, q, v, x),
        ("inverse", "public"): lambda: db.inverse_dynamics_derivatives(model, q, v, x),
        ("inverse", "pinocchio"): lambda: pin.computeRNEADerivatives(pm, pd, q, v, x),
    }
    if hasattr(compiled, "forward_dynamics_derivatives_new"):
        fns[("forward", "cython")] = lambda: compiled.forward_dynamics_derivatives_new(kt, work, q, v, x)
    fns[("forward", "public")] = lambda: db.forward_dynamics_derivatives(model, q, v, x)
    fns[("forward", "pinocchio")] = lambda: pin.computeABADerivatives(pm, pd, q, v, x)
    check(model, pm, q, v, x)
    assert type(compiled.inverse_dynamics_derivatives_new(kt, work, q, v, x)) is tuple
    return fns


def check(model, pm, q, v, x) -> None:
    """The public calls (on the compiled entries) against Pinocchio's."""
    pd = pm.createData()
    pin.computeRNEADerivatives(pm, pd, q, v, x)
    ours = db.inverse_dynamics_derivatives(model, q, v, x)
    for got, ref in zip(ours, (pd.dtau_dq, pd.dtau_dv, np.triu(pd.M) + np.triu(pd.M, 1).T)):
        assert np.abs(got - ref).max() <= 1e-9 * np.abs(ref).max(), model.name
    pin.computeABADerivatives(pm, pd, q, v, x)
    ours = db.forward_dynamics_derivatives(model, q, v, x)
    for got, ref in zip(ours, (pd.ddq_dq, pd.ddq_dv, np.triu(pd.Minv) + np.triu(pd.Minv, 1).T)):
        assert np.abs(got - ref).max() <= 1e-7 * np.abs(ref).max(), model.name


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    timing_arguments(p)
    args = p.parse_args(argv)
    print(
        "| model | derivatives | cython entry (us) | public call (us) | Pinocchio (us) "
        "| cython / Pinocchio | public / Pinocchio |\n|---|---|---|---|---|---|---|"
    )
    for name in MODELS:
        if args.only and args.only not in name:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", db.PhysicsWarning)
            model = db.load_robot(name)
        fns = calls(model)
        keys = list(fns)
        times: dict = {k: [] for k in keys}
        for r in range(args.repeats):
            order = keys[r % len(keys) :] + keys[: r % len(keys)]  # each one first in turn
            for k in order:
                times[k].append(per_call(fns[k], args.batch_ms / 1e3, CLOCK[args.clock]))
        for alg in ("inverse", "forward"):
            c, pub, pn = (
                statistics.median(times.get((alg, i), [float("nan")])) * 1e6 for i in ("cython", "public", "pinocchio")
            )
            print(
                f"| {name} ({model.nv} DOF) | {alg} | {c:.2f} | {pub:.2f} | {pn:.2f} | {c / pn:.2f} | {pub / pn:.2f} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
