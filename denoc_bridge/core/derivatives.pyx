# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The analytical first-order derivatives of the dynamics of a tree, compiled: those of the
recursive inverse dynamics (Carpentier & Mansard 2018, Pinocchio's ``computeRNEADerivatives``),
of one state or of a batch.

One extension module built from ``derivative_algebra.pxi`` (link inertias and the matrices C
in the base frame), ``derivative_passes.pxi`` (the forward and backward passes and the
acceleration pass, with their derivation) and ``derivative_entry.pxi`` (the entries called from
Python, which check every array).  The links' placements and the base-frame columns of the P_k
come from ``tree``'s lean geometry pass (tree.pxd ``world_frames``, in the model's work array),
the state checks from tree's ``valid_state``.

Entries: ``inverse_dynamics_derivatives_state(kt, work, q, v, a, fext, dtau_dq, dtau_dv, M)``,
``inverse_dynamics_derivatives_new(kt, work, q, v, a)`` (the three results allocated here, or
the status) and ``inverse_dynamics_derivatives_chunk(kt, Q, V, A, FEXT, DQ, DV, MM, status,
start, stop)`` (part of a batch, without the GIL).  Statuses: derivative_entry.pxi.
"""

cimport numpy as cnp
from libc.stdlib cimport free, malloc
from libc.string cimport memset

from denoc_bridge.core.arrays cimport (Arr, model_nq, model_nv, modules_fit, parents_fit, table_fits,
                                       take)
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.tree cimport finite_entries, valid_state, world_frames

cnp.import_array()

# Every inline helper of this module is inlined always under gcc and clang (as in tree.pyx): a
# helper left as a call forces its 6-vectors out of registers into memory.
cdef extern from *:
    # a row of doubles that no other pointer of the loop writes: the sweeps over the columns
    # vectorise only when gcc knows it
    ctypedef double* row_t "double* __restrict__"
    ctypedef const double* crow_t "const double* __restrict__"

cdef extern from *:
    """
    #if defined(__GNUC__)
    #undef CYTHON_INLINE
    #define CYTHON_INLINE __inline__ __attribute__((always_inline))
    #endif
    """

include "derivative_algebra.pxi"
include "derivative_passes.pxi"
include "derivative_entry.pxi"
