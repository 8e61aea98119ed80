# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Ground contact, compiled: the rows of the active contacts of a robot's points against planar
grounds, the Delassus operator through the O(n) factorised solve, the frictional contact
solver (projected Gauss-Seidel on Coulomb cones) and the ``contact-euler`` run.

One extension module built from ``contact_rows.pxi`` (the broad phase, the rows, the Delassus
operator), ``contact_solver.pxi`` (PGS), ``contact_loops.pxi`` (a model's loop closures and
joint couplings as bilateral rows beside the contacts), ``contact_run.pxi`` (the steps of a
run), ``contact_mimic.pxi`` (a MimicModel's steps on its tree: its mimic rows K on the same
layer, its state expanded and reduced), ``contact_entry.pxi`` (the entries called from Python,
which check every array) and ``contact_admm_entry.pxi`` (the entry of the ADMM fallback,
``contact_admm.pxd``).  The forward dynamics passes, the factorised solve, the links' world
frames and a MimicModel's maps come from ``tree`` (tree.pxd), the configuration maps from
``configuration`` (configuration.pxd), the loops' rows, constrained accelerations and
projection from ``loops`` (loops.pxd; a MimicModel's rows K stacked ahead of its tree's:
stacked_cuts_of), the Cholesky factor from dense.pxd.

Entries: ``contact_rows_state(kt, work, q, points, rows)`` (the active contacts: their number),
``delassus_state(kt, work, q, J, r, Y, G)``, ``pgs_state(G, g, mu, m, lam, sigma, tol,
max_iter)`` ((sweeps, last change)) and ``contact_steps(kt, work, drive, points, rows, solver,
state, saves, save_every, k0, k1, loops=None, mimic=None)`` ((k, status)), ``admm_state(G, g, mu, lam, tol, max_iter)``
((impulses, iterations, tolerance met)).
"""

cimport numpy as cnp
from libc.math cimport NAN, fabs, fmax, fmin, isfinite, sqrt
from libc.stdlib cimport calloc, free, malloc, realloc

from denoc_bridge.core.arrays cimport (Arr, all_finite, array_of, configuration_status, model_nq, model_nv, modules_fit,
                                       parents_fit, table_fits, take)
from denoc_bridge.core.configuration cimport model_difference, model_integrate
from denoc_bridge.core.dense cimport cholesky_factor, cholesky_substitute
from denoc_bridge.core.loops cimport (Loop, Packed, constraint_rows, independent_rows, largest,
                                      loop_accelerations, packed_of, project_loops, select_rows,
                                      stacked_cuts_of)
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport (MimicMaps, expand_configuration, expand_velocity, factorised_solve,
                                     forward_dynamics_passes, mimic_maps, reduce_configuration,
                                     reduce_velocity, world_frames)

cnp.import_array()

include "contact_rows.pxi"
include "contact_solver.pxi"
include "contact_loops.pxi"
include "contact_run.pxi"
include "contact_mimic.pxi"
include "contact_entry.pxi"
include "contact_admm_entry.pxi"

#: the statuses of ``contact_steps``: every step taken; the step at the returned index needs the
#: Python layer; the same because its PGS stalled (``lam[:3m]``: where it stopped)
DONE, PYTHON_STEP, PGS_STALLED = STEP_DONE, STEP_PYTHON, STEP_STALLED
#: the position correction's frictionless PGS: this tolerance in at most this many sweeps
CORRECTION = (CORRECTION_TOL, CORRECTION_SWEEPS)
