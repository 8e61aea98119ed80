"""Pinocchio's calling convention: ``aba(model, data, q, v, tau[, fext])`` & co. on a ``pinocchio.Model``.

A drop-in for Pinocchio's own functions, computed by denoc_bridge's DeNOC recursions::

    import denoc_bridge.pin as dbp
    a = dbp.aba(model, data, q, v, tau)        # == pin.aba(model, data, q, v, tau); also in data.ddq
    tau = dbp.rnea(model, data, q, v, a, fext) # == pin.rnea(...);  also in data.tau
    M = dbp.crba(model, data, q)               # == pin.crba(...);  also in data.M (full, symmetric)
    Minv = dbp.computeMinverse(model, data, q) # == pin.computeMinverse(...); also in data.Minv

``model`` is a ``pinocchio.Model`` and ``data`` a ``pinocchio.Data`` of it (``model.createData()``).

**What is written where** (as Pinocchio 4.1 does; checked by ``tests/test_pin.py``): each function
returns a new array and assigns the same values to its field of ``data`` (``data.ddq``,
``data.tau``, ``data.M``, ``data.Minv``, ``data.nle``, ``data.g``).  In Pinocchio's Python
binding these fields are writable views on the C++ memory: the assignment copies the values into
that memory, so an array taken earlier from ``data.M`` sees them too; the returned array does
not share memory with ``data`` (Pinocchio's functions return copies as well).  Pinocchio 4.1's
``crba`` and ``computeMinverse`` fill the whole matrix, symmetric (older Pinocchio versions
filled only the upper triangle of ``data.M`` and ``data.Minv``); so do these.  No other field of
``data`` is written (Pinocchio's ``aba`` also leaves ``data.oMi``, ``data.v``, ``data.f`` ...
behind; read them from Pinocchio if you need them).

**The conversion cache.**  The first call with a ``pinocchio.Model`` converts it once
(:func:`denoc_bridge.from_pinocchio`) and keeps the converted model, keyed on the Pinocchio
model's identity, until that model is garbage collected (a weak-reference finalizer drops it).
Each later call costs a dictionary lookup, a set lookup (the ``data`` already checked) and a
comparison of the 48 bytes of ``model.gravity``: about 0.1-0.2 us (``benchmarks/pin_convention.py``).
Detected on every call: a change of ``model.gravity`` (the converted model follows it); and a
change of ``nq``, ``nv`` or ``njoints`` (joints added) on the first call whose ``q`` does not fit
the conversion: the model is converted again.  **Not detected**: edits in place of ``model.inertias``,
``model.jointPlacements``, ``model.armature``, joint types or limits after the first call;
call :func:`refresh` (one model) or :func:`clear_cache` (all) after such an edit.
:func:`denoc_model` gives the converted model, to call the rest of denoc_bridge with.

**Differences from Pinocchio.**  Quaternions and (cos, sin) pairs in ``q`` are normalised
(Pinocchio assumes them unit).  Where an articulated inertia is singular (a massless leaf link),
Pinocchio returns NaN or inf and these functions raise
:class:`~denoc_bridge.errors.SingularInertiaError` naming the joint.  Bad arguments raise
:class:`~denoc_bridge.errors.InputError` / :class:`~denoc_bridge.errors.InputTypeError` naming the
argument (Pinocchio raises a ``ValueError`` from C++ for some; its ``aba`` does not check the
length of ``fext`` and reads past the end of a short one).  ``fext`` may also be an
(njoints, 6) array of [force; moment] rows.  Mimic models (``mimic=True``) are refused, as
Pinocchio's ``aba`` refuses them; use :class:`denoc_bridge.MimicModel`.  Pinocchio's optional
``convention`` argument is not taken.  One state per call: for batches of states use
:func:`denoc_bridge.forward_dynamics` & co. on :func:`denoc_model`.
"""

from __future__ import annotations

import ctypes
import weakref
from typing import Any, NoReturn

import numpy as np
import numpy.typing as npt
import pinocchio as _pin

from denoc_bridge import dynamics as _dynamics
from denoc_bridge.core import tree as _compiled
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.io.pinocchio_io import from_pinocchio
from denoc_bridge.multibody.checks import ModelKind
from denoc_bridge.multibody.model import Model
from denoc_bridge.spatial import pin_to_internal

__all__ = [
    "aba",
    "rnea",
    "crba",
    "computeMinverse",
    "nonLinearEffects",
    "computeGeneralizedGravity",
    "denoc_model",
    "refresh",
    "clear_cache",
]

# Pinocchio ships no type stubs: its objects (pinocchio.Model, Data, Force) are typed Any here


class _Entry:
    """A converted ``pinocchio.Model`` and what the fast paths check it against."""

    __slots__ = ("model", "nq", "nv", "njoints", "gravity", "gravity_bytes", "datas", "zeros", "finalizer")

    def __init__(self, pin_model: Any, key: int) -> None:
        self.model: Model = from_pinocchio(pin_model)
        self.nq, self.nv, self.njoints = int(pin_model.nq), int(pin_model.nv), int(pin_model.njoints)
        self.gravity = _raw_bytes(pin_model.gravity.vector)
        self.gravity_bytes = self.gravity.raw
        self.datas: set[int] = set()  # id() of the Data objects checked against this model
        self.zeros = np.zeros(self.nv)  # the zero velocity/acceleration of nle and g (never written)
        self.finalizer = weakref.finalize(pin_model, _cache.pop, key, None)


def _raw_bytes(view: np.ndarray) -> Any:
    """The memory of ``view`` (a view on a member of a C++ object) as a ``ctypes`` char array
    (``.raw``: its bytes now, ~30 ns), without the reference to its owner that Pinocchio's views
    hold.

    ``model.gravity.vector`` keeps the ``pinocchio.Model`` alive as long as it lives (boost.python's
    custodian); held by the cache, it would keep every model alive and its finalizer from ever
    running.  The gravity member has a fixed address while the model lives, and the entry that
    holds this view is dropped by the model's finalizer, inside the model's deallocation: no
    call reads the view once the model is gone (a call holds a reference to its model).
    """
    address, _ = view.__array_interface__["data"]
    return (ctypes.c_char * view.nbytes).from_address(address)


_cache: dict[int, _Entry] = {}

# bound once: a fast-path call costs about 2 us on panda, of which each global or attribute
# lookup costs 10-25 ns
_get = _cache.get
_empty = np.empty
_forward_dynamics_fast = _compiled.forward_dynamics_fast
_inverse_dynamics_fast = _compiled.inverse_dynamics_fast
_forward_dynamics_state = _compiled.forward_dynamics_state
_inverse_dynamics_state = _compiled.inverse_dynamics_state
_mass_matrix_state = _compiled.mass_matrix_state
_StdVec_Force = _pin.StdVec_Force


def clear_cache() -> None:
    """Forget every converted model: the next call with each ``pinocchio.Model`` converts it again."""
    for e in list(_cache.values()):
        e.finalizer.detach()
    _cache.clear()


def refresh(model: Any) -> Model:
    """Convert ``model`` (a ``pinocchio.Model``) again and return the new denoc_bridge model.

    Call it after editing ``model.inertias``, ``model.jointPlacements``, ``model.armature`` or
    anything else the cache does not watch (see the module docstring)."""
    _check_pin_model(model)
    old = _cache.pop(id(model), None)
    if old is not None:
        old.finalizer.detach()
    return _lookup(model).model


def denoc_model(model: Any) -> Model:
    """The cached denoc_bridge :class:`~denoc_bridge.Model` of a ``pinocchio.Model`` (converted
    on first use), for the rest of denoc_bridge's API (batches, ``udut``, simulation, ...)."""
    _check_pin_model(model)
    return _lookup(model).model


# ------------------------------------------------------------------ the public functions
def aba(model: Any, data: Any, q: npt.ArrayLike, v: npt.ArrayLike, tau: npt.ArrayLike, fext: Any = None) -> np.ndarray:
    """Joint accelerations ``ddq`` (nv,) produced by ``tau`` at (q, v): ``pin.aba``, by DeNOC's O(n)
    forward dynamics (:func:`denoc_bridge.forward_dynamics`).  Also written to ``data.ddq``.

    ``fext`` (optional): ``model.njoints`` forces (a list or ``pin.StdVec_Force`` of ``pin.Force``),
    each in the local frame of its joint, ``fext[0]`` (the universe) ignored, as Pinocchio's.
    """
    e = _get(id(model))
    if e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes:
        m = e.model
        out = _empty(e.nv)
        try:
            if fext is None:
                r = m._core.forward_dynamics(q, v, tau, out)  # None: not the model's thread
                if r is None:
                    r = _forward_dynamics_fast(m._kt, m._local.work, q, v, tau, out)
                status = 0 if r is out else r
            else:
                status = _forward_dynamics_state(m._kt, m._local.work, q, v, tau, _internal_wrenches(e, fext), out)
            if status == 0:
                data.ddq = out
                return out
        except (TypeError, AttributeError, ValueError):  # another type, no work array in this thread yet, ...
            pass
    e, q, v, tau = _checked(model, data, q, v, tau, "tau")
    out = _dynamics.forward_dynamics(e.model, q, v, tau, _wrenches(e, fext))
    data.ddq = out
    return out


def rnea(model: Any, data: Any, q: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike, fext: Any = None) -> np.ndarray:
    """Joint torques ``tau`` (nv,) that produce the accelerations ``a`` at (q, v): ``pin.rnea``, by
    DeNOC's recursive inverse dynamics (:func:`denoc_bridge.inverse_dynamics`).  Also written to
    ``data.tau``.  ``fext`` as in :func:`aba`.
    """
    e = _get(id(model))
    if e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes:
        m = e.model
        out = _empty(e.nv)
        try:
            if fext is None:
                r = m._core.inverse_dynamics(q, v, a, out)  # None: not the model's thread
                if r is None:
                    r = _inverse_dynamics_fast(m._kt, m._local.work, q, v, a, out)
                status = 0 if r is out else r
            else:
                status = _inverse_dynamics_state(m._kt, m._local.work, q, v, a, _internal_wrenches(e, fext), out)
            if status == 0:
                data.tau = out
                return out
        except (TypeError, AttributeError, ValueError):  # another type, no work array in this thread yet, ...
            pass
    e, q, v, a = _checked(model, data, q, v, a, "a")
    out = _dynamics.inverse_dynamics(e.model, q, v, a, _wrenches(e, fext))
    data.tau = out
    return out


def crba(model: Any, data: Any, q: npt.ArrayLike) -> np.ndarray:
    """The joint-space inertia matrix ``M(q)`` (nv, nv), full and symmetric, armature included:
    ``pin.crba`` of Pinocchio 4.1 (:func:`denoc_bridge.mass_matrix`).  Written whole to ``data.M``
    (Pinocchio 4.1 fills both triangles too; Pinocchio 2 and 3 filled only the upper one).
    """
    e = _get(id(model))
    if e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes:
        m = e.model
        out = _empty((e.nv, e.nv))
        try:
            r = m._core.mass_matrix(q, out)  # None: not the model's thread
            if r is out or (r is None and _mass_matrix_state(m._kt, m._local.work, q, out) == 0):
                data.M = out
                return out
        except (TypeError, AttributeError):
            pass
    e, q = _checked(model, data, q)
    out = _dynamics.mass_matrix(e.model, q)
    data.M = out
    return out


def computeMinverse(model: Any, data: Any, q: npt.ArrayLike) -> np.ndarray:
    """The inverse joint-space inertia matrix ``M(q)^-1`` (nv, nv), full and symmetric:
    ``pin.computeMinverse`` of Pinocchio 4.1, by the recursive block inverse of the module-level
    ``U D U^T`` factors (:func:`denoc_bridge.inverse_mass_matrix`; ``M`` is never formed).
    Written whole to ``data.Minv`` (Pinocchio 4.1 fills both triangles too).
    """
    e = _get(id(model))
    if e is None or id(data) not in e.datas or e.gravity.raw != e.gravity_bytes or np.shape(q) != (e.nq,):
        e, q = _checked(model, data, q)
    out = _dynamics.inverse_mass_matrix(e.model, q)
    data.Minv = out
    return out


def nonLinearEffects(model: Any, data: Any, q: npt.ArrayLike, v: npt.ArrayLike) -> np.ndarray:
    """``C(q, v) v + g(q)`` (nv,): ``pin.nonLinearEffects`` (:func:`denoc_bridge.nonlinear_effects`).
    Also written to ``data.nle``."""
    e = _get(id(model))
    if e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes:
        m = e.model
        out = _empty(e.nv)
        try:
            r = m._core.inverse_dynamics(q, v, e.zeros, out)  # None: not the model's thread
            if r is out or (r is None and _inverse_dynamics_fast(m._kt, m._local.work, q, v, e.zeros, out) == 0):
                data.nle = out
                return out
        except (TypeError, AttributeError):
            pass
    e, q, v = _checked(model, data, q, v)
    out = _dynamics.inverse_dynamics(e.model, q, v, e.zeros)
    data.nle = out
    return out


def computeGeneralizedGravity(model: Any, data: Any, q: npt.ArrayLike) -> np.ndarray:
    """The generalized gravity ``g(q)`` (nv,): ``pin.computeGeneralizedGravity``
    (:func:`denoc_bridge.gravity_torques`).  Also written to ``data.g``."""
    e = _get(id(model))
    if e is not None and id(data) in e.datas and e.gravity.raw == e.gravity_bytes:
        m = e.model
        out = _empty(e.nv)
        try:
            r = m._core.inverse_dynamics(q, e.zeros, e.zeros, out)  # None: not the model's thread
            if r is out or (r is None and _inverse_dynamics_fast(m._kt, m._local.work, q, e.zeros, e.zeros, out) == 0):
                data.g = out
                return out
        except (TypeError, AttributeError):
            pass
    e, q = _checked(model, data, q)
    out = _dynamics.inverse_dynamics(e.model, q, e.zeros, e.zeros)
    data.g = out
    return out


# ------------------------------------------------------------------ the checked path
def _check_pin_model(model: Any) -> None:
    if not isinstance(model, _pin.Model):
        hint = (
            ": it is a denoc_bridge model; call db.forward_dynamics(model, q, v, tau) & co. on it"
            if isinstance(model, ModelKind)
            else ""
        )
        raise InputTypeError(f"model must be a pinocchio.Model, got {type(model).__name__}{hint}")


def _lookup(model: Any) -> _Entry:
    """The entry of ``model`` (a ``pinocchio.Model``), converted now if it is new or its size
    changed, its gravity brought up to date."""
    key = id(model)
    e = _cache.get(key)
    if e is not None and (int(model.nq), int(model.nv), int(model.njoints)) != (e.nq, e.nv, e.njoints):
        del _cache[key]  # joints added or removed since the conversion (gone even if converting fails)
        e.finalizer.detach()
        e = None
    if e is None:
        e = _cache[key] = _Entry(model, key)
    elif e.gravity.raw != e.gravity_bytes:
        gravity = e.gravity.raw
        e.model.gravity = np.frombuffer(gravity)[:3].copy()  # raises on a gravity that is not finite
        e.gravity_bytes = gravity
    return e


def _check_data(e: _Entry, data: Any) -> None:
    if id(data) in e.datas:
        return
    if not isinstance(data, _pin.Data):
        raise InputTypeError(f"data must be a pinocchio.Data (model.createData()), got {type(data).__name__}")
    njoints, shape = len(data.oMi), data.M.shape
    if njoints != e.njoints or shape != (e.nv, e.nv) or data.ddq.shape != (e.nv,):
        raise InputError(
            f"data does not belong to model '{e.model.name}': it was made for a model with {njoints} joints and "
            f"nv = {shape[0]}, the model has {e.njoints} joints and nv = {e.nv} (use model.createData())"
        )
    key = id(data)
    e.datas.add(key)
    weakref.finalize(data, e.datas.discard, key)


def _vector(x: npt.ArrayLike, name: str, n: int, size: str) -> npt.ArrayLike:
    """Refuse anything but one vector of length n (the values are checked by denoc_bridge)."""
    shape = np.shape(x)
    if shape != (n,):
        batch = " (one state per call; for a batch use db.forward_dynamics & co. on denoc_model(model))"
        raise InputError(
            f"{name} must have shape ({n},) (model.{size} = {n}), got shape {shape}{batch if len(shape) == 2 else ''}"
        )
    return x


def _checked(model: Any, data: Any, q: npt.ArrayLike, *vectors: Any) -> Any:
    """(entry, q, *vectors) after the checks of model, data and the vectors' shapes; ``vectors``
    holds v and then (x, its name) for aba and rnea."""
    _check_pin_model(model)
    e = _lookup(model)
    _check_data(e, data)
    out: list[Any] = [e, _vector(q, "q", e.nq, "nq")]
    if vectors:
        out.append(_vector(vectors[0], "v", e.nv, "nv"))
    if len(vectors) == 3:
        out.append(_vector(vectors[1], vectors[2], e.nv, "nv"))
    return tuple(out)


def _internal_wrenches(e: _Entry, fext: Any) -> np.ndarray:
    """The fast conversion of Pinocchio's ``fext`` (njoints ``pin.Force``) to the kernels' wrenches
    (n_links, 6) in the internal order [moment; force]; raises (TypeError, AttributeError, ValueError)
    on anything else, and the checked path (:func:`_wrenches`) then says what is wrong."""
    if type(fext) is _StdVec_Force:
        fext = fext.tolist()  # iterating a StdVec costs ~0.6 us per element, tolist() ~0.05 us
    F = np.array([f.vector for f in fext])
    if F.shape != (e.njoints, 6):
        raise ValueError("fext")
    return pin_to_internal(F[1:])


def _wrenches(e: _Entry, fext: Any) -> np.ndarray | None:
    """Pinocchio's ``fext`` (njoints forces, index 0 the universe) as denoc_bridge's ``f_ext``
    (n_links, 6): the same [force; moment] in the same local frames, without the universe."""
    if fext is None:
        return None
    try:
        f = np.asarray(fext, dtype=float)
    except (TypeError, ValueError):
        f = None
    if f is None or f.shape != (e.njoints, 6):
        _raise_fext(e, fext)
    w = f[1:]
    bad = ~np.isfinite(w).all(axis=1)
    if bad.any():
        k = int(np.argmax(bad))
        raise InputError(f"fext[{k + 1}] (joint '{e.model.joint_names[k]}') is not finite: {w[k]}")
    return w


def _raise_fext(e: _Entry, fext: Any) -> NoReturn:
    layout = f"model.njoints = {e.njoints} pinocchio.Force (fext[0], the universe, is ignored)"
    if isinstance(fext, (str, bytes)) or not hasattr(fext, "__len__"):
        raise InputTypeError(f"fext must be a list or pinocchio.StdVec_Force of {layout}, got {type(fext).__name__}")
    if len(fext) != e.njoints:
        raise InputError(f"fext must hold {layout}, got {len(fext)}")
    for i, f in enumerate(fext):
        if not isinstance(f, _pin.Force) and np.shape(f) != (6,):
            raise InputTypeError(f"fext[{i}] must be a pinocchio.Force, got {type(f).__name__}")
    raise InputTypeError(f"fext must hold {layout} of real numbers")
