# cython: language_level=3
"""The boundary checks of every compiled entry (``tree`` and ``configuration`` cimport them):
an argument's data pointer and lengths, taken once per call after its type is checked, and the
model's sizes from its table.

``take`` (float64) and ``array_of`` (float64 or int64) raise TypeError for an argument that is
not an ndarray of the expected dimensions and dtype in native byte order, C-contiguous and
aligned (and writeable for an output), as the numba entries' explicit signatures did;
read-only inputs are accepted.  The lengths and values are then the entries' to check (a
status, never an exception): ``table_fits``, ``modules_fit`` and ``parents_fit`` say whether a
table's joints, modules and parents index within arrays of given lengths.
"""

cimport numpy as cnp

from libc.math cimport isfinite, sqrt

from libc.stdint cimport uint64_t

from denoc_bridge.core.tables cimport (IDX_Q, IDX_V, MEND, MFIRST, MPARENT, NI, NORM0, NORMEND, NORMSZ,
                                       NQ, NV, PARENT, TRANSLATION, joint_type, n_modules)

cdef extern from *:
    """
    static const int DB_JOINT_NQ[8] = {1, 2, 1, 4, 7, 2, 4, 3};
    static const int DB_JOINT_NV[8] = {1, 1, 1, 3, 6, 2, 3, 3};
    """
    const int* JOINT_NQ "DB_JOINT_NQ"  # nq and nv of each joint type (multibody.joints)
    const int* JOINT_NV "DB_JOINT_NV"

cdef extern from *:
    """
    #define DB_CONFIGURATION_MIN_NORM (1e-12)
    """
    double MIN_NORM "DB_CONFIGURATION_MIN_NORM"  # a smaller quaternion or (cos, sin) is not a rotation


cdef struct Arr:
    double* data
    Py_ssize_t n0
    Py_ssize_t n1


cdef inline int take(object o, int ndim, bint writable, const char* name, Arr* a) except -1:
    """The data pointer and lengths of ``o`` (TypeError unless an ndarray of ``ndim``
    dimensions, float64 in native byte order, C-contiguous and aligned, and writeable when
    ``writable``).  A 3-D array (n0, d1, d2) is taken as the 2-D (n0, d1 d2) it is in memory:
    pass the array itself, never a temporary such as ``o.reshape(...)`` (a copy when ``o`` is not
    contiguous, freed when this returns: the pointer would dangle)."""
    cdef cnp.ndarray x
    cdef int i
    if not cnp.PyArray_Check(o):
        raise TypeError(f"{name.decode()}: expected a numpy.ndarray, got {type(o).__name__}")
    x = <cnp.ndarray>o
    if (cnp.PyArray_NDIM(x) != ndim or cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE
            or not cnp.PyArray_ISCARRAY_RO(x) or not cnp.PyArray_ISNOTSWAPPED(x)
            or (writable and not cnp.PyArray_ISWRITEABLE(x))):
        raise TypeError(f"{name.decode()}: expected a {ndim}-D C-contiguous aligned float64 array"
                        f"{' (writeable)' if writable else ''}, got {(<object>x).dtype} {(<object>x).shape}"
                        f" ({(<object>x).flags})".replace("\n", " "))
    a.data = <double*>cnp.PyArray_DATA(x)
    a.n0 = cnp.PyArray_DIMS(x)[0]
    a.n1 = 1
    for i in range(1, ndim):
        a.n1 *= cnp.PyArray_DIMS(x)[i]
    return 0


cdef inline int array_of(object o, int ndim, int typenum, bint writable, const char* name, void** data,
                         Py_ssize_t* dims) except -1:
    """The data pointer and the ``ndim`` lengths of ``o`` (TypeError unless an ndarray of
    ``ndim`` dimensions and dtype ``typenum`` in native byte order, C-contiguous and aligned,
    and writeable when ``writable``)."""
    cdef cnp.ndarray x
    cdef int i
    if not cnp.PyArray_Check(o):
        raise TypeError(f"{name.decode()}: expected a numpy.ndarray, got {type(o).__name__}")
    x = <cnp.ndarray>o
    if (cnp.PyArray_NDIM(x) != ndim or cnp.PyArray_TYPE(x) != typenum
            or not cnp.PyArray_ISCARRAY_RO(x) or not cnp.PyArray_ISNOTSWAPPED(x)
            or (writable and not cnp.PyArray_ISWRITEABLE(x))):
        raise TypeError(f"{name.decode()}: expected a {ndim}-D C-contiguous aligned "
                        f"{'int64' if typenum == cnp.NPY_INT64 else 'float64'} array"
                        f"{' (writeable)' if writable else ''}, got {(<object>x).dtype} {(<object>x).shape}")
    data[0] = cnp.PyArray_DATA(x)
    for i in range(ndim):
        dims[i] = cnp.PyArray_DIMS(x)[i]
    return 0


cdef inline int doubles(object o, int ndim, bint writable, const char* name, double** data,
                        Py_ssize_t* dims) except -1:
    """array_of for float64."""
    return array_of(o, ndim, cnp.NPY_DOUBLE, writable, name, <void**>data, dims)


cdef inline Py_ssize_t model_nq(const int* ki, Py_ssize_t L) noexcept nogil:
    """nq of the model: the end of its last joint's coordinates (0 for an empty model)."""
    return ki[(L - 1) * NI + IDX_Q] + ki[(L - 1) * NI + NQ] if L else 0


cdef inline Py_ssize_t model_nv(const int* ki, Py_ssize_t L) noexcept nogil:
    """nv of the model: the end of its last joint's velocities (0 for an empty model)."""
    return ki[(L - 1) * NI + IDX_V] + ki[(L - 1) * NI + NV] if L else 0


cdef inline bint table_fits(const int* ki, Py_ssize_t L, Py_ssize_t nq, Py_ssize_t nv) noexcept nogil:
    """True when the joints of the table are of known types, in order, with their types' numbers
    of coordinates and velocities, ending at nq and nv: no index of a kernel leaves the arrays."""
    cdef Py_ssize_t k, iq = 0, iv = 0
    cdef const int* i
    cdef int jt
    for k in range(L):
        i = ki + k * NI
        jt = joint_type(i)
        if (jt > TRANSLATION or i[IDX_Q] != iq or i[IDX_V] != iv or i[NQ] != JOINT_NQ[jt]
                or i[NV] != JOINT_NV[jt]):
            return False
        iq += JOINT_NQ[jt]
        iv += JOINT_NV[jt]
    return iq == nq and iv == nv


cdef inline bint modules_fit(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when the modules of the table cover the links in order, each after its parent."""
    cdef Py_ssize_t S = n_modules(ki, L), m, end = 0
    if L > 0 and not 1 <= S <= L:
        return False
    for m in range(S):
        if (ki[m * NI + MFIRST] != end or ki[m * NI + MEND] <= end or ki[m * NI + MEND] > L
                or not -1 <= ki[m * NI + MPARENT] < m):
            return False
        end = ki[m * NI + MEND]
    return end == L


cdef inline bint parents_fit(const int* ki, Py_ssize_t L) noexcept nogil:
    """True when every link's parent (PARENT) is the base (-1) or a link before it."""
    cdef Py_ssize_t k
    for k in range(L):
        if not -1 <= ki[k * NI + PARENT] < k:
            return False
    return True


cdef inline bint all_finite(const double* x, Py_ssize_t n) noexcept nogil:
    """True when none of the n doubles from x is infinite or NaN.  The exponent bits e of an
    entry plus one unit of the exponent carry into the sign bit only when e is all ones: or-ing
    those sums is a loop of integer and, add and or that vectorises on any x86-64 (isfinite with
    an early return per entry took 1.5 ns per DOF of a 100,000-link chain's state checks)."""
    cdef const uint64_t* b = <const uint64_t*>x
    cdef uint64_t bad = 0, e = (<uint64_t>0x7FF) << 52, one = (<uint64_t>1) << 52
    cdef Py_ssize_t j
    for j in range(n):
        bad |= (b[j] & e) + one
    return bad >> 63 == 0


cdef inline long configuration_status(const int* ki, Py_ssize_t L, const double* q) noexcept nogil:
    """0 if the model's nq entries of q are finite and its quaternions and (cos, sin) pairs
    (NORM0, NORMSZ of each joint's row, up to the table's NORMEND: no cold line of the links
    after the last of them is read) are not zero, else -1: the value check of every entry that
    takes a configuration."""
    cdef Py_ssize_t k, j, i0
    cdef Py_ssize_t end = min(<Py_ssize_t>ki[NORMEND], L) if L else 0
    cdef double s
    if not all_finite(q, model_nq(ki, L)):
        return -1
    for k in range(end):
        i0 = ki[k * NI + NORM0]
        if i0 >= 0:
            s = 0.0
            for j in range(ki[k * NI + NORMSZ]):
                s += q[i0 + j] * q[i0 + j]
            if not sqrt(s) >= MIN_NORM:
                return -1
    return 0
