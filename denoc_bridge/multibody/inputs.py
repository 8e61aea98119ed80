"""Validation and conversion of the arguments of the public algorithms.

Every check names the argument, the offending entry and the joint it belongs
to.  Configuration rules (documented in the README):

* unit quaternions (spherical, free-flyer) and (cos, sin) pairs (continuous,
  planar) are normalised; a pair or quaternion of (near) zero norm is rejected;
* NaN or infinite entries are rejected.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TypeAlias

import numpy as np
import numpy.typing as npt

from denoc_bridge._text import did_you_mean
from denoc_bridge.errors import InputError, InputTypeError, NameLookupError
from denoc_bridge.multibody.checks import is_pinocchio_object
from denoc_bridge.spatial import internal_to_pin, pin_to_internal

_MIN_NORM = 1e-12

#: ``f_ext`` of the public functions: an (n_links, 6) array (or (B, n_links, 6) for a batch), or a
#: mapping {link, joint or frame name: (6,) wrench}
WrenchesLike: TypeAlias = npt.ArrayLike | Mapping[str, npt.ArrayLike]
#: ``actuated`` of a model with loop closures: joint names, or indices into v
JointsLike: TypeAlias = str | int | Iterable[str | int]


def _owner(model, index: int, layout: str) -> int:
    """Joint owning entry ``index`` of a q ("q") or v ("v") vector."""
    starts = model.idx_q if layout == "q" else model.idx_v
    return int(np.searchsorted(starts, index, side="right") - 1)


def real_array(x: object, name: str, copy: bool = True) -> np.ndarray:
    """``x`` as a float64 array (a copy, or with ``copy=False`` ``x`` itself when it is one);
    rejects None, strings, objects, complex and booleans."""
    if x is None:
        raise InputTypeError(f"{name} is None; expected an array of real numbers")
    kind = type(x).__name__
    if kind in ("Data", "Model", "MimicModel"):
        owner = "pinocchio" if is_pinocchio_object(x) else "denoc_bridge"
        raise InputTypeError(
            f"{name} is a {owner}.{kind}, not an array: the functions of denoc_bridge take (model, q, v, "
            "...) without a data (db.forward_dynamics(model, q, v, tau)); for Pinocchio's calling "
            "convention, aba(model, data, q, v, tau), use denoc_bridge.pin"
        )
    try:
        a = np.asarray(x)
    except Exception as exc:  # ragged nested sequences and the like
        raise InputTypeError(f"{name} cannot be converted to an array of real numbers: {exc}") from None
    if a.dtype.kind not in "fiu":
        raise InputTypeError(f"{name} must hold real numbers, got dtype {a.dtype}")
    return np.array(a, dtype=np.float64) if copy else np.asarray(a, dtype=np.float64)


def vector(model, x, name: str, layout: str) -> np.ndarray:
    """A finite float64 copy of a q-sized (layout "q") or v-sized (layout "v") vector."""
    n = model.nq if layout == "q" else model.nv
    a = real_array(x, name)
    if a.shape != (n,):
        raise InputError(f"{name} must have shape ({n},) (model '{model.name}' has n{layout}={n}), got shape {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        i = int(bad[0])
        k = _owner(model, i, layout)
        raise InputError(f"{name}[{i}] = {a[i]} is not finite (joint {model.joint_label(k)})")
    return a


def configuration(model, q, name: str = "q") -> np.ndarray:
    """Checked configuration with quaternions and (cos, sin) pairs normalised."""
    return normalise_configuration(model, vector(model, q, name, "q"), name)


def normalise_configuration(model, q: np.ndarray, name: str = "q") -> np.ndarray:
    """Normalise, in place, the quaternions and (cos, sin) pairs of a finite float64 ``q`` of
    shape (..., nq) (the normalisation rule of the module docstring); returns ``q``."""
    for starts, size, what in ((model.quaternion_index, 4, "quaternion"), (model.circle_index, 2, "(cos, sin) pair")):
        if starts.size == 0:
            continue
        idx = starts[:, None] + np.arange(size)
        block = q[..., idx]  # (..., n_joints, size)
        with np.errstate(over="ignore"):
            norms = np.linalg.norm(block, axis=-1)
        small = np.argwhere(norms < _MIN_NORM)
        if small.size:
            *row, j = (int(x) for x in small[0])
            i0 = int(starts[j])
            at = "".join(f"{r}, " for r in row)
            raise InputError(
                f"{name}[{at}{i0}:{i0 + size}] is a {what} of zero norm for joint "
                f"{model.joint_label(_owner(model, i0, 'q'))}"
            )
        huge = ~np.isfinite(norms)  # finite entries whose norm overflows
        if huge.any():
            block[huge] /= np.max(np.abs(block[huge]), axis=-1, keepdims=True)
            norms[huge] = np.linalg.norm(block[huge], axis=-1)
        q[..., idx] = block / norms[..., None]
    return q


def baumgarte(value: object) -> tuple[float, float]:
    """``(alpha, beta)`` of Baumgarte's stabilisation (1/s) as two finite numbers >= 0, or an
    :class:`InputError` naming ``baumgarte``."""
    try:
        alpha, beta = (float(x) for x in value)  # type: ignore[attr-defined]
    except (TypeError, ValueError):
        raise InputError(f"baumgarte must be two numbers (alpha, beta) in 1/s, got {value!r}") from None
    if not (np.isfinite(alpha) and np.isfinite(beta) and alpha >= 0 and beta >= 0):
        raise InputError(f"baumgarte = ({alpha}, {beta}): alpha and beta must be finite and >= 0")
    return alpha, beta


def external_wrenches(model, f_ext) -> np.ndarray:
    """External wrenches as an (n_links, 6) array in the internal order [n; f].

    Accepted forms: None; an (n_links, 6) array; a mapping from link (or joint)
    name to a 6-vector.  Each wrench is Pinocchio's ``fext`` of that body:
    [force; moment] expressed in the link frame, moment about the link origin.
    A mapping may also name a frame of ``model.frames`` (a URDF link merged by a
    fixed joint, such as a tool flange, or the fixed joint itself): the wrench is
    then [force; moment] in that frame's axes, moment about its origin, and acts on
    the link the frame rides on.  Wrenches on one link add up.
    """
    L = model.n_links
    if f_ext is None:
        return np.zeros((L, 6))
    if isinstance(f_ext, Mapping):
        out = np.zeros((L, 6))
        for key, w in f_ext.items():
            wk = real_array(w, f"f_ext['{key}']")
            if wk.shape != (6,):
                raise InputError(f"f_ext['{key}'] must have shape (6,), got {wk.shape}")
            if key in model._link_index:
                out[model._link_index[key]] += wk
            elif key in model._joint_index:
                out[model._joint_index[key]] += wk
            else:
                k, wk = _frame_wrench(model, key, wk)
                out[k] += wk
        pin_order = out
    else:
        pin_order = real_array(f_ext, "f_ext")
        if pin_order.shape != (L, 6):
            raise InputError(
                f"f_ext must have shape ({L}, 6) (one wrench per link of '{model.name}'), got {pin_order.shape}"
            )
    check_wrenches_finite(model, pin_order)
    return pin_to_internal(pin_order)


def check_wrenches_finite(model, pin_order: np.ndarray, prefix: str = "") -> None:
    """InputError naming the first entry of ``pin_order`` ((n_links, 6), Pinocchio's layout)
    that is not finite, and its link."""
    bad = np.argwhere(~np.isfinite(pin_order))
    if bad.size:
        k, j = (int(x) for x in bad[0])
        raise InputError(f"{prefix}f_ext[{k}, {j}] = {pin_order[k, j]} is not finite (link '{model.link_names[k]}')")


def _frame_wrench(model, key, w):
    """(link, the wrench ``w`` = [force; moment] given in frame ``key`` moved to that link's
    frame and origin)."""
    frame = next((f for f in getattr(model, "frames", ()) if f.name == key), None)
    if frame is None:
        names = [*model.link_names, *model.joint_names, *(f.name for f in getattr(model, "frames", ()))]
        raise NameLookupError(
            f"f_ext names '{key}', which is neither a link, a joint nor a frame of '{model.name}'"
            + did_you_mean(key, names)
        )
    if frame.link < 0:
        raise InputError(
            f"f_ext names '{key}', a frame fixed to the base of '{model.name}': a wrench there does not "
            "act on any moving link"
        )
    R, p = np.asarray(frame.rotation, dtype=float), np.asarray(frame.translation, dtype=float)
    force = R @ w[:3]
    return frame.link, np.concatenate([force, R @ w[3:] + np.cross(p, force)])


def _external_wrenches_batch(model, f_ext, B: int) -> np.ndarray:
    """(B, n_links, 6) internal-order wrenches, or (0, 0, 6) for none."""
    if f_ext is None:
        return NO_FEXT_BATCH
    if isinstance(f_ext, Mapping):
        return np.ascontiguousarray(np.broadcast_to(external_wrenches(model, f_ext), (B, model.n_links, 6)))
    arr = real_array(f_ext, "f_ext")
    if arr.shape == (model.n_links, 6):
        return np.ascontiguousarray(np.broadcast_to(external_wrenches(model, arr), (B, model.n_links, 6)))
    if arr.shape != (B, model.n_links, 6):
        raise InputError(
            f"f_ext must have shape ({model.n_links}, 6) or ({B}, {model.n_links}, 6) for a batch "
            f"of {B} states, got {arr.shape}"
        )
    return np.ascontiguousarray(pin_to_internal(arr))


def per_state_wrenches(model, f_ext: WrenchesLike | None, B: int) -> list:
    """``f_ext`` of a batch of B states as one entry per state, for the paths that take states
    one by one: None, a mapping or an (n_links, 6) array is shared by every state; a
    (B, n_links, 6) array gives one row per state."""
    if f_ext is None or isinstance(f_ext, Mapping):
        return [f_ext] * B
    arr = real_array(f_ext, "f_ext")
    if arr.shape == (model.n_links, 6):
        return [arr] * B
    if arr.shape != (B, model.n_links, 6):
        raise InputError(
            f"f_ext must have shape ({model.n_links}, 6) or ({B}, {model.n_links}, 6) for a batch "
            f"of {B} states, got {arr.shape}"
        )
    return list(arr)


NO_FEXT = np.zeros((0, 6))
NO_FEXT_BATCH = np.zeros((0, 0, 6))


def state(
    model, q: npt.ArrayLike, v: npt.ArrayLike, x: npt.ArrayLike, f_ext: WrenchesLike | None, xname: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int | None]:
    """(q, v, x, fext, B) as C-contiguous float64 arrays for the kernels: one state (B is None)
    or a batch along a leading axis (q (B, nq), v and x (B, nv), f_ext (B, n_links, 6)).  Not
    copied when they are such arrays already (the kernels only read them: copying a batch of
    4,096 panda states cost 0.27 ms, a fifth of its forward dynamics)."""
    q, v, x = real_array(q, "q", copy=False), real_array(v, "v", copy=False), real_array(x, xname, copy=False)
    if q.ndim == 2:
        B = q.shape[0]
        for arr, name, n in ((q, "q", model.nq), (v, "v", model.nv), (x, xname, model.nv)):
            if arr.shape != (B, n):
                why = f"model '{model.name}' has nq={n}" if name == "q" else f"q has shape {q.shape}"
                raise InputError(
                    f"{name} must have shape ({B}, {n}) for a batch of {B} states ({why}), got {arr.shape}"
                )
        fext = _external_wrenches_batch(model, f_ext, B)
        return _kernel_array(q), _kernel_array(v), _kernel_array(x), fext, B
    for arr, name, n in ((q, "q", model.nq), (v, "v", model.nv), (x, xname, model.nv)):
        if arr.shape != (n,):
            raise InputError(
                f"{name} must have shape ({n},) (model '{model.name}' has "
                f"n{'q' if name == 'q' else 'v'}={n}), or ({'B'}, {n}) for a batch; got shape {arr.shape}"
            )
    fext = NO_FEXT if f_ext is None else external_wrenches(model, f_ext)
    return _kernel_array(q), _kernel_array(v), _kernel_array(x), fext, None


def _kernel_array(a: np.ndarray) -> np.ndarray:
    """``a`` (float64) as the compiled entries take it: C-contiguous and aligned, copied only
    when it is not."""
    return np.require(a, dtype=np.float64, requirements=["C", "A"])


def overflow_error(model, prefix: str = "", **inputs) -> InputError:
    """The error for finite inputs whose result is not finite (float64 overflow), naming the
    largest input."""
    sizes = {name: float(np.max(np.abs(x))) if np.size(x) else 0.0 for name, x in inputs.items()}
    name = max(sizes, key=sizes.__getitem__)
    listed = ", ".join(f"max |{k}| = {val:.3g}" for k, val in sizes.items())
    return InputError(
        f"{prefix}the result is not finite although every input is (model '{model.name}': {listed}): "
        f"{name} is too large for float64 arithmetic"
    )


def check_state(model, q, v, x, xname: str, prefix: str = "") -> None:
    """Raise the precise error (prefixed) if q, v or x is invalid: a wrong shape, a value that
    is not finite, a zero quaternion or (cos, sin) pair."""
    try:
        configuration(model, q)
        vector(model, v, "v", "v")
        vector(model, x, xname, "v")
    except InputError as exc:
        raise type(exc)(prefix + str(exc)) from None


def raise_state_error(model, q, v, x, xname: str, prefix: str = "", fext=None) -> None:
    """Raise the precise error for a state that a kernel found invalid (``fext``: the state's
    wrenches in the kernels' order, (n_links, 6), or None)."""
    check_state(model, q, v, x, xname, prefix)
    if fext is not None and np.size(fext):
        check_wrenches_finite(model, internal_to_pin(fext), prefix)
    raise InputError(prefix + "f_ext holds a value that is not finite")
