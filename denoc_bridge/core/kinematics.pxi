# Kinematics of the tree (numba's kernels/kinematics.py before, deleted): the placements of the link frames
# in the base frame, the links' twists, and sums over subtrees.
#
# Every pass reads the geometry of the lean pass (geometry.pxi: (cos, sin) of coordinate-axis
# rotations, E_k and r_k of the others, the rows of P_k of joints without an aligned axis) and
# the parents of the table's PARENT column, parents before their children.


cdef inline void link_twist(const int* i, const double* f, double* work, Py_ssize_t L,
                            Py_ssize_t nv, Py_ssize_t k, const double* v, double* t) noexcept nogil:
    """t_k = A_{k,b} t_b + P_k qd_k (000 (5)) in place of the parent's twist t_b (base: at rest,
    t_b = 0); internal order, angular first, link k's frame."""
    cdef int code = rot_code(i), d = dof_index(i), j
    cdef double cs[2]
    cdef double pq[6]
    cdef double pqq[6]
    cdef double cj[3]
    cdef double x[6]
    cdef const double* e = rotation(i, work, L, k, cs)
    if d >= 0:  # P_k = sign e_d
        unit6(d, dof_sign(i) * v[i[IDX_V]], pq)
    else:
        general_joint_rates(i, f, work, L, nv, v, v, pq, pqq, cj)
    apply_A(code, cs[0], cs[1], e, R_GENERAL, offset(f, work, L, k, code), t, x)
    for j in range(6):
        t[j] = x[j] + pq[j]


cdef void link_twists(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                      const double* v, double* t) noexcept nogil:
    """The twist of every link into the rows of t (L, 6), after the geometry pass."""
    cdef Py_ssize_t k, b
    cdef int j
    for k in range(L):
        b = ki[k * NI + PARENT]
        for j in range(6):
            t[6 * k + j] = t[6 * b + j] if b >= 0 else 0.0
        link_twist(ki + k * NI, kf + k * NT, work, L, nv, k, v, t + 6 * k)


cdef inline void link_placement(const int* i, const double* f, double* work, Py_ssize_t L,
                                Py_ssize_t k, double* R, double* p) noexcept nogil:
    """R_k = R_b E_k^T and p_k = p_b + R_b r_k in place of the parent's (R_b, p_b) (R row major,
    link to base coordinates): row n of R_k is E_k (row n of R_b)."""
    cdef int code = rot_code(i), n
    cdef double cs[2]
    cs[0], cs[1] = 1.0, 0.0  # rotation() fills them for the coordinate codes only
    cdef const double* e = rotation(i, work, L, k, cs)
    cdef const double* r = offset(f, work, L, k, code)
    for n in range(3):
        p[n] += R[3 * n] * r[0] + R[3 * n + 1] * r[1] + R[3 * n + 2] * r[2]
        rot3(code, cs[0], cs[1], e, R[3 * n], R[3 * n + 1], R[3 * n + 2], R + 3 * n)


cdef inline void base_placement(double* R, double* p) noexcept nogil:
    """The base frame: R = 1, p = 0."""
    cdef int n
    for n in range(9):
        R[n] = 1.0 if n % 4 == 0 else 0.0
    p[0] = p[1] = p[2] = 0.0


cdef void world_placements(const int* ki, const double* kf, Py_ssize_t L, double* work,
                           double* R, double* p) noexcept nogil:
    """(R_k, p_k) of every link into the (L, 3, 3) R and (L, 3) p, after the geometry pass."""
    cdef Py_ssize_t k, b
    cdef int n
    for k in range(L):
        b = ki[k * NI + PARENT]
        if b < 0:
            base_placement(R + 9 * k, p + 3 * k)
        else:
            for n in range(9):
                R[9 * k + n] = R[9 * b + n]
            for n in range(3):
                p[3 * k + n] = p[3 * b + n]
        link_placement(ki + k * NI, kf + k * NT, work, L, k, R + 9 * k, p + 3 * k)


cdef void sum_subtrees(const int* ki, Py_ssize_t L, const double* x, Py_ssize_t m,
                       double* out) noexcept nogil:
    """out_k = the sum of x_j over link k's subtree (k included), rows of m numbers: children
    first, each added into its parent."""
    cdef Py_ssize_t k, b, j
    for j in range(L * m):
        out[j] = x[j]
    for k in range(L - 1, -1, -1):
        b = ki[k * NI + PARENT]
        if b >= 0:
            for j in range(m):
                out[b * m + j] += out[k * m + j]


cdef inline void world_column(const double* R, const double* P, double s, double* col) noexcept nogil:
    """col = s [R P_ang; R P_lin]: a DOF's 6-vector (angular first, linear at the link origin)
    from its link's frame (R row major, link to base) to the base frame."""
    cdef int n
    for n in range(3):
        col[n] = s * (R[3 * n] * P[0] + R[3 * n + 1] * P[1] + R[3 * n + 2] * P[2])
        col[3 + n] = s * (R[3 * n] * P[3] + R[3 * n + 1] * P[4] + R[3 * n + 2] * P[5])


cdef void world_frames(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                       const double* q, Py_ssize_t nq, double* R, double* p,
                       double* Pw) noexcept nogil:
    """The lean geometry pass at q, the placements (R_k, p_k) of every link in the base frame
    (world_placements) and the base-frame columns of every P_k into the (nv, 6) ``Pw``: the
    DOF's twist [omega; velocity of the link origin] per unit rate (000 eq. 7b's A P_k
    before the shift to a point)."""
    cdef Py_ssize_t k, v0
    cdef const int* i
    cdef int a, d
    cdef double e[6]
    joint_geometry_pass(ki, kf, L, q, nv, work, False, 0, L, poly_ok(q, nq))
    world_placements(ki, kf, L, work, R, p)
    for k in range(L):
        i = ki + k * NI
        v0 = i[IDX_V]
        d = dof_index(i)
        if d >= 0:  # P_k = sign e_d
            unit6(d, 1.0, e)
            world_column(R + 9 * k, e, dof_sign(i), Pw + 6 * v0)
        else:
            for a in range(i[NV]):
                world_column(R + 9 * k, work + (p_row(L, nv, v0) + a) * W, 1.0, Pw + 6 * (v0 + a))
