"""Trajectories: the states a simulation went through, with their energies and power.

A :class:`Trajectory` holds, per saved instant, the time ``t`` (N,), the
configuration ``q`` (N, nq), velocity ``v`` (N, nv), acceleration ``a`` (N, nv) and
the actuation ``tau`` (N, nv) (without the joint springs and dampers of the model,
which :meth:`Trajectory.passive_forces` gives), plus the constant external wrenches
``f_ext`` if any.  Energies are computed on first use with the compiled O(n)
recursion (:func:`denoc_bridge.energies`), :data:`BLOCK` instants at a time.

A trajectory streamed to disk (``simulate(..., save_to="run.npy")``, :mod:`.stream`) holds its
arrays memory-mapped: ``traj.q[i]``, ``traj.q[a:b]``, ``traj[::k]`` (a trajectory of every k-th
state) and the energies read only the rows they need, a block at a time.
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

from denoc_bridge._files import atomic_path
from denoc_bridge.algorithms.configuration import difference, interpolate
from denoc_bridge.algorithms.dynamics import tree_inverse_dynamics as tid
from denoc_bridge.algorithms.kinematics import energies, forward_kinematics
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import check_model
from denoc_bridge.multibody.contact import Ground
from denoc_bridge.multibody.inputs import real_array
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.stream import is_stream, read_states

__all__ = ["Trajectory"]

#: the instants the energies and the power of a trajectory are computed for at once (a streamed
#: trajectory's rows are read a block at a time)
BLOCK = 65536


def _real(x: npt.ArrayLike, name: str) -> np.ndarray:

    return real_array(x, name)


def _cumulative_integral(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    """int_0^t y: Simpson's rule (fourth order, so that the work of smooth forces does not
    hide an integrator's drift), the trapezoid rule for fewer than three samples."""
    out = np.zeros_like(y)
    if y.shape[0] >= 3:
        from scipy.integrate import cumulative_simpson

        out[1:] = cumulative_simpson(y, x=t)
    elif y.shape[0] == 2:
        out[1] = 0.5 * (y[0] + y[1]) * (t[1] - t[0])
    return out


def joint_passive_forces(model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike) -> np.ndarray | None:
    """The joint springs' and dampers' forces ``-K (q (-) q_rest) - D v`` at the states (q, v)
    (one or a batch); on a :class:`~denoc_bridge.constraints.mimic.MimicModel` the tree's, at the expanded
    states, as forces on the reduced coordinates (``G^T``), as they act in its simulation.  None
    when the model has neither springs nor dampers."""

    if isinstance(model, MimicModel):
        tree = model.tree
        qt, vt = model.expand(q, v)
    else:
        tree, qt, vt = model, np.asarray(q), np.asarray(v)
    if not (np.any(tree.damping) or np.any(tree.stiffness)):
        return None
    out = -tree.damping * vt
    if np.any(tree.stiffness):
        out = out - tree.stiffness * difference(tree, np.broadcast_to(tree.rest_configuration, qt.shape), qt)
    return model.reduce_forces(out) if isinstance(model, MimicModel) else out


def _mass_g_size(model: Model | MimicModel, q: np.ndarray) -> float:
    """``m g0 L``: the energy to lift the robot by its size on Earth (see ``energy_scales``)."""
    tree = model.tree if isinstance(model, MimicModel) else model
    R, p = forward_kinematics(model, q)
    points = np.vstack([np.zeros((1, 3)), p, p + np.einsum("kij,kj->ki", R, tree.com)])
    size = float(np.linalg.norm(points.max(axis=0) - points.min(axis=0)))
    return float(tree.total_mass) * 9.81 * size


@dataclass(eq=False)
class Trajectory:
    """States of a simulated motion (see the module docstring).

    ``status`` is ``"completed"``, ``"interrupted"`` (Ctrl-C) or ``"failed"`` (see
    :class:`~denoc_bridge.errors.SimulationError`); ``wall_time`` is the seconds the
    integration took, ``n_steps`` the integration steps and ``n_evaluations`` the forward
    dynamics evaluations.

    ``passive`` is False when the run ignored the model's joint springs and dampers
    (``simulate(..., passive=False)``): its potential energy, :attr:`power_in` and
    :meth:`passive_forces` then leave them out too.

    On a model with loop closures, ``constraint_error`` holds the largest loop-closure error
    (m or rad) of each saved state and ``constraint_drift`` the largest error one step left
    before the projection removed it (NaN when the run did not project); see
    :func:`denoc_bridge.simulate`.
    """

    MAX_FRAMES = 1_000_000  # resample(): more frames than this is a mistake, not an animation

    model: Model | MimicModel
    t: np.ndarray
    q: np.ndarray
    v: np.ndarray
    a: np.ndarray
    tau: np.ndarray
    f_ext: np.ndarray | None = None
    method: str = ""
    dt: float = float("nan")
    wall_time: float = float("nan")
    n_steps: int = 0
    n_evaluations: int = 0
    status: str = "completed"
    message: str = ""
    constraint_error: np.ndarray | None = None
    constraint_drift: float = float("nan")
    #: whether the model's joint springs and dampers acted (``simulate(..., passive=False)``: not)
    passive: bool = True
    #: the energy the joint limits took up to each saved state (J; None: no limits): the stops'
    #: kinetic energy less the potential energy that putting q back on a limit added
    #: (the stops of ``denoc_bridge/core/limits.pxi``)
    limit_work: np.ndarray | None = None
    #: ground contact (``method="contact-euler"``): the resultant contact force on each (link,
    #: ground) pair at each saved state (N, world frame; states x pairs x 3), the pairs' names
    #: (``"link/ground"``), and the work of the
    #: contact forces up to each state (J, never positive); None otherwise.  Like ``a`` and
    #: ``tau``, a state's force is that of the step from it (up to the next saved state): the
    #: last state, where no step starts, has none (``contact_force[-2]`` is the last step's)
    contact_force: np.ndarray | None = None
    contact_work: np.ndarray | None = None
    contact_names: tuple[str, ...] = ()
    #: where each pair's contact force acts (m, world frame; states x pairs x 3): its centre of
    #: pressure, the pair's contact points weighted by their normal forces; NaN while the pair
    #: pushes nothing.  None without contact (and in files saved before it was kept)
    contact_point: np.ndarray | None = None
    #: the grounds of the run (:class:`~denoc_bridge.Ground`), for the pictures; () otherwise
    contact_grounds: tuple[Ground, ...] = ()
    #: the work of the contact impulses beyond ``contact_work`` up to each state (J; None: not
    #: known): ``-1/2 lambda . J (v+ - v)`` per step, so that with it an impulse works on the mean
    #: of the velocities before and after it (Kelvin's theorem).  In a landing with restitution 0
    #: it is the kinetic energy the impact takes (``lambda . J v+`` is 0 there); see
    #: :mod:`denoc_bridge.simulation.contact` for when a run knows it
    impact_work: np.ndarray | None = None
    #: whether a posture hold acted (:mod:`denoc_bridge.simulation.hold`): its forces are then in
    #: ``tau`` and its work in :attr:`power_in`
    hold: bool = False
    #: the implicit methods' Newton statistics (``newton_iterations``, ``linear_iterations``,
    #: ``jacobian``: "dense" or "gmres"); empty for the other methods
    solver_stats: dict[str, Any] = field(default_factory=dict)
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return int(self.t.shape[0])

    def __iter__(self) -> Any:
        raise TypeError("a Trajectory is not iterable: its states are rows of traj.t, traj.q, traj.v, ...")

    def __getitem__(self, index: slice) -> Trajectory:
        """The trajectory of the states ``index`` (a slice: ``traj[::100]`` keeps every 100th
        state, ``traj[-1000:]`` the last thousand); views of the arrays, so that a streamed
        trajectory stays on disk."""
        if not isinstance(index, slice):
            raise InputError(
                f"a Trajectory is indexed with a slice (traj[a:b:k]), got {type(index).__name__}; "
                "traj.q[i] is the configuration of state i"
            )

        def cut(x: np.ndarray | None) -> np.ndarray | None:
            return None if x is None else x[index]

        return replace(
            self,
            t=self.t[index],
            q=self.q[index],
            v=self.v[index],
            a=self.a[index],
            tau=self.tau[index],
            constraint_error=cut(self.constraint_error),
            limit_work=cut(self.limit_work),
            contact_force=cut(self.contact_force),
            contact_work=cut(self.contact_work),
            contact_point=cut(self.contact_point),
            impact_work=cut(self.impact_work),
            solver_stats=dict(self.solver_stats),
            _cache={},  # the energies of these states are computed anew
        )

    def __repr__(self) -> str:
        span = f"t = {self.t[0]:g} .. {self.t[-1]:g} s" if len(self) else "empty"
        return (
            f"Trajectory({self.model.name!r}, {len(self)} states, {span}, method={self.method!r}, "
            f"status={self.status!r})"
        )

    # ------------------------------------------------------------------ energies and power
    def _energies(self) -> tuple[np.ndarray, np.ndarray]:
        if "energies" not in self._cache:
            n = len(self)
            T, V = np.empty(n), np.empty(n)
            for i in range(0, n, BLOCK):
                b = slice(i, min(n, i + BLOCK))
                T[b], V[b] = energies(self.model, self.q[b], self.v[b], springs=self.passive)
            self._cache["energies"] = (T, V)
        return self._cache["energies"]

    @property
    def kinetic_energy(self) -> np.ndarray:
        """``1/2 v^T I(q) v`` at each instant (O(n) per instant)."""
        return self._energies()[0]

    @property
    def potential_energy(self) -> np.ndarray:
        """Gravitational potential plus the energy stored in the joint springs (when they acted)."""
        return self._energies()[1]

    @property
    def total_energy(self) -> np.ndarray:
        return self.kinetic_energy + self.potential_energy

    def _tree_states(self) -> tuple[Model, np.ndarray, np.ndarray, np.ndarray]:
        """(tree, q, v, a) in the tree's layout: the model's own, or a MimicModel's expanded."""
        m = self.model
        if not isinstance(m, MimicModel):
            return m, self.q, self.v, self.a
        return (m.tree, *m.expand(self.q, self.v, self.a))

    def passive_forces(self) -> np.ndarray:
        """Joint damping forces ``-D v`` and spring forces ``-K (q (-) q_rest)`` at each instant
        (on a MimicModel the tree's at the expanded states, as forces on the reduced coordinates)."""
        if not len(self) or not self.passive:
            return np.zeros((len(self), self.model.nv))
        out = joint_passive_forces(self.model, self.q, self.v)
        return np.zeros_like(self.v) if out is None else out

    @property
    def power_in(self) -> np.ndarray:
        """Power of the non-conservative forces at each instant: actuation and joint damping
        (``(tau - D v) . v``; without ``D`` when the dampers did not act) and the external
        wrenches (``v . J^T f_ext``).  Springs and gravity are conservative: they are in the
        potential energy.  On a ground run ``tau`` holds the posture hold's forces too
        (:attr:`hold`).  The contacts' and the joint-limit stops' work are not power: see
        :meth:`energy_drift`."""
        return self._power_parts().sum(axis=1)

    def _power_parts(self) -> np.ndarray:
        """(N, 3): the power of the actuation ``tau . v``, of the joint dampers ``-(D v) . v`` and
        of the external wrenches at each instant (:attr:`power_in` is their sum)."""
        if "power" not in self._cache:
            n = len(self)
            p = np.zeros((n, 3))
            for i in range(0, n, BLOCK):
                b = slice(i, min(n, i + BLOCK))
                p[b] = self._power(b)
            self._cache["power"] = p
        return self._cache["power"]

    def _power(self, b: slice) -> np.ndarray:
        """:meth:`_power_parts` at the states ``b``."""
        tree, q, v, a = self[b]._tree_states()
        tau, vr = self.tau[b], self.v[b]
        out = np.zeros((tau.shape[0], 3))
        out[:, 0] = np.einsum("ij,ij->i", tau, vr)
        if self.passive:  # the dampers act on the tree's joints (a MimicModel's expanded ones)
            out[:, 1] = -np.einsum("ij,ij->i", tree.damping * v, v)
        if self.f_ext is not None:
            q, v, a = (np.ascontiguousarray(x) for x in (q, v, a))
            jtf = tid(tree, q, v, a) - tid(tree, q, v, a, self.f_ext)
            out[:, 2] = np.einsum("ij,ij->i", jtf, v)
        return out

    def _terms(self) -> list[tuple[str, float, np.ndarray]]:
        """The work terms of the energy balance: (symbol, sign, cumulative work up to each saved
        state), the balance being ``E - E(0) - sum(sign * W)``.  ``W_in`` (the work of
        :attr:`power_in`, Simpson's rule on the saved instants) always; ``W_stops`` (what the
        joint-limit stops took, :attr:`limit_work`: -1) when the run had limits; ``W_contact``
        (the contacts' work on the robot, :attr:`contact_work` and :attr:`impact_work`) when it
        had contact."""
        if "terms" not in self._cache:
            terms = [("W_in", 1.0, _cumulative_integral(self.power_in, self.t))]
            if self.limit_work is not None:
                terms.append(("W_stops", -1.0, np.asarray(self.limit_work, dtype=float)))
            if self.contact_work is not None:
                w = np.asarray(self.contact_work, dtype=float)
                terms.append(("W_contact", 1.0, w if self.impact_work is None else w + self.impact_work))
            self._cache["terms"] = terms
        return self._cache["terms"]

    def energy_drift(self, relative: bool = False) -> np.ndarray:
        """``E(t) - E(0) - W(t)``: the energy the integration created or lost, with ``W`` every
        work the run records (the energy balance; :meth:`balance_text` writes it, with what it
        includes).

        ``E`` is :attr:`total_energy`; ``W`` the work of :attr:`power_in` (actuation, the posture
        hold, joint damping, external wrenches; Simpson's rule on the saved instants), less what the
        joint-limit stops took (:attr:`limit_work`), plus the work of the ground contact
        (:attr:`contact_work`: the forces over the steps' displacements, and :attr:`impact_work`:
        the impacts).  Zero for exact integration.

        Parameters
        ----------
        relative : bool
            Divide by :attr:`energy_scale`: a drift as a fraction of the energies at play (0
            where that scale is 0 and so is the drift: no energy at play, nothing to drift).

        Returns
        -------
        (N,) array
            The drift at each saved instant, J (or relative); empty for an empty trajectory.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> pendulum = db.load_robot("chain:2")  # a planar double pendulum
        >>> traj = db.simulate(pendulum, [0.3, 0.0], [0.0, 0.0], 1.0, 1e-3, progress=False)
        >>> bool(abs(traj.energy_drift(relative=True)[-1]) < 1e-7)  # RK4 at 1 ms
        True
        """
        E = self.total_energy
        if not len(self):
            return E
        drift = E - E[0]
        for _, sign, work in self._terms():
            drift = drift - sign * work
        if relative:
            scale = self.energy_scale
            if scale > 0:
                return drift / scale
            # no energy at play (no motion, no work, no mass): no drift either, 0 of nothing; what
            # is not 0 (round-off that made energy from nothing, NaN) stays visible: +-inf, NaN
            with np.errstate(invalid="ignore"):  # 0 * inf, where the drift is 0 (and 0 is taken)
                return np.where(drift == 0.0, 0.0, drift * np.inf)
        return drift

    def balance_text(self) -> str:
        """The energy balance of :meth:`energy_drift` as the pictures and the command line write
        it: ``"E - E(0) - W_in"``, ``+ W_stops`` when the joint-limit stops took energy (more
        than 1e-9 of the energy scale), ``- W_contact`` with ground contact."""
        text = "E - E(0)"
        for symbol, sign, _ in self._said():
            text += f" {'-' if sign > 0 else '+'} {symbol}"
        return text

    def _said(self) -> list[tuple[str, float, np.ndarray]]:
        """The terms the balance's text names: all but stops that took nothing measurable (at
        most 1e-9 of the energy scale: a round-off touch of a limit, 1e-37 J)."""
        return [
            (symbol, sign, work)
            for symbol, sign, work in self._terms()
            if symbol != "W_stops" or (len(work) and float(work[-1]) > 1e-9 * self.energy_scale)
        ]

    def balance_parts(self) -> str:
        """What the terms of :meth:`balance_text` include, in words (``"W_in: actuation, joint
        damping; W_contact: contact forces and impacts"``); "" when no work was done."""
        parts = []
        for symbol, _, work in self._said():
            if not (len(work) and np.any(work != 0)):
                continue
            if symbol == "W_in":
                p = self._power_parts()
                said = [
                    name
                    for name, k in (("actuation", 0), ("joint damping", 1), ("external wrenches", 2))
                    if np.any(p[:, k] != 0)
                ]
                if said and said[0] == "actuation" and self.hold:  # tau holds the hold's forces too
                    said[0] = "actuation with the posture hold"
                parts.append(f"W_in: {', '.join(said) or 'none'}")
            elif symbol == "W_stops":
                parts.append("W_stops: what the joint-limit stops took")
            else:
                known = "contact forces and impacts" if self.impact_work is not None else "contact forces"
                parts.append(f"W_contact: {known}")
        return "; ".join(parts)

    #: the floor of :attr:`energy_scale`, as a fraction of ``m g0 L``
    ENERGY_FLOOR = 1e-6

    def energy_scales(self) -> dict[str, float]:
        """The energies a drift is measured against (J), by name: ``"peak kinetic energy"``,
        ``"potential energy variation"`` (max - min), ``"work done"`` (``int |power_in| dt`` and
        what the joint-limit stops and the contacts took)
        and ``"floor"``: ``ENERGY_FLOOR * m g0 L``, with ``m`` the robot's mass, ``g0 = 9.81
        m/s^2`` (whatever the model's gravity) and ``L`` its size at the first state (the
        diagonal of the box around the base, the link frames and centres of mass), so that a
        robot that hardly moves is not judged by its round-off."""
        if not len(self):
            return {"peak kinetic energy": 0.0, "potential energy variation": 0.0, "work done": 0.0, "floor": 0.0}
        V = self.potential_energy
        work = _cumulative_integral(np.abs(self.power_in), self.t)[-1]
        for symbol, _, w in self._terms():
            if symbol != "W_in":  # the stops took W_stops >= 0, the contacts did W_contact <= 0
                work += abs(float(w[-1]))
        return {
            "peak kinetic energy": float(np.max(self.kinetic_energy)),
            "potential energy variation": float(np.max(V) - np.min(V)),
            "work done": float(work),
            "floor": self.ENERGY_FLOOR * _mass_g_size(self.model, self.q[0]),
        }

    @property
    def energy_scale(self) -> float:
        """The largest of :meth:`energy_scales` (J): what ``energy_drift(relative=True)`` divides by."""
        if "scale" not in self._cache:
            self._cache["scale"] = max(self.energy_scales().values())
        return self._cache["scale"]

    # ------------------------------------------------------------------ resampling and files
    def at(self, times: npt.ArrayLike) -> Trajectory:
        """The trajectory at other instants (within its time span): configurations along the
        geodesics between saved states (:func:`denoc_bridge.interpolate`), velocities,
        accelerations and actuation linearly.

        The limit work is interpolated linearly too; the run's metadata (method, step,
        status, wall time, counts, ``constraint_drift``, ``solver_stats``) is kept; the per-state
        ``constraint_error`` is not (None).

        Parameters
        ----------
        times : float or (M,) array
            Finite instants within ``[t[0], t[-1]]`` (1e-12 s of slack), in any order.

        Returns
        -------
        Trajectory
            M states at ``times``.

        Raises
        ------
        InputTypeError
            ``times`` is not real numbers.
        InputError
            An empty trajectory, ``times`` not finite, of more than one axis, or outside the
            time span.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> pendulum = db.load_robot("chain:2")
        >>> traj = db.simulate(pendulum, [0.3, 0.0], [0.0, 0.0], 1.0, 1e-3, progress=False)
        >>> half = traj.at([0.25, 0.5])
        >>> half.t, bool(np.allclose(half.q, traj.q[[250, 500]]))  # saved instants: the saved states
        (array([0.25, 0.5 ]), True)
        """

        times = np.atleast_1d(_real(times, "times"))
        if len(self) == 0:
            raise InputError("the trajectory is empty")
        if times.ndim != 1 or not np.all(np.isfinite(times)):
            raise InputError("times must be a number or a 1-D array of finite numbers")
        if np.any(times < self.t[0] - 1e-12) or np.any(times > self.t[-1] + 1e-12):
            raise InputError(f"times must lie within [{self.t[0]}, {self.t[-1]}]")
        i = np.clip(np.searchsorted(self.t, times, side="right") - 1, 0, max(len(self) - 2, 0))
        j = np.minimum(i + 1, len(self) - 1)
        span = self.t[j] - self.t[i]
        u = np.where(span > 0, (times - self.t[i]) / np.where(span > 0, span, 1.0), 0.0)

        def lin(x: np.ndarray) -> np.ndarray:
            return x[i] + u[:, None] * (x[j] - x[i])

        q = interpolate(self.model, self.q[i], self.q[j], u)
        return Trajectory(
            self.model,
            times,
            q,
            lin(self.v),
            lin(self.a),
            lin(self.tau),
            self.f_ext,
            self.method,
            self.dt,
            self.wall_time,
            self.n_steps,
            self.n_evaluations,
            self.status,
            self.message,
            constraint_drift=self.constraint_drift,
            passive=self.passive,
            hold=self.hold,
            solver_stats=dict(self.solver_stats),
            limit_work=None
            if self.limit_work is None
            else self.limit_work[i] + u * (self.limit_work[j] - self.limit_work[i]),
            **self._contact_at(i, j, u),
        )

    def _contact_at(self, i: np.ndarray, j: np.ndarray, u: np.ndarray) -> dict[str, Any]:
        """The contact fields at the instants between saved states i and j (fraction u):
        forces and work linear, a point linear where the pair pushes at both states, else the
        nearer state's (NaN: it pushes nothing there)."""
        if self.contact_force is None or self.contact_work is None:
            return {}
        w = u[:, None, None]
        force = self.contact_force[i] + w * (self.contact_force[j] - self.contact_force[i])
        fields: dict[str, Any] = {
            "contact_force": force,
            "contact_work": self.contact_work[i] + u * (self.contact_work[j] - self.contact_work[i]),
            "contact_names": self.contact_names,
            "contact_grounds": self.contact_grounds,
        }
        if self.impact_work is not None:
            fields["impact_work"] = self.impact_work[i] + u * (self.impact_work[j] - self.impact_work[i])
        if self.contact_point is not None:
            P0, P1 = self.contact_point[i], self.contact_point[j]
            nearer = np.where(w < 0.5, P0, P1)
            fields["contact_point"] = np.where(np.isfinite(P0) & np.isfinite(P1), P0 + w * (P1 - P0), nearer)
        return fields

    def resample(self, fps: float) -> Trajectory:
        """The trajectory at ``fps`` frames per second (for animation), from its first instant;
        at most ``MAX_FRAMES`` frames.

        Frames at ``t[0] + k / fps`` up to the last saved instant, by :meth:`at`.

        Parameters
        ----------
        fps : float
            Frames per second, a finite number > 0.

        Returns
        -------
        Trajectory

        Raises
        ------
        InputTypeError
            ``fps`` is not a real number.
        InputError
            ``fps`` not one positive finite number, more than ``MAX_FRAMES`` frames, an empty
            trajectory.

        Examples
        --------
        >>> import denoc_bridge as db
        >>> pendulum = db.load_robot("chain:2")
        >>> traj = db.simulate(pendulum, [0.3, 0.0], [0.0, 0.0], 1.0, 1e-3, progress=False)
        >>> traj.resample(4).t
        array([0.  , 0.25, 0.5 , 0.75, 1.  ])
        """
        rate = _real(fps, "fps")
        if rate.ndim or not (np.isfinite(rate) and rate > 0):
            raise InputError(f"fps must be a positive frame rate (one number), got {fps!r}")
        fps = float(rate)
        if len(self) == 0:
            raise InputError("the trajectory is empty: there is nothing to resample")
        frames = (self.t[-1] - self.t[0]) * fps + 1
        if frames > self.MAX_FRAMES:
            raise InputError(
                f"fps = {fps:g} over {self.t[-1] - self.t[0]:g} s gives {frames:.3g} frames; at most "
                f"{self.MAX_FRAMES:,} (Trajectory.MAX_FRAMES)"
            )
        n = int(np.floor((self.t[-1] - self.t[0]) * fps + 1e-9)) + 1
        return self.at(self.t[0] + np.arange(n) / fps)

    def to_npz(self, path: str | os.PathLike[str] | IO[bytes], compress: bool = True) -> None:
        """Save to a ``.npz`` (arrays, the model's name and joint names, metadata), compressed
        unless ``compress=False`` (several times faster to write); ``path`` may be a file object.
        :meth:`load` reads it back with the model.  A file is written atomically: a run
        interrupted or killed while writing leaves the previous file or none, never a torn one.

        The energies are saved too (computed now if they were not).  A path without the
        ``.npz`` suffix gets it (numpy's rule); missing folders are created.

        Parameters
        ----------
        path : str, path or binary file object
            Where to write.
        compress : bool
            Deflate the arrays (smaller, slower to write).

        Raises
        ------
        InputTypeError
            ``path`` is neither a path nor a binary file object.
        OSError
            The file or its folder cannot be written (naming it).

        Examples
        --------
        >>> import io
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> pendulum = db.load_robot("chain:2")
        >>> traj = db.simulate(pendulum, [0.3, 0.0], [0.0, 0.0], 0.1, 1e-3, progress=False)
        >>> buffer = io.BytesIO()  # or a path: traj.to_npz("run.npz")
        >>> traj.to_npz(buffer)
        >>> _ = buffer.seek(0)
        >>> again = db.Trajectory.load(buffer, pendulum)
        >>> bool(np.array_equal(again.q, traj.q))
        True
        """
        if not isinstance(path, (str, os.PathLike)) and not callable(getattr(path, "write", None)):
            raise InputTypeError(f"path must be a file name, a path or a binary file object, got {type(path).__name__}")
        if isinstance(path, (str, os.PathLike)):  # a file: written atomically (numpy's ".npz" rule)
            target = Path(path) if str(path).endswith(".npz") else Path(f"{os.fspath(path)}.npz")
            with atomic_path(target) as tmp, open(tmp, "wb") as f:
                self.to_npz(f, compress=compress)
            return
        m = self.model
        (np.savez_compressed if compress else np.savez)(
            path,
            t=self.t,
            q=self.q,
            v=self.v,
            a=self.a,
            tau=self.tau,
            f_ext=self.f_ext if self.f_ext is not None else np.zeros((0, 6)),
            kinetic_energy=self.kinetic_energy,
            potential_energy=self.potential_energy,
            model_name=m.name,
            joint_names=np.array(m.joint_names),
            nq=m.nq,
            nv=m.nv,
            method=self.method,
            dt=self.dt,
            wall_time=self.wall_time,
            n_steps=self.n_steps,
            n_evaluations=self.n_evaluations,
            status=self.status,
            message=self.message,
            constraint_error=self.constraint_error if self.constraint_error is not None else np.zeros(0),
            constraint_drift=self.constraint_drift,
            passive=self.passive,
            limit_work=self.limit_work if self.limit_work is not None else np.zeros(0),
            hold=self.hold,
            **self._contact_arrays(),
        )

    def _contact_arrays(self) -> dict[str, Any]:
        """The contact fields as plain arrays for :meth:`to_npz` (empty for a run without contact)."""
        grounds = self.contact_grounds
        return {
            "contact_force": self.contact_force if self.contact_force is not None else np.zeros((0, 0, 3)),
            "contact_work": self.contact_work if self.contact_work is not None else np.zeros(0),
            "contact_names": np.array(self.contact_names, dtype=str),
            "contact_point": self.contact_point if self.contact_point is not None else np.zeros((0, 0, 3)),
            "impact_work": self.impact_work if self.impact_work is not None else np.zeros(0),
            "ground_names": np.array([g.name for g in grounds], dtype=str),
            "ground_normals": np.array([g.normal for g in grounds], dtype=float).reshape(-1, 3),
            "ground_offsets": np.array([g.offset for g in grounds], dtype=float),
            "ground_mu": np.array([g.mu for g in grounds], dtype=float),
            "ground_restitution": np.array([g.restitution for g in grounds], dtype=float),
        }

    @staticmethod
    def _contact_fields(f: Any) -> dict[str, Any]:
        """The contact fields of a saved .npz (none in files of runs without contact, or older)."""
        if "contact_work" not in f.files or not f["contact_work"].size:
            return {}
        grounds = tuple(
            Ground(height=float(h), normal=n, mu=float(mu), restitution=float(e), name=str(name))
            for name, n, h, mu, e in zip(
                f["ground_names"], f["ground_normals"], f["ground_offsets"], f["ground_mu"], f["ground_restitution"]
            )
        )
        return {
            "contact_force": f["contact_force"],
            "contact_work": f["contact_work"],
            "contact_names": tuple(str(x) for x in f["contact_names"]),
            "contact_point": f["contact_point"] if "contact_point" in f.files and f["contact_point"].size else None,
            "impact_work": f["impact_work"] if "impact_work" in f.files and f["impact_work"].size else None,
            "contact_grounds": grounds,
        }

    @classmethod
    def load(cls, path: str | os.PathLike[str] | IO[bytes], model: Model | MimicModel) -> Trajectory:
        """A trajectory saved by :meth:`to_npz`, or streamed to disk by
        ``simulate(..., save_to=path)`` (a ``.npy`` file, read lazily: memory-mapped, see
        :mod:`denoc_bridge.simulation.stream`), for ``model`` (checked by its joint names)."""

        check_model(model)
        if is_stream(path):
            assert isinstance(path, (str, os.PathLike))  # is_stream reads paths only
            return cls._from_stream(path, model)
        try:
            f = np.load(path, allow_pickle=False)
        except (ValueError, EOFError, zipfile.BadZipFile):
            raise InputError(f"{path} is not a trajectory saved by Trajectory.to_npz (not a .npz file)") from None
        if not isinstance(f, np.lib.npyio.NpzFile) or not {"t", "q", "joint_names"} <= set(f.files):
            if isinstance(f, np.lib.npyio.NpzFile):
                f.close()
            raise InputError(f"{path} is not a trajectory saved by Trajectory.to_npz")
        try:
            return cls._from_npz(f, path, model)
        except (zipfile.BadZipFile, EOFError, ValueError, OSError) as exc:
            if isinstance(exc, InputError):
                raise
            raise InputError(f"{path} is a torn or damaged .npz file ({type(exc).__name__}: {exc})") from None

    @classmethod
    def _from_npz(cls, f: Any, path: Any, model: Model | MimicModel) -> Trajectory:
        with f:
            names = tuple(str(s) for s in f["joint_names"])
            if names != tuple(model.joint_names):
                raise InputError(f"{path}: saved for a model with joints {names[:3]}..., not for '{model.name}'")
            f_ext = f["f_ext"] if f["f_ext"].shape[0] else None
            err = f["constraint_error"] if "constraint_error" in f.files and f["constraint_error"].size else None
            drift = float(f["constraint_drift"]) if "constraint_drift" in f.files else float("nan")
            passive = bool(f["passive"]) if "passive" in f.files else True
            stops = f["limit_work"] if "limit_work" in f.files and f["limit_work"].size else None
            return cls(
                model,
                f["t"],
                f["q"],
                f["v"],
                f["a"],
                f["tau"],
                f_ext,
                str(f["method"]),
                float(f["dt"]),
                float(f["wall_time"]),
                int(f["n_steps"]),
                int(f["n_evaluations"]),
                str(f["status"]),
                str(f["message"]),
                err,
                drift,
                passive,
                stops,
                hold=bool(f["hold"]) if "hold" in f.files else False,
                **cls._contact_fields(f),
            )

    @classmethod
    def _from_stream(cls, path: str | os.PathLike[str], model: Model | MimicModel) -> Trajectory:
        rec, meta = read_states(path)
        names = tuple(meta.get("joint_names", ()))
        if names != tuple(model.joint_names) or (meta.get("nq"), meta.get("nv")) != (model.nq, model.nv):
            raise InputError(f"{path}: streamed for a model with joints {names[:3]}..., not for '{model.name}'")
        fields = rec.dtype.names or ()
        f_ext = meta.get("f_ext")
        return cls(
            model,
            rec["t"],
            rec["q"],
            rec["v"],
            rec["a"],
            rec["tau"],
            None if f_ext is None else np.array(f_ext, dtype=float),
            str(meta["method"]),
            float(meta["dt"]),
            float(meta["wall_time"]),
            int(meta["n_steps"]),
            int(meta["n_evaluations"]),
            str(meta["status"]),
            str(meta["message"]),
            rec["constraint_error"] if "constraint_error" in fields else None,
            float(meta.get("constraint_drift", float("nan"))),
            bool(meta.get("passive", True)),
            rec["limit_work"] if "limit_work" in fields else None,
        )
