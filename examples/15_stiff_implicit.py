"""Stiff chains with the implicit integrators: steps 10-100x beyond RK4's stability limit.

    python examples/15_stiff_implicit.py [--quick] [--big] [--out DIR]

Three stiff trees (denoc_bridge.generators.chain, planar, fixed at the base, released at rest):

* a damped hanging chain: 20 rods, 1 m and 1 kg in all, released horizontal, falling and
  swinging down under gravity while strong joint dampers bring it to rest (example 13's chain
  without its held end: the implicit methods run trees, not loop closures);
* a chain with stiff joint springs and dampers: 10 rods, springs of 200 N m/rad relaxed at
  q = 0 and dampers, released from a bent shape;
* a long damped chain: 1,000 links (``--big``: 10,000, minutes), hanging from its pin and
  released tilted by 0.3 rad; Newton's linear systems solved matrix-free by GMRES with
  forward_dynamics_jvp, preconditioned with the chain's tension stiffness (a few iterations per
  Newton step; benchmarks/implicit_large.py measures RK4's limit by bisection instead and runs
  100 to 10,000 links).

For each: RK4's stability limit ``h_rk4`` from the eigenvalues of the linearised dynamics at
the start (dense for the small chains; for the long one, the fastest damping rate by ARPACK on
the JVP operator); runs of a few (quick) or more steps of 100 h_rk4; a reference by RK4 at
``h_rk4 / 4``; RK4 itself at twice its limit (it diverges); and ``implicit-euler`` and
``sdirk2`` at 10, 25 and 100 times ``h_rk4`` (the long chain: 25 and 100; quick: 100).  The table gives the
largest joint-angle error against the reference at the common saved times, the energy
dissipated up to the end (``E(0) - E(T)``; the reference's is printed below each table) and its
error relative to the reference's peak kinetic energy, the Newton and GMRES iterations, and the
wall time.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import scipy.sparse.linalg as spla
from _common import arguments, pyplot, save

import denoc_bridge as db
from denoc_bridge.algorithms.kinematics import hanging_configuration
from denoc_bridge.generators import chain

BIG = "--big" in sys.argv  # the 10,000-link chain (minutes)
if BIG:
    sys.argv.remove("--big")
args = arguments(__doc__)
RK4_REGION = np.poly1d([1 / 24, 1 / 6, 1 / 2, 1, 1])  # R(z) = 1 + z + z^2/2 + z^3/6 + z^4/24


def rk4_limit(eigenvalues) -> float:
    """The largest h with |R(h lambda)| <= 1 for every eigenvalue with Re lambda <= 0 (bisection
    along each eigenvalue's ray from the origin)."""
    h_max = np.inf
    for lam in eigenvalues:
        if lam.real > 1e-9 * abs(lam) or abs(lam) < 1e-12:
            continue
        lo, hi = 0.0, 10.0 / abs(lam)
        for _ in range(80):
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if abs(RK4_REGION(mid * lam)) <= 1.0 else (lo, mid)
        h_max = min(h_max, lo)
    return h_max


def rk4_step_limit(model, q, v) -> float:
    """RK4's stability limit at (q, v): from every eigenvalue of the linearised dynamics
    x' = A x, x = (dq, dv), for models up to 300 DOFs (A from forward_dynamics_derivatives);
    beyond, from the fastest damping rate, the largest eigenvalue of M^-1 D (the fast modes of
    a damped chain are its dampers'), by ARPACK on the matrix-free ``x -> M^-1 D x`` (one
    forward_dynamics_jvp per product)."""
    nv = model.nv
    K, D = np.asarray(model.stiffness), np.asarray(model.damping)
    total = -K * db.difference(model, model.rest_configuration, q) - D * v
    if nv <= 300:
        ddq, ddv, Minv = db.forward_dynamics_derivatives(model, q, v, total)
        A = np.block([[np.zeros((nv, nv)), np.eye(nv)], [ddq - Minv * K, ddv - Minv * D]])
        return rk4_limit(np.linalg.eigvals(A))
    zero = np.zeros(nv)

    def apply(x):
        return db.forward_dynamics_jvp(model, q, zero, total, dtau=D * np.ravel(x))

    op = spla.LinearOperator((nv, nv), matvec=apply, dtype=float)
    rate = float(np.abs(spla.eigs(op, k=1, which="LM", return_eigenvectors=False, tol=1e-4)).max())
    return rk4_limit([-rate])


def cases():
    n_long = 10_000 if BIG else 1_000
    hanging = chain(20, "planar", length=0.05, mass=0.05, damping=0.02, name="hanging_chain20")
    springs = chain(10, "planar", length=0.1, mass=0.1, stiffness=20.0, damping=0.5, name="spring_chain10")
    long_chain = chain(n_long, "planar", length=1.0 / n_long, mass=1.0 / n_long, damping=1e-3 / n_long)
    bent = 0.3 * np.sin(np.linspace(0, np.pi, springs.nq))
    return [
        ("damped hanging chain (20 rods)", hanging, np.zeros(hanging.nq), 10),
        ("stiff springs and dampers (10 rods)", springs, bent, 10),
        (
            f"long damped chain ({n_long} links)",
            long_chain,
            hanging_configuration(long_chain, tilt=0.3),
            1 if args.quick else 3,
        ),
    ]


def run_case(title, model, q0, n_big_steps, factors):
    """The case run for ``n_big_steps`` steps of 100 h_rk4 (the saving interval)."""
    v0 = np.zeros(model.nv)
    h_rk4 = rk4_step_limit(model, q0, v0)
    H = 100 * h_rk4
    T = n_big_steps * H
    print(f"\n{title}: nv = {model.nv}, RK4's stability limit h_rk4 = {h_rk4:.3g} s, T = {T:.3g} s")
    h_ref = H / 400
    t0 = time.perf_counter()
    ref = db.simulate(model, q0, v0, T, h_ref, save_every=400, progress=False)
    print(f"  reference: rk4 at h = h_rk4 / 4 ({400 * n_big_steps} steps, {time.perf_counter() - t0:.2f} s)")
    E_ref = ref.total_energy
    dissipated_ref = E_ref[0] - E_ref[-1]
    scale = float(ref.kinetic_energy.max())  # the energy that moves: the reference's peak kinetic energy
    h_bad = H / 50
    try:
        bad = db.simulate(model, q0, v0, 200 * h_bad, h_bad, progress=False)
        grew = np.abs(bad.v).max()
        print(f"  rk4 at {h_bad / h_rk4:.1f} h_rk4: max |v| = {grew:.3g} (diverging)")
    except db.SimulationError as exc:
        print(f"  rk4 at {h_bad / h_rk4:.1f} h_rk4: diverged ({str(exc).splitlines()[0][:70]})")
    print(
        "  | method | h / h_rk4 | steps | max joint error (rad) | dissipated (J) | error / peak KE | Newton | GMRES | wall (s) |"
    )
    print("  |---|---:|---:|---:|---:|---:|---:|---:|---:|")
    rows = []
    for method in ("implicit-euler", "sdirk2"):
        for f in factors:
            per = int(round(100 / f))  # steps per saving interval
            h = H / per
            t0 = time.perf_counter()
            tr = db.simulate(model, q0, v0, T, h, method=method, save_every=per, progress=False)
            wall = time.perf_counter() - t0
            err = float(np.abs(tr.q - ref.q).max())
            E = tr.total_energy
            dissipated = E[0] - E[-1]
            rel = abs(dissipated - dissipated_ref) / scale
            st = tr.solver_stats
            print(
                f"  | {method} | {h / h_rk4:.0f} | {tr.n_steps} | {err:.2e} | {dissipated:.6g} | {rel:.1e} "
                f"| {st['newton_iterations']} | {st['linear_iterations']} | {wall:.2f} |"
            )
            rows.append((method, h / h_rk4, err, rel, tr))
    print(f"  reference: dissipated {dissipated_ref:.6g} J, peak kinetic energy {scale:.6g} J")
    return ref, rows


results = [
    run_case(title, model, q0, n, (10, 25, 100) if model.nv <= 300 else ((100,) if args.quick else (25, 100)))
    for title, model, q0, n in cases()
]

plt = pyplot()
fig, ax = plt.subplots(1, 2, figsize=(10, 3.6))
for panel, (ref, rows) in zip(ax, results[:2]):
    panel.plot(ref.t, ref.total_energy, "k-", lw=2.5, label="rk4 reference")
    for method, factor, _, _, tr in rows:
        if factor > 50:
            panel.plot(
                tr.t, tr.total_energy, "o--" if method == "sdirk2" else "s:", label=f"{method}, {factor:.0f} h_rk4"
            )
    panel.set_xlabel("t (s)")
    panel.set_ylabel("E (J)")
    panel.legend(fontsize=8)
ax[0].set_title("damped hanging chain")
ax[1].set_title("stiff springs and dampers")
save(fig, args.out, "stiff_implicit_energy.png")
