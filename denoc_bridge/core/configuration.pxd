# cython: language_level=3
"""The configuration maps of every joint type, for the compiled runs to cimport
(``from denoc_bridge.core.configuration cimport model_integrate, ...``).

Per joint: q starts at index ``i`` of the configuration, v (or xi) at index ``j`` of the
velocity; per model: ``ki`` is the int32 view of the model table (NI ints per link, L links,
tables.pxd), and every length is the model's (checked by the caller, as the entries of
configuration.pyx do).  ``out`` may be ``q`` for the integration and the rate.
"""

cdef void integrate_joint(int jt, const double* q, Py_ssize_t i, const double* v, Py_ssize_t j,
                          double* out) noexcept nogil
cdef void difference_joint(int jt, const double* q0, const double* q1, Py_ssize_t i, double* out,
                           Py_ssize_t j) noexcept nogil
cdef void rate_joint(int jt, const double* q, Py_ssize_t i, const double* v, Py_ssize_t j,
                     double* out) noexcept nogil
cdef void dexpinv_joint(int jt, const double* xi, const double* v, Py_ssize_t j,
                        double* out) noexcept nogil

cdef void model_integrate(const int* ki, Py_ssize_t L, const double* q, const double* v,
                          double* out) noexcept nogil
cdef void model_difference(const int* ki, Py_ssize_t L, const double* q0, const double* q1,
                           double* out) noexcept nogil
cdef void model_configuration_rate(const int* ki, Py_ssize_t L, const double* q, const double* v,
                                   double* out) noexcept nogil
cdef void model_dexpinv(const int* ki, Py_ssize_t L, const double* xi, const double* v,
                        double* out) noexcept nogil
