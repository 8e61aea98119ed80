"""The compiled fixed-step runs of a tree (denoc_bridge/core/run.pyx): time per step of RK4 and
Euler runs, a batch, and the falling rope of 000 against a Python RK4 loop around ``pin.aba``,
side by side in one process (issue 48).

    python benchmarks/cython_run.py                  # every row
    python benchmarks/cython_run.py --only panda --repeats 21

Rows:

* **runs**: RK4 and Euler on panda (flat joints), talos (a free-flyer: the Lie-group steps) and
  a 100-link revolute chain (the fused stage sweep), zero torque, springs and dampers off, every
  step saved: the time per step of one call of ``steps`` steps (fresh work arrays each call),
  thread CPU time;
* **batch**: ``simulate_batch``'s compiled call on B panda cases of ``--batch-steps`` RK4 steps:
  ``run_batch_chunk`` on the thread pool (``run_claimed``), wall time;
* **rope**: ``db.simulate`` of the 100-DOF rope of 000 §4 released from the horizontal, 1.75 s
  at dt = 1 ms (RK4), against :func:`denoc_bridge.testing.pin_rk4` (a plain Python RK4 loop
  around ``pin.aba``), thread CPU time (both run in the calling thread: the compiled run
  releases the GIL but runs in it), and the compiled run alone.

numba's runs of a tree, which these rows timed beside the compiled ones until issue 48 deleted
them (numba is no longer a dependency), were 1.25-2.3x slower per step (docs/performance.md
keeps the table as history).  Each repeat times
every implementation of a row in a rotating order (each one first in turn); the table gives the
medians and the ratios.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.core import run as compiled
from denoc_bridge.core import systems as kr
from denoc_bridge.core.systems import Saves
from denoc_bridge.multibody.data import run_claimed
from denoc_bridge.simulation.common import Forces
from denoc_bridge.simulation.tree import TreeSystem
from denoc_bridge.testing import pin_rk4

MODELS = {
    "panda": lambda: db.load_robot("panda"),
    "talos": lambda: db.load_robot("talos"),
    "chain 100": lambda: db.generators.chain(100),
}


def tuples(model, n_steps):
    """The named tuples of a run of ``model`` (zero torque, no springs, no limits)."""
    forces = Forces(model, None, None, n_steps, "rk4")
    system = TreeSystem(model, forces, False, False)
    return system.kernel_system(), system.forcing()


def one_run(stepper, ks, fc, q0, v0, n):
    """A call of ``n`` steps on fresh arrays (allocated outside the clock): the seconds per step."""
    nq, nv = q0.shape[0], v0.shape[0]
    ks = ks._replace(work=np.empty_like(ks.work))
    out = Saves(np.empty((n, nq)), np.empty((n, nv)), np.empty((n, nv)), np.zeros(0), np.zeros(0))
    s = np.zeros((kr.RUN_ROWS, max(nq, nv, 1)))
    q, v = q0.copy(), v0.copy()
    t0 = time.thread_time()
    done, status, _ = stepper(ks, fc, q, v, 0, n, 1e-3, 1, 0, out, s)
    t = time.thread_time() - t0
    assert (done, status) == (n, 0)
    return t / n


def interleaved(fns, repeats, stat=statistics.median):
    """{name: median (or ``stat``) seconds} of the calls ``fns`` (name -> call returning seconds),
    rotating."""
    keys = list(fns)
    times = {k: [] for k in keys}
    for r in range(repeats):
        for k in keys[r % len(keys) :] + keys[: r % len(keys)]:
            times[k].append(fns[k]())
    interleaved.last = times
    return {k: stat(v) for k, v in times.items()}


def run_rows(args):
    print(f"{'model':<10} {'method':<6} {'steps':>6} {'us/step':>10}")
    for name, make in MODELS.items():
        if args.only and args.only not in name:
            continue
        model = make()
        rng = np.random.default_rng(0)
        q0, v0 = db.neutral_configuration(model), 0.3 * rng.standard_normal(model.nv)
        n = max(20, int(args.step_work // model.nv))
        ks, fc = tuples(model, n)
        for method in ("rk4", "euler"):
            ours = compiled.rk4_run if method == "rk4" else compiled.euler_run
            t = interleaved({"cython": lambda s=ours: one_run(s, ks, fc, q0, v0, n)}, args.repeats)
            print(f"{name:<10} {method:<6} {n:>6} {t['cython'] * 1e6:>10.3f}", flush=True)


def batch_row(args):
    model = db.load_robot("panda")
    B, n = args.batch, args.batch_steps
    rng = np.random.default_rng(1)
    Q0 = np.array([db.random_configuration(model, rng) for _ in range(B)])
    V0 = 0.3 * rng.standard_normal((B, model.nv))
    ks, fc = tuples(model, n)
    fc = fc._replace(taus=np.zeros((B, 1, model.nv)))

    def arrays():
        out = Saves(np.empty((B, n, model.nq)), np.empty((B, n, model.nv)), np.empty((B, n, model.nv)),
                    np.zeros((B, 0)), np.zeros((B, 0)))  # fmt: skip
        return Q0.copy(), V0.copy(), out, *(np.zeros(B, np.int64) for _ in range(3))

    def timed(fn):
        Q, V, out, done, status, saved = arrays()
        t0 = time.perf_counter()
        fn(Q, V, out, done, status, saved)
        t = time.perf_counter() - t0
        assert np.all(done == n) and not np.any(status)
        return t

    ours = lambda *a: run_claimed(compiled.run_batch_chunk, B, ks, fc, *a[:2], n, 1e-3, 1, *a[2:], False)  # noqa: E731
    t = interleaved({"cython": lambda: timed(ours)}, max(3, args.repeats // 2))
    c = t["cython"] * 1e3
    print(f"\nbatch: {B} panda cases x {n} RK4 steps (wall, {db.multibody.data.batch_threads()} threads)")
    print(f"  {c:.1f} ms  ({c * 1e3 / (B * n):.3f} us per case-step)")


def rope_row(args):
    rope = db.generators.rope()
    q0, v0 = db.neutral_configuration(rope), np.zeros(rope.nv)
    t_final, dt = 1.75, 1e-3
    n = int(round(t_final / dt))
    pm = db.to_pinocchio(rope)

    def ours():
        t0 = time.thread_time()
        db.simulate(rope, q0, v0, t_final, dt, progress=False)
        return time.thread_time() - t0

    def python_loop():
        t0 = time.thread_time()
        pin_rk4(pm, q0.copy(), v0.copy(), dt, n)
        return time.thread_time() - t0

    ks, fc = tuples(rope, n)
    t = interleaved(
        {
            "simulate": ours,
            "pin loop": python_loop,
            "cython run": lambda: one_run(compiled.rk4_run, ks, fc, q0, v0, n) * n,
        },
        max(3, args.repeats // 2),
    )
    s, p = t["simulate"] * 1e3, t["pin loop"] * 1e3
    c = t["cython run"] * 1e3
    fastest = {k: min(v) * 1e3 for k, v in interleaved.last.items()}
    print(f"\nrope of 000 (100 DOF, {t_final} s, dt {dt * 1e3:g} ms, RK4):")
    print(f"  db.simulate {s:.1f} ms  Python RK4 around pin.aba {p:.1f} ms  ratio {s / p:.3f} (target <= 0.15)")
    ratio = fastest["simulate"] / fastest["pin loop"]
    print(f"  fastest repeats: {fastest['simulate']:.1f} ms / {fastest['pin loop']:.1f} ms = {ratio:.3f}")
    print(f"  the compiled run alone: {c:.1f} ms")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeats", type=int, default=11)
    p.add_argument("--only", help="run rows whose model contains this")
    p.add_argument("--step-work", type=float, default=40_000, help="steps x nv of a timed run call")
    p.add_argument("--batch", type=int, default=4096)
    p.add_argument("--batch-steps", type=int, default=25)
    p.add_argument("--no-batch", action="store_true")
    p.add_argument("--no-rope", action="store_true")
    args = p.parse_args(argv)
    print(f"pinocchio {pin.__version__}, thread CPU time (runs, rope), wall time (batch)")
    run_rows(args)
    if not args.no_batch:
        batch_row(args)
    if not args.no_rope:
        rope_row(args)


if __name__ == "__main__":
    main()
