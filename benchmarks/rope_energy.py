"""The rope's RK4 energy error, and what it depends on (issue 4's bound: 1e-5 of the peak
kinetic energy at dt = 1 ms).

    python benchmarks/rope_energy.py [--quick] [--out benchmarks/results]

The run: the 100-DOF rope of 000 §4 (:func:`denoc_bridge.io.generators.rope`) released at rest
from the horizontal, 1.75 s, fixed steps of 1 ms and 0.5 ms.  The error is
``max_t |E(t) - E(0)| / max_t T(t)`` over every step (``Trajectory.energy_drift(relative=True)``).
Printed and written to ``rope_energy.json`` / ``rope_energy.md``:

* **engines**: ``db.simulate`` (classical RK4, compiled) and a plain Python classical RK4
  loop around ``pin.aba`` on the same model (:func:`denoc_bridge.testing.pin_rk4`);
* **schemes**: four-stage fourth-order Runge-Kutta schemes other than the classical one
  (Kutta's 3/8 rule, Ralston's minimum-error-bound scheme, Gill's), each as a Python loop
  around ``pin.aba`` driven by its Butcher tableau; the classical tableau through the same
  loop must reproduce ``pin_rk4`` (checked);
* **peak**: the error at the steps around its maximum (how wide the peak is);
* **gravity**: |g| from 9.79 to 9.82 m/s^2 (the phase of the whip against the step grid);
* **inertia**: the links' rotational inertia about their centre of mass scaled by s (mass,
  centre of mass and length kept), i.e. I / (m l^2) from 0.043 (s = 0.5) to 0.21 (s = 2.5);
* **crosses**: the massless crosses of the universal joints given the rotational inertia of
  the cylinder they carry (mass still zero), a plausible slip when a rope is written link by
  link with one inertia for all; in the plane of the fall it equals s = 2.

``--quick`` stops at 0.75 s (just past the whip at 0.708 s) and runs fewer variants: a smoke
test of the script, not the README's numbers.
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np

#: Butcher tableaus (a, b; c = row sums of a) of four-stage fourth-order explicit schemes.
SCHEMES = {
    "classical": ([[], [1 / 2], [0, 1 / 2], [0, 0, 1]], [1 / 6, 1 / 3, 1 / 3, 1 / 6]),
    "3/8 rule": ([[], [1 / 3], [-1 / 3, 1], [1, -1, 1]], [1 / 8, 3 / 8, 3 / 8, 1 / 8]),
    "Ralston": (
        [
            [],
            [0.4],
            [0.29697760924775360, 0.15875964497103583],
            [0.21810038822592047, -3.0509651486929308, 3.8328647604670103],
        ],
        [0.17476028226269037, -0.55148066287873294, 1.2055355993965235, 0.17118478121951903],
    ),
    "Gill": (
        [[], [1 / 2], [(np.sqrt(2) - 1) / 2, (2 - np.sqrt(2)) / 2], [0, -np.sqrt(2) / 2, 1 + np.sqrt(2) / 2]],
        [1 / 6, (2 - np.sqrt(2)) / 6, (2 + np.sqrt(2)) / 6, 1 / 6],
    ),
}


def tableau_rk(pm, q, v, dt, steps, scheme):
    """A plain Python explicit Runge-Kutta loop around ``pin.aba`` (zero torque) with the
    given tableau (q and v in a vector space: revolute joints).  Returns the final (q, v) and
    the relative energy error at each step, as ``Trajectory.energy_drift(relative=True)``."""
    import pinocchio as pin

    a, b = scheme
    pd = pm.createData()
    tau = np.zeros(pm.nv)
    E0 = pin.computeKineticEnergy(pm, pd, q, v) + pin.computePotentialEnergy(pm, pd, q)
    kinetic, total = [], []
    for _ in range(steps):
        kq, kv = [], []
        for s in range(4):
            qs = q + dt * sum(a[s][j] * kq[j] for j in range(s)) if s else q
            vs = v + dt * sum(a[s][j] * kv[j] for j in range(s)) if s else v
            kq.append(vs)
            kv.append(pin.aba(pm, pd, qs, vs, tau))
        q = q + dt * sum(b[s] * kq[s] for s in range(4))
        v = v + dt * sum(b[s] * kv[s] for s in range(4))
        kinetic.append(pin.computeKineticEnergy(pm, pd, q, v))
        total.append(kinetic[-1] + pin.computePotentialEnergy(pm, pd, q))
    return q, v, (np.array(total) - E0) / max(kinetic)


def _error(model, t_final, dt):
    """(max relative energy error, time of the max, the error per step) of ``db.simulate``."""
    import denoc_bridge as db

    traj = db.simulate(model, np.zeros(model.nq), np.zeros(model.nv), t_final, dt)
    d = np.abs(traj.energy_drift(relative=True))
    k = int(np.argmax(d))
    return float(d[k]), float(traj.t[k]), d


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = parser.parse_args(argv)

    import denoc_bridge as db
    from denoc_bridge.io.generators import rope
    from denoc_bridge.testing import pin_rk4

    T = 0.75 if args.quick else 1.75
    steps = (1e-3, 5e-4)
    model = rope()
    pm = db.to_pinocchio(model)
    q0 = np.zeros(model.nq)
    res = {"engines": [], "schemes": [], "gravity": [], "inertia": [], "crosses": {}}

    for dt in steps:
        n = int(round(T / dt))
        ours, t_ours, d = _error(model, T, dt)
        t0 = time.perf_counter()
        q_ref, _ = pin_rk4(pm, q0.copy(), q0.copy(), dt, n)
        wall = time.perf_counter() - t0
        q_tab, _, e_tab = tableau_rk(pm, q0.copy(), q0.copy(), dt, n, SCHEMES["classical"])
        gap = float(np.abs(q_tab - q_ref).max())
        assert gap < 1e-11, f"the tableau loop's classical RK4 is {gap:.1e} rad from pin_rk4"
        res["engines"].append(
            {
                "dt": dt,
                "simulate": ours,
                "t_peak": t_ours,
                "pin_loop": float(np.abs(e_tab).max()),
                "pin_loop_wall": wall,
                "q_gap_tableau_vs_pin_rk4": gap,
            }
        )
        if dt == steps[0]:
            k = int(np.argmax(d))
            res["peak"] = {
                "t": [float(x) for x in (k - 1) * dt + np.arange(3) * dt],
                "error": [float(x) for x in d[k - 1 : k + 2]],
            }
    for name, scheme in SCHEMES.items():
        if name == "classical":
            continue
        row = {"scheme": name}
        for dt in steps[:1] if args.quick else steps:
            _, _, e = tableau_rk(pm, q0.copy(), q0.copy(), dt, int(round(T / dt)), scheme)
            row[f"{dt:g}"] = float(np.abs(e).max())
        res["schemes"].append(row)
    for g in (9.81, 9.82) if args.quick else (9.79, 9.80, 9.81, 9.82):
        m = model.replace(gravity=(0.0, 0.0, -g))
        res["gravity"].append({"g": g, **{f"{dt:g}": _error(m, T, dt)[0] for dt in steps}})
    body = model.mass > 0
    k0 = float(model.inertia[body][0][1, 1] / (model.mass[body][0] * 0.05**2))
    for s in (1.0, 2.0) if args.quick else (0.5, 1.0, 1.5, 2.0, 2.5):
        inertia = model.inertia.copy()
        inertia[body] *= s
        m = model.replace(inertia=inertia)
        res["inertia"].append({"scale": s, "I_over_ml2": s * k0, **{f"{dt:g}": _error(m, T, dt)[0] for dt in steps}})
    # Each massless cross gets the rotational inertia of the cylinder after it (its child),
    # its mass stays zero.  In the plane of the fall the cross turns with that cylinder, so
    # this doubles the cylinders' rotational inertia about their centres of mass.
    inertia = model.inertia.copy()
    cross = np.flatnonzero(~body)
    child = {int(model.parent[i]): i for i in np.flatnonzero(body)}
    assert all(int(c) in child for c in cross), "every cross of the rope carries one cylinder"
    inertia[cross] = model.inertia[[child[int(c)] for c in cross]]
    m = model.replace(inertia=inertia)
    pm_c = db.to_pinocchio(m)
    for dt in steps:
        _, _, e = tableau_rk(pm_c, q0.copy(), q0.copy(), dt, int(round(T / dt)), SCHEMES["classical"])
        res["crosses"][f"{dt:g}"] = _error(m, T, dt)[0]
        res["crosses"][f"pin_loop_{dt:g}"] = float(np.abs(e).max())

    meta = {"t_final": T, "quick": args.quick, "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rope_energy.json").write_text(json.dumps({"meta": meta, **res}, indent=1))
    md = _table(meta, res)
    (out / "rope_energy.md").write_text(md)
    print(md)
    return res


def _table(meta, res) -> str:
    T = meta["t_final"]
    lines = [
        f"Rope of 000 §4, free fall for {T} s from the horizontal: max |E(t) - E(0)| / max T(t).",
        "",
        "| run | dt = 1 ms | dt = 0.5 ms |",
        "|---|---|---|",
    ]
    e1, e2 = res["engines"]
    lines.append(
        f"| `db.simulate`, classical RK4 | {e1['simulate']:.3g} (t = {e1['t_peak']:.3f} s) | {e2['simulate']:.3g} |"
    )
    lines.append(f"| Python classical RK4 loop around `pin.aba` | {e1['pin_loop']:.3g} | {e2['pin_loop']:.3g} |")
    for r in res["schemes"]:
        fine = f"{r['0.0005']:.3g}" if "0.0005" in r else ""
        lines.append(f"| Python loop around `pin.aba`, RK4 {r['scheme']} | {r['0.001']:.3g} | {fine} |")
    for r in res["gravity"]:
        lines.append(f"| `db.simulate`, g = {r['g']:.2f} m/s^2 | {r['0.001']:.3g} | {r['0.0005']:.3g} |")
    for r in res["inertia"]:
        lines.append(
            f"| `db.simulate`, rotational inertia x {r['scale']:g} (I / (m l^2) = {r['I_over_ml2']:.3f}) | "
            f"{r['0.001']:.3g} | {r['0.0005']:.3g} |"
        )
    c = res["crosses"]
    lines.append(
        f"| `db.simulate`, massless crosses carrying the cylinder's inertia | {c['0.001']:.3g} | {c['0.0005']:.3g} |"
    )
    lines.append(
        f"| Python classical RK4 loop around `pin.aba`, same crosses | {c['pin_loop_0.001']:.3g} | "
        f"{c['pin_loop_0.0005']:.3g} |"
    )
    p = res["peak"]
    lines += [
        "",
        "Around the peak at dt = 1 ms: "
        + ", ".join(f"{e:.2g} at t = {t:.3f} s" for t, e in zip(p["t"], p["error"]))
        + ".",
    ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
