# The GIM and its analytic inverse, one pass each, in the base frame of each tree (000 eqs.
# 16-17; 002 eqs. A.13-A.18, A.22).  (numba's copies, kernels/gim.py, went with the numba
# derivatives, their last callers; the derivation of the inverse's sweeps, from their docstring:)
# the inverse I^-1 = U^-T D^-1 U^-1 (002 eq. A.22) comes out of two sweeps over the rows, after
# the articulated pass of forward dynamics has given Psi_k, Ihat_k and Ihat_k^-1 in the link
# frames (000 eqs. 19-21; the projections Mhat - PsiHat Psi^T are kept in the link frames, where
# they lose ~100 times fewer digits than about a far origin, and its singularity test names the
# joint): the backward sweep (subtree_rows) builds the rows of D^-1 U^-1 over each subtree, the
# block recursion of 002 eqs. A.13-A.18 with eta~ carried as one wrench per column; the forward
# sweep (inverse_rows) applies U^-T (000 Table 3, step 2), mu~ carried as one twist per column,
# in one 6 x nv accumulator per kinematic module that the intra-modular recursion updates in
# place and a child module starts from its parent module's.  Work: O(n^2), 12 multiplications
# per (row, column) pair.
#
# After the geometry pass, base_frame_pass expresses every link in the frame of the root link of
# its tree (the base frame): R_k = R_b E_k^T, p_k = p_b + R_b r_k, its mass M_k about the base
# origin (m, h = m c, I_O: ten numbers) and the columns of N_k = A_k P_k.  There the twist
# propagation A_{k,b} is the identity, so composite masses are sums (000 eq. 17),
# Mtilde_b = M_b + sum_c Mtilde_c, and the GIM block of a link k and a link j of its subtree is
# N_k^T Mtilde_j N_j (000 eq. 16): one pass over the links from the last, each writing its row
# block over its subtree's columns (contiguous in the depth-first numbering) and mirroring it,
# no walk towards the base (Pinocchio's CRBA in its WORLD convention, Carpentier and Mansard
# 2018, anchored at the root of each tree instead of the world origin; O(n d), d the depth); the inverse
# I^-1 = U^-T D^-1 U^-1 (002 eq. A.22) comes from two sweeps over the rows after the articulated
# pass of forward dynamics has given Psi_k, Ihat_k and Ihat_k^-1 in the link frames.
#
# A root link is its tree's base frame (R_k = 1, p_k = 0): its mass is its table's, N_k = P_k,
# the rows of a free-flyer's (signed unit rows) are rows of F, copied, and the GIM's geometry
# pass skips its E_k and r_k (gim_geometry).  A one-DOF link's diagonal entry comes from F_k in
# registers, not from the row of F just stored (whose wide loads would wait for the stores).
#
# Arrays: X (L, XW) per-link base-frame rows; N, F, U, Psi (nv, 6) one row per DOF; out
# (nv, nv) row major; G (S, 6, nv) one accumulator per module; sub (L) subtree DOF counts.

cdef enum:  # columns of the per-link base-frame rows X: R_k (9, row major), p_k, m, h, I_O
    X_P = 9
    X_M = 12
    X_H = 13
    X_I = 16
    XW = 24

cdef enum:
    CRBA_STACK = 2048  # doubles of scratch on the stack (16 kB: talos fits)
    OUT_OF_MEMORY = -100  # a pass's scratch could not be allocated (the entry raises MemoryError)


cdef inline void subtree_dofs(const int* ki, Py_ssize_t L, Py_ssize_t* sub) noexcept nogil:
    """sub[k] = DOFs of the subtree of link k (its columns: idx_v[k] .. idx_v[k] + sub[k] - 1,
    depth-first numbering)."""
    cdef Py_ssize_t k, b
    for k in range(L):
        sub[k] = ki[k * NI + NV]
    for k in range(L - 1, 0, -1):
        b = ki[k * NI + PARENT]
        if b >= 0:
            sub[b] += sub[k]


cdef inline void base_mass(const double* f, double* x) noexcept nogil:
    """The mass of the link (table row f) about the base origin into x[X_M:], from R_k and p_k
    in x: h_P = R h and I_P = R I_O R^T about p_k, then shifted to the origin,
    I_O = I_P + m (|p|^2 1 - p p^T) + 2 (p.h) 1 - h p^T - p h^T."""
    cdef const double* R = x
    cdef double p0 = x[X_P], p1 = x[X_P + 1], p2 = x[X_P + 2]
    cdef double m = f[MASS]
    cdef double h[3]
    cdef double C[9]  # C = R I (rows)
    cdef int i
    for i in range(3):
        h[i] = R[3 * i] * f[H] + R[3 * i + 1] * f[H + 1] + R[3 * i + 2] * f[H + 2]
        C[3 * i] = R[3 * i] * f[IO] + R[3 * i + 1] * f[IO + 1] + R[3 * i + 2] * f[IO + 2]
        C[3 * i + 1] = R[3 * i] * f[IO + 1] + R[3 * i + 1] * f[IO + 3] + R[3 * i + 2] * f[IO + 4]
        C[3 * i + 2] = R[3 * i] * f[IO + 2] + R[3 * i + 1] * f[IO + 4] + R[3 * i + 2] * f[IO + 5]
    cdef double d = m * (p0 * p0 + p1 * p1 + p2 * p2) + 2.0 * (p0 * h[0] + p1 * h[1] + p2 * h[2])
    x[X_M] = m
    x[X_H] = m * p0 + h[0]
    x[X_H + 1] = m * p1 + h[1]
    x[X_H + 2] = m * p2 + h[2]
    x[X_I] = C[0] * R[0] + C[1] * R[1] + C[2] * R[2] + d - m * p0 * p0 - 2.0 * h[0] * p0
    x[X_I + 1] = C[0] * R[3] + C[1] * R[4] + C[2] * R[5] - m * p0 * p1 - h[0] * p1 - p0 * h[1]
    x[X_I + 2] = C[0] * R[6] + C[1] * R[7] + C[2] * R[8] - m * p0 * p2 - h[0] * p2 - p0 * h[2]
    x[X_I + 3] = C[3] * R[3] + C[4] * R[4] + C[5] * R[5] + d - m * p1 * p1 - 2.0 * h[1] * p1
    x[X_I + 4] = C[3] * R[6] + C[4] * R[7] + C[5] * R[8] - m * p1 * p2 - h[1] * p2 - p1 * h[2]
    x[X_I + 5] = C[6] * R[6] + C[7] * R[7] + C[8] * R[8] + d - m * p2 * p2 - 2.0 * h[2] * p2


cdef inline void base_pose(const int* i, const double* f, const double* work, Py_ssize_t L,
                           Py_ssize_t k, const double* xb, double* x) noexcept nogil:
    """R_k = R_b E_k^T (row a: E_k times row a of R_b) and p_k = p_b + R_b r_k into x, from the
    parent's row xb (not at a root: root_link)."""
    cdef int code = rot_code(i), a
    cdef const double* e = work + geometry_row(L, k) * W  # E_k, 9 doubles (general code)
    cdef const double* r = f + T0 if code <= ROT_Z else e + W + G_R  # r_k
    cdef double c = work[k * W + C_CS], s = work[k * W + C_CS + 1]
    for a in range(3):
        rot3(code, c, s, e, xb[3 * a], xb[3 * a + 1], xb[3 * a + 2], x + 3 * a)
        x[X_P + a] = xb[X_P + a] + xb[3 * a] * r[0] + xb[3 * a + 1] * r[1] + xb[3 * a + 2] * r[2]


cdef inline void base_columns(const int* i, const double* work, Py_ssize_t L, Py_ssize_t nv,
                              const double* x, double* N) noexcept nogil:
    """The base-frame columns of N_k = A_k P_k into the rows N[idx_v[k] + n] ([angular; linear]
    at the base origin): P_k = sign e_d gives sign [R e_d; p x R e_d] or sign [0; R e_(d-3)],
    a general P_k = [w; u] gives [R w; R u + p x R w]."""
    cdef const double* R = x
    cdef const double* p = x + X_P
    cdef Py_ssize_t v0 = i[IDX_V], n
    cdef int dof = dof_index(i), a
    cdef double sg
    cdef const double* P
    cdef double* y
    cdef double u[3]
    if dof >= 0:
        sg = dof_sign(i)
        a = dof if dof < 3 else dof - 3
        y = N + 6 * v0
        y[0] = sg * R[a]
        y[1] = sg * R[3 + a]
        y[2] = sg * R[6 + a]
        if dof < 3:
            cross3(p[0], p[1], p[2], y[0], y[1], y[2], y + 3)
        else:
            y[3], y[4], y[5] = y[0], y[1], y[2]
            y[0] = 0.0
            y[1] = 0.0
            y[2] = 0.0
        return
    for n in range(i[NV]):
        P = work + p_row(L, nv, v0 + n) * W
        y = N + 6 * (v0 + n)
        for a in range(3):
            y[a] = R[3 * a] * P[0] + R[3 * a + 1] * P[1] + R[3 * a + 2] * P[2]
        cross3(p[0], p[1], p[2], y[0], y[1], y[2], u)
        for a in range(3):
            y[3 + a] = R[3 * a] * P[3] + R[3 * a + 1] * P[4] + R[3 * a + 2] * P[5] + u[a]


cdef inline void root_link(const int* i, const double* f, const double* work, Py_ssize_t L,
                           Py_ssize_t nv, double* x, double* N, bint masses) noexcept nogil:
    """base_pose, base_mass and base_columns of a root link, whose frame is the base frame of its
    tree (R_k = 1, p_k = 0): its table's m, h and I_O as they are, N_k = P_k (the same numbers
    as the general formulas, without their products by 1 and 0)."""
    cdef Py_ssize_t v0 = i[IDX_V], n
    cdef int dof = dof_index(i), j
    cdef const double* P
    for j in range(X_M):
        x[j] = 0.0
    x[0] = 1.0
    x[4] = 1.0
    x[8] = 1.0
    if masses:
        x[X_M] = f[MASS]
        for j in range(3):
            x[X_H + j] = f[H + j]
        for j in range(6):
            x[X_I + j] = f[IO + j]
    if dof >= 0:
        base_columns(i, work, L, nv, x, N)
        return
    for n in range(i[NV]):
        P = work + p_row(L, nv, v0 + n) * W
        for j in range(6):
            N[6 * (v0 + n) + j] = P[j]


cdef void base_frame_pass(const int* ki, const double* kf, const double* work, Py_ssize_t L,
                          Py_ssize_t nv, double* X, double* N, bint masses) noexcept nogil:
    """After the geometry pass: R_k, p_k and, with ``masses``, the mass of link k about the base
    origin in X[k], and the base-frame columns of N_k in the rows of N."""
    cdef Py_ssize_t k, b
    for k in range(L):
        b = ki[k * NI + PARENT]
        if b < 0:
            root_link(ki + k * NI, kf + k * NT, work, L, nv, X + k * XW, N, masses)
            continue
        base_pose(ki + k * NI, kf + k * NT, work, L, k, X + b * XW, X + k * XW)
        if masses:
            base_mass(kf + k * NT, X + k * XW)
        base_columns(ki + k * NI, work, L, nv, X + k * XW, N)


cdef inline void mass_times(const double* x, const double* s, double* o) noexcept nogil:
    """M s for the mass (m, h, I_O) in x[X_M:] and the twist s = [w; v]:
    [I_O w + h x v; m v - h x w]."""
    cdef double m = x[X_M], h0 = x[X_H], h1 = x[X_H + 1], h2 = x[X_H + 2]
    cdef const double* Io = x + X_I
    o[0] = Io[0] * s[0] + Io[1] * s[1] + Io[2] * s[2] + h1 * s[5] - h2 * s[4]
    o[1] = Io[1] * s[0] + Io[3] * s[1] + Io[4] * s[2] + h2 * s[3] - h0 * s[5]
    o[2] = Io[2] * s[0] + Io[4] * s[1] + Io[5] * s[2] + h0 * s[4] - h1 * s[3]
    o[3] = m * s[3] - h1 * s[2] + h2 * s[1]
    o[4] = m * s[4] - h2 * s[0] + h0 * s[2]
    o[5] = m * s[5] - h0 * s[1] + h1 * s[0]


cdef inline double dot6(const double* a, const double* b) noexcept nogil:
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3] + a[4] * b[4] + a[5] * b[5]


cdef inline void block_row(const double* n, const double* F, Py_ssize_t nv, Py_ssize_t c0,
                           Py_ssize_t c1, double sg, double* o) noexcept nogil:
    """o[c - c0] = sg N_k^T F_c (sg = +-1, exact) for the columns c0 .. c1 - 1, F (6, nv) one row
    per component (a sweep that vectorises)."""
    cdef double n0 = n[0], n1 = n[1], n2 = n[2], n3 = n[3], n4 = n[4], n5 = n[5]
    cdef crow_t F0 = F + c0
    cdef crow_t F1 = F + nv + c0
    cdef crow_t F2 = F + 2 * nv + c0
    cdef crow_t F3 = F + 3 * nv + c0
    cdef crow_t F4 = F + 4 * nv + c0
    cdef crow_t F5 = F + 5 * nv + c0
    cdef row_t y = o
    cdef Py_ssize_t c
    for c in range(c1 - c0):
        y[c] = sg * (n0 * F0[c] + n1 * F1[c] + n2 * F2[c] + n3 * F3[c] + n4 * F4[c] + n5 * F5[c])


cdef inline void plus_outer_row(const double* u, const double* x, Py_ssize_t nv, Py_ssize_t c0,
                                Py_ssize_t c1, double* F) noexcept nogil:
    """F_c += u x[c - c0] for the columns c0 .. c1 - 1 (F (6, nv), one row per component; x
    not in F)."""
    cdef crow_t xr = x
    cdef row_t f
    cdef double a
    cdef Py_ssize_t c
    cdef int j
    for j in range(6):
        f = F + j * nv + c0
        a = u[j]
        for c in range(c1 - c0):
            f[c] += a * xr[c]


cdef inline int unit_axis(const double* n) noexcept nogil:
    """d if the 6-vector n is +-e_d, else -1."""
    cdef int d = -1, j
    for j in range(6):
        if n[j] != 0.0:
            if d >= 0 or fabs(n[j]) != 1.0:
                return -1
            d = j
    return d


cdef inline void signed_row(const double* F, double sg, Py_ssize_t c0, Py_ssize_t c1,
                            double* o) noexcept nogil:
    """o[c - c0] = sg F[c] for the columns c0 .. c1 - 1 (sg = +-1: N_k^T F_c for N_k = sg e_d,
    F the row d of the F rows)."""
    cdef crow_t f = F + c0
    cdef row_t y = o
    cdef Py_ssize_t c
    for c in range(c1 - c0):
        y[c] = sg * f[c]


cdef inline void link_rows(const double* f, const double* x, Py_ssize_t nv, Py_ssize_t v0,
                           Py_ssize_t z, Py_ssize_t c1, bint root, const double* N, double* F,
                           double* out) noexcept nogil:
    """The rows of link k (table row f, mass Mtilde_k in x, DOFs v0 .. v0 + z - 1) over its
    subtree's columns up to c1: F_k = Mtilde_k N_k into F, I_{k,j} = N_k^T F_j (000 (16)),
    mirrored, its armatures on the diagonal.  At a root (``root``) N_k = P_k, often of signed
    unit rows (a free-flyer's): rows of F, copied."""
    cdef Py_ssize_t a, r, c
    cdef double Fk[6]
    cdef int d
    for r in range(v0, v0 + z):
        mass_times(x, N + 6 * r, Fk)  # F_k = Mtilde_k N_k                          000 (16)
        for d in range(6):
            F[d * nv + r] = Fk[d]
    for a in range(z):
        r = v0 + a
        d = unit_axis(N + 6 * r) if root else -1
        if d >= 0:
            signed_row(F + d * nv, N[6 * r + d], r, c1, out + r * nv + r)
        else:
            block_row(N + 6 * r, F, nv, r, c1, 1.0, out + r * nv + r)
        for c in range(r + 1, c1):
            out[c * nv + r] = out[r * nv + c]
        out[r * nv + r] += f[ARM + a]


cdef inline void one_dof_rows(double arm, const double* x, Py_ssize_t nv, Py_ssize_t r, Py_ssize_t c1,
                              const double* N, double* F, double* out) noexcept nogil:
    """link_rows of a one-DOF link that is not a root: F_k into F, its diagonal entry from F_k
    in registers, then the sweep over its descendants' columns r + 1 .. c1 - 1 (solo12's
    composite pass 286 to 201 ns, talos 723 to 552, measured)."""
    cdef Py_ssize_t c
    cdef double f[6]
    cdef int j
    mass_times(x, N + 6 * r, f)  # F_k = Mtilde_k N_k                                000 (16)
    for j in range(6):
        F[j * nv + r] = f[j]
    out[r * nv + r] = dot6(N + 6 * r, f) + arm
    block_row(N + 6 * r, F, nv, r + 1, c1, 1.0, out + r * nv + r + 1)
    for c in range(r + 1, c1):
        out[c * nv + r] = out[r * nv + c]


cdef void composite_mass_matrix(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                double* X, const double* N, double* F, const Py_ssize_t* sub,
                                double* out) noexcept nogil:
    """The full symmetric GIM into ``out`` (000 eqs. 16-17): links L-1 .. 0, Mtilde_k complete
    (its subtree added), F_k = Mtilde_k N_k (F: 6 rows of nv), the row block of k over its
    subtree's columns, I_{k,j} = N_k^T F_j, mirrored; then Mtilde_b += Mtilde_k (X's masses
    become composite)."""
    cdef Py_ssize_t k, b, v0, z, j
    for k in range(L - 1, -1, -1):
        v0 = ki[k * NI + IDX_V]
        z = ki[k * NI + NV]
        b = ki[k * NI + PARENT]
        if z == 1 and b >= 0:
            one_dof_rows(kf[k * NT + ARM], X + k * XW, nv, v0, v0 + sub[k], N, F, out)
        else:
            link_rows(kf + k * NT, X + k * XW, nv, v0, z, v0 + sub[k], b < 0, N, F, out)
        if b >= 0:  # Mtilde_b = M_b + sum_c Mtilde_c                        000 (17)
            for j in range(X_M, X_I + 6):
                X[b * XW + j] += X[k * XW + j]


cdef inline void gim_geometry(const int* ki, const double* kf, Py_ssize_t L, const double* q,
                              Py_ssize_t nq, Py_ssize_t nv, double* work) noexcept nogil:
    """The geometry pass crba reads: link 0, a root, is the base frame of its tree, so of its
    joint only the rows of P_k (root_link; none for an aligned axis), not E_k and r_k (a
    free-flyer's quaternion: 28 of the 70 ns of solo12's pass, and its other joints then take
    the uniform path of joint_geometry_pass, measured)."""
    if L > 0 and dof_index(ki) < 0:
        joint_rows(ki, kf, L, nv, q, 0, work)
    joint_geometry_pass(ki, kf, L, q, nv, work, False, 1, L, poly_ok(q, nq))


cdef inline void zero_unwritten(const int* ki, Py_ssize_t L, Py_ssize_t nv, const Py_ssize_t* sub,
                                double* out) noexcept nogil:
    """Zeros where composite_mass_matrix may write nothing: when link 0 is the only root (its
    subtree has every DOF) its z rows are all written (and, mirrored, its z columns), so only
    the rows z .. nv - 1, in one memset (solo12: 12 of 18 rows); else every entry."""
    cdef Py_ssize_t z = ki[NV] if L > 0 and sub[0] == nv else 0
    memset(out + z * nv, 0, (nv - z) * nv * sizeof(double))


cdef int crba(const int* ki, const double* kf, const double* work, Py_ssize_t L, Py_ssize_t nv,
              double* out) noexcept nogil:
    """The GIM into ``out`` (every entry written) after gim_geometry (or a geometry pass) in
    ``work``: 0, or OUT_OF_MEMORY."""
    cdef double small[CRBA_STACK]  # a small tree's scratch: malloc and free cost a panda GIM 4 %
    cdef size_t size = (L * XW + 12 * nv) * sizeof(double) + L * sizeof(Py_ssize_t) + 8
    cdef double* X = &small[0]
    if size > sizeof(small):
        X = <double*>malloc(size)
    if X == NULL:
        return OUT_OF_MEMORY
    cdef double* N = X + L * XW
    cdef double* F = N + 6 * nv
    cdef Py_ssize_t* sub = <Py_ssize_t*>(F + 6 * nv)
    subtree_dofs(ki, L, sub)
    zero_unwritten(ki, L, nv, sub, out)
    base_frame_pass(ki, kf, work, L, nv, X, N, True)
    composite_mass_matrix(ki, kf, L, nv, X, N, F, sub, out)
    if X != &small[0]:
        free(X)
    return 0


cdef inline void wrench_to_base(const double* x, const double* a, double* y) noexcept nogil:
    """A wrench [n; f] of a link frame in the base frame: [R n + p x R f; R f]."""
    cdef const double* R = x
    cdef double u[3]
    cdef int i
    for i in range(3):
        y[3 + i] = R[3 * i] * a[3] + R[3 * i + 1] * a[4] + R[3 * i + 2] * a[5]
    cross3(x[X_P], x[X_P + 1], x[X_P + 2], y[3], y[4], y[5], u)
    for i in range(3):
        y[i] = R[3 * i] * a[0] + R[3 * i + 1] * a[1] + R[3 * i + 2] * a[2] + u[i]


cdef void factors_to_base(const int* ki, const double* work, Py_ssize_t L, Py_ssize_t nv,
                          const double* X, double* U, double* Psi) noexcept nogil:
    """The articulated factors of the link-frame pass in the base frame: Psi_k and
    PsiHat_k = Psi_k Ihat_k (into U), both wrenches."""
    cdef Py_ssize_t k, v0, z, n, m
    cdef int j
    cdef double a[6]
    cdef double t
    for k in range(L):
        v0 = ki[k * NI + IDX_V]
        z = ki[k * NI + NV]
        for n in range(z):
            wrench_to_base(X + k * XW, work + dof_row(L, v0 + n) * W + H_PSI, Psi + 6 * (v0 + n))
            for j in range(6):
                a[j] = 0.0
            for m in range(z):  # PsiHat = Psi Ihat
                t = work[ihat_row(L, nv, v0 + m) * W + n]
                for j in range(6):
                    a[j] += work[dof_row(L, v0 + m) * W + H_PSI + j] * t
            wrench_to_base(X + k * XW, a, U + 6 * (v0 + n))


cdef inline void one_dof_subtree_row(Py_ssize_t nv, Py_ssize_t v0, Py_ssize_t c1,
                                     const double* n, const double* u, double* F,
                                     double* out) noexcept nogil:
    """subtree_rows for a one-DOF joint, both steps in one sweep over the columns:
    (D^-1 U^-1)_{k,c} = -Ihat_k^-1 N_k^T eta~_c, eta_c = PsiHat_k (D^-1 U^-1)_{k,c} + eta~_c."""
    cdef double dinv = out[v0 * nv + v0], x, f0, f1, f2, f3, f4, f5
    cdef double n0 = n[0], n1 = n[1], n2 = n[2], n3 = n[3], n4 = n[4], n5 = n[5]
    cdef double u0 = u[0], u1 = u[1], u2 = u[2], u3 = u[3], u4 = u[4], u5 = u[5]
    cdef row_t F0 = F
    cdef row_t F1 = F + nv
    cdef row_t F2 = F + 2 * nv
    cdef row_t F3 = F + 3 * nv
    cdef row_t F4 = F + 4 * nv
    cdef row_t F5 = F + 5 * nv
    cdef row_t o = out + v0 * nv
    cdef Py_ssize_t c
    F0[v0], F1[v0], F2[v0] = u0 * dinv, u1 * dinv, u2 * dinv
    F3[v0], F4[v0], F5[v0] = u3 * dinv, u4 * dinv, u5 * dinv
    for c in range(v0 + 1, c1):
        f0, f1, f2, f3, f4, f5 = F0[c], F1[c], F2[c], F3[c], F4[c], F5[c]
        x = -dinv * (n0 * f0 + n1 * f1 + n2 * f2 + n3 * f3 + n4 * f4 + n5 * f5)
        o[c] = x
        F0[c], F1[c], F2[c] = f0 + u0 * x, f1 + u1 * x, f2 + u2 * x
        F3[c], F4[c], F5[c] = f3 + u3 * x, f4 + u4 * x, f5 + u5 * x


cdef void subtree_rows(const int* ki, const double* work, Py_ssize_t L, Py_ssize_t nv,
                       const double* N, const double* U, double* F, const Py_ssize_t* sub,
                       double* out) noexcept nogil:
    """Backward sweep, links L-1 .. 0 (002 eqs. A.13-A.18): the rows of D^-1 U^-1 over the
    subtree of k, Ihat_k^-1 on the diagonal block and -Ihat_k^-1 N_k^T eta~_c beside it, and
    eta_c = PsiHat_k (D^-1 U^-1)_{k,c} + eta~_c in the columns of F (6, nv), one wrench per
    column (in the base frame the wrenches of a subtree add without a transform)."""
    cdef Py_ssize_t k, v0, z, c1, a, n, c, r
    cdef int j
    cdef double t[6]
    cdef double s
    for k in range(L - 1, -1, -1):
        v0 = ki[k * NI + IDX_V]
        z = ki[k * NI + NV]
        c1 = v0 + sub[k]
        for a in range(z):
            for n in range(z):
                out[(v0 + a) * nv + v0 + n] = work[ihatinv_row(L, nv, v0 + a) * W + n]
        for j in range(6):
            for c in range(v0, v0 + z):
                F[j * nv + c] = 0.0
        if z == 1:
            one_dof_subtree_row(nv, v0, c1, N + 6 * v0, U + 6 * v0, F, out)
            continue
        for r in range(v0, v0 + z):  # N_k^T eta~_c
            for c in range(v0 + z, c1):
                out[r * nv + c] = (N[6 * r] * F[c] + N[6 * r + 1] * F[nv + c] + N[6 * r + 2] * F[2 * nv + c]
                                   + N[6 * r + 3] * F[3 * nv + c] + N[6 * r + 4] * F[4 * nv + c]
                                   + N[6 * r + 5] * F[5 * nv + c])
        for c in range(v0 + z, c1):  # -Ihat^-1 (N^T eta~_c)
            for a in range(z):
                t[a] = out[(v0 + a) * nv + c]
            for a in range(z):
                s = 0.0
                for n in range(z):
                    s -= out[(v0 + a) * nv + v0 + n] * t[n]
                out[(v0 + a) * nv + c] = s
        for r in range(v0, v0 + z):  # eta_c += PsiHat_k (D^-1 U^-1)_{k,c}
            for c in range(v0, c1):
                for j in range(6):
                    F[j * nv + c] += U[6 * r + j] * out[r * nv + c]


cdef inline void one_dof_inverse_row(Py_ssize_t nv, Py_ssize_t v0, const double* s,
                                     const double* n, double* g, double* out) noexcept nogil:
    """inverse_rows for a one-DOF joint, both steps in one sweep over the columns:
    I^-1_{k,c} -= Psi_k^T mu~_c, then mu_c = N_k I^-1_{k,c} + mu~_c."""
    cdef double s0 = s[0], s1 = s[1], s2 = s[2], s3 = s[3], s4 = s[4], s5 = s[5]
    cdef double n0 = n[0], n1 = n[1], n2 = n[2], n3 = n[3], n4 = n[4], n5 = n[5]
    cdef double x, f0, f1, f2, f3, f4, f5
    cdef row_t g0 = g
    cdef row_t g1 = g + nv
    cdef row_t g2 = g + 2 * nv
    cdef row_t g3 = g + 3 * nv
    cdef row_t g4 = g + 4 * nv
    cdef row_t g5 = g + 5 * nv
    cdef row_t o = out + v0 * nv
    cdef Py_ssize_t c
    for c in range(v0, nv):
        f0, f1, f2, f3, f4, f5 = g0[c], g1[c], g2[c], g3[c], g4[c], g5[c]
        x = o[c] - (s0 * f0 + s1 * f1 + s2 * f2 + s3 * f3 + s4 * f4 + s5 * f5)
        o[c] = x
        g0[c], g1[c], g2[c] = f0 + n0 * x, f1 + n1 * x, f2 + n2 * x
        g3[c], g4[c], g5[c] = f3 + n3 * x, f4 + n4 * x, f5 + n5 * x


cdef void inverse_rows(const int* ki, Py_ssize_t nv, const double* N, const double* Psi, double* G,
                       double* out) noexcept nogil:
    """Forward sweep, modules M_1 .. M_s and links 1^i .. eta^i (000 Table 3, step 2): the rows
    of I^-1 = U^-T (D^-1 U^-1) (002 eq. A.22), upper triangle, over the columns c >= idx_v[k],
    I^-1_{k,c} = (D^-1 U^-1)_{k,c} - Ihat_k^-1 PsiHat_k^T mu~_c, mu_c = N_k I^-1_{k,c} + mu~_c,
    mu~ of a module's first link the mu of its parent module's last link.  G + 6 nv i is the
    accumulator of module i, one row of nv per component; then the lower triangle."""
    cdef Py_ssize_t i, first, end, p, k, c0, c, r, v0, z
    cdef int j
    cdef double* g
    for i in range(ki[NMOD]):
        first, end, p = ki[i * NI + MFIRST], ki[i * NI + MEND], ki[i * NI + MPARENT]
        g = G + 6 * nv * i
        c0 = ki[first * NI + IDX_V]
        for j in range(6):
            for c in range(c0, nv):
                g[j * nv + c] = G[(6 * p + j) * nv + c] if p >= 0 else 0.0
        for k in range(first, end):
            v0 = ki[k * NI + IDX_V]
            z = ki[k * NI + NV]
            if z == 1:
                one_dof_inverse_row(nv, v0, Psi + 6 * v0, N + 6 * v0, g, out)
                continue
            if p >= 0 or k > first:
                for r in range(v0, v0 + z):  # minus Psi_k^T mu~_c        000 Table 3 (36)
                    for c in range(v0, nv):
                        out[r * nv + c] -= (Psi[6 * r] * g[c] + Psi[6 * r + 1] * g[nv + c]
                                            + Psi[6 * r + 2] * g[2 * nv + c] + Psi[6 * r + 3] * g[3 * nv + c]
                                            + Psi[6 * r + 4] * g[4 * nv + c] + Psi[6 * r + 5] * g[5 * nv + c])
            for r in range(v0, v0 + z):  # mu_c = N_k I^-1_{k,c} + mu~_c  000 Table 3 (37)
                for c in range(v0, nv):
                    for j in range(6):
                        g[j * nv + c] += N[6 * r + j] * out[r * nv + c]
    mirror_upper(nv, out)


cdef void mirror_upper(Py_ssize_t nv, double* out) noexcept nogil:
    """The lower triangle of ``out`` from its upper triangle, in tiles of 8 x 8 (column by
    column, each write lands on another cache line)."""
    cdef Py_ssize_t r0, c0, r, c
    for r0 in range(0, nv, 8):
        for c0 in range(r0, nv, 8):
            for r in range(r0, min(r0 + 8, nv)):
                for c in range(max(c0, r + 1), min(c0 + 8, nv)):
                    out[c * nv + r] = out[r * nv + c]


cdef int minv_from_factors(const int* ki, const double* kf, const double* work, Py_ssize_t L,
                           Py_ssize_t nv, double* out) noexcept nogil:
    """I^-1 into ``out`` after the geometry pass and the articulated pass with its factors
    (Psi_k, Ihat_k, Ihat_k^-1 in ``work``, link frames): the factors go to the base frame, then
    the backward and forward sweeps over the rows.  0, or OUT_OF_MEMORY."""
    if L == 0:
        return 0
    cdef Py_ssize_t S = ki[NMOD]
    cdef double* X = <double*>malloc((L * XW + 24 * nv + 6 * nv * S) * sizeof(double)
                                     + L * sizeof(Py_ssize_t) + 8)
    if X == NULL:
        return OUT_OF_MEMORY
    cdef double* N = X + L * XW
    cdef double* U = N + 6 * nv
    cdef double* Psi = U + 6 * nv
    cdef double* F = Psi + 6 * nv
    cdef double* G = F + 6 * nv
    cdef Py_ssize_t* sub = <Py_ssize_t*>(G + 6 * nv * S)
    subtree_dofs(ki, L, sub)
    base_frame_pass(ki, kf, work, L, nv, X, N, False)
    factors_to_base(ki, work, L, nv, X, U, Psi)
    memset(out, 0, nv * nv * sizeof(double))
    subtree_rows(ki, work, L, nv, N, U, F, sub, out)
    inverse_rows(ki, nv, N, Psi, G, out)
    free(X)
    return 0
