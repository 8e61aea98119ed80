"""The gripper's joint torques along the trajectory of 000 eq. (15) (000 §3.1, Table 2, Fig. 5).

    python examples/05_gripper_inverse_dynamics.py [--quick] [--out DIR]

The 4-DOF gripper (urdf/gripper4.urdf) moves from theta(0) = (0, 0, 0, 90) deg to
theta(T) = (60, 80, 80, 120) deg in T = 1 s along eq. (15), in a vertical plane
(gravity along -y; the paper plots the torques without stating the plane).  The
torques come from one batched call of the recursive inverse dynamics (000 Table 1)
and are checked against pin.rnea at every sample.  The paper reports 0.025 s for
ReDySim (MATLAB, Intel T2300 1.66 GHz) and 1.95 s for ADAMS.
"""

import numpy as np
import pinocchio as pin
from _common import arguments, best_of, pyplot, save

import denoc_bridge as db
from denoc_bridge.io.robots import gripper4

args = arguments(__doc__)
model = gripper4().replace(gravity=(0.0, -9.81, 0.0))
T = 1.0
t = np.linspace(0.0, T, 101 if args.quick else 1001)
theta0, thetaT = np.radians([0, 0, 0, 90]), np.radians([60, 80, 80, 120])  # q = (11, 12, 22, 13)
q, v, a = db.cycloidal_motion(theta0, thetaT, T, t)

tau, wall = best_of(lambda: db.trajectory_torques(model, t, q, v, a))
pm = db.to_pinocchio(model)
pd = pm.createData()
ref = np.array([pin.rnea(pm, pd, q[i], v[i], a[i]) for i in range(len(t))])
diff = np.abs(tau - ref).max() / np.abs(ref).max()

print(
    f"{len(t)} samples over T = {T} s: inverse dynamics in {wall * 1e3:.2f} ms "
    f"(paper: ReDySim 25 ms, ADAMS 1950 ms); max |tau - pin.rnea| / max |tau| = {diff:.1e}"
)
for j, name in enumerate(("theta_11", "theta_12", "theta_22", "theta_13")):
    k = int(np.argmax(np.abs(tau[:, j])))
    print(f"  {name}: peak torque {tau[k, j]: .5f} N m at t = {t[k]:.2f} s")
if not diff < 1e-12:
    raise SystemExit("the torques disagree with pin.rnea")

plt = pyplot()
fig, ax = plt.subplots(figsize=(6, 4))
for j, name in enumerate((r"$\tau_{11}$", r"$\tau_{12}$", r"$\tau_{22}$", r"$\tau_{13}$")):
    ax.plot(t, tau[:, j], label=name)
ax.set_xlabel("t [s]")
ax.set_ylabel("joint torque [N m]")
ax.set_title("Gripper torques along 000 eq. (15), Table 2 (cf. 000 Fig. 5)", fontsize=9)
ax.grid(alpha=0.3)
ax.legend()
save(fig, args.out, "gripper_torques.png")
