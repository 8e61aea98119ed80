"""Prescribed motions and the torques that produce them (inverse dynamics along a trajectory).

* :func:`cycloidal_motion` is the papers' smooth rest-to-rest joint trajectory:
  000 eq. (15), ``theta = theta(0) + (theta(T) - theta(0)) / T [t - T / (2 pi) sin(2 pi t / T)]``,
  whose rates and accelerations vanish at both ends; 003 eq. (38),
  ``theta = pi t / T - 1/2 sin(2 pi t / T)``, is the same curve from 0 to pi.
* :func:`trajectory_torques` gives the joint torques along a sampled trajectory (one
  batched, compiled inverse dynamics call), minus the model's springs and dampers, so that
  :func:`denoc_bridge.simulate` with those torques follows the trajectory.
* :func:`feedforward` turns a motion into the controller ``tau(t, q, v)`` of a forced
  simulation (003 §4.2): the torques of the desired motion at time t, whatever the state.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from denoc_bridge.dynamics import inverse_dynamics
from denoc_bridge.errors import InputError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.inputs import JointsLike, WrenchesLike, real_array
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.trajectory import joint_passive_forces

__all__ = ["cycloidal_motion", "trajectory_torques", "feedforward"]


def cycloidal_motion(
    q_start: npt.ArrayLike, q_end: npt.ArrayLike, T: float, t: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, v, a) of 000 eq. (15) at the times t: shapes (len(t), n) for n joints (or (n,) for a
    scalar t).  ``q_start``, ``q_end``: the joint values at t = 0 and t = T (arrays or numbers)."""
    q0, q1 = np.atleast_1d(np.asarray(q_start, dtype=float)), np.atleast_1d(np.asarray(q_end, dtype=float))
    if q0.shape != q1.shape:
        raise InputError(f"q_start and q_end must have the same shape, got {q0.shape} and {q1.shape}")
    if not T > 0:
        raise InputError(f"T must be positive, got {T}")
    tt = np.asarray(t, dtype=float)
    scalar = tt.ndim == 0
    tt = np.atleast_1d(tt)[:, None]
    w = 2.0 * np.pi / T
    slope = (q1 - q0) / T
    q = q0 + slope * (tt - np.sin(w * tt) / w)
    v = slope * (1.0 - np.cos(w * tt))
    a = slope * w * np.sin(w * tt)
    if scalar:
        return q[0], v[0], a[0]
    return q, v, a


def trajectory_torques(
    model: Model | MimicModel,
    t: npt.ArrayLike,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    passive: bool = True,
    actuated: JointsLike | None = None,
) -> np.ndarray:
    """Joint torques along a trajectory sampled at the times t: ``q`` (N, nq), ``v`` and ``a``
    (N, nv).  Inverse dynamics (000 Table 1) for all samples at once; with ``passive`` the
    model's joint springs and dampers are subtracted (they act by themselves in a simulation).
    On a model with loop closures, ``actuated`` names the actuated joints (default all; see
    :func:`denoc_bridge.constraints.loops.closed_chain_inverse_dynamics`)."""
    _check_model(model)

    ts = np.atleast_1d(real_array(t, "t"))
    if ts.ndim != 1 or not np.all(np.isfinite(ts)):
        raise InputError(
            f"t must be a 1-D array of finite times, got {'shape ' + str(ts.shape) if ts.ndim != 1 else ts}"
        )
    qs, vs, as_ = (np.atleast_2d(real_array(x, name)) for x, name in ((q, "q"), (v, "v"), (a, "a")))
    if not (qs.shape[0] == vs.shape[0] == as_.shape[0] == ts.shape[0]):
        raise InputError(
            f"t, q, v and a must have the same number of samples, got {ts.shape[0]}, {qs.shape[0]}, "
            f"{vs.shape[0]} and {as_.shape[0]}"
        )
    if not model.loops:  # actuated is for a model with loop closures (default: every joint)
        actuated = None
    if qs.shape[0] == 1:  # one sample: no batch machinery
        tau = inverse_dynamics(model, qs[0], vs[0], as_[0], f_ext, actuated=actuated)[None]
    else:
        tau = inverse_dynamics(model, qs, vs, as_, f_ext, actuated=actuated)
    if passive:
        tp = joint_passive_forces(model, qs, vs)
        if tp is not None:
            tau = tau - tp
    return tau


def feedforward(
    model: Model | MimicModel,
    motion: Callable[[float], tuple[np.ndarray, np.ndarray, np.ndarray]],
    *,
    passive: bool = True,
) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    """The controller ``tau(t, q, v)`` that applies the torques of the desired motion at time t
    (open loop: the state is ignored).  ``motion(t)`` returns the desired (q, v, a)."""
    _check_model(model)

    def tau(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        qd, vd, ad = motion(t)
        return trajectory_torques(model, [t], [qd], [vd], [ad], passive=passive)[0]

    return tau
