# cython: language_level=3
"""Small dense solves that both compiled modules use (``run``'s joint-limit stops, ``tree``'s
mimic joints): one copy, inlined where it is called."""

from libc.math cimport sqrt


cdef inline bint cholesky_factor(double* K, Py_ssize_t n, Py_ssize_t ld) noexcept nogil:
    """K = L L^T for a symmetric positive definite n x n K: its lower triangle (rows ld apart)
    overwritten by L; False if K is not numerically positive definite."""
    cdef Py_ssize_t i, j, k
    cdef double s
    for j in range(n):
        s = K[j * ld + j]
        for k in range(j):
            s -= K[j * ld + k] * K[j * ld + k]
        if not s > 0.0:
            return False
        K[j * ld + j] = sqrt(s)
        for i in range(j + 1, n):
            s = K[i * ld + j]
            for k in range(j):
                s -= K[i * ld + k] * K[j * ld + k]
            K[i * ld + j] = s / K[j * ld + j]
    return True


cdef inline void cholesky_substitute(const double* K, Py_ssize_t n, Py_ssize_t ld, const double* b,
                                     double* x) noexcept nogil:
    """x = K^-1 b with K's factor L (K = L L^T, its lower triangle rows ld apart, as
    cholesky_factor leaves it): the two triangular substitutions.  x may alias b."""
    cdef Py_ssize_t i, k
    cdef double s
    for i in range(n):  # L y = b
        s = b[i]
        for k in range(i):
            s -= K[i * ld + k] * x[k]
        x[i] = s / K[i * ld + i]
    for i in range(n - 1, -1, -1):  # L^T x = y
        s = x[i]
        for k in range(i + 1, n):
            s -= K[k * ld + i] * x[k]
        x[i] = s / K[i * ld + i]


cdef inline bint cholesky_solve(double* K, Py_ssize_t n, Py_ssize_t ld, const double* b,
                                double* x) noexcept nogil:
    """x = K^-1 b for a symmetric positive definite n x n K (its lower triangle, rows ld apart,
    overwritten by the factor L, K = L L^T: cholesky_factor); False if K is not numerically
    positive definite.  x may alias b."""
    if not cholesky_factor(K, n, ld):
        return False
    cholesky_substitute(K, n, ld, b, x)
    return True
