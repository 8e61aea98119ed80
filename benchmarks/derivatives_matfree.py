"""Speed and memory of the matrix-free derivatives of forward dynamics on long chains.

    python benchmarks/derivatives_matfree.py [--sizes 1000 10000 100000] [--repeats 9]
                                             [--min-time 0.05] [--out DIR]

For serial chains of n revolute joints (``denoc_bridge.io.robots.serial_chain``):
``forward_dynamics_jvp`` and ``forward_dynamics_vjp`` timed against one ``forward_dynamics``
call on the same state, interleaved in one process (medians of ``--repeats`` rounds,
:func:`denoc_bridge.benchmarking.interleaved`), so that the ratios hold under load; the
memory of a first call on a fresh model (its buffers, kept for the next calls, and the
results) measured with tracemalloc, per DOF.  A breakdown at every size times the compiled
entries alone (denoc_bridge/core/directional.pyx, on preallocated arrays): the JVP, the VJP and
``tangent_sweeps_state`` (the factorised forward dynamics and the four sweeps, no solve), beside
the public ``forward_dynamics``; the passes inside an entry are not callable from Python (perf
splits them: docs/performance.md, issue 49).  Prints markdown tables; ``--out`` also writes
``derivatives_matfree.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tracemalloc

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import denoc_bridge as db  # noqa: E402
from denoc_bridge.algorithms import directional as adir  # noqa: E402
from denoc_bridge.benchmarking import interleaved, machine  # noqa: E402
from denoc_bridge.core import directional as cdir  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402
from denoc_bridge.multibody.inputs import NO_FEXT  # noqa: E402


def state(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    q = 0.3 * rng.standard_normal(n)
    v, tau = 0.1 * rng.standard_normal(n), 0.01 * rng.standard_normal(n)
    d = tuple(rng.standard_normal(n) for _ in range(4))
    return q, v, tau, d


def memory_per_dof(n: int, which: str) -> float:
    """Peak traced bytes per DOF of a first call on a fresh model (the state excluded)."""
    model = serial_chain(n)
    q, v, tau, (dq, dv, dtau, lam) = state(n)
    db.forward_dynamics_jvp(serial_chain(2), np.zeros(2), np.zeros(2), np.zeros(2), dq=np.ones(2))  # compiled
    db.forward_dynamics_vjp(serial_chain(2), np.zeros(2), np.zeros(2), np.zeros(2), np.ones(2))
    tracemalloc.start()
    tracemalloc.reset_peak()
    if which == "jvp":
        db.forward_dynamics_jvp(model, q, v, tau, dq, dv, dtau)
    else:
        db.forward_dynamics_vjp(model, q, v, tau, lam)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / n


def breakdown(n: int, repeats: int, min_time: float) -> dict:
    model = serial_chain(n)
    q, v, tau, (dq, dv, dtau, lam) = state(n)
    kt = model._kt
    work, buf = adir._buffers(model)
    o = [np.empty(n) for _ in range(5)]
    fns = {
        "forward_dynamics": lambda: db.forward_dynamics(model, q, v, tau),
        "JVP entry": lambda: cdir.forward_dynamics_jvp_state(
            kt, work, buf, q, v, tau, NO_FEXT, dq, dv, dtau, o[0], o[1]
        ),
        "VJP entry": lambda: cdir.forward_dynamics_vjp_state(
            kt, work, buf, q, v, tau, NO_FEXT, lam, o[0], o[1], o[2], o[3]
        ),
        "factorised forward dynamics + the four sweeps": lambda: cdir.tangent_sweeps_state(
            kt, work, buf, q, v, tau, NO_FEXT, dq, dv, lam, o[0], o[1], o[2], o[3]
        ),
    }
    return {k: t / n * 1e9 for k, t in interleaved(fns, repeats, min_time).items()}


def run(sizes, repeats: int, min_time: float) -> dict:
    rows = []
    for n in sizes:
        model = serial_chain(n)
        q, v, tau, (dq, dv, dtau, lam) = state(n)
        fns = {
            "fd": lambda: db.forward_dynamics(model, q, v, tau),
            "jvp": lambda: db.forward_dynamics_jvp(model, q, v, tau, dq, dv, dtau),
            "vjp": lambda: db.forward_dynamics_vjp(model, q, v, tau, lam),
        }
        t = interleaved(fns, repeats, min_time)
        rows.append(
            dict(
                n=n,
                fd_ns_per_dof=t["fd"] / n * 1e9,
                jvp_ns_per_dof=t["jvp"] / n * 1e9,
                vjp_ns_per_dof=t["vjp"] / n * 1e9,
                jvp_ratio=t["jvp"] / t["fd"],
                vjp_ratio=t["vjp"] / t["fd"],
                jvp_bytes_per_dof=memory_per_dof(n, "jvp"),
                vjp_bytes_per_dof=memory_per_dof(n, "vjp"),
            )
        )
    passes = {n: breakdown(n, repeats, min_time) for n in sizes}
    return dict(machine=machine(), rows=rows, breakdown=passes)


def markdown(result: dict) -> str:
    lines = [
        "| DOF | forward_dynamics (ns/DOF) | JVP (ns/DOF) | JVP / FD | VJP (ns/DOF) | VJP / FD "
        "| JVP memory (B/DOF) | VJP memory (B/DOF) |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in result["rows"]:
        lines.append(
            f"| {r['n']:,} | {r['fd_ns_per_dof']:.0f} | {r['jvp_ns_per_dof']:.0f} | {r['jvp_ratio']:.1f}x "
            f"| {r['vjp_ns_per_dof']:.0f} | {r['vjp_ratio']:.1f}x | {r['jvp_bytes_per_dof']:.0f} "
            f"| {r['vjp_bytes_per_dof']:.0f} |"
        )
    sizes = list(result["breakdown"])
    lines += ["", "Entries alone (ns/DOF):", "", "| call | " + " | ".join(f"{n:,} DOF" for n in sizes) + " |"]
    lines.append("|---|" + "---:|" * len(sizes))
    for k in result["breakdown"][sizes[0]]:
        lines.append(f"| {k} | " + " | ".join(f"{result['breakdown'][n][k]:.0f}" for n in sizes) + " |")
    lines += ["", f"Machine: {result['machine']}"]
    return "\n".join(lines)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.05)
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    result = run(a.sizes, a.repeats, a.min_time)
    text = markdown(result)
    print(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "derivatives_matfree.json"), "w") as f:
            json.dump(result, f, indent=1, default=str)
        with open(os.path.join(a.out, "derivatives_matfree.md"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
