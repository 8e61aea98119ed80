# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The fixed-step runs of a tree, of a tree with loop closures, of a tree with mimic joints and
of a tree with both, compiled: RK4
(Runge-Kutta-Munthe-Kaas on the joints' Lie groups) and semi-implicit Euler with the O(n)
forward dynamics inside (000 §3.2: forward dynamics followed by numerical integration), joint
limits as plastic stops, springs and dampers; numba's kernels/run.py, integrators.py, systems.py
(the tree, the loop system, the mimic system and the mimic system with loops: mimic_loops.py),
limits.py and mimic.py were its predecessors (issues 48 and 49).

One extension module built from ``integrators.pxi`` (the forces of a step, the stages, RK4 and
Euler), ``limits.pxi`` (the stops) and ``run_entry.pxi`` (the entries called from Python, which
check every array and fill one struct per run: the tree, its forcing, the saved rows).  The
forward dynamics passes, the fused stage sweep of revolute chains, the factorised solve and the
energy come from ``tree`` (tree.pxd), a loop system's accelerations and projection from
``loops`` (loops.pxd), the configuration maps from ``configuration``
(configuration.pxd), the model's sizes and checks from ``arrays.pxd``.  Compiled without
contraction of a * b + c (setup.py), as numba compiled the integrators it replaced: the stage
and step formulas round as written.

Entries (the names and arguments of numba's ``rk4_run``, ``euler_run`` and ``run_batch``: the named
tuples ``TreeSystem``, ``Forcing`` and ``Saves`` of denoc_bridge/core/systems.py):
``rk4_run(system, fc, q, v, step0, n_steps, dt, save_every, save0, out, s)`` and ``euler_run``
return (steps done, status, rows saved) and run without the GIL (``system`` a TreeSystem, a
LoopSystem, a MimicSystem or a MimicLoopSystem); ``run_batch_chunk(system, fc,
Q, V, n_steps, dt, save_every, out, done, status, saved, euler, start, stop)`` runs the cases
``start:stop`` of a batch without the GIL, a case at a time on work arrays of its own (the
Python layer runs chunks on several threads); the stages of a run stepped from Python
(simulation/tree.py) call ``enforce_joint_limits(system, fc, q, v)`` (the stop after a step:
(joints moved or stopped, status), the energy into ``system.lim_e``) and
``passive_forces(system, fc, q, v, out)`` (the springs and dampers of a step).  The status of a run is 0, k + 1 (the
articulated inertia of link k is singular), -1 (a state that left the finite numbers), -3 (a
stop's E^T M^-1 E, or a loop system's C M^-1 C^T, is singular), -4 (a loop system's projection
did not converge); -2 when an array's length does not fit the model or the run
(nothing computed).  An argument that is not an ndarray of the expected dtype (float64, int64
for the limits' indices), dimensions and C-contiguous layout (writeable where written) raises
TypeError.
"""

cimport numpy as cnp
from libc.math cimport isfinite
from libc.stdlib cimport calloc, free

from denoc_bridge.core.arrays cimport (all_finite, array_of, doubles, model_nq, model_nv, modules_fit, parents_fit,
                                       table_fits)
from denoc_bridge.core.configuration cimport model_dexpinv, model_difference, model_integrate
from denoc_bridge.core.dense cimport cholesky_solve
from denoc_bridge.core.loops cimport (Loop, Packed, largest, loop_accelerations, packed_of, project_within,
                                      stacked_cuts_of)
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport (MimicMaps, articulated_backward_recursion, energies_of_state,
                                     expand_configuration, expand_velocity, factorised_solve,
                                     first_sweep, forward_dynamics_passes, mimic_accelerations,
                                     mimic_maps, mimic_tree_forces, reduce_configuration, reduce_velocity,
                                     stage_sweep, sweepable)

cnp.import_array()

include "integrators.pxi"
include "limits.pxi"
include "run_entry.pxi"
