"""A chain hanging between two points comes to rest as a catenary (001's check, with a closed loop).

    python examples/13_hanging_chain.py [--quick] [--out DIR]

A planar chain (denoc_bridge.generators.chain) of n uniform rods, 1 m and 1 kg in all,
pinned to the world at its first joint (0, 0, 0) and held at its free end by a revolute
cut joint to the world point (0.6, 0, 0.2) (Model.add_loop_closure: 5 rows, rank 2 in
the plane), is released at rest from a V shape and brought to rest by joint damping (the model's
damping, applied by simulate; RK4, dt = 1 ms, projection onto the loop after each step).
How it comes to rest is a matter of the transient only, so the transient is shaped for
speed, as in dynamic relaxation: each joint has an armature (rotor inertia) of 1e-4 kg m^2
and a damping of 0.35 (I + armature) / dt, I the rod's moment of inertia about its centre:
half the largest damping that RK4 keeps stable at this step (~0.7 (I + armature) / dt,
measured).  Without the armature the largest stable damping shrinks like 1/n^3 and a
40-rod chain takes minutes of simulated time to settle; with it, 10-30 s.  Neither the
armature nor the damping enters the rest state (at v = 0, a = 0: g(q) = C^T lambda).

At rest (kinetic energy below 1e-10 J), the joint positions are compared with
* the continuous catenary through the two points with the chain's length (001 validates
  its chains against it): z = c cosh((x - x0)/c) + z0, c from 2 c sinh(D / 2c) =
  sqrt(L^2 - h^2) (scipy.optimize.brentq).  A chain of n rods differs from it by
  O(1/n^2): the rods' directions are the catenary's tangents at their midpoints (the
  joints are its midpoint-rule integral), shown for several n;
* the exact equilibrium of the n rods, from the statics: the horizontal force is the
  same in every rod and each carries its weight half to each end, so
  tan(psi_k) = (s_k - s0) / c_n, s_k the arc length of rod k's midpoint; c_n and s0 solve
  the two end-point equations (scipy.optimize.fsolve).  The simulated rest state must
  be that equilibrium;
and the statics is checked directly: at the final q, loops.constrained_forward_dynamics
(model, q, 0, 0) ~ 0, i.e. the generalized gravity g(q) is balanced by the constraint
forces C^T lambda (004 eq. 14).
"""

import time

import numpy as np
from _common import arguments, pyplot, save
from scipy import optimize

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.generators import chain

args = arguments(__doc__)
LENGTH, MASS, RADIUS, ARMATURE = 1.0, 1.0, 0.005, 1e-4
END = np.array([0.6, 0.2])  # (x, z) of the held end
DT, KE_REST = 1e-3, 1e-14
sizes = [10, 20] if args.quick else [10, 20, 40, 80]


def catenary():
    """(c, x0, z0) of the catenary z = c cosh((x - x0)/c) + z0 through (0, 0) and END with length LENGTH."""
    (D, h), chord = END, np.sqrt(LENGTH**2 - END[1] ** 2)
    c = optimize.brentq(lambda c: 2.0 * c * np.sinh(D / (2.0 * c)) - chord, 1e-3, 1e3, xtol=1e-16, rtol=1e-15)
    x0 = D / 2.0 - c * np.arctanh(h / LENGTH)
    return c, x0, -c * np.cosh(x0 / c)


def distance_to_catenary(points):
    """Distance of each (x, z) point from the catenary curve (nearest point)."""
    c, x0, z0 = catenary()
    z = lambda x: c * np.cosh((x - x0) / c) + z0  # noqa: E731
    out = []
    for px, pz in points:
        r = optimize.minimize_scalar(
            lambda x: (x - px) ** 2 + (z(x) - pz) ** 2,
            bounds=(px - 0.05, px + 0.05),
            method="bounded",
            options=dict(xatol=1e-13),
        )
        out.append(np.sqrt(r.fun))
    return np.array(out)


def rods_equilibrium(n):
    """Joint positions (n + 1, 2) and joint angles (n,) of the exact static equilibrium of n uniform rods."""
    l = LENGTH / n
    s = (np.arange(n) + 0.5) * l
    c, x0, _ = catenary()

    def ends(p):
        psi = np.arctan((s - p[1]) / p[0])
        return [l * np.cos(psi).sum() - END[0], l * np.sin(psi).sum() - END[1]]

    p = optimize.fsolve(ends, [c, -c * np.sinh(x0 / c)], xtol=1e-13)
    psi = np.arctan((s - p[1]) / p[0])  # rod directions, up from the x axis
    points = np.vstack([[0.0, 0.0], np.cumsum(l * np.column_stack([np.cos(psi), np.sin(psi)]), axis=0)])
    return points, -np.diff(np.r_[0.0, psi])  # and the joint angles (about y: down is +)


def joints_xz(model, q):
    """(n + 1, 2): the n joints and the held end of the chain, in the x-z plane."""
    R, p = db.forward_kinematics(model, q)
    tip = p[-1] + R[-1] @ np.array([LENGTH / model.n_links, 0.0, 0.0])
    return np.vstack([p, tip])[:, [0, 2]]


def hanging_chain(n):
    l, m = LENGTH / n, MASS / n
    inertia = m * (3.0 * RADIUS**2 + l**2) / 12.0
    model = chain(n, "planar", length=l, mass=m, radius=RADIUS)
    model = model.replace(armature=np.full(n, ARMATURE), damping=np.full(n, 0.35 * (inertia + ARMATURE) / DT))
    model.add_loop_closure(
        "hold",
        "revolute",
        model.link_names[-1],
        "world",
        xyz1=(l, 0.0, 0.0),
        xyz2=(END[0], 0.0, END[1]),
        axis=(0.0, 1.0, 0.0),
    )
    alpha = np.arccos(np.linalg.norm(END) / LENGTH)  # a V: down, then up (joint angles about y)
    q = np.zeros(n)
    q[0], q[n // 2] = alpha - np.arctan2(END[1], END[0]), -2.0 * alpha
    return model, loops.project_configuration(model, q)


print(
    f"chain of {LENGTH:g} m, {MASS:g} kg between (0, 0) and ({END[0]:g}, {END[1]:g}) (x, z), released from a V; "
    f"joint damping until T < {KE_REST:g} J; RK4 dt = 1 ms"
)
c, x0, z0 = catenary()
print(f"catenary: c = {c:.6f} m, lowest point ({x0:.6f}, {z0 + c:.6f})")
results = []
for n in sizes:
    model, q = hanging_chain(n)
    report = loops.constraint_report(model, q)[0]
    v = np.zeros(n)
    t_sim, chunk, history = 0.0, 1.0, []
    t0 = time.perf_counter()
    while True:
        tr = db.simulate(model, q, v, chunk, DT, save_every=10)
        q, v = tr.q[-1].copy(), tr.v[-1].copy()
        history.append(tr)
        t_sim += chunk
        if tr.kinetic_energy.max() < KE_REST or t_sim >= 300:
            break
    wall = time.perf_counter() - t0
    closure = max(h.constraint_error.max() for h in history)
    P = joints_xz(model, q)
    d_cat = distance_to_catenary(P).max()
    P_eq, q_eq = rods_equilibrium(n)
    d_rods = np.abs(P - P_eq).max()
    a_eq = np.abs(loops.constrained_forward_dynamics(model, q_eq, np.zeros(n), np.zeros(n))).max()
    a_rest = loops.constrained_forward_dynamics(model, q, np.zeros(n), np.zeros(n))
    a_free = db.forward_dynamics(model.replace(loops=()), q, np.zeros(n), np.zeros(n))
    lam, C = loops.constraint_forces(model, q, np.zeros(n), np.zeros(n))
    g = db.gravity_torques(model, q)
    balance = np.abs(g - C.T @ lam).max() / np.abs(g).max()
    results.append(
        dict(n=n, model=model, q=q, history=history, d_cat=d_cat, d_rods=d_rods, d_joints=distance_to_catenary(P))
    )
    print(
        f"  n = {n:2d}: cut joint '{report['name']}' {report['rows']} rows, rank {report['rank']}; damping "
        f"{model.damping[0]:.2e} N m s/rad; at rest after {t_sim:.0f} s simulated ({wall:.1f} s wall, "
        f"T = {tr.kinetic_energy.max():.1e} J); max loop-closure error {closure:.1e} m"
    )
    print(
        f"          joints from the continuous catenary: max {d_cat:.3e} m; from the exact equilibrium of "
        f"{n} rods: {d_rods:.1e} m; at rest: max |a| = {np.abs(a_rest).max():.1e} rad/s^2 (free tree "
        f"{np.abs(a_free).max():.1e}), |g - C^T lambda| / |g| = {balance:.1e}; at the rods' equilibrium from the "
        f"statics: max |a| = {a_eq:.1e}"
    )
    if not (closure < 1e-10 and d_rods < 1e-6 and balance < 1e-6 and a_eq < 1e-9):
        raise SystemExit("the chain is not at rest in the equilibrium of its rods")
ratios = [a["d_cat"] / b["d_cat"] for a, b in zip(results, results[1:])]
print(
    "distance from the continuous catenary, n -> 2n: divided by "
    + ", ".join(f"{r:.2f}" for r in ratios)
    + " (O(1/n^2): 4)"
)

plt = pyplot()
fig, axes = plt.subplots(1, 3, figsize=(14, 4.2))
xs = np.linspace(0.0, END[0], 400)
ax = axes[0]
first = results[0]
for k in range(0, len(first["history"][0]), 10):
    P = joints_xz(first["model"], first["history"][0].q[k])
    ax.plot(P[:, 0], P[:, 1], "-", color="tab:gray", lw=0.4, alpha=0.5)
for r in results:
    P = joints_xz(r["model"], r["q"])
    ax.plot(P[:, 0], P[:, 1], "o-", ms=2.5, lw=0.8, label=f"n = {r['n']} at rest")
ax.plot(xs, c * np.cosh((xs - x0) / c) + z0, "k--", lw=0.8, label="catenary")
ax.set_aspect("equal")
ax.set_xlabel("x [m]")
ax.set_ylabel("z [m]")
ax.set_title(f"Hanging chain (grey: n = {first['n']}, its first second from the V)", fontsize=9)
ax.legend(fontsize=8)
ax = axes[1]
for r in results:
    s_joint = np.linspace(0.0, LENGTH, r["n"] + 1)
    ax.semilogy(s_joint[1:-1], r["d_joints"][1:-1], "o-", ms=2, lw=0.8, label=f"n = {r['n']}")
ax.set_xlabel("arc length of the joint [m]")
ax.set_ylabel("distance from the catenary [m]")
ax.set_title("Joints at rest against the continuous catenary: O(1/n^2)", fontsize=9)
ax.legend(fontsize=8)
ax = axes[2]
for r in results:
    t = np.concatenate([h.t[1:] + i * 1.0 for i, h in enumerate(r["history"])])
    ke = np.concatenate([h.kinetic_energy[1:] for h in r["history"]])
    ax.semilogy(t, np.maximum(ke, 1e-20), lw=0.7, label=f"n = {r['n']}")
ax.axhline(KE_REST, color="k", ls=":", lw=0.8)
ax.set_xlabel("t [s]")
ax.set_ylabel("kinetic energy [J]")
ax.set_title("Coming to rest under joint damping", fontsize=9)
ax.legend(fontsize=8)
for ax in axes:
    ax.grid(alpha=0.3)
save(fig, args.out, "hanging_chain.png")
