"""The block factors of the GIM straight from the GIM: a sparse block ``U D U^T`` over the tree
of groups (Featherstone's LTDL, RBDA section 6.5, with link or module blocks), and ``U^-1`` by
a sparse block back substitution.

A *group* is a link (link level, 001 eqs. A.3-A.4) or a kinematic module (module level, 002
eqs. A.20-A.21); its columns are contiguous and every group's ancestors come before it
(depth-first numbering).  The factors ``I = U D U^T`` with U unit block upper triangular and D
block diagonal over a partition are unique, so these are the factors of
:mod:`.gim_factors` (the recursion of 002 eqs. A.13-A.18 on the articulated masses), reached
another way: eliminate the groups from the last to the first,

    D_g = I_gg,   U_{a,g} = I_{a,g} D_g^-1,   I_{a,b} -= U_{a,g} I_{g,b}   (a, b ancestors of g)

which fills in only the ancestor pairs of g (no fill outside the tree's sparsity), then
``U^-1`` column by column, ``(U^-1)_{r,c} = -(U_{r,c} + sum_{s > r} U_{r,s} (U^-1)_{s,c})``
over the ancestor rows of c's group.  Work: ``sum_g z_g d_g^2`` (d_g the DOFs of the ancestors
of group g) plus a z x z Cholesky per group (:func:`ltdl_work`), on top of the GIM, against the
recursion's articulated pass and O(n d) entries at 6 multiplications: the LTDL is the faster
way while that count is small (panda, solo12, short chains: 0.5-0.9x the recursion's time,
measured), the recursion on talos and on long chains, where ``n d^2`` outgrows ``n d``.  The
entry picks by the count (:data:`.entry.LTDL_MAX_WORK`).

A D_g that is not numerically positive definite returns a status, and the entry falls back
on the recursion, whose articulated pass names the joint.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T


@njit(cache=True, inline="always")
def group_columns(ki, g, module_level):
    """(first column, end column, parent group) of group g."""
    if module_level:
        first, end = ki[g, T.MFIRST], ki[g, T.MEND]
        return ki[first, T.IDX_V], ki[end - 1, T.IDX_V] + ki[end - 1, T.NV], ki[g, T.MPARENT]
    return ki[g, T.IDX_V], ki[g, T.IDX_V] + ki[g, T.NV], ki[g, T.PARENT]


@njit(cache=True, inline="always")
def ancestor_rows(ki, g, module_level, nv, anc):
    """The columns of the ancestor groups of g, ascending, in ``anc[pos:nv]``; returns pos."""
    pos = nv
    _, _, p = group_columns(ki, g, module_level)
    while p >= 0:
        a0, a1, pp = group_columns(ki, p, module_level)
        pos -= a1 - a0
        for r in range(a0, a1):
            anc[pos + r - a0] = r
        p = pp
    return pos


@njit(cache=True)
def ltdl_work(ki, nv, module_level):
    """Multiplications of the block LTDL and of U^-1 (``sum_g z_g d_g^2`` plus z^3 per group)."""
    n_groups = ki[0, T.NMOD] if module_level else ki.shape[0]
    w = 0
    for g in range(n_groups):
        c0, c1, p = group_columns(ki, g, module_level)
        z = c1 - c0
        d = 0
        while p >= 0:
            a0, a1, p = group_columns(ki, p, module_level)
            d += a1 - a0
        w += z * d * d + z * z * z
    return w


@njit(cache=True, inline="always", fastmath={"contract"})
def cholesky_inverse(A, c0, z, Lw, Li, out, wanted):
    """``out[:z, :z] = A[c0:c0+z, c0:c0+z]^-1`` for the symmetric block (upper triangle read) by
    Cholesky ``L L^T`` (L in ``Lw``, L^-1 in ``Li``), exactly symmetric; False if the block is not
    positive definite (a pivot not above 1e-14 of the largest diagonal entry).  Without
    ``wanted``, the test alone (``out`` untouched)."""
    if z == 1:
        d = A[c0, c0]
        if not d > 0.0:
            return False
        out[0, 0] = 1.0 / d
        return True
    big = 0.0
    for a in range(z):
        big = max(big, A[c0 + a, c0 + a])
    for j in range(z):
        s = A[c0 + j, c0 + j]
        for m in range(j):
            s -= Lw[j, m] * Lw[j, m]
        if not s > 1e-14 * big:
            return False
        ljj = np.sqrt(s)
        Lw[j, j] = ljj
        for i in range(j + 1, z):
            t = A[c0 + j, c0 + i]
            for m in range(j):
                t -= Lw[i, m] * Lw[j, m]
            Lw[i, j] = t / ljj
    if not wanted:
        return True
    for j in range(z):  # L^-1, lower triangular, column by column
        Li[j, j] = 1.0 / Lw[j, j]
        for i in range(j + 1, z):
            t = 0.0
            for m in range(j, i):
                t -= Lw[i, m] * Li[m, j]
            Li[i, j] = t / Lw[i, i]
    for a in range(z):  # A^-1 = L^-T L^-1
        for b in range(a, z):
            t = 0.0
            for i in range(b, z):
                t += Li[i, a] * Li[i, b]
            out[a, b] = t
            out[b, a] = t
    return True


@njit(cache=True, fastmath={"contract"})
def block_ltdl(ki, nv, module_level, inverse, A, B):
    """``A`` holds the full GIM; on return ``A = U`` and ``B = D`` (``inverse``: ``U^-1`` and
    ``D^-1``), link or module level.  Returns False, ``A`` and ``B`` spoilt, if a D_g is not
    numerically positive definite."""
    n_groups = ki[0, T.NMOD] if module_level else ki.shape[0]
    zmax = 0
    for g in range(n_groups):
        c0, c1, _ = group_columns(ki, g, module_level)
        zmax = max(zmax, c1 - c0)
    anc = np.empty(nv, dtype=np.int64)
    zz = zmax * zmax
    buf = np.empty(3 * zz + 2 * nv * zmax)  # one allocation for the scratch
    Lw = buf[:zz].reshape(zmax, zmax)
    Li = buf[zz : 2 * zz].reshape(zmax, zmax)
    Dinv = buf[2 * zz : 3 * zz].reshape(zmax, zmax)
    Y = buf[3 * zz : 3 * zz + nv * zmax].reshape(nv, zmax)
    Tg = buf[3 * zz + nv * zmax :].reshape(nv, zmax)
    B[:, :] = 0.0
    for g in range(n_groups - 1, -1, -1):
        c0, c1, _ = group_columns(ki, g, module_level)
        z = c1 - c0
        pos = ancestor_rows(ki, g, module_level, nv, anc)
        if z == 1:  # written out: through cholesky_inverse it cost panda 0.6 us (measured)
            d = A[c0, c0]
            if not d > 0.0:
                return False
            dinv = 1.0 / d
            B[c0, c0] = dinv if inverse else d
            for i in range(pos, nv):  # I_{r,g}, gathered: its rows are current above the diagonal
                Tg[i, 0] = A[anc[i], c0]
            for i in range(pos, nv):  # I_{r,s} -= U_{r,g} I_{g,s}, s >= r; U_{r,g} = I_{r,g} / D_g
                r = anc[i]
                y = Tg[i, 0] * dinv
                for j in range(i, nv):
                    A[r, anc[j]] -= y * Tg[j, 0]
                A[r, c0] = y
            continue
        if not cholesky_inverse(A, c0, z, Lw, Li, Dinv, inverse or pos < nv):
            return False
        for a in range(z):  # D_g (or D_g^-1) from the upper triangle, exactly symmetric
            for b in range(a, z):
                x = Dinv[a, b] if inverse else A[c0 + a, c0 + b]
                B[c0 + a, c0 + b] = x
                B[c0 + b, c0 + a] = x
        for i in range(pos, nv):
            for a in range(z):
                Tg[i, a] = A[anc[i], c0 + a]
        for i in range(pos, nv):  # U_{r,g} = I_{r,g} D_g^-1
            for b in range(z):
                t = 0.0
                for a in range(z):
                    t += Tg[i, a] * Dinv[a, b]
                Y[i, b] = t
        for i in range(pos, nv):  # I_{r,s} -= U_{r,g} I_{g,s}, s >= r
            r = anc[i]
            for j in range(i, nv):
                x = 0.0
                for a in range(z):
                    x += Y[i, a] * Tg[j, a]
                A[r, anc[j]] -= x
            for b in range(z):
                A[r, c0 + b] = Y[i, b]
    for g in range(n_groups):  # unit diagonal blocks, zero lower triangle
        c0, c1, _ = group_columns(ki, g, module_level)
        for r in range(c0, c1):
            for c in range(0, r):
                A[r, c] = 0.0
            A[r, r] = 1.0
            for c in range(r + 1, c1):
                A[r, c] = 0.0
    if not inverse:
        return True
    for g in range(n_groups - 1, -1, -1):  # U^-1 in place, columns from the last
        c0, c1, _ = group_columns(ki, g, module_level)
        pos = ancestor_rows(ki, g, module_level, nv, anc)
        for c in range(c1 - 1, c0 - 1, -1):
            for i in range(nv - 1, pos - 1, -1):
                r = anc[i]
                x = A[r, c]
                for j in range(i + 1, nv):
                    s = anc[j]
                    x += A[r, s] * A[s, c]
                A[r, c] = -x
    return True


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
