# O(n) forward dynamics by block reverse Gaussian elimination (000 eqs. 18-23, Table 3;
# 001 eqs. A.1-A.8 for multi-DOF joints; 003 eqs. 30-37); numba's kernels/forward_dynamics.py
# before (deleted).
#
# After the forward recursion of inverse dynamics with zero accelerations (twist_forward_
# recursion, which gives the link wrenches behind phi), two passes remain:
# articulated_backward_recursion, M_s..M_1 and eta^i..1^i: the articulated module masses
# (000 eqs. 19-21: Mhat, PsiHat, Ihat, Psi, Mbar), phi (000 Table 1, step 2), and the solution
# of U phihat = phi and D phitilde = phihat (000 Table 3, step 1); acceleration_forward_
# recursion, M_1..M_s and 1^i..eta^i: the solution of U^T qdd = phitilde (000 Table 3, step 2).
# The two backward sums of 6-vectors, w~ (000 Table 1) and eta~ (000 Table 3), obey the same
# recursion and are carried as one vector xi = w~ + eta~: phihat_k = tau_k - P_k^T xi_k and
# xi_b = w_b + sum_c A_{c,b}^T (xi_c + Psi_c phihat_c).  Masses: 21 doubles (spatial.pxi).

cdef extern from *:
    """
    #define DB_SINGULAR_RTOL (1e-12)
    """
    double SINGULAR_RTOL "DB_SINGULAR_RTOL"


cdef bint spd_inverse(const double* A, int z, double* Ainv, double* Lc, double* X,
                      double scale) noexcept nogil:
    """Inverse of the z x z symmetric positive definite block A (rows of 6) by Cholesky, Lc
    and X 6x6 scratch.  False when a pivot is not larger than SINGULAR_RTOL * scale (singular
    or indefinite articulated inertia)."""
    cdef int i, j, c, m
    cdef double s
    for j in range(z):
        s = A[6 * j + j]
        for m in range(j):
            s -= Lc[6 * j + m] * Lc[6 * j + m]
        if not (s > SINGULAR_RTOL * scale):
            return False
        Lc[6 * j + j] = sqrt(s)
        for i in range(j + 1, z):
            s = A[6 * i + j]
            for m in range(j):
                s -= Lc[6 * i + m] * Lc[6 * j + m]
            Lc[6 * i + j] = s / Lc[6 * j + j]
    for c in range(z):  # X = L^-1 (lower triangular)
        for i in range(z):
            if i < c:
                X[6 * i + c] = 0.0
            elif i == c:
                X[6 * i + c] = 1.0 / Lc[6 * i + i]
            else:
                s = 0.0
                for m in range(c, i):
                    s += Lc[6 * i + m] * X[6 * m + c]
                X[6 * i + c] = -s / Lc[6 * i + i]
    for i in range(z):  # A^-1 = X^T X
        for c in range(i, z):
            s = 0.0
            for m in range(c, z):
                s += X[6 * m + i] * X[6 * m + c]
            Ainv[6 * i + c] = s
            Ainv[6 * c + i] = s
    return True


cdef bint articulated_joint_general(const int* i, const double* f, Py_ssize_t L, Py_ssize_t nv,
                                    double* work, double* M, double* xi, const double* tau,
                                    double scale) noexcept nogil:
    """Joint factors for a joint with several DOFs or a general axis (z_k x z_k blocks,
    001 eqs. A.4-A.7): PsiHat = Mhat P, Ihat = P^T PsiHat (+ armature), Psi = PsiHat Ihat^-1,
    phihat = tau - P^T xi (003 eq. 31), phitilde = Ihat^-1 phihat (eq. 35); M becomes Mbar and
    xi becomes xi + Psi phihat.  False for a singular Ihat."""
    cdef Py_ssize_t v0 = i[IDX_V]
    cdef double* dof = work + dof_row(L, v0) * W
    cdef const double* P = work + p_row(L, nv, v0) * W
    cdef double* ihat = work + ihat_row(L, nv, v0) * W
    cdef double* ihatinv = work + ihatinv_row(L, nv, v0) * W
    cdef int z = i[NV]
    cdef double PsiHat[36]
    cdef double Ik[36]
    cdef double Iinv[36]
    cdef double Lc[36]
    cdef double X[36]
    cdef double ph[6]
    cdef double acc, p
    cdef int a, n, m
    for n in range(z):
        for a in range(6):
            acc = 0.0
            for m in range(6):
                acc += M[sym_index(a, m)] * P[n * W + m]
            PsiHat[6 * n + a] = acc  # PsiHat_k = Mhat_k P_k    001 (A.5)
    for a in range(z):
        for n in range(z):
            acc = 0.0
            for m in range(6):
                acc += P[a * W + m] * PsiHat[6 * n + m]
            Ik[6 * a + n] = acc  # Ihat_k = P_k^T PsiHat_k  001 (A.4)
        Ik[6 * a + a] += f[ARM + a]
        acc = tau[v0 + a]
        for m in range(6):
            acc -= P[a * W + m] * xi[m]
        ph[a] = acc  # phihat_k                 003 (31)
    if not spd_inverse(Ik, z, Iinv, Lc, X, scale):
        return False
    for a in range(z):
        acc = 0.0
        for n in range(z):
            ihat[a * W + n] = Ik[6 * a + n]
            ihatinv[a * W + n] = Iinv[6 * a + n]
            acc += Iinv[6 * a + n] * ph[n]
        dof[a * W + H_PHIT] = acc  # phitilde_k = Ihat^-1 phihat 003 (35)
        for m in range(6):
            acc = 0.0
            for n in range(z):
                acc += PsiHat[6 * n + m] * Iinv[6 * n + a]
            dof[a * W + H_PSI + m] = acc  # Psi_k = PsiHat_k Ihat_k^-1 001 (A.5)
    for a in range(z):
        p = ph[a]
        for m in range(6):
            xi[m] = xi[m] + dof[a * W + H_PSI + m] * p
        minus_outer(M, PsiHat + 6 * a, dof + a * W + H_PSI)  # Mbar_k  001 (A.7)
    return True


cdef inline double to_parent(int code, double c, double s, const double* e, int rc,
                             const double* r, double* M, double* xi, double mag,
                             const double* col, double inv, int dp) noexcept nogil:
    """M <- A^T Mbar A and xi <- A^T xi with A = A_{k,b} (000 eq. 20); returns the scale for
    the parent's pivot.  The scale measures the cancellation in the parent's pivot: when link
    k projected the column PsiHat = Mhat p out of its mass (``inv`` = 1 / Ihat_k, ``dp`` >= 0
    the aligned DOF of the parent), the parent's pivot loses (A^T PsiHat)_dp^2 / Ihat_k, whose
    round-off bounds the pivot's.  Otherwise (multi-DOF joints, general axes) the largest
    diagonal entry ``mag`` of Mhat_k before the projection, times the lever (1 + |r_k|)^2."""
    cdef double u[6]
    cdef double scale, lever
    if inv > 0.0 and dp >= 0:
        apply_At(code, c, s, e, rc, r, col, u)
        scale = pick6(u, dp) * pick6(u, dp) * inv
    else:
        if rc == R_ZERO:
            lever = 1.0
        elif rc <= R_Z:
            lever = 1.0 + fabs(r[0] + r[1] + r[2])  # two of them are zero
        else:
            lever = 1.0 + sqrt(r[0] * r[0] + r[1] * r[1] + r[2] * r[2])
        scale = mag * lever * lever
    congruence_to_parent(code, c, s, e, rc, r, M)
    apply_At(code, c, s, e, rc, r, xi, xi)
    return scale


cdef Py_ssize_t articulated_backward_recursion(const int* ki, const double* kf, Py_ssize_t L,
                                               Py_ssize_t nv, const double* tau, double* work,
                                               bint factors) noexcept nogil:
    """M_s..M_1, eta^i..1^i: Mhat_k = M_k + sum_c A^T Mbar_c A (000 eq. 20), the joint factors
    (eq. 19), and the backward substitutions of 000 Table 3 (step 1).  Returns the first link
    whose Ihat_k is singular, or -1.  With ``factors`` the rows of Ihat_k and Ihat_k^-1 are
    stored too.  A pivot counts as zero when it is not larger than SINGULAR_RTOL times the
    largest diagonal entry of M_k or the amount the children's projections cancelled in its
    direction (to_parent)."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    cdef Py_ssize_t S = n_modules(ki, L)
    cdef Py_ssize_t m, k, p, first, end, b, v0
    cdef const int* i
    cdef const double* f
    cdef const double* e
    cdef double* dof
    cdef double* pa
    cdef double M[21]
    cdef double xi[6]
    cdef double Mg[21]
    cdef double xg[6]
    cdef double col[6]
    cdef double psi[6]
    cdef double cs[2]
    cdef double mag, mag_k, scale, Ihat, inv, ph, sg
    cdef int code, d, dp, j
    for m in range(S):  # module accumulators: mass, scale, xi
        b = module_row(L, nv, m)
        for j in range((M_VEC + 1) * W):
            work[b * W + j] = 0.0
    for m in range(S - 1, -1, -1):  # inter-modular: M_s .. M_1
        first, end, p = ki[m * NI + MFIRST], ki[m * NI + MEND], ki[m * NI + MPARENT]
        b = module_row(L, nv, m)
        for j in range(21):
            M[j] = work[b * W + j]
        mag = work[(b + 2) * W + M_MAG]
        for j in range(6):
            xi[j] = work[(b + M_VEC) * W + j]
        for k in range(end - 1, first - 1, -1):  # intra-modular: eta^i .. 1^i
            i = ki + k * NI
            f = kf + k * NT
            if far and k >= AHEAD:  # the rows a few links ahead
                prefetch(kf + (k - AHEAD) * NT)
                prefetch(kf + (k - AHEAD) * NT + 8)
                prefetch(work + (k - AHEAD) * W)
                prefetch(work + (dof_row(L, i[IDX_V]) - AHEAD) * W)
            if not massless(i):
                plus_link_mass(M, f)  # Mhat_k = M_k + ...       000 (20)
            for j in range(6):
                xi[j] = xi[j] + work[k * W + C_W + j]  # xi_k = w~_k + eta~_k
            mag_k = diagonal_max(M)
            d = dof_index(i)
            inv = 0.0
            if d >= 0:  # P_k = sign e_d: a column of Mhat
                scale = fmax2(fmax2(fmax2(f[MASS], f[ARM0]),
                                    fmax2(fmax2(f[IO], f[IO + 3]), f[IO + 5])), mag)  # = SCALE
                v0 = i[IDX_V]
                sg = dof_sign(i)
                column(M, d, col)
                Ihat = pick6(col, d) + f[ARM0]  # Ihat_k = p^T Mhat p   001 (A.4)
                if not (Ihat > SINGULAR_RTOL * scale):
                    return k
                inv = 1.0 / Ihat
                if factors:  # for U, D and the inverse GIM
                    work[ihat_row(L, nv, v0) * W] = Ihat
                    work[ihatinv_row(L, nv, v0) * W] = inv
                ph = tau[v0] - sg * pick6(xi, d)  # phihat_k                 003 (31)
                dof = work + dof_row(L, v0) * W
                dof[H_PHIT] = ph * inv  # phitilde_k               003 (35)
                for j in range(6):
                    psi[j] = col[j] * inv
                    dof[H_PSI + j] = sg * psi[j]  # Psi_k = PsiHat / Ihat    001 (A.5)
                ph = sg * ph
                for j in range(6):
                    xi[j] = xi[j] + psi[j] * ph  # eta_k = Psi phihat + eta~ 003 (32)
                minus_outer(M, col, psi)  # Mbar_k = Mhat - PsiHat Psi^T 001 (A.7)
            else:  # on copies: M and xi, whose addresses never escape, stay in registers
                for j in range(21):
                    Mg[j] = M[j]
                for j in range(6):
                    xg[j] = xi[j]
                    col[j] = 0.0
                if not articulated_joint_general(i, f, L, nv, work, Mg, xg, tau, fmax2(f[SCALE], mag)):
                    return k
                for j in range(21):
                    M[j] = Mg[j]
                for j in range(6):
                    xi[j] = xg[j]
            if p < 0 and k == first:
                continue
            dp = dof_index(ki + (k - 1 if k > first else ki[p * NI + MEND] - 1) * NI)  # parent's DOF
            e = rotation(i, work, L, k, cs)
            code = rot_code(i)
            if code <= ROT_Z:  # r_k = r0 (see offset)
                mag = to_parent(code, cs[0], cs[1], NULL, offset_code(i), f + T0, M, xi, mag_k,
                                col, inv, dp)
            elif r_is_r0(i):  # a general rotation, r_k = r0 with its zero pattern
                mag = to_parent(ROT_GENERAL, 0.0, 0.0, e, offset_code(i), f + T0, M, xi, mag_k,
                                col, inv, dp)
            else:
                mag = to_parent(code, 0.0, 0.0, e, R_GENERAL, offset(f, work, L, k, code), M, xi,
                                mag_k, col, inv, dp)
            if k == first:  # to the parent module (eq. 20)
                pa = work + module_row(L, nv, p) * W
                for j in range(21):
                    pa[j] += M[j]
                for j in range(6):
                    pa[M_VEC * W + j] += xi[j]
                pa[2 * W + M_MAG] = fmax2(pa[2 * W + M_MAG], mag)
    return -1


cdef void acceleration_forward_links(const int* ki, const double* kf, Py_ssize_t L, Py_ssize_t nv,
                                     double* work, double* qdd, Py_ssize_t nl) noexcept nogil:
    """Step 2 of 000 Table 3 over the links before nl, M_1..M_s and 1^i..eta^i: mu~_k =
    A_{k,b} mu_b (003 eq. 37), qdd_k = phitilde_k - Psi_k^T mu~_k (eq. 36), mu_k = P_k qdd_k +
    mu~_k (eq. 37).  The vector row of module i receives mu of its last link (before nl) for
    the child modules; modules that start at or after nl are skipped."""
    cdef bint far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    cdef Py_ssize_t m, k, p, first, end, b, v0
    cdef const int* i
    cdef const double* f
    cdef const double* e
    cdef const double* row
    cdef const double* P
    cdef double mu[6]
    cdef double mt[6]
    cdef double cs[2]
    cdef double x
    cdef int code, d, a, j
    for j in range(6):
        mu[j] = 0.0
    for m in range(n_modules(ki, L)):  # inter-modular: M_1 .. M_s
        first, end, p = ki[m * NI + MFIRST], ki[m * NI + MEND], ki[m * NI + MPARENT]
        if first >= nl:
            continue
        for k in range(first, min(end, nl)):  # intra-modular: 1^i .. eta^i
            i = ki + k * NI
            f = kf + k * NT
            if far and k + AHEAD < L:  # the rows a few links ahead
                prefetch(kf + (k + AHEAD) * NT)
                prefetch(kf + (k + AHEAD) * NT + 8)
                prefetch(work + (k + AHEAD) * W)
                prefetch(work + (dof_row(L, i[IDX_V]) + AHEAD) * W)
            e = rotation(i, work, L, k, cs)
            code = rot_code(i)
            if k == first and p >= 0:  # mu of the parent module's last link
                b = module_row(L, nv, p) + M_VEC
                for j in range(6):
                    mu[j] = work[b * W + j]
            elif k == first:
                for j in range(6):
                    mu[j] = 0.0
            if code <= ROT_Z:  # r_k = r0 (see offset)
                apply_A(code, cs[0], cs[1], NULL, offset_code(i), f + T0, mu, mt)  # mu~_k
            else:
                apply_A(code, 0.0, 0.0, e, R_GENERAL, offset(f, work, L, k, code), mu, mt)
            v0 = i[IDX_V]
            d = dof_index(i)
            if d >= 0:  # one DOF: qdd_k = phitilde_k - Psi_k^T mu~_k 003 (36)
                row = work + dof_row(L, v0) * W + H_PSI
                x = row[H_PHIT - H_PSI] - psi_dot(row, mt)
                qdd[v0] = x
                x = dof_sign(i) * x
                for j in range(6):  # mu_k = P_k qdd_k + mu~_k   003 (37)
                    mu[j] = mt[j] + (x if j == d else 0.0)
            else:
                for a in range(i[NV]):
                    row = work + dof_row(L, v0 + a) * W + H_PSI
                    qdd[v0 + a] = row[H_PHIT - H_PSI] - psi_dot(row, mt)
                for a in range(i[NV]):
                    x = qdd[v0 + a]
                    P = work + p_row(L, nv, v0 + a) * W
                    for j in range(6):
                        mt[j] += P[j] * x
                for j in range(6):
                    mu[j] = mt[j]
        b = module_row(L, nv, m) + M_VEC
        for j in range(6):
            work[b * W + j] = mu[j]


cdef inline void acceleration_forward_recursion(const int* ki, const double* kf, Py_ssize_t L,
                                                Py_ssize_t nv, double* work,
                                                double* qdd) noexcept nogil:
    """Step 2 of 000 Table 3 over all links."""
    acceleration_forward_links(ki, kf, L, nv, work, qdd, L)
