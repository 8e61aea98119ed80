# The rows of the active contacts and the Delassus operator (denoc_bridge/constraints/contact.py
# states the convention): a contact between a point on link k and a ground is the velocity of
# the contact point in the ground's frame (t1, t2, n), ``J_i v``; ``G = J M^-1 J^T`` (004 eq. 14's
# C M^-1 C^T for these rows) with ``M^-1 J^T`` by the O(n) factorised solve (000 Table 3).
#
# A joint near one of its position limits is one more one-sided constraint on the same layer: a
# "contact" whose normal row is the joint's rate away from the limit (+e_j at the lower limit,
# -e_j at the upper), its tangent rows zero and its friction zero, its distance the joint's
# distance to the limit.  It is listed after the points' contacts, with the pair (n + j, side)
# (side 0: lower, 1: upper) and the pair id n ng + 2 j + side (pair_id).


cdef struct Points:  # a ContactSet's points and grounds (constraints/contact.py packs them)
    Py_ssize_t n  # points
    Py_ssize_t ng  # grounds
    const cnp.int64_t* cl  # (n,) each point's link
    const double* cp  # (n, 3) the point in its link's frame
    const double* crad  # (n,) sphere radii
    const double* cmar  # (n,) margins: a contact is active at a distance <= its margin
    const double* lb  # (L, 5) each link's bounding sphere of its points: centre, radius, margin
    const double* gB  # (ng, 3, 3) the grounds' frames, columns t1, t2, n (world)
    const double* goff  # (ng,) n . x = off on the plane
    const double* gmu  # (ng,) friction coefficients
    const double* grest  # (ng,) restitution coefficients
    Py_ssize_t nl  # limited joints
    const cnp.int64_t* li  # (nl, 2) each one's q and v index
    const double* lf  # (nl, 2) its lower and upper limit
    double lmar  # a limit row is active at a distance <= lmar (rad or m)


cdef struct Rows:  # the active contacts (outputs) and the scratch of their kinematics
    Py_ssize_t m_max  # the most contacts the buffers hold
    double* J  # (3 m_max, nv) rows [t1; t2; n] . (velocity of the contact point)
    double* Y  # (3 m_max, nv) (M^-1 J^T)^T
    double* dist  # (m_max,) signed distances
    double* pos  # (m_max, 3) world contact points (on the sphere, towards the ground)
    cnp.int64_t* pair  # (m_max, 2) (point, ground)
    double* R  # (L, 9) link placements (scratch)
    double* p  # (L, 3)
    double* Pw  # (nv, 6) the DOFs' world columns
    unsigned char* clear  # (L,) the broad phase: link k has no active point


cdef inline Py_ssize_t pair_id(const Points* pts, Py_ssize_t point, Py_ssize_t other) noexcept nogil:
    """The index of a contact's pair among the n ng + 2 nl (point, ground) pairs and joint-limit
    sides: the warm start's row."""
    if point < pts.n:
        return point * pts.ng + other
    return pts.n * pts.ng + 2 * (point - pts.n) + other


cdef inline void clear_links(Py_ssize_t L, const Points* pts, const Rows* rw) noexcept nogil:
    """clear[k]: link k's bounding sphere (``lb``) is farther than its margin from every ground,
    so none of its points is active (a radius of -inf: a link without points)."""
    cdef Py_ssize_t k, g
    cdef const double* b
    cdef const double* R
    cdef const double* B
    cdef double c0, c1, c2, d
    cdef bint far
    for k in range(L):
        b, R = pts.lb + 5 * k, rw.R + 9 * k
        c0 = rw.p[3 * k] + R[0] * b[0] + R[1] * b[1] + R[2] * b[2]
        c1 = rw.p[3 * k + 1] + R[3] * b[0] + R[4] * b[1] + R[5] * b[2]
        c2 = rw.p[3 * k + 2] + R[6] * b[0] + R[7] * b[1] + R[8] * b[2]
        far = True
        for g in range(pts.ng):
            B = pts.gB + 9 * g
            d = B[2] * c0 + B[5] * c1 + B[8] * c2 - pts.goff[g] - b[3]
            if not d > b[4]:
                far = False
        rw.clear[k] = far


cdef inline void point_rows(const int* ki, Py_ssize_t nv, const Rows* rw, Py_ssize_t k,
                            const double* x, const double* B, double* J) noexcept nogil:
    """J (3 rows of nv) = B^T (velocity of the world point x on link k per unit rate): the
    columns A_{x,a} P_a of 000 eq. 7b along the path to the root, ``v_o + omega x (x - o_a)``,
    in the ground's frame B (columns t1, t2, n)."""
    cdef Py_ssize_t a = k, j, c
    cdef const double* P
    cdef double s0, s1, s2, x0, x1, x2
    for j in range(3 * nv):
        J[j] = 0.0
    while a >= 0:
        s0, s1, s2 = rw.p[3 * a] - x[0], rw.p[3 * a + 1] - x[1], rw.p[3 * a + 2] - x[2]
        for j in range(ki[a * NI + IDX_V], ki[a * NI + IDX_V] + ki[a * NI + NV]):
            P = rw.Pw + 6 * j
            x0 = P[3] + s1 * P[2] - s2 * P[1]
            x1 = P[4] + s2 * P[0] - s0 * P[2]
            x2 = P[5] + s0 * P[1] - s1 * P[0]
            for c in range(3):
                J[c * nv + j] = B[c] * x0 + B[3 + c] * x1 + B[6 + c] * x2
        a = ki[a * NI + PARENT]


cdef Py_ssize_t active_contacts(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                double* work, const double* q, Py_ssize_t nq, const Points* pts,
                                Rows* rw) noexcept nogil:
    """The number m of active contacts at q (distance <= margin, at most m_max) and their rows,
    distances, points and pairs in the first m (3 m) entries of ``rw``; listed point by point,
    ground by ground, the points of a clear link (clear_links) skipped.  Leaves the lean
    geometry of q in ``work``."""
    cdef Py_ssize_t m = 0, i, k, g
    cdef const double* R
    cdef const double* B
    cdef const double* c
    cdef double x[3]
    cdef double n0, n1, n2, d
    world_frames(ki, kf, L, nv, work, q, nq, rw.R, rw.p, rw.Pw)
    clear_links(L, pts, rw)
    for i in range(pts.n):
        k = pts.cl[i]
        if rw.clear[k]:
            continue
        R, c = rw.R + 9 * k, pts.cp + 3 * i
        for g in range(pts.ng):
            B = pts.gB + 9 * g
            n0, n1, n2 = B[2], B[5], B[8]
            x[0] = rw.p[3 * k] + R[0] * c[0] + R[1] * c[1] + R[2] * c[2] - pts.crad[i] * n0
            x[1] = rw.p[3 * k + 1] + R[3] * c[0] + R[4] * c[1] + R[5] * c[2] - pts.crad[i] * n1
            x[2] = rw.p[3 * k + 2] + R[6] * c[0] + R[7] * c[1] + R[8] * c[2] - pts.crad[i] * n2
            d = n0 * x[0] + n1 * x[1] + n2 * x[2] - pts.goff[g]
            if d > pts.cmar[i] or m >= rw.m_max:
                continue
            rw.pos[3 * m], rw.pos[3 * m + 1], rw.pos[3 * m + 2] = x[0], x[1], x[2]
            rw.dist[m], rw.pair[2 * m], rw.pair[2 * m + 1] = d, i, g
            point_rows(ki, nv, rw, k, x, B, rw.J + 3 * m * nv)
            m += 1
    return limit_rows(nv, q, pts, rw, m)


cdef Py_ssize_t limit_rows(Py_ssize_t nv, const double* q, const Points* pts, Rows* rw,
                           Py_ssize_t m) noexcept nogil:
    """The joint limits within ``lmar`` of q appended to the m contacts (the rows: zero tangents,
    the normal +-e_j; position: zero): the new m."""
    cdef Py_ssize_t j, side, c
    cdef double d
    for j in range(pts.nl):
        for side in range(2):
            d = (q[pts.li[2 * j]] - pts.lf[2 * j]) if side == 0 else (pts.lf[2 * j + 1] - q[pts.li[2 * j]])
            if d > pts.lmar or m >= rw.m_max:
                continue
            rw.pos[3 * m], rw.pos[3 * m + 1], rw.pos[3 * m + 2] = 0.0, 0.0, 0.0
            rw.dist[m], rw.pair[2 * m], rw.pair[2 * m + 1] = d, pts.n + j, side
            for c in range(3 * nv):
                rw.J[3 * m * nv + c] = 0.0
            rw.J[(3 * m + 2) * nv + pts.li[2 * j + 1]] = 1.0 if side == 0 else -1.0
            m += 1
    return m


cdef bint delassus(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv, double* work,
                   const double* J, Py_ssize_t r, double* Y, double* G) noexcept nogil:
    """G (r x r, rows r apart) = J M^-1 J^T and Y[:r] = (M^-1 J^T)^T for the first r rows of J,
    with the factors that the last forward_dynamics_passes(..., factors=True) left in ``work``
    (one O(n) substitution per row); False if G is not finite."""
    cdef Py_ssize_t i, j, c
    cdef double s
    cdef bint finite = True
    for j in range(r):
        factorised_solve(ki, kf, L, nv, work, J + j * nv, Y + j * nv, L)
    for i in range(r):
        for j in range(i + 1):
            s = 0.0
            for c in range(nv):
                s += J[i * nv + c] * Y[j * nv + c]
            G[i * r + j] = s
            G[j * r + i] = s
            finite = finite and isfinite(s)
    return finite
