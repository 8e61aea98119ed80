"""The packed model of a tree with loop closures as numba's mimic-loop kernels read it
(:mod:`.mimic_loops`, :class:`.systems.MimicLoopSystem`): :func:`unpack` carves the arrays that
:func:`denoc_bridge.constraints.packed.compiled` builds once per model.  The constrained dynamics,
the projection and the runs of a tree with loops are the Cython core's
(``denoc_bridge/core/loops.pyx``, ``run.pyx``), on the same arrays and scratch layout.

``pi``  int64 (1 + L + n_loops, 6): row 0 = [L, n_loops, m rows, nv, nq, 0]; row 1 + k =
        [parent, joint type, idx_q, nq, idx_v, nv] of link k; row 1 + L + l = [type code,
        link1, link2, first row, 0, 0] of cut joint l (n_loops counts the cut joints, the
        joint couplings and their terms: the layout of a coupling's rows is in
        :mod:`.loop_rows`);
``pf``  float64 (1 + L + n_loops, 30): row 1 + k = [axis, axis2, joint rotation (9,
        row-major), joint translation] of link k; row 1 + L + l = [R1 (9), p1, R2 (9), p2, b1,
        b2] of cut joint l, b1 and b2 the normals of its axis in the joint frame (a coupling's
        value, a term's coefficient in column 0);
``sb``  float64 scratch of ``scratch_size(L, nv, m)`` numbers (``denoc_bridge.core.loops``),
        carved into the tuples ``ws`` (kinematics) and ``ds`` (constraints) by :func:`unpack`.

The world kinematics and the cut joints' rows are in :mod:`denoc_bridge.kernels.loop_rows`.
"""

import numpy as np
from numba import njit
from numpy.lib.stride_tricks import as_strided


@njit(cache=True)
def ds_start(L, nv):
    """Where ``ds`` begins in the scratch (``ws`` comes first): ``denoc_bridge.core.loops``'s
    ``ds_start``, the same layout (tests/core/test_loops_entries.py)."""
    return 24 * L + 18 * nv + 147


@njit(cache=True, inline="always")
def _take(sb, at, n):
    return sb[at : at + n], at + n


@njit(cache=True, inline="always")
def _take2(sb, at, n0, n1):
    """The next n0 n1 numbers of the scratch as a C-ordered (n0, n1) array: a strided view
    (``reshape`` calls a helper function, 13 ns each)."""
    return as_strided(sb[at:], shape=(n0, n1), strides=(8 * n1, 8)), at + n0 * n1


@njit(cache=True, inline="always")
def _dense(sb, at, n0, n1):
    """As :func:`_take2`, by ``reshape``: an array known to be contiguous, whose loops
    vectorise (the dense m x nv and m x m blocks)."""
    return sb[at : at + n0 * n1].reshape((n0, n1)), at + n0 * n1


@njit(cache=True, inline="always")
def unpack(pi, pf, sb):
    """(mt, lt, ws, ds): the tree, the cut joints and the scratch views (see the module
    docstring)."""
    L, nl, m, nv = pi[0, 0], pi[0, 1], pi[0, 2], pi[0, 3]
    J, K = pi[1 : L + 1], pf[1 : L + 1]
    mt = (J[:, 0], J[:, 1], K[:, 0:3], K[:, 3:6], K[:, 6:15], K[:, 15:18], J[:, 2], J[:, 3], J[:, 4], J[:, 5])
    lt = (pi[L + 1 : L + 1 + nl], pf[L + 1 : L + 1 + nl])
    at = 0
    R, at = _take(sb, at, 9 * L)
    o, at = _take2(sb, at, L, 3)
    Pw, at = _take2(sb, at, nv, 6)
    w, at = _take2(sb, at, L, 3)
    od, at = _take2(sb, at, L, 3)
    wd0, at = _take2(sb, at, L, 3)
    odd0, at = _take2(sb, at, L, 3)
    RJ, at = _take2(sb, at, 3, 3)
    pJ, at = _take(sb, at, 3)
    tmpR, at = _take2(sb, at, 3, 3)
    Pl, at = _take2(sb, at, 6, 6)
    c, at = _take(sb, at, 6)
    t3, at = _take(sb, at, 3)
    d, at = _take(sb, at, 3)
    u, at = _take(sb, at, 3)
    Jb, at = _take(sb, at, 12 * nv)
    lr, at = _take2(sb, at, 25, 3)
    ws = (
        as_strided(R, shape=(L, 3, 3), strides=(72, 24, 8)),
        o,
        Pw,
        w,
        od,
        wd0,
        odd0,
        RJ,
        pJ,
        tmpR,
        Pl,
        c,
        t3,
        d,
        u,
        Jb.reshape((4, 3, nv)),
        lr,
    )
    at = ds_start(L, nv)
    phi, at = _take(sb, at, m)
    C, at = _dense(sb, at, m, nv)
    gamma, at = _take(sb, at, m)
    Q, at = _dense(sb, at, m, nv)
    Cr, at = _dense(sb, at, m, nv)
    Y, at = _dense(sb, at, m, nv)
    Kb, at = _dense(sb, at, m, m)
    lam, at = _take(sb, at, m)
    rhs, at = _take(sb, at, m)
    zero, at = _take(sb, at, nv)
    rows, at = _take(sb, at, m)  # int64, in the scratch's bytes
    xs, at = _take(sb, at, nv)
    ys, at = _take(sb, at, nv)
    ds = (phi, C, gamma, Q, rows.view(np.int64), Cr, Y, Kb, lam, rhs, zero, xs, ys)
    return mt, lt, ws, ds
