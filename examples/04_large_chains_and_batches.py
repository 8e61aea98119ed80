"""Forward dynamics of a long serial chain, and a batch of robot states in parallel.

    python examples/04_large_chains_and_batches.py [N]

Builds the benchmark chain of N revolute joints (default 100,000; no
``pinocchio.Model`` of that size can be built here), runs forward and inverse
dynamics, checks that one undoes the other, then evaluates a batch of 4,096
panda states in one call (a leading batch axis) and compares it with
Pinocchio's ``abaInParallel``.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pinocchio as pin

import denoc_bridge as db
from denoc_bridge.io.robots import load_robot, serial_chain


def main(n: int) -> None:
    t = time.perf_counter()
    chain = serial_chain(n)
    print(
        f"chain of {n:,} revolute joints built in {time.perf_counter() - t:.2f} s ({chain.n_modules} kinematic module)"
    )
    rng = np.random.default_rng(0)
    q = db.random_configuration(chain, rng)
    v, tau = rng.standard_normal(n), rng.standard_normal(n)
    db.forward_dynamics(chain, q, v, tau)  # first call: sets up the model's work arrays
    t = time.perf_counter()
    a = db.forward_dynamics(chain, q, v, tau)
    t_fd = time.perf_counter() - t
    back = db.inverse_dynamics(chain, q, v, a)
    # tau is the small difference of huge terms: the joint at the base carries the weight and the
    # bias forces of a 10 km chain; the round trip is exact to round-off of those terms
    h = np.abs(db.nonlinear_effects(chain, q, v)).max()
    err = np.abs(back - tau).max() / h
    print(
        f"forward_dynamics: {t_fd * 1e3:.2f} ms ({t_fd / n * 1e9:.0f} ns per DOF); "
        f"inverse_dynamics(forward_dynamics(tau)) = tau to {err:.1e} of the largest bias torque "
        f"(|C v + g| up to {h:.1e} N m)"
    )
    if not err < 1e-12:
        sys.exit("forward and inverse dynamics disagree")

    panda = load_robot("panda")
    B = 4096
    Q = np.array([db.random_configuration(panda, rng) for _ in range(B)])
    V, TAU = rng.standard_normal((B, panda.nv)), rng.standard_normal((B, panda.nv))
    A = db.forward_dynamics(panda, Q, V, TAU)  # shape (B, nv), states in parallel
    t = time.perf_counter()
    A = db.forward_dynamics(panda, Q, V, TAU)
    t_batch = time.perf_counter() - t
    pm = db.to_pinocchio(panda)
    pool = pin.ModelPool(pm, 2)
    A_pin = pin.abaInParallel(2, pool, Q.T, V.T, TAU.T).T
    print(
        f"batch of {B} panda states: {t_batch * 1e3:.2f} ms ({t_batch / B * 1e9:.0f} ns per state); "
        f"max |a - pin.abaInParallel| = {np.abs(A - A_pin).max():.1e}"
    )
    if not np.abs(A - A_pin).max() <= 1e-10 * np.abs(A_pin).max():
        sys.exit("the batch disagrees with Pinocchio")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100_000)
