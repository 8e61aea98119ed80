# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The analytical first-order derivatives of the dynamics of a tree, compiled: those of the
recursive inverse dynamics (Carpentier & Mansard 2018, Pinocchio's ``computeRNEADerivatives``)
and of the forward dynamics (Pinocchio's ``computeABADerivatives``), of one state or of a batch.

One extension module built from ``derivative_algebra.pxi`` (link inertias and the matrices C
in the base frame), ``derivative_passes.pxi`` (the forward and backward passes and the
acceleration pass, with their derivation), ``forward_derivatives.pxi`` (the implicit-function
theorem on them, M^-1 and the products) and ``derivative_entry.pxi`` (the entries called from
Python, which check every array).  From ``tree`` (tree.pxd): the links' placements and the
base-frame columns of the P_k (``world_frames``, the lean geometry pass in the model's work
array), the O(n) forward dynamics with its factors, the inverse GIM from the GIM's LTDL or from
those factors, the state checks.

Entries: ``inverse_dynamics_derivatives_state(kt, work, q, v, a, fext, dtau_dq, dtau_dv, M)``,
``forward_dynamics_derivatives_state(kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv)``,
their ``*_new(kt, work, q, v, x)`` (no wrenches, the three results allocated here, or the
status) and ``*_chunk`` (part of a batch, without the GIL).  Statuses: derivative_entry.pxi.
"""

cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from denoc_bridge.core.compiler cimport crow_t, row_t
from denoc_bridge.core.arrays cimport (Arr, model_nq, model_nv, modules_fit, parents_fit, table_fits,
                                       take)
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport (finite_entries, forward_dynamics_passes, ltdl_inverse, ltdl_inverse_chosen,
                                     minv_from_factors, valid_state, world_frames)

cnp.import_array()

# Every inline helper of this module is inlined always under gcc and clang (compiler.pxd): a
# helper left as a call forces its 6-vectors out of registers into memory.

include "derivative_algebra.pxi"
include "derivative_passes.pxi"
include "forward_derivatives.pxi"
include "derivative_entry.pxi"
