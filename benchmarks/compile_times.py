"""What numba compiles, and for how long, on a cold first call of every public capability.

    python benchmarks/compile_times.py                 # every capability, one cold process
    python benchmarks/compile_times.py --each          # also each capability in its own cold cache
    python benchmarks/compile_times.py --only fd,simulate --top 40

Each run happens in a fresh process whose numba cache is an empty temporary folder
(``NUMBA_CACHE_DIR``), so that every kernel compiles.  The process records numba's
``numba:compile`` events: each compiled specialisation (kernel + argument types) gets its
*self* time (its own typing, lowering and LLVM optimisation, without the kernels it compiled
on the way) and the number of versions of each kernel.  The table lists the kernels by self
time; the capabilities' first-call times are wall seconds of the first call in that process
(the compilation of what the capabilities before it left uncompiled).

Times are thread CPU seconds (``time.thread_time``: numba compiles in the calling thread, under
its global lock), so that a loaded machine moves them less than wall time.  Results go to
``benchmarks/results/compile_times.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"

#: the capabilities, in the order a user meets them; each a snippet run in the worker process
#: with ``db`` (denoc_bridge), ``np``, ``panda``, ``fourbar``, ``fivebar`` (mimic + loops) bound
CAPABILITIES: dict[str, str] = {
    "validate": "from denoc_bridge.validation import compare_with_pinocchio; compare_with_pinocchio(panda)",
    "fd": "db.forward_dynamics(panda, q, v, tau)",
    "id": "db.inverse_dynamics(panda, q, v, tau)",
    "gim": "db.mass_matrix(panda, q)",
    "minv": "db.inverse_mass_matrix(panda, q)",
    "udut": "db.udut(panda, q); db.inverse_udut(panda, q)",
    "kinematics": "db.forward_kinematics(panda, q); db.link_velocities(panda, q, v); db.energies(panda, q, v)",
    "derivatives": "db.inverse_dynamics_derivatives(panda, q, v, tau); db.forward_dynamics_derivatives(panda, q, v, tau)",
    "jvp_vjp": "db.forward_dynamics_jvp(panda, q, v, tau, v, v, v); db.forward_dynamics_vjp(panda, q, v, tau, v)",
    "simulate": "db.simulate(panda, q, v, t_final=0.01, dt=1e-3)",
    "euler": "db.simulate(panda, q, v, t_final=0.01, dt=1e-3, method='euler')",
    "implicit": "db.simulate(panda, q, v, t_final=0.01, dt=1e-3, method='sdirk2')",
    "adaptive": "db.simulate(panda, q, v, t_final=0.01, method='RK45')",
    "batch": "db.simulate_batch(panda, np.stack([q, q]), np.stack([v, v]), t_final=0.01, dt=1e-3)",
    "loops": "db.forward_dynamics(fourbar, fq, fv, ftau); db.simulate(fourbar, fq, fv, t_final=0.01, dt=1e-3)",
    "mimic": "db.forward_dynamics(gripper, gq, gv, gtau); db.simulate(gripper, gq, gv, t_final=0.01, dt=1e-3)",
    "mimic_loops": "db.simulate(fivebar, vq, vv, t_final=0.01, dt=1e-3)",
    "contact": "db.simulate(panda, q, v, t_final=0.01, dt=1e-3, method='contact-euler', contact=db.Ground(height=0.3), "
    "contact_points=panda.link_names[-3:], hold=db.posture_hold(panda))",
}

_SETUP = """
import numpy as np
import denoc_bridge as db
from denoc_bridge.io import generators as g
panda = db.load_robot("panda")
q = db.random_configuration(panda, 0); v = np.full(panda.nv, 0.1); tau = np.full(panda.nv, 0.2)
fourbar = g.fourbar(); fq = db.neutral_configuration(fourbar); fv = np.zeros(fourbar.nv); ftau = np.zeros(fourbar.nv)
gripper = db.load_robot("gripper", mimic=True)
gq = db.neutral_configuration(gripper); gv = np.zeros(gripper.nv); gtau = np.zeros(gripper.nv)
fivebar = g.geared_fivebar(); vq = db.neutral_configuration(fivebar); vv = np.zeros(fivebar.nv)
"""


def worker(names: list[str]) -> dict:
    """Run the capabilities ``names`` in this process, recording numba's compilations."""
    from numba.core import event

    kernels: dict[str, dict] = defaultdict(lambda: {"self": 0.0, "versions": 0, "signatures": []})
    stack: list[list] = []  # [name, start, child seconds]

    class Recorder(event.Listener):
        def on_start(self, ev):
            disp = ev.data["dispatcher"]
            func = getattr(disp, "py_func", None)
            name = f"{func.__module__.rsplit('.', 1)[-1]}.{func.__qualname__}" if func else str(disp)
            stack.append([name, time.thread_time(), 0.0])
            kernels[name]["signatures"].append(str(ev.data.get("args")))

        def on_end(self, ev):
            name, start, child = stack.pop()
            total = time.thread_time() - start
            kernels[name]["self"] += total - child
            kernels[name]["versions"] += 1
            if stack:
                stack[-1][2] += total

    t0 = time.perf_counter()
    c0 = time.thread_time()
    env: dict = {}
    with event.install_listener("numba:compile", Recorder()):
        exec(_SETUP, env)
        setup = (time.perf_counter() - t0, time.thread_time() - c0)
        firsts = {}
        for name in names:
            w, c = time.perf_counter(), time.thread_time()
            exec(CAPABILITIES[name], env)
            firsts[name] = {"wall": time.perf_counter() - w, "cpu": time.thread_time() - c}
    return {"setup": setup, "firsts": firsts, "kernels": dict(kernels)}


def run_cold(names: list[str], warm: bool = False) -> dict:
    """The worker in a fresh process with an empty numba cache (``warm``: the installed one)."""
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ) if warm else dict(os.environ, NUMBA_CACHE_DIR=tmp)
        out = subprocess.run(
            [sys.executable, __file__, "--worker", ",".join(names)],
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        if out.returncode:
            raise SystemExit(out.stderr)
        return json.loads(out.stdout.strip().splitlines()[-1])


def table(result: dict, top: int) -> str:
    rows = sorted(result["kernels"].items(), key=lambda kv: -kv[1]["self"])
    total = sum(k["self"] for k in result["kernels"].values())
    versions = sum(k["versions"] for k in result["kernels"].values())
    lines = [
        f"{len(rows)} kernels, {versions} compiled versions, {total:.1f} s of compilation (thread CPU)",
        "",
        "| kernel | versions | self s | share |",
        "|---|---|---|---|",
    ]
    for name, k in rows[:top]:
        lines.append(f"| `{name}` | {k['versions']} | {k['self']:.2f} | {100 * k['self'] / total:.1f} % |")
    several = [(n, k) for n, k in rows if k["versions"] > 1]
    if several:
        lines += ["", "Kernels compiled in several versions (argument types):", ""]
        for name, k in several:
            lines.append(f"* `{name}`: " + "; ".join(f"`{sig[:300]}`" for sig in k["signatures"]))
    lines += ["", "| capability (first call, in this order) | wall s | CPU s |", "|---|---|---|"]
    for name, f in result["firsts"].items():
        lines.append(f"| {name} | {f['wall']:.2f} | {f['cpu']:.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--worker", help=argparse.SUPPRESS)
    p.add_argument("--only", help="comma-separated capabilities (default: all)")
    p.add_argument("--each", action="store_true", help="also each capability alone in a cold cache")
    p.add_argument(
        "--warm",
        action="store_true",
        help="with the installed cache instead: each capability's first call in a new process (what a user meets)",
    )
    p.add_argument("--top", type=int, default=30, help="kernels listed")
    p.add_argument("--no-save", action="store_true")
    args = p.parse_args(argv)
    if args.worker:
        print(json.dumps(worker(args.worker.split(","))))
        return
    names = args.only.split(",") if args.only else list(CAPABILITIES)
    unknown = [n for n in names if n not in CAPABILITIES]
    if unknown:
        raise SystemExit(f"unknown capabilities {unknown}; choose from {', '.join(CAPABILITIES)}")
    if args.warm:
        total = 0.0
        for name in names:
            r = run_cold([name], warm=True)
            compiled = sum(k["versions"] for k in r["kernels"].values())
            total += r["firsts"][name]["wall"]
            print(
                f"{name:12s} first call in a new process: {r['firsts'][name]['wall']:6.2f} s wall, {compiled} kernels compiled"
            )
        print(f"all first calls: {total:.1f} s")
        return
    result = run_cold(names)
    text = table(result, args.top)
    print(text)
    out = {"all": result}
    if args.each:
        out["each"] = {}
        for name in names:
            r = run_cold([name])
            out["each"][name] = {"cpu": sum(k["self"] for k in r["kernels"].values()), "first": r["firsts"][name]}
            print(
                f"{name:12s} alone, cold: {out['each'][name]['cpu']:.1f} s compile, first call {r['firsts'][name]['wall']:.1f} s wall"
            )
    if not args.no_save and not args.only:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "compile_times.json").write_text(json.dumps(out, indent=1))
        (RESULTS / "compile_times.md").write_text(text + "\n")


if __name__ == "__main__":
    main()
