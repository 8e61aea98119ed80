"""LQR on a double pendulum on a cart: linearise at the upright equilibrium, stabilise it.

    python examples/14_cartpole_lqr.py [--quick] [--out DIR]

The robot is generated as URDF (denoc_bridge.generators.cartpole_urdf(2): a 1 kg cart on a rail,
two 0.2 kg, 0.6 m poles about y, upright at q = 0); only the cart is actuated.
db.linearize gives the continuous-time state space x' = A x + B u of x = (dq, v) at the
upright equilibrium (q = 0, v = 0, tau = gravity_torques = 0), from the analytical derivatives
of the forward dynamics (checked here against central differences of db.forward_dynamics).
scipy.linalg.solve_continuous_are gives the LQR gain K of the cart's column of B, and
db.simulate runs the closed loop u = -K (difference(q_eq, q), v), a torque callback
tau(t, q, v), with RK4 at dt = 1 ms from a start with both poles tilted, next to the open loop
(tau = 0) from the same start, which falls.  The linear closed loop exp((A - B K) t) x0
predicts the nonlinear response, to second order in the tilt.
"""

import numpy as np
from _common import arguments, pyplot, save
from scipy import linalg

import denoc_bridge as db
from denoc_bridge.generators import cartpole_urdf

args = arguments(__doc__)
T_FINAL = 4.0 if args.quick else 8.0
DT = 1e-3
TILT = np.array([0.0, 0.15, -0.10])  # cart 0 m, poles 0.15 rad and -0.10 rad from upright

model = db.load_urdf(cartpole_urdf(2))
nv = model.nv
q_eq, v_eq = np.zeros(model.nq), np.zeros(nv)
tau_eq = db.gravity_torques(model, q_eq)  # zero upright
A, B_all = db.linearize(model, q_eq, v_eq, tau_eq)
B = B_all[:, :1]  # only the cart is actuated

# the linearisation against central differences of the nonlinear dynamics
h = 1e-6
A_fd = np.zeros_like(A)
A_fd[:nv, nv:] = np.eye(nv)
for j in range(nv):
    e = np.zeros(nv)
    e[j] = h
    A_fd[nv:, j] = (
        db.forward_dynamics(model, q_eq + e, v_eq, tau_eq) - db.forward_dynamics(model, q_eq - e, v_eq, tau_eq)
    ) / (2 * h)
    A_fd[nv:, nv + j] = (
        db.forward_dynamics(model, q_eq, v_eq + e, tau_eq) - db.forward_dynamics(model, q_eq, v_eq - e, tau_eq)
    ) / (2 * h)
print(f"{model.name}: nq = {model.nq}, nv = {nv}; A is {A.shape}, B (cart column) {B.shape}")
print(f"max |A - central differences| / max |A| = {np.abs(A - A_fd).max() / np.abs(A).max():.1e}")
print(f"open-loop eigenvalues: {np.array2string(np.sort_complex(linalg.eigvals(A)), precision=3)}")

Q = np.diag([100.0, 100.0, 100.0, 10.0, 10.0, 10.0])
R = np.array([[0.1]])
P = linalg.solve_continuous_are(A, B, Q, R)
K = np.linalg.solve(R, B.T @ P)
closed = linalg.eigvals(A - B @ K)
print(f"LQR gain K = {np.array2string(K[0], precision=2)}")
print(f"closed-loop eigenvalues: {np.array2string(np.sort_complex(closed), precision=3)}")
print(f"max Re(closed-loop eigenvalue) = {closed.real.max():.3f}")


def controller(t, q, v):
    x = np.concatenate([db.difference(model, q_eq, q), v - v_eq])
    tau = tau_eq.copy()
    tau[0] += -(K @ x)[0]
    return tau


q0 = q_eq + TILT
closed_run = db.simulate(model, q0, v_eq, T_FINAL, DT, tau=controller)
open_run = db.simulate(model, q0, v_eq, min(T_FINAL, 2.0), DT)  # passive: it falls
x0 = np.concatenate([TILT, np.zeros(nv)])
linear = np.array([linalg.expm((A - B @ K) * t) @ x0 for t in closed_run.t])
x_sim = np.hstack([closed_run.q, closed_run.v])
force = np.array([controller(t, q, v)[0] for t, q, v in zip(closed_run.t, closed_run.q, closed_run.v)])

final = np.abs(x_sim[-1]).max()
print(f"closed loop from tilts {TILT[1]:+.2f}, {TILT[2]:+.2f} rad: final max |x| = {final:.2e} after {T_FINAL:g} s")
print(
    f"peak cart force {np.abs(force).max():.2f} N; cart travels within [{closed_run.q[:, 0].min():.3f}, "
    f"{closed_run.q[:, 0].max():.3f}] m"
)
print(
    f"linear closed loop vs simulation: max |x_lin - x_sim| = {np.abs(linear - x_sim).max():.2e} "
    f"(max |x| = {np.abs(x_sim).max():.2f})"
)
fell = np.abs(open_run.q[:, 1:]).max()
print(f"open loop (tau = 0) from the same start: max |pole angle| = {fell:.2f} rad within {open_run.t[-1]:g} s")
if not (final < 1e-3 and fell > 1.0 and closed.real.max() < 0):
    raise SystemExit("LQR did not stabilise the double pendulum, or the open loop did not fall")

plt = pyplot()
fig, axes = plt.subplots(1, 3, figsize=(14, 4.0))
ax = axes[0]
for i, (label, color) in enumerate(
    (("cart [m]", "tab:blue"), ("pole 1 [rad]", "tab:orange"), ("pole 2 [rad]", "tab:green"))
):
    ax.plot(closed_run.t, closed_run.q[:, i], color=color, lw=1.2, label=label)
    ax.plot(closed_run.t, linear[:, i], "--", color="k", lw=0.6)
ax.axhline(0.0, color="gray", lw=0.5)
ax.set_xlabel("t [s]")
ax.set_title("Closed loop (LQR on db.linearize); dashed: exp((A - BK) t) x0", fontsize=9)
ax.legend(fontsize=8)
ax = axes[1]
ax.plot(closed_run.t, force, color="tab:red", lw=1.2)
ax.set_xlabel("t [s]")
ax.set_ylabel("cart force u = -K x [N]")
ax.set_title("Control force", fontsize=9)
ax = axes[2]
ax.plot(open_run.t, open_run.q[:, 1], color="tab:orange", lw=1.2, label="pole 1, open loop")
ax.plot(open_run.t, open_run.q[:, 2], color="tab:green", lw=1.2, label="pole 2, open loop")
ax.plot(
    closed_run.t[closed_run.t <= open_run.t[-1]],
    closed_run.q[closed_run.t <= open_run.t[-1], 1],
    ":",
    color="tab:orange",
    lw=1.0,
    label="pole 1, LQR",
)
ax.set_xlabel("t [s]")
ax.set_ylabel("angle from upright [rad]")
ax.set_title("Open loop (tau = 0) from the same start: it falls", fontsize=9)
ax.legend(fontsize=8)
fig.suptitle(f"Double pendulum on a cart ({model.name}, generated URDF), RK4 dt = 1 ms", fontsize=10)
fig.tight_layout()
save(fig, args.out, "cartpole_lqr.png")
