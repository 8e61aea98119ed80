"""A posture-holding joint PD for the contact time stepper, implicit in the step so that it is
stable at any gains and any dt.

The hold pulls every joint but the free joints (a floating base, a free body) towards ``q_ref``:
``tau_hold = Kp (q_ref (-) q) - Kd v``.  Taken at the end of the step (q+ = q (+) dt v+), it
enters the step's velocity update as

    (M + A) (v+ - v) = dt (tau - h + Kp (q_ref (-) q) - (Kd + dt Kp) v) + J^T lambda,
    A = dt Kd + dt^2 Kp,

i.e. the tree's O(n) forward dynamics with ``A`` added to the joints' armature (the same
diagonal term the GIM carries for rotor inertia, 000's recursion unchanged), and the contact's
Delassus operator on that model.  Explicit, the same gains would need ``omega dt < 2`` with the
smallest inertia a joint moves in the air (a foot): a humanoid's ankle would then be too soft
to hold the robot standing, and stiffer gains blow up in the flight before landing.  The force
the step applied is ``tau_hold = Kp (q_ref (-) q) - (Kd + dt Kp) v+`` (saved in the trajectory's
``tau``).

Default gains (:func:`posture_hold`): one stiffness for every joint, that of the whole robot
held at arm's length with natural frequency ``frequency`` (Hz) and damping ratio
``damping_ratio``: ``Kp = omega^2 m l^2``, ``Kd = 2 zeta omega m l^2``, with ``m`` the robot's
mass and ``l`` its extent at ``q_ref`` (the largest spread of its link origins along x, y or
z).  A joint that carries the robot (an ankle, a knee) is then stiff enough for its weight
(``Kp >= m g l`` from 1.6 Hz on), and the light joints follow their reference closely.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.configuration import difference, difference_unchecked, neutral_configuration
from denoc_bridge.algorithms.kinematics import forward_kinematics
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.simulation.mimic import initial_configuration

__all__ = ["PostureHold", "posture_hold"]


@dataclass(frozen=True, eq=False)
class PostureHold:
    """Joint PD gains ``kp``, ``kd`` (nv,: zero on a floating base's DOFs) towards ``q_ref`` (nq,).
    Build it with :func:`posture_hold`; pass it as ``simulate(..., hold=...)``."""

    q_ref: np.ndarray
    kp: np.ndarray
    kd: np.ndarray

    def armature(self, dt: float) -> np.ndarray:
        """``A = dt Kd + dt^2 Kp``: the hold's term on the GIM's diagonal for a step dt."""
        return dt * self.kd + dt * dt * self.kp

    def pull(self, model: Any, q: np.ndarray) -> np.ndarray:
        """``Kp (q_ref (-) q)``: the spring part of the hold at q (a float64 (nq,) configuration
        of ``model``, normalised: the simulation's own state; reduced on a MimicModel)."""
        if isinstance(model, MimicModel):  # the checked difference maps it through the tree
            return self.kp * difference(model, q, self.q_ref)
        # a writable copy of q_ref: the compiled kernel has one version, for writable arrays
        return self.kp * difference_unchecked(model, q, np.array(self.q_ref))

    def rate(self, dt: float) -> np.ndarray:
        """``Kd + dt Kp``: the hold's force per unit velocity in a step of length dt."""
        return self.kd + dt * self.kp


def _gain(value: Any, nv: int, what: str) -> np.ndarray:
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        a = np.full(0, np.nan)
    if a.ndim == 0:
        a = np.full(nv, a)
    if a.shape != (nv,) or not np.all(np.isfinite(a)) or np.any(a < 0):
        raise InputError(f"posture_hold: {what} must be a number >= 0 or {nv} of them (nv), got {value!r}")
    return a


def posture_hold(
    model: Any,
    q_ref: npt.ArrayLike | None = None,
    *,
    frequency: float = 5.0,
    damping_ratio: float = 1.0,
    kp: npt.ArrayLike | None = None,
    kd: npt.ArrayLike | None = None,
) -> PostureHold:
    """A :class:`PostureHold` of ``model`` towards ``q_ref`` (default: the neutral configuration).

    Gains: ``kp``, ``kd`` given (a number for every joint, or nv of them: N m/rad and N m s/rad,
    N/m and N s/m on prismatic joints), or from ``frequency`` (Hz, default 5) and
    ``damping_ratio`` (default 1, critical) as the module docstring says.  A free joint's DOFs
    (the floating base's, another free body's such as a ball) are never held: their gains are
    zero."""
    if q_ref is None:
        q = neutral_configuration(model)
    elif isinstance(model, MimicModel):
        q = initial_configuration(model, q_ref, "q_ref")
    else:
        q = _inputs.configuration(model, q_ref, "q_ref")
    q = np.array(q, dtype=float)
    for name, value in (("frequency", frequency), ("damping_ratio", damping_ratio)):
        if not (isinstance(value, (int, float, np.floating)) and np.isfinite(value) and value >= 0):
            raise InputError(f"posture_hold: {name} must be a number >= 0, got {value!r}")
    nv = model.nv
    if kp is None or kd is None:
        _, p = forward_kinematics(model, q)
        extent = float(np.ptp(np.asarray(p).reshape(-1, 3), axis=0).max()) if len(p) > 1 else 0.0
        inertia = float(model.total_mass) * max(extent, 0.1) ** 2  # at least 10 cm: a single link
        omega = 2.0 * np.pi * float(frequency)
    kp_a = _gain(kp, nv, "kp") if kp is not None else np.full(nv, omega * omega * inertia)
    kd_a = _gain(kd, nv, "kd") if kd is not None else np.full(nv, 2.0 * float(damping_ratio) * omega * inertia)
    for k in np.flatnonzero(np.asarray(model.joint_type) == int(JointType.FREEFLYER)):  # a MimicModel's too
        free = slice(int(model.idx_v[k]), int(model.idx_v[k]) + int(model.nv_joint[k]))
        kp_a[free] = 0.0  # a free body (the floating base, a ball) is never held
        kd_a[free] = 0.0
    for a in (q, kp_a, kd_a):
        a.setflags(write=False)
    return PostureHold(q, kp_a, kd_a)
