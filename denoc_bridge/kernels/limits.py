"""Joint position limits in a run: a perfectly plastic stop at the limit, in the kinetic-energy
metric.

After a step, a limited joint (``lq``/``lv``: its q and v index, ``lo`` < ``hi`` its limits) that
is past a limit is put back on it, and the joints that sit on a limit and move outwards are
stopped by the smallest impulse in the kinetic-energy metric: with E the unit columns of those
joints,

    v+ = v - M^-1 E (E^T M^-1 E)^-1 E^T v          (E^T v+ = 0)

the impulse ``M (v+ - v) = E lambda`` acts at the stopped joints only (a plastic impact on each:
the kinetic energy drops by ``1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v)`` and never grows).  The
columns ``M^-1 e_i`` come from the factors of the O(n) forward dynamics at q (000 Table 3), as
the loops' projections do.  A joint that the impulse sets moving outwards at another limit
joins the set (at most one pass per limited joint).

Scratch ``S`` (:func:`scratch_shape`): rows 0..n-1 the columns Y = (M^-1 E)^T, then the Gram
matrix, then rows for E^T v, lambda, a unit vector and zeros.  ``active`` (int64, n) holds the
stopped joints.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.lagrange import cholesky_solve, factorised_forward_dynamics, solve


def scratch_shape(n: int, nv: int) -> tuple[int, int]:
    """Shape of the scratch ``S`` for n limited joints of a tree with nv DOFs."""
    return 2 * n + 4, max(nv, n, 1)


@njit(cache=True)
def clamp_positions(q, lq, lo, hi):
    """Put the limited joints past a limit back on it; returns how many moved."""
    moved = 0
    for j in range(lq.shape[0]):
        x = q[lq[j]]
        if x < lo[j]:
            q[lq[j]] = lo[j]
            moved += 1
        elif x > hi[j]:
            q[lq[j]] = hi[j]
            moved += 1
    return moved


@njit(cache=True, inline="always")
def _outwards(q, v, lq, lv, lo, hi, j):
    """Joint j sits on a limit and moves out of the range."""
    return (q[lq[j]] <= lo[j] and v[lv[j]] < 0.0) or (q[lq[j]] >= hi[j] and v[lv[j]] > 0.0)


@njit(cache=True)
def enforce_limits(kt, work, q, v, lq, lv, lo, hi, S, active):
    """Clamp q to the limits and stop the joints that move outwards at them (module docstring).
    Returns (joints stopped, status of the forward dynamics that gives the factors of M: 0, or
    k + 1 for a singular articulated inertia, or -3 when E^T M^-1 E is singular, the kinetic
    energy the stops took: 1/2 lambda . E^T v summed over the passes)."""
    n, nv = lq.shape[0], v.shape[0]
    taken = 0.0
    if n == 0:
        return 0, 0, taken
    moved = clamp_positions(q, lq, lo, hi)
    na = 0
    for j in range(n):
        if _outwards(q, v, lq, lv, lo, hi, j):
            active[na] = j
            na += 1
    if na == 0:
        return moved, 0, taken
    ki = kt.view(np.int32)
    Y, G = S[:n, :nv], S[n : 2 * n, :n]
    ev, lam, e, zero = S[2 * n, :n], S[2 * n + 1, :n], S[2 * n + 2, :nv], S[2 * n + 3, :nv]
    zero[:] = 0.0
    status = factorised_forward_dynamics(ki, kt, work, q, zero, zero, work[0:0], e)  # the factors of M at q
    if status:
        return moved, status, taken
    done = 0
    for _ in range(n):
        for k in range(done, na):  # Y_k = M^-1 e_(joint active[k])
            e[:] = 0.0
            e[lv[active[k]]] = 1.0
            solve(ki, kt, work, e, Y[k], ki.shape[0])
        done = na
        for k in range(na):
            ev[k] = v[lv[active[k]]]
            for m in range(k + 1):
                G[k, m] = Y[m, lv[active[k]]]  # E^T M^-1 E, lower triangle
        if not cholesky_solve(G[:na, :na], ev[:na], lam[:na]):
            return moved, -3, taken
        for k in range(na):  # 1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v): the kinetic energy the stop takes
            taken += 0.5 * lam[k] * ev[k]
        for k in range(na):  # v -= M^-1 E lambda
            for i in range(nv):
                v[i] -= lam[k] * Y[k, i]
        for k in range(na):
            v[lv[active[k]]] = 0.0  # exactly (round-off)
        grew = False
        for j in range(n):  # a joint the impulse set moving outwards at its limit joins
            if _outwards(q, v, lq, lv, lo, hi, j):
                seen = False
                for k in range(na):
                    seen = seen or active[k] == j
                if not seen:
                    active[na] = j
                    na += 1
                    grew = True
        if not grew:
            break
    return moved + na, 0, taken
