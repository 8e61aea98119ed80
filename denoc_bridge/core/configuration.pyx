# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
# cython: initializedcheck=False
"""The configuration maps of every joint type, compiled (numba's kernels/configuration.py before):
the lower module of the compiled core (``tree`` cimports its maps for the joint springs).

One extension module built from ``lie_groups.pxi`` (quaternions, exp/log of SO(3), SE(3) and
SE(2), V(w) and its inverse), ``joint_configuration.pxi`` (integrate, difference, rate and
dexp^-1 per joint and per model; declared in ``configuration.pxd`` for the compiled runs to
cimport) and ``configuration_entry.pxi`` (the entries called from Python).  The boundary checks
are arrays.pxd's, the cross product vectors.pxd's, the table's layout tables.pxd's (the
model's ``_kt``, built by core/layout.py).

Entries: ``integrate(kt, q, v, out)``, ``difference(kt, q0, q1, out)``,
``configuration_rate(kt, q, v, out)``, ``dexpinv(kt, xi, v, out)``,
``integrate_batch(kt, Q, V, OUT)``, ``difference_batch(kt, Q0, Q1, OUT)`` (GIL released).  Each
returns 0 = done or -2 = a length does not fit the model (nothing written), and raises
TypeError for an argument that is not a C-contiguous aligned float64 array of the expected
dimensions (or a read-only output).
"""

cimport numpy as cnp
from libc.math cimport atan2, cos, fabs, sin, sqrt

from denoc_bridge.core.arrays cimport Arr, model_nq, table_fits, take
from denoc_bridge.core.tables cimport *
from denoc_bridge.core.vectors cimport cross3

cnp.import_array()

include "lie_groups.pxi"
include "joint_configuration.pxi"
include "configuration_entry.pxi"
