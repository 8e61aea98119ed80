"""The pieces of numba's fixed-step runs (:mod:`.run`) that its loop systems still use: the applied
forces, the saved rows, the configuration maps of a step.  A tree's and a mimic system's runs are
the compiled core's (``denoc_bridge/core/run.pyx``, ``integrators.pxi``); numba's tree stages
are gone (issue 48).

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

from denoc_bridge.core.systems import TAU_CONSTANT, TAU_NONE, TAU_TABLE  # noqa: F401
from denoc_bridge.kernels.configuration import dexpinv, difference, integrate


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
