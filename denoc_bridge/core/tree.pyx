# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The tree's recursions, compiled: forward and inverse dynamics, the GIM, its inverse and block
factors, the kinematics and the energies, of one state or of a batch.

One extension module built from one ``.pxi`` file per recursion pass (one generated C file,
one compiler run): ``spatial.pxi`` (the small spatial operators), ``geometry.pxi`` (E_k, r_k,
P_k), ``inverse_dynamics.pxi`` (000 Table 1), ``forward_dynamics.pxi`` (000 Table 3),
``lanes.pxi`` (a batch's forward and inverse dynamics eight states at a time, one per lane
of the vector instructions), ``entry.pxi`` (the dynamics' entries called from Python),
``gim.pxi`` (the GIM and the inverse by the recursion), ``gim_ltdl.pxi`` (the LTDL of the GIM), ``gim_factors.pxi`` (the
block factors, 002 A.13-A.22), ``gim_entry.pxi`` (their entries), ``mimic.pxi`` (the inverse
dynamics, GIM and inverse GIM of a model with mimic joints), ``kinematics.pxi`` (the
links' placements and twists, sums over subtrees), ``energy.pxi`` (kinetic and potential energy
in one forward recursion; ``energies_of_state`` is declared in ``tree.pxd`` for the compiled
runs), ``kinematics_entry.pxi`` (the entries of both) and
``compiled_model.pxi`` (``CompiledTree``: the table taken once with its owner thread's work array,
the public calls' fast path, ``model._core``).  The passes take raw pointers: ``kf`` (the
model table, NT doubles per link), ``ki`` (its int32 view, NI ints per link), ``work``
(rows of W doubles) and the sizes; the layout is ``tables.pxd``'s (its Python twin
denoc_bridge/core/layout.py builds ``model._kt``; the Python layer allocates the work array by
``work_shape``).  The boundary checks are arrays.pxd's (shared with the configuration module, which
this one cimports for the joint springs' q (-) q_rest).

Entries (the signatures and statuses of the numba entries they replaced):
``forward_dynamics_fast(kt, work, q, v, tau, out)``, ``forward_dynamics_state(kt, work, q, v,
tau, fext, out)``, ``ode_rhs(kt, work, q, v, tau, fext, qdot, a)`` (with the configuration
rate), ``inverse_dynamics_fast(kt, work, q, v, a, out)``,
``inverse_dynamics_state(kt, work, q, v, a, fext, out)``, ``mass_matrix_state``,
``inverse_mass_matrix_state``, ``block_factors_state``, ``dynamics_chunk`` and ``batch_lanes``
(batches), ``geometry_state``,
``geometry_and_factors``, ``placements_state(kt, work, q, R, p)``, ``twists_state(kt, work,
q, v, out)``, ``subtree_sums(kt, x, out)``, ``energies_state(kt, work, q, v, K, q_rest, springs,
d)`` (a pair, nan for lengths that do not fit); the ``*_new`` variants return a result they allocate, the ``*_chunk``
ones run part of a batch without the GIL.  Each returns 0 = done, -1 = a value
is invalid, -2 = a length is wrong, -3 = the inputs are finite but the result is not,
k + 1 = the articulated inertia of link k is singular, and raises TypeError for an argument
that is not a C-contiguous aligned float64 array of the expected dimensions (or a read-only
``work`` or ``out``).
"""

cimport numpy as cnp
from libc.math cimport atan2, cos, fabs, isfinite, sin, sqrt
from libc.stdlib cimport calloc, free, malloc

from denoc_bridge.core.compiler cimport crow_t, prefetch, row_t
from denoc_bridge.core.arrays cimport (Arr, all_finite, array_of, configuration_status, doubles, model_nq, model_nv,
                                       modules_fit, parents_fit, table_fits, take as inline_take)
from denoc_bridge.core.configuration cimport model_configuration_rate, model_difference
from denoc_bridge.core.dense cimport cholesky_factor, cholesky_solve
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.vectors cimport cross3, psi_dot

cnp.import_array()

# The passes' helpers are ``cdef inline``; numba inlined its helpers always (inline="always"),
# gcc's heuristics leave the larger ones (apply_At, rot3t, shift_along_x) as calls, and each
# call then forces the 21-number mass and the 6-vectors out of registers into memory: the
# articulated pass took 1.6x as long (chain of 100 links, measured).  So every inline function
# of this module (Cython's own included) is inlined always under gcc and clang (compiler.pxd).

include "spatial.pxi"
include "geometry.pxi"
include "inverse_dynamics.pxi"
include "forward_dynamics.pxi"
include "factorised_solve.pxi"
include "stage_sweep.pxi"
include "lanes.pxi"
include "entry.pxi"
include "gim.pxi"
include "gim_ltdl.pxi"
include "gim_factors.pxi"
include "gim_entry.pxi"
include "mimic.pxi"
include "kinematics.pxi"
include "energy.pxi"
include "kinematics_entry.pxi"
include "compiled_model.pxi"
