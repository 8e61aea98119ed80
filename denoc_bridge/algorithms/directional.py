"""Matrix-free derivatives of the forward dynamics of a tree in O(n) (validated layer over the
compiled core's ``directional`` module, ``denoc_bridge/core/directional.pyx``;
:mod:`denoc_bridge.dynamics` routes the public calls).

The directional derivative (JVP) ``(dq, dv, dtau) -> dqdd`` and the adjoint (VJP)
``lam -> (dqdd_dq^T lam, dqdd_dv^T lam, dqdd_dtau^T lam)`` of ``qdd = FD(q, v, tau, f_ext)``,
with q perturbed in Pinocchio's tangent space (``pin.integrate(q, dq)``), as the columns of
:func:`denoc_bridge.forward_dynamics_derivatives` but without forming any n x n array.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.dynamics import raise_status
from denoc_bridge.core import directional as compiled
from denoc_bridge.core import sized
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.model import Model

__all__ = ["tree_forward_dynamics_jvp", "tree_forward_dynamics_vjp"]


def _buffers(model: Model) -> tuple[np.ndarray, np.ndarray]:
    """(work, buf) of this thread for the model: the forward dynamics work array and the
    buffer of the sweeps (kept, so that repeated calls on a large model do not pay
    for fresh pages)."""
    local = model._local
    buf = getattr(local, "directional_buffer", None)
    if buf is None:
        buf = local.directional_buffer = np.empty(compiled.buffer_size(model._kt.shape[0], model.nv))
    return model.thread_work(), buf


def _vector(x: npt.ArrayLike | None, name: str, model: Model) -> np.ndarray:
    """A direction or weight vector of nv entries (None: zeros), named on a wrong shape; the
    compiled entry checks that its entries are finite (status -1, then :func:`_name_non_finite`)."""
    if x is None:
        return np.zeros(model.nv)
    a = _inputs.real_array(x, name)
    if a.shape != (model.nv,):
        raise InputError(
            f"{name} must have shape ({model.nv},) (model '{model.name}' has nv={model.nv}; one state "
            f"at a time: no batches for the matrix-free derivatives), got shape {a.shape}"
        )
    return np.ascontiguousarray(a)


def _name_non_finite(model: Model, **vectors: np.ndarray) -> None:
    """Raise the InputError naming the first entry of the direction or weight vectors that is
    not finite, if any (the entry's status -1 may be theirs or the state's)."""
    for name, a in vectors.items():
        bad = np.flatnonzero(~np.isfinite(a))
        if bad.size:
            i = int(bad[0])
            raise InputError(f"{name}[{i}] is {a[i]} (DOF {i} of '{model.name}'); it must be finite")


def _state(model: Model, q, v, tau, f_ext) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    _check_model(model)
    q, v, tau, fext, B = _inputs.state(model, q, v, tau, f_ext, "tau")
    if B is not None:
        raise InputError(
            f"the matrix-free derivatives take one state at a time; q has shape {q.shape} (a batch of {B})"
        )
    return q, v, tau, fext


def tree_forward_dynamics_jvp(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    dq: npt.ArrayLike | None = None,
    dv: npt.ArrayLike | None = None,
    dtau: npt.ArrayLike | None = None,
    f_ext: WrenchesLike | None = None,
) -> np.ndarray:
    """The directional derivative of the tree's forward dynamics (loop closures ignored); see
    :func:`denoc_bridge.forward_dynamics_jvp`."""
    q, v, tau, fext = _state(model, q, v, tau, f_ext)
    dq, dv, dtau = _vector(dq, "dq", model), _vector(dv, "dv", model), _vector(dtau, "dtau", model)
    work, buf = _buffers(model)
    nv = model.nv
    qdd, out = np.empty(nv), np.empty(nv)
    status = sized(
        compiled.forward_dynamics_jvp_state(model._kt, work, buf, q, v, tau, fext, dq, dv, dtau, qdd, out),
        "forward_dynamics_jvp_state",
    )
    if status == -1:
        _name_non_finite(model, dq=dq, dv=dv, dtau=dtau)
    if status == -3 and np.all(np.isfinite(qdd)):
        raise _inputs.overflow_error(model, "forward_dynamics_jvp: ", dq=dq, dv=dv, dtau=dtau)
    if status:
        raise_status(model, status, q, v, tau, "tau")
    return out


def tree_forward_dynamics_vjp(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    lam: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjoint of the tree's forward dynamics (loop closures ignored); see
    :func:`denoc_bridge.forward_dynamics_vjp`."""
    q, v, tau, fext = _state(model, q, v, tau, f_ext)
    lam = _vector(lam, "lam", model)
    work, buf = _buffers(model)
    nv = model.nv
    qdd, gq, gv, gtau = np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv)
    status = sized(
        compiled.forward_dynamics_vjp_state(model._kt, work, buf, q, v, tau, fext, lam, qdd, gq, gv, gtau),
        "forward_dynamics_vjp_state",
    )
    if status == -1:
        _name_non_finite(model, lam=lam)
    if status == -3 and np.all(np.isfinite(qdd)):
        raise _inputs.overflow_error(model, "forward_dynamics_vjp: ", lam=lam)
    if status:
        raise_status(model, status, q, v, tau, "tau")
    return gq, gv, gtau
