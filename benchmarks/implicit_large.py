"""Long damped hanging chains (100 to 10,000 links) with the implicit methods, 10x and 100x beyond
RK4's stability limit, against a fine RK4 reference.

    python benchmarks/implicit_large.py [--quick] [--links 100,1000,10000] [--out benchmarks/results]

The chain: ``generators.chain(n, "planar")``, 1 m and 1 kg in all, joint dampers of 1e-3 / n
N m s/rad, hanging from its pin and released at rest tilted by 0.3 rad (examples/15_stiff_implicit.py).
For each n:

* RK4's stability limit ``h_rk4``, measured: the largest dt at which a run of 500 RK4 steps from
  that state does not blow up (no overflow, max |v| < 100 rad/s at its end), by bisection on
  log(dt) to 1 %;
* the reference: RK4 at ``h_rk4 / 10`` up to ``T = 8 x 100 h_rk4``, run in chunks; the dampers'
  work ``W = int v^T D v dt`` by the trapezoidal rule on every step, and its energy balance
  ``E(0) - E(T) - W`` (its integration error);
* ``implicit-euler`` and ``sdirk2`` at 10 and 100 ``h_rk4`` (the Newton-Krylov path: GMRES on
  ``forward_dynamics_jvp``, preconditioned by the articulated solve of
  ``M + h g D + (h g)^2 G``, G the chain's geometric (tension) stiffness); per run: Newton
  iterations per step, GMRES iterations per Newton step (mean and max), seconds per step, the
  errors ``max |q(T) - q_ref(T)|`` (joint angles, rad; the lightest links at the free end of a
  10,000-link chain whirl, and a full turn apart counts 2 pi) and of the free end's position
  (m), and the energy dissipated ``E(0) - E(T)``: its excess over the reference's is the
  numerical dissipation, given as a fraction of the swing's energy ``E(0) - E_rest``;
* the preconditioner without the geometric stiffness (``PRECONDITIONER = "passive"``: dampers
  only, as before issue 23's last step) for comparison: GMRES iterations over one implicit-Euler
  step at 100 h_rk4 (up to 1,000 links: at 10,000 it takes minutes a step).

Writes ``implicit_large.json`` and ``implicit_large.md`` to ``--out``.  ``--quick``: 100 and
1,000 links, T = 2 x 100 h_rk4 (a smoke test, not a measurement).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

import numpy as np


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def rk4_limit(db, model, q0, v0, steps=500):
    """The largest dt (to 1 %) at which ``steps`` RK4 steps do not blow up."""

    def stable(dt):
        try:
            tr = db.simulate(model, q0, v0, steps * dt, dt, save_every=steps, progress=False)
        except db.SimulationError:
            return False
        return bool(np.all(np.isfinite(tr.v[-1])) and np.abs(tr.v[-1]).max() < 100.0)

    lo, hi = 1e-5, 1e-1
    assert stable(lo) and not stable(hi)
    while hi / lo > 1.01:
        mid = np.sqrt(lo * hi)
        lo, hi = (mid, hi) if stable(mid) else (lo, mid)
    return lo


def tip(db, model, q):
    """The position of the chain's free end (m)."""
    R, p = db.forward_kinematics(model, q)
    return p[-1] + R[-1] @ np.asarray(model.joint_translation)[-1]


def energy(db, model, q, v):
    kinetic, potential = db.energies(model, q, v)
    return float(kinetic + potential)


def damper_work(t, V, D):
    """int v^T D v dt by the trapezoidal rule on the saved states."""
    p = np.einsum("ti,i,ti->t", V, D, V)
    return float(np.sum(0.5 * (p[1:] + p[:-1]) * np.diff(t)))


def reference(db, model, q0, v0, h, n_steps, chunk=200):
    """RK4 at h for n_steps, in chunks of saved steps: (q(T), v(T), dampers' work, seconds)."""
    D = np.asarray(model.damping)
    q, v, work, done = q0.copy(), v0.copy(), 0.0, 0
    t0 = time.perf_counter()
    while done < n_steps:
        k = min(chunk, n_steps - done)
        tr = db.simulate(model, q, v, k * h, h, progress=False)
        work += damper_work(tr.t, tr.v, D)
        q, v, done = tr.q[-1].copy(), tr.v[-1].copy(), done + k
    return q, v, work, time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--links", default=None, help="comma-separated chain lengths (default 100,1000,10000)")
    parser.add_argument("--out", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "results"))
    args = parser.parse_args(argv)

    import denoc_bridge as db
    from denoc_bridge.algorithms.kinematics import hanging_configuration
    from denoc_bridge.generators import chain
    from denoc_bridge.simulation import implicit

    saved = implicit.DENSE_MAX_DOF
    implicit.DENSE_MAX_DOF = 0  # the Newton-Krylov path at every size (dense up to 300 DOF by default)
    try:  # restored: a caller in the same process (the test suite) keeps the dense path
        return _measure(args, db, chain, implicit, hanging_configuration)
    finally:
        implicit.DENSE_MAX_DOF = saved


def _measure(args, db, chain, implicit, hanging_configuration):
    links = [int(x) for x in (args.links or ("100,1000" if args.quick else "100,1000,10000")).split(",")]
    big_steps = 2 if args.quick else 8  # T = big_steps x 100 h_rk4
    rows, cases, passive = [], [], []
    for n in links:
        model = chain(n, "planar", length=1.0 / n, mass=1.0 / n, damping=1e-3 / n)
        q0, v0 = hanging_configuration(model, 0.3), np.zeros(n)
        D = np.asarray(model.damping)
        t0 = time.perf_counter()
        h_rk4 = rk4_limit(db, model, q0, v0)
        t_limit = time.perf_counter() - t0
        H = 100 * h_rk4
        T = big_steps * H
        h_ref = h_rk4 / 10
        q_ref, v_ref, w_ref, t_ref = reference(db, model, q0, v0, h_ref, 10 * 100 * big_steps)
        E0 = energy(db, model, q0, v0)
        drop_ref = E0 - energy(db, model, q_ref, v_ref)
        e_swing = E0 - energy(db, model, hanging_configuration(model, 0.0), v0)  # above the chain at rest
        case = dict(
            links=n,
            h_rk4=h_rk4,
            t_final=T,
            h_ref=h_ref,
            seconds_limit=t_limit,
            seconds_reference=t_ref,
            energy_drop_ref=drop_ref,
            energy_swing=e_swing,
            damper_work_ref=w_ref,
            balance_ref=drop_ref - w_ref,
        )
        cases.append(case)
        print(
            f"{n} links: h_rk4 = {h_rk4:.4g} s (bisection {t_limit:.0f} s), T = {T:.4g} s, reference "
            f"{t_ref:.0f} s: E(0) - E(T) = {drop_ref:.6g} J, dampers' work {w_ref:.6g} J",
            flush=True,
        )
        for method in ("implicit-euler", "sdirk2"):
            for factor in (10, 100):
                h = factor * h_rk4
                steps = int(round(T / h))
                t0 = time.perf_counter()
                tr = db.simulate(model, q0, v0, steps * h, h, method=method, progress=False)
                wall = time.perf_counter() - t0
                st = tr.solver_stats
                drop = E0 - energy(db, model, tr.q[-1], tr.v[-1])
                row = dict(
                    links=n,
                    method=method,
                    ratio=factor,
                    dt=h,
                    steps=steps,
                    newton_per_step=st["newton_iterations"] / steps,
                    gmres_per_newton=st["linear_iterations"] / max(1, st["newton_iterations"]),
                    gmres_max=st["max_linear_iterations"],
                    seconds_per_step=wall / steps,
                    error_q=float(np.abs(tr.q[-1] - q_ref).max()),
                    error_tip=float(np.linalg.norm(tip(db, model, tr.q[-1]) - tip(db, model, q_ref))),
                    energy_drop=drop,
                    damper_work=damper_work(tr.t, tr.v, D),
                    numerical_dissipation=(drop - drop_ref) / e_swing,
                    jacobian=st["jacobian"],
                )
                rows.append(row)
                print(
                    f"  {method} {factor}x: {row['newton_per_step']:.1f} Newton/step, "
                    f"{row['gmres_per_newton']:.1f} GMRES/Newton (max {row['gmres_max']}), "
                    f"{row['seconds_per_step']:.3g} s/step, |q - q_ref| {row['error_q']:.2e}, tip {row['error_tip']:.2e} m, "
                    f"E drop {drop:.6g} J (numerical: {row['numerical_dissipation']:+.2e} of the swing's energy)",
                    flush=True,
                )
        if n <= 1000:
            implicit.PRECONDITIONER = "passive"
            try:
                t0 = time.perf_counter()
                tr = db.simulate(model, q0, v0, H, H, method="implicit-euler", progress=False)
                wall = time.perf_counter() - t0
            finally:
                implicit.PRECONDITIONER = "geometric"
            st = tr.solver_stats
            passive.append(
                dict(
                    links=n,
                    ratio=100,
                    newton=st["newton_iterations"],
                    gmres_per_newton=st["linear_iterations"] / max(1, st["newton_iterations"]),
                    gmres_max=st["max_linear_iterations"],
                    seconds_per_step=wall,
                )
            )
            print(f"  passive preconditioner, implicit-euler 100x: {passive[-1]}", flush=True)

    meta = dict(
        quick=args.quick,
        cpu=cpu_name(),
        cores=os.cpu_count(),
        python=platform.python_version(),
        numpy=np.__version__,
        date=time.strftime("%Y-%m-%d"),
        chain="generators.chain(n, 'planar'), 1 m, 1 kg, damping 1e-3/n N m s/rad, hanging tilted 0.3 rad, at rest",
    )
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "implicit_large.json"), "w") as fh:
        json.dump({"meta": meta, "cases": cases, "rows": rows, "passive": passive}, fh, indent=1)
    md = markdown(meta, cases, rows, passive)
    with open(os.path.join(args.out, "implicit_large.md"), "w") as fh:
        fh.write(md)
    print(md)


def markdown(meta, cases, rows, passive):
    lines = [
        f"Damped hanging chains, implicit methods against RK4 at h_rk4 / 10 ({meta['cpu']}, "
        f"{meta['cores']} cores shared, {meta['date']}{', quick' if meta['quick'] else ''}).",
        "",
        "| links | h_rk4 (s) | T (s) | swing energy E(0) - E_rest (J) | reference: E(0) - E(T) / dampers' work (J) "
        "| RK4 reference wall (s) |",
        "|---:|---:|---:|---:|---|---:|",
    ]
    for c in cases:
        lines.append(
            f"| {c['links']:,} | {c['h_rk4']:.3g} | {c['t_final']:.3g} | {c['energy_swing']:.4g} | {c['energy_drop_ref']:.5g} / "
            f"{c['damper_work_ref']:.5g} | {c['seconds_reference']:.0f} |"
        )
    lines += [
        "",
        "| links | method | dt / h_rk4 | Newton / step | GMRES / Newton (max) | s / step | max \\|q(T) - q_ref(T)\\| (rad) "
        "| tip error (m) | E(0) - E(T) (J) | numerical dissipation / swing energy |",
        "|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r['links']:,} | {r['method']} | {r['ratio']} | {r['newton_per_step']:.1f} | "
            f"{r['gmres_per_newton']:.1f} ({r['gmres_max']}) | {r['seconds_per_step']:.3g} | {r['error_q']:.2e} | "
            f"{r['error_tip']:.2e} | {r['energy_drop']:.5g} | {r['numerical_dissipation']:+.1e} |"
        )
    if passive:
        lines += [
            "",
            "Without the geometric stiffness in the preconditioner (dampers only), one implicit-Euler step at "
            "100 h_rk4:",
            "",
            "| links | Newton | GMRES / Newton (max) | s / step |",
            "|---:|---:|---:|---:|",
        ]
        for p in passive:
            lines.append(
                f"| {p['links']:,} | {p['newton']} | {p['gmres_per_newton']:.1f} ({p['gmres_max']}) | "
                f"{p['seconds_per_step']:.3g} |"
            )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
