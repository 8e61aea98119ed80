"""Speed of the analytical derivatives next to Pinocchio's, side by side in one process.

    python benchmarks/derivatives_speed.py [--repeats 15] [--min-time 0.02] [--clock cpu] [--out DIR]

For panda (fixed base), talos and solo12 (free-flyer) and the 100-DOF benchmark chain
(``chain100``, :func:`denoc_bridge.io.robots.serial_chain`): ``inverse_dynamics_derivatives``
against ``pin.computeRNEADerivatives`` and ``forward_dynamics_derivatives`` against
``pin.computeABADerivatives``, on the Pinocchio model of the same layout
(``db.to_pinocchio``), at a random state with external wrenches off.  The results are
checked equal first (relative errors printed; the forward ones go through M^-1, so they are
also shown mapped back by M).  Timings are medians of interleaved repeats (each repeat a batch
of calls from Python through the public API, at least ``--min-time`` long).  ``--clock cpu``
times by this thread's CPU time and takes the minima of the repeats instead (as
``benchmarks/gim_speed.py``): steadier on a shared machine, where a loaded core stretches
wall-time medians unevenly.  ``--profile`` adds the compiled entries (``core/derivatives.pyx``)
called directly: the forward derivatives each of their two ways (the GIM's LTDL with the
passes at a = 0, the recursion with the O(n) forward dynamics; ``way`` 1 and 2) and the way
chosen, the inverse derivatives, and the Python layer of each public call (the public call minus
its entry).  Prints a markdown table; ``--out`` also writes ``derivatives_speed.json`` and
``.md``.  ``benchmarks/cython_derivatives.py`` compared the compiled entries with the numba ones
they replaced, before numba was removed (its docstring keeps the figures).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import warnings

import numpy as np
import pinocchio as pin

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import denoc_bridge as db  # noqa: E402
from denoc_bridge.algorithms.derivatives import derivative_work  # noqa: E402
from denoc_bridge.benchmarking import machine  # noqa: E402
from denoc_bridge.core import derivatives as compiled  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402
from denoc_bridge.validation import relative_error  # noqa: E402

ROBOTS = ("panda", "talos", "solo12", "chain100")

#: wall time (perf_counter, medians of the repeats) or this thread's CPU time (thread_time, minima)
CLOCK = {"wall": (time.perf_counter, statistics.median), "cpu": (time.thread_time, min)}


def interleaved(fns: dict, repeats: int, min_time: float, clock: str = "wall") -> dict:
    """Seconds per call of each function: the functions take turns in every repeat (a batch of
    calls at least ``min_time`` long each) so that drifts of the machine hit all of them alike."""
    timer, reduce = CLOCK[clock]
    calls = {}
    for name, fn in fns.items():
        fn()  # warm up (the first call allocates the work arrays)
        n = 1
        while True:
            t0 = timer()
            for _ in range(n):
                fn()
            if timer() - t0 > min_time:
                break
            n *= 2
        calls[name] = n
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            n = calls[name]
            t0 = timer()
            for _ in range(n):
                fn()
            times[name].append((timer() - t0) / n)
    return {name: reduce(ts) for name, ts in times.items()}


def case(name: str, seed: int = 0):
    if name.startswith("chain"):
        model = serial_chain(int(name[5:]))
    else:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", db.PhysicsWarning)
            model = db.load_robot(name)
    pm = db.to_pinocchio(model)
    rng = np.random.default_rng(seed)
    q = db.random_configuration(model, rng)
    v, x = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    return model, pm, q, v, x


def full(upper: np.ndarray) -> np.ndarray:
    return np.triu(upper) + np.triu(upper, 1).T


def check(model, pm, q, v, x) -> dict:
    """Relative errors of every output against Pinocchio's."""
    pd = pm.createData()
    dq, dv, M = db.inverse_dynamics_derivatives(model, q, v, x)
    pin.computeRNEADerivatives(pm, pd, q, v, x)
    out = {
        "dtau_dq": relative_error(dq, pd.dtau_dq),
        "dtau_dv": relative_error(dv, pd.dtau_dv),
        "M": relative_error(M, full(pd.M)),
    }
    ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, x)
    pd = pm.createData()
    pin.computeABADerivatives(pm, pd, q, v, x)
    out |= {
        "ddq_dq": relative_error(ddq, pd.ddq_dq),
        "ddq_dv": relative_error(ddv, pd.ddq_dv),
        "Minv": relative_error(Minv, full(pd.Minv)),
        "M (ddq_dq - pin)": relative_error(M @ ddq, M @ pd.ddq_dq),
    }
    return out


def timings(model, pm, q, v, x, repeats: int, min_time: float, clock: str = "wall") -> dict:
    pd = pm.createData()
    fns = {
        "rnea_derivatives denoc": lambda: db.inverse_dynamics_derivatives(model, q, v, x),
        "rnea_derivatives pin": lambda: pin.computeRNEADerivatives(pm, pd, q, v, x),
        "aba_derivatives denoc": lambda: db.forward_dynamics_derivatives(model, q, v, x),
        "aba_derivatives pin": lambda: pin.computeABADerivatives(pm, pd, q, v, x),
    }
    return interleaved(fns, repeats, min_time, clock)


def profile(model, q, v, x, repeats: int, min_time: float, clock: str) -> dict:
    """Seconds per call of the compiled entries (the forward derivatives each way and as chosen,
    the inverse derivatives, results preallocated) and of the Python layers of the public calls,
    by the same interleaved timing."""
    nv, kt, work = model.nv, model._kt, derivative_work(model)
    out, qdd = [np.empty((nv, nv)) for _ in range(3)], np.empty(nv)
    fd, idd = compiled.forward_dynamics_derivatives_state, compiled.inverse_dynamics_derivatives_state
    fns = {f"FD way {w}": (lambda w=w: fd(kt, work, q, v, x, None, qdd, *out, w)) for w in (0, 1, 2)}
    fns["ID entry"] = lambda: idd(kt, work, q, v, x, None, *out)
    fns["FD new"] = lambda: compiled.forward_dynamics_derivatives_new(kt, work, q, v, x)
    fns["ID new"] = lambda: compiled.inverse_dynamics_derivatives_new(kt, work, q, v, x)
    fns["public FD"] = lambda: db.forward_dynamics_derivatives(model, q, v, x)
    fns["public ID"] = lambda: db.inverse_dynamics_derivatives(model, q, v, x)
    t = interleaved(fns, repeats, min_time, clock)
    return {
        "FD entry (chosen way)": t["FD way 0"],
        "FD entry (LTDL, passes at a = 0)": t["FD way 1"],
        "FD entry (recursion, passes at qdd)": t["FD way 2"],
        "ID entry": t["ID entry"],
        "Python layer (FD)": t["public FD"] - t["FD new"],
        "Python layer (ID)": t["public ID"] - t["ID new"],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--min-time", type=float, default=0.02, help="seconds per timed batch")
    parser.add_argument("--robots", nargs="*", default=list(ROBOTS))
    parser.add_argument("--clock", choices=tuple(CLOCK), default="wall")
    parser.add_argument("--out", default=None)
    parser.add_argument("--profile", action="store_true", help="also time the compiled entries and each way")
    args = parser.parse_args(argv)
    rows, results = [], {}
    for name in args.robots:
        model, pm, q, v, x = case(name)
        errors = check(model, pm, q, v, x)
        worst = max(errors.values())
        if not worst <= 1e-8:
            print(f"{name}: results differ from Pinocchio: {errors}", file=sys.stderr)
            return 1
        t = timings(model, pm, q, v, x, args.repeats, args.min_time, args.clock)
        results[name] = {"nv": model.nv, "errors": errors, "seconds": t}
        if args.profile:
            results[name]["profile"] = profile(model, q, v, x, args.repeats, args.min_time, args.clock)
        rows.append(
            f"| {name} ({model.nv} DOF) | {t['rnea_derivatives denoc'] * 1e6:.1f} | "
            f"{t['rnea_derivatives pin'] * 1e6:.1f} | "
            f"{t['rnea_derivatives denoc'] / t['rnea_derivatives pin']:.2f}x | "
            f"{t['aba_derivatives denoc'] * 1e6:.1f} | {t['aba_derivatives pin'] * 1e6:.1f} | "
            f"{t['aba_derivatives denoc'] / t['aba_derivatives pin']:.2f}x | {worst:.1e} |"
        )
    table = "\n".join(
        [
            "| robot | ID derivatives (us) | pin.computeRNEADerivatives (us) | ratio "
            "| FD derivatives (us) | pin.computeABADerivatives (us) | ratio | max rel. error |",
            "|---|---|---|---|---|---|---|---|",
            *rows,
        ]
    )
    if args.profile:
        keys = list(next(iter(results.values()))["profile"])
        table += "\n\n" + "\n".join(
            [
                "| robot | " + " | ".join(f"{k} (us)" for k in keys) + " |",
                "|---|" + "---|" * len(keys),
                *(
                    f"| {name} | " + " | ".join(f"{r['profile'][k] * 1e6:.1f}" for k in keys) + " |"
                    for name, r in results.items()
                ),
            ]
        )
    info = machine()
    print(table)
    how = "medians" if args.clock == "wall" else "minima (thread CPU time)"
    print(f"\n{how} of {args.repeats} interleaved repeats; {info}")
    if args.out:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "derivatives_speed.json"), "w") as f:
            json.dump({"machine": info, "clock": args.clock, "results": results}, f, indent=1, default=str)
        with open(os.path.join(args.out, "derivatives_speed.md"), "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
