# The block factors and the inverse of the GIM straight from the GIM: a sparse block U D U^T
# over the tree of groups (Featherstone's LTDL, RBDA section 6.5, with link or module blocks;
# 001 eqs. A.3-A.4, 002 eqs. A.20-A.21), U^-1 by a sparse block back substitution, and the
# scalar LTDL over the tree of DOFs with Takahashi's recurrence for I^-1 (scalar_ltdl and
# ltdl_minv below; the numba kernels of both LTDLs are deleted, their derivations are here).
#
# A group is a link (link level) or a kinematic module (module level); its columns are
# contiguous and every group's ancestors come before it (depth-first numbering).  The factors
# I = U D U^T with U unit block upper triangular and D block diagonal over a partition are
# unique, so these are the factors of gim_factors.pxi (the recursion of 002 eqs. A.13-A.18 on
# the articulated masses), reached another way: eliminate the groups from the last to the first,
#     D_g = I_gg,   U_{a,g} = I_{a,g} D_g^-1,   I_{a,b} -= U_{a,g} I_{g,b}   (a, b ancestors of g)
# which fills in only the ancestor pairs of g (no fill outside the tree's sparsity); then U^-1
# column by column, (U^-1)_{r,c} = -(U_{r,c} + sum_{s > r} U_{r,s} (U^-1)_{s,c}) over the
# ancestor rows of c's group.  Work: sum_g z_g d_g^2 (d_g the DOFs of the ancestors of group g)
# plus a z x z Cholesky per group (ltdl_work), on top of the GIM, against the recursion's
# articulated pass and O(n d) entries at 6 multiplications: the LTDL is the faster way while
# that count is small (panda, solo12, short chains: 0.5-0.9x the recursion's time, measured),
# the recursion on talos and on long chains, where n d^2 outgrows n d; the entry picks by the
# count (LTDL_MAX_WORK, gim_entry.pxi).  A D_g that is not numerically positive definite
# returns False and the entry falls back on the recursion, which names the joint.

cdef extern from *:
    """
    #define DB_MINV_PIVOT_RTOL (1e-10)
    #define DB_MINV_DOT_MAX_NV 12
    """
    #: a pivot of the scalar LTDL counts as zero below this fraction of the largest diagonal
    #: entry of the GIM (the recursion on the articulated masses then decides, and names the joint)
    double MINV_PIVOT_RTOL "DB_MINV_PIVOT_RTOL"
    #: up to this many DOFs Takahashi's recurrence runs entry by entry (takahashi_dots: 0.1 us
    #: faster on panda and a 10-DOF chain, 0.5 us slower on a 14-DOF chain and solo12, measured)
    Py_ssize_t MINV_DOT_MAX_NV "DB_MINV_DOT_MAX_NV"


cdef inline Py_ssize_t group_columns(const int* ki, Py_ssize_t g, bint module_level,
                                     Py_ssize_t* c) noexcept nogil:
    """(first column, end column) of group g into c[0], c[1]; returns its parent group."""
    cdef Py_ssize_t first, end
    if module_level:
        first, end = ki[g * NI + MFIRST], ki[g * NI + MEND]
        c[0] = ki[first * NI + IDX_V]
        c[1] = ki[(end - 1) * NI + IDX_V] + ki[(end - 1) * NI + NV]
        return ki[g * NI + MPARENT]
    c[0] = ki[g * NI + IDX_V]
    c[1] = c[0] + ki[g * NI + NV]
    return ki[g * NI + PARENT]


cdef inline Py_ssize_t n_groups(const int* ki, Py_ssize_t L, bint module_level) noexcept nogil:
    return n_modules(ki, L) if module_level else L


cdef inline Py_ssize_t ancestor_rows(const int* ki, Py_ssize_t g, bint module_level, Py_ssize_t nv,
                                     Py_ssize_t* anc) noexcept nogil:
    """The columns of the ancestor groups of g, ascending, into anc[pos:nv]; returns pos."""
    cdef Py_ssize_t pos = nv, r
    cdef Py_ssize_t c[2]
    cdef Py_ssize_t p = group_columns(ki, g, module_level, c)
    while p >= 0:
        p = group_columns(ki, p, module_level, c)
        pos -= c[1] - c[0]
        for r in range(c[0], c[1]):
            anc[pos + r - c[0]] = r
    return pos


cdef Py_ssize_t ltdl_work(const int* ki, Py_ssize_t L, bint module_level, Py_ssize_t limit) noexcept nogil:
    """Multiplications of the block LTDL and of U^-1: sum_g z_g d_g^2 plus z_g^3 per group
    (d_g the DOFs of the ancestors of group g), or the first partial sum above ``limit`` (the
    walks to the root cost a 100-link chain's factors a fifth of their time, measured)."""
    cdef Py_ssize_t g, z, d, p, w = 0
    cdef Py_ssize_t c[2]
    cdef Py_ssize_t a[2]
    for g in range(n_groups(ki, L, module_level)):
        p = group_columns(ki, g, module_level, c)
        z = c[1] - c[0]
        d = 0
        while p >= 0:
            p = group_columns(ki, p, module_level, a)
            d += a[1] - a[0]
        w += z * d * d + z * z * z
        if w > limit:
            return w
    return w


cdef inline bint cholesky(const double* A, Py_ssize_t nv, Py_ssize_t c0, Py_ssize_t z,
                          double* Lw) noexcept nogil:
    """A[c0:c0+z, c0:c0+z] = Lw Lw^T (z x z, upper triangle of A read); False if a pivot is not
    above 1e-14 of the largest diagonal entry (not numerically positive definite)."""
    cdef double big = 0.0, s, t, ljj
    cdef Py_ssize_t a, i, j, m
    for a in range(z):
        big = fmax2(big, A[(c0 + a) * nv + c0 + a])
    for j in range(z):
        s = A[(c0 + j) * nv + c0 + j]
        for m in range(j):
            s -= Lw[j * z + m] * Lw[j * z + m]
        if not s > 1e-14 * big:
            return False
        ljj = sqrt(s)
        Lw[j * z + j] = ljj
        for i in range(j + 1, z):
            t = A[(c0 + j) * nv + c0 + i]
            for m in range(j):
                t -= Lw[i * z + m] * Lw[j * z + m]
            Lw[i * z + j] = t / ljj
    return True


cdef inline bint cholesky_inverse(const double* A, Py_ssize_t nv, Py_ssize_t c0, Py_ssize_t z,
                                  double* Lw, double* Li, double* out, bint wanted) noexcept nogil:
    """out (z x z) = A[c0:c0+z, c0:c0+z]^-1 for the symmetric block by Cholesky L L^T (L in Lw,
    L^-1 in Li), exactly symmetric; False if the block is not positive definite.  Without
    ``wanted``, the test alone (out untouched)."""
    cdef double d, t
    cdef Py_ssize_t a, b, i, j, m
    if z == 1:
        d = A[c0 * nv + c0]
        if not d > 0.0:
            return False
        out[0] = 1.0 / d
        return True
    if not cholesky(A, nv, c0, z, Lw):
        return False
    if not wanted:
        return True
    for j in range(z):  # L^-1, lower triangular, column by column
        Li[j * z + j] = 1.0 / Lw[j * z + j]
        for i in range(j + 1, z):
            t = 0.0
            for m in range(j, i):
                t -= Lw[i * z + m] * Li[m * z + j]
            Li[i * z + j] = t / Lw[i * z + i]
    for a in range(z):  # A^-1 = L^-T L^-1
        for b in range(a, z):
            t = 0.0
            for i in range(b, z):
                t += Li[i * z + a] * Li[i * z + b]
            out[a * z + b] = t
            out[b * z + a] = t
    return True


cdef inline void eliminate_dof(double* A, double* B, Py_ssize_t nv, Py_ssize_t c0, double d,
                               const Py_ssize_t* anc, Py_ssize_t pos, double* Tg,
                               bint inverse) noexcept nogil:
    """One step of block_ltdl for a one-DOF group (written out: through cholesky_inverse it cost
    panda 0.6 us, measured): D_g = d, I_{r,s} -= U_{r,g} I_{g,s} (s >= r), U_{r,g} = I_{r,g} / D_g."""
    cdef double dinv = 1.0 / d, y
    cdef Py_ssize_t i, j, r
    B[c0 * nv + c0] = dinv if inverse else d
    for i in range(pos, nv):  # I_{r,g}, gathered: its rows are current above the diagonal
        Tg[i] = A[anc[i] * nv + c0]
    for i in range(pos, nv):
        r = anc[i]
        y = Tg[i] * dinv
        for j in range(i, nv):
            A[r * nv + anc[j]] -= y * Tg[j]
        A[r * nv + c0] = y


cdef inline void eliminate_block(double* A, double* B, Py_ssize_t nv, Py_ssize_t c0, Py_ssize_t z,
                                 const Py_ssize_t* anc, Py_ssize_t pos, const double* Dinv,
                                 double* Tg, double* Y, bint inverse) noexcept nogil:
    """One step of block_ltdl for a group of z > 1 DOFs, Dinv = D_g^-1 (z x z) given: D_g (or
    D_g^-1) into B, U_{r,g} = I_{r,g} D_g^-1, I_{r,s} -= U_{r,g} I_{g,s} (s >= r).  Tg and Y
    hold z numbers per row."""
    cdef Py_ssize_t a, b, i, j, r
    cdef double x, t
    for a in range(z):  # D_g (or D_g^-1) from the upper triangle, exactly symmetric
        for b in range(a, z):
            x = Dinv[a * z + b] if inverse else A[(c0 + a) * nv + c0 + b]
            B[(c0 + a) * nv + c0 + b] = x
            B[(c0 + b) * nv + c0 + a] = x
    for i in range(pos, nv):
        for a in range(z):
            Tg[i * z + a] = A[anc[i] * nv + c0 + a]
    for i in range(pos, nv):  # U_{r,g} = I_{r,g} D_g^-1
        for b in range(z):
            t = 0.0
            for a in range(z):
                t += Tg[i * z + a] * Dinv[a * z + b]
            Y[i * z + b] = t
    for i in range(pos, nv):  # I_{r,s} -= U_{r,g} I_{g,s}, s >= r
        r = anc[i]
        for j in range(i, nv):
            x = 0.0
            for a in range(z):
                x += Y[i * z + a] * Tg[j * z + a]
            A[r * nv + anc[j]] -= x
        for b in range(z):
            A[r * nv + c0 + b] = Y[i * z + b]


cdef void unit_blocks(const int* ki, Py_ssize_t L, Py_ssize_t nv, bint module_level,
                      double* A) noexcept nogil:
    """Unit diagonal blocks and a zero lower triangle in A (the U of block_ltdl)."""
    cdef Py_ssize_t g, r, c
    cdef Py_ssize_t cc[2]
    for g in range(n_groups(ki, L, module_level)):
        group_columns(ki, g, module_level, cc)
        for r in range(cc[0], cc[1]):
            for c in range(cc[1]):
                A[r * nv + c] = 0.0
            A[r * nv + r] = 1.0


cdef void unit_inverse(const int* ki, Py_ssize_t L, Py_ssize_t nv, bint module_level, double* A,
                       Py_ssize_t* anc) noexcept nogil:
    """U^-1 in place, columns from the last: (U^-1)_{r,c} = -(U_{r,c} + sum_{s > r} U_{r,s}
    (U^-1)_{s,c}) over the ancestor rows r, s of c's group."""
    cdef Py_ssize_t g, c, i, j, r, pos
    cdef Py_ssize_t cc[2]
    cdef double x
    for g in range(n_groups(ki, L, module_level) - 1, -1, -1):
        group_columns(ki, g, module_level, cc)
        pos = ancestor_rows(ki, g, module_level, nv, anc)
        for c in range(cc[1] - 1, cc[0] - 1, -1):
            for i in range(nv - 1, pos - 1, -1):
                r = anc[i]
                x = A[r * nv + c]
                for j in range(i + 1, nv):
                    x += A[r * nv + anc[j]] * A[anc[j] * nv + c]
                A[r * nv + c] = -x


cdef int block_ltdl(const int* ki, Py_ssize_t L, Py_ssize_t nv, bint module_level, bint inverse,
                    double* A, double* B) noexcept nogil:
    """A holds the full GIM; on return A = U and B = D (``inverse``: U^-1 and D^-1), link or
    module level: 1, or 0 (A and B spoilt) if a D_g is not numerically positive definite, or
    OUT_OF_MEMORY."""
    cdef Py_ssize_t G = n_groups(ki, L, module_level), zmax = 0, g, z, pos
    cdef Py_ssize_t cc[2]
    for g in range(G):
        group_columns(ki, g, module_level, cc)
        zmax = max(zmax, cc[1] - cc[0])
    cdef Py_ssize_t zz = zmax * zmax
    cdef double* Lw = <double*>malloc((3 * zz + 2 * nv * zmax) * sizeof(double)
                                      + nv * sizeof(Py_ssize_t) + 8)
    if Lw == NULL:
        return OUT_OF_MEMORY
    cdef double* Li = Lw + zz
    cdef double* Dinv = Li + zz
    cdef double* Y = Dinv + zz
    cdef double* Tg = Y + nv * zmax
    cdef Py_ssize_t* anc = <Py_ssize_t*>(Tg + nv * zmax)
    cdef int done = 1
    memset(B, 0, nv * nv * sizeof(double))
    for g in range(G - 1, -1, -1):
        group_columns(ki, g, module_level, cc)
        z = cc[1] - cc[0]
        pos = ancestor_rows(ki, g, module_level, nv, anc)
        if z == 1:
            if not A[cc[0] * nv + cc[0]] > 0.0:
                done = 0
                break
            eliminate_dof(A, B, nv, cc[0], A[cc[0] * nv + cc[0]], anc, pos, Tg, inverse)
        elif cholesky_inverse(A, nv, cc[0], z, Lw, Li, Dinv, inverse or pos < nv):
            eliminate_block(A, B, nv, cc[0], z, anc, pos, Dinv, Tg, Y, inverse)
        else:
            done = 0
            break
    if done:
        unit_blocks(ki, L, nv, module_level, A)
        if inverse:
            unit_inverse(ki, L, nv, module_level, A, anc)
    free(Lw)
    return done


cdef inline void dof_parents(const int* ki, Py_ssize_t L, Py_ssize_t* lam) noexcept nogil:
    """The parent of each DOF in the tree of DOFs (Featherstone's lambda, RBDA section 6.5): the
    previous DOF of its joint, or the last DOF of the parent link (-1 at a root)."""
    cdef Py_ssize_t k, v0, z, p, a
    for k in range(L):
        v0, z, p = ki[k * NI + IDX_V], ki[k * NI + NV], ki[k * NI + PARENT]
        lam[v0] = ki[p * NI + IDX_V] + ki[p * NI + NV] - 1 if p >= 0 else -1
        for a in range(1, z):
            lam[v0 + a] = v0 + a - 1


cdef inline Py_ssize_t minv_work(const Py_ssize_t* lam, Py_ssize_t* depth, Py_ssize_t nv) noexcept nogil:
    """Multiplications of ltdl_minv, sum_c d_c (c + d_c / 2) with d_c the ancestor DOFs of DOF c
    (into ``depth``)."""
    cdef Py_ssize_t c, p, d, w = 0
    for c in range(nv):
        p = lam[c]
        d = depth[p] + 1 if p >= 0 else 0
        depth[c] = d
        w += d * (2 * c + d) // 2
    return w


cdef void takahashi_dots(Py_ssize_t nv, double* A, const Py_ssize_t* lam) noexcept nogil:
    """The second half of ltdl_minv for small nv, entry by entry: Z_{c,r} for r < c a dot
    product of U_{j,c} (column c above the diagonal) with Z_{j,r} over the ancestors j of c
    (the lower triangle: A[j, r] for j >= r, A[r, j] below); then the upper triangle."""
    cdef Py_ssize_t c, r, j
    cdef double x
    for c in range(nv):
        for r in range(c):
            x = 0.0
            j = lam[c]
            while j >= r:
                x -= A[j * nv + c] * A[j * nv + r]
                j = lam[j]
            while j >= 0:
                x -= A[j * nv + c] * A[r * nv + j]
                j = lam[j]
            A[c * nv + r] = x
        x = 1.0 / A[c * nv + c]
        j = lam[c]
        while j >= 0:
            x -= A[c * nv + j] * A[j * nv + c]
            j = lam[j]
        A[c * nv + c] = x
    for r in range(nv):
        for c in range(r + 1, nv):
            A[r * nv + c] = A[c * nv + r]


cdef inline void minus_scaled_row(Py_ssize_t n, double a, const double* x, double* y) noexcept nogil:
    """y[:n] -= a x[:n] for two distinct rows (a sweep that vectorises)."""
    cdef crow_t xr = x
    cdef row_t yr = y
    cdef Py_ssize_t r
    for r in range(n):
        yr[r] -= a * xr[r]


cdef inline void dof_runs(const Py_ssize_t* lam, Py_ssize_t nv, Py_ssize_t* run) noexcept nogil:
    """run[j]: the first DOF of the contiguous stretch of ancestors j, j - 1, .. run[j] (each the
    parent of the next), so that a walk towards the root sweeps stretches of a row."""
    cdef Py_ssize_t j
    for j in range(nv):
        run[j] = run[j - 1] if j > 0 and lam[j] == j - 1 else j


cdef bint scalar_ltdl(Py_ssize_t nv, double* A, const Py_ssize_t* lam, const Py_ssize_t* run) noexcept nogil:
    """I = U D U^T over the tree of DOFs (Featherstone, RBDA Table 6.3), DOFs from the last: the
    Schur complements S_{i,j} -= S_{i,c} S_{c,j} / D_c over the ancestors j <= i of c in the lower
    triangle (by stretches of contiguous ancestors, ``run``), U_{i,c} above the diagonal, D_c on
    it; False if a pivot is not above MINV_PIVOT_RTOL of the largest diagonal entry."""
    cdef double big = 0.0, tol, d, dinv, y
    cdef Py_ssize_t c, i, j, s
    for c in range(nv):
        big = fmax2(big, A[c * nv + c])
    tol = MINV_PIVOT_RTOL * big
    for c in range(nv - 1, -1, -1):
        d = A[c * nv + c]
        if not d > tol:
            return False
        dinv = 1.0 / d
        i = lam[c]
        while i >= 0:
            y = A[c * nv + i] * dinv
            j = i
            while j >= 0:
                s = run[j]
                minus_scaled_row(j + 1 - s, y, A + c * nv + s, A + i * nv + s)
                j = lam[s]
            A[i * nv + c] = y  # U_{i,c}
            i = lam[i]
    return True


cdef inline void minus_scaled_rows(Py_ssize_t n, double a, const double* x, double b,
                                   const double* z, double* y) noexcept nogil:
    """y[:n] = (y[:n] - a x[:n]) - b z[:n] (the rounding of two minus_scaled_row) in one sweep
    over y."""
    cdef crow_t xr = x
    cdef crow_t zr = z
    cdef row_t yr = y
    cdef Py_ssize_t r
    for r in range(n):
        yr[r] = (yr[r] - a * xr[r]) - b * zr[r]


cdef bint ltdl_minv(Py_ssize_t nv, double* A, const Py_ssize_t* lam, const Py_ssize_t* run,
                    double* u) noexcept nogil:
    """A holds the GIM (every ancestor pair, both triangles); on return A = I^-1, full and
    symmetric, or False (A spoilt) if a pivot of the scalar LTDL is too small.  Z = I^-1 row by
    row from the first by Takahashi's recurrence (U^T Z = D^-1 U^-1 is upper triangular),
        Z_{c,r} = -sum_{j anc c} U_{j,c} Z_{j,r} (r < c),  Z_{c,c} = 1/D_c - sum_{j anc c} U_{j,c} Z_{c,j},
    each row mirrored into its column once done; ``run`` from dof_runs, ``u`` (nv) is scratch."""
    cdef Py_ssize_t c, r, j
    cdef double x
    if not scalar_ltdl(nv, A, lam, run):
        return False
    if nv <= MINV_DOT_MAX_NV:
        takahashi_dots(nv, A, lam)
        return True
    for c in range(nv):
        x = 1.0 / A[c * nv + c]
        j = lam[c]
        while j >= 0:  # U_{j,c}, before the mirror of row c overwrites them
            u[j] = A[j * nv + c]
            j = lam[j]
        for r in range(c):
            A[c * nv + r] = 0.0
        j = lam[c]
        while j >= 0:  # Z_{c,r} -= U_{j,c} Z_{j,r}, row j of Z complete (two rows a sweep)
            if lam[j] >= 0:
                minus_scaled_rows(c, u[j], A + j * nv, u[lam[j]], A + lam[j] * nv, A + c * nv)
                j = lam[lam[j]]
            else:
                minus_scaled_row(c, u[j], A + j * nv, A + c * nv)
                j = lam[j]
        j = lam[c]
        while j >= 0:
            x -= u[j] * A[c * nv + j]
            j = lam[j]
        A[c * nv + c] = x
        for r in range(c):
            A[r * nv + c] = A[c * nv + r]
    return True
