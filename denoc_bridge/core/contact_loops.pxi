# A model with loop closures or joint couplings on the ground (denoc_bridge/simulation/contact.py,
# its module docstring): the cut joints' and couplings' independent rows C are bilateral
# constraints on the same layer as the contacts.  Their impulses keep C dv = 0, so they are
# eliminated from the contact problem (constraints/contact.py, ``ContactSet._constrained``, is
# the readable version): with the stacked rows S = [C; J] and S M^-1 S^T in blocks,
# X = G_CC^-1 G_CJ, the contacts' Delassus operator is the Schur complement
# G = G_JJ - G_JC X and their impulse response M^-1 J^T - M^-1 C^T X (Y_J - X^T Y_C as rows).
# The rows, the constrained accelerations (004 eqs. 13-14) and the projection onto the loops
# after a step are loops.pxd's.


cdef struct Bilateral:  # the loops of a contact run (``on`` False: a plain tree)
    bint on
    Loop lp  # the tree with its cut joints and couplings (loops.pxd)
    Py_ssize_t k  # the independent rows of C (in lp.ds.Cr) at the configuration of the last rows
    double rtol  # the rank tolerance of the independent rows
    double tol  # the loops' error left after a step (m and rad)
    long max_iter  # the projection's Gauss-Newton steps at most
    double* YC  # (m, nv) (M^-1 Cr^T)^T
    double* GC  # (m, m) Cr M^-1 Cr^T, then its Cholesky factor (rows k apart)
    double* B  # (3 m_max, m) G_JC (rows k apart)
    double* X  # (3 m_max, m) X^T = (G_CC^-1 G_CJ)^T (rows k apart)
    double* qn  # (nq,) the projection's scratch


cdef struct Newton:  # a MimicModel with loops: their closing on the reduced coordinates (scratch)
    Py_ssize_t m  # the loops' rows (0: none, nothing to close beyond the mimic relations)
    double* CG  # (m, nvs) the loops' rows on the reduced velocities, C G
    double* Cr  # (m, nvs) its independent rows
    double* Q  # (m nvs) the pivoted Gram-Schmidt's scratch
    double* T  # (nvs, m) Cr's columns, the last first
    double* A  # (m, m) Cr's dependent columns, then their LU factors
    double* b  # (m,)
    double* dv  # (nvs,) a step of the dependent coordinates
    double* dvf  # (nv,) the same on the tree, G dv
    cnp.int64_t* rows  # (m,) the independent rows of C G
    cnp.int64_t* piv  # (nvs,) the columns chosen (T's rows)
    cnp.int64_t* dep  # (m,) the dependent coordinates, increasing
    cnp.int64_t* isdep  # (nvs,) 1 for a dependent coordinate


cdef inline double row_dot(const double* a, const double* b, Py_ssize_t n) noexcept nogil:
    """a[:n] . b[:n]"""
    cdef double s = 0.0
    cdef Py_ssize_t i
    for i in range(n):
        s += a[i] * b[i]
    return s


cdef inline void bilateral_rows(Bilateral* b, const double* q) noexcept nogil:
    """The independent rows of C at q into b.lp.ds.Cr, their number into b.k."""
    constraint_rows(&b.lp, q, b.lp.ds.zero, False)
    b.k = select_rows(&b.lp, b.rtol)


cdef bint eliminate_bilateral(Bilateral* b, const double* J, Py_ssize_t r, double* Y,
                              double* G) noexcept nogil:
    """G (r x r) = J M^-1 J^T and Y[:r] = (M^-1 J^T)^T, as ``delassus`` left them (the factors
    of the last forward dynamics in the work array), turned into the constrained system's: the
    bilateral impulses of the b.k rows of b.lp.ds.Cr eliminated (the Schur complement above,
    then symmetrised as the Python step does).  False where G_CC is not positive definite or G
    not finite."""
    cdef Loop* lp = &b.lp
    cdef Py_ssize_t k = b.k, nv = lp.nv, i, j, c
    cdef const double* Cr = lp.ds.Cr
    cdef double s, t
    cdef bint finite = True
    if k == 0:
        return True
    for j in range(k):  # M^-1 Cr^T, one O(n) solve per row
        factorised_solve(lp.ki, lp.kf, lp.L, nv, lp.work, Cr + j * nv, b.YC + j * nv, lp.L)
    for i in range(k):
        for j in range(i + 1):
            b.GC[i * k + j] = row_dot(Cr + i * nv, b.YC + j * nv, nv)
    for i in range(r):  # G_JC, then X^T = G_JC G_CC^-1 row by row
        for j in range(k):
            b.B[i * k + j] = row_dot(J + i * nv, b.YC + j * nv, nv)
    if not cholesky_factor(b.GC, k, k):
        return False
    for i in range(r):
        cholesky_substitute(b.GC, k, k, b.B + i * k, b.X + i * k)
    for i in range(r):  # G_JJ - G_JC X, symmetrised
        for j in range(i + 1):
            s = G[i * r + j] - row_dot(b.B + i * k, b.X + j * k, k)
            t = G[j * r + i] - row_dot(b.B + j * k, b.X + i * k, k)
            G[i * r + j] = G[j * r + i] = 0.5 * (s + t)
            finite = finite and isfinite(s + t)
    for i in range(r):  # Y_J - X^T Y_C
        for c in range(k):
            s = b.X[i * k + c]
            for j in range(nv):
                Y[i * nv + j] -= s * b.YC[c * nv + j]
    return finite
