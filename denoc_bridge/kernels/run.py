"""numba's fixed-step run: RK4 (Runge-Kutta-Munthe-Kaas on the joints' Lie groups) and
semi-implicit Euler, for the systems of :mod:`.systems` the Cython core does not run yet (a
MimicModel whose tree has loop closures: :class:`.systems.MimicLoopSystem`; trees, trees with
loops and mimic models are ``denoc_bridge/core/run.pyx``'s), the O(n) forward dynamics inside
(000 §3.2: forward dynamics followed by numerical integration).

One call integrates a chunk of steps; the Python layer (:mod:`denoc_bridge.simulation.runners`)
calls chunks in turn for the progress bar and Ctrl-C.  The arguments come grouped as in
mujoco_warp: the system (model arrays and its work arrays), the forcing (:class:`.systems.Forcing`),
the state (q, v: updated in place), the step window, the saved rows (:class:`.systems.Saves`)
and the scratch.  A run stops at the first step whose accelerations refuse their state: the
state before that step is kept and the status is returned with the step.
"""

import numpy as np
from numba import njit, prange

from denoc_bridge.kernels.systems import (
    KV,
    KX,
    Q1,
    QS,
    SCRATCH_ROWS,
    TAU,
    V1,
    VACC,
    VS,
    XI,
    ZEROS,
    D,
    Forcing,
    Saves,
    accelerations,
    applied_forces,
    begin,
    configuration_step,
    end_step,
    fresh,
    prepare,
    save,
    stage,
    stop_energy,
    tangent_rate,
)


@njit(cache=True)
def rk4_run(system, fc, q, v, step0, n_steps, dt, save_every, save0, out, s):
    """n_steps RK4 steps from (q, v) (updated in place), global step index step0 at the start.

    Before step n (global), when n % save_every == 0, the state and its acceleration go to row
    save0 + (rows saved so far) of ``out``.  Returns (steps done, status, rows saved).

    The configuration of stage s + 1, q (+) c dt kx_s, is known before stage s's accelerations
    and its rates v + c dt kv_s follow them: :func:`.systems.stage` returns both (a tree of
    revolute chains fuses them into one sweep).
    """
    sys = prepare(system)
    nq, nv = q.shape[0], v.shape[0]
    qs, xi, vs, tau, d = s[QS, :nq], s[XI, :nv], s[VS, :nv], s[TAU, :nv], s[D, :nv]
    k1x, k2x, k3x, k4x = s[KX, :nv], s[KX + 1, :nv], s[KX + 2, :nv], s[KX + 3, :nv]
    k1v, k2v, k3v, k4v = s[KV, :nv], s[KV + 1, :nv], s[KV + 2, :nv], s[KV + 3, :nv]
    q1, v1, vacc, zeros = s[Q1, :nq], s[V1, :nv], s[VACC, :nv], s[ZEROS, :nv]
    saved = 0
    zeros[:] = 0.0
    if n_steps > 0:
        begin(sys, fc, q, v, k1v, zeros, v1)
    for m in range(n_steps):
        n = step0 + m
        applied_forces(sys, fc, q, v, n, d, tau)  # stage 1 at (q, v)
        for i in range(nv):
            xi[i] = 0.5 * dt * v[i]
        configuration_step(sys, q, xi, q1)
        status = stage(sys, fc, q, v, tau, k1v, v, zeros, 0.5 * dt, q1, v1)
        if status:
            return m, status, saved
        saved += save(sys, n, save_every, save0 + saved, q, v, k1v, out)
        k1x[:] = v
        # stages 2 and 3 at q (+) c dt kx_prev, v + c dt kv_prev; each prepares the next
        status = _inner_stage(sys, fc, q, v, n, 0.5 * dt, k2x, k2v, s)
        if status:
            return m, status, saved
        status = _inner_stage(sys, fc, q, v, n, dt, k3x, k3v, s)
        if status:
            return m, status, saved
        qs[:] = q1  # stage 4
        vs[:] = v1
        tangent_rate(sys, xi, vs, k4x)
        applied_forces(sys, fc, qs, vs, n, d, tau)
        # the step: xi = dt/6 (k1 + 2 k2 + 2 k3 + k4) in the tangent space at q, and v likewise
        for i in range(nv):
            xi[i] = dt / 6.0 * (k1x[i] + 2.0 * k2x[i] + 2.0 * k3x[i] + k4x[i])
            vacc[i] = k1v[i] + 2.0 * k2v[i] + 2.0 * k3v[i]
        configuration_step(sys, q, xi, q1)
        status = stage(sys, fc, qs, vs, tau, k4v, v, vacc, dt / 6.0, q1, v1)
        if status:
            return m, status, saved
        q[:] = q1
        v[:] = v1
        status = end_step(sys, fc, q, v, s)
        if status:
            return m + 1, status, saved
    _end_row(sys, save0 + saved, out)
    return n_steps, 0, saved


@njit(cache=True, inline="always")
def _end_row(sys, r, out):
    """The stops' energy at the run's last state into the row after the saved ones (the row of
    the final state, when there is one)."""
    if out.Stops.shape[0] > r:
        out.Stops[r] = stop_energy(sys)


@njit(cache=True, inline="always")
def _inner_stage(sys, fc, q, v, n, h_next, kx, kv, s):
    """RK4 stage 2 or 3 at (qs, vs) = (q1, v1), prepared by the previous stage with xi = its
    step in the tangent space: kx = dexp^-1 vs, kv = a(qs, vs); the next stage's state
    q1 = q (+) h_next kx, v1 = v + h_next kv.  Returns the status."""
    nq, nv = q.shape[0], v.shape[0]
    qs, xi, vs, tau, d = s[QS, :nq], s[XI, :nv], s[VS, :nv], s[TAU, :nv], s[D, :nv]
    q1, v1, zeros = s[Q1, :nq], s[V1, :nv], s[ZEROS, :nv]
    qs[:] = q1
    vs[:] = v1
    tangent_rate(sys, xi, vs, kx)
    applied_forces(sys, fc, qs, vs, n, d, tau)
    for i in range(nv):
        xi[i] = h_next * kx[i]
    configuration_step(sys, q, xi, q1)
    return stage(sys, fc, qs, vs, tau, kv, v, zeros, h_next, q1, v1)


@njit(cache=True)
def euler_run(system, fc, q, v, step0, n_steps, dt, save_every, save0, out, s):
    """Semi-implicit (symplectic) Euler: v += dt a(q, v); q = q (+) dt v.  The interface of
    :func:`rk4_run`."""
    sys = prepare(system)
    nv = v.shape[0]
    xi, tau, d, a = s[XI, :nv], s[TAU, :nv], s[D, :nv], s[KV, :nv]
    saved = 0
    for m in range(n_steps):
        n = step0 + m
        applied_forces(sys, fc, q, v, n, d, tau)
        status = accelerations(sys, fc, q, v, tau, a)
        if status:
            return m, status, saved
        saved += save(sys, n, save_every, save0 + saved, q, v, a, out)
        for i in range(nv):
            v[i] += dt * a[i]
            xi[i] = dt * v[i]
        configuration_step(sys, q, xi, q)
        status = end_step(sys, fc, q, v, s)
        if status:
            return m + 1, status, saved
    _end_row(sys, save0 + saved, out)
    return n_steps, 0, saved


@njit(cache=True, parallel=True)
def run_batch(system, fc, Q, V, n_steps, dt, save_every, out, done, status, saved, euler):
    """One whole fixed-step run per case of a batch that shares a system, cases in parallel.

    Case b starts at (Q[b], V[b]) (updated in place to its last valid state), takes
    ``fc.taus[b]`` (as in :func:`rk4_run`: one constant row, or one row per step) and saves into
    row b of each array of ``out``; ``done[b]``, ``status[b]``, ``saved[b]`` are :func:`rk4_run`'s
    (steps done, status, rows saved).  Each case has work and scratch arrays of its own, and
    the arithmetic of :func:`rk4_run` (or :func:`euler_run`) alone: the same numbers."""
    nq, nv = Q.shape[1], V.shape[1]
    for b in prange(Q.shape[0]):
        sys_b = fresh(system)
        fc_b = Forcing(fc.tau_mode, fc.taus[b], fc.fext, fc.K, fc.D, fc.q_rest, fc.passive)
        out_b = Saves(out.Qs[b], out.Vs[b], out.As[b], out.Err[b], out.Stops[b])
        s = np.zeros((SCRATCH_ROWS, max(nq, nv, 1)))
        if euler:
            d, st, sv = euler_run(sys_b, fc_b, Q[b], V[b], 0, n_steps, dt, save_every, 0, out_b, s)
        else:
            d, st, sv = rk4_run(sys_b, fc_b, Q[b], V[b], 0, n_steps, dt, save_every, 0, out_b, s)
        done[b], status[b], saved[b] = d, st, sv
