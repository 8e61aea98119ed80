"""Recover the link masses of a robot from a simulated trajectory with the adjoint (VJP) gradient.

    python examples/16_identify_masses.py [--quick] [--out DIR]

A spatial chain of 8 revolute joints (denoc_bridge.io.robots.serial_chain) has link masses
m_true drawn in [0.5, 2] kg; each link's rotational inertia scales with its mass (the centre of
mass stays), so that inverse dynamics is linear in the masses:
``ID(q, v, a; m) = sum_i m_i Y_i(q, v, a)``, ``Y_i`` the inverse dynamics of the chain with a
unit mass on link i alone.  The chain is driven by sinusoidal torques (simulate, RK4) and the
states (q_k, v_k), torques tau_k and accelerations a_k of the run are the data.

The masses are found by minimising the acceleration error

    L(m) = 1/2 sum_k |FD(q_k, v_k, tau_k; m) - a_k|^2

from m = 1 kg everywhere, with L-BFGS-B and the gradient by the adjoint: with
``r_k = FD(...) - a_k`` and ``mu_k = M^-1 r_k`` (the ``dqdd_dtau^T r_k`` output of
forward_dynamics_vjp, one O(n) solve), the implicit-function theorem gives

    dL/dm_i = sum_k r_k . dFD/dm_i = -sum_k mu_k . Y_i(q_k, v_k, FD_k)

so one VJP per sample and one inverse dynamics per link and sample, never a matrix.  The
gradient is checked against central differences of L first.
"""

from __future__ import annotations

import time

import numpy as np
from _common import arguments, pyplot, save
from scipy import optimize

import denoc_bridge as db
from denoc_bridge.io.robots import serial_chain

args = arguments(__doc__)
N_LINKS = 8
BASE = serial_chain(N_LINKS, length=0.2, mass=1.0, inertia=(2e-3, 2e-3, 1e-3))
UNIT_INERTIA = np.asarray(BASE.inertia) / np.asarray(BASE.mass)[:, None, None]
rng = np.random.default_rng(7)
m_true = rng.uniform(0.5, 2.0, N_LINKS)


def with_masses(m):
    """The chain with link masses m (inertias scaled alike, centres of mass kept)."""
    m = np.asarray(m, dtype=float)
    return BASE.replace(mass=m, inertia=m[:, None, None] * UNIT_INERTIA)


UNIT_MODELS = [with_masses(np.eye(N_LINKS)[i]) for i in range(N_LINKS)]  # Y_i: a unit mass on link i alone

# ---------------------------------------------------------------- data: a driven run of the true chain
T = 1.0 if args.quick else 3.0
dt = 1e-3
steps = int(round(T / dt))
t = np.arange(steps) * dt
freq = rng.uniform(0.5, 2.0, N_LINKS)
phase = rng.uniform(0, 2 * np.pi, N_LINKS)
tau_table = 5.0 * np.sin(2 * np.pi * freq * t[:, None] + phase)
truth = with_masses(m_true)
traj = db.simulate(truth, np.zeros(N_LINKS), np.zeros(N_LINKS), T, dt, tau=tau_table, limits=False)
every = 10 if args.quick else 5
idx = np.arange(0, steps, every)
Q, V, A, TAU = traj.q[idx], traj.v[idx], traj.a[idx], traj.tau[idx]
print(f"data: {len(idx)} samples of a {T:g} s run of {BASE.name} driven by sinusoidal torques (rk4, dt = {dt:g} s)")


def loss_and_gradient(m):
    model = with_masses(m)
    loss, grad = 0.0, np.zeros(N_LINKS)
    for q, v, a, tau in zip(Q, V, A, TAU):
        qdd = db.forward_dynamics(model, q, v, tau)
        r = qdd - a
        loss += 0.5 * float(r @ r)
        _, _, mu = db.forward_dynamics_vjp(model, q, v, tau, r)  # mu = M^-1 r
        for i, unit in enumerate(UNIT_MODELS):
            grad[i] -= mu @ db.inverse_dynamics(unit, q, v, qdd)  # -mu . Y_i(q, v, FD)
    return loss, grad


m0 = np.ones(N_LINKS)
loss0, grad0 = loss_and_gradient(m0)
h = 1e-6
fd = np.array(
    [(loss_and_gradient(m0 + h * e)[0] - loss_and_gradient(m0 - h * e)[0]) / (2 * h) for e in np.eye(N_LINKS)]
)
print(
    f"gradient at m = 1: adjoint vs central differences, max relative difference {np.abs(grad0 - fd).max() / np.abs(fd).max():.2e}"
)

history = []
t0 = time.perf_counter()
result = optimize.minimize(
    loss_and_gradient,
    m0,
    jac=True,
    method="L-BFGS-B",
    bounds=[(0.01, 10.0)] * N_LINKS,
    options=dict(ftol=1e-30, gtol=1e-14, maxiter=500),
    callback=lambda m: history.append(loss_and_gradient(m)[0]),
)
wall = time.perf_counter() - t0
err = np.abs(result.x - m_true) / m_true
print(f"L-BFGS-B: {result.nit} iterations, {result.nfev} loss and gradient evaluations, {wall:.2f} s")
print(f"loss: {loss0:.3e} at m = 1 -> {result.fun:.3e}")
print("link  true mass  identified  relative error")
for i in range(N_LINKS):
    print(f"{i:4d}  {m_true[i]:9.6f}  {result.x[i]:10.6f}  {err[i]:.1e}")
print(f"masses recovered to {err.max():.1e} relative")

plt = pyplot()
fig, ax = plt.subplots(figsize=(5, 3.4))
ax.semilogy(np.arange(1, len(history) + 1), history, "o-")
ax.set_xlabel("L-BFGS-B iteration")
ax.set_ylabel("loss (rad^2/s^4)")
ax.set_title("link masses from a trajectory (adjoint gradient)")
save(fig, args.out, "identify_masses.png")
