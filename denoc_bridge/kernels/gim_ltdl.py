"""The inverse GIM straight from the GIM on small trees (:func:`ltdl_minv`, called by
:func:`.entry.inverse_mass_matrix_state`, which the numba code of mimic joints and the
integrators still calls): the scalar ``U D U^T`` over the tree of DOFs (Featherstone's LTDL,
RBDA section 6.5) and Takahashi's recurrence for ``I^-1``.

The block factors from the sparse block LTDL of the GIM, which this module also held, are
compiled only now (``denoc_bridge/core/gim_ltdl.pxi``, chosen in ``core/gim_entry.pxi``;
issue 48).
"""

from numba import njit

from denoc_bridge.kernels import tables as T


@njit(cache=True, inline="always")
def dof_parents(ki, lam):
    """The parent of each DOF in the tree of DOFs (Featherstone's lambda, RBDA section 6.5): the
    previous DOF of its joint, or the last DOF of the parent link (-1 at a root)."""
    for k in range(ki.shape[0]):
        v0, z, p = ki[k, T.IDX_V], ki[k, T.NV], ki[k, T.PARENT]
        lam[v0] = ki[p, T.IDX_V] + ki[p, T.NV] - 1 if p >= 0 else -1
        for a in range(1, z):
            lam[v0 + a] = v0 + a - 1


@njit(cache=True, inline="always")
def minv_work(lam, depth, nv):
    """Multiplications of :func:`ltdl_minv`, ``sum_c d_c (c + d_c / 2)`` with d_c the ancestor DOFs
    of DOF c (into ``depth``; ``lam`` from :func:`dof_parents`)."""
    w = 0
    for c in range(nv):
        p = lam[c]
        d = depth[p] + 1 if p >= 0 else 0
        depth[c] = d
        w += d * (2 * c + d) // 2
    return w


#: up to this many DOFs Takahashi's recurrence runs entry by entry (a dot product over the
#: ancestors each, :func:`takahashi_dots`; 0.1 us faster on panda and a 10-DOF chain, 0.5 us
#: slower on a 14-DOF chain and on solo12 than the row updates, measured)
MINV_DOT_MAX_NV = 12


@njit(cache=True, inline="always", fastmath={"contract"})
def takahashi_dots(nv, A, lam):
    """The second half of :func:`ltdl_minv` for small nv, entry by entry: ``Z_{c,r}`` for r < c
    a dot product of ``U_{j,c}`` (column c above the diagonal) with ``Z_{j,r}`` over the
    ancestors j of c (the lower triangle: ``A[j, r]`` for j >= r, ``A[r, j]`` below)."""
    for c in range(nv):
        j0 = lam[c]
        for r in range(c):
            x = 0.0
            j = j0
            while j >= r:
                x -= A[j, c] * A[j, r]
                j = lam[j]
            while j >= 0:
                x -= A[j, c] * A[r, j]
                j = lam[j]
            A[c, r] = x
        x = 1.0 / A[c, c]
        j = j0
        while j >= 0:
            x -= A[c, j] * A[j, c]
            j = lam[j]
        A[c, c] = x
    for r in range(nv):  # the upper triangle
        for c in range(r + 1, nv):
            A[r, c] = A[c, r]


#: a pivot of the scalar LTDL counts as zero below this fraction of the largest diagonal entry of
#: the GIM (the recursion on the articulated masses then decides, and names a singular joint)
MINV_PIVOT_RTOL = 1e-10


@njit(cache=True, fastmath={"contract"})
def ltdl_minv(nv, A, lam, u):
    """``A`` holds the GIM (the entries of every ancestor pair, both triangles); on return
    ``A = I^-1``, full and symmetric, or False (``A`` spoilt) if a pivot is not above
    MINV_PIVOT_RTOL of the largest diagonal entry.  ``lam``: the parents of the DOFs
    (:func:`dof_parents`); ``u`` (nv) is scratch.

    The scalar LTDL over the tree of DOFs (Featherstone, RBDA Table 6.3; the DOFs of a joint
    form a chain), ``I = U D U^T``, with the Schur complements updated in the lower triangle and
    ``U_{r,c}`` stored above the diagonal (only the ancestor pairs fill in); then the inverse
    ``Z`` row by row from the first by Takahashi's recurrence (``U^T Z = D^-1 U^-1`` is upper
    triangular):

        Z_{c,r} = -sum_{j anc c} U_{j,c} Z_{j,r}  (r < c),   Z_{c,c} = 1/D_c - sum_{j anc c} U_{j,c} Z_{c,j}

    each row mirrored into its column once done (it needs only the rows before it).  Work:
    ``sum_c d_c^2 / 2 + c d_c`` (:func:`minv_work`), d_c the ancestor DOFs of DOF c."""
    big = 0.0
    for c in range(nv):
        big = max(big, A[c, c])
    tol = MINV_PIVOT_RTOL * big
    for c in range(nv - 1, -1, -1):  # I = U D U^T, DOFs from the last
        d = A[c, c]
        if not d > tol:
            return False
        dinv = 1.0 / d
        i = lam[c]
        while i >= 0:  # S_{i,j} -= S_{i,c} S_{c,j} / D_c over the ancestors j <= i of c
            y = A[c, i] * dinv
            j = i
            while j >= 0:
                A[i, j] -= y * A[c, j]
                j = lam[j]
            A[i, c] = y  # U_{i,c}
            i = lam[i]
    if nv <= MINV_DOT_MAX_NV:
        takahashi_dots(nv, A, lam)
        return True
    for c in range(nv):  # Z = I^-1, rows from the first
        x = 1.0 / A[c, c]
        j = lam[c]
        while j >= 0:  # U_{j,c}, before the mirror of row c overwrites them
            u[j] = A[j, c]
            j = lam[j]
        for r in range(c):
            A[c, r] = 0.0
        j = lam[c]
        while j >= 0:  # Z_{c,r} -= U_{j,c} Z_{j,r}, row j of Z complete
            uj = u[j]
            for r in range(c):
                A[c, r] -= uj * A[j, r]
            j = lam[j]
        j = lam[c]
        while j >= 0:
            x -= u[j] * A[c, j]
            j = lam[j]
        A[c, c] = x
        for r in range(c):
            A[r, c] = A[c, r]
    return True
