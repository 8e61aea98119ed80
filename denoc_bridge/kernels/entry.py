"""Entry kernels that the numba code still calls: forward dynamics of one state and the state
checks (the loops' Lagrange solve and the matrix-free derivatives).

The public Python layer calls the compiled core instead (:mod:`denoc_bridge.core`, Cython:
``core/entry.pxi`` and ``core/gim_entry.pxi``, with their batches, inverse dynamics, the GIM, its
inverse and block factors and the geometry entries); numba's inverse dynamics and GIM entries are
gone (issue 48), these go when the numba code that calls them is ported (issue 49).

Each entry checks its inputs (shapes, finite values, non-zero quaternions and
(cos, sin) pairs; quaternions and pairs are normalised on the fly by the
geometry), runs the recursion passes and returns a status: 0 = done,
-1 = a value is invalid, -2 = a shape is wrong (the Python layer then names
the culprit), -3 = the inputs are finite but the result is not (they are too
large for float64), k + 1 = the articulated inertia of link k is singular.

The entries take the model as its table ``kt`` (:mod:`.tables`).  The
single-state entries have explicit signatures: any other argument type
(another dtype, a strided or read-only array, a list) makes the call raise
``TypeError`` instead of compiling a new version.  An empty ``work`` (0 rows)
asks the entry to allocate its own.
"""

import numpy as np
from numba import njit, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared, njit_one_version
from denoc_bridge.kernels.forward_dynamics import acceleration_forward_recursion, articulated_backward_recursion
from denoc_bridge.kernels.inverse_dynamics import twist_forward_recursion

MIN_NORM = 1e-12

_KT = types.float64[:, ::1]
_M = types.float64[:, ::1]
_V = types.float64[::1]
STATE_SIGNATURE = types.int64(_KT, _M, _V, _V, _V, _M, _V)  # kt, work, q, v, x, fext, out
FAST_SIGNATURE = types.int64(_KT, _M, _V, _V, _V, _V)  # without fext


@njit_one_version()
def valid_state(ki, q, v, x, fext, out, work, nv):
    """0 if the shapes fit the model (nv entries for v, x and out) and the values are finite with
    non-zero quaternions and (cos, sin) pairs; -2 for a wrong shape, -1 for a wrong value."""
    L = ki.shape[0]
    nq = ki[L - 1, T.IDX_Q] + ki[L - 1, T.NQ] if L else 0
    if q.shape[0] != nq or v.shape[0] != nv or x.shape[0] != nv or out.shape[0] != nv:
        return -2
    if fext.shape[0] != 0 and (fext.shape[0] != L or fext.shape[1] != 6):  # (0, any): no wrenches
        return -2
    nvm = ki[L - 1, T.IDX_V] + ki[L - 1, T.NV] if L else 0
    if work.shape[0] != 0 and (work.shape[1] != T.W or work.shape[0] != T.work_rows(L, nvm, ki[0, T.NMOD] if L else 0)):
        return -2
    for i in range(nq):
        if not np.isfinite(q[i]):
            return -1
    for i in range(nv):
        if not (np.isfinite(v[i]) and np.isfinite(x[i])):
            return -1
    for k in range(fext.shape[0]):
        for j in range(6):
            if not np.isfinite(fext[k, j]):
                return -1
    for k in range(L):
        i0 = ki[k, T.NORM0]
        if i0 >= 0:
            s = 0.0
            for j in range(ki[k, T.NORMSZ]):
                s += q[i0 + j] * q[i0 + j]
            if not np.sqrt(s) >= MIN_NORM:
                return -1
    return 0


OVERFLOW = -3


@njit(cache=True, inline="always")
def finite_result(out):
    """0 if every entry of the vector ``out`` is finite, else OVERFLOW."""
    for i in range(out.shape[0]):
        if not np.isfinite(out[i]):
            return OVERFLOW
    return 0


@njit(cache=True, inline="always")
def _nv(ki):
    L = ki.shape[0]
    return ki[L - 1, T.IDX_V] + ki[L - 1, T.NV] if L else 0


@njit(cache=True)
def _work(ki, work, nv):
    if work.shape[0] == 0:
        S = ki[0, T.NMOD] if ki.shape[0] > 0 else 0
        return np.empty((T.work_rows(ki.shape[0], nv, S), T.W))
    return work


@njit(cache=True, inline="always")
def forward_dynamics_passes(ki, kf, work, q, v, tau, fext, out, factors):
    """Twists, articulated masses, accelerations; with ``factors`` the articulated pass also
    keeps Ihat_k and Ihat_k^-1 in ``work`` (for solves that reuse them)."""
    out[:] = 0.0  # phi from inverse dynamics with qdd = 0
    twist_forward_recursion(ki, kf, q, v, out, fext, work, False)
    k = articulated_backward_recursion(ki, kf, tau, work, factors)
    if k >= 0:
        return k + 1
    acceleration_forward_recursion(ki, kf, work, out)
    return 0


@njit_declared(STATE_SIGNATURE)
def forward_dynamics_state(kt, work, q, v, tau, fext, out):
    """Joint accelerations of one state into ``out`` (see the module docstring for the status)."""
    ki, kf = kt.view(T.INT), kt
    status = valid_state(ki, q, v, tau, fext, out, work, _nv(ki))
    if status:
        return status
    status = forward_dynamics_passes(ki, kf, _work(ki, work, v.shape[0]), q, v, tau, fext, out, False)
    return status if status else finite_result(out)


@njit_declared(FAST_SIGNATURE)
def forward_dynamics_fast(kt, work, q, v, tau, out):
    """forward_dynamics_state without external wrenches (one argument less to dispatch)."""
    return forward_dynamics_state(kt, work, q, v, tau, work[0:0], out)
