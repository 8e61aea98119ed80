"""The contact time stepper compiled: runs of steps of the ``contact-euler`` method
(:mod:`denoc_bridge.simulation.contact` gives the scheme and keeps the Python step it is tested
against), one call for many steps.

One step from (q, v), as the Python step does it, line for line:

1. ``tau_a = tau + passive - dt K v + Kp (q_ref (-) q) - (Kd + dt Kp) v``: the joint springs and
   dampers and the posture hold, implicit (their ``dt D + dt^2 K`` is on the model's armature);
2. ``v_free = v + dt M^-1 (tau_a - h)``: the O(n) forward dynamics (000 Table 3);
3. the active contacts at q, ``G = J M^-1 J^T``, ``g = J v_free`` shifted by the gaps and the
   restitution, the impulses by the warm-started PGS (:func:`.contact_solver.pgs`);
4. ``v+ = v_free + (M^-1 J^T) lambda``, ``q+ = q (+) dt v+``, the position correction where a
   contact penetrates deeper than ``slop``.

A step that needs more than PGS (PGS does not converge: the Python layer's fallbacks, ADMM and
the all-sticking solution), or meets a non-finite value or a singular articulated inertia
(named there), is left undone: the run returns its index with the state as it was before it,
and the Python layer takes that step.

Arguments, grouped (every array float64 C-contiguous and writable, unless said):

* ``tree = (kt, kt0, work)``: the model's table with the implicit terms on its armature, its
  gravity-free twin (the Delassus operator), the work array;
* ``drive = (tau, damping, stiffness, spring_rate, q_rest, kp, q_ref, hold_rate, passive, hold)``:
  the constant joint forces, the joint springs and dampers (``passive``: the model has them) and
  the hold (``hold``: one is given), each (nv,) or (nq,);
* ``points``: the :class:`~denoc_bridge.constraints.contact.ContactSet`'s packed tree, points and
  grounds ``(pi, pf, sb, cl, cp, crad, cmar, lb, gB, goff, gmu, grest)`` and its buffers
  ``(J, Y, dist, pos, pair, Jw, Jx, zero)``;
* ``solver = (dt, tol, max_sweeps, slop, group_of_pair)``;
* ``state = (q, v, previous, work_done, lam)``: updated in place step by step; ``previous``
  (pairs, 3) the last impulses of each (point, ground) pair, ``work_done`` (1,) the contact work
  so far, ``lam`` (3 pairs,) the step's impulses (where PGS stopped, when it stalls);
* ``saves = (T, Q, V, A, TAU, F, P, W)`` and ``save_every``, as the trajectory holds them
  (``F``, ``P``: the contact forces and points).
"""

import numpy as np
from numba import njit

from denoc_bridge.kernels import tables as T
from denoc_bridge.kernels.configuration import difference, integrate
from denoc_bridge.kernels.contact import active_contacts, delassus
from denoc_bridge.kernels.contact_solver import pgs
from denoc_bridge.kernels.entry import forward_dynamics_fast

#: the status of a run: every step taken
DONE = 0
#: the step at the returned index needs the Python layer
PYTHON_STEP = 1
#: the same, because PGS stalled on its contact problem: ``lam[:3m]`` (the state's) holds where it
#: stopped, for the Python layer's fallbacks to start from without running it again
PGS_STALLED = 2
#: the position correction's solver: frictionless PGS to this tolerance in at most this many sweeps
CORRECTION_TOL = 1e-14
CORRECTION_SWEEPS = 10_000


@njit(cache=True)
def _all_finite(x):
    for i in range(x.shape[0]):
        if not np.isfinite(x[i]):
            return False
    return True


@njit(cache=True)
def _delassus_ok(kt0, work, q, J, r, Y, zero, G):
    """G[:r, :r] = J M^-1 J^T (:func:`.contact.delassus`); False for a singular articulated
    inertia or a G that is not finite."""
    if delassus(kt0, work, q, J, r, Y, zero, G):
        return False
    for i in range(r):
        if not _all_finite(G[i, :r]):
            return False
    return True


@njit(cache=True)
def applied_forces(ki, drive, q, v, diff, out):
    """``out = tau_a`` at (q, v) (step 1); ``diff`` (nv,) scratch.  The pull of the hold,
    ``Kp (q_ref (-) q)``, is left in ``diff`` (zero without a hold)."""
    tau, damping, stiffness, spring_rate, q_rest, kp, q_ref, hold_rate, passive, hold = drive
    nv = v.shape[0]
    out[:] = tau
    if passive:  # -K (q (-) q_rest) - D v, then -dt K v (implicit)
        difference(ki, q_rest, q, diff)
        for i in range(nv):
            out[i] = out[i] + (-damping[i] * v[i] - stiffness[i] * diff[i]) - spring_rate[i] * v[i]
    diff[:] = 0.0
    if hold:  # Kp (q_ref (-) q) - (Kd + dt Kp) v
        difference(ki, q, q_ref, diff)
        for i in range(nv):
            diff[i] = kp[i] * diff[i]
            out[i] = out[i] + diff[i] - hold_rate[i] * v[i]


@njit(cache=True)
def impulses(tree, points, solver, q, v, v_free, previous, G, lam, sigma, ids):
    """The active contacts at q and their impulses (step 3) into ``lam[:3m]``, their pair
    indices into ``ids[:m]``: returns (m, G) (G regrown if too small), m = -1 where G is singular
    or not finite, -2 where PGS does not converge (``lam[:3m]``: where it stopped)."""
    kt, kt0, work = tree
    pi, pf, sb, cl, cp, crad, cmar, lb, gB, goff, gmu, grest, J, Y, dist, pos, pair, Jw, Jx, zero = points
    dt, tol, max_sweeps = solver[0], solver[1], solver[2]
    m = active_contacts(pi, pf, sb, q, cl, cp, crad, cmar, lb, gB, goff, J, dist, pos, pair, Jw, Jx)
    if m == 0:
        return 0, G
    r, nv = 3 * m, v.shape[0]
    if r > G.shape[0]:
        G = np.zeros((r, r))
    if not _delassus_ok(kt0, work, q, J, r, Y, zero, G):
        return -1, G
    mu, g = np.empty(m), np.empty(r)
    for i in range(m):
        ids[i] = pair[i, 0] * gB.shape[0] + pair[i, 1]
        mu[i] = gmu[pair[i, 1]]
        for c in range(3):
            lam[3 * i + c] = previous[ids[i], c]
    for row in range(r):  # g = J v_free
        s = 0.0
        for j in range(nv):
            s += J[row, j] * v_free[j]
        g[row] = s
    for i in range(m):  # the normal rows: the gap, then Newton's restitution on the approach velocity
        vn = 0.0
        for j in range(nv):
            vn += J[3 * i + 2, j] * v[j]
        g[3 * i + 2] += max(dist[i], 0.0) / dt + grest[pair[i, 1]] * min(vn, 0.0)
    sweeps, _ = pgs(G, g, mu, m, lam, sigma, tol, max_sweeps)
    return (m if sweeps <= max_sweeps else -2), G


@njit(cache=True)
def correct_positions(tree, points, slop, q, G, lam, sigma, dq):
    """q moved onto the surfaces where a contact penetrates deeper than ``slop`` (step 4, in
    place; ``lam``, ``sigma``, ``dq`` scratch): returns (ok, G); ok False where G is singular or
    not finite or the frictionless PGS does not converge."""
    kt, kt0, work = tree
    pi, pf, sb, cl, cp, crad, cmar, lb, gB, goff, gmu, grest, J, Y, dist, pos, pair, Jw, Jx, zero = points
    m = active_contacts(pi, pf, sb, q, cl, cp, crad, cmar, lb, gB, goff, J, dist, pos, pair, Jw, Jx)
    if m == 0 or dist[:m].min() >= -slop:
        return True, G
    r = 3 * m
    if r > G.shape[0]:
        G = np.zeros((r, r))
    if not _delassus_ok(kt0, work, q, J, r, Y, zero, G):
        return False, G
    g = np.zeros(r)
    for i in range(m):
        g[3 * i + 2] = min(dist[i], 0.0)
    lam[:r] = 0.0
    sweeps, _ = pgs(G, g, np.zeros(m), m, lam, sigma, CORRECTION_TOL, CORRECTION_SWEEPS)
    if sweeps > CORRECTION_SWEEPS:
        return False, G
    dq[:] = 0.0
    for row in range(r):  # q (+) M^-1 J_n^T delta
        for j in range(dq.shape[0]):
            dq[j] += Y[row, j] * lam[row]
    integrate(kt.view(T.INT), q, dq, q)
    return True, G


@njit(cache=True)
def resultants(J, gB, pos, dt, m, lam, ids, group_of_pair, v_plus, force, point):
    """The step's contact work ``lambda . J v+`` (returned), the resultant force of each
    (link, ground) group into ``force`` (world frame, N) and its centre of pressure into
    ``point`` (the contact points ``pos`` weighted by their normal impulses; NaN where the
    group pushes nothing), from the step's rows J."""
    w = 0.0
    for row in range(3 * m):
        s = 0.0
        for j in range(v_plus.shape[0]):
            s += J[row, j] * v_plus[j]
        w += lam[row] * s
    force[:, :] = 0.0
    point[:, :] = 0.0
    n_grounds = gB.shape[0]
    for i in range(m):
        gr, group = ids[i] % n_grounds, group_of_pair[ids[i]]
        for c in range(3):  # B lambda_i / dt, B = [t1 t2 n]; sum lambda_n x_i
            f = gB[gr, c, 0] * lam[3 * i] + gB[gr, c, 1] * lam[3 * i + 1] + gB[gr, c, 2] * lam[3 * i + 2]
            force[group, c] += f / dt
            point[group, c] += lam[3 * i + 2] * pos[i, c]
    for group in range(force.shape[0]):  # / sum lambda_n = dt n . F (the tangents are normal to n)
        gr = group % n_grounds
        push = dt * (gB[gr, 0, 2] * force[group, 0] + gB[gr, 1, 2] * force[group, 1] + gB[gr, 2, 2] * force[group, 2])
        for c in range(3):
            point[group, c] = point[group, c] / push if push > 0.0 else np.nan
    return w


@njit(cache=True)
def take_step(drive, dt, m, lam, ids, w, pull, v_plus, q_plus, a, tau_a, state):
    """The state moves to (q+, v+): the contact work, the warm start of the next step, the mean
    acceleration ``(v+ - v) / dt`` into ``a`` and the joint forces applied into ``tau_a`` (the
    hold's at v+, as :mod:`denoc_bridge.simulation.hold` says)."""
    q, v, previous, work_done = state[0], state[1], state[2], state[3]
    tau, hold_rate, hold = drive[0], drive[7], drive[9]
    work_done[0] += w
    previous[:, :] = 0.0
    for i in range(m):
        for c in range(3):
            previous[ids[i], c] = lam[3 * i + c]
    for j in range(v.shape[0]):
        a[j] = (v_plus[j] - v[j]) / dt
        tau_a[j] = tau[j] + pull[j] - hold_rate[j] * v_plus[j] if hold else tau[j]
    q[:] = q_plus
    v[:] = v_plus


@njit(cache=True)
def save(saves, s, t, state, a, tau_a, force, point):
    """Saved state s at time t (the accelerations, forces and contact forces and points of the
    step that ended there go to s - 1, as the other methods save them)."""
    T_, Q, V, A, TAU, F, P, W = saves
    T_[s] = t
    Q[s] = state[0]
    V[s] = state[1]
    W[s] = state[3][0]
    A[s - 1] = a
    TAU[s - 1] = tau_a
    F[s - 1] = force
    P[s - 1] = point


@njit(cache=True)
def contact_steps(tree, drive, points, solver, state, saves, save_every, k0, k1):
    """Steps k0 .. k1 - 1 (see the module docstring); returns (k, status): k1 and DONE, or the
    step k that the Python layer must take (the state is the one before it) and PYTHON_STEP or
    PGS_STALLED."""
    kt = tree[0]
    _, _, _, _, _, _, _, _, gB, _, _, _, J, Y, _, pos, _, _, _, _ = points  # by name, not by position
    dt, slop, group_of_pair = solver[0], solver[3], solver[4]
    q, v, previous, work_done, lam = state
    ki, nv, nq = kt.view(T.INT), v.shape[0], q.shape[0]
    tau_a, pull, a, v_free, v_plus, dq = (
        np.empty(nv),
        np.empty(nv),
        np.empty(nv),
        np.empty(nv),
        np.empty(nv),
        np.empty(nv),
    )
    q_plus, lam2, sigma = np.empty(nq), np.zeros(J.shape[0]), np.zeros(J.shape[0])
    ids, G = np.zeros(previous.shape[0], dtype=np.int64), np.zeros((0, 0))
    force, point = np.zeros(saves[5].shape[1:]), np.zeros(saves[5].shape[1:])
    for k in range(k0, k1):
        applied_forces(ki, drive, q, v, pull, tau_a)  # 1
        if forward_dynamics_fast(kt, tree[2], q, v, tau_a, a):  # 2
            return k, PYTHON_STEP
        for j in range(nv):
            v_free[j] = v[j] + dt * a[j]
        if not _all_finite(v_free):
            return k, PYTHON_STEP
        m, G = impulses(tree, points, solver, q, v, v_free, previous, G, lam, sigma, ids)  # 3
        if m < 0:
            return k, (PGS_STALLED if m == -2 else PYTHON_STEP)
        v_plus[:] = v_free  # 4
        for row in range(3 * m):
            for j in range(nv):
                v_plus[j] += Y[row, j] * lam[row]
        w = resultants(J, gB, pos, dt, m, lam, ids, group_of_pair, v_plus, force, point)
        for j in range(nv):
            dq[j] = dt * v_plus[j]
        integrate(ki, q, dq, q_plus)
        if not _all_finite(q_plus):
            return k, PYTHON_STEP
        ok, G = correct_positions(tree, points, slop, q_plus, G, lam2, sigma, dq)
        if not (ok and _all_finite(q_plus)):
            return k, PYTHON_STEP
        take_step(drive, dt, m, lam, ids, w, pull, v_plus, q_plus, a, tau_a, state)
        if (k + 1) % save_every == 0:
            save(saves, (k + 1) // save_every, (k + 1) * dt, state, a, tau_a, force, point)
    return k1, DONE
