# cython: language_level=3
"""What the compiled modules cimport for the C compiler (``from denoc_bridge.core.compiler
cimport prefetch, row_t, crow_t``): their inline helpers inlined always under gcc and clang (a
helper left as a call forces its 6-vectors out of registers into memory), gcc's ``__restrict__``
spelled for MSVC, and a software prefetch of a cache line (a no-op for other compilers).  The
verbatim C below lands in each module that cimports this file, after Cython's own definition of
``CYTHON_INLINE`` and before the module's functions (checked in the generated C)."""

cdef extern from *:
    """
    #if defined(_MSC_VER) && !defined(__restrict__)
    #define __restrict__ __restrict  /* row_t: MSVC spells gcc's __restrict__ this way */
    #endif
    #if defined(__GNUC__)
    #undef CYTHON_INLINE
    #define CYTHON_INLINE __inline__ __attribute__((always_inline))
    #define DB_PREFETCH(p) __builtin_prefetch((const void*)(p), 0, 3)
    #else
    #define DB_PREFETCH(p) ((void)(p))
    #endif
    """
    void prefetch "DB_PREFETCH"(const void* p) noexcept nogil
    # a row of doubles that no other pointer of the loop writes: the sweeps over the columns
    # vectorise only when gcc knows it
    ctypedef double* row_t "double* __restrict__"
    ctypedef const double* crow_t "const double* __restrict__"
