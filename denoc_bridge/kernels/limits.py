"""Joint position limits in a run: a perfectly plastic stop at the limit, in the kinetic-energy
metric.

After a step, a limited joint (``lq``/``lv``: its q and v index, ``lo`` < ``hi`` its limits) that
is past a limit is put back on it, and the joints that sit on a limit and move outwards are
stopped by the smallest impulse in the kinetic-energy metric: with E the unit columns of those
joints,

    v+ = v - M^-1 E (E^T M^-1 E)^-1 E^T v          (E^T v+ = 0)

the impulse ``M (v+ - v) = E lambda`` acts at the stopped joints only (a plastic impact on each:
the kinetic energy drops by ``1/2 (E^T v)^T (E^T M^-1 E)^-1 (E^T v)`` and never grows).  The
energy the limits take in a step is that drop minus what putting q back on the limit adds to the
potential energy (gravity and the joint springs, :func:`.energy.energies_state`): a joint that
rests on a limit under a load overshoots by O(dt^2) each step, and the two cancel, as they do
physically (a resting contact takes no energy).  The
columns ``M^-1 e_i`` come from the factors of the O(n) forward dynamics at q (000 Table 3), as
the loops' projections do.  A joint that the impulse sets moving outwards at another limit
joins the set (at most one pass per limited joint).

A model with ``<mimic>`` joints (reduced coordinates, :mod:`.mimic`) is stopped in the same
metric with its mimic rows ``K`` (``K v = 0``) stacked above the unit rows of the stopped joints,
as the Lagrange solves of the constraints stack their rows (004 eqs. 13-14):

    B = [K; E^T],   (B M^-1 B^T) mu = (0, E^T v),   v+ = v - M^-1 B^T mu

so that ``K v+ = 0`` still holds and ``E^T v+ = 0``; the kinetic energy drops by
``1/2 mu . (0, E^T v)``.  The limits of a mimic joint act on the joint it mimics
(:func:`denoc_bridge.simulation.mimic.limit_arrays`).  A tree is the case ``K`` with no rows.

Scratch ``S`` (:func:`scratch_shape`): rows 0..m-1 the columns Y = (M^-1 B^T)^T (m = rows of
``K`` + limited joints), then the Gram matrix, then rows for the right-hand side, mu, a unit
vector and zeros.  ``active`` (int64, n) holds the stopped joints.
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels.compiling import njit_one_version
from denoc_bridge.kernels.energy import energies_state
from denoc_bridge.kernels.lagrange import cholesky_solve, factorised_forward_dynamics, solve


def scratch_shape(n: int, nv: int, n_rows: int = 0) -> tuple[int, int]:
    """Shape of the scratch ``S`` for n limited joints of a tree with nv DOFs and ``n_rows``
    constraint rows kept (a mimic model's ``K``)."""
    m = n + n_rows
    return 2 * m + 4, max(nv, m, 1)


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


@njit(cache=True)
def _potential(kt, work, q, K, q_rest, springs, zero, d):
    """The potential energy at q (gravity and the joint springs when ``springs``)."""
    zero[:] = 0.0
    return energies_state(kt, work, q, zero, K, q_rest, springs, d)[1]


@njit(cache=True, inline="always")
def _outside(q, lq, lo, hi):
    """A limited joint is past a limit."""
    for j in range(lq.shape[0]):
        if q[lq[j]] < lo[j] or q[lq[j]] > hi[j]:
            return True
    return False


@njit(cache=True, inline="always")
def _outwards(q, v, lq, lv, lo, hi, j):
    """Joint j sits on a limit and moves out of the range."""
    return (q[lq[j]] <= lo[j] and v[lv[j]] < 0.0) or (q[lq[j]] >= hi[j] and v[lv[j]] > 0.0)


@njit_one_version()
def _impulse(ki, kt, work, vf, R, lvf, active, na, S, done):
    """One pass of the stop on the tree's velocity ``vf`` (module docstring): the rows R that vf
    keeps, then the unit rows of the joints ``active[:na]`` (tree v index ``lvf``);
    (B M^-1 B^T) mu = (0, E^T vf), vf -= M^-1 B^T mu.  The columns of the first ``done`` rows are
    those of the previous pass.  Returns (False if B M^-1 B^T is singular, energy taken)."""
    nr, nv, cap = R.shape[0], vf.shape[0], (S.shape[0] - 4) // 2
    m = nr + na
    Y, G = S[:cap, :nv], S[cap : 2 * cap, :cap]
    rhs, mu, e = S[2 * cap, :cap], S[2 * cap + 1, :cap], S[2 * cap + 2, :nv]
    for r in range(done, m):  # Y_r = M^-1 b_r
        if r < nr:
            e[:] = R[r]
        else:
            e[:] = 0.0
            e[lvf[active[r - nr]]] = 1.0
        solve(ki, kt, work, e, S[r][:nv], ki.shape[0])  # = Y[r], typed contiguous: the FD kernels serve it
    for r in range(m):  # B M^-1 B^T (lower triangle) and (0, E^T vf)
        for c in range(r + 1):
            if r < nr:
                x = 0.0
                for i in range(nv):
                    x += R[r, i] * Y[c, i]
                G[r, c] = x
            else:
                G[r, c] = Y[c, lvf[active[r - nr]]]
        rhs[r] = 0.0 if r < nr else vf[lvf[active[r - nr]]]
    if not cholesky_solve(G[:m, :m], rhs[:m], mu[:m]):
        return False, 0.0
    taken = 0.0
    for r in range(nr, m):  # 1/2 mu . (0, E^T v): the kinetic energy the stop takes
        taken += 0.5 * mu[r] * rhs[r]
    for r in range(m):  # v -= M^-1 B^T mu
        for i in range(nv):
            vf[i] -= mu[r] * Y[r, i]
    return True, taken


@njit_one_version()
def _stop(ki, kt, work, q, v, vf, v_keep, lq, lv, lvf, lo, hi, R, S, active, na):
    """The passes of the stop: the joints that the impulse sets moving outwards at another limit
    join (at most one pass per limited joint).  ``v`` is the state's velocity, ``vf`` the tree's
    (the same array for a tree: ``v_keep`` empty; a mimic model: ``v = vf[v_keep]``).  Returns
    (status 0 or -3, energy taken, joints stopped)."""
    n, done, taken = lq.shape[0], 0, 0.0
    for _ in range(n):
        ok, took = _impulse(ki, kt, work, vf, R, lvf, active, na, S, done)
        if not ok:
            return -3, taken, na
        taken += took
        done = R.shape[0] + na
        for i in range(v_keep.shape[0]):
            v[i] = vf[v_keep[i]]
        for k in range(na):
            v[lv[active[k]]] = 0.0  # exactly (round-off)
            vf[lvf[active[k]]] = 0.0
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
    return 0, taken, na


@njit(cache=True, inline="always")
def _active(q, v, lq, lv, lo, hi, active):
    """The limited joints on a limit and moving outwards into ``active``; returns how many."""
    na = 0
    for j in range(lq.shape[0]):
        if _outwards(q, v, lq, lv, lo, hi, j):
            active[na] = j
            na += 1
    return na


@njit(cache=True)
def enforce_limits(kt, work, q, v, lq, lv, lo, hi, S, active, K, q_rest, springs):
    """Clamp q to the limits and stop the joints that move outwards at them (module docstring);
    ``K``, ``q_rest``, ``springs``: the joint springs of the run.  Returns (joints stopped,
    status of the forward dynamics that gives the factors of M: 0, or k + 1 for a singular
    articulated inertia, or -3 when E^T M^-1 E is singular, the energy the limits took: the
    kinetic energy of the stops, 1/2 lambda . E^T v summed over the passes, less the potential
    energy the clamp added)."""
    if lq.shape[0] == 0:
        return 0, 0, 0.0
    nv = v.shape[0]
    zero, d = S[S.shape[0] - 1, :nv], S[S.shape[0] - 2, :nv]
    moved, taken = 0, 0.0
    if _outside(q, lq, lo, hi):
        pe = _potential(kt, work, q, K, q_rest, springs, zero, d)
        moved = clamp_positions(q, lq, lo, hi)
        taken = pe - _potential(kt, work, q, K, q_rest, springs, zero, d)
    na = _active(q, v, lq, lv, lo, hi, active)
    if na == 0:
        return moved, 0, taken
    ki = kt.view(np.int32)
    zero[:] = 0.0
    status = factorised_forward_dynamics(ki, kt, work, q, zero, zero, work[0:0], d)
    if status:  # the factors of M at q
        return moved, status, taken
    status, took, na = _stop(ki, kt, work, q, v, v, lq[0:0], lq, lv, lv, lo, hi, S[0:0, :nv], S, active, na)
    return moved + na, status, taken + took
