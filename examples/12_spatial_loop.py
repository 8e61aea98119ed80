"""A spatial loop with a ball cut joint: an RSSR four-bar, against Pinocchio, and 10 s of passive motion.

    python examples/12_spatial_loop.py [--quick] [--out DIR]

The tree: a crank (revolute R1 about the vertical z at the origin, 0.1 m), a coupler
hung on the crank's tip by a spherical joint S2 (0.43 m), and a rocker (revolute R3
about the horizontal x, at (0.3, 0.2, 0), 0.25 m); bars of 2 kg/m, radius 1 cm.  The loop
is closed by a spherical cut joint S4 between the coupler's tip and the rocker's tip
(Model.add_loop_closure(..., "spherical", ...): 3 constraint rows; in URDF the same is a
<loop_joint type="spherical"> element).  The crank and rocker axes are skew: a spatial
mechanism with 2 DOF (the crank, and the coupler's idle spin about its own axis).

1. The constrained accelerations by Lagrange multipliers (004 eqs. 13-14) and by
   coordinate partitioning (004 eqs. 19-25) against each other and against
   pin.constraintDynamics (a CONTACT_3D constraint between the coupler and the rocker) at
   closed states with random velocities (projected onto C v = 0) and random torques.
2. 10 s of passive motion from rest with the crank at 315 deg, under gravity -z (RK4,
   dt = 1 ms, projection onto the loop after each step; the quaternion of S2 is
   integrated on its manifold): loop-closure error, energy error, wall time; and the
   energy error at dt = 0.5 ms (RK4's fourth order: the error is the integrator's).
"""

import time

import numpy as np
import pinocchio as pin
from _common import arguments, pyplot, save
from scipy import optimize
from scipy.spatial.transform import Rotation

import denoc_bridge as db
from denoc_bridge import loops
from denoc_bridge.generators import cylinder_inertia
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.testing import pin_constraint_dynamics

args = arguments(__doc__)
CRANK, COUPLER, ROCKER = 0.1, 0.43, 0.25
G = np.array([0.3, 0.2, 0.0])  # the rocker's pivot
R_ROCKER = np.array([[0.0, 0.0, 1.0], [0.0, -1.0, 0.0], [1.0, 0.0, 0.0]])  # its joint axis z -> world x
lengths = [CRANK, COUPLER, ROCKER]
mass = [2.0 * length for length in lengths]
model = db.Model(
    name="rssr",
    link_names=["crank", "coupler", "rocker"],
    joint_names=["R1", "S2", "R3"],
    parent=[-1, 0, -1],
    joint_type=[int(JointType.REVOLUTE), int(JointType.SPHERICAL), int(JointType.REVOLUTE)],
    joint_axis=[[0.0, 0.0, 1.0]] * 3,
    joint_rotation=[np.eye(3), np.eye(3), R_ROCKER],
    joint_translation=[np.zeros(3), [CRANK, 0.0, 0.0], G],
    mass=mass,
    com=[[length / 2, 0.0, 0.0] for length in lengths],
    inertia=[cylinder_inertia(m, length, 0.01) for m, length in zip(mass, lengths)],
    base_name="ground",
)
model.add_loop_closure("S4", "spherical", "coupler", "rocker", xyz1=(COUPLER, 0.0, 0.0), xyz2=(ROCKER, 0.0, 0.0))
print(
    f"RSSR: nq = {model.nq}, nv = {model.nv} (R1, S2 quaternion, R3); cut joint "
    + "; ".join(
        f"'{r['name']}' {r['type']} between {r['link1']} and {r['link2']}: {r['rows']} rows"
        for r in loops.constraint_report(model, np.r_[0.0, 0, 0, 0, 1, 0])
    )
)

# a closed configuration with the crank at 0, by geometry: the rocker's tip B(theta) at COUPLER
# from the crank's tip A, the coupler along B - A (quaternion x y z w of S2, in the crank frame)
A = np.array([CRANK, 0.0, 0.0])
B = lambda th: G + ROCKER * np.array([0.0, -np.sin(th), np.cos(th)])  # noqa: E731
theta = optimize.brentq(lambda th: np.linalg.norm(B(th) - A) - COUPLER, -1.0, 0.0)
quat = Rotation.align_vectors([(B(theta) - A) / COUPLER], [[1.0, 0.0, 0.0]])[0].as_quat()
q = np.r_[0.0, quat, theta]
# then walk the crank to 315 deg, closing the loop by Newton-Raphson at each step (004 eq. 26)
for phi in np.linspace(0.0, np.radians(315.0), 22)[1:]:
    q[0] = phi
    q = loops.project_configuration(model, q, independent=[0, 1])
q0 = q
print(
    f"initial state: crank 315 deg, rocker {np.degrees(q0[-1]):.2f} deg, at rest; loop-closure error "
    f"{np.abs(loops.loop_residual(model, q0)).max():.1e} m"
)

T = 2.0 if args.quick else 10.0
db.simulate(model, q0, np.zeros(model.nv), 0.01, 1e-3)  # warm-up: the model's first run
t0 = time.perf_counter()
tr = db.simulate(model, q0, np.zeros(model.nv), T, 1e-3)
wall = time.perf_counter() - t0

print("1. constrained accelerations against pin.constraintDynamics (CONTACT_3D between coupler and rocker)")
pm = db.to_pinocchio(model)
pin_fd = pin_constraint_dynamics(model, pm)  # pin.constraintDynamics, ProximalSettings(1e-14, ...)
rng = np.random.default_rng(12)
worst = {"lagrange": 0.0, "partitioning": 0.0}
between, rows_C = 0.0, 0.0
kkt_err = {"ours": 0.0, "pin": 0.0, "cond": 0.0}
states = tr.q[np.linspace(0, len(tr) - 1, 8).astype(int)]
for q in states:
    v = loops.project_velocity(model, q, 3.0 * rng.normal(size=model.nv))
    tau = rng.normal(size=model.nv)
    a_pin = pin_fd(q, v, tau)
    scale = np.abs(a_pin).max()
    a = {m: loops.constrained_forward_dynamics(model, q, v, tau, method=m) for m in worst}
    for m in worst:
        worst[m] = max(worst[m], np.abs(a[m] - a_pin).max() / scale)
    between = max(between, np.abs(a["lagrange"] - a["partitioning"]).max() / scale)
    phi, C, bias = loops.loop_kinematics(model, q, v)
    rows_C = max(rows_C, np.abs(C @ a["lagrange"] + bias).max() / max(1.0, np.abs(bias).max()))
    M = pin.crba(pm, pm.createData(), q)  # the dense KKT system, solved by LU
    M = np.triu(M) + np.triu(M, 1).T
    kkt = np.block([[M, C.T], [C, np.zeros((3, 3))]])
    h = pin.rnea(pm, pm.createData(), q, v, np.zeros(model.nv))
    a_kkt = np.linalg.solve(kkt, np.r_[tau - h, -bias])[: model.nv]
    scale = np.abs(a_kkt).max()
    kkt_err["ours"] = max(kkt_err["ours"], *(np.abs(a[m] - a_kkt).max() / scale for m in worst))
    kkt_err["pin"] = max(kkt_err["pin"], np.abs(a_pin - a_kkt).max() / scale)
    kkt_err["cond"] = max(kkt_err["cond"], np.linalg.cond(kkt))
print(
    f"  {len(states)} closed states along the motion: max |a - a_pin| / max |a_pin|: lagrange "
    f"{worst['lagrange']:.1e}, partitioning {worst['partitioning']:.1e}; lagrange vs partitioning {between:.1e}; "
    f"acceleration constraint |C a + Cdot v| {rows_C:.1e}"
)
print(
    f"  against the dense KKT system [[M, C^T], [C, 0]] (pin.crba, LU; cond {kkt_err['cond']:.1e}): both methods "
    f"within {kkt_err['ours']:.1e}, pin.constraintDynamics within {kkt_err['pin']:.1e}"
)
if not max(*worst.values(), between) < 1e-9:
    raise SystemExit("the constrained accelerations disagree with Pinocchio")

print(f"2. {T:g} s passive from rest, RK4 dt = 1 ms, projection onto the loop after each step")
Et = tr.total_energy
energy_error = np.abs(Et - Et[0]).max() / tr.kinetic_energy.max()
closure = max(tr.constraint_error.max(), max(np.abs(loops.loop_residual(model, q)).max() for q in tr.q[::100]))
quat_norm = np.abs(np.linalg.norm(tr.q[:, 1:5], axis=1) - 1.0).max()
fine = db.simulate(model, q0, np.zeros(model.nv), T, 5e-4)
fine_error = np.abs(fine.total_energy - fine.total_energy[0]).max() / fine.kinetic_energy.max()
R, p = (np.array(x) for x in zip(*(db.forward_kinematics(model, q) for q in tr.q)))
axis = np.einsum("tij,j->ti", R[:, 1], [1.0, 0.0, 0.0])
spin = np.einsum("ti,ti->t", axis, np.einsum("tij,tj->ti", R[:, 1], tr.v[:, 1:4]) + tr.v[:, [0]] * [0, 0, 1.0])
print(f"  wall time {wall * 1e3:.0f} ms for {tr.n_steps} steps ({wall / tr.n_steps * 1e6:.1f} us per step)")
print(
    f"  max loop-closure error {closure:.1e} m; per-step drift before projection {tr.constraint_drift:.1e} m; "
    f"max | |quaternion| - 1 | = {quat_norm:.1e}"
)
print(
    f"  max |E - E0| / max T = {energy_error:.1e} at dt = 1 ms, {fine_error:.1e} at dt = 0.5 ms "
    f"(ratio {energy_error / fine_error:.0f}; E0 = {Et[0]:.4f} J, max T = {tr.kinetic_energy.max():.3f} J)"
)
print(
    f"  the crank swings between {np.degrees(tr.q[:, 0].min()):.1f} and {np.degrees(tr.q[:, 0].max()):.1f} deg, "
    f"the rocker between {np.degrees(tr.q[:, -1].min()):.1f} and {np.degrees(tr.q[:, -1].max()):.1f} deg; "
    f"the coupler's idle spin about its axis (no torque about it: conserved, 0) stays below "
    f"{np.abs(spin).max():.1e} rad/s"
)
if not (closure < 1e-10 and energy_error < 1e-6 and tr.status == "completed"):
    raise SystemExit("the loop does not stay closed or energy is not conserved")

plt = pyplot()
fig = plt.figure(figsize=(10, 7))
ax = fig.add_subplot(2, 2, 1, projection="3d")
tips_a = p[:, 1]
tips_b = p[:, 2] + np.einsum("tij,j->ti", R[:, 2], [ROCKER, 0.0, 0.0])
ax.plot(*tips_a.T, lw=0.6, label="crank tip (S2)")
ax.plot(*tips_b.T, lw=0.6, label="rocker tip (S4)")
first = int(np.argmin(tr.q[: int(1.5 / 1e-3), 0]))  # the first swing, crank 315 deg -> its minimum
for k in [int(np.argmin(np.abs(tr.q[: first + 1, 0] - c))) for c in np.linspace(tr.q[first, 0], q0[0], 6)]:
    pts = np.array([[0, 0, 0], tips_a[k], tips_b[k], G])
    ax.plot(*pts.T, "k-o", ms=2, lw=0.8, alpha=0.6)
ax.set_xlabel("x")
ax.set_ylabel("y")
ax.set_zlabel("z")
ax.set_title("RSSR: ground - crank - coupler - rocker - ground", fontsize=9)
ax.legend(fontsize=7)
ax = fig.add_subplot(2, 2, 2)
ax.plot(tr.t, np.degrees(tr.q[:, 0]), label="crank R1")
ax.plot(tr.t, np.degrees(tr.q[:, -1]), label="rocker R3")
ax.set_ylabel("angle [deg]")
ax.set_xlabel("t [s]")
ax.legend(fontsize=8)
ax.set_title("Passive motion from rest, RK4 dt = 1 ms", fontsize=9)
ax = fig.add_subplot(2, 2, 3)
ax.plot(tr.t, (Et - Et[0]) / tr.kinetic_energy.max(), label="dt = 1 ms")
ax.plot(fine.t, (fine.total_energy - fine.total_energy[0]) / fine.kinetic_energy.max(), label="dt = 0.5 ms")
ax.set_ylabel("(E - E0) / T_max")
ax.set_xlabel("t [s]")
ax.legend(fontsize=8)
ax = fig.add_subplot(2, 2, 4)
ax.semilogy(tr.t, np.maximum(tr.constraint_error, 1e-17), lw=0.6)
ax.set_ylabel("loop-closure error [m]")
ax.set_xlabel("t [s]")
for ax in fig.axes[1:]:
    ax.grid(alpha=0.3)
save(fig, args.out, "spatial_loop.png")
