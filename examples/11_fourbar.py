"""004's closed-loop example (Fig. 4): a prismatic base and a parallelogram four-bar, cut at R5.

    python examples/11_fourbar.py [--quick] [--out DIR]

1. The constraint rows of the cut revolute joint R5 at q = 0 (denoc_bridge.constraints.loops.
   constraint_report): 5 rows, rank 2, the redundant ones named; D*B (004 eq. 15,
   loops.cut_joint_jacobian: D* times the DeNOC N), against 004's eq. (a); and the
   velocity transformation E with theta_2 independent (004 eq. 23), against 004's E.
2. The constrained accelerations by Lagrange multipliers (004 eqs. 13-14) and by
   coordinate partitioning (eqs. 19-25), against pin.constraintDynamics (a CONTACT_3D
   constraint between bodies 4 and 1) at random closed states.
3. 10 s of passive motion from q = [0, 0.5, -0.5, 0.5] (the crank starts 0.5 rad from
   the vertical and swings round, through the flat positions of the parallelogram where
   the loop's constraint rows lose rank), RK4 with dt = 1 ms and the default projection
   onto the loops after each step: loop-closure error, energy error, wall time.  004
   reports 75 s of CPU time for 10 s of this system (with force elements; Adams-Bashforth
   predictor-corrector on a 1990 workstation).  And 1 s without stabilisation against
   a Python RK4 loop around pin.constraintDynamics.
"""

import time

import numpy as np
from _common import arguments, pyplot, save

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.generators import fourbar
from denoc_bridge.testing import pin_constraint_dynamics

args = arguments(__doc__)
model = fourbar()
np.set_printoptions(precision=4, suppress=True, linewidth=120)

print("1. the cut joint R5 at q = 0 (004 §3)")
for row in loops.constraint_report(model, np.zeros(4)):
    print(
        f"  constraint report: '{row['name']}' ({row['type']}, between {row['link1']} and {row['link2']}): "
        f"{row['rows']} rows, rank {row['rank']}, redundant rows {row['redundant']} (0-based), "
        f"error {row['error']:.1e}"
    )
D, N = loops.cut_joint_jacobian(model, np.zeros(4))
DB = D @ N
S2 = np.sqrt(2.0)
eq_a = np.array([[0, 0, -S2, -S2], [0, 0, -S2, -S2], [0, -S2, -S2, 0], [0, 0, 0, 0], [0, 0, 0, 0]])
print(f"  D*B (5 x 4; rows: x_4 - x_1 = 0 (3), axes parallel (2)):\n{DB}")
print(
    f"  004 eq. (a): the same 3 point rows, the 2 rotation rows zero (parallel axes): "
    f"max |D*B - eq. (a)| = {np.abs(DB - eq_a).max():.1e}; rank {np.linalg.matrix_rank(DB)}; "
    f"max |D*B - loop_jacobian| = {np.abs(DB - loops.loop_jacobian(model, np.zeros(4))).max():.1e}"
)
E, dep, ind = loops.velocity_transformation(model, np.zeros(4), independent=[0, 1])
E_paper = np.array([[1, 0], [0, 1], [0, -1], [0, 1]])
print(
    f"  E with theta_1, theta_2 independent (004 eq. 23): {(E.round(12) + 0.0).tolist()}; 004: {E_paper.tolist()}; "
    f"max difference {np.abs(E - E_paper).max():.1e}"
)
if not (np.abs(DB - eq_a).max() < 1e-12 and np.abs(E - E_paper).max() < 1e-12):
    raise SystemExit("D*B or E differ from 004")

print("2. constrained accelerations against pin.constraintDynamics (CONTACT_3D between body4 and body1)")
pin_fd = pin_constraint_dynamics(model)  # pin.constraintDynamics, ProximalSettings(1e-14, ...)
rng = np.random.default_rng(11)
worst = {"lagrange": 0.0, "partitioning": 0.0}
between = 0.0
n_states = 8
for _ in range(n_states):
    t2, w2 = rng.uniform(-np.pi, np.pi), rng.normal()
    q = loops.project_configuration(model, np.array([rng.normal(), t2, -t2, t2]))
    v = loops.project_velocity(model, q, np.array([rng.normal(), w2, -w2, w2]))
    tau = rng.normal(size=4)
    a_pin = pin_fd(q, v, tau)
    scale = np.abs(a_pin).max()
    a = {m: loops.constrained_forward_dynamics(model, q, v, tau, method=m) for m in worst}
    for m in worst:
        worst[m] = max(worst[m], np.abs(a[m] - a_pin).max() / scale)
    between = max(between, np.abs(a["lagrange"] - a["partitioning"]).max() / scale)
print(
    f"  {n_states} random closed states: max |a - a_pin| / max |a_pin|: lagrange {worst['lagrange']:.1e}, "
    f"partitioning {worst['partitioning']:.1e}; lagrange vs partitioning {between:.1e}"
)
if not max(*worst.values(), between) < 1e-9:
    raise SystemExit("the constrained accelerations disagree with Pinocchio")

T = 2.0 if args.quick else 10.0
print(f"3. {T:g} s passive from q = [0, 0.5, -0.5, 0.5], RK4 dt = 1 ms, projection onto the loop after each step")
q0 = np.array([0.0, 0.5, -0.5, 0.5])
db.simulate(model, q0, np.zeros(4), 0.01, 1e-3)  # warm-up: the model's first run
t0 = time.perf_counter()
tr = db.simulate(model, q0, np.zeros(4), T, 1e-3)
wall = time.perf_counter() - t0
closure = max(tr.constraint_error.max(), max(np.abs(loops.loop_residual(model, q)).max() for q in tr.q[::100]))
Et = tr.total_energy
energy_error = np.abs(Et - Et[0]).max() / tr.kinetic_energy.max()
crank = tr.q[:, 1]
flat = int(np.sum(np.diff(np.floor((crank - np.pi / 2) / np.pi)) != 0))  # crank through +-90 deg: flat
shape = max(np.abs(tr.q[:, 2] + crank).max(), np.abs(tr.q[:, 3] - crank).max())
print(
    f"  wall time {wall * 1e3:.0f} ms for {tr.n_steps} steps ({wall / tr.n_steps * 1e6:.1f} us per step; "
    f"004: 75 s CPU for 10 s, 1990 workstation)"
)
print(
    f"  max loop-closure error {closure:.1e} m; largest error one step leaves before projection "
    f"(per-step drift) {tr.constraint_drift:.1e} m"
)
print(f"  max |E - E0| / max T = {energy_error:.1e} (E0 = {Et[0]:.4f} J, max T = {tr.kinetic_energy.max():.3f} J)")
jump = int(np.argmax(np.abs(np.diff(Et))))
step_error = abs(Et[jump + 1] - Et[jump]) / tr.kinetic_energy.max()
print(
    f"  the largest energy change in one step: {step_error:.1e} of max T, at t = {tr.t[jump]:.3f} s with the "
    f"crank at {np.degrees(crank[jump]):.4f} deg (flat at 90 and 270): the error is made where the loop's "
    f"constraint rows lose rank"
)
print(
    f"  the crank swings between {np.degrees(crank.min()):.0f} and {np.degrees(crank.max()):.0f} deg, through the "
    f"flat positions (+-90 deg) {flat} times; it stays a parallelogram: max |theta_3 + theta_2|, "
    f"|theta_4 - theta_2| = {shape:.1e} rad"
)
# 1e-4: the energy lost by the projection at the flat positions depends on rounding: over 150 starts a
# rounding apart (1e-14 .. 1e-10), the largest relative error had a median of 4e-7, 34 % above 1e-6 and
# none above 1.6e-4, measured on the compiled runs (2026-12-07, issue 49; the numba runs before them
# spread the same)
if not (closure < 1e-10 and energy_error < 1e-4 and tr.status == "completed"):
    raise SystemExit("the loop does not stay closed or energy is not conserved")

T1 = 0.2 if args.quick else 1.0
free = db.simulate(model, q0, np.zeros(4), T1, 1e-3, stabilization="none")
f_pin = lambda q, v: pin_fd(q, v, np.zeros(4))  # noqa: E731
q, v = free.q[0].copy(), np.zeros(4)
t0 = time.perf_counter()
for _ in range(free.n_steps):
    k1 = f_pin(q, v)
    k2 = f_pin(q + 0.5e-3 * v, v + 0.5e-3 * k1)
    k3 = f_pin(q + 0.5e-3 * (v + 0.5e-3 * k1), v + 0.5e-3 * k2)
    k4 = f_pin(q + 1e-3 * (v + 0.5e-3 * k2), v + 1e-3 * k3)
    q, v = (
        q + 1e-3 / 6 * (v + 2 * (v + 0.5e-3 * k1) + 2 * (v + 0.5e-3 * k2) + v + 1e-3 * k3),
        v + 1e-3 / 6 * (k1 + 2 * k2 + 2 * k3 + k4),
    )
pin_wall = time.perf_counter() - t0
print(
    f"  {T1:g} s without stabilisation: final q equal to a Python RK4 loop around pin.constraintDynamics to "
    f"{np.abs(free.q[-1] - q).max():.1e} rad ({free.wall_time * 1e3:.1f} ms vs {pin_wall * 1e3:.0f} ms); "
    f"closure error without projection grows to {free.constraint_error.max():.1e} m"
)

plt = pyplot()
fig, axes = plt.subplots(3, 1, figsize=(7, 7.5), sharex=True)
for j, name in enumerate((r"$\theta_1$ [m]", r"$\theta_2$", r"$\theta_3$", r"$\theta_4$")):
    axes[0].plot(tr.t, tr.q[:, j], label=name)
axes[0].set_ylabel("joint coordinate [rad]")
axes[0].legend(fontsize=8, ncol=4)
axes[0].set_title("004 four-bar, passive, RK4 dt = 1 ms with projection onto the loop", fontsize=9)
axes[1].plot(tr.t, tr.kinetic_energy, label="kinetic")
axes[1].plot(tr.t, tr.potential_energy - tr.potential_energy.min(), label="potential (shifted)")
ax2 = axes[1].twinx()
ax2.plot(tr.t, (Et - Et[0]) / tr.kinetic_energy.max(), color="k", lw=0.8, label="(E - E0) / T_max")
ax2.set_ylabel("(E - E0) / T_max")
axes[1].set_ylabel("energy [J]")
axes[1].legend(fontsize=8, loc="upper left")
ax2.legend(fontsize=8, loc="upper right")
axes[2].semilogy(tr.t, np.maximum(tr.constraint_error, 1e-17), lw=0.6)
axes[2].set_ylabel("loop-closure error [m]")
axes[2].set_xlabel("t [s]")
for ax in axes:
    ax.grid(alpha=0.3)
save(fig, args.out, "fourbar.png")
