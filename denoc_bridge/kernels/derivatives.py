"""Entries of the analytical first-order derivatives of the dynamics of a tree: those of the
recursive inverse dynamics (the passes of :mod:`.derivative_passes`, Carpentier & Mansard 2018,
Pinocchio's ``computeRNEADerivatives``) and of the forward dynamics, ``dqdd/dx = -M^-1 dtau/dx``
at ``qdd = FD(q, v, tau)`` (implicit-function theorem; Pinocchio's ``computeABADerivatives``).

Up to :data:`DENSE_MINV_MAX` DOF the forward derivatives need no forward-dynamics pass: the
passes at ``a = 0`` give the GIM M, ``dtau/dv`` and the bias ``tau(q, v, 0)``; the dense
Cholesky inverse of M gives ``M^-1`` and ``qdd = M^-1 (tau - bias)``, and
:func:`.derivative_passes.acceleration_pass` adds the terms of qdd to ``dtau/dq``.  If the
Cholesky factorisation finds M singular, qdd comes from the O(n) forward dynamics (000 eqs.
18-23, which names a joint of singular articulated inertia) and ``M^-1`` from its articulated
factors (002 eqs. A.13-A.22); beyond :data:`DENSE_MINV_MAX` DOF the same, then the fused passes
at qdd.
"""

import numpy as np
from numba import njit, prange, types

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.compiling import njit_declared
from denoc_bridge.kernels.derivative_passes import (
    acceleration_pass,
    composite_pass,
    derivatives_unchecked,
    kinematics_pass,
    workspace,
)
from denoc_bridge.kernels.entry import _nv, _work, finite_result, forward_dynamics_passes, valid_state
from denoc_bridge.kernels.forward_dynamics import SINGULAR_RTOL
from denoc_bridge.kernels.gim import minv_from_factors, subtree_dofs

_M = types.float64[:, ::1]
_V = types.float64[::1]
#: kt, q, v, a, fext, tau, dtau_dq, dtau_dv, M: any other argument type raises TypeError (the
#: Python layer then converts), instead of compiling a new version
STATE_SIGNATURE = types.int64(_M, _V, _V, _V, _M, _V, _M, _M, _M)
#: kt, work, q, v, tau, fext, qdd, dqdd_dq, dqdd_dv, Minv
FD_SIGNATURE = types.int64(_M, _M, _V, _V, _V, _M, _V, _M, _M, _M)
#: kt, q, v, tau, out (3, nv, nv): dqdd_dq, dqdd_dv, Minv (no external wrenches; five arguments
#: to dispatch instead of ten)
FD_FAST_SIGNATURE = types.int64(_M, _V, _V, _V, types.float64[:, :, ::1])


@njit(cache=True, fastmath={"contract"})
def zero_unrelated(ki, nv, dq, dv, M):
    """Zero the entries (r, c) of dq, dv and M whose DOFs are on no common supporting chain (the
    entries :func:`derivatives_unchecked` leaves as they are).  With the depth-first numbering
    (the DOFs of the subtree of link k are idx_v[k] .. idx_v[k] + sub[k] - 1, checked here:
    every subtree's range inside its parent's), those of row r are the columns from the end of
    r's subtree on, and the transposed entries; otherwise every entry is zeroed."""
    L = ki.shape[0]
    sub = np.empty(L, dtype=np.int64)
    subtree_dofs(ki, sub)
    nested = True
    for k in range(L):
        iv, p = ki[k, T.IDX_V], ki[k, T.PARENT]
        lo, hi = (ki[p, T.IDX_V] + ki[p, T.NV], ki[p, T.IDX_V] + sub[p]) if p >= 0 else (0, nv)
        if iv < lo or iv + sub[k] > hi or p >= k:
            nested = False
    if not nested:
        for i in range(nv):
            for j in range(nv):
                dq[i, j] = 0.0
                dv[i, j] = 0.0
                M[i, j] = 0.0
        return
    for k in range(L):
        iv, end = ki[k, T.IDX_V], ki[k, T.IDX_V] + sub[k]
        for r in range(iv, iv + ki[k, T.NV]):
            for c in range(end, nv):
                dq[r, c] = 0.0
                dv[r, c] = 0.0
                M[r, c] = 0.0
                dq[c, r] = 0.0
                dv[c, r] = 0.0
                M[c, r] = 0.0


@njit(cache=True, fastmath={"contract"})
def all_finite(x, y, z):
    """Whether every entry of the three matrices is finite: one pass, no branch per entry
    (``inf * 0`` and ``nan * 0`` are nan)."""
    acc = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            acc += x[i, j] * 0.0 + y[i, j] * 0.0 + z[i, j] * 0.0
    return acc == 0.0


#: up to this many DOF the forward derivatives invert the GIM densely (:func:`cholesky_inverse`,
#: about nv^3 / 2 multiplications) and solve for qdd with it: below it that costs less than the
#: forward-dynamics pass and the recursive sweep of :func:`.gim.minv_from_factors` (panda, 9 DOF:
#: about 0.6 us against 3.3 us)
DENSE_MINV_MAX = 20


@njit(cache=True, fastmath={"contract"})
def cholesky_inverse(M, Minv, W):
    """Minv = M^-1 for a symmetric positive definite M by ``M = L L^T``: ``W = L^-1`` (lower; L in
    W's upper part first), ``Minv = W^T W``.  False (Minv unset) if a pivot is not larger than
    ``SINGULAR_RTOL`` times M's largest diagonal entry (then the caller takes the recursive
    forward dynamics, which names the joint of a singular articulated inertia)."""
    n = M.shape[0]
    tol = 0.0
    for j in range(n):
        tol = max(tol, M[j, j])
    tol *= SINGULAR_RTOL
    for j in range(n):  # L^T, row j, into W's upper triangle
        s = M[j, j]
        for k in range(j):
            s -= W[k, j] * W[k, j]
        if not s > tol:
            return False
        d = np.sqrt(s)
        W[j, j] = d
        for i in range(j + 1, n):
            t = M[j, i]
            for k in range(j):
                t -= W[k, j] * W[k, i]
            W[j, i] = t / d
    for j in range(n):  # L^-1 column j into W's lower part: W[i, j], i >= j (L[i, k] = W[k, i])
        Minv[j, j] = 1.0 / W[j, j]  # the diagonal of L^-1, kept in Minv while L's is in use
        for i in range(j + 1, n):
            t = W[j, i] * Minv[j, j]
            for k in range(j + 1, i):
                t += W[k, i] * W[k, j]
            W[i, j] = -t / W[i, i]
    for j in range(n):
        W[j, j] = Minv[j, j]
    for i in range(n):  # Minv = W^T W (lower-triangular W): entries k >= max(i, j)
        for j in range(i, n):
            t = 0.0
            for k in range(j, n):
                t += W[k, i] * W[k, j]
            Minv[i, j] = t
            Minv[j, i] = t
    return True


@njit(cache=True, fastmath={"contract"})
def negated_products(Minv, X, Y, out_x, out_y):
    """``out_x = -Minv X``, ``out_y = -Minv Y`` (two square products: one nv x 2 nv product runs
    slower in BLAS here), and whether every entry of the results and of Minv is finite (one pass,
    no branch per entry: ``inf * 0`` and ``nan * 0`` are nan)."""
    n = Minv.shape[0]
    np.dot(Minv, X, out_x)
    np.dot(Minv, Y, out_y)
    acc = 0.0
    for i in range(n):
        for j in range(n):
            x, y = -out_x[i, j], -out_y[i, j]
            out_x[i, j] = x
            out_y[i, j] = y
            acc += x * 0.0 + y * 0.0 + Minv[i, j] * 0.0
    return acc == 0.0


@njit(cache=True, fastmath={"contract"})
def fd_derivatives_unchecked(ki, kf, work, q, v, tau, fext, qdd, ddq, ddv, Minv):
    """qdd, ``dqdd/dq``, ``dqdd/dv`` and ``M^-1`` for checked inputs (see the module): status 0,
    k + 1 for a singular articulated inertia of link k (:func:`.entry.forward_dynamics_passes`)
    or -3 (a non-finite result)."""
    L, nv = ki.shape[0], v.shape[0]
    ws = workspace(L, nv)
    mats = np.empty((4, nv, nv))  # dtau_dq, dtau_dv, M, scratch
    dq, dv, M, W = mats[0], mats[1], mats[2], mats[3]
    vecs = np.zeros((2, nv))  # bias, zero
    bias, zero = vecs[0], vecs[1]
    zero_unrelated(ki, nv, dq, dv, M)
    dense = nv <= DENSE_MINV_MAX
    if dense:
        kinematics_pass(ki, kf, q, v, zero, fext, ws)
        composite_pass(ki, kf, zero, bias, dq, dv, M, ws, False)  # M, dtau_dv, bias = ID(q, v, 0)
        dense = cholesky_inverse(M, Minv, W)
    if dense:
        for i in range(nv):  # qdd = M^-1 (tau - bias)
            s = 0.0
            for j in range(nv):
                s += Minv[i, j] * (tau[j] - bias[j])
            qdd[i] = s
    else:  # the O(n) forward dynamics (names a singular articulated inertia) and its factors
        w = _work(ki, work, nv)
        status = forward_dynamics_passes(ki, kf, w, q, v, tau, fext, qdd, True)  # keeps Ihat, Ihat^-1
        if status:
            return status
        minv_from_factors(ki, kf, w, nv, Minv)
    status = finite_result(qdd)
    if status:
        return status
    if nv <= DENSE_MINV_MAX:
        acceleration_pass(ki, qdd, dq, ws)  # dtau_dq at (q, v, qdd)
    else:  # the fused passes at qdd (the forward dynamics came first)
        kinematics_pass(ki, kf, q, v, qdd, fext, ws)
        composite_pass(ki, kf, qdd, bias, dq, dv, M, ws, True)
    if not negated_products(Minv, dq, dv, ddq, ddv):
        return -3
    return 0


@njit_declared(STATE_SIGNATURE, fastmath={"contract"})
def inverse_dynamics_derivatives_state(kt, q, v, a, fext, tau, dq, dv, M):
    """Entry: checks the state (:func:`.entry.valid_state`), then the derivatives.  Status 0, -1
    (a value), -2 (a shape) or -3 (finite inputs, non-finite result)."""
    ki = kt.view(T.INT)
    nv = v.shape[0]
    status = valid_state(ki, q, v, a, fext, tau, np.empty((0, T.W)), nv)
    if status:
        return status
    if dq.shape != (nv, nv) or dv.shape != (nv, nv) or M.shape != (nv, nv):
        return -2
    zero_unrelated(ki, nv, dq, dv, M)
    derivatives_unchecked(ki, kt, q, v, a, fext, tau, dq, dv, M)
    if not all_finite(dq, dv, M):
        return -3
    return 0


@njit(cache=True, parallel=True)
def inverse_dynamics_derivatives_batch(kt, Q, V, A, FEXT, TAU, DQ, DV, MM, status):
    """The derivatives of every state of a leading batch axis, in parallel (FEXT (B, L, 6) or
    (0, 0, 6) for none)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        status[b] = inverse_dynamics_derivatives_state(kt, Q[b], V[b], A[b], fext, TAU[b], DQ[b], DV[b], MM[b])


@njit_declared(FD_SIGNATURE, fastmath={"contract"})
def forward_dynamics_derivatives_state(kt, work, q, v, tau, fext, qdd, ddq, ddv, Minv):
    """Entry: checks the state (:func:`.entry.valid_state`), then qdd = FD(q, v, tau) and its
    derivatives (:func:`fd_derivatives_unchecked`).  Status as
    :func:`inverse_dynamics_derivatives_state`, or k + 1 for a singular articulated inertia of
    link k."""
    ki, kf = kt.view(T.INT), kt
    nv = _nv(ki)
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    if ddq.shape != (nv, nv) or ddv.shape != (nv, nv) or Minv.shape != (nv, nv):
        return -2
    return fd_derivatives_unchecked(ki, kf, work, q, v, tau, fext, qdd, ddq, ddv, Minv)


@njit_declared(FD_FAST_SIGNATURE, fastmath={"contract"})
def forward_dynamics_derivatives_fast(kt, q, v, tau, out):
    """:func:`forward_dynamics_derivatives_state` without external wrenches, the results in one
    (3, nv, nv) block (``dqdd/dq``, ``dqdd/dv``, ``M^-1``) and the work array (needed beyond
    :data:`DENSE_MINV_MAX` DOF) allocated here."""
    ki = kt.view(T.INT)
    nv = _nv(ki)
    if out.shape[0] != 3 or out.shape[1] != nv or out.shape[2] != nv:
        return -2
    fext, work, qdd = np.empty((0, 6)), np.empty((0, T.W)), np.empty(nv)
    status = valid_state(ki, q, v, tau, fext, qdd, work, nv)
    if status:
        return status
    return fd_derivatives_unchecked(ki, kt, work, q, v, tau, fext, qdd, out[0], out[1], out[2])


@njit(cache=True, parallel=True)
def forward_dynamics_derivatives_batch(kt, Q, V, TAU, FEXT, QDD, DQ, DV, MINV, status):
    """:func:`forward_dynamics_derivatives_state` for every state of a leading batch axis, in
    parallel (each state with its own work array)."""
    B = Q.shape[0]
    none = np.zeros((0, 6))
    for b in prange(B):
        fext = FEXT[b] if FEXT.shape[0] > 0 else none
        work = np.empty((0, T.W))
        status[b] = forward_dynamics_derivatives_state(
            kt, work, Q[b], V[b], TAU[b], fext, QDD[b], DQ[b], DV[b], MINV[b]
        )
