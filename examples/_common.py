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
    """matplotlib.pyplot with the Agg backend (denoc_bridge.viz.plots.pyplot: files, no windows)."""
    from denoc_bridge.viz.plots import pyplot as _pyplot

    return _pyplot()


def save(fig, out: str, name: str) -> str:
    from denoc_bridge.viz.plots import save_figure

    path = os.path.join(out, name)
    save_figure(fig, path, dpi=110, close=False)
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
