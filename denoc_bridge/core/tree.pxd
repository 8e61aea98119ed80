# cython: language_level=3
"""The passes of the tree module that the other compiled modules cimport
(``from denoc_bridge.core.tree cimport energies_of_state``).

``ki``/``kf``: the model table's int32 and float64 views (tables.pxd), L links, nv DOFs; every
length is the model's (checked by the caller, as the entries of tree.pyx do); ``work`` the
model's work array (tables.pxd ``work_rows``).
"""

cdef void energies_of_state(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                            double* work, const double* q, const double* v, const double* K,
                            const double* q_rest, bint springs, double* d,
                            double* energies) noexcept nogil
