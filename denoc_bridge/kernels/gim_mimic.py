"""The inverse GIM of a model with mimic joints in one compiled call, from the tree's O(n^2)
inverse (:mod:`.gim`): ``M_r^-1 = (G^T M G)^-1 = P[i, i]`` with
``P = M^-1 - W (K W)^-1 W^T``, ``W = M^-1 K^T`` (:mod:`denoc_bridge.constraints.mimic`), K the
mimic rows ``e_s - multiplier e_m``; no dense inverse of the GIM."""

import numpy as np
from numba import njit

from denoc_bridge.kernels.entry import inverse_mass_matrix_state
from denoc_bridge.kernels.mimic import _valid, expand_configuration, unpack


@njit(cache=True, fastmath={"contract"})
def mimic_inverse_mass_matrix_entry(kt, work, imap, fmap, nqf, qr, out):
    """``M_r^-1`` at the reduced configuration qr into ``out`` (nv, nv): 0, the status of the checks
    or of the tree's inverse (then the Python path names the problem or takes the dense form), or
    -4 when ``K M^-1 K^T`` is not positive definite."""
    im, fm = unpack(imap, fmap)
    q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col = im
    mult, off, scale = fm
    nv, nvf, nc = v_keep.shape[0], col.shape[0], s_v.shape[0]
    status = _valid(q_keep.shape[0], 0, qr, qr[:0], qr[:0])
    if status or out.shape[0] != nv or out.shape[1] != nv:
        return status if status else -2
    qf, Minv = np.empty(nqf), np.empty((nvf, nvf))
    expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf)
    status = inverse_mass_matrix_state(kt, work, qf, Minv)
    if status:
        return status
    for a in range(nv):
        for b in range(nv):
            out[a, b] = Minv[v_keep[a], v_keep[b]]
    if nc == 0:
        return 0
    W = np.empty((nvf, nc))  # W = M^-1 K^T
    for i in range(nvf):
        for r in range(nc):
            W[i, r] = Minv[i, s_v[r]] - mult[r] * Minv[i, m_v[r]]
    S = np.empty((nc, nc))  # K W, then its Cholesky factor (lower)
    for a in range(nc):
        for r in range(nc):
            S[a, r] = W[s_v[a], r] - mult[a] * W[m_v[a], r]
    for j in range(nc):
        s = S[j, j]
        for m in range(j):
            s -= S[j, m] * S[j, m]
        if not s > 0.0:
            return -4
        S[j, j] = np.sqrt(s)
        for i in range(j + 1, nc):
            s = S[i, j]
            for m in range(j):
                s -= S[i, m] * S[j, m]
            S[i, j] = s / S[j, j]
    Y = np.empty((nc, nv))  # Y = L^-1 W[i]^T, then P = M^-1[i, i] - Y^T Y
    for b in range(nv):
        for j in range(nc):
            s = W[v_keep[b], j]
            for m in range(j):
                s -= S[j, m] * Y[m, b]
            Y[j, b] = s / S[j, j]
    for a in range(nv):
        for b in range(a, nv):
            s = 0.0
            for j in range(nc):
                s += Y[j, a] * Y[j, b]
            x = 0.5 * (out[a, b] + out[b, a]) - s
            out[a, b] = x
            out[b, a] = x
    return 0
