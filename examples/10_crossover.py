"""Where O(n) forward dynamics overtakes the GIM and Cholesky (004 Fig. 6: 5-9 bodies).

    python examples/10_crossover.py [--quick] [--out DIR]

For serial chains (the planar chain of cylinders) and branched trees (random trees of
revolute joints), n = 1..40 bodies, the time of one forward dynamics:
* recursive: ``forward_dynamics`` (000 Table 3), one compiled pass;
* non-recursive: the GIM (``mass_matrix``, 000 eqs. 16-17), the bias forces
  (``nonlinear_effects``), a Cholesky factorisation and two triangular solves.
Both are timed from Python (what a user calls, one state per call) and per state of
a batch of 64 states on one thread (the algorithms with next to no Python: one compiled
loop over the states, and LAPACK's Cholesky and solves over the stacked matrices), and
the smallest n from which the recursive one is faster is printed.  004 (Nikravesh et al., 1990) reports
breakpoints of 5-9 bodies between its recursive and non-recursive formulations.
"""

import time

import numpy as np
import scipy.linalg as sl
from _common import arguments, pyplot, save

import denoc_bridge as db
from denoc_bridge.generators import chain
from denoc_bridge.testing import random_model

args = arguments(__doc__)
db.set_num_threads(1)  # the batches' thread count, in this thread
sizes = [1, 2, 4, 8, 16] if args.quick else list(range(1, 41))


def per_call(fn, min_time=0.02, max_calls=1 << 20):
    """Seconds per call over at least ``min_time``, or ``max_calls`` calls (bounded on any machine)."""
    fn()
    n, t = 1, 0.0
    while t < min_time and n < max_calls:
        n *= 4
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
    return t / n


B = 64  # states per batch


def cholesky_solve(M, phi):
    """a = M^-1 phi for a stack of SPD matrices: M = L L^T, L y = phi, L^T a = y (LAPACK)."""
    Lc = np.linalg.cholesky(M)
    y = np.linalg.solve(Lc, phi[..., None])  # LAPACK's gesv on stacks: no triangular solve in NumPy
    return np.linalg.solve(np.swapaxes(Lc, -1, -2), y)[..., 0]


results = {}
for system in ("serial", "branched"):
    rows = []
    for n in sizes:
        model = (
            chain(n, "planar")
            if system == "serial"
            else random_model(n, n, branching=0.5, joint_types=(db.JointType.REVOLUTE,))
        )
        rng = np.random.default_rng(n)
        q, v, tau = db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)

        def nonrecursive():
            M = db.mass_matrix(model, q)
            return sl.cho_solve(
                sl.cho_factor(M, check_finite=False), tau - db.nonlinear_effects(model, q, v), check_finite=False
            )

        a = db.forward_dynamics(model, q, v, tau)
        assert np.abs(nonrecursive() - a).max() <= 1e-8 * max(1.0, np.abs(a).max())
        Q, V, TAU, Z = (np.tile(x, (B, 1)) for x in (q, v, tau, np.zeros_like(v)))

        def nonrecursive_batch():
            return cholesky_solve(db.mass_matrix(model, Q), TAU - db.inverse_dynamics(model, Q, V, Z))

        assert np.abs(nonrecursive_batch()[-1] - a).max() <= 1e-8 * max(1.0, np.abs(a).max())
        rows.append(
            (
                n,
                per_call(lambda: db.forward_dynamics(model, q, v, tau)),
                per_call(nonrecursive),
                per_call(lambda: db.forward_dynamics(model, Q, V, TAU)) / B,
                per_call(nonrecursive_batch) / B,
            )
        )
    results[system] = np.array(rows)
    r = results[system]
    for col, label in ((1, "from Python"), (3, "batches    ")):
        faster = r[r[:, col] < r[:, col + 1], 0]
        slower = r[r[:, col] >= r[:, col + 1], 0]
        cross = int(slower.max()) + 1 if slower.size else 1
        print(
            f"{system:8s} {label}: recursive faster for every n >= {cross} "
            f"(n = {int(r[0, 0])}: {r[0, col] * 1e6:.2f} vs {r[0, col + 1] * 1e6:.2f} us; "
            f"n = {int(r[-1, 0])}: {r[-1, col] * 1e6:.2f} vs {r[-1, col + 1] * 1e6:.2f} us)"
            + ("" if faster.size else " -- never faster")
        )

plt = pyplot()
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8), sharey=True)
for ax, system in zip(axes, ("serial", "branched")):
    r = results[system]
    ax.plot(r[:, 0], r[:, 1] * 1e6, "o-", ms=3, label="recursive, from Python")
    ax.plot(r[:, 0], r[:, 2] * 1e6, "s-", ms=3, label="GIM + Cholesky, from Python")
    ax.plot(r[:, 0], r[:, 3] * 1e6, "o--", ms=3, label="recursive, per state of a batch")
    ax.plot(r[:, 0], r[:, 4] * 1e6, "s--", ms=3, label="GIM + Cholesky, per state of a batch")
    ax.set_title(f"{system} systems", fontsize=9)
    ax.set_xlabel("bodies n")
    ax.grid(alpha=0.3)
axes[0].set_ylabel("time per forward dynamics [us]")
axes[0].set_yscale("log")
axes[0].legend(fontsize=7)
fig.suptitle("Recursive O(n) forward dynamics against the GIM and Cholesky (cf. 004 Fig. 6)", fontsize=10)
save(fig, args.out, "crossover.png")
