"""RK4 simulation of robots with ``<mimic>`` joints as constraints, side by side with Pinocchio.

    python benchmarks/mimic_simulation.py [--quick] [--out benchmarks/results]

On the same model and initial state, in one process (wall time of whole runs: the best of
``--repeats`` runs, interleaved):

* ours, compiled: ``db.simulate(load_urdf(path, mimic=True), q0, v0, T, dt, limits=False)`` (classical
  RK4 in Pinocchio's mimic layout; the stepping loop compiled, ``denoc_bridge/core/run.pyx``:
  per stage one forward dynamics of the tree that keeps its articulated factors, one solve
  with them per mimic joint and one for the correction);
* ours, Python stages: the same steps stage by stage from Python, each stage's
  accelerations one compiled call (:func:`denoc_bridge.simulation.mimic.run_stages`; what
  ``simulate`` runs with a callable ``tau``);
* Pinocchio: a Python RK4 loop on ``pin.buildModelFromUrdf(path, mimic=True)`` with
  ``solve(crba, -rnea(q, v, 0))`` and ``pin.integrate`` (:func:`denoc_bridge.testing.pin_mimic_rk4`;
  Pinocchio 4.1's ``aba`` refuses mimic models).

Single calls (``calls``): at one random state per robot, our ``inverse_dynamics``,
``mass_matrix`` and ``forward_dynamics`` of the mimic model (each one compiled entry,
``denoc_bridge/core/mimic.pxi``) next to Pinocchio's ``rnea``, ``crba`` and
``solve(crba, tau - nonLinearEffects)`` (its forward dynamics of a mimic model); microseconds
per call from Python, the best of ``--repeats`` batches of 2,000 calls (200 with ``--quick``);
panda (one mimic finger) is added to the robots.

The runs start at the neutral configuration at rest (the robots fall under gravity); the
final states of the three are compared (max |q - q_pin|) and our energy error is reported
(max |E(t) - E(0)| / max T).  Robots: the mimic gripper of ``urdf/`` (6 mimic joints,
4 DOF) and example-robot-data's pr2 on a free-flyer base (10 mimic joints, 26 DOF).

Writes ``mimic_simulation.json`` and ``mimic_simulation.md`` to ``--out``.  ``--quick``:
0.05 s simulated, one repeat (a smoke test, not a measurement).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import time
import warnings

import numpy as np


def _models(path, floating):
    import pinocchio as pin

    import denoc_bridge as db

    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        mm = db.load_urdf(path, mimic=True, floating_base=floating)
        root = (pin.JointModelFreeFlyer(),) if floating else ()
        pm = pin.buildModelFromUrdf(path, *root, mimic=True)
    return mm, pm


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = parser.parse_args(argv)

    import denoc_bridge as db
    from denoc_bridge.io.robots import resolve_robot
    from denoc_bridge.simulation.mimic import run_stages
    from denoc_bridge.testing import pin_mimic_rk4

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    robots = [
        ("mimic_gripper", os.path.join(here, "urdf", "mimic_gripper.urdf"), False),
        ("pr2", resolve_robot("pr2").path, True),
    ]
    T, dt = (0.05, 1e-3) if args.quick else (0.5, 1e-3)
    repeats = 1 if args.quick else args.repeats
    n = int(round(T / dt))
    rows = []
    for name, path, floating in robots:
        mm, pm = _models(path, floating)
        q0, v0 = db.neutral_configuration(mm), np.zeros(mm.nv)
        db.simulate(mm, q0, v0, 2 * dt, dt, limits=False)  # warm up: the first call sets up the model
        times = {"compiled": [], "python": [], "pin": []}
        for _ in range(repeats):
            t0 = time.perf_counter()
            ours = db.simulate(mm, q0, v0, T, dt, limits=False)  # Pinocchio has no joint limits
            times["compiled"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            stages = run_stages(mm, q0, v0, T, dt)
            times["python"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            q_pin, _ = pin_mimic_rk4(pm, q0.copy(), v0.copy(), dt, n)
            times["pin"].append(time.perf_counter() - t0)
        best = {k: min(v) for k, v in times.items()}
        rows.append(
            {
                "robot": name,
                "nv": mm.nv,
                "tree_nv": mm.tree.nv,
                "mimic_joints": mm.n_constraints,
                "steps": n,
                **{f"wall_{k}": v for k, v in best.items()},
                "us_per_step_compiled": 1e6 * best["compiled"] / n,
                "speedup_vs_pin": best["pin"] / best["compiled"],
                "speedup_vs_python_stages": best["python"] / best["compiled"],
                "q_gap_pin": float(np.abs(ours.q[-1] - q_pin).max()),
                "q_gap_python_stages": float(np.abs(ours.q - stages.q).max()),
                "energy_error": float(np.abs(ours.energy_drift(relative=True)).max()),
            }
        )
    calls = _calls(
        robots[:1] + [("panda", resolve_robot("panda").path, False)] + robots[1:], repeats, 200 if args.quick else 2000
    )
    meta = {
        "t_final": T,
        "dt": dt,
        "repeats": repeats,
        "quick": args.quick,
        "python": platform.python_version(),
        "date": time.strftime("%Y-%m-%d"),
    }
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "mimic_simulation.json"), "w") as fh:
        json.dump({"meta": meta, "rows": rows, "calls": calls}, fh, indent=1)
    md = _table(meta, rows, calls)
    with open(os.path.join(args.out, "mimic_simulation.md"), "w") as fh:
        fh.write(md)
    print(md)
    return {"meta": meta, "rows": rows, "calls": calls}


def _calls(robots, repeats, n):
    """Per robot: microseconds per call of ours and Pinocchio's, and the largest differences."""
    import pinocchio as pin

    import denoc_bridge as db

    def best(fn):
        fn()
        times = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            times.append((time.perf_counter() - t0) / n * 1e6)
        return min(times)

    out = []
    for name, path, floating in robots:
        mm, pm = _models(path, floating)
        pd = pm.createData()
        rng = np.random.default_rng(1)
        q, v, a = db.random_configuration(mm, rng), rng.standard_normal(mm.nv), rng.standard_normal(mm.nv)
        tau = db.inverse_dynamics(mm, q, v, a)

        def pin_fd():
            M = pin.crba(pm, pd, q)
            return np.linalg.solve(np.triu(M) + np.triu(M, 1).T, tau - pin.nonLinearEffects(pm, pd, q, v))

        scale = max(np.abs(a).max(), 1.0)
        out.append(
            {
                "robot": name,
                "nv": mm.nv,
                "id_us": best(lambda: db.inverse_dynamics(mm, q, v, a)),
                "rnea_us": best(lambda: pin.rnea(pm, pd, q, v, a)),
                "mass_us": best(lambda: db.mass_matrix(mm, q)),
                "crba_us": best(lambda: pin.crba(pm, pd, q)),
                "fd_us": best(lambda: db.forward_dynamics(mm, q, v, tau)),
                "pin_fd_us": best(pin_fd),
                "id_error": float(np.abs(tau - pin.rnea(pm, pd, q, v, a)).max() / np.abs(tau).max()),
                "fd_error": float(np.abs(db.forward_dynamics(mm, q, v, tau) - pin_fd()).max() / scale),
            }
        )
    return out


def _table(meta, rows, calls) -> str:
    lines = [
        f"RK4, dt = {meta['dt'] * 1e3:g} ms, {meta['t_final']} s from the neutral configuration at rest "
        f"(best of {meta['repeats']}):",
        "",
        "| robot (DOF / tree DOF, mimic joints) | ours, compiled | ours, Python stages | Pinocchio crba RK4 loop "
        "| ours vs Pinocchio | max \\|q - q_pin\\| | energy error |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['robot']} ({r['nv']} / {r['tree_nv']}, {r['mimic_joints']}) | "
            f"{1e3 * r['wall_compiled']:.1f} ms ({r['us_per_step_compiled']:.0f} us/step) | "
            f"{1e3 * r['wall_python']:.0f} ms | {1e3 * r['wall_pin']:.0f} ms | "
            f"{r['speedup_vs_pin']:.1f}x faster | {r['q_gap_pin']:.1e} | {r['energy_error']:.1e} |"
        )
    lines += [
        "",
        "Single calls from Python, us (best of batches):",
        "",
        "| robot (DOF) | inverse dynamics / `pin.rnea` | GIM / `pin.crba` | forward dynamics / "
        "`solve(crba, tau - nle)` | rel. difference ID / FD |",
        "|---|---|---|---|---|",
    ]
    for c in calls:
        lines.append(
            f"| {c['robot']} ({c['nv']}) | {c['id_us']:.1f} / {c['rnea_us']:.1f} | {c['mass_us']:.1f} / "
            f"{c['crba_us']:.1f} | {c['fd_us']:.1f} / {c['pin_fd_us']:.1f} | {c['id_error']:.1e} / "
            f"{c['fd_error']:.1e} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
