"""Analytical first-order derivatives of the DeNOC dynamics of a tree (validated layer over the
compiled core's ``derivatives`` module, ``denoc_bridge/core/derivatives.pyx``;
:mod:`denoc_bridge.dynamics` routes the public calls).

Derivatives with respect to q are taken in Pinocchio's tangent space: column j is
``d/de tau(integrate(q, e e_j))`` at ``e = 0``, so that free-flyer, spherical, planar and
continuous joints are differentiated on their manifolds and the matrices are nv x nv, entry by
entry those of ``pin.computeRNEADerivatives`` and ``pin.computeABADerivatives``.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from denoc_bridge._resources import check_memory
from denoc_bridge.algorithms.dynamics import raise_batch_status, raise_status
from denoc_bridge.core import derivatives as compiled
from denoc_bridge.core import layout as T
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.data import run_chunks
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.model import Model

__all__ = ["tree_inverse_dynamics_derivatives", "tree_forward_dynamics_derivatives"]

Triple = tuple[np.ndarray, np.ndarray, np.ndarray]
_empty = np.empty
_new_kernel = compiled.inverse_dynamics_derivatives_new
_fd_new_kernel = compiled.forward_dynamics_derivatives_new


def derivative_work(model: Model) -> np.ndarray:
    """This thread's work array for the compiled derivatives of ``model`` (the tree's work rows,
    then the passes' scratch: ``core.derivatives.work_shape``), kept with the model's per-thread
    buffers: allocating the scratch per call cost talos's forward derivatives a tenth of their
    time in page faults (measured)."""
    local = model._local
    work = getattr(local, "derivative_work", None)
    if work is None:
        work = local.derivative_work = T.aligned_empty(compiled.work_shape(model._kt))
    return work


def fast_inverse_dynamics_derivatives(model: Model, q: object, v: object, a: object) -> Triple | None:
    """The derivatives of a tree without external wrenches when q, v and a are float64 C
    vectors of the right sizes with valid values (the compiled entry checks, and allocates the
    results); None otherwise, and the caller takes the checked path, which names what is wrong."""
    try:
        out = _new_kernel(model._kt, derivative_work(model), q, v, a)
    except TypeError:
        return None
    return out if type(out) is tuple else None


def _state_derivatives(
    model: Model, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray, xname: str, prefix: str = ""
) -> Triple:
    nv = model.nv
    dq, dv, M = np.empty((nv, nv)), np.empty((nv, nv)), np.empty((nv, nv))
    status = compiled.inverse_dynamics_derivatives_state(model._kt, derivative_work(model), q, v, a, fext, dq, dv, M)
    if status:
        raise_status(model, status, q, v, a, xname, prefix)
    return dq, dv, M


def _check_batch_memory(model: Model, q: npt.ArrayLike) -> None:
    """Refuse at once a batch whose three (B, nv, nv) results (and converted inputs) cannot fit."""
    if np.ndim(q) == 2:
        B, nv, nq = np.shape(q)[0], model.nv, model.nq
        check_memory(
            8.0 * B * (3 * nv * nv + 3 * nq + 4 * nv),
            f"the derivatives of {B:,} states of '{model.name}' (3 arrays of {B:,} x {nv} x {nv} numbers)",
            "pass the states in chunks",
        )


def _batch_derivatives(
    model: Model, q: np.ndarray, v: np.ndarray, a: np.ndarray, fext: np.ndarray, B: int, xname: str
) -> Triple:
    nv = model.nv
    dq, dv, M = np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv))
    status = np.empty(B, dtype=np.int64)
    run_chunks(compiled.inverse_dynamics_derivatives_chunk, B, model._kt, q, v, a, fext, dq, dv, M, status)
    raise_batch_status(model, status, q, v, a, fext, xname)
    return dq, dv, M


def tree_inverse_dynamics_derivatives(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> Triple:
    """``(dtau_dq, dtau_dv, M)`` of the tree's inverse dynamics (loop closures ignored) at
    (q, v, a): the partial derivatives of ``tau = ID(q, v, a, f_ext)`` (000 Table 1) with respect
    to q (tangent space, as ``pin.computeRNEADerivatives``) and v, and ``M = dtau/da``, the GIM
    with the armature (000 eq. 16).

    By recursion (``denoc_bridge/core/derivative_passes.pxi``): one forward pass of placements,
    twists and twist rates, one backward pass of composite inertias, wrenches and their
    variations (Carpentier & Mansard 2018), O(n d) for depth d.  ``f_ext`` (Pinocchio's
    ``fext``: [force; moment] in the link frames) moves with the links.  A batch of states along
    a leading axis gives (B, nv, nv) arrays, evaluated in parallel (the compiled batch's chunks on
    the batch threads, :func:`denoc_bridge.multibody.data.run_chunks`).
    """
    _check_model(model)
    _check_batch_memory(model, q)
    q, v, a, fext, B = _inputs.state(model, q, v, a, f_ext, "a")
    if B is not None:
        return _batch_derivatives(model, q, v, a, fext, B, "a")
    return _state_derivatives(model, q, v, a, fext, "a")


def tree_forward_dynamics_derivatives(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> Triple:
    """``(dqdd_dq, dqdd_dv, Minv)`` of the tree's forward dynamics (loop closures ignored):
    ``qdd = FD(q, v, tau, f_ext)`` (000 eqs. 18-23) differentiated with respect to q (tangent
    space, as ``pin.computeABADerivatives``), v and tau (``dqdd/dtau = M^-1``).

    ``ID(q, v, FD(q, v, tau)) = tau`` for all (q, v, tau), so by the implicit-function theorem
    ``dqdd/dx = -M^-1 dtau/dx`` at (q, v, qdd) (``denoc_bridge/core/forward_derivatives.pxi``):
    one compiled entry inverts the GIM the way :func:`denoc_bridge.inverse_mass_matrix` chooses
    (on small trees the LTDL of the GIM that the derivative passes at ``a = 0`` give, with
    ``qdd = M^-1 (tau - ID(q, v, 0))`` and the terms of qdd added to ``dtau/dq``; beyond, the O(n)
    forward dynamics, the recursive inverse from its articulated factors and the derivative passes
    at its accelerations), then forms the products.  A batch of states gives (B, nv, nv) arrays,
    evaluated in parallel.
    """
    _check_model(model)
    _check_batch_memory(model, q)
    q, v, tau, fext, B = _inputs.state(model, q, v, tau, f_ext, "tau")
    nv = model.nv
    if B is None:
        return _fd_state(model, q, v, tau, fext)
    qdd = np.empty((B, nv))
    ddq, ddv, Minv = np.empty((B, nv, nv)), np.empty((B, nv, nv)), np.empty((B, nv, nv))
    status = np.empty(B, dtype=np.int64)
    run_chunks(compiled.forward_dynamics_derivatives_chunk, B, model._kt, q, v, tau, fext, qdd, ddq, ddv, Minv, status)
    raise_batch_status(model, status, q, v, tau, fext, "tau")
    return ddq, ddv, Minv


def _fd_state(model: Model, q: np.ndarray, v: np.ndarray, tau: np.ndarray, fext: np.ndarray) -> Triple:
    nv = model.nv
    ddq, ddv, Minv = _empty((nv, nv)), _empty((nv, nv)), _empty((nv, nv))
    status = compiled.forward_dynamics_derivatives_state(
        model._kt, derivative_work(model), q, v, tau, fext, _empty(nv), ddq, ddv, Minv
    )
    if status:
        raise_status(model, status, q, v, tau, "tau")
    return ddq, ddv, Minv


def fast_forward_dynamics_derivatives(model: Model, q: object, v: object, tau: object) -> Triple | None:
    """As :func:`fast_inverse_dynamics_derivatives`, for the forward dynamics."""
    try:
        out = _fd_new_kernel(model._kt, derivative_work(model), q, v, tau)
    except TypeError:
        return None
    return out if type(out) is tuple else None


def refuse(model: object, what: str, reason: str) -> InputError:
    """The error for a model kind whose derivatives are not implemented yet."""
    hint = "" if what == "inverse_dynamics_derivatives" else "; forward_dynamics_derivatives gives them densely"
    return InputError(
        f"{what}: {reason} of model '{getattr(model, 'name', '?')}' are not supported yet; trees (models "
        f"without mimic joints or loop closures) are{hint}"
    )
