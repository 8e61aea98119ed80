"""Simulation of a :class:`~denoc_bridge.MimicModel` whose tree has loop closures (called by
:func:`denoc_bridge.simulate`).

The state is the reduced (q, v).  Each stage's accelerations come from the stacked rows
[K; C] solved on the tree (:func:`denoc_bridge.constraints.mimic_loops.forward_dynamics`,
``tau + G^T tau_passive`` as :class:`~denoc_bridge.simulation.mimic.MimicSystem`), the
configuration maps are the MimicSystem's (the tree's step restricted to the mimic relations).
``stabilization`` as for a model with loops (:mod:`denoc_bridge.simulation.loops`):
``"projection"`` (default) moves the state back onto the loops after every step by the
smallest corrections in the kinetic-energy metric of the coupled system
(:func:`~denoc_bridge.constraints.mimic_loops.kinetic_projection`), ``"baumgarte"``
stabilises the loop rows, ``"none"`` lets them drift.  The trajectory carries
``constraint_error`` (the loops' error at each saved state) and ``constraint_drift`` (the
largest error one step left before its projection).  RK4 and Euler run in the compiled core's
run (``denoc_bridge/core/run.pyx`` on a :class:`denoc_bridge.core.systems.MimicLoopSystem`:
the mimic rows K stacked ahead of the loops' rows in ``core/loops.pyx``), callables and
``dynamics="cholesky"`` stage by stage from Python, the same steps.
"""

from __future__ import annotations

import numpy as np

from denoc_bridge.constraints import loops as lp
from denoc_bridge.constraints import mimic_loops as ml
from denoc_bridge.constraints.solve import RANK_RTOL
from denoc_bridge.core import load
from denoc_bridge.core import systems as ks
from denoc_bridge.errors import InputError, SimulationError, SingularInertiaError
from denoc_bridge.simulation.common import passive_forces_into
from denoc_bridge.simulation.loops import MAX_ITER
from denoc_bridge.simulation.loops import failure as loop_failure
from denoc_bridge.simulation.mimic import MimicSystem

_loops = load("loops")


class MimicLoopSystem(MimicSystem):
    """A :class:`MimicSystem` whose accelerations are those of the stacked mimic and loop rows."""

    def __init__(self, model, forces, passive: bool, opts=(0.0, 0.0, False, 1e-12)):
        super().__init__(model, forces, passive)
        alpha, beta, self.project, self.tol = opts
        self.baumgarte = (alpha, beta)
        self._drift = np.zeros(1)  # the largest error a step left before its projection

    def _a(self, t, q, v, tau, out):
        m = self.model
        qf, vf = m.expand(q, v)
        passive_forces_into(self.tree._kt, self.K, self.D, self.q_rest, self.use_passive, qf, vf, self.d, self.total)
        try:
            out[:] = ml.forward_dynamics(
                m, q, v, tau + m.reduce_forces(self.total), self.forces.fext_pin_at(t, q, v), baumgarte=self.baumgarte
            )
        except SingularInertiaError as exc:
            return 1 + self.tree.joint_names.index(exc.joint)
        except InputError:
            return -1
        return 0 if np.all(np.isfinite(out)) else -1

    loops = True

    def kernel_system(self):
        """The compiled form (:class:`denoc_bridge.core.systems.MimicLoopSystem`, run by
        ``denoc_bridge/core/run.pyx``): the mimic rows K (the stops' ``lim_r``) stacked ahead of
        the tree's cut joints, a scratch of its own for the nc + m rows."""
        m, tree = self.model, self.tree
        imap, fmap, _ = m._kernel_maps()
        cp = lp.compiled(tree)
        alpha, beta = self.baumgarte
        opts = np.array([alpha, beta, RANK_RTOL, self.tol, 1.0 if self.project else 0.0, MAX_ITER])
        sb = np.zeros(_loops.scratch_size(tree.n_links, tree.nv, m.n_constraints + cp.m))
        return ks.MimicLoopSystem(
            tree._kt, cp.work, imap, fmap, tree.nq, self.lim_r, cp.pi, cp.pf, sb, opts, self._drift
        )

    def end_step(self, q, v, t):
        if self.project:
            self._drift[0] = max(self._drift[0], _project(self.model, q, v, self.tol, t))

    def failure(self, status, t, stage_arrays, traj):
        if status in (-3, -4):
            return loop_failure(self.model, status, t, traj)
        return super().failure(status, t, stage_arrays, traj)

    def error(self, q):
        return float(np.abs(ml.loop_residual(self.model, q)).max())

    @property
    def drift(self):
        return float(self._drift[0]) if self.project else float("nan")


def _project(model, q, v, tol, t):
    """Project (q, v) in place onto the loops; returns the error before."""
    try:
        qn, vn, err0, _ = ml.kinetic_projection(model, q, v, tol)
    except (InputError, np.linalg.LinAlgError, SingularInertiaError):
        raise SimulationError(
            f"simulation stopped at t = {t:.6g} s: the loops ({', '.join(lc.name for lc in model.loops)}) could "
            "not be closed by projection; a smaller dt may help",
            t,
            "",
            None,
        ) from None
    q[:], v[:] = qn, vn
    return err0


def initial_state(model, q0, v0, project, tol):
    """The initial state, projected onto the loops when ``project``; a locked loop is named."""
    q, v = q0.copy(), v0.copy()
    if project:
        try:
            _project(model, q, v, tol, 0.0)
        except SimulationError:
            raise InputError(
                f"q0 is too far from closing the loops of '{model.name}' ({', '.join(lc.name for lc in model.loops)}); "
                "start from a configuration that closes them (db.loops.project_configuration)"
            ) from None
    _, _, phi, J, _ = ml.stacked_rows(model, q)
    ml.check_coupling(model, J[model.n_constraints :], phi[model.n_constraints :])  # a locked loop: named
    return q, v
