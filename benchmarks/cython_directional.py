"""The compiled matrix-free derivatives of forward dynamics (denoc_bridge/core/directional.pyx) next
to the numba entries they replace, in one process (issue 49).

    python benchmarks/cython_directional.py                  # panda, talos, chain 100, chain 100,000
    python benchmarks/cython_directional.py --only panda --repeats 21

Rows per model: the JVP (``forward_dynamics_jvp_state``) and the VJP
(``forward_dynamics_vjp_state``), each the compiled entry and numba's on the same arrays (the
model's table and work array, the buffer of the sweeps, the state, preallocated outputs), and
the public calls ``db.forward_dynamics_jvp`` / ``db.forward_dynamics_vjp`` over one public
``db.forward_dynamics`` on the same state: the issue's target (at 100,000 DOF, JVP and VJP
each at most 2x one forward dynamics).  Before timing, the results of the
two implementations are compared (the largest relative difference, printed).  Timings are the
medians of interleaved repeats (every implementation in turn within a repeat, in a rotating
order) of batches of calls, each batch at least ``--batch-ms``; ``--clock cpu`` (the default)
times this thread's CPU time, which a shared machine's preemptions do not inflate.
"""

from __future__ import annotations

import argparse
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
from denoc_bridge.kernels import directional as nb  # noqa: E402

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


def case(model):
    """{name: call} and the largest relative difference of the two implementations."""
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    v, tau = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    if model.nv > 1000:  # a long chain: a gentle state (its M is ill-conditioned)
        q, v, tau = 0.3 * rng.standard_normal(model.nv), 0.1 * v, 0.01 * tau
    q, v, tau, fext = adir._state(model, q, v, tau, None)
    dq, dv, dtau, lam = (rng.standard_normal(model.nv) for _ in range(4))
    work, buf = adir._buffers(model)
    kt, nv = model._kt, model.nv
    out = {k: np.empty(nv) for k in ("qdd", "jvp", "gq", "gv", "gtau")}
    results = {}
    for name, mod in (("cython", cy), ("numba", nb)):
        o = {k: np.empty(nv) for k in out}
        s1 = mod.forward_dynamics_jvp_state(kt, work, buf, q, v, tau, fext, dq, dv, dtau, o["qdd"], o["jvp"])
        s2 = mod.forward_dynamics_vjp_state(kt, work, buf, q, v, tau, fext, lam, o["qdd"], o["gq"], o["gv"], o["gtau"])
        assert s1 == s2 == 0, (name, s1, s2)
        results[name] = o
    diff = max(
        float(np.abs(results["cython"][k] - results["numba"][k]).max() / np.abs(results["numba"][k]).max())
        for k in ("jvp", "gq", "gv", "gtau")
    )

    def jvp(mod):
        return lambda: mod.forward_dynamics_jvp_state(
            kt, work, buf, q, v, tau, fext, dq, dv, dtau, out["qdd"], out["jvp"]
        )

    def vjp(mod):
        return lambda: mod.forward_dynamics_vjp_state(
            kt, work, buf, q, v, tau, fext, lam, out["qdd"], out["gq"], out["gv"], out["gtau"]
        )

    q0, v0, tau0 = q.copy(), v.copy(), tau.copy()
    fns = {
        "fd": lambda: db.forward_dynamics(model, q0, v0, tau0),
        "jvp public": lambda: db.forward_dynamics_jvp(model, q0, v0, tau0, dq, dv, dtau),
        "vjp public": lambda: db.forward_dynamics_vjp(model, q0, v0, tau0, lam),
        "jvp cython": jvp(cy),
        "jvp numba": jvp(nb),
        "vjp cython": vjp(cy),
        "vjp numba": vjp(nb),
    }
    return fns, diff


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
    a = p.parse_args(argv)
    clock = CLOCK[a.clock]
    print(
        "| model | nv | forward_dynamics | JVP Cython | JVP numba | Cython / numba | public JVP / FD "
        "| VJP Cython | VJP numba | Cython / numba | public VJP / FD | max. rel. diff. |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, make in MODELS.items():
        if a.only and name not in a.only:
            continue
        model = make()
        fns, diff = case(model)
        t = measure(fns, a.repeats, a.batch_ms / 1e3, clock)
        jc, jn, vc, vn, fd = t["jvp cython"], t["jvp numba"], t["vjp cython"], t["vjp numba"], t["fd"]
        jp, vp = t["jvp public"], t["vjp public"]
        print(
            f"| {name} | {model.nv} | {fmt(fd)} | {fmt(jc)} | {fmt(jn)} | {jc / jn:.2f} | {jp / fd:.2f}x "
            f"| {fmt(vc)} | {fmt(vn)} | {vc / vn:.2f} | {vp / fd:.2f}x | {diff:.1e} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
