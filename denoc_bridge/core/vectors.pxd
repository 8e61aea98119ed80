# cython: language_level=3
"""Geometry-free helpers on 3-vectors that both compiled modules use (``tree``'s spatial algebra,
``configuration``'s Lie groups): one copy, inlined where it is called."""


cdef inline void cross3(double a0, double a1, double a2, double b0, double b1, double b2,
                        double* o) noexcept nogil:
    """o = a x b (the inputs are read before o is written: o may alias them)."""
    o[0] = a1 * b2 - a2 * b1
    o[1] = a2 * b0 - a0 * b2
    o[2] = a0 * b1 - a1 * b0
