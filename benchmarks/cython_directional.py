"""The compiled matrix-free derivatives of forward dynamics (denoc_bridge/core/directional.pyx)
against one forward dynamics, in one process (issue 49).

    python benchmarks/cython_directional.py                  # panda, talos, chain 100, chain 100,000
    python benchmarks/cython_directional.py --only panda --repeats 21
    python benchmarks/cython_directional.py --baseline /tmp/before/directional.cpython-311-x86_64-linux-gnu.so

Rows per model: the JVP (``forward_dynamics_jvp_state``) and the VJP
(``forward_dynamics_vjp_state``), each the compiled entry on preallocated arrays (the model's
table and work array, the buffer of the sweeps, the state, the outputs) and the public calls
``db.forward_dynamics_jvp`` / ``db.forward_dynamics_vjp`` over one public
``db.forward_dynamics`` on the same state: the issue's target (at 100,000 DOF, JVP and VJP
each at most 2x one forward dynamics).  Timings are the medians of interleaved repeats (every
call in turn within a repeat, in a rotating order) of batches of calls, each batch at least
``--batch-ms``; ``--clock cpu`` (the default) times this thread's CPU time, which a shared
machine's preemptions do not inflate.

``--baseline SO`` adds the entries of another build of the module (the ``directional`` extension
file of an earlier commit, built there and copied aside: it loads beside this one, both on this
checkout's ``tree`` module) on the same arrays, interleaved with the rest: the columns "before"
and "after" and their ratio (issue 49's fused passes were measured so).

numba's kernels (``kernels/directional.py``) are gone.  Measured with this script just before
they went, on the same arrays in one process (2-core AMD EPYC VM shared with other jobs, load
3-4, CPU time, medians of 15 repeats, two runs, 2026-12-07), Cython / numba: JVP panda 0.50
(1.82 / 3.65 us), talos 0.61 (4.94 / 8.12 us), a 100-link chain 0.77 (12.25 / 16.00 us), a
100,000-link chain 0.81-0.82 (13.63 / 16.69 ms); VJP 0.53, 0.65, 0.79, 0.87-0.88 (1.92 / 3.63
us, 5.39 / 8.24 us, 13.13 / 16.59 us, 14.90 / 17.04 ms); the results equal to 6.2e-16 (panda),
3.6e-15 (talos), 2.0e-12 (chain 100; 2.0e-5 at 100,000 DOF, M^-1's conditioning: there the
sweeps agree to 4e-14 and the solves on the same factors to 3e-15).  The public calls over one
``db.forward_dynamics`` at 100,000 DOF: JVP 2.13-2.14x, VJP 2.31-2.33x; with the passes fused
(issue 49, measured with ``--baseline`` against the build before, load 5): 1.82x and 1.77x, the
entries 0.84-0.94x (JVP) and 0.76-0.87x (VJP) their time before, panda to the 100,000-link chain.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import denoc_bridge as db  # noqa: E402
from denoc_bridge.algorithms import directional as adir  # noqa: E402
from denoc_bridge.core import directional as cy  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402

CLOCK = {"cpu": time.thread_time, "wall": time.perf_counter}


def robot(name: str):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        return db.load_robot(name)


MODELS = {
    "panda": lambda: robot("panda"),
    "talos": lambda: robot("talos"),
    "chain 100": lambda: serial_chain(100),
    "chain 100,000": lambda: serial_chain(100_000),
}


def per_call(fn, n: int, clock) -> float:
    t0 = clock()
    for _ in range(n):
        fn()
    return (clock() - t0) / n


def calls_for(fn, batch_s: float, clock) -> int:
    n, t = 1, 0.0
    while t < batch_s:
        n *= 2
        t = per_call(fn, n, clock) * n
    return n


def load_baseline(path: str):
    """Another build of ``denoc_bridge.core.directional`` from its extension file, beside this one."""
    spec = importlib.util.spec_from_file_location("denoc_bridge.core.directional", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def calls(model, before=None) -> dict:
    """{name: a call without arguments} on one state of the model (with the entries of the
    ``before`` module too, if given)."""
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    if model.nv > 1000:  # a long chain: a gentle state (its M is ill-conditioned)
        q, v, tau = 0.3 * rng.standard_normal(model.nv), 0.1 * v, 0.01 * tau
    q, v, tau, fext = adir._state(model, q, v, tau, None)
    dq, dv, dtau, lam = (rng.standard_normal(model.nv) for _ in range(4))
    work, buf = adir._buffers(model)
    kt = model._kt
    o = [np.empty(model.nv) for _ in range(5)]
    for status in (
        cy.forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, o[0], o[1]),
        cy.forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, o[0], o[2], o[3], o[4]),
    ):
        assert status == 0, status
    entries = {}
    if before is not None:
        b = [np.empty(model.nv) for _ in range(5)]
        entries = {
            "jvp before": lambda: before.forward_dynamics_jvp_state(
                kt, work, buf, q, v, tau, fext, dq, dv, dtau, b[0], b[1]
            ),
            "vjp before": lambda: before.forward_dynamics_vjp_state(
                kt, work, buf, q, v, tau, fext, lam, b[0], b[2], b[3], b[4]
            ),
        }
        for f in entries.values():
            assert f() == 0
    return entries | {
        "fd": lambda: db.forward_dynamics(model, q, v, tau),
        "jvp entry": lambda: cy.forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, o[0], o[1]),
        "vjp entry": lambda: cy.forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, o[0], o[2], o[3], o[4]),
        "jvp": lambda: db.forward_dynamics_jvp(model, q, v, tau, dq, dv, dtau),
        "vjp": lambda: db.forward_dynamics_vjp(model, q, v, tau, lam),
    }


def measure(fns: dict, repeats: int, batch_s: float, clock) -> dict:
    counts = {k: calls_for(f, batch_s, clock) for k, f in fns.items()}
    times: dict[str, list[float]] = {k: [] for k in fns}
    names = list(fns)
    for r in range(repeats):
        for k in names[r % len(names) :] + names[: r % len(names)]:
            times[k].append(per_call(fns[k], counts[k], clock))
    return {k: statistics.median(t) for k, t in times.items()}


def fmt(t: float) -> str:
    return f"{t * 1e6:.2f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms"


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--only", nargs="*", default=None)
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--batch-ms", type=float, default=20.0)
    p.add_argument("--clock", choices=sorted(CLOCK), default="cpu")
    p.add_argument("--baseline", default=None, help="another build's directional extension file")
    a = p.parse_args(argv)
    clock = CLOCK[a.clock]
    before = load_baseline(a.baseline) if a.baseline else None
    if before is None:
        print("| model | nv | forward_dynamics | JVP entry | public JVP / FD | VJP entry | public VJP / FD |")
        print("|---|---|---|---|---|---|---|")
    else:
        print(
            "| model | nv | forward_dynamics | JVP entry before / after | ratio | VJP entry before / after | ratio "
            "| public JVP / FD | public VJP / FD |"
        )
        print("|---|---|---|---|---|---|---|---|---|")
    for name, make in MODELS.items():
        if a.only and name not in a.only:
            continue
        model = make()
        t = measure(calls(model, before), a.repeats, a.batch_ms / 1e3, clock)
        fd = t["fd"]
        if before is not None:
            jb, vb = t["jvp before"], t["vjp before"]
            print(
                f"| {name} | {model.nv} | {fmt(fd)} | {fmt(jb)} / {fmt(t['jvp entry'])} | {t['jvp entry'] / jb:.2f} "
                f"| {fmt(vb)} / {fmt(t['vjp entry'])} | {t['vjp entry'] / vb:.2f} | {t['jvp'] / fd:.2f}x "
                f"| {t['vjp'] / fd:.2f}x |",
                flush=True,
            )
            continue
        print(
            f"| {name} | {model.nv} | {fmt(fd)} | {fmt(t['jvp entry'])} | {t['jvp'] / fd:.2f}x "
            f"| {fmt(t['vjp entry'])} | {t['vjp'] / fd:.2f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
