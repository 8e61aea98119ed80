# cython: language_level=3
"""The passes of the tree module that the other compiled modules cimport
(``from denoc_bridge.core.tree cimport energies_of_state``): the energies, and the forward
dynamics passes, the factorised solve and the fused stage sweep of the fixed-step runs
(``run.pyx``).

``ki``/``kf``: the model table's int32 and float64 views (tables.pxd), L links, nv DOFs; every
length is the model's (checked by the caller, as the entries of tree.pyx do); ``work`` the
model's work array (tables.pxd ``work_rows``); ``fext`` (L, 6) in internal order or NULL for no
wrenches.
"""

cdef void energies_of_state(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                            double* work, const double* q, const double* v, const double* K,
                            const double* q_rest, bint springs, double* d,
                            double* energies) noexcept nogil
cdef double twist_forward_recursion(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                    const double* q, Py_ssize_t nq, const double* qd,
                                    const double* qdd, const double* fext, double* work,
                                    bint full) noexcept nogil
cdef Py_ssize_t articulated_backward_recursion(const int* ki, const double* kf, Py_ssize_t L,
                                               Py_ssize_t nv, const double* tau, double* work,
                                               bint factors) noexcept nogil
cdef void acceleration_forward_links(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                     double* work, double* qdd, Py_ssize_t nl) noexcept nogil
cdef long forward_dynamics_passes(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                  double* work, const double* q, Py_ssize_t nq, const double* v,
                                  const double* tau, const double* fext, double* out,
                                  bint factors) noexcept nogil
cdef void factorised_solve(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                           double* work, const double* x, double* out,
                           Py_ssize_t n) noexcept nogil
cdef void stage_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      double* a, const double* vb, const double* vacc, double h, const double* q,
                      Py_ssize_t nq, double* qd, const double* fext) noexcept nogil
cdef void first_sweep(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      const double* q, Py_ssize_t nq, const double* v, double* a,
                      const double* zeros, double* v1, const double* fext) noexcept nogil
cdef bint sweepable(const int* ki, Py_ssize_t L) noexcept nogil
