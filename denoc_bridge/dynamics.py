"""The one place that decides which dynamics a model gets.

A :class:`~denoc_bridge.Model` without loop closures is a tree: its functions run one compiled
entry kernel (the fast paths below, then the checked paths of :mod:`denoc_bridge.algorithms`).
A model with loop closures, or a :class:`~denoc_bridge.MimicModel`, is a tree with holonomic
constraints: :mod:`denoc_bridge.constraints` adds them on top of the tree's algorithms.  Below
this module every function assumes its kind.

Every function takes Pinocchio-layout vectors, or a batch of states along a leading axis
(``q`` of shape (B, nq), ``v`` and ``tau``/``a`` of shape (B, nv)), evaluated in parallel.  An
optional :class:`~denoc_bridge.Data` supplies the work buffer; by default each thread has its
own.  Inputs are checked inside the kernels (finite values, non-zero quaternions and (cos, sin)
pairs, which are normalised); when a kernel reports an invalid input, the Python layer finds and
names it.  C-contiguous float64 arrays of the right shape take the fast path; anything else
(lists, other dtypes, strided views) is converted first.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms import derivatives as _derivatives
from denoc_bridge.algorithms import directional as _directional
from denoc_bridge.algorithms import dynamics as tree
from denoc_bridge.constraints import loops, mimic, mimic_loops
from denoc_bridge.constraints.mimic_derivatives import (
    mimic_forward_dynamics_derivatives,
    mimic_inverse_dynamics_derivatives,
)
from denoc_bridge.core import tree as compiled
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs
from denoc_bridge.multibody.checks import check_model
from denoc_bridge.multibody.data import Data
from denoc_bridge.multibody.inputs import JointsLike, WrenchesLike
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = [
    "inverse_dynamics",
    "forward_dynamics",
    "nonlinear_effects",
    "gravity_torques",
    "mass_matrix",
    "inverse_mass_matrix",
    "inverse_dynamics_derivatives",
    "forward_dynamics_derivatives",
    "forward_dynamics_jvp",
    "forward_dynamics_vjp",
]

# bound once: the fast path of a panda-sized call is about 1.5 us, of which each global or
# attribute lookup costs 10-25 ns; the model's own thread calls its compiled form
# (``model._core``: the table taken once, with that thread's work array), other threads and a
# ``data`` the entries with their work array
# (the *_new entries allocate their result through NumPy's C API and return it, or the status)
_ndarray = np.ndarray
_inverse_dynamics_new = compiled.inverse_dynamics_new
_forward_dynamics_new = compiled.forward_dynamics_new
_mass_matrix_state = compiled.mass_matrix_state
_mass_matrix_new = compiled.mass_matrix_new
_inverse_mass_matrix_state = compiled.inverse_mass_matrix_state
_inverse_mass_matrix_new = compiled.inverse_mass_matrix_new
_NO_BAUMGARTE = (0.0, 0.0)


def _no_loops(model: Model | MimicModel) -> InputError:
    return InputError(
        f"actuated is for models with loop closures; '{model.name}' has none (every joint of a tree is actuated)"
    )


def inverse_dynamics(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
    actuated: JointsLike | None = None,
) -> np.ndarray:
    """Joint torques/forces ``tau`` that produce the accelerations ``a`` at state (q, v).

    Recursive DeNOC inverse dynamics (000 Table 1, eqs. 5-13): a forward
    recursion of twists, twist rates and link wrenches over the modules
    M_1..M_s and their links, then a backward recursion ``tau = N_d^T N_l^T w``.
    Gravity (``model.gravity``) is included; ``tau`` equals ``pin.rnea``.  On a
    :class:`~denoc_bridge.MimicModel` (``load_urdf(path, mimic=True)``), q, v, a and
    tau are reduced coordinates and ``tau`` equals ``pin.rnea`` of Pinocchio's mimic model.

    Parameters
    ----------
    q : (nq,) array
        Configuration, in Pinocchio's layout, or a batch along a leading axis (B, nq).
        Quaternions and (cos, sin) pairs are normalised.
    v : (nv,) array
        Velocity, or a batch (B, nv).
    a : (nv,) array
        Acceleration, or a batch (B, nv).
    f_ext : None, (n_links, 6) array or {link name: (6,)}
        External wrench applied to each link, as Pinocchio's ``fext``:
        [force; moment], in the link frame, moment about the link origin; (B, n_links, 6)
        for a batch.
    data : Data, optional
        Work buffers of this thread (:class:`~denoc_bridge.Data`); default: the model's own.
    actuated : joint names or indices into v, optional
        On a model with loop closures, the actuated joints (default all): the torques of a
        closed chain, the other joints passive
        (:func:`denoc_bridge.loops.closed_chain_inverse_dynamics`; one state, q, v, a
        consistent with the loops).  :func:`tree_inverse_dynamics` ignores the loops.
        On a MimicModel whose tree has loop closures likewise, in reduced coordinates (names
        of independent joints, or indices into the reduced v; default all: the smallest
        torques that realise the closed-chain motion); the open-chain torques ``G^T ID`` that
        ignore the loops are :func:`denoc_bridge.mimic.inverse_dynamics`.
    """
    if type(model) is not Model:  # a MimicModel, or not a model at all
        if type(model) is MimicModel:
            if model.tree.loops:  # closed chain in reduced coordinates (mimic rows and loop rows)
                return _state_by_state(
                    mimic_loops.closed_chain_inverse_dynamics, model, q, v, a, "a", f_ext, model.tree, actuated=actuated
                )
            if actuated is not None:
                raise _no_loops(model)
            return mimic.inverse_dynamics(model, q, v, a, f_ext, data=data)
        check_model(model)
    if model.loops:
        return _state_by_state(
            loops.closed_chain_inverse_dynamics, model, q, v, a, "a", f_ext, model, actuated=actuated
        )
    if actuated is not None:
        raise _no_loops(model)
    if f_ext is None:  # fast path: float64 C vectors
        try:
            out = None if data is not None else model._core.inverse_dynamics(q, v, a)  # None: not its thread
            if out is None:
                out = _inverse_dynamics_new(model._kt, model._local.work if data is None else data.work, q, v, a)
            if type(out) is _ndarray:
                return out
        except (TypeError, AttributeError):  # another type, no work yet
            pass
    return tree.converted(compiled.inverse_dynamics_state, True, model, q, v, a, f_ext, data, "a")


def forward_dynamics(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
    loop_method: str = "lagrange",
) -> np.ndarray:
    """Joint accelerations ``a`` produced by ``tau`` at state (q, v): O(n), equals ``pin.aba``.

    ``phi = tau - (C v + g - J^T f_ext)`` comes from the forward recursion of
    inverse dynamics with zero acceleration (000 Table 3, note 1); ``I a = phi``
    is then solved by block reverse Gaussian elimination with the articulated
    module masses (000 eqs. 18-23, Table 3; 001 eqs. A.1-A.8 for multi-DOF
    joints): the backward substitutions ``U phihat = phi``, ``D phitilde =
    phihat`` and the forward substitution ``U^T a = phitilde``.  No matrix is
    formed.  Takes a batch along a leading axis like :func:`inverse_dynamics`.

    Raises :class:`~denoc_bridge.errors.SingularInertiaError` naming the joint
    when an articulated inertia is singular.

    On a model with loop closures (:meth:`Model.add_loop_closure`) the accelerations are
    the constrained ones (004 eqs. 13-14): ``loop_method="lagrange"`` (default: O(n) per
    constraint row, no dense M) or ``"partitioning"`` (004 eqs. 19-25); see
    :mod:`denoc_bridge.loops`.

    On a :class:`~denoc_bridge.MimicModel` (``load_urdf(path, mimic=True)``) the
    accelerations are the reduced ones, ``G^T M G a = tau - G^T h``, by Lagrange multipliers
    on the tree (O(n) per mimic joint; :func:`denoc_bridge.mimic.forward_dynamics`); with loop
    closures on its tree, the mimic rows and the loop rows stacked in one Lagrange solve on the
    tree (:mod:`denoc_bridge.constraints.mimic_loops`).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    v : (nv,) array
        Velocity, or a batch (B, nv).
    tau : (nv,) array
        Joint torques and forces, or a batch (B, nv).
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin; (B, n_links, 6) for a batch.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.
    loop_method : {"lagrange", "partitioning"}
        On a model with loop closures: Lagrange multipliers on the O(n) forward dynamics, or
        coordinate partitioning (004 eqs. 19-25, dense).

    Returns
    -------
    a : (nv,) or (B, nv) array
        Joint accelerations (``pin.aba``).

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    SingularInertiaError
        An articulated inertia is singular (naming the joint): a joint moves no inertia.
    """
    if type(model) is not Model:  # a MimicModel, or not a model at all
        if type(model) is MimicModel:
            if model.tree.loops:  # the stacked rows [K; C] on the tree
                return mimic_loops.forward_dynamics(model, q, v, tau, f_ext)
            return mimic.forward_dynamics(model, q, v, tau, f_ext, data=data)
        check_model(model)
    if model.loops:
        if f_ext is None and loop_method == "lagrange" and np.ndim(q) == 1:  # fast path: the compiled kernel
            return loops.fast_lagrange(model, q, v, tau, None, _NO_BAUMGARTE)[0]
        return _state_by_state(
            loops.constrained_forward_dynamics, model, q, v, tau, "tau", f_ext, model, method=loop_method
        )
    if f_ext is None:  # fast path: float64 C vectors
        try:
            out = None if data is not None else model._core.forward_dynamics(q, v, tau)  # None: not its thread
            if out is None:
                out = _forward_dynamics_new(model._kt, model._local.work if data is None else data.work, q, v, tau)
            if type(out) is _ndarray:
                return out
        except (TypeError, AttributeError):  # another type, no work yet
            pass
    return tree.converted(compiled.forward_dynamics_state, False, model, q, v, tau, f_ext, data, "tau")


def nonlinear_effects(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
) -> np.ndarray:
    """``C(q, v) v + g(q) - J^T f_ext``: inverse dynamics with zero acceleration (``pin.nonLinearEffects``);
    of the tree on a model with loop closures (the h of 004 eq. 14).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    v : (nv,) array
        Velocity, or a batch (B, nv).
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin; (B, n_links, 6) for a batch.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    h : (nv,) or (B, nv) array
    """
    check_model(model)
    a = np.zeros(np.shape(v)) if np.ndim(v) == 2 else np.zeros(model.nv)
    return _open_chain(model)(model, q, v, a, f_ext, data=data)


def gravity_torques(model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None) -> np.ndarray:
    """Generalized gravity ``g(q)`` (``pin.computeGeneralizedGravity``); of the tree on a model with
    loop closures.

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    g : (nv,) or (B, nv) array
    """
    check_model(model)
    zero = np.zeros((np.shape(q)[0], model.nv)) if np.ndim(q) == 2 else np.zeros(model.nv)
    return _open_chain(model)(model, q, zero, zero.copy(), data=data)


# The batches of the constrained models run state by state in a function of its own: a
# comprehension inside inverse_dynamics or forward_dynamics would turn model, q, ... into closure
# cells there and cost every call of their fast paths about 0.1 us (measured on panda).
def _state_by_state(
    fn: Callable[..., np.ndarray],
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    x: npt.ArrayLike,
    xname: str,
    f_ext: inputs.WrenchesLike | None,
    wrench_model: Model,
    **options: object,
) -> np.ndarray:
    """``fn(model, q, v, x, f_ext, **options)`` for one state, or row by row for a batch (q of
    shape (B, nq)); ``wrench_model`` is the model whose links ``f_ext`` names."""
    if np.ndim(q) != 2:
        return fn(model, q, v, x, f_ext, **options)
    qs, vs, xs = (inputs.real_array(y, name) for y, name in ((q, "q"), (v, "v"), (x, xname)))
    fe = inputs.per_state_wrenches(wrench_model, f_ext, len(qs))
    return np.array([fn(model, qs[k], vs[k], xs[k], fe[k], **options) for k in range(len(qs))])


def _open_chain(model: Model | MimicModel) -> Callable[..., np.ndarray]:
    """The inverse dynamics that ignores the loops: the tree's, or a MimicModel's ``G^T ID``."""
    if isinstance(model, MimicModel):
        return mimic.inverse_dynamics
    return tree.tree_inverse_dynamics if model.loops else inverse_dynamics


def mass_matrix(
    model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The full symmetric generalized inertia matrix (GIM) ``I(q)`` (nv x nv).

    Composite module masses ``Mtilde^i = M^i + sum_j (A^{j,i})^T Mtilde^j A^{j,i}``
    (000 eq. 17) and the GIM blocks ``N^{jT} Mtilde^j A^{j,i} N^i`` (000 eq. 16;
    element-wise 003 eq. 29), in one compiled backward pass
    (``denoc_bridge/core/gim.pxi``, in the base frame).  Includes ``model.armature`` on the
    diagonal, as ``pin.crba`` does.  Of the tree on a model with loop closures.  On a
    :class:`~denoc_bridge.MimicModel`, the reduced ``G^T I G`` (``pin.crba`` of Pinocchio's
    mimic model).  A batch of configurations (B, nq) gives (B, nv, nv), in parallel.
    ``out``: an optional preallocated float64 result (nv, nv) (or (B, nv, nv)) to write into.

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.
    out : (nv, nv) or (B, nv, nv) float64 array, optional
        A preallocated C-contiguous result to write into (tree models only), so that a loop
        does not allocate.

    Returns
    -------
    M : (nv, nv) or (B, nv, nv) array
        Symmetric, both triangles filled.

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    """
    if type(model) is Model:  # fast path: a float64 C vector (as tree_mass_matrix's, one call less)
        try:
            res = None if data is not None else model._core.mass_matrix(q, out)  # None: not its thread
            if res is None:
                work = model._local.work if data is None else data.work
                res = (
                    _mass_matrix_new(model._kt, work, q) if out is None else _mass_matrix_state(model._kt, work, q, out)
                )
            if type(res) is _ndarray:
                return res
            if res == 0 and out is not None:  # the state entry wrote out
                return out
        except (TypeError, AttributeError):  # another type, no work yet
            pass
        if np.ndim(q) == 2:
            return tree.matrix_batch(False, model, q, out)
    elif type(model) is MimicModel:
        if out is not None:
            raise InputError("mass_matrix: out is for the tree models (a MimicModel returns a new array)")
        return mimic.mass_matrix(model, q, data=data)
    return tree.tree_mass_matrix(model, q, data=data, out=out)


def inverse_mass_matrix(
    model: Model | MimicModel, q: npt.ArrayLike, *, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The inverse GIM ``I^-1 = U^-T D^-1 U^-1`` (002 eqs. A.13-A.22), full and symmetric, in one
    compiled call: equals ``pin.computeMinverse``
    (:func:`denoc_bridge.algorithms.dynamics.tree_inverse_mass_matrix`).  A batch of configurations
    (B, nq) gives (B, nv, nv), in parallel; ``out`` as in :func:`mass_matrix`.  On a
    :class:`~denoc_bridge.MimicModel`, ``(G^T I G)^-1`` (:func:`denoc_bridge.mimic.inverse_mass_matrix`).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.
    out : (nv, nv) or (B, nv, nv) float64 array, optional
        A preallocated C-contiguous result to write into (tree models only), so that a loop
        does not allocate.

    Returns
    -------
    Minv : (nv, nv) or (B, nv, nv) array
        Symmetric, both triangles filled.

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    SingularInertiaError
        An articulated inertia is singular (naming the joint): a joint moves no inertia.
    """
    if type(model) is Model:  # fast path: a float64 C vector
        try:
            res = None if data is not None else model._core.inverse_mass_matrix(q, out)  # None: not its thread
            if res is None:
                work = model._local.work if data is None else data.work
                res = (
                    _inverse_mass_matrix_new(model._kt, work, q)
                    if out is None
                    else _inverse_mass_matrix_state(model._kt, work, q, out)
                )
            if type(res) is _ndarray:
                return res
            if res == 0 and out is not None:  # the state entry wrote out
                return out
        except (TypeError, AttributeError):  # another type, no work yet
            pass
        if np.ndim(q) == 2:
            return tree.matrix_batch(True, model, q, out)
    elif type(model) is MimicModel:
        if out is not None:
            raise InputError("inverse_mass_matrix: out is for the tree models (a MimicModel returns a new array)")
        return mimic.inverse_mass_matrix(model, q, data=data)
    return tree.tree_inverse_mass_matrix(model, q, data=data, out=out)


def _tree_for_derivatives(model: Model | MimicModel, what: str) -> Model:
    """The tree whose derivatives are asked for; mimic models and loop closures are refused here."""
    check_model(model)
    if isinstance(model, MimicModel):
        raise _derivatives.refuse(model, what, "matrix-free derivatives of mimic joints")
    if model.loops:
        raise _derivatives.refuse(model, what, "derivatives of the constrained dynamics of loop closures")
    return model


def _loop_derivatives(
    model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, tau: npt.ArrayLike, f_ext: WrenchesLike | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dqdd_dq, dqdd_dv, dqdd_dtau) of the constrained accelerations, state by state."""

    def one(
        model: Model | MimicModel, q: npt.ArrayLike, v: npt.ArrayLike, tau: npt.ArrayLike, f_ext: object
    ) -> np.ndarray:
        d = loops.constrained_dynamics_derivatives(model, q, v, tau, f_ext)  # type: ignore[arg-type]
        return np.stack([d.dqdd_dq, d.dqdd_dv, d.dqdd_dtau])

    out = _state_by_state(one, model, q, v, tau, "tau", f_ext, model.tree if isinstance(model, MimicModel) else model)
    return out[..., 0, :, :], out[..., 1, :, :], out[..., 2, :, :]


def _mimic_for_derivatives(model: MimicModel, what: str) -> MimicModel:
    if model.tree.loops:
        raise _derivatives.refuse(model, what, "derivatives of mimic joints together with loop closures")
    return model


def inverse_dynamics_derivatives(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dtau_dq, dtau_dv, M)``: the partial derivatives of :func:`inverse_dynamics` at
    (q, v, a), entry by entry ``pin.computeRNEADerivatives`` (``data.dtau_dq``, ``dtau_dv``,
    ``M``).  Derivatives with respect to q are in the tangent space (``pin.integrate(q, dq)``),
    so all three are nv x nv; ``M = dtau/da`` is the GIM (000 eq. 16) with the armature.

    Computed by recursion, the DeNOC passes (000 Table 1) differentiated: O(n d) for depth d,
    no finite differences (:func:`denoc_bridge.algorithms.derivatives.tree_inverse_dynamics_derivatives`).
    A batch of states along a leading axis gives (B, nv, nv) arrays.  On a
    :class:`~denoc_bridge.MimicModel`, the derivatives of the reduced inverse dynamics
    ``G^T ID(G q + offset, G v, G a)``: ``G^T (.) G`` of the tree's
    (:mod:`denoc_bridge.constraints.mimic_derivatives`; Pinocchio refuses mimic models).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    v : (nv,) array
        Velocity, or a batch (B, nv).
    a : (nv,) array
        Acceleration, or a batch (B, nv).
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin; (B, n_links, 6) for a batch.

    Returns
    -------
    dtau_dq, dtau_dv, M : (nv, nv) or (B, nv, nv) arrays

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    InputError
        On a model with loop closures (the closed-chain torques' derivatives are not
        implemented; ``forward_dynamics_derivatives`` covers loops).
    """
    if f_ext is None and type(model) is Model and not model.loops:  # fast path: float64 C vectors
        out = _derivatives.fast_inverse_dynamics_derivatives(model, q, v, a)
        if out is not None:
            return out
    if type(model) is MimicModel:
        return mimic_inverse_dynamics_derivatives(
            _mimic_for_derivatives(model, "inverse_dynamics_derivatives"), q, v, a, f_ext
        )
    tree_model = _tree_for_derivatives(model, "inverse_dynamics_derivatives")
    return _derivatives.tree_inverse_dynamics_derivatives(tree_model, q, v, a, f_ext)


def forward_dynamics_derivatives(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(dqdd_dq, dqdd_dv, Minv)``: the partial derivatives of :func:`forward_dynamics` at
    (q, v, tau), entry by entry ``pin.computeABADerivatives`` (``data.ddq_dq``, ``ddq_dv``,
    ``Minv``); ``dqdd/dtau = Minv`` is the inverse GIM.

    By the implicit-function theorem on ``ID(q, v, FD(q, v, tau)) = tau``:
    ``dqdd/dx = -M^-1 dtau/dx`` at (q, v, qdd), with the recursive derivatives of inverse dynamics
    and ``M^-1`` the way :func:`inverse_mass_matrix` takes it: on small trees the LTDL of the GIM
    of the derivative passes (``qdd = M^-1 (tau - ID(q, v, 0))``), beyond from the articulated
    factors of the O(n) forward dynamics (000 eqs. 18-23, 002 eqs. A.13-A.22).  Batches as
    :func:`inverse_dynamics_derivatives`.
    On a :class:`~denoc_bridge.MimicModel`, those of the reduced accelerations, by the same theorem
    on the reduced inverse dynamics (``M_r = G^T M G``;
    :mod:`denoc_bridge.constraints.mimic_derivatives`).  On a model with loop closures, those of
    the constrained accelerations (004 eqs. 13-14), by the theorem on the Lagrange equations;
    ``dqdd_dtau`` is then the constrained inverse inertia ``P`` (``P C^T = 0``), and
    :func:`denoc_bridge.loops.constrained_dynamics_derivatives` also gives the multipliers'
    (:mod:`denoc_bridge.constraints.loop_derivatives`); on a MimicModel whose tree has loop
    closures, those of its reduced accelerations.

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (reduced on a MimicModel), or a batch (B, nq);
        quaternions and (cos, sin) pairs are normalised.
    v : (nv,) array
        Velocity, or a batch (B, nv).
    tau : (nv,) array
        Joint torques and forces, or a batch (B, nv).
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin; (B, n_links, 6) for a batch.

    Returns
    -------
    dqdd_dq, dqdd_dv, Minv : (nv, nv) or (B, nv, nv) arrays
        On a model with loop closures the third is the constrained inverse inertia ``P``.

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    SingularInertiaError
        An articulated inertia is singular (naming the joint): a joint moves no inertia.
    """
    if f_ext is None and type(model) is Model and not model.loops:  # fast path: float64 C vectors
        out = _derivatives.fast_forward_dynamics_derivatives(model, q, v, tau)
        if out is not None:
            return out
    if (type(model) is Model and model.loops) or (type(model) is MimicModel and model.tree.loops):
        return _loop_derivatives(model, q, v, tau, f_ext)
    if type(model) is MimicModel:
        return mimic_forward_dynamics_derivatives(
            _mimic_for_derivatives(model, "forward_dynamics_derivatives"), q, v, tau, f_ext
        )
    tree_model = _tree_for_derivatives(model, "forward_dynamics_derivatives")
    return _derivatives.tree_forward_dynamics_derivatives(tree_model, q, v, tau, f_ext)


def forward_dynamics_jvp(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    dq: npt.ArrayLike | None = None,
    dv: npt.ArrayLike | None = None,
    dtau: npt.ArrayLike | None = None,
    f_ext: WrenchesLike | None = None,
) -> np.ndarray:
    """The directional derivative of :func:`forward_dynamics` in O(n), without a matrix:
    ``dqdd = dqdd_dq dq + dqdd_dv dv + Minv dtau`` at (q, v, tau).

    ``dq`` is a tangent vector (nv entries, Pinocchio's ``pin.integrate(q, dq)``), so that the
    result is the product of :func:`forward_dynamics_derivatives`' matrices with the direction;
    ``dq``, ``dv`` or ``dtau`` left ``None`` are zero.  By the implicit-function theorem,
    ``dqdd = M^-1 (dtau - dtau_dq dq - dtau_dv dv)`` at (q, v, qdd): one factorised O(n)
    forward dynamics (000 eqs. 18-23), the tangent (forward-mode) inverse dynamics in link
    frames (one forward and one backward sweep of 6-vectors), and one solve with the
    articulated factors (000 Table 3); well under a kilobyte per DOF of memory, kept per model
    and thread
    (the compiled core's ``denoc_bridge/core/directional.pyx``).  One state at a time; trees only (a
    :class:`~denoc_bridge.MimicModel` or a model with loop closures raises
    :class:`~denoc_bridge.errors.InputError`).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (one state); quaternions and (cos, sin) pairs are
        normalised.
    v : (nv,) array
        Velocity.
    tau : (nv,) array
        Joint torques and forces.
    dq, dv, dtau : (nv,) arrays, optional
        The direction: a tangent step of q (``pin.integrate(q, dq)``), of v and of tau; None
        is zero.
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin.

    Returns
    -------
    dqdd : (nv,) array

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    SingularInertiaError
        An articulated inertia is singular (naming the joint): a joint moves no inertia.
    InputError
        On a MimicModel or a model with loop closures (use ``forward_dynamics_derivatives``).
    """
    tree_model = _tree_for_derivatives(model, "forward_dynamics_jvp")
    return _directional.tree_forward_dynamics_jvp(tree_model, q, v, tau, dq, dv, dtau, f_ext)


def forward_dynamics_vjp(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    lam: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The adjoint of :func:`forward_dynamics` in O(n), without a matrix:
    ``(dqdd_dq^T lam, dqdd_dv^T lam, Minv lam)`` at (q, v, tau).

    ``mu = M^-1 lam`` by one solve with the articulated factors of a factorised O(n) forward
    dynamics (M is symmetric), then ``-dtau_dq^T mu`` and ``-dtau_dv^T mu`` by one forward and
    one backward sweep over the tree in link frames (the reverse mode of the tangent inverse
    dynamics;
    the compiled core's ``denoc_bridge/core/directional.pyx``).  The first result is a cotangent at q
    (Pinocchio's tangent convention, as the rows of ``dqdd_dq``).  This is the gradient of
    ``lam . qdd`` with respect to (q, v, tau): the reverse-mode step of an adjoint method
    (trajectory optimisation, parameter identification).  One state at a time; trees only.

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout (one state); quaternions and (cos, sin) pairs are
        normalised.
    v : (nv,) array
        Velocity.
    tau : (nv,) array
        Joint torques and forces.
    lam : (nv,) array
        The cotangent of qdd (e.g. the gradient of a loss with respect to qdd).
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext``: [force; moment] in the link frame, moment
        about the link origin.

    Returns
    -------
    gq, gv, gtau : three (nv,) arrays
        ``gq`` a cotangent at q in the tangent convention (the rows of ``dqdd_dq``).

    Raises
    ------
    InputError
        Wrong shapes, non-finite entries (naming the entry and its joint), a zero quaternion.
    SingularInertiaError
        An articulated inertia is singular (naming the joint): a joint moves no inertia.
    InputError
        On a MimicModel or a model with loop closures (use ``forward_dynamics_derivatives``).
    """
    tree_model = _tree_for_derivatives(model, "forward_dynamics_vjp")
    return _directional.tree_forward_dynamics_vjp(tree_model, q, v, tau, lam, f_ext)
