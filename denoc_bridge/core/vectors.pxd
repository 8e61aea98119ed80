# cython: language_level=3
"""Geometry-free helpers on 3- and 6-vectors that several compiled modules use (``tree``'s spatial
algebra, ``configuration``'s Lie groups, ``directional``'s sweeps): one copy, inlined where it is
called."""


cdef inline void cross3(double a0, double a1, double a2, double b0, double b1, double b2,
                        double* o) noexcept nogil:
    """o = a x b (the inputs are read before o is written: o may alias them)."""
    o[0] = a1 * b2 - a2 * b1
    o[1] = a2 * b0 - a0 * b2
    o[2] = a0 * b1 - a1 * b0


cdef inline double psi_dot(const double* a, const double* b) noexcept nogil:
    """a^T b of 6-vectors summed as a tree, not left to right: the accelerations' step
    (qdd_k = phitilde_k - Psi_k^T mu~_k, 003 eq. 36) is a chain of these from link to link, and
    six dependent multiply-adds cost the pass a third of its time (chain of 100 links, measured).
    One copy, so that the tree's pass and directional's sweeps round alike."""
    return (a[0] * b[0] + a[1] * b[1] + a[2] * b[2]) + ((a[3] * b[3] + a[4] * b[4]) + a[5] * b[5])
