"""A tree model as a simulation *system*: its accelerations with the actuation, springs, dampers
and external wrenches of a run, and its configuration maps, each one compiled call."""

from __future__ import annotations

import warnings

import numpy as np

from denoc_bridge._text import count
from denoc_bridge.core import configuration as cc
from denoc_bridge.core import run as compiled_run
from denoc_bridge.core import sized
from denoc_bridge.core import systems as ks
from denoc_bridge.core import tree as compiled
from denoc_bridge.dynamics import mass_matrix, nonlinear_effects
from denoc_bridge.errors import outside_level
from denoc_bridge.multibody.joints import limit_arrays
from denoc_bridge.simulation.common import System, limit_scratch_shape, limits_failure, normalise_rows, passive_arrays


def tree_acceleration(system, q, v, tau, fext):
    """The accelerations of ``system`` (a :class:`TreeSystem`) at a saved state of a run with
    the actuation ``tau`` and wrenches ``fext`` (NaN where the forward dynamics refuses it), on
    the compiled core alone."""
    model = system.model
    total, a = system.passive(q, v, np.empty(model.nv)), np.empty(model.nv)
    total += tau
    status = compiled.forward_dynamics_state(model._kt, model.thread_work(), q, v, total, fext, a)
    if status:
        a[:] = np.nan
    return a


def cholesky_accelerations(model, q, v, total, fext_pin, out):
    """The non-recursive forward dynamics (003 §5): I(q) a = tau - h(q, v) by Cholesky."""
    import scipy.linalg as sl

    if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
        return -1
    M = mass_matrix(model, q)
    phi = total - nonlinear_effects(model, q, v, fext_pin)
    try:
        out[:] = sl.cho_solve(sl.cho_factor(M, lower=True, check_finite=False), phi, check_finite=False)
    except np.linalg.LinAlgError:
        return 1
    return 0 if np.all(np.isfinite(out)) else -1


def clamp_to_limits(model, q, lim_i, lim_f, names=None) -> tuple[np.ndarray, list[tuple[str, float, float]]]:
    """A copy of q with the limited joints (``lim_i``, ``lim_f`` of :func:`limit_arrays`) that are
    outside their limits put on them, and (joint name, old value, new value) of each moved
    (``names``: the name of each limited joint; by default the tree's joint at its q index)."""
    q = np.array(q, dtype=float)
    moved = []
    for j, ((iq, _), (lo, hi)) in enumerate(zip(lim_i, lim_f)):
        if not lo <= q[iq] <= hi:
            name = (
                names[j] if names is not None else model.joint_names[int(np.searchsorted(model.idx_q, iq, "right") - 1)]
            )
            new = min(max(q[iq], lo), hi)
            moved.append((name, float(q[iq]), float(new)))
            q[iq] = new
    return q, moved


def start_on_limits(model, q0, lim_i, lim_f, names=None) -> np.ndarray:
    """q0 with the limited joints outside their limits put on them (:func:`clamp_to_limits`),
    and a warning naming them, attributed to the user's call: how every run with the joint
    limits starts (the fixed-step methods, the contact time stepper)."""
    q, moved = clamp_to_limits(model, q0, lim_i, lim_f, names)
    if moved:
        warnings.warn(
            f"q0 is outside the joint limits of {count(len(moved), 'joint')}; the run starts on them: "
            + ", ".join(f"'{name}' from {old:.4g} to {new:.4g}" for name, old, new in moved)
            + " (limits=False keeps q0 and ignores the limits)",
            stacklevel=outside_level(),
        )
    return q


class TreeSystem(System):
    """A tree model's stages for the Python steppers (:func:`run_python`, :func:`run_adaptive`):
    accelerations with the actuation, springs, dampers and external wrenches of a run, and the
    configuration maps (each one compiled call), and its compiled form for the one compiled run.
    :mod:`.mimic` and :mod:`.loops` have the same interface (:class:`.common.System`)."""

    def __init__(self, model, forces, passive, limits=False):
        self.model, self.forces = model, forces
        self.lim_i, self.lim_f = limit_arrays(model) if limits else (np.zeros((0, 2), np.int64), np.zeros((0, 2)))
        n = self.lim_i.shape[0]
        self.lim_s, self.lim_a = np.zeros(limit_scratch_shape(n, model.nv)), np.zeros(max(n, 1), np.int64)
        self.lim_e = np.zeros(1)  # the energy the limits took so far (J)
        self.stops = n > 0
        self.nq, self.nv = model.nq, model.nv
        self.K, self.D, self.q_rest, self.use_passive = passive_arrays(model, passive)
        self.work = model.thread_work()
        self.total = np.empty(model.nv)
        self.evals = 0
        self._compiled = None  # (kernel_system(), forcing()) of the calls on one state

    def _compiled_forms(self):
        """The tree's compiled form and forces (a subclass's tree too: :class:`.loops.LoopSystem`'s
        springs and dampers), made at the first call on one state and kept."""
        if self._compiled is None:
            self._compiled = (TreeSystem.kernel_system(self), self.forcing())
        return self._compiled

    def passive(self, q, v, out):
        """``out`` = the joint springs and dampers at (q, v) (the compiled runs' own), returned."""
        sized(compiled_run.passive_forces(*self._compiled_forms(), q, v, out), "the compiled passive forces")
        return out

    def _total(self, t, n, q, v):
        """The actuation at (t, step n); ``self.total`` = actuation + springs + dampers."""
        tau = self.forces.tau_at(t, q, v, n)
        self.passive(q, v, self.total)
        self.total += tau
        self.evals += 1
        return tau

    def accelerations(self, t, n, q, v, out):
        """(status, tau): ``out`` = a(t, q, v); status 0, k + 1 (joint k's articulated inertia is
        singular) or -1 (the state or the result is not finite)."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return -1, np.zeros(self.nv)  # the state left the finite numbers
        tau = self._total(t, n, q, v)
        f = self.forces
        if f.cholesky:
            return cholesky_accelerations(self.model, q, v, self.total, f.fext_pin_at(t, q, v), out), tau
        st = compiled.forward_dynamics_state(self.model._kt, self.work, q, v, self.total, f.fext_at(t, q, v), out)
        if st == 0 and not np.all(np.isfinite(out)):  # overflowed: as the compiled steppers
            st = -1
        return st, tau

    def ode(self, t, n, q, v, qdot, a):
        """Status of the adaptive solvers' right-hand side ``qdot`` = dq/dt (q, v), ``a``."""
        self._total(t, n, q, v)
        f = self.forces
        if f.cholesky:
            cc.configuration_rate(self.model._kt, q, v, qdot)
            return cholesky_accelerations(self.model, q, v, self.total, f.fext_pin_at(t, q, v), a)
        return compiled.ode_rhs(self.model._kt, self.work, q, v, self.total, f.fext_at(t, q, v), qdot, a)

    def saved_accelerations(self, t, Q, V, TAU):
        """The accelerations at saved states (not counted as evaluations)."""
        return np.array(
            [tree_acceleration(self, Q[i], V[i], TAU[i], self.forces.fext_at(t[i], Q[i], V[i])) for i in range(len(t))]
        ).reshape(len(t), self.nv)

    def kernel_system(self):
        """The compiled form (:class:`denoc_bridge.core.systems.TreeSystem`)."""
        flat, swept = compiled_run.tree_flags(self.model._kt)
        return ks.TreeSystem(
            self.model._kt, self.work, flat, swept, self.lim_i, self.lim_f, self.lim_s, self.lim_a, self.lim_e
        )

    def stop_energy(self):
        return float(self.lim_e[0])

    def end_step(self, q, v, t):
        """The joint limits after a step from Python: the compiled runs' stop
        (:func:`denoc_bridge.core.run.enforce_joint_limits`), its energy into ``lim_e``."""
        if self.lim_i.shape[0]:
            _, status = compiled_run.enforce_joint_limits(*self._compiled_forms(), q, v)
            if status:
                raise limits_failure(t)

    # The maps of the Python stages are the compiled runs' (core.configuration, which the runs
    # cimport), so that a run through them (a Python controller) gives the compiled run's numbers
    # bit for bit (tests/simulation/test_limits.py).
    def integrate(self, q, xi, out):
        """``out = q (+) xi`` (``out`` may be ``q``)."""
        cc.integrate(self.model._kt, q, xi, out)

    def dexpinv(self, xi, v, out):
        """The rate of the Lie-algebra coordinates xi with joint velocities v (RKMK stages)."""
        cc.dexpinv(self.model._kt, xi, v, out)

    def normalise(self, Q):
        """Unit quaternions and (cos, sin) pairs in each row of Q."""
        return normalise_rows(self.model, Q)
