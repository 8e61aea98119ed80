"""The first call of every public capability in a new process, after the import and the models'
loading (issue 49: each <= 0.3 s; nothing compiles after install).

    python benchmarks/first_calls.py              # every capability, each in a fresh process
    python benchmarks/first_calls.py --repeats 3  # the median of 3 fresh processes each

Each capability runs in its own new process (``python -c``, in a temporary folder: the installed
package is the one imported): the setup (import, robots) is timed apart, then the capability's first call (wall seconds), then a second call of the same snippet
(the warm figure, for scale).  Results go to ``benchmarks/results/first_calls.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
LIMIT = 0.3  # s: issue 49's bound on a capability's first call

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

_WORKER = """
import json, sys, time
t0 = time.perf_counter()
{setup}
t1 = time.perf_counter()
code = {code!r}
exec(code)
t2 = time.perf_counter()
exec(code)
t3 = time.perf_counter()
print(json.dumps(dict(setup=t1 - t0, first=t2 - t1, second=t3 - t2, numba="numba" in sys.modules)))
"""


def one(name: str) -> dict:
    """The capability ``name`` in a fresh process."""
    script = _WORKER.format(setup=_SETUP, code=CAPABILITIES[name])
    with tempfile.TemporaryDirectory() as cwd:  # outside the clone: the installed package is imported
        out = subprocess.run(
            [sys.executable, "-c", script],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
            env=dict(os.environ, PYTHONWARNINGS="ignore"),
        )
    if out.returncode:
        raise SystemExit(f"{name}: exit {out.returncode}\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=1, help="fresh processes per capability (median)")
    p.add_argument("--only", default=None, help="comma-separated capabilities")
    args = p.parse_args()
    names = args.only.split(",") if args.only else list(CAPABILITIES)
    rows = {}
    for name in names:
        runs = [one(name) for _ in range(max(1, args.repeats))]
        rows[name] = {k: statistics.median(r[k] for r in runs) for k in ("setup", "first", "second")}
        rows[name]["numba"] = any(r["numba"] for r in runs)
        print(
            f"{name:12} first {rows[name]['first']:.3f} s  second {rows[name]['second']:.4f} s  "
            f"(setup {rows[name]['setup']:.2f} s){'  NUMBA IMPORTED' if rows[name]['numba'] else ''}",
            flush=True,
        )
    worst = max(rows, key=lambda n: rows[n]["first"])
    load = os.getloadavg()[0]
    lines = [
        f"First calls in fresh processes ({args.repeats} each, median), load {load:.2f}, {time.strftime('%Y-%m-%d')}.",
        "",
        "| capability | first call (s) | second call (s) | setup: import + robots (s) |",
        "|---|---|---|---|",
        *(f"| {n} | {r['first']:.3f} | {r['second']:.4f} | {r['setup']:.2f} |" for n, r in rows.items()),
        "",
        f"Slowest first call: {worst} {rows[worst]['first']:.3f} s (bound {LIMIT} s: "
        f"{'met' if rows[worst]['first'] <= LIMIT else 'missed'}).",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "first_calls.json").write_text(json.dumps(dict(rows=rows, load=load), indent=1))
    (RESULTS / "first_calls.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
