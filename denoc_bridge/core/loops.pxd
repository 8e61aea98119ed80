# cython: language_level=3
"""What the other compiled modules cimport from the loops module (``from denoc_bridge.core.loops
cimport Loop, loop_accelerations, ...``): the run of a loop system (run.pyx) and the contact run
(contact.pyx) take a tree with loops as a ``Loop`` (the table, its work array, the cut joints
and the scratch carved from the packed ``sb`` of constraints/packed.py), its accelerations and
its projection; the contact run also its independent rows at a configuration
(constraint_rows, select_rows) and the pivoted Gram-Schmidt they use (independent_rows: a
MimicModel with loops partitions its reduced coordinates with it).

``packed_of`` takes pi, pf and sb (their types checked: TypeError), ``cuts_of`` checks their
lengths and indices against the model already in the Loop (ki, kf, L, nq, nv, work) and carves
the scratch (-2, -1 or 0); ``stacked_cuts_of`` does the same with nk constant rows ``Kc``
stacked ahead of the cut joints' (a MimicModel with loops: J = [K; C(q)], the scratch ``sb``
sized for nk + m rows); the passes are loop_dynamics.pxi's.
"""

cimport numpy as cnp
from libc.math cimport fabs


cdef struct Cuts:  # the cut joints, joint couplings and their terms (rows 1 + L .. of pi, pf)
    Py_ssize_t nl  # rows
    Py_ssize_t m  # constraint rows
    Py_ssize_t n  # the rows involve the links before n only (reach)
    Py_ssize_t hi  # ... and the DOFs before hi
    const cnp.int64_t* li  # (nl, 6) (LI, loop_rows.pxi)
    const double* lf  # (nl, 30) (LF): [R1 (9), p1, R2 (9), p2, b1, b2]; a coupling value, a term coefficient


cdef struct Frames:  # the world kinematics and the Jacobians of one cut joint (scratch)
    double* R  # (L, 9)
    double* p  # (L, 3)
    double* Pw  # (nv, 6)
    double* w  # (L, 3)
    double* od  # (L, 3)
    double* wd0  # (L, 3)
    double* odd0  # (L, 3)
    double* J  # (4, 3, nv): Jw1, Jx1, Jw2, Jx2


cdef struct Dense:  # the constraint rows and the Lagrange solve (scratch; packed.py's views)
    double* phi  # (m,)
    double* C  # (m, nv)
    double* gamma  # (m,)
    double* Q  # (m, nv) Gram-Schmidt scratch
    double* Cr  # (m, nv) the independent rows
    double* Y  # (m, nv) (M^-1 Cr^T)^T
    double* K  # (m, m) Cr M^-1 Cr^T, lower triangle
    double* lam  # (m,)
    double* rhs  # (m,)
    double* zero  # (nv,)
    cnp.int64_t* rows  # (m,) the independent rows' indices into C
    double* xs  # (nv,)
    double* ys  # (nv,)
    Py_ssize_t nk  # constant rows stacked ahead of the cut joints' (a mimic model's K); 0: none
    const double* Kc  # (nk, nv): those rows (stacked_cuts_of), their phi and gamma zero


cdef struct Loop:  # one tree with loops: the table, its work array, the cuts and the scratch
    const int* ki
    const double* kf
    Py_ssize_t L, nq, nv
    double* work
    Cuts cu
    Frames fr
    Dense ds


cdef struct Packed:  # pi, pf and sb as taken (types checked), their lengths not yet
    cnp.int64_t* ii
    double* ff
    double* s
    Py_ssize_t dpi[2]
    Py_ssize_t dpf[2]
    Py_ssize_t d[2]


cdef inline Py_ssize_t rows_start(Py_ssize_t L, Py_ssize_t nv) noexcept nogil:
    """Where the constraint rows begin in the scratch (the world kinematics come first)."""
    return 24 * L + 18 * nv + 147


cdef inline Py_ssize_t scratch_numbers(Py_ssize_t L, Py_ssize_t nv, Py_ssize_t m) noexcept nogil:
    """The numbers of the scratch ``sb`` of a model of L links, nv DOFs and m constraint rows."""
    return rows_start(L, nv) + m * (4 * nv + m + 5) + 3 * nv


cdef inline double largest(const double* x, Py_ssize_t n) noexcept nogil:
    """max |x_i| (0 for n = 0), nan when an entry is nan."""
    cdef double e = 0.0, y
    cdef Py_ssize_t i
    for i in range(n):
        y = fabs(x[i])
        if not y <= e:  # a larger entry, or nan (kept: nothing compares larger)
            e = y
            if e != e:
                return e
    return e


cdef int packed_of(object pi, object pf, object sb, Packed* pk) except -1
cdef long cuts_of(const Packed* pk, Loop* lp) noexcept nogil
cdef long stacked_cuts_of(const Packed* pk, Loop* lp, Py_ssize_t nk, const double* Kc) noexcept nogil
cdef long loop_accelerations(Loop* lp, const double* q, const double* v, const double* tau,
                             const double* fext, double alpha, double beta, double rtol,
                             double* a, Py_ssize_t* rank) noexcept nogil
cdef long project_loops(Loop* lp, double* q, double* v, double rtol, double tol, long max_iter,
                        double* qn, double* err, double* err0) noexcept nogil
cdef long project_within(Loop* lp, double* q, double* v, double rtol, double tol, long max_iter,
                         double accept, double* qn, double* err, double* err0) noexcept nogil
cdef void constraint_rows(Loop* lp, const double* q, const double* v, bint with_bias) noexcept nogil
cdef Py_ssize_t select_rows(Loop* lp, double rtol) noexcept nogil
cdef Py_ssize_t independent_rows(const double* C, Py_ssize_t m, Py_ssize_t nv, Py_ssize_t hi,
                                 double rtol, double* Q, cnp.int64_t* rows) noexcept nogil
