"""Ground contact in the simulator: a velocity-level time stepper of the Moreau-Jean / Anitescu
kind (method ``"contact-euler"``), its steps compiled as one run
(``denoc_bridge/core/contact_run.pxi``) with the Python step below as its reference and for
the steps the run hands back (the contact solver's fallbacks, the errors that name a cause).

One step of length dt from (q, v), the active contacts and their rows J taken at q:

1. ``v_free = v + dt M^-1 (tau - h)``: the tree's O(n) forward dynamics;
   the joint springs and dampers (and a posture hold, :mod:`denoc_bridge.simulation.hold`)
   implicit in it: ``dt D + dt^2 K`` on the GIM's diagonal, stable at any stiffness;
2. the contact impulses ``lambda`` (3 per contact, in the contact frame) of the problem
   ``sigma = G lambda + g`` with ``G = J M^-1 J^T`` (:mod:`denoc_bridge.constraints.contact`) and
   ``g = J v_free``, whose normal rows are shifted by the gap ``max(d, 0) / dt`` (a contact
   within its margin may close its gap in this step, not more) and by the restitution
   ``e min(v_n, 0)`` (Newton's law on the approach velocity; 0 by default), solved by the
   warm-started PGS on the Coulomb cones (:func:`denoc_bridge.constraints.contact.solve_contact`);
3. ``v+ = v_free + M^-1 J^T lambda``, ``q+ = q (+) dt v+``;
   Contacts enter the problem within their margin (at least :data:`MIN_MARGIN`);
4. a position correction where a contact still penetrates (by curvature: the rows are those
   of q) deeper than ``slop``: q is moved by ``M^-1 J_n^T delta`` (delta >= 0, frictionless,
   the least change in the mass metric) onto the surface, and v is left alone: it adds no
   kinetic energy, and gives back only the potential energy the penetration had taken.

The work of the contact forces over a step, ``lambda . J v+`` (the contact points move by
``dt J v+``), is never positive: ``lambda_n sigma_n = 0``, the friction opposes the slip
(``lambda_t . sigma_t = -|lambda_t| |sigma_t|``) and a closing gap gives ``-lambda_n d / dt``.  The
trajectory's ``contact_work`` holds its sum up to each saved state.  An impulse works on the mean of
the velocities before and after it (Kelvin's theorem), ``lambda . J (v + v+) / 2``: the rest,
``-1/2 lambda . J (v+ - v)`` per step, is the trajectory's ``impact_work`` (the kinetic energy a
plastic impact takes, where ``lambda . J v+`` is 0); the compiled and the Python step add it up
as they go.  Both enter
:meth:`~denoc_bridge.simulation.trajectory.Trajectory.energy_drift`, whose balance then closes to
the step's first-order accuracy (solo12 landing: 4e-3 of the energy scale at dt = 1 ms).

``contact_force`` holds the resultant force ``lambda / dt`` of each (link, ground) pair, world frame
(zero when apart; ``contact_names`` names them), and ``contact_point`` the point where it acts,
the pair's centre of pressure: its contact points weighted by their normal impulses (NaN while
the pair pushes nothing).  The joint springs and dampers act (implicitly, in step 1).  The joint
position limits (``limits=True``, revolute and prismatic joints with finite limits) are one-sided
rows beside the contacts, solved with them in step 3: a joint within
:data:`~denoc_bridge.constraints.contact.LIMIT_MARGIN` of a limit is a frictionless "contact"
whose normal row is its rate away from the limit, with the same gap term and position
correction; ``limit_work`` is what their impulses took (the balance's ``W_stops``).

A model with loop closures, or with mimic joints as constraints (a
:class:`~denoc_bridge.constraints.mimic.MimicModel`, its state in the reduced coordinates),
touches the ground too, its constraints as bilateral rows on the same constraint layer:
``v_free`` from the constrained system's forward dynamics (004 eqs. 13-14), the Delassus
operator and ``M^-1 J^T`` of the constrained system (the bilateral impulses eliminated:
:meth:`~denoc_bridge.constraints.contact.ContactSet.delassus`), so that ``v+`` keeps the
constraints; after each step the loops are closed again to :data:`LOOP_TOL`: on a model with
loop closures or joint couplings as the loop simulator closes them
(:func:`denoc_bridge.simulation.loops.close_loops`: Gauss-Newton on the configuration, then
the velocity projected onto ``C v = 0``, both in the kinetic-energy metric, so that the
projection never adds kinetic energy), compiled in the same run as a tree's steps
(``denoc_bridge/core/contact_loops.pxi``); on a MimicModel with loops by Newton on the
dependent coordinates and ``v = E v_i`` (004 eqs. 26 and 16).  A MimicModel's joint springs,
dampers and hold are implicit on its tree's GIM diagonal (the hold's on the mimicked joints),
which the reduced GIM ``G^T (M + A) G`` then carries.  A MimicModel's steps are compiled
(``denoc_bridge/core/contact_mimic.pxi``) on its tree's coordinates: the mimic relations are
constant bilateral rows ``K`` (``K_j = e_s - mult e_m``, ``K G = 0``) stacked ahead of the loops'
on the same layer and eliminated from the Delassus operator the same way, the state expanded at
the start of a run, put back onto the relations where the Python step reduces it and saved
reduced (``q[q_keep]``, ``v[v_keep]``), its joint limits the tree's rows (a mimic joint's limit
acts on its mimicked joint through ``K``).  A MimicModel whose tree has loops closes them after
each step as the Python step does (``close_mimic_loops``: Newton on the dependent coordinates,
then ``v = E v_i``, 004 eqs. 26 and 16).  Where a contact problem is statically indeterminate (the
geared five-bar at rest on both fingers: six impulses against two motions), its impulses are not
unique; the compiled and the Python step may then pick different ones (PGS's answer, or the
all-sticking one where PGS stalls, turns on round-off), with the same motion and the same
generalized force.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from denoc_bridge.algorithms.configuration import integrate, integrate_unchecked
from denoc_bridge.algorithms.dynamics import tree_forward_dynamics
from denoc_bridge.constraints.contact import ContactSet, solve_contact
from denoc_bridge.constraints.loops import RANK_RTOL, project_configuration, project_velocity
from denoc_bridge.constraints.mimic_loops import PROJECT_STEPS
from denoc_bridge.constraints.packed import compiled as packed_loops
from denoc_bridge.core import contact as _cc
from denoc_bridge.core import loops as _loops
from denoc_bridge.core import sized
from denoc_bridge.dynamics import forward_dynamics
from denoc_bridge.errors import InputError, SimulationError, outside_level
from denoc_bridge.io.collision import collision_points
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.contact import ContactPoint, grounds_of
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.simulation.common import run_end
from denoc_bridge.simulation.hold import PostureHold
from denoc_bridge.simulation.loops import MAX_ITER, close_loops
from denoc_bridge.simulation.mimic import initial_configuration
from denoc_bridge.simulation.mimic import limit_arrays as mimic_limit_arrays
from denoc_bridge.simulation.trajectory import Trajectory, joint_passive_forces
from denoc_bridge.simulation.tree import start_on_limits

__all__ = ["CONTACT_METHODS", "simulate_contact"]

CONTACT_METHODS = ("contact-euler",)
#: the contact solver's tolerance, relative to the largest free velocity; where PGS stalls short
#: of it (many contacts on one flat sole: 40 on talos's), ADMM answers to
#: :data:`~denoc_bridge.constraints.contact.FALLBACK_TOL` (1e-8, at worst LAST_RESORT_TOL, 1e-6) and the trajectory's message
#: counts those steps
TOL = 1e-12
SLOP = 1e-9  # m: penetration left to the next steps' gap terms before the position correction acts
#: m: the smallest margin of a contact in the stepper: a point put back on the surface by the
#: position correction stays in the problem (the gap term lets it close, never pulls it)
MIN_MARGIN = 1e-3
#: m and rad: the loop closures' error left after each step of a model with loops
LOOP_TOL = 1e-12


def _torque(model: Any, tau: Any) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    """tau as a function of (t, q, v): None (zero), a constant (nv,) or a controller."""
    if tau is None:
        zero = np.zeros(model.nv)
        return lambda t, q, v: zero
    if callable(tau):

        def controller(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
            out = np.asarray(tau(t, q, v), dtype=float)
            if out.shape != (model.nv,) or not np.all(np.isfinite(out)):
                raise InputError(f"tau(t, q, v) must return {model.nv} finite numbers, got {out!r} at t = {t:g}")
            return out

        return controller
    const = (
        model._reduced(tau, "tau", model.nv)
        if isinstance(model, MimicModel)
        else _inputs.vector(model, tau, "tau", "v")
    )
    return lambda t, q, v: const


def simulate_contact(
    model: Any,
    q0: Any,
    v0: Any,
    t_final: float,
    dt: float,
    contact: Any,
    contact_points: Iterable[ContactPoint | str],
    tau: Any = None,
    *,
    save_every: int = 1,
    tol: float = TOL,
    max_sweeps: int = 10_000,
    hold: PostureHold | None = None,
    compiled: bool = True,
    limits: bool = True,
) -> Trajectory:
    """Simulate a tree ``model`` touching the ground(s) ``contact`` at ``contact_points`` with
    the contact time stepper (see the module docstring); ``tau`` None, an (nv,) vector or a
    controller ``tau(t, q, v)``; ``hold`` a :class:`~denoc_bridge.simulation.hold.PostureHold`,
    implicit in the step.  ``tol``: the contact solver's, relative to the free velocities.
    ``compiled``: the steps run compiled (``denoc_bridge/core/contact_run.pxi``), up to
    :data:`CHUNK` in one call (one per step with a controller), and in Python only where a step
    needs the solver's fallbacks; False: every step in Python (the reference the compiled run is
    tested against).
    Returns a :class:`Trajectory` with ``contact_force`` (saved
    states x (link, ground) pairs x 3, world frame, N: the resultant on each link with contact
    points), ``contact_point`` (the same shape, m: where it acts, the centre of pressure; NaN
    while the pair pushes nothing) and ``contact_work`` (J, cumulative, <= 0)."""
    if hold is not None and not isinstance(hold, PostureHold):
        raise InputError(f"hold must be a PostureHold (db.posture_hold(model, ...)), got {type(hold).__name__}")
    if hold is not None and (hold.kp.shape != (model.nv,) or hold.q_ref.shape != (model.nq,)):
        raise InputError(
            f"hold was built for another model: {hold.q_ref.shape[0]} configuration entries, '{model.name}' has {model.nq}"
        )
    if isinstance(model, MimicModel):  # writable copies: the state
        q = np.array(initial_configuration(model, q0), dtype=float)
        v = np.array(model._reduced(v0, "v0", model.nv), dtype=float)
    else:
        q = np.array(_inputs.configuration(model, q0, "q0"), dtype=float)
        v = np.array(_inputs.vector(model, v0, "v0", "v"), dtype=float)
    if not (isinstance(dt, (int, float, np.floating)) and np.isfinite(dt) and dt > 0):
        raise InputError(f"dt must be a positive number, got {dt!r}")
    if not (isinstance(t_final, (int, float, np.floating)) and np.isfinite(t_final) and t_final >= 0):
        raise InputError(f"t_final must be a finite number >= 0, got {t_final!r}")
    if isinstance(save_every, bool) or not isinstance(save_every, (int, np.integer)) or save_every < 1:
        raise InputError(f"save_every must be an integer >= 1, got {save_every!r}")
    n_steps = int(round(t_final / dt))
    limits = bool(limits) and _has_limits(model)
    if limits:
        q = _inside_limits(model, q)
    run = _Stepper(
        model, q, v, float(dt), contact, contact_points, hold, n_steps // save_every + 1, int(save_every), limits
    )
    run.solver = (float(dt), float(tol), int(max_sweeps), SLOP, run.group_of_pair)
    inside = run.start_inside()
    if inside:
        warnings.warn(inside, stacklevel=outside_level())
    torque = _torque(model, tau)
    constant = None if callable(tau) else np.array(torque(0.0, q, v), dtype=float)
    start = time.perf_counter()
    k = 0  # steps completed
    interrupted = False
    try:
        while k < n_steps:
            tk = constant if constant is not None else np.array(torque(k * dt, run.q, run.v))
            stop = min(n_steps, k + CHUNK) if constant is not None else k + 1
            stalled = False
            if compiled:
                k, stalled = run.compiled_steps(k, stop, tk)
            if k < stop:  # the fallbacks of the contact solver, or the error that names the cause
                run.python_step(k, tk, stalled)
                k += 1
    except KeyboardInterrupt:  # Ctrl-C: the states up to there, as the other methods return them
        interrupted = True
    wall = time.perf_counter() - start
    return run.trajectory(k, interrupted, wall, tol)


#: the most steps of one compiled call without a controller (Ctrl-C is seen between calls)
CHUNK = 1000
#: a start with contact points deeper than this in a ground is warned about (m)
START_DEPTH = 1e-3


class _Stepper:
    """One contact run: the model with the implicit terms on its armature, the contact set, the
    state and the saved arrays, and its two ways of taking steps, compiled
    (``denoc_bridge.core.contact.contact_steps``) and in Python (the reference, and the
    solver's fallbacks), which share them."""

    def __init__(self, model, q, v, dt, contact, contact_points, hold, saves, save_every, limits=False) -> None:
        self.original, self.hold, self.dt, self.save_every = model, hold, dt, save_every
        self.mimic = isinstance(model, MimicModel)
        tree = model.tree if self.mimic else model
        self.tree_only = not (self.mimic or tree.loops)  # no bilateral rows
        # the joint dampers and springs, and the hold, implicit: their dt D + dt^2 K on the GIM's
        # diagonal (as simulation.hold derives), so that no damping or gain is too stiff for dt.
        # On a MimicModel they go on the tree's diagonal, the hold's on the mimicked joints'
        # DOFs: the reduced GIM G^T (M + A) G then carries them, as the reduced dynamics does
        implicit = dt * np.asarray(tree.damping) + dt * dt * np.asarray(tree.stiffness)
        if hold is not None:
            implicit = implicit.copy()
            implicit[model._v_keep if self.mimic else slice(None)] += hold.armature(dt)
        if np.any(implicit):
            tree = tree.replace(armature=np.asarray(tree.armature) + implicit)
        self.model: Any = MimicModel(tree) if self.mimic else tree
        # the springs' implicit -dt K v, on the model's velocities (G^T dt K G, diagonal, on a MimicModel)
        rate = dt * np.array(tree.stiffness, dtype=float)
        self.spring_rate = (model.coupling_matrix() ** 2).T @ rate if self.mimic else rate
        self.hold_rate = hold.rate(dt) if hold is not None else np.zeros(model.nv)
        self.limits = limits
        self.cs = cs = ContactSet(self.model, contact_points, contact, limits=limits)
        cs.raise_margins(MIN_MARGIN)
        self.q, self.v = q, v
        # the forces are saved per (link, ground): the resultant on each link that has contact points
        self.links = sorted({c.link for c in cs.points})
        self.n_grounds = len(cs.grounds)
        self.group_of_pair = np.array(
            [self.links.index(c.link) * self.n_grounds + g for c in cs.points for g in range(self.n_grounds)],
            dtype=np.int64,
        )
        n_groups = len(self.links) * self.n_grounds
        self.previous = np.zeros((cs.n_pairs, 3))  # last impulses of each pair and limit: the warm start
        # the work so far: the contacts' lambda . J v+, their impacts' -1/2 lambda . J (v+ - v)
        # (Kelvin), and the joint limits' both (core/contact_run.pxi resultants)
        self.work_done = np.zeros(3)
        self.python_steps = 0
        self.lam = np.zeros(3 * cs.m_max)  # the compiled run's impulses of the step (where PGS stopped)
        self.saves = (
            np.zeros(saves),
            *(np.zeros((saves, n)) for n in (model.nq, model.nv, model.nv, model.nv)),
            np.zeros((saves, n_groups, 3)),
            np.full((saves, n_groups, 3), np.nan),
            np.zeros((saves, 3)),
        )
        self.saves[1][0], self.saves[2][0] = q, v
        self.loose, self.worst = 0, 0.0  # steps whose contact problem ADMM answered to a looser tolerance
        self.solver: tuple = ()
        self.passive = bool(np.any(tree.damping) or np.any(tree.stiffness))
        fields = ("damping", "stiffness", "rest_configuration")
        self.drive = tuple(np.array(getattr(tree, f), dtype=float) for f in fields) + (
            np.array(hold.kp if hold is not None else np.zeros(model.nv)),
            np.array(hold.q_ref if hold is not None else np.zeros(model.nq)),
        )
        self.rates = (self.spring_rate, self.hold_rate)  # the compiled run's implicit rates
        self.mimic_rows: tuple | None = None
        if self.mimic:  # the compiled run on the tree (core/contact_mimic.pxi): the drive there
            keep = model._v_keep
            kp, hold_rate = np.zeros(tree.nv), np.zeros(tree.nv)
            kp[keep], hold_rate[keep] = self.drive[3], self.hold_rate  # zero on the mimic DOFs
            self.drive = (*self.drive[:3], kp, np.array(model.expand(self.drive[4]), dtype=float))
            self.rates = (dt * np.array(tree.stiffness, dtype=float), hold_rate)
            imap, fmap, _ = self.model._kernel_maps()
            self.mimic_rows = (imap, fmap, np.ascontiguousarray(model.constraint_matrix()))
            m = model.n_constraints + packed_loops(tree).m  # the rows K, then the loops'
            self.stacked = np.zeros(_loops.scratch_size(tree.n_links, tree.nv, m))

    def start_inside(self) -> str:
        """What is wrong with a start that puts contact points more than START_DEPTH into a
        ground ("" if none): the first step's position correction moves the robot out, a jump
        that no force explains."""
        cs = self.cs
        m = cs.active(self.original.expand(self.q) if self.mimic else self.q)
        deep = int(np.count_nonzero(cs.dist[:m] < -START_DEPTH))
        if not deep:
            return ""
        i = int(np.argmin(cs.dist[:m]))
        link = self.model.link_names[cs.points[cs.pair[i, 0]].link]
        return (
            f"q0 puts a contact point of link '{link}' {-cs.dist[i]:.3g} m into the ground "
            f"'{cs.grounds[cs.pair[i, 1]].name}' ({deep} of {m} contacts deeper than {START_DEPTH:g} m): the "
            "first step moves the robot out at once, which no force explains (the energy jumps); start it "
            "above the ground (denoc_bridge.constraints.contact.lifted lifts a floating base)"
        )

    def compiled_steps(self, k0: int, k1: int, tau: np.ndarray) -> tuple[int, bool]:
        """Steps k0 .. k1 - 1 compiled, up to the first one that needs Python: (the steps done,
        whether that step's PGS stalled, ``self.lam`` then holding where it stopped)."""
        cs = self.cs
        damping, stiffness, q_rest, kp, q_ref = self.drive
        spring_rate, hold_rate = self.rates
        if self.mimic:  # tau on the tree: G^T tau_full = tau, zero on the mimic DOFs
            tau_r, tau = tau, np.zeros(cs.tree.nv)
            tau[self.original._v_keep] = tau_r
        drive = (tau, damping, stiffness, spring_rate, q_rest, kp, q_ref, hold_rate, self.passive)
        state = (self.q, self.v, self.previous, self.work_done, self.lam)
        k, status = _cc.contact_steps(
            cs.tree._kt,
            cs.work,
            (*drive, self.hold is not None),
            cs.packed,
            cs.buffers,
            self.solver,
            state,
            self.saves,
            self.save_every,
            k0,
            k1,
            self.loops(),
            self.mimic_rows,
        )
        if sized(status, "contact_steps") == -1:  # checked on entry, then each step's state
            raise RuntimeError("contact_steps refused the state it was handed (status -1): a defect of its caller")
        return int(k), status == _cc.PGS_STALLED

    def loops(self) -> tuple | None:
        """The compiled run's loops (``core/contact_entry.pxi`` bilateral_of): the packed cut
        joints and couplings of the model, the rank tolerance and the projection's; None for a
        tree without them.  A MimicModel's: its tree's (none, or its loops), with a scratch of
        their own for the mimic rows K stacked ahead (``mimic_rows``: its maps and K)."""
        if self.tree_only:
            return None
        cp = packed_loops(self.model.tree if self.mimic else self.model)
        # the closing's steps at most: the Python step's (a MimicModel's Newton, else Gauss-Newton)
        steps = PROJECT_STEPS if self.mimic else MAX_ITER
        return (cp.pi, cp.pf, self.stacked if self.mimic else cp.sb, RANK_RTOL, LOOP_TOL, steps)

    def python_step(self, k: int, tk: np.ndarray, stalled: bool = False) -> None:
        """Step k in Python (the module docstring's scheme), with the joint forces tk;
        ``stalled``: the compiled run's PGS stalled on this step's contact problem and stopped at
        ``self.lam`` (the solver's fallbacks then start from there, without running it again)."""
        model, cs, hold, dt = self.model, self.cs, self.hold, self.dt
        tol, max_sweeps = self.solver[1], self.solver[2]
        q, v, t = self.q, self.v, k * dt
        passive = joint_passive_forces(self.original, q, v)  # the joint springs and dampers, implicit:
        applied = tk if passive is None else tk + passive - self.spring_rate * v  # -K (q (-) q_r) - (D + dt K) v
        if hold is not None:
            pull = hold.pull(self.original, q)
            applied = applied + pull - self.hold_rate * v
        if self.tree_only:
            v_free = v + dt * tree_forward_dynamics(model, q, v, applied)
        else:  # the constrained system's accelerations (exact: C a = -Cdot v)
            v_free = v + dt * forward_dynamics(model, q, v, applied)
        _finite(v_free, t)
        q_tree, v_tree = self._tree(q, v)
        m = cs.active(q_tree)
        force, point = np.zeros(self.saves[5].shape[1:]), np.full(self.saves[5].shape[1:], np.nan)
        if m:
            r = 3 * m
            G = _finite(cs.delassus(q_tree, r), t)
            J, Y = cs.J[:r], cs.Y[:r]
            ids = cs.pair_ids(m)
            mu, restitution = cs.friction(m)
            g = J @ self._tree(q, v_free)[1]
            g[2::3] += np.maximum(cs.dist[:m], 0.0) / dt + restitution * np.minimum(J[2::3] @ v_tree, 0.0)
            lam0 = self.previous[ids].ravel()
            stopped = self.lam[:r].copy() if stalled else None
            sol = solve_contact(G, g, mu, lam0, tol=tol, max_iter=max_sweeps, pgs_stopped=stopped)
            if not sol.converged:
                raise SimulationError(
                    f"contact-euler: the contact solver did not converge in {max_sweeps} sweeps at t = {t:g} "
                    f"({m} contacts); raise max_sweeps or lower dt"
                )
            lam = sol.lam
            if sol.tolerance > tol:
                self.loose += 1
                self.worst = max(self.worst, sol.tolerance)
            v_plus = v_free + self._reduce(Y.T @ lam)
            after, before = J @ self._tree(q, v_plus)[1], J @ v_tree  # each row's velocity after and before
            on = ~cs.limit_rows(m)  # the points' contacts (the others: joint limits)
            limit = np.repeat(~on, 3)
            # the work over the step (x moves by dt J v+) and the impacts' (Kelvin): contacts, limits
            work = lam * after - 0.5 * lam * (after - before)
            self.work_done += (
                float(lam[~limit] @ after[~limit]),
                -0.5 * float(lam[~limit] @ (after[~limit] - before[~limit])),
                float(work[limit].sum()),
            )
            B = cs.gB[cs.pair[:m, 1][on]]  # columns t1, t2, n
            groups = self.group_of_pair[ids[on]]
            np.add.at(force, groups, np.einsum("mij,mj->mi", B, lam.reshape(m, 3)[on]) / dt)
            point = self._pressure_centres(groups, lam[2::3][on], cs.pos[:m][on])
        else:
            v_plus, ids, lam = v_free, np.zeros(0, dtype=np.int64), np.zeros(0)
        q_plus = self._correct_positions(_finite(self._integrate(q, dt * v_plus), t), t)
        _finite(q_plus, t)
        if self.mimic and model.loops:  # closed again to round-off: the configuration, then the velocity on it
            q_plus = project_configuration(model, q_plus, tol=LOOP_TOL)
            v_plus = project_velocity(model, q_plus, v_plus)
        elif model.loops:  # the same in the kinetic-energy metric, as the compiled run
            close_loops(model, packed_loops(model), q_plus, v_plus, LOOP_TOL, t)
        a = (v_plus - v) / dt
        if hold is not None:  # the force the hold applied: at v+ (simulation.hold)
            tk = tk + pull - self.hold_rate * v_plus
        self.python_steps += 1
        self.previous[:] = 0.0
        self.previous[ids] = lam.reshape(-1, 3)
        q[:], v[:] = q_plus, v_plus
        if (k + 1) % self.save_every == 0:
            s = (k + 1) // self.save_every
            T, Q, V, A, TAU, F, P, W = self.saves
            T[s], Q[s], V[s], W[s] = (k + 1) * dt, q, v, self.work_done
            A[s - 1], TAU[s - 1], F[s - 1], P[s - 1] = a, tk, force, point

    def _pressure_centres(self, groups: np.ndarray, lam_n: np.ndarray, pos: np.ndarray) -> np.ndarray:
        """The centre of pressure of each (link, ground) group: its contact points ``pos``
        weighted by their normal impulses ``lam_n`` (NaN where the group pushes nothing)."""
        push = np.bincount(groups, lam_n, minlength=self.saves[6].shape[1])
        point = np.zeros(self.saves[6].shape[1:])
        np.add.at(point, groups, lam_n[:, None] * pos)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(push[:, None] > 0.0, point / push[:, None], np.nan)

    def _tree(self, q: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(q, v) on the tree (a MimicModel's expanded: the contact rows are the tree's)."""
        return self.original.expand(q, v) if self.mimic else (q, v)

    def _reduce(self, dv_tree: np.ndarray) -> np.ndarray:
        """A tree velocity change that keeps the mimic relations, on the model's velocities."""
        return self.original.reduce_velocity(dv_tree) if self.mimic else dv_tree

    def _integrate(self, q: np.ndarray, dq: np.ndarray) -> np.ndarray:
        return integrate(self.original, q, dq) if self.mimic else integrate_unchecked(self.model, q, dq)

    def _correct_positions(self, q: np.ndarray, t: float) -> np.ndarray:
        """q moved onto the surfaces where a contact penetrates deeper than SLOP: ``q (+) M^-1
        J_n^T delta`` with ``delta >= 0`` the frictionless impulses that close the penetrations in
        the mass metric (one linearised projection; of the constrained system with loops or mimic
        joints)."""
        cs = self.cs
        q_tree = self.original.expand(q) if self.mimic else q
        m = cs.active(q_tree)
        if m == 0 or cs.dist[:m].min() >= -SLOP:
            return q
        r = 3 * m
        G = _finite(cs.delassus(q_tree, r), t)
        g = np.zeros(r)
        g[2::3] = np.minimum(cs.dist[:m], 0.0)
        sol = solve_contact(G, g, np.zeros(m), tol=_cc.CORRECTION[0], max_iter=_cc.CORRECTION[1])
        return self._integrate(q, self._reduce(cs.Y[:r].T @ sol.lam))

    def trajectory(self, done: int, interrupted: bool, wall: float, tol: float) -> Trajectory:
        """The trajectory of the ``done`` steps taken."""
        T, Q, V, A, TAU, F, P, W = self.saves
        # the saved states (the last one's A, TAU, F stay 0 and P NaN: no step follows it)
        kept = done // self.save_every + 1
        if interrupted:
            A[kept - 1], TAU[kept - 1], F[kept - 1], P[kept - 1] = 0.0, 0.0, 0.0, np.nan
        status, message = run_end(interrupted, False, done * self.dt)
        if self.loose:
            message = (message + "; " if message else "") + (
                f"the contact solver met {self.worst:.1g} instead of tol = {tol:g} on {self.loose} of {done} steps "
                "(ADMM, where projected Gauss-Seidel stalled on many contacts)"
            )
        names = tuple(f"{self.model.link_names[k]}/{g.name}" for k in self.links for g in self.cs.grounds)
        return Trajectory(
            self.original,
            T[:kept],
            Q[:kept],
            V[:kept],
            A[:kept],
            TAU[:kept],
            method="contact-euler",
            dt=self.dt,
            wall_time=wall,
            n_steps=done,
            n_evaluations=done,
            status=status,
            message=message,
            contact_force=F[:kept],
            contact_point=P[:kept],
            contact_work=W[:kept, 0].copy(),
            contact_names=names,
            contact_grounds=tuple(self.cs.grounds),
            impact_work=W[:kept, 1].copy(),
            limit_work=-W[:kept, 2] if self.limits else None,
            hold=self.hold is not None,
        )


def _has_limits(model: Any) -> bool:
    """Whether the tree has joints whose position limits a simulation enforces."""
    return limit_arrays(model.tree if isinstance(model, MimicModel) else model)[0].shape[0] > 0


def _inside_limits(model: Any, q: np.ndarray) -> np.ndarray:
    """q with the limited joints outside their limits put on them, and a warning naming them (as
    the fixed-step methods start)."""
    if isinstance(model, MimicModel):  # a mimic joint's limits narrow those of the joint it mimics
        return start_on_limits(model, q, *mimic_limit_arrays(model))
    return start_on_limits(model, q, *limit_arrays(model))


def _finite(x: np.ndarray, t: float) -> np.ndarray:
    """x, or the SimulationError of a run that left the finite numbers at t."""
    if not np.all(np.isfinite(x)):
        raise SimulationError(
            f"contact-euler: the state left the finite numbers at t = {t:g} (an explicit step too long "
            "for the stiffest joint, its springs, dampers or controller gains: lower dt)"
        )
    return x


def run(
    model: Any,
    q0: Any,
    v0: Any,
    t_final: float,
    dt: float,
    tau: Any,
    method: str,
    contact: Any,
    contact_points: Any,
    save_every: int | None,
    f_ext: Any,
    hold: Any = None,
    limits: bool = True,
) -> Trajectory:
    """``simulate(..., contact=...)``: the checks that name what does not go with contact, the
    contact points (by default the ``<collision>`` shapes of the model's URDF), the run."""
    if str(method).lower() not in CONTACT_METHODS:
        default = " (simulate's default)" if str(method).lower() == "rk4" else ""
        raise InputError(
            f"method {method!r}{default} does not simulate ground contact: use method='contact-euler' "
            "(a velocity-level time stepper; rk4, euler, the implicit and adaptive methods refuse contact=)"
        )
    if contact is None:
        raise InputError("method 'contact-euler' needs the ground: simulate(..., contact=Ground(...))")
    contact = grounds_of(contact)  # named before the contact points are looked for
    if f_ext is not None:
        raise InputError("method 'contact-euler' does not take f_ext yet")
    if contact_points is None:
        contact_points, _ = collision_points(model)
        if not contact_points:
            raise InputError(
                f"'{model.name}' has no sphere, box, cylinder or capsule <collision> shapes: pass "
                "contact_points=[contact_point(model, 'link', xyz), ...]"
            )
    return simulate_contact(
        model,
        q0,
        v0,
        t_final,
        dt,
        contact,
        contact_points,
        tau,
        save_every=1 if save_every is None else save_every,
        hold=hold,
        limits=limits,
    )
