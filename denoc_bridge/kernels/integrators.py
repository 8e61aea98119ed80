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
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.configuration import dexpinv, difference, integrate
from denoc_bridge.kernels.entry import forward_dynamics_unchecked
from denoc_bridge.kernels.forward_dynamics import articulated_backward_recursion
from denoc_bridge.kernels.joints import CONTINUOUS, FREEFLYER, PLANAR, SPHERICAL
from denoc_bridge.kernels.stages import next_rate, stage_sweep

TAU_NONE, TAU_CONSTANT, TAU_TABLE = 0, 1, 2


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
