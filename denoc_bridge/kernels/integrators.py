"""Compiled fixed-step integrators: whole runs of RK4 (RKMK on the joint Lie groups) and
semi-implicit Euler steps, with the O(n) forward dynamics inside (000 §3.2: forward dynamics
followed by numerical integration).

One call integrates a chunk of steps; the Python layer (:mod:`denoc_bridge.simulation`) calls
chunks in turn for the progress bar and Ctrl-C.  Per step the applied generalized force is
``tau_n + tau_passive(q, v)`` with the joint springs and dampers of the model
(``-K (q (-) q_rest) - D v``) and the constant external wrenches ``fext``; ``tau_n`` is zero,
one constant vector, or row n of a table (held over the step).

A run stops at the first step whose forward dynamics refuses its state (a value that is
not finite, a zero quaternion, a singular articulated inertia): the state before that step
is kept and the kernel's status is returned with the step.
"""

import numpy as np
from numba import njit, prange

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.configuration import configuration_rate, dexpinv, difference, integrate
from denoc_bridge.kernels.entry import forward_dynamics_state, forward_dynamics_unchecked
from denoc_bridge.kernels.forward_dynamics import articulated_backward_recursion
from denoc_bridge.kernels.joints import CONTINUOUS, FREEFLYER, PLANAR, SPHERICAL
from denoc_bridge.kernels.stages import first_sweep, next_rate, stage_sweep, sweepable

TAU_NONE, TAU_CONSTANT, TAU_TABLE = 0, 1, 2
SCRATCH_ROWS = 17


@njit(cache=True)
def passive_forces(ki, q, v, K, D, q_rest, passive, d, out):
    """out = -K (q (-) q_rest) - D v (zero without ``passive``); ``d`` is (nv,) scratch."""
    if not passive:
        out[:] = 0.0
        return
    difference(ki, q_rest, q, d)
    for i in range(v.shape[0]):
        out[i] = -K[i] * d[i] - D[i] * v[i]


@njit(cache=True)
def applied(ki, q, v, tau_mode, taus, n, K, D, q_rest, passive, d, out):
    """tau_n + tau_passive(q, v) into out."""
    passive_forces(ki, q, v, K, D, q_rest, passive, d, out)
    if tau_mode == TAU_CONSTANT:
        for i in range(out.shape[0]):
            out[i] += taus[0, i]
    elif tau_mode == TAU_TABLE:
        for i in range(out.shape[0]):
            out[i] += taus[n, i]


@njit(cache=True)
def accelerations(ki, kt, work, q, v, tau, fext, out):
    """Forward dynamics inside a run: the state is not checked (the previous stage's
    accelerations were), the accelerations are: -1 when one is not finite (a state that left
    the finite numbers), k + 1 for a singular articulated inertia of link k, else 0."""
    status = forward_dynamics_unchecked(ki, kt, work, q, v, tau, fext, out)
    if status:
        return status
    return finite_status(out)


@njit(cache=True)
def finite_status(a):
    """-1 when an entry of a is not finite, else 0."""
    for i in range(a.shape[0]):
        if not np.isfinite(a[i]):
            return -1
    return 0


@njit(cache=True)
def save_state(n, save_every, r, q, v, a, Qs, Vs, As):
    """When n % save_every == 0, (q, v, a) into row r of Qs, Vs, As; returns the rows saved (0 or 1)."""
    if n % save_every:
        return 0
    Qs[r, :] = q
    Vs[r, :] = v
    As[r, :] = a
    return 1


@njit(cache=True)
def is_vector_space(ki):
    """True when every joint is a vector space (revolute, prismatic, universal, translation):
    then q (+) xi = q + xi and dexp^-1 is the identity."""
    for k in range(ki.shape[0]):
        jt = T.joint_type(ki, k)
        if jt == CONTINUOUS or jt == SPHERICAL or jt == FREEFLYER or jt == PLANAR:
            return False
    return True


@njit(cache=True, inline="always")
def step_configuration(ki, flat, q, xi, out):
    """out = q (+) xi."""
    if flat:
        for i in range(q.shape[0]):
            out[i] = q[i] + xi[i]
    else:
        integrate(ki, q, xi, out)


@njit(cache=True, inline="always")
def tangent_rate(ki, flat, xi, v, out):
    """out = dexp_{-xi}^-1 v (v itself on vector spaces)."""
    if flat:
        for i in range(v.shape[0]):
            out[i] = v[i]
    else:
        dexpinv(ki, xi, v, out)


@njit(cache=True, inline="always")
def first_stage(
    ki, kt, work, q, v, tau_mode, taus, n, K, D, q_rest, passive, d, tau, fext, a, save_every, r, Qs, Vs, As
):
    """a = the accelerations at (q, v) under the actuation of step n; when n % save_every == 0
    the state and a go to row r of Qs, Vs, As.  Returns (status, rows saved: 0 or 1)."""
    applied(ki, q, v, tau_mode, taus, n, K, D, q_rest, passive, d, tau)
    status = accelerations(ki, kt, work, q, v, tau, fext, a)
    if status:
        return status, 0
    return 0, save_state(n, save_every, r, q, v, a, Qs, Vs, As)


@njit(cache=True)
def rk4_stage(ki, kt, work, swept, qs, vs, tau, a, vb, vacc, h, q1, v1, fext):
    """The accelerations ``a`` of one RK4 stage at (qs, vs) under tau, and the next state's rates
    v1 = vb + h (vacc + a) (its configuration q1 is known).  With ``swept`` (chains of
    revolute joints, :func:`.stages.sweepable`) the stage's twists are already in ``work``:
    the articulated backward recursion, then :func:`.stages.stage_sweep`, which also sweeps the
    twists at (q1, v1) for the next stage.  Returns the status of :func:`accelerations`."""
    if swept:
        k = articulated_backward_recursion(ki, kt, tau, work, False)
        if k >= 0:
            return k + 1
        stage_sweep(ki, kt, work, a, vb, vacc, h, q1, v1, fext)
        return finite_status(a)
    status = accelerations(ki, kt, work, qs, vs, tau, fext, a)
    if status == 0:
        for i in range(a.shape[0]):
            v1[i] = next_rate(vb[i], h, vacc[i], a[i])
    return status


@njit(cache=True)
def rk4_inner_stage(
    ki,
    kt,
    work,
    swept,
    flat,
    q,
    v,
    h_next,
    q1,
    v1,
    qs,
    vs,
    xi,
    kx,
    kv,
    tau_mode,
    taus,
    n,
    K,
    D,
    q_rest,
    passive,
    d,
    tau,
    zeros,
    fext,
):
    """RK4 stage 2 or 3 at (qs, vs) = (q1, v1), prepared by the previous stage with xi = its
    step in the tangent space: kx = dexp^-1 vs, kv = a(qs, vs); the next stage's state
    q1 = q (+) h_next kx, v1 = v + h_next kv.  Returns the status of :func:`accelerations`."""
    qs[:] = q1
    vs[:] = v1
    tangent_rate(ki, flat, xi, vs, kx)
    applied(ki, qs, vs, tau_mode, taus, n, K, D, q_rest, passive, d, tau)
    for i in range(v.shape[0]):
        xi[i] = h_next * kx[i]
    step_configuration(ki, flat, q, xi, q1)
    return rk4_stage(ki, kt, work, swept, qs, vs, tau, kv, v, zeros, h_next, q1, v1, fext)


@njit(cache=True)
def rk4_run(
    kt, work, q, v, step0, n_steps, dt, tau_mode, taus, fext, K, D, q_rest, passive, save_every, save0, Qs, Vs, As, s
):
    """n_steps RK4 steps from (q, v) (updated in place), global step index step0 at the start.

    Before step n (global), when n % save_every == 0, the state and its acceleration go to row
    save0 + (number of such rows so far) of Qs, Vs, As.  ``s`` is
    (SCRATCH_ROWS, max(nq, nv)) scratch.  Returns (steps done, status, rows saved).

    The configuration of stage s + 1, q (+) c dt kx_s, is known before stage s's forward
    dynamics, its rates v + c dt kv_s follow joint by joint; on chains of revolute joints one
    sweep ends stage s and begins stage s + 1 (:mod:`.stages`).
    """
    ki = kt.view(np.int32)
    nq, nv = q.shape[0], v.shape[0]
    qs, xi, vs, tau, d = s[0, :nq], s[1, :nv], s[2, :nv], s[3, :nv], s[4, :nv]
    k1x, k2x, k3x, k4x = s[5, :nv], s[6, :nv], s[7, :nv], s[8, :nv]
    k1v, k2v, k3v, k4v = s[9, :nv], s[10, :nv], s[11, :nv], s[12, :nv]
    q1, v1, vacc, zeros = s[13, :nq], s[14, :nv], s[15, :nv], s[16, :nv]
    flat = is_vector_space(ki)
    swept = sweepable(ki)
    saved = 0
    zeros[:] = 0.0
    if swept and n_steps > 0:  # stage 1 of the first step: its twists
        first_sweep(ki, kt, work, q, v, k1v, zeros, v1, fext)
    for m in range(n_steps):
        n = step0 + m
        applied(ki, q, v, tau_mode, taus, n, K, D, q_rest, passive, d, tau)  # stage 1 at (q, v)
        for i in range(nv):
            xi[i] = 0.5 * dt * v[i]
        step_configuration(ki, flat, q, xi, q1)
        status = rk4_stage(ki, kt, work, swept, q, v, tau, k1v, v, zeros, 0.5 * dt, q1, v1, fext)
        if status:
            return m, status, saved
        saved += save_state(n, save_every, save0 + saved, q, v, k1v, Qs, Vs, As)
        k1x[:] = v
        # stages 2 and 3 at q (+) dt/2 kx_prev, v + dt/2 kv_prev; they prepare stages 3 and 4
        status = rk4_inner_stage(
            ki,
            kt,
            work,
            swept,
            flat,
            q,
            v,
            0.5 * dt,
            q1,
            v1,
            qs,
            vs,
            xi,
            k2x,
            k2v,
            tau_mode,
            taus,
            n,
            K,
            D,
            q_rest,
            passive,
            d,
            tau,
            zeros,
            fext,
        )
        if status:
            return m, status, saved
        status = rk4_inner_stage(
            ki,
            kt,
            work,
            swept,
            flat,
            q,
            v,
            dt,
            q1,
            v1,
            qs,
            vs,
            xi,
            k3x,
            k3v,
            tau_mode,
            taus,
            n,
            K,
            D,
            q_rest,
            passive,
            d,
            tau,
            zeros,
            fext,
        )
        if status:
            return m, status, saved
        qs[:] = q1  # stage 4
        vs[:] = v1
        tangent_rate(ki, flat, xi, vs, k4x)
        applied(ki, qs, vs, tau_mode, taus, n, K, D, q_rest, passive, d, tau)
        # the step: xi = dt/6 (k1 + 2 k2 + 2 k3 + k4) in the tangent space at q, and v likewise
        for i in range(nv):
            xi[i] = dt / 6.0 * (k1x[i] + 2.0 * k2x[i] + 2.0 * k3x[i] + k4x[i])
            vacc[i] = k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i]
        step_configuration(ki, flat, q, xi, q1)
        status = rk4_stage(ki, kt, work, swept, qs, vs, tau, k4v, v, vacc, dt / 6.0, q1, v1, fext)
        if status:
            return m, status, saved
        q[:] = q1
        v[:] = v1
    return n_steps, 0, saved


@njit(cache=True)
def euler_run(
    kt, work, q, v, step0, n_steps, dt, tau_mode, taus, fext, K, D, q_rest, passive, save_every, save0, Qs, Vs, As, s
):
    """Semi-implicit (symplectic) Euler: v += dt a(q, v); q = q (+) dt v.  Same interface as
    :func:`rk4_run`."""
    ki = kt.view(np.int32)
    nv = v.shape[0]
    xi, tau, d, a = s[1, :nv], s[3, :nv], s[4, :nv], s[9, :nv]
    flat = is_vector_space(ki)
    saved = 0
    for m in range(n_steps):
        n = step0 + m
        status, one = first_stage(
            ki,
            kt,
            work,
            q,
            v,
            tau_mode,
            taus,
            n,
            K,
            D,
            q_rest,
            passive,
            d,
            tau,
            fext,
            a,
            save_every,
            save0 + saved,
            Qs,
            Vs,
            As,
        )
        if status:
            return m, status, saved
        saved += one
        for i in range(nv):
            v[i] += dt * a[i]
            xi[i] = dt * v[i]
        step_configuration(ki, flat, q, xi, q)
    return n_steps, 0, saved


@njit(cache=True)
def ode_rhs(kt, work, q, v, tau, fext, qdot, a):
    """(dq/dt, dv/dt) of the first-order system in the coordinates q for an adaptive solver;
    returns the forward dynamics status."""
    ki = kt.view(np.int32)
    configuration_rate(ki, q, v, qdot)
    return forward_dynamics_state(kt, work, q, v, tau, fext, a)


@njit(cache=True, parallel=True)
def run_batch(
    kt,
    Q,
    V,
    n_steps,
    dt,
    tau_mode,
    taus,
    fext,
    K,
    D,
    q_rest,
    passive,
    save_every,
    Qs,
    Vs,
    As,
    done,
    status,
    saved,
    euler,
):
    """One whole fixed-step run per case of a batch that shares a model, cases in parallel.

    Case b starts at (Q[b], V[b]) (updated in place to its last valid state), takes ``taus[b]``
    (rows as in :func:`rk4_run`: one constant row, or one row per step) and saves into
    Qs[b], Vs[b], As[b]; ``done[b]``, ``status[b]``, ``saved[b]`` are :func:`rk4_run`'s
    (steps done, status, rows saved).  Each case has its own work and scratch arrays, and its
    arithmetic is that of :func:`rk4_run` (or :func:`euler_run`) alone: the same numbers."""
    ki = kt.view(T.INT)
    nq, nv = Q.shape[1], V.shape[1]
    rows = T.work_rows(ki.shape[0], nv, ki[0, T.NMOD] if ki.shape[0] > 0 else 0)
    for b in prange(Q.shape[0]):
        work = np.empty((rows, T.W))
        s = np.zeros((SCRATCH_ROWS, max(nq, nv, 1)))
        if euler:
            done[b], status[b], saved[b] = euler_run(
                kt,
                work,
                Q[b],
                V[b],
                0,
                n_steps,
                dt,
                tau_mode,
                taus[b],
                fext,
                K,
                D,
                q_rest,
                passive,
                save_every,
                0,
                Qs[b],
                Vs[b],
                As[b],
                s,
            )
        else:
            done[b], status[b], saved[b] = rk4_run(
                kt,
                work,
                Q[b],
                V[b],
                0,
                n_steps,
                dt,
                tau_mode,
                taus[b],
                fext,
                K,
                D,
                q_rest,
                passive,
                save_every,
                0,
                Qs[b],
                Vs[b],
                As[b],
                s,
            )
