# The Python entry of the compiled ADMM fallback of the contact solver (contact_admm.pxd):
# denoc_bridge/constraints/contact_admm.py's ``admm`` calls it; included by contact.pyx, with its
# own cimports and imports.  Every argument is checked
# here before compiled code reads it: TypeError (arrays.pxd take) for one that is not a float64
# C-contiguous ndarray of its dimensions, InputError naming the argument for a length that does
# not fit, a non-finite value or a negative mu.

from libc.stdlib cimport free, malloc

from denoc_bridge.core.arrays cimport Arr, take
from denoc_bridge.core.contact_admm cimport (ADMM_CHECK_EVERY, ADMM_ETA, ADMM_MAX_ROWS, ADMM_RATIO,
                                             ADMM_STALL, ADMM_TAU, admm_scratch_size, admm_solve)

from numpy.linalg import LinAlgError

from denoc_bridge.errors import InputError


cdef int admm_finite(const Arr* a, const char* name) except -1:
    """InputError naming the argument unless every entry of ``a`` is finite."""
    if not all_finite(a.data, a.n0 * a.n1):
        raise InputError(f"admm_state: {name.decode()} has non-finite entries")
    return 0


def admm_state(G, g, mu, lam, tol, max_iter):
    """(impulses in the cones, iterations, the tolerance they meet) of the frictional contact
    problem of m contacts: ADMM (contact_admm.pxd admm_solve) on the Delassus operator ``G``
    (3m x 3m), the free velocities ``g`` (3m) and the friction coefficients ``mu`` (m, >= 0), from
    the warm start ``lam`` (3m, not written), to ``tol`` in at most ``max_iter`` iterations;
    constraints/contact_admm.py's ``admm_reference`` compiled.  The tolerance met is inf when no
    check was reached (max_iter < 5), 0.0 for m = 0.  Runs without the GIL.

    Raises TypeError for an argument that is not a C-contiguous float64 ndarray of its
    dimensions, InputError for lengths that do not fit, non-finite values or a negative mu,
    numpy.linalg.LinAlgError where the eigendecomposition of G does not converge."""
    cdef Arr a_G, a_g, a_mu, a_lam
    cdef Py_ssize_t r, m, i
    cdef double c_tol
    cdef long c_max, iterations = 0
    cdef double met = 0.0
    cdef double* scratch
    cdef int status
    cdef cnp.npy_intp dims[1]
    take(G, 2, False, b"G", &a_G)
    take(g, 1, False, b"g", &a_g)
    take(mu, 1, False, b"mu", &a_mu)
    take(lam, 1, False, b"lam", &a_lam)
    m = a_mu.n0
    r = 3 * m
    if a_G.n0 != r or a_G.n1 != r:
        raise InputError(f"admm_state: G must be 3m x 3m = {r} x {r} for m = {m} friction coefficients, "
                         f"got {(<object>G).shape}")
    if a_g.n0 != r:
        raise InputError(f"admm_state: g must have 3m = {r} entries, got {a_g.n0}")
    if a_lam.n0 != r:
        raise InputError(f"admm_state: lam must have 3m = {r} entries, got {a_lam.n0}")
    if r > ADMM_MAX_ROWS:
        raise InputError(f"admm_state: G has {r} rows, more than the {ADMM_MAX_ROWS} LAPACK's sizes allow")
    admm_finite(&a_G, b"G")
    admm_finite(&a_g, b"g")
    admm_finite(&a_mu, b"mu")
    admm_finite(&a_lam, b"lam")
    for i in range(m):
        if not a_mu.data[i] >= 0.0:
            raise InputError(f"admm_state: mu must be >= 0, got {a_mu.data[i]} (contact {i})")
    try:
        c_tol = tol
    except TypeError:
        raise TypeError(f"admm_state: tol must be a real number, got {type(tol).__name__}") from None
    try:
        c_max = max_iter.__index__()
    except (AttributeError, TypeError, OverflowError):
        raise TypeError(f"admm_state: max_iter must be an integer (a C long), got {max_iter!r}") from None
    dims[0] = r
    out = cnp.PyArray_EMPTY(1, dims, cnp.NPY_DOUBLE, 0)
    cdef double* y = <double*>cnp.PyArray_DATA(out)
    for i in range(r):
        y[i] = a_lam.data[i]
    scratch = <double*>malloc(admm_scratch_size(r) * sizeof(double))
    if scratch == NULL:
        raise MemoryError(f"admm_state: no memory for the scratch of {r} rows")
    with nogil:
        status = admm_solve(a_G.data, r, a_g.data, a_mu.data, y, c_tol, c_max, scratch, &met, &iterations)
    free(scratch)
    if status:
        raise LinAlgError(f"admm_state: the eigendecomposition of G did not converge (dsyevd info {status})")
    return out, iterations, met


def admm_constants():
    """The constants of the compiled ADMM (contact_admm.pxd), to compare with contact_admm.py's."""
    return {"TAU": ADMM_TAU, "ETA": ADMM_ETA, "RATIO": ADMM_RATIO, "CHECK_EVERY": ADMM_CHECK_EVERY,
            "STALL": ADMM_STALL}
