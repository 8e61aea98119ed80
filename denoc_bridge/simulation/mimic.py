"""Simulation of a :class:`~denoc_bridge.constraints.mimic.MimicModel`: :func:`denoc_bridge.simulate` in
reduced coordinates.

The state is the mimic model's (q, v) (Pinocchio's mimic layout, the independent joints).
Every stage expands it to the tree's (``q_full = G q + offset``, ``v_full = G v``), and:

* accelerations: :func:`denoc_bridge.constraints.mimic.forward_dynamics` with ``tau + G^T tau_passive``,
  where ``tau_passive`` are the tree's joint springs and dampers at the expanded state (a
  mimic joint's own damper and spring act through its multiplier); ``dynamics="cholesky"``
  is its ``method="dense"`` (Cholesky of ``G^T M G``), the default its O(n) Lagrange form;
* the configuration maps: the tree's ``q (+) xi`` and the Runge-Kutta-Munthe-Kaas rates at
  ``(q_full, G xi, G v)``, then the mimic joints' entries dropped.  A mimic joint is a 1-DOF
  revolute, prismatic or continuous joint whose entries follow its mimicked joint's, so
  this is the tree's step restricted to the constraint manifold: the same steps as the
  tree's steppers in :mod:`denoc_bridge.simulation`.

RK4 and Euler with constant or tabulated torques and constant wrenches run compiled
(:meth:`MimicSystem.kernel_system` in the compiled core's run, ``core/run.pyx``, the Lagrange
form of ``core/mimic.pxi``); a
controller, callable wrenches, ``dynamics="cholesky"`` and a tree whose articulated inertia
is singular on its own run the stages from Python (``simulation.run_python``).

Joint limits (``simulate(limits=True)``, the default): the compiled stops
(``core/limits.pxi``, whose header derives them), in reduced coordinates,
the same from a compiled run and from Python stages.  A mimic
joint's limits act on the joint it mimics (``lower <= multiplier q_m + offset <= upper``, an
interval of q_m intersected with q_m's own limits, :func:`limit_arrays`); the stop keeps the
mimic rows (``K v = 0``) in the kinetic-energy metric of the tree.

The trajectory keeps the mimic model: its energies, power and passive forces are the
tree's at the expanded states (:class:`~denoc_bridge.simulation.trajectory.Trajectory`).
"""

from __future__ import annotations

import numpy as np

from denoc_bridge.constraints.mimic import MimicModel, forward_dynamics
from denoc_bridge.core import configuration as _config
from denoc_bridge.core import run as _run
from denoc_bridge.core import systems as ks
from denoc_bridge.core import tree as _compiled
from denoc_bridge.errors import InputError, SingularInertiaError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.mimic import limit_arrays
from denoc_bridge.simulation.common import (
    Forces,
    System,
    limit_scratch_shape,
    limits_failure,
    normalise_rows,
    passive_arrays,
    passive_forces_into,
)
from denoc_bridge.simulation.runners import run_python

__all__ = ["MimicSystem", "initial_configuration", "limit_arrays", "run_stages"]


def initial_configuration(model: MimicModel, q0, name: str = "q0") -> np.ndarray:
    """``q0`` checked (shape, finite) with its quaternions and (cos, sin) pairs normalised."""
    q0 = model._reduced(q0, name, model.nq, "q")
    if q0.shape != (model.nq,):
        raise InputError(
            f"{name} must have shape ({model.nq},) (model '{model.name}' with mimic joints as "
            f"constraints), got {q0.shape}"
        )
    qf = _inputs.configuration(model.tree, model.expand(q0), f"{name} (expanded to the tree)")
    return np.ascontiguousarray(model.reduce_configuration(qf))


def run_stages(model: MimicModel, q0, v0, t_final: float, dt: float, tau=None, f_ext=None, method: str = "rk4"):
    """The fixed-step run of :func:`denoc_bridge.simulate` stage by stage from Python (the
    reference of the compiled loop, for tests and benchmarks): the same steps, each stage's
    accelerations one call."""

    n = int(round(t_final / dt))
    forces = Forces(model, tau, f_ext, n, method)
    system = MimicSystem(model, forces, True)
    q0 = initial_configuration(model, q0)
    return run_python(model, q0, np.asarray(v0, dtype=float), dt, n, forces, method, True, 1, False, system)


class MimicSystem(System):
    """The stages of a run of ``model`` for :func:`denoc_bridge.simulation.run_python` and
    ``run_adaptive`` (the interface of ``simulation.TreeSystem``)."""

    def __init__(self, model: MimicModel, forces, passive: bool, limits: bool = False):
        tree = model.tree
        self.model, self.tree, self.forces = model, tree, forces
        self.nq, self.nv = model.nq, model.nv
        self.K, self.D, self.q_rest, self.use_passive = passive_arrays(tree, passive)
        self.d, self.total = np.empty(tree.nv), np.empty(tree.nv)
        self.method = "dense" if forces.cholesky else "lagrange"
        self._qf, self._kf = np.empty(tree.nq), np.empty(tree.nv)
        self.evals = 0
        empty: tuple[np.ndarray, np.ndarray, list[str]] = (np.zeros((0, 2), np.int64), np.zeros((0, 2)), [])
        self.lim_i, self.lim_f, self.lim_names = limit_arrays(model) if limits else empty
        n, nc = self.lim_i.shape[0], model.n_constraints
        self.lim_r = np.ascontiguousarray(model.constraint_matrix())  # the rows K the stops keep
        self.lim_s = np.zeros(limit_scratch_shape(n, tree.nv, nc))
        self.lim_a, self.lim_e = np.zeros(max(n, 1), np.int64), np.zeros(1)
        self.stops = n > 0

    def _a(self, t, q, v, tau, out):
        if self.method == "lagrange":  # one compiled call; a singular tree: below
            res = out if out.flags.c_contiguous and out.flags.writeable else np.empty(self.nv)
            status = _compiled.mimic_forward_dynamics(
                *self._tree_and_maps(),
                np.ascontiguousarray(q, dtype=float),  # the stages may pass views of their rows
                np.ascontiguousarray(v, dtype=float),
                np.ascontiguousarray(tau, dtype=float),
                np.ascontiguousarray(self.forces.fext_at(t, q, v), dtype=float),
                self.K,
                self.D,
                self.q_rest,
                self.use_passive,
                res,
            )
            if res is not out:
                out[:] = res
            if status <= 0:
                return status
        qf, vf = self.model.expand(q, v)
        # the tree's springs and dampers at the expanded state
        passive_forces_into(self.tree._kt, self.K, self.D, self.q_rest, self.use_passive, qf, vf, self.d, self.total)
        try:
            out[:] = forward_dynamics(
                self.model,
                q,
                v,
                tau + self.model.reduce_forces(self.total),
                self.forces.fext_pin_at(t, q, v),
                method=self.method,
            )
        except SingularInertiaError as exc:
            return 1 + self.tree.joint_names.index(exc.joint)
        return 0 if np.all(np.isfinite(out)) else -1

    def accelerations(self, t, n, q, v, out):
        """(status, tau): ``out`` = a(t, q, v); status 0, k + 1 (singular at joint k) or -1."""
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            return -1, np.zeros(self.nv)
        tau = self.forces.tau_at(t, q, v, n)
        self.evals += 1
        return self._a(t, q, v, tau, out), tau

    def ode(self, t, n, q, v, qdot, a):
        st, _ = self.accelerations(t, n, q, v, a)
        if st == 0:
            _config.configuration_rate(self.tree._kt, self.model.expand(q), self.model._full(v), self._qf)
            qdot[:] = self._qf[self.model._q_keep]
        return st

    def saved_accelerations(self, t, Q, V, TAU):
        A = np.empty((len(t), self.nv))
        for i in range(len(t)):
            if self._a(t[i], Q[i], V[i], TAU[i], A[i]):
                A[i] = np.nan
        return A

    #: a singular tree met by the compiled run: rerun from Python (dense form where needed)
    singular_fallback = True

    def _tree_and_maps(self):
        """(tree table, its work array, imap, fmap, tree nq, reach): the compiled entries' and the
        MimicSystem tuple's first arguments."""
        imap, fmap, reach = self.model._kernel_maps()
        return self.tree._kt, self.tree.thread_work(), imap, fmap, self.tree.nq, reach

    def kernel_system(self):
        """The compiled form (:class:`denoc_bridge.core.systems.MimicSystem`, Lagrange form;
        the compiled core's runs read it, core/run.pyx)."""
        return ks.MimicSystem(
            *self._tree_and_maps(),
            self.lim_i,
            self.lim_f,
            self.lim_r,
            self.lim_s,
            self.lim_a,
            self.lim_e,
        )

    def stop_energy(self):
        return float(self.lim_e[0])

    def end_step(self, q, v, t):
        """The joint limits after a step from Python: the compiled runs' stop
        (:func:`denoc_bridge.core.run.enforce_joint_limits` on the mimic system), its energy into
        ``lim_e``."""
        if self.lim_i.shape[0]:
            _, status = _run.enforce_joint_limits(self.kernel_system(), self.forcing(), q, v)
            if status:
                raise limits_failure(t)

    # The maps of the Python stages are the compiled runs' (core.configuration at the expanded
    # arguments, which core/run.pyx cimports), so that a run through them (a Python controller)
    # gives the compiled run's numbers (tests/simulation/test_limits.py).
    def integrate(self, q, xi, out):
        _config.integrate(self.tree._kt, self.model.expand(q), self.model._full(xi), self._qf)
        out[:] = self._qf[self.model._q_keep]

    def dexpinv(self, xi, v, out):
        _config.dexpinv(self.tree._kt, self.model._full(xi), self.model._full(v), self._kf)
        out[:] = self._kf[self.model._v_keep]

    def normalise(self, Q):
        return self.model.reduce_configuration(normalise_rows(self.tree, self.model.expand(Q)))
