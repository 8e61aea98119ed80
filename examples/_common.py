"""Shared by the paper examples: the command line (--quick, --out) and saving figures."""

from __future__ import annotations

import argparse
import os
import time

DEFAULT_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "figures")


def arguments(doc: str, quick_help: str = "a shorter run (for the tests)"):
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help=quick_help)
    parser.add_argument("--out", default=DEFAULT_OUT, help="folder for the PNG figures (default docs/figures)")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    return args


def pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save(fig, out: str, name: str) -> str:
    path = os.path.join(out, name)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"figure: {os.path.relpath(path)}")
    return path


def best_of(fn, repeats: int = 5):
    """(result, the shortest wall time of `repeats` runs after a warm-up run)."""
    result = fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return result, best


def pin_rk4(pm, q, v, dt, steps, tau=None, each_step=None):
    """The plain Python RK4 loop around ``pin.aba`` that the examples compare with (q and v in
    a vector space: revolute joints); ``each_step(q, v)`` is called after every step."""
    import numpy as np
    import pinocchio as pin

    pd = pm.createData()
    tau = np.zeros(pm.nv) if tau is None else tau
    for _ in range(steps):
        k1v = pin.aba(pm, pd, q, v, tau)
        k2v = pin.aba(pm, pd, q + dt / 2 * v, v + dt / 2 * k1v, tau)
        k3v = pin.aba(pm, pd, q + dt / 2 * (v + dt / 2 * k1v), v + dt / 2 * k2v, tau)
        k4v = pin.aba(pm, pd, q + dt * (v + dt / 2 * k2v), v + dt * k3v, tau)
        q, v = (q + dt / 6 * (v + 2 * (v + dt / 2 * k1v) + 2 * (v + dt / 2 * k2v) + (v + dt * k3v)),
                v + dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v))
        if each_step is not None:
            each_step(pd, q, v)
    return q, v
