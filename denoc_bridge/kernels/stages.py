"""One forward sweep that ends a stage of a fixed-step integrator and begins the next (000
§3.2: forward dynamics followed by numerical integration).

The acceleration recursion of forward dynamics (000 Table 3, step 2) and the twist recursion
of inverse dynamics (000 Table 1, step 1) visit the links in the same order, M_1..M_s and
1^i..eta^i, and the joint rates of the next stage at joint k need only joint k's
accelerations of this stage: ``qd'_k = vb_k + h (vacc_k + qdd_k)`` (RK4: vb = v, vacc = 0
for the inner stages; vacc = k1 + 2 k2 + 2 k3 and h = dt / 6 for the step itself).  So
:func:`stage_sweep` does, at link k: qdd_k of this stage, qd'_k, joint k's geometry at the
next configuration, and t_k, tdot_k, w_k of the next stage.  The two dependent chains (mu
here, t and tdot there) overlap in the processor instead of running one after the other:
the RK4 run of the 100-DOF rope is 10 % shorter (47.8 -> 43.0 ms, measured in one process).

The acceleration and twist link steps of
:func:`.forward_dynamics.acceleration_forward_recursion` and
:func:`.inverse_dynamics.twist_forward_recursion` are written out again here, specialised to
one-DOF coordinate-axis joints: shared as inlined numba helpers (branches on the joint kind
inside) they made the plain passes 20-30 % slower, and one pass with flags for both uses
cost the plain forward dynamics 12 % (measured).  The wrench step is shared
(:func:`.inverse_dynamics.store_link_wrench`, no measurable cost).
"""

from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.geometry import block_cos_sin, coordinate_axis_block
from denoc_bridge.kernels.inverse_dynamics import (
    GEOMETRY_BLOCK,
    NO_E,
    gravity,
    module_row,
    modules,
    n_modules,
    rotation,
    store_link_wrench,
    twist_rate_bias,
    unit6,
)
from denoc_bridge.kernels.prefetch import AHEAD, PREFETCH_LINKS, prefetch
from denoc_bridge.kernels.spatial6 import apply_A
from denoc_bridge.kernels.trig import poly_ok


@njit(cache=True, fastmath=False)
def next_rate(vb, h, vacc, a):
    """vb + h (vacc + a), rounded as written: the stage formulas of the integrators, bit for bit.
    ``fastmath=False`` is explicit because numba lets an unset callee inherit its caller's
    flags (then a fused multiply-add here, or not, by the order of compilation)."""
    return vb + h * (vacc + a)


@njit(cache=True, fastmath={"contract"})
def stage_sweep(ki, kf, work, a, vb, vacc, h, q, qd, fext):
    """One forward sweep over the links (see the module docstring) of a model whose joints are
    all revolute about a coordinate axis of their link (:func:`sweepable`).

    With the factors of this stage in ``work`` (after
    :func:`.forward_dynamics.articulated_backward_recursion`): the accelerations of this
    stage into ``a`` (000 Table 3, step 2); the next stage's joint rates qd = vb + h (vacc + a);
    and step 1 of 000 Table 1 at (q, qd) with zero joint accelerations: geometry, t_k, tdot_k
    and w_k - f_ext,k into ``work``, ready for the next backward recursion.
    """
    L, nv = ki.shape[0], a.shape[0]
    far = L > PREFETCH_LINKS  # past the caches: prefetch rows
    has_fext = fext.shape[0] > 0
    zero = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    t, td, mu = zero, zero, zero
    done, base = 0, 0  # links whose cos, sin are computed
    poly = poly_ok(q)
    cb, sb = block_cos_sin(ki, q, work, 0, 0, poly)
    for i in range(n_modules(ki)):  # inter-modular: M_1 .. M_s
        first, end, p = modules(ki, i)
        for k in range(first, end):  # intra-modular: 1^i .. eta^i
            if k == first:
                if p < 0:
                    g0, g1, g2 = gravity(kf)
                    t, td, mu = zero, (0.0, 0.0, 0.0, -g0, -g1, -g2), zero
                else:  # last link of the parent module
                    b = module_row(L, nv, p)
                    t = (
                        work[b + T.M_TWIST, 0],
                        work[b + T.M_TWIST, 1],
                        work[b + T.M_TWIST, 2],
                        work[b + T.M_TWIST, 3],
                        work[b + T.M_TWIST, 4],
                        work[b + T.M_TWIST, 5],
                    )
                    td = (
                        work[b + T.M_RATE, 0],
                        work[b + T.M_RATE, 1],
                        work[b + T.M_RATE, 2],
                        work[b + T.M_RATE, 3],
                        work[b + T.M_RATE, 4],
                        work[b + T.M_RATE, 5],
                    )
                    mu = (
                        work[b + T.M_VEC, 0],
                        work[b + T.M_VEC, 1],
                        work[b + T.M_VEC, 2],
                        work[b + T.M_VEC, 3],
                        work[b + T.M_VEC, 4],
                        work[b + T.M_VEC, 5],
                    )
            if k >= done:  # cos, sin of the next block, one SIMD loop
                base, done = k, min(k + GEOMETRY_BLOCK, L)
                cb, sb = block_cos_sin(ki, q, work, k, done, poly)
            if far:  # the rows a few links ahead
                prefetch(kf, k + AHEAD, 0)
                prefetch(kf, k + AHEAD, 8)
                prefetch(work, k + AHEAD, 0)
                prefetch(work, T.dof_row(L, k + AHEAD), 0)
            v0, d, sg = ki[k, T.IDX_V], T.dof_index(ki, k), T.dof_sign(ki, k)
            code, c, s, e = rotation(ki, work, k)  # ---- this stage: qdd_k
            rc, r0, r1, r2 = T.offset_code(ki, k), kf[k, T.T0], kf[k, T.T0 + 1], kf[k, T.T0 + 2]
            m0, m1, m2, m3, m4, m5 = apply_A(
                code, c, s, NO_E, rc, r0, r1, r2, mu[0], mu[1], mu[2], mu[3], mu[4], mu[5]
            )  # mu~_k = A_{k,b} mu_b  (003 eq. 37)
            row, o = T.dof_row(L, v0), T.H_PSI
            x = work[row, T.H_PHIT] - (
                work[row, o] * m0
                + work[row, o + 1] * m1
                + work[row, o + 2] * m2
                + work[row, o + 3] * m3
                + work[row, o + 4] * m4
                + work[row, o + 5] * m5
            )
            a[v0] = x  # qdd_k = phitilde_k - Psi_k^T mu~_k 003 (36)
            u = unit6(d, sg * x)
            mu = (m0 + u[0], m1 + u[1], m2 + u[2], m3 + u[3], m4 + u[4], m5 + u[5])  # mu_k 003 (37)
            y = next_rate(vb[v0], h, vacc[v0], x)  # ---- the next stage: its rate,
            qd[v0] = y
            c, s = cb[k - base], sg * sb[k - base]  # E_k (stored once this stage's
            work[k, T.C_CS] = c  # accelerations have read the old)
            work[k, T.C_CS + 1] = s
            t, td = twist_rate_bias(
                code, c, s, NO_E, rc, r0, r1, r2, t, td, unit6(d, sg * y), zero, (0.0, 0.0, 0.0)
            )  # t_k, tdot_k (000 Table 1)
            store_link_wrench(ki, kf, work, k, fext, has_fext, t, td)  # w_k - f_ext,k
        b = module_row(L, nv, i)
        for j in range(6):  # for the child modules
            work[b + T.M_VEC, j] = mu[j]
            work[b + T.M_TWIST, j] = t[j]
            work[b + T.M_RATE, j] = td[j]


@njit(cache=True)
def first_sweep(ki, kf, work, q, v, a, zeros, v1, fext):
    """The twists at (q, v) by :func:`stage_sweep` itself (a stage with zero factors and h = 0:
    v1 = v + 0 (0 + 0) = v), so that a run's numbers do not depend on where it was cut into
    calls (the sweep's arithmetic and :func:`.inverse_dynamics.twist_forward_recursion`'s agree
    to round-off only: the compiler fuses multiply-adds by context)."""
    L, nv = ki.shape[0], v.shape[0]
    for k in range(L):  # E_k = 1, Psi_k = 0, phitilde_k = 0
        work[k, T.C_CS] = 1.0
        work[k, T.C_CS + 1] = 0.0
    for r in range(T.dof_row(L, 0), T.dof_row(L, nv)):
        work[r, T.H_PHIT] = 0.0
        for j in range(6):
            work[r, T.H_PSI + j] = 0.0
    stage_sweep(ki, kf, work, a, v, zeros, 0.0, q, v1, fext)


@njit(cache=True)
def sweepable(ki):
    """True when :func:`stage_sweep` applies: every joint revolute about a coordinate axis
    (chains, ropes; one (cos, sin) pair per joint, one DOF, link k's DOF is k)."""
    for k in range(ki.shape[0]):
        if ki[k, T.IDX_V] != k:
            return False
    return coordinate_axis_block(ki, 0, ki.shape[0])
