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

import math
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from denoc_bridge.dynamics import inverse_dynamics
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.inputs import JointsLike, WrenchesLike, real_array
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model
from denoc_bridge.simulation.trajectory import joint_passive_forces

__all__ = ["cycloidal_motion", "trajectory_torques", "feedforward"]


def cycloidal_motion(
    q_start: npt.ArrayLike, q_end: npt.ArrayLike, T: float, t: npt.ArrayLike
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(q, v, a) of the papers' rest-to-rest motion, 000 eq. (15), at the times t.

    ``q = q_start + (q_end - q_start) / T [t - T / (2 pi) sin(2 pi t / T)]``: q goes from
    ``q_start`` at t = 0 to ``q_end`` at t = T, its rate and acceleration vanish at both
    ends.  Before 0 the motion rests at ``q_start``, after T at ``q_end`` (v = a = 0), so a
    simulation may run past T.  Joint by joint, on plain numbers: for quaternions or
    (cos, sin) pairs, move a scalar from 0 to 1 and map it (:func:`~denoc_bridge.interpolate`).

    Parameters
    ----------
    q_start, q_end : float or (n,) array
        The values at t = 0 and t = T, n joints (the same shape).
    T : float
        The duration, a finite number > 0.
    t : float or (N,) array
        The times.

    Returns
    -------
    q, v, a : (N, n) arrays, or (n,) arrays for a scalar t

    Raises
    ------
    InputTypeError
        An argument that is not real numbers.
    InputError
        Non-finite values, ``T`` not > 0, ``q_start`` and ``q_end`` of different shapes or
        more than one axis, ``t`` of more than one axis.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> q, v, a = db.cycloidal_motion([0.0, 0.0], [1.0, -2.0], 2.0, [0.0, 1.0, 2.0, 3.0])
    >>> q
    array([[ 0. ,  0. ],
           [ 0.5, -1. ],
           [ 1. , -2. ],
           [ 1. , -2. ]])
    >>> v  # rate 2 (q_end - q_start) / T half way, zero at both ends
    array([[ 0.,  0.],
           [ 1., -2.],
           [ 0.,  0.],
           [ 0.,  0.]])
    """
    q0, q1 = _joint_values(q_start, "q_start"), _joint_values(q_end, "q_end")
    if q0.shape != q1.shape:
        raise InputError(f"q_start and q_end must be numbers or 1-D arrays of one shape, got {q0.shape} and {q1.shape}")
    Tf = _duration(T)
    w = 2.0 * np.pi / Tf
    slope = (q1 - q0) / Tf
    if type(t) is float or type(t) is int:  # one time (a controller's call): no arrays for it
        tc = float(t)
        if not math.isfinite(tc):
            raise InputError(f"t must hold finite numbers, got {t!r}")
        if tc <= 0.0 or tc >= Tf:  # at rest at the ends, exactly
            return (q0.copy() if tc <= 0.0 else q1.copy()), np.zeros(q0.shape), np.zeros(q0.shape)
        return (
            q0 + slope * (tc - math.sin(w * tc) / w),
            slope * (1.0 - math.cos(w * tc)),
            slope * (w * math.sin(w * tc)),
        )
    tt = _finite(t, "t")
    if tt.ndim > 1:
        raise InputError(f"t must be a number or a 1-D array of times, got shape {tt.shape}")
    scalar = tt.ndim == 0
    tt = np.clip(np.atleast_1d(tt), 0.0, Tf)[:, None]  # at rest before 0 and after T
    q = q0 + slope * (tt - np.sin(w * tt) / w)
    v = slope * (1.0 - np.cos(w * tt))
    a = slope * w * np.sin(w * tt)
    ends = (tt[:, 0] == 0.0) | (tt[:, 0] == Tf)
    if ends.any():  # exactly at rest there: no round-off of sin(2 pi)
        q[ends] = np.where(tt[ends] == 0.0, q0, q1)
        v[ends] = a[ends] = 0.0
    if scalar:
        return q[0], v[0], a[0]
    return q, v, a


def _finite(x: object, name: str) -> np.ndarray:
    """``x`` as a float64 array of finite numbers, or an error naming ``name``."""
    arr = x if type(x) is np.ndarray and x.dtype == np.float64 else real_array(x, name)
    if not np.isfinite(arr).all():
        raise InputError(f"{name} must hold finite numbers, got {x!r}")
    return arr


def _joint_values(x: object, name: str) -> np.ndarray:
    """``q_start`` or ``q_end``: a number or a 1-D array of finite numbers, as a 1-D float64 array."""
    arr = _finite(x, name)
    if arr.ndim > 1:
        raise InputError(
            f"q_start and q_end must be numbers or 1-D arrays of one shape, got {name} of shape {arr.shape}"
        )
    return arr.reshape(-1) if arr.ndim == 0 else arr


def _duration(T: object) -> float:
    """``T`` as a finite positive float, or an error naming it."""
    if type(T) is float or type(T) is int:
        Tf = float(T)
    else:
        arr = _finite(T, "T")
        if arr.ndim:
            raise InputError(f"T must be a positive number, got {T!r}")
        Tf = float(arr)
    if not math.isfinite(Tf):
        raise InputError(f"T must hold finite numbers, got {T!r}")
    if not Tf > 0:
        raise InputError(f"T must be a positive number, got {T!r}")
    return Tf


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
    """Joint torques along a trajectory sampled at the times t.

    Inverse dynamics (000 Table 1) for all samples at once (one batched, compiled call); with
    ``passive`` the model's joint springs and dampers are subtracted (they act by themselves
    in a simulation), so that :func:`~denoc_bridge.simulate` with these torques follows the
    trajectory.  ``t`` only labels the samples: the torques depend on (q, v, a).

    Parameters
    ----------
    model : Model or MimicModel
        A tree, a tree with loop closures, or a MimicModel (reduced coordinates).
    t : float or (N,) array
        The sample times, finite.
    q : (N, nq) array
        Configurations (one sample may be given as (nq,)).
    v, a : (N, nv) arrays
        Velocities and accelerations.
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``, the same at every sample, or
        (N, n_links, 6).
    passive : bool
        Subtract the joint springs' and dampers' forces (``False``: the torques of a run
        with ``simulate(..., passive=False)``).
    actuated : joint names or indices into v, optional
        On a model with loop closures, the actuated joints (default all; see
        :func:`denoc_bridge.constraints.loops.closed_chain_inverse_dynamics`); ignored on a
        model without loops.

    Returns
    -------
    (N, nv) array

    Raises
    ------
    InputTypeError
        ``model`` is not a model, an argument not real numbers.
    InputError
        ``t`` not 1-D or not finite, different numbers of samples, a wrong shape or a
        non-finite entry (naming it and its joint).

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> from denoc_bridge.generators import puma560
    >>> model = puma560()
    >>> t = np.linspace(0.0, 2.0, 5)
    >>> q, v, a = db.cycloidal_motion(np.zeros(6), np.full(6, 0.5), 2.0, t)
    >>> tau = db.trajectory_torques(model, t, q, v, a)
    >>> tau.shape
    (5, 6)
    >>> bool(np.allclose(tau[2], db.inverse_dynamics(model, q[2], v[2], a[2])))  # no springs or dampers
    True
    """
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
    (open loop: the state is ignored); 003 §4.2's forced simulation.

    The torques are :func:`trajectory_torques` at ``motion(t)``, computed when the simulation
    asks for them.

    Parameters
    ----------
    model : Model or MimicModel
    motion : callable
        ``motion(t)`` returns the desired ``(q, v, a)`` at time t (e.g. a
        :func:`cycloidal_motion`).
    passive : bool
        Subtract the model's joint springs and dampers, as :func:`trajectory_torques`.

    Returns
    -------
    callable
        ``tau(t, q, v) -> (nv,) array``, for ``simulate(..., tau=...)``.

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``motion`` not callable.
    InputError
        When called: ``motion(t)`` does not return three arrays (q, v, a), or their shapes or
        values are wrong (naming the entry and its joint).

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> from denoc_bridge.generators import puma560
    >>> model = puma560()
    >>> motion = lambda t: db.cycloidal_motion(np.zeros(6), np.full(6, 0.5), 2.0, t)
    >>> tau = db.feedforward(model, motion)
    >>> traj = db.simulate(model, np.zeros(6), np.zeros(6), 2.0, 1e-3, tau=tau, progress=False)
    >>> bool(np.abs(traj.q[-1] - 0.5).max() < 1e-9)  # open loop, yet on target
    True
    """
    _check_model(model)
    if not callable(motion):
        raise InputTypeError(f"motion must be a callable motion(t) -> (q, v, a), got {type(motion).__name__}")

    def tau(t: float, q: np.ndarray, v: np.ndarray) -> np.ndarray:
        desired = motion(t)
        try:
            qd, vd, ad = desired
        except (TypeError, ValueError):  # not three values
            size = f" of length {len(desired)}" if hasattr(desired, "__len__") else ""
            raise InputError(
                f"motion(t) must return the desired (q, v, a), got a {type(desired).__name__}{size} at t = {t}"
            ) from None
        return trajectory_torques(model, [t], [qd], [vd], [ad], passive=passive)[0]

    return tau
