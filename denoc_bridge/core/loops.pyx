# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""Closed loops, compiled: the constraint rows of the cut joints and joint couplings (004 eqs.
12-13, 15), the constrained accelerations of a tree with loops by Lagrange multipliers on the
independent rows (004 eqs. 13-14) and the projection of (q, v) onto the loops, with an optional
block of constant rows stacked ahead (a MimicModel with loops: J = [K; C(q)]); the readable
version denoc_bridge/constraints/loops.py, loop_kinematics.py and mimic_loops.py.

One extension module built from ``loop_rows.pxi`` (the world velocities of the links, the rows
of every cut-joint type), ``loop_dynamics.pxi`` (the independent rows, the Lagrange solve on
the articulated factors, the constrained accelerations, the projection) and
``loops_entry.pxi`` (the entries called from Python, which check every array).  The forward
dynamics passes, the factorised solve and the links' world frames come from ``tree``
(tree.pxd), the Cholesky solve from ``dense.pxd``, q (+) dq from ``configuration``
(configuration.pxd).

Entries: ``loop_rows_state(kt, work, pi, pf, sb, q, v, with_bias)`` (status),
``accelerations_state(kt, work, pi, pf, sb, q, v, tau, fext, alpha, beta, rtol, a)`` ((status,
rank)), ``project_state(kt, work, pi, pf, sb, q, v, rtol, tol, max_iter, qn)`` ((status, the
residual at the end, at the start)); ``scratch_size(L, nv, m)`` and ``ds_start(L, nv)`` the
layout of the scratch ``sb`` (loops_entry.pxi).  Statuses: 0 done, k + 1 a singular
articulated inertia of link k, -1 an invalid value (or a result that is not finite), -2 a
length or an index that does not fit (nothing computed), -3 a singular C M^-1 C^T, -4 a
projection that did not converge; TypeError for an argument that is not a C-contiguous aligned
ndarray of the expected dtype and dimensions (writeable where written).
"""

cimport numpy as cnp
from libc.math cimport atan2, fmax, isfinite, sqrt

from denoc_bridge.core.arrays cimport (array_of, configuration_status, doubles, model_nq, model_nv,
                                       modules_fit, parents_fit, table_fits)
from denoc_bridge.core.configuration cimport model_integrate
from denoc_bridge.core.dense cimport cholesky_solve
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport factorised_solve, forward_dynamics_passes, world_frames
from denoc_bridge.core.vectors cimport cross3

cnp.import_array()

include "loop_rows.pxi"
include "loop_dynamics.pxi"
include "loops_entry.pxi"

#: the type codes of the cut joints' rows of ``pi`` (constraints/packed.py packs them)
CUT_CODES = {"weld": CUT_WELD, "spherical": CUT_SPHERICAL, "revolute": CUT_REVOLUTE,
             "prismatic": CUT_PRISMATIC, "coupling": CUT_COUPLING, "term": CUT_TERM}
