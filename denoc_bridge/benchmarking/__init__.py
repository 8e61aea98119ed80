"""The speed benchmark of denoc_bridge next to Pinocchio and MuJoCo (the README's Speed table).

``run(quick)`` measures, in this process unless stated (all timings: medians of
interleaved repeats, each repeat a batch of calls from Python through the public API):

1. single calls: ``forward_dynamics`` / ``pin.aba``, ``inverse_dynamics`` / ``pin.rnea`` and
   ``mass_matrix`` / ``pin.crba`` on panda (example-robot-data) and on the 100-DOF benchmark
   chain built as a ``pinocchio.Model`` and passed through ``from_pinocchio``;
2. scaling on the benchmark chain (:func:`denoc_bridge.io.robots.serial_chain`) from 10 to
   100,000 DOF: denoc_bridge forward and inverse dynamics, ``pin.aba`` up to ``pin_max``
   links (its ``createData`` needs ~64 n^3 bytes), MuJoCo ``mj_forward`` (if installed) while
   a call takes less than ``mujoco_budget`` seconds; the engines' accelerations are compared
   first;
3. memory of the model and its work arrays at 100,000 DOF (tracemalloc);
4. batches of 4096 panda states against ``pin.abaInParallel`` / ``pin.rneaInParallel``
   with 2 threads;
5. start-up: the first call of a second Python process (kernels from the disk cache);
6. correctness beyond Pinocchio: 1,000-DOF forward dynamics against ``mass_matrix`` plus a
   dense solve, and energy conservation of a 100,000-DOF chain in free fall (RK4, three
   step sizes).

``quick=True`` runs small sizes only (a smoke test of about 10 s, not a measurement).
:func:`targets` and :func:`markdown` turn the results into the README's tables,
:func:`denoc_bridge.viz.plots.plot_scaling` into the scaling plot.  ``benchmarks/speed.py``
(in a source checkout) adds the operation counts and writes the files;
``denoc-bridge bench`` prints the tables.

The benchmark chain: n revolute joints alternating about the x and y axes, 0.1 m apart
along z, each link 1 kg at (0, 0, 0.05) with the diagonal inertia (1e-3, 1e-3, 5e-4)
about its centre of mass; :func:`pinocchio_chain` and :func:`mujoco_chain` build the same
chain with Pinocchio's and MuJoCo's own APIs.
"""

from denoc_bridge.benchmarking.engines import INERTIA, LENGTH, MASS, mujoco_chain, mujoco_forward, pinocchio_chain
from denoc_bridge.benchmarking.report import fmt_us, machine, markdown, notes, targets
from denoc_bridge.benchmarking.runner import run
from denoc_bridge.benchmarking.suites import (
    batches,
    dense_check,
    energy_check,
    interleaved,
    memory,
    relative_difference,
    scaling,
    single_calls,
    startup,
)

__all__ = [
    "LENGTH",
    "MASS",
    "INERTIA",
    "run",
    "targets",
    "markdown",
    "notes",
    "interleaved",
    "machine",
    "fmt_us",
    "relative_difference",
    "pinocchio_chain",
    "mujoco_chain",
    "mujoco_forward",
    "single_calls",
    "scaling",
    "memory",
    "batches",
    "startup",
    "dense_check",
    "energy_check",
]
