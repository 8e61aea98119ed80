"""Configurations in Pinocchio's layout: neutral, random, and the joint manifolds' operations
(``integrate``, ``difference``, ``interpolate``, as ``pinocchio.integrate`` & co.)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge.core import configuration as _cc
from denoc_bridge.core import sized
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.joints import CIRCLE_OFFSET, QUATERNION_OFFSET, JointType, neutral_q
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.mimic import limit_arrays as mimic_limit_arrays
from denoc_bridge.multibody.model import Model

__all__ = ["neutral_configuration", "random_configuration", "integrate", "difference", "interpolate"]


def neutral_configuration(model: Model | MimicModel) -> np.ndarray:
    """The neutral configuration: zero angles and displacements, identity quaternions.

    As ``pin.neutral``: (cos, sin) = (1, 0) for continuous and planar joints, quaternions
    (x, y, z, w) = (0, 0, 0, 1).  For a :class:`~denoc_bridge.constraints.mimic.MimicModel`, in
    reduced coordinates, as ``pin.neutral`` of the mimic model.

    Parameters
    ----------
    model : Model or MimicModel

    Returns
    -------
    (nq,) array

    Raises
    ------
    InputTypeError
        ``model`` is not a denoc_bridge model.

    Examples
    --------
    >>> import denoc_bridge as db
    >>> solo = db.load_robot("solo12")  # a free-flyer base: position, then quaternion
    >>> db.neutral_configuration(solo)[:7]
    array([0., 0., 0., 0., 0., 0., 1.])
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return model.reduce_configuration(neutral_configuration(model.tree))
    return neutral_q(model.joint_type)


def _generator(rng: int | np.integer | np.random.Generator | None) -> np.random.Generator:
    """``rng`` as a Generator: a non-negative seed, a Generator (itself) or None (fresh entropy)."""
    seed_like = isinstance(rng, (int, np.integer)) and not isinstance(rng, bool)
    if rng is not None and not isinstance(rng, np.random.Generator) and (not seed_like or rng < 0):
        raise InputError(f"rng must be a numpy Generator or a non-negative integer seed, got {rng!r}")
    return np.random.default_rng(rng)


def random_configuration(
    model: Model | MimicModel, rng: int | np.integer | np.random.Generator | None = None
) -> np.ndarray:
    """A random valid configuration.

    Revolute and prismatic joints are drawn uniformly within their position
    limits when both are finite and at most 1e6 apart (else in [-pi, pi] and [-1, 1]); angles of
    continuous, universal and planar joints in [-pi, pi]; quaternions uniformly
    on the unit sphere; free translations from a unit normal distribution.  For a
    :class:`~denoc_bridge.constraints.mimic.MimicModel`, the independent joints' entries, a joint that
    mimic joints follow drawn within the range their limits leave it (so that they stay within theirs).

    Parameters
    ----------
    model : Model or MimicModel
    rng : int, numpy.random.Generator or None
        A non-negative seed (the same seed, the same configuration), a Generator (advanced by
        the draws), or None for fresh entropy.

    Returns
    -------
    (nq,) array

    Raises
    ------
    InputTypeError
        ``model`` is not a denoc_bridge model.
    InputError
        ``rng`` is neither a Generator nor a non-negative integer (booleans refused).
    ModelError
        On a MimicModel, the limits of a joint and of the mimic joints that follow it leave it no
        position (named).

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> q = db.random_configuration(panda, 0)
    >>> bool(np.all((panda.lower_limit <= q) & (q <= panda.upper_limit)))
    True
    >>> bool(np.array_equal(q, db.random_configuration(panda, np.random.default_rng(0))))
    True
    """
    _check_model(model)
    if isinstance(model, MimicModel):  # the tree's draw, then the limited joints within the ranges
        rng = _generator(rng)  # their mimic joints' limits narrow (a mimic joint within its limits too)
        q = model.reduce_configuration(random_configuration(model.tree, rng))
        idx, lim, _ = mimic_limit_arrays(model)
        narrowed = [(int(i), lo, hi) for (i, _), (lo, hi) in zip(idx.tolist(), lim.tolist())]
        for i, lo, hi in narrowed:
            if not lo <= q[i] <= hi:
                q[i] = rng.uniform(lo, hi)
        return q
    rng = _generator(rng)
    q = np.zeros(model.nq)
    for k in range(model.n_links):
        jt = JointType(model.joint_type[k])
        i0, n = int(model.idx_q[k]), int(model.nq_joint[k])
        qk = q[i0 : i0 + n]
        lo, hi = model.lower_limit[i0 : i0 + n], model.upper_limit[i0 : i0 + n]
        if jt in (JointType.REVOLUTE, JointType.PRISMATIC):
            half = np.pi if jt == JointType.REVOLUTE else 1.0
            # Pinocchio marks "no limit" with +-max double: such ranges count as unbounded
            bounded = bool(abs(lo[0]) <= 1e6 and abs(hi[0]) <= 1e6 and hi[0] >= lo[0])
            qk[0] = rng.uniform(lo[0], hi[0]) if bounded else rng.uniform(-half, half)
        elif jt == JointType.UNIVERSAL:
            qk[:] = rng.uniform(-np.pi, np.pi, 2)
        elif jt in (JointType.FREEFLYER, JointType.TRANSLATION, JointType.PLANAR):
            qk[: 3 if jt != JointType.PLANAR else 2] = rng.standard_normal(3 if jt != JointType.PLANAR else 2)
        if jt in QUATERNION_OFFSET:
            quat = rng.standard_normal(4)
            qk[QUATERNION_OFFSET[jt] : QUATERNION_OFFSET[jt] + 4] = quat / np.linalg.norm(quat)
        if jt in CIRCLE_OFFSET:
            angle = rng.uniform(-np.pi, np.pi)
            qk[CIRCLE_OFFSET[jt] : CIRCLE_OFFSET[jt] + 2] = (np.cos(angle), np.sin(angle))
    return q


def _mapped(status: int) -> None:
    """A compiled map's status: 0, or -2 (the callers size every array: a defect, raised)."""
    sized(status, "a compiled configuration map")


def _pair(
    model: Model, a: npt.ArrayLike, b: npt.ArrayLike, na: int, nb: int, names: tuple[str, str]
) -> tuple[np.ndarray, np.ndarray, bool]:

    a, b = _inputs.real_array(a, names[0]), _inputs.real_array(b, names[1])
    batch = a.ndim == 2
    for arr, n, name in ((a, na, names[0]), (b, nb, names[1])):
        if arr.ndim not in (1, 2) or arr.shape[-1] != n or arr.ndim != a.ndim or (batch and arr.shape[0] != a.shape[0]):
            raise InputError(
                f"{name} must have shape ({n},) or (B, {n}) like {names[0]} (model '{model.name}'), got {arr.shape}"
            )
        if not np.all(np.isfinite(arr)):
            *row, i = (int(x) for x in np.argwhere(~np.isfinite(arr))[0])
            starts = model.idx_q if n == model.nq else model.idx_v
            k = int(np.searchsorted(starts, i, side="right") - 1)
            at = ", ".join(map(str, [*row, i]))
            raise InputError(f"{name}[{at}] = {arr[tuple(row) + (i,)]} is not finite (joint {model.joint_label(k)})")
    a = _inputs.normalise_configuration(model, np.array(a, dtype=float, order="C"), names[0])
    b = np.array(b, dtype=float, order="C")
    if nb == model.nq:  # q0, q1: both configurations
        b = _inputs.normalise_configuration(model, b, names[1])
    return a, b, batch


def integrate(model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike) -> np.ndarray:
    """The configuration reached from ``q`` by the velocity ``v`` applied for unit time:
    ``q (+) v = q exp(v)`` joint by joint, as ``pinocchio.integrate`` (free-flyers on SE(3),
    spherical joints on SO(3), continuous joints on SO(2), planar joints on SE(2); vector
    spaces add).  Quaternions and (cos, sin) pairs of the result are unit.  A leading batch
    axis is allowed.  On a :class:`~denoc_bridge.constraints.mimic.MimicModel`, reduced q and v (the tree's
    integration of the expanded state, reduced).

    Parameters
    ----------
    model : Model or MimicModel
    q : (nq,) or (B, nq) array
        Configuration, or a batch; quaternions and (cos, sin) pairs are normalised first.
    v : (nv,) or (B, nv) array
        Velocity (the displacement in unit time), or one per state of the batch.

    Returns
    -------
    (nq,) or (B, nq) array

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q`` or ``v`` not real numbers.
    InputError
        A wrong shape or batch, a non-finite entry (naming it and its joint), a zero
        quaternion or (cos, sin) pair.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> solo = db.load_robot("solo12")
    >>> v = np.zeros(solo.nv)
    >>> v[5] = np.pi / 2  # turn the base by 90 degrees about z
    >>> db.integrate(solo, db.neutral_configuration(solo), v)[:7].round(4)
    array([0.    , 0.    , 0.    , 0.    , 0.    , 0.7071, 0.7071])
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        qf, vf = model.expand(q, v)
        return model.reduce_configuration(integrate(model.tree, qf, vf))
    q, v, batch = _pair(model, q, v, model.nq, model.nv, ("q", "v"))
    out = np.empty_like(q)
    _mapped((_cc.integrate_batch if batch else _cc.integrate)(model._kt, q, v, out))
    return out


def difference(model: Model | MimicModel, q0: npt.ArrayLike, q1: npt.ArrayLike) -> np.ndarray:
    """The velocity that takes ``q0`` to ``q1`` in unit time, ``log(q0^-1 q1)`` joint by joint
    (``pinocchio.difference``); ``integrate(model, q0, difference(model, q0, q1)) = q1``.

    Angles of continuous joints wrap: the difference is the shorter way round.  On a
    :class:`~denoc_bridge.constraints.mimic.MimicModel`, reduced q0, q1 and result.

    Parameters
    ----------
    model : Model or MimicModel
    q0, q1 : (nq,) or (B, nq) arrays
        Configurations, or batches of the same size; quaternions and (cos, sin) pairs are
        normalised first.

    Returns
    -------
    (nv,) or (B, nv) array

    Raises
    ------
    InputTypeError
        ``model`` is not a model, ``q0`` or ``q1`` not real numbers.
    InputError
        A wrong shape or batch, a non-finite entry (naming it and its joint), a zero
        quaternion or (cos, sin) pair.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> solo = db.load_robot("solo12")
    >>> q0 = db.neutral_configuration(solo)
    >>> q1 = q0.copy()
    >>> q1[3:7] = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]  # the base turned 90 degrees about z
    >>> db.difference(solo, q0, q1)[:6].round(4)
    array([0.    , 0.    , 0.    , 0.    , 0.    , 1.5708])
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        return model.reduce_velocity(difference(model.tree, model.expand(q0), model.expand(q1)))
    q0, q1, batch = _pair(model, q0, q1, model.nq, model.nq, ("q0", "q1"))
    out = np.empty(q0.shape[:-1] + (model.nv,))
    _mapped((_cc.difference_batch if batch else _cc.difference)(model._kt, q0, q1, out))
    return out


def integrate_unchecked(model: Model, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """:func:`integrate` of a tree's float64 (nq,) q, already normalised, and (nv,) v, without
    the checks (a simulation's own state, every step)."""
    out = np.empty_like(q)
    _mapped(_cc.integrate(model._kt, q, v, out))
    return out


def difference_unchecked(model: Model, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """:func:`difference` of a tree's float64 (nq,) configurations, already normalised, without
    the checks (a simulation's own state, every step)."""
    out = np.empty(model.nv)
    _mapped(_cc.difference(model._kt, q0, q1, out))
    return out


def interpolate(model: Model | MimicModel, q0: npt.ArrayLike, q1: npt.ArrayLike, u: npt.ArrayLike) -> np.ndarray:
    """``q0 (+) u (q1 (-) q0)``: the geodesic from q0 (u = 0) to q1 (u = 1), as
    ``pinocchio.interpolate``; ``u`` a number, or one per state of a batch.

    ``u`` outside [0, 1] extrapolates along the same geodesic.  On a
    :class:`~denoc_bridge.constraints.mimic.MimicModel`, reduced configurations.

    Parameters
    ----------
    model : Model or MimicModel
    q0, q1 : (nq,) or (B, nq) arrays
        The configurations at u = 0 and u = 1, or batches of the same size.
    u : float or (B,) array
        The fraction of the way, one number or one per state of the batch.

    Returns
    -------
    (nq,) or (B, nq) array

    Raises
    ------
    InputTypeError
        ``model`` is not a model, an argument not real numbers.
    InputError
        A wrong shape or batch, a non-finite entry (naming it and its joint), a zero
        quaternion or (cos, sin) pair, ``u`` not finite or not one per state.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> solo = db.load_robot("solo12")
    >>> q0 = db.neutral_configuration(solo)
    >>> q1 = q0.copy()
    >>> q1[3:7] = [0, 0, np.sin(np.pi / 4), np.cos(np.pi / 4)]  # 90 degrees about z
    >>> db.interpolate(solo, q0, q1, 0.5)[3:7].round(4)  # half way: 45 degrees
    array([0.    , 0.    , 0.3827, 0.9239])
    """
    _check_model(model)

    d = difference(model, q0, q1)
    u = _inputs.real_array(u, "u")
    if not np.all(np.isfinite(u)) or u.shape not in ((), d.shape[:-1]):
        raise InputError(
            f"u must be a finite number or one per state of the batch (shape {d.shape[:-1]}), got "
            f"{u if u.ndim == 0 else f'shape {u.shape}'}"
        )
    return integrate(model, q0, d * (u[..., None] if u.ndim else u))
