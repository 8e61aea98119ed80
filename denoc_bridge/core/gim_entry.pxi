# Entries of the GIM family: the GIM, its inverse, its block factors, the geometry for the
# O(n^2) algorithms, and the finiteness test of a matrix, with the arguments and statuses of the
# numba entries they replaced (deleted; entry.pxi: TypeError for an argument of the wrong kind, then
# 0 = done, -1 = a value is invalid, -2 = a length is wrong, -3 = the inputs are finite but the
# result is not, k + 1 = the articulated inertia of link k is singular).  Every length is
# checked before a pointer is indexed; an empty ``work`` (0 rows) asks the GIM, its inverse and
# its factors to allocate their own (the geometry entries fill the caller's).

from libc.stdlib cimport calloc
from libc.string cimport memset

cdef extern from *:
    """
    #define DB_MINV_LTDL_WORK_PER_ENTRY 10
    #define DB_LTDL_MAX_WORK 1500
    """
    #: the inverse GIM comes from the GIM, its scalar LTDL and Takahashi's recurrence (ltdl_minv)
    #: when its work count (minv_work) is at most this many times nv^2 (panda 3.6, solo12 4.2,
    #: talos 6.2, a 20-DOF chain 9.3: 0.55-0.75x the time of the recursion, measured; a 24-DOF
    #: chain 11.3 and longer ones keep the recursion)
    Py_ssize_t MINV_LTDL_WORK_PER_ENTRY "DB_MINV_LTDL_WORK_PER_ENTRY"
    #: the block factors come from the sparse LTDL of the GIM (block_ltdl) when its work count
    #: (ltdl_work) is at most this (panda, solo12, short chains; talos and longer chains keep the
    #: recursion on the articulated masses)
    Py_ssize_t LTDL_MAX_WORK "DB_LTDL_MAX_WORK"


cdef long valid_configuration(const int* ki, Py_ssize_t L, const Arr* q, const Arr* work) noexcept nogil:
    """valid_state for a configuration alone: q of the model's nq entries, finite, with
    non-zero quaternions and (cos, sin) pairs; work empty or the model's."""
    if q.n0 != model_nq(ki, L):
        return -2
    if work.n0 != 0 and (work.n1 != W or work.n0 != work_rows(L, model_nv(ki, L), n_modules(ki, L))):
        return -2
    return configuration_status(ki, L, q.data)


cdef enum:
    FLAT_CHECK_NV = 40  # finite_upper reads every entry up to this nv


cdef long finite_entries(const double* out, Py_ssize_t n) noexcept nogil:
    """0 if the n doubles from ``out`` are finite, else OVERFLOW (arrays.pxd's all_finite: a
    loop that vectorises; an early exit per entry cost a talos GIM a fifth of its time, measured
    with numba)."""
    return 0 if all_finite(out, n) else OVERFLOW


cdef long finite_upper(const double* M, Py_ssize_t nv) noexcept nogil:
    """finite_entries for the upper triangle of an (nv, nv) matrix whose lower triangle is its
    mirror image or zero (the GIM, its inverse, U, D and their inverses, all written so): the
    same status at half the reads.  Up to FLAT_CHECK_NV DOFs every entry in one flat sweep
    instead, which vectorises without the rows' remainders (solo12 10 ns instead of 29, talos
    58 instead of 73; a 60-link chain 178 instead of 127, measured)."""
    cdef Py_ssize_t r
    if nv <= FLAT_CHECK_NV:
        return finite_entries(M, nv * nv)
    for r in range(nv):
        if not all_finite(M + r * nv + r, nv - r):
            return OVERFLOW
    return 0


cdef long configuration_call(object kt, object work, object q, Arr* t, Arr* w,
                             Arr* aq) except -100:  # never a status
    """The checks shared by the entries that take (kt, work, q): TypeError for a wrong kind
    of array, then the status of the lengths and values of q and work (0, -1, -2)."""
    take(kt, 2, False, b"kt", t)
    take(work, 2, True, b"work", w)
    take(q, 1, False, b"q", aq)
    if t.n1 != NT:
        return -2
    return valid_configuration(<const int*>t.data, t.n0, aq, w)


cdef Py_ssize_t articulated_factors(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                                    Py_ssize_t nq, Py_ssize_t nv, double* work) noexcept nogil:
    """Geometry and the articulated pass with its factors (Psi, Ihat, Ihat^-1), without
    wrenches: 0, k + 1 for a singular articulated inertia of link k, or OUT_OF_MEMORY."""
    cdef Py_ssize_t k, j
    cdef double* zero = <double*>calloc(nv + 1, sizeof(double))
    if zero == NULL:
        return OUT_OF_MEMORY
    joint_geometry_pass(ki, kf, L, q, nv, work, False, 0, L, poly_ok(q, nq))
    for k in range(L):  # no wrenches: the articulated pass is run for its factors only
        for j in range(C_W, C_W + 6):
            work[k * W + j] = 0.0
    k = articulated_backward_recursion(ki, kf, L, nv, zero, work, True) + 1
    free(zero)
    return k


cdef long gim_call(object kt, object work, object q, object out, bint inverse, int way) except -100:  # never a status
    """The GIM (or, with ``inverse``, its inverse) at q into ``out`` (nv, nv)."""
    cdef Arr t, w, aq, ao
    cdef long status = configuration_call(kt, work, q, &t, &w, &aq)
    take(out, 2, True, b"out", &ao)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L) if status == 0 else 0
    if status == 0 and (ao.n0 != nv or ao.n1 != nv):
        status = -2
    if status:
        return status
    cdef double* wk = work_or_new(&w, ki, L, nv)
    status = gim_of_state(ki, t.data, L, aq.data, aq.n0, nv, wk, ao.data, inverse, way)
    if w.n0 == 0:
        free(wk)
    if status == OUT_OF_MEMORY:
        raise MemoryError()
    return status


cdef long gim_of_state(const int* ki, const double* kf, Py_ssize_t L, const double* q, Py_ssize_t nq,
                       Py_ssize_t nv, double* work, double* out, bint inverse, int way) noexcept nogil:
    """The GIM (geometry, then composite masses and column blocks) or, with ``inverse``, its
    inverse (inverse_gim) at a checked q into ``out`` (nv, nv): the one pass of every entry of
    the GIM family (one state, a batch's chunk, the compiled model).  0, OVERFLOW, k + 1 for a
    singular articulated inertia of link k, LTDL_REFUSED, or OUT_OF_MEMORY."""
    cdef long status
    if inverse:
        status = inverse_gim(ki, kf, L, q, nq, nv, work, out, way)
    else:
        gim_geometry(ki, kf, L, q, nq, nv, work)
        status = crba(ki, kf, work, L, nv, out)
    return status if status else finite_upper(out, nv)


cdef enum:
    WAY_CHOSEN = 0  # the entries' choice, by the work counts
    WAY_LTDL = 1  # the LTDL of the GIM only (the tests' hooks; LTDL_REFUSED where it refuses)
    WAY_RECURSION = 2  # the recursion on the articulated masses only
    LTDL_REFUSED = -4


cdef bint ltdl_inverse_chosen(const int* ki, Py_ssize_t L, Py_ssize_t nv, Py_ssize_t* lam) noexcept nogil:
    """The DOFs' parents into lam[:nv] (their depths into lam[nv:2 nv]), and whether the inverse
    GIM comes from the GIM's LTDL: its work count at most MINV_LTDL_WORK_PER_ENTRY nv^2 (the
    choice of inverse_gim and of the forward derivatives, derivatives.pyx)."""
    dof_parents(ki, L, lam)
    return minv_work(lam, lam + nv, nv) <= MINV_LTDL_WORK_PER_ENTRY * nv * nv


cdef bint ltdl_inverse(Py_ssize_t nv, double* A, Py_ssize_t* lam, double* u) noexcept nogil:
    """A, the GIM (every ancestor pair, both triangles), into its inverse, full and symmetric, by
    the scalar LTDL and Takahashi's recurrence (ltdl_minv); lam from ltdl_inverse_chosen (3 nv:
    the runs go to lam[2 nv:]), u nv scratch.  False (A spoilt) if a pivot is not clearly
    positive or an entry is not finite: the caller then takes the recursion, which names a
    singular joint."""
    dof_runs(lam, nv, lam + 2 * nv)
    return ltdl_minv(nv, A, lam, lam + 2 * nv, u) and finite_upper(A, nv) == 0


cdef long inverse_gim(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                      Py_ssize_t nq, Py_ssize_t nv, double* work, double* out, int way) noexcept nogil:
    """I^-1 into ``out``: on small trees (ltdl_inverse_chosen) the GIM, its scalar LTDL and
    Takahashi's recurrence; otherwise, or if a pivot is not clearly positive, the articulated
    pass and the two sweeps over the rows (which name a singular joint).  lambda, the depths, the
    runs and u live in the Ihat rows of ``work`` (unused by the GIM)."""
    cdef Py_ssize_t* lam = <Py_ssize_t*>(work + ihat_row(L, nv, 0) * W)
    cdef double* u = work + ihatinv_row(L, nv, 0) * W
    cdef long status
    cdef bint chosen = ltdl_inverse_chosen(ki, L, nv, lam)
    if way == WAY_LTDL or (way == WAY_CHOSEN and chosen):
        gim_geometry(ki, kf, L, q, nq, nv, work)
        status = crba(ki, kf, work, L, nv, out)  # every ancestor pair, all the LTDL reads
        if status:
            return status
        if ltdl_inverse(nv, out, lam, u):
            return 0
        if way == WAY_LTDL:
            return LTDL_REFUSED
    status = articulated_factors(ki, kf, L, q, nq, nv, work)
    if status:
        return status
    return minv_from_factors(ki, kf, work, L, nv, out)


def matrix_chunk(kt, Q, OUT, status, bint inverse, Py_ssize_t start, Py_ssize_t stop):
    """The GIM (or, with ``inverse``, its inverse) of the states ``start:stop`` of a batch: ``Q``
    (B, nq), ``OUT`` (B, nv, nv), one status per state into ``status`` (B,) int64; the same
    passes as one state's entry, so a batch equals its states' calls bit for bit.  Runs without
    the GIL on a work array of its own (the Python layer runs chunks on several threads); -2
    (nothing computed) when the arrays' lengths do not fit one another or the model."""
    cdef Arr t, aq, ao, w, q
    take(kt, 2, False, b"kt", &t)
    take(Q, 2, False, b"Q", &aq)
    take(OUT, 3, True, b"OUT", &ao)  # (B, nv, nv) read as (B, nv * nv)
    if not (cnp.PyArray_Check(status) and cnp.PyArray_NDIM(<cnp.ndarray>status) == 1
            and cnp.PyArray_TYPE(<cnp.ndarray>status) == cnp.NPY_INT64
            and cnp.PyArray_ISCARRAY(<cnp.ndarray>status) and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>status)):
        raise TypeError("status: expected a 1-D C-contiguous writeable int64 array")
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t B = aq.n0, L = t.n0, nv = model_nv(ki, L) if t.n1 == NT else 0
    if (t.n1 != NT or ao.n0 != B or ao.n1 != nv * nv or cnp.PyArray_DIMS(<cnp.ndarray>status)[0] != B
            or not 0 <= start <= stop <= B):
        return -2
    cdef cnp.int64_t* st = <cnp.int64_t*>cnp.PyArray_DATA(<cnp.ndarray>status)
    cdef double* out
    cdef Py_ssize_t b
    cdef bint no_memory = False
    w.data, w.n0, w.n1 = NULL, 0, W  # no work array given: valid_configuration does not check one
    cdef double* wk = work_or_new(&w, ki, L, nv)
    with nogil:
        for b in range(start, stop):
            q = row_of(&aq, b, aq.n1)
            out = ao.data + b * nv * nv
            st[b] = valid_configuration(ki, L, &q, &w)
            if st[b] == 0:
                st[b] = gim_of_state(ki, t.data, L, q.data, q.n0, nv, wk, out, inverse, WAY_CHOSEN)
            no_memory = no_memory or st[b] == OUT_OF_MEMORY
    free(wk)
    if no_memory:
        raise MemoryError()
    return 0


def mass_matrix_state(kt, work, q, out):
    """The GIM at q into ``out`` (nv, nv): geometry, then composite masses and column blocks
    (status: see entry.pxi)."""
    return gim_call(kt, work, q, out, False, WAY_CHOSEN)


def inverse_mass_matrix_state(kt, work, q, out, int way=WAY_CHOSEN):
    """The inverse GIM at q into ``out`` (nv, nv), full and symmetric (status as above).  ``way``
    is the tests' hook: 1 the LTDL of the GIM and Takahashi's recurrence only (-4 where a pivot is
    not clearly positive), 2 the recursion only, 0 the choice by the work count."""
    return gim_call(kt, work, q, out, True, way)


def mass_matrix_new(kt, work, q):
    """mass_matrix_state into a new (nv, nv) array, allocated here: the array, or the status
    when it is not 0 (the public call's fast path)."""
    cdef cnp.ndarray out = new_array(2, nv_of(kt))
    cdef long status = gim_call(kt, work, q, out, False, WAY_CHOSEN)
    return out if status == 0 else status


def inverse_mass_matrix_new(kt, work, q):
    """inverse_mass_matrix_state into a new (nv, nv) array, allocated here: the array, or the
    status."""
    cdef cnp.ndarray out = new_array(2, nv_of(kt))
    cdef long status = gim_call(kt, work, q, out, True, WAY_CHOSEN)
    return out if status == 0 else status


def inverse_takes_ltdl(kt):
    """Whether inverse_mass_matrix_state tries the LTDL of the GIM first (its work count is at
    most MINV_LTDL_WORK_PER_ENTRY nv^2) on the model of table ``kt``."""
    cdef Arr t
    take(kt, 2, False, b"kt", &t)
    if t.n1 != NT:
        raise ValueError("kt: not a model table")
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t nv = model_nv(ki, t.n0)
    cdef Py_ssize_t* lam = <Py_ssize_t*>malloc((2 * nv + 1) * sizeof(Py_ssize_t))
    if lam == NULL:
        raise MemoryError()
    cdef bint chosen = ltdl_inverse_chosen(ki, t.n0, nv, lam)
    free(lam)
    return chosen


def factors_take_ltdl(kt, bint module_level):
    """Whether block_factors_state tries the LTDL of the GIM first (its work count is at most
    LTDL_MAX_WORK) on the model of table ``kt``."""
    cdef Arr t
    take(kt, 2, False, b"kt", &t)
    if t.n1 != NT:
        raise ValueError("kt: not a model table")
    return ltdl_work(<const int*>t.data, t.n0, module_level, LTDL_MAX_WORK) <= LTDL_MAX_WORK


cdef long factors_of(const int* ki, const double* kf, Py_ssize_t L, const double* q, Py_ssize_t nq,
                     Py_ssize_t nv, double* work, double* A, double* B, bint module_level,
                     bint inverse, int way) noexcept nogil:
    """The block factors (udut: A = U, B = D; ``inverse``: U^-1, D^-1): the sparse block LTDL of
    the GIM while its work count is at most LTDL_MAX_WORK, else, or if a block of D is not
    numerically positive definite, the recursion on the articulated masses (which names a
    singular joint)."""
    cdef long done = 0
    if way == WAY_LTDL or (way == WAY_CHOSEN and ltdl_work(ki, L, module_level, LTDL_MAX_WORK) <= LTDL_MAX_WORK):
        gim_geometry(ki, kf, L, q, nq, nv, work)
        done = crba(ki, kf, work, L, nv, A)
        if done == 0 and finite_upper(A, nv) == 0:
            done = block_ltdl(ki, L, nv, module_level, inverse, A, B)
        if done == OUT_OF_MEMORY:
            return done
        if not done and way == WAY_LTDL:
            return LTDL_REFUSED
    if not done:  # the recursion on the articulated masses
        done = articulated_factors(ki, kf, L, q, nq, nv, work)
        if done:
            return done
        done = block_factors(ki, kf, work, L, nv, module_level, inverse, A, B)
        if done:
            return done
    done = finite_upper(A, nv)
    return done if done else finite_upper(B, nv)


def block_factors_state(kt, work, q, A, B, bint module_level, bint inverse, int way=WAY_CHOSEN):
    """The block factors of the GIM at q (A = U, B = D; with ``inverse``: A = U^-1, B = D^-1),
    link or module level (status as above).  ``way`` is the tests' hook: 1 the LTDL of the GIM
    only (-4 where it refuses), 2 the recursion only, 0 the choice by the work count."""
    cdef Arr t, w, aq, aa, ab
    cdef long status = configuration_call(kt, work, q, &t, &w, &aq)
    take(A, 2, True, b"A", &aa)
    take(B, 2, True, b"B", &ab)
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L) if status == 0 else 0
    if status == 0 and (aa.n0 != nv or aa.n1 != nv or ab.n0 != nv or ab.n1 != nv):
        status = -2
    if status:
        return status
    cdef double* wk = work_or_new(&w, ki, L, nv)
    status = factors_of(ki, t.data, L, aq.data, aq.n0, nv, wk, aa.data, ab.data, module_level, inverse, way)
    if w.n0 == 0:
        free(wk)
    if status == OUT_OF_MEMORY:
        raise MemoryError()
    return status


def geometry_and_factors(kt, work, q, v, bint factors, energy):
    """Full geometry (E_k of every link, rows of every P_k) and the kinetic energy at velocity
    v into ``energy[0]``; with ``factors`` also the articulated factors Psi, Ihat, Ihat^-1 (for
    the GIM, its factors and its inverse).  ``work`` must be the model's (an empty one: -2).
    Status as above."""
    cdef Arr t, w, aq, av, ae
    take(kt, 2, False, b"kt", &t)
    take(work, 2, True, b"work", &w)
    take(q, 1, False, b"q", &aq)
    take(v, 1, False, b"v", &av)
    take(energy, 1, True, b"energy", &ae)
    if t.n1 != NT:
        return -2
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0, nv = model_nv(ki, L), j
    if av.n0 != nv or ae.n0 < 1 or w.n0 == 0:  # the lengths first, as valid_state
        return -2
    cdef long status = valid_configuration(ki, L, &aq, &w)
    for j in range(nv if status == 0 else 0):
        if not isfinite(av.data[j]):
            return -1
    if status:
        return status
    cdef double* zero = <double*>calloc(nv + 1, sizeof(double))
    if zero == NULL:
        raise MemoryError()
    ae.data[0] = twist_forward_recursion(ki, t.data, L, nv, aq.data, aq.n0, av.data, zero, NULL,
                                         w.data, True)
    if factors:
        j = articulated_backward_recursion(ki, t.data, L, nv, zero, w.data, True)
        if j >= 0:
            status = j + 1
    free(zero)
    return status


def geometry_state(kt, work, q):
    """The geometry pass alone at q (E_k, r_k and the rows of P_k of every link into ``work``,
    which must be the model's): forward kinematics without the recursions that need v or the
    masses.  Status as above."""
    cdef Arr t, w, aq
    cdef long status = configuration_call(kt, work, q, &t, &w, &aq)
    if status == 0 and w.n0 == 0:
        status = -2
    if status:
        return status
    cdef const int* ki = <const int*>t.data
    cdef Py_ssize_t L = t.n0
    joint_geometry_pass(ki, t.data, L, aq.data, model_nv(ki, L), w.data, True, 0, L,
                        poly_ok(aq.data, aq.n0))
    return 0


def finite_matrix(out):
    """0 if every entry of the C-contiguous float64 array ``out`` (any shape) is finite, else
    -3 (OVERFLOW); TypeError for another kind of array."""
    if not cnp.PyArray_Check(out):
        raise TypeError(f"out: expected a numpy.ndarray, got {type(out).__name__}")
    cdef cnp.ndarray x = <cnp.ndarray>out
    if (cnp.PyArray_TYPE(x) != cnp.NPY_DOUBLE or not cnp.PyArray_ISCARRAY_RO(x)
            or not cnp.PyArray_ISNOTSWAPPED(x)):
        raise TypeError(f"out: expected a C-contiguous aligned float64 array, got {out.dtype} {out.shape}")
    return finite_entries(<const double*>cnp.PyArray_DATA(x), cnp.PyArray_SIZE(x))
