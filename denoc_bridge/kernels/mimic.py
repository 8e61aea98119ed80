"""The maps of a model with ``<mimic>`` joints as constraints (reduced coordinates, Pinocchio's
mimic layout) and the configuration maps of its stages, for the numba runs of a mimic model with
loop closures (:mod:`.mimic_loops`, :mod:`.systems` MimicLoopSystem).

The maps between the reduced state (q_r, v_r) and the tree's (:mod:`denoc_bridge.constraints.mimic`)
come as two tuples of arrays, ``im = (q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col)`` (int64)
and ``fm = (mult, off, scale)`` (the compiled entries take them packed in two flat arrays,
:func:`denoc_bridge.multibody.mimic.pack_maps`, :func:`unpack`): ``q_keep``/``v_keep`` (the tree entries of the reduced coordinates),
``s_q``, ``m_q``, ``s_v``, ``m_v`` (the q and v index of each mimic joint and of its
mimicked joint), ``mult``, ``off`` and ``circ`` (continuous pair), ``col``/``scale``
(``v_full = G v_r``: ``v_full[i] = scale[i] v_r[col[i]]``).

A mimic model without loops is compiled in Cython (``denoc_bridge/core/mimic.pxi``: its inverse
and forward dynamics, GIM and inverse GIM; ``core/run.pyx``: its fixed-step runs, the stops
included); numba's accelerations, stages and stops of it are gone (issue 49).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.configuration import dexpinv, integrate
from denoc_bridge.kernels.integrators import TAU_CONSTANT, TAU_TABLE


@njit(cache=True)
def expand_configuration(qr, q_keep, s_q, m_q, mult, off, circ, qf):
    """qf = G q_r + offset (a continuous mimic joint: angle = mult atan2(sin, cos) + off)."""
    for i in range(q_keep.shape[0]):
        qf[q_keep[i]] = qr[i]
    for j in range(s_q.shape[0]):
        if circ[j]:
            angle = mult[j] * np.arctan2(qf[m_q[j] + 1], qf[m_q[j]]) + off[j]
            qf[s_q[j]] = np.cos(angle)
            qf[s_q[j] + 1] = np.sin(angle)
        else:
            qf[s_q[j]] = mult[j] * qf[m_q[j]] + off[j]


@njit(cache=True)
def expand_velocity(xr, col, scale, xf):
    """xf = G x_r."""
    for i in range(col.shape[0]):
        xf[i] = xr[col[i]] * scale[i]


@njit(cache=True, inline="always")
def unpack(imap, fmap):
    """The tuples ``im``, ``fm`` of the module docstring, as views of ``pack_maps``'s arrays."""
    nq, nv, nc, nvf = imap[0], imap[1], imap[2], imap[3]
    o = 4
    q_keep = imap[o : o + nq]
    o += nq
    v_keep = imap[o : o + nv]
    o += nv
    s_q, m_q, s_v, m_v, circ = (
        imap[o : o + nc],
        imap[o + nc : o + 2 * nc],
        imap[o + 2 * nc : o + 3 * nc],
        imap[o + 3 * nc : o + 4 * nc],
        imap[o + 4 * nc : o + 5 * nc],
    )
    col = imap[o + 5 * nc : o + 5 * nc + nvf]
    return (q_keep, v_keep, s_q, m_q, s_v, m_v, circ, col), (fmap[0:nc], fmap[nc : 2 * nc], fmap[2 * nc : 2 * nc + nvf])


# ----------------------------------------------------------------------------- the stages
@njit(cache=True)
def mimic_integrate(ki, qr, xir, im, fm, nqf, f, out):
    """out = q_r (+) xi_r: the tree's q_full (+) G xi_r, its kept entries (out may be q_r)."""
    q_keep, col, scale = im[0], im[7], fm[2]
    nvf = col.shape[0]
    qf, xf, q1 = f[0, :nqf], f[1, :nvf], f[2, :nqf]
    expand_configuration(qr, q_keep, im[2], im[3], fm[0], fm[1], im[6], qf)
    expand_velocity(xir, col, scale, xf)
    integrate(ki, qf, xf, q1)
    for i in range(q_keep.shape[0]):
        out[i] = q1[q_keep[i]]


@njit(cache=True)
def mimic_dexpinv(ki, xir, vr, im, fm, f, out):
    """out = the RKMK rate of xi_r: the tree's dexp_{-G xi}^-1 (G v), its kept entries."""
    v_keep, col, scale = im[1], im[7], fm[2]
    nvf = col.shape[0]
    xf, vf, r = f[1, :nvf], f[3, :nvf], f[4, :nvf]
    expand_velocity(xir, col, scale, xf)
    expand_velocity(vr, col, scale, vf)
    dexpinv(ki, xf, vf, r)
    for i in range(v_keep.shape[0]):
        out[i] = r[v_keep[i]]


@njit(cache=True)
def actuation(tau_mode, taus, n, out):
    """tau_n: zero, the constant vector or row n of the table."""
    if tau_mode == TAU_CONSTANT:
        out[:] = taus[0]
    elif tau_mode == TAU_TABLE:
        out[:] = taus[n]
    else:
        out[:] = 0.0
