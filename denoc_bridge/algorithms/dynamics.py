"""Recursive DeNOC dynamics of a tree on the module graph (validated; loop closures and mimic
couplings are :mod:`denoc_bridge.constraints`, and :mod:`denoc_bridge.dynamics` decides which applies).

Every function takes the model and Pinocchio-layout vectors, runs one compiled
entry of the compiled core (:mod:`denoc_bridge.core`, Cython) and returns new arrays.
Inverse and forward dynamics also take a batch of states along a leading axis
(``q`` of shape (B, nq), ``v`` and ``tau``/``a`` of shape (B, nv)), evaluated
in parallel.  An optional :class:`~denoc_bridge.multibody.data.Data` supplies the work
buffer; by default each thread has its own.

Inputs are checked inside the kernels (finite values, non-zero quaternions and
(cos, sin) pairs, which are normalised); when a kernel reports an invalid
input, the Python layer finds and names it.  C-contiguous float64 arrays of the
right shape take the fast path; anything else (lists, other dtypes, strided
views) is converted first.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NoReturn

import numpy as np
import numpy.typing as npt

from denoc_bridge._resources import check_memory
from denoc_bridge.core import OVERFLOW
from denoc_bridge.core import layout as T
from denoc_bridge.core import tree as compiled
from denoc_bridge.core.layout import SINGULAR_RTOL
from denoc_bridge.errors import InputError, SingularInertiaError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.data import Data, run_chunks, work_of
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.model import Model

__all__ = [
    "tree_inverse_dynamics",
    "tree_forward_dynamics",
    "tree_nonlinear_effects",
    "shifted_mass_solver",
    "link_forces",
    "tree_mass_matrix",
    "tree_inverse_mass_matrix",
    "udut",
    "inverse_udut",
    "geometry",
    "Geometry",
]
_mass_matrix_state = compiled.mass_matrix_state  # bound once (fast path)
_inverse_mass_matrix_state = compiled.inverse_mass_matrix_state
_block_factors_state = compiled.block_factors_state
_empty = np.empty


def _work(model: Model, data: Data | None) -> np.ndarray:
    return work_of(model, data)


def singular_error(model: Model, k: int) -> SingularInertiaError:
    return SingularInertiaError(
        f"the articulated inertia of joint {model.joint_label(k)} is singular: the links it moves "
        f"(link '{model.link_names[k]}' and its subtree) offer no inertia to its motion, e.g. a massless "
        "leaf link, or a massless link whose child joint is a free-flyer, or at most "
        f"{SINGULAR_RTOL:g} of the inertias it is computed from (round-off); forward dynamics and the "
        "inverse GIM are undefined",
        joint=model.joint_names[k],
        link=model.link_names[k],
    )


def raise_status(
    model: Model,
    status: int,
    q: np.ndarray,
    v: np.ndarray,
    x: np.ndarray,
    xname: str,
    prefix: str = "",
    fext: np.ndarray | None = None,
) -> NoReturn:
    if status == OVERFLOW:
        raise _inputs.overflow_error(model, prefix, q=q, v=v, **{xname: x})
    if status < 0:
        _inputs.raise_state_error(model, q, v, x, xname, prefix, fext)
    err = singular_error(model, int(status) - 1)
    if prefix:
        err = SingularInertiaError(prefix + str(err), joint=err.joint, link=err.link)
    raise err


def _batch(
    inverse: bool, model: Model, q: np.ndarray, v: np.ndarray, x: np.ndarray, fext: np.ndarray, B: int, xname: str
) -> np.ndarray:
    out = np.empty((B, model.nv))
    status = np.empty(B, dtype=np.int64)
    run_chunks(compiled.dynamics_chunk, B, model._kt, q, v, x, fext, out, status, inverse, align=compiled.BATCH_LANES)
    raise_batch_status(model, status, q, v, x, fext, xname)
    return out


def raise_batch_status(
    model: Model, status: np.ndarray, q: np.ndarray, v: np.ndarray, x: np.ndarray, fext: np.ndarray, xname: str
) -> None:
    """The error of the first state of a batch whose status is not 0, named by its index (its
    wrenches ``fext[b]`` too, when the batch has them); nothing when every status is 0."""
    bad = np.flatnonzero(status)
    if bad.size:
        b = int(bad[0])
        wrenches = fext[b] if len(fext) else None
        raise_status(model, int(status[b]), q[b], v[b], x[b], xname, prefix=f"state {b} of the batch: ", fext=wrenches)


def converted(
    state_kernel: Callable[..., int],
    inverse: bool,
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    x: npt.ArrayLike,
    f_ext: WrenchesLike | None,
    data: Data | None,
    xname: str,
) -> np.ndarray:
    """The general path: convert and check the arguments, one state or a batch (``model`` is
    checked by the caller)."""
    q, v, x, fext, B = _inputs.state(model, q, v, x, f_ext, xname)
    if B is not None:
        return _batch(inverse, model, q, v, x, fext, B, xname)
    out = np.empty(model.nv)
    status = state_kernel(model._kt, _work(model, data), q, v, x, fext, out)
    if status:
        raise_status(model, status, q, v, x, xname)
    return out


def tree_inverse_dynamics(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    a: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
) -> np.ndarray:
    """Joint torques/forces ``tau`` of the tree (loop closures ignored) that produce the
    accelerations ``a`` at state (q, v): equals ``pin.rnea`` of the model without its loops.

    Recursive DeNOC inverse dynamics (000 Table 1, eqs. 5-13): a forward recursion of twists,
    twist rates and link wrenches over the modules M_1..M_s and their links, then a backward
    recursion ``tau = N_d^T N_l^T w``.  Gravity (``model.gravity``) is included.  Arguments as
    :func:`denoc_bridge.inverse_dynamics`.
    """
    _check_model(model)
    return converted(compiled.inverse_dynamics_state, True, model, q, v, a, f_ext, data, "a")


def tree_forward_dynamics(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: WrenchesLike | None = None,
    *,
    data: Data | None = None,
) -> np.ndarray:
    """Joint accelerations of the tree (loop closures ignored) produced by ``tau`` at (q, v):
    O(n), equals ``pin.aba`` of the model without its loops; the open-tree accelerations that
    :mod:`denoc_bridge.constraints` corrects.

    ``phi = tau - (C v + g - J^T f_ext)`` comes from the forward recursion of inverse dynamics
    with zero acceleration (000 Table 3, note 1); ``I a = phi`` is then solved by block reverse
    Gaussian elimination with the articulated module masses (000 eqs. 18-23, Table 3; 001 eqs.
    A.1-A.8 for multi-DOF joints).  No matrix is formed.
    """
    _check_model(model)
    return converted(compiled.forward_dynamics_state, False, model, q, v, tau, f_ext, data, "tau")


def link_forces(model: Model, q: np.ndarray, v: np.ndarray, a: np.ndarray) -> np.ndarray:
    """(L, 3): the forces ``m_k (a_ck - g)`` the links need for the motion (q, v, a) (``a_ck`` the
    acceleration of link k's centre of mass), in the link frames: the linear parts of the link
    wrenches ``w_k`` of the forward recursion of inverse dynamics (000 Table 1, eq. 9)."""
    work = model.thread_work()
    tau = np.empty(model.nv)
    status = compiled.inverse_dynamics_fast(model._kt, work, q, v, a, tau)
    if status:
        raise_status(model, status, q, v, a, "a")
    L = model.n_links
    return np.array(work[:L, T.C_W + 3 : T.C_W + 6])


def shifted_mass_solver(
    model: Model, q: np.ndarray, armature: np.ndarray, inertia: np.ndarray
) -> Callable[[np.ndarray], np.ndarray]:
    """``x -> (M + diag(armature) + sum_k J_k^T X_k J_k)^-1 M x`` at q, in two O(n) recursions per
    call: ``M x`` by inverse dynamics at rest, then the articulated solve (000 eqs. 18-23) of the
    model with ``armature`` (nv) added to its joints' armatures and the rotational inertias
    ``inertia`` ((L, 3, 3), symmetric positive semi-definite, link frames) added to its links
    (``X_k`` the 6x6 inertia with only that rotational block, ``J_k`` link k's Jacobian).  Both
    run without gravity, so that the map is linear to round-off however small x is (with
    gravity, ``ID(q, 0, x) = M x + g(q)`` would lose ``M x`` to the cancellation of g)."""
    L, nv = model.n_links, model.nv
    dof_link = np.repeat(np.arange(L), model.nv_joint)
    dof_rank = np.arange(nv) - np.repeat(np.asarray(model.idx_v), model.nv_joint)
    X = np.asarray(inertia, dtype=float).reshape(L, 3, 3)
    six = X[:, (0, 0, 0, 1, 1, 2), (0, 1, 2, 1, 2, 2)]
    free = T.with_gravity(model._kt, np.zeros(3))
    shifted = T.shifted_table(free, dof_link, dof_rank, np.asarray(armature, dtype=float).reshape(nv), six)
    zero = np.zeros(nv)
    work = model.thread_work()

    def solve(x: np.ndarray) -> np.ndarray:
        x = np.ascontiguousarray(x, dtype=float).reshape(nv)
        Mx, out = np.empty(nv), np.empty(nv)
        status = compiled.inverse_dynamics_fast(free, work, q, zero, x, Mx)
        if status == 0:
            status = compiled.forward_dynamics_fast(shifted, work, q, zero, Mx, out)
        if status:
            raise_status(model, status, q, zero, x, "x")
        return out

    return solve


def tree_nonlinear_effects(
    model: Model, q: npt.ArrayLike, v: npt.ArrayLike, f_ext: WrenchesLike | None = None, *, data: Data | None = None
) -> np.ndarray:
    """``C(q, v) v + g(q) - J^T f_ext`` of the tree: inverse dynamics with zero acceleration."""
    a = np.zeros(np.shape(v)) if np.ndim(v) == 2 else np.zeros(model.nv)
    return tree_inverse_dynamics(model, q, v, a, f_ext, data=data)


class Geometry:
    """Copies of the parts of the work array after a geometry pass (for the O(n^2) algorithms):
    E (L, 3, 3), r (L, 3), P (nv, 6) and, after the articulated pass, Psi (nv, 6) and the rows of
    Ihat and Ihat^-1 (nv, 6), plus the kinetic energy."""

    def __init__(self, model: Model, work: np.ndarray, energy: float) -> None:
        L, nv = model.n_links, model.nv
        _, g_row, dof_row, p_row, ihat_row, ihatinv_row, _, _ = T.regions(L, nv, model.n_modules)
        pairs = work[g_row : g_row + 2 * L].reshape(L, 2 * T.W)  # per link: E_k (9), r_k (3)
        self.E = pairs[:, 0:9].reshape(L, 3, 3).copy()
        self.r = pairs[:, T.W + T.G_R : T.W + T.G_R + 3].copy()
        self.P = work[p_row : p_row + nv, 0:6].copy()
        self.Psi = work[dof_row : dof_row + nv, T.H_PSI : T.H_PSI + 6].copy()
        self.Ihat = work[ihat_row : ihat_row + nv, 0:6].copy()
        self.IhatInv = work[ihatinv_row : ihatinv_row + nv, 0:6].copy()
        self.energy = energy


def geometry(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike | None = None,
    *,
    factors: bool = False,
    data: Data | None = None,
) -> Geometry:
    """Run the full geometry pass (and the articulated factors); used by the GIM factors and
    inverse, forward kinematics and the kinetic energy."""
    _check_model(model)
    q = _inputs.configuration(model, q)
    work = _work(model, data)
    energy = np.zeros(1)
    if v is None and not factors:  # kinematics only: the lean pass (compiles in ~1/5 the time)
        status = compiled.geometry_state(model._kt, work, q)
        v = np.zeros(model.nv)
    else:
        v = np.zeros(model.nv) if v is None else _inputs.vector(model, v, "v", "v")
        status = compiled.geometry_and_factors(model._kt, work, q, v, factors, energy)
    if status:
        raise_status(model, status, q, v, v, "v")
    return Geometry(model, work, float(energy[0]))


def tree_mass_matrix(
    model: Model, q: npt.ArrayLike, *, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The full symmetric generalized inertia matrix (GIM) ``I(q)`` (nv x nv) of the tree.

    Composite module masses ``Mtilde^i = M^i + sum_j (A^{j,i})^T Mtilde^j A^{j,i}``
    (000 eq. 17) and the GIM blocks ``N^{jT} Mtilde^j A^{j,i} N^i`` (000 eq. 16;
    element-wise 003 eq. 29), in one compiled backward pass in the base frame
    (``denoc_bridge/core/gim.pxi``).  Includes ``model.armature`` on the
    diagonal, as ``pin.crba`` does.  The checked path of :func:`denoc_bridge.mass_matrix`.
    ``out``: an optional (nv, nv) float64 array to write into (returned).
    """
    if type(model) is not Model:
        _check_model(model)
    res = np.empty((model.nv, model.nv)) if out is None else out
    try:  # fast path: a float64 C vector
        if _mass_matrix_state(model._kt, model._local.work if data is None else data.work, q, res) == 0:
            return res
    except (TypeError, AttributeError):  # another type, no work yet
        pass
    out = res = out_matrix(model, out, "mass_matrix")
    # converted and checked, but normalised by the kernel as on the fast path: normalising here
    # first changed the last bits, so that the first call of a thread (no work array yet) or a
    # list differed from the same call on the fast path
    q = _inputs.vector(model, q, "q", "q")
    status = compiled.mass_matrix_state(model._kt, _work(model, data), q, out)
    if status == OVERFLOW:
        raise _inputs.overflow_error(model, "mass_matrix: ", q=q)
    if status:
        _inputs.configuration(model, q)  # names a zero quaternion or (cos, sin) pair
        raise InputError(f"mass_matrix: the configuration was refused by the kernel (model '{model.name}')")
    return out


def matrix_batch(inverse: bool, model: Model, q: npt.ArrayLike, out: np.ndarray | None) -> np.ndarray:
    """The GIM (or, with ``inverse``, its inverse) of each configuration of a batch q (B, nq) into
    (B, nv, nv), in parallel; bit-identical to the single-state calls."""
    name = "inverse_mass_matrix" if inverse else "mass_matrix"
    if out is None and np.ndim(q) == 2:  # before converting q: a broadcast batch costs nothing yet
        B, nv = np.shape(q)[0], model.nv
        check_memory(
            8.0 * B * (nv * nv + model.nq),
            f"{name} of {B:,} states of '{model.name}' ({B:,} x {nv} x {nv} numbers)",
            "pass the states in chunks, or out= an array you allocated (e.g. a numpy.memmap on disk)",
        )
    Q = _inputs.real_array(q, "q")
    if Q.ndim != 2 or Q.shape[1] != model.nq:
        raise InputError(f"{name}: q must have shape (B, {model.nq}) for a batch, got shape {Q.shape}")
    B, nv = Q.shape[0], model.nv
    Q = np.ascontiguousarray(Q, dtype=np.float64)
    if out is None:
        res = np.empty((B, nv, nv))
    elif (
        isinstance(out, np.ndarray)
        and out.dtype == np.float64
        and out.shape == (B, nv, nv)
        and out.flags.c_contiguous
        and out.flags.writeable
    ):
        res = out
    else:
        raise InputError(f"{name}: out must be a writable C-contiguous float64 array of shape ({B}, {nv}, {nv})")
    status = np.zeros(B, dtype=np.int64)
    run_chunks(compiled.matrix_chunk, B, model._kt, Q, res, status, inverse)
    for b in np.flatnonzero(status):  # name the first bad state the way the single call does
        try:
            (tree_inverse_mass_matrix if inverse else tree_mass_matrix)(model, Q[b], out=res[b])
        except Exception as err:
            raise type(err)(f"state {b} of the batch: {err}") from err
    return res


def _block_factors(
    model: Model, q: npt.ArrayLike, level: str, inverse: bool, data: Data | None
) -> tuple[np.ndarray, np.ndarray]:
    name = "inverse_udut" if inverse else "udut"
    if level not in ("module", "link"):
        raise InputError(f"level must be 'module' or 'link', got {level!r}")
    if type(model) is not Model:
        _check_model(model)
    A, B = np.empty((model.nv, model.nv)), np.empty((model.nv, model.nv))  # (unpacking one (2, nv, nv) costs more)
    try:  # fast path: a float64 C vector (the kernel checks and normalises it)
        status = compiled.block_factors_state(
            model._kt, model._local.work if data is None else data.work, q, A, B, level == "module", inverse
        )
    except (TypeError, AttributeError):  # another type, no work yet
        q = _inputs.vector(model, q, "q", "q")
        status = compiled.block_factors_state(model._kt, _work(model, data), q, A, B, level == "module", inverse)
    if status == OVERFLOW:
        raise _inputs.overflow_error(model, f"{name}: ", q=q)
    if status < 0:
        _inputs.configuration(model, q)  # names a wrong shape, value, zero quaternion or (cos, sin) pair
        raise InputError(f"{name}: the configuration was refused by the kernel (model '{model.name}')")
    if status:
        raise singular_error(model, int(status) - 1)
    return A, B


def udut(
    model: Model, q: npt.ArrayLike, *, level: str = "module", data: Data | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Block factors ``(U, D)`` of the GIM, ``I = U D U^T``, as dense arrays.

    ``level="module"`` (default) gives the module-level factors of 002
    (``Ubar`` unit block upper triangular, ``Dbar`` block diagonal with one
    block per kinematic module, as printed in 002 eq. A.20).  ``level="link"``
    gives the link-level factors of 001 eq. (A.3): U_{k,j} = P_k^T A_{j,k}^T Psi_j
    and D = diag(Ihat_k), scalar blocks for one-DOF joints (Pinocchio's
    ``pin.cholesky.decompose`` computes the same U and D for such chains).

    The factors are unique for the partition, and one compiled call
    (``block_factors_state`` of :mod:`denoc_bridge.core`'s ``tree``) takes the cheaper of two ways:
    on small trees the sparse block LTDL of the GIM over the link or module tree
    (``denoc_bridge/core/gim_ltdl.pxi``); otherwise the recursion on the articulated masses,
    where the module-level factors are assembled from the link-level ones without any
    numerical inversion: ``Dbar_i = U_ii D_i U_ii^T`` and ``Ubar = U blockdiag(U_ii^-1)``
    where ``U_ii^-1`` comes from the recursive inverse of 002 eqs. A.13-A.18
    (``block_factors`` in ``denoc_bridge/core/gim_factors.pxi``; the choice in ``core/gim_entry.pxi``).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout; quaternions and (cos, sin) pairs are normalised.
    level : {"module", "link"}
        Module-level blocks (002; one block per kinematic module) or link-level ones (001).
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    U, D : (nv, nv) arrays
        ``U`` unit block upper triangular, ``D`` block diagonal, ``U D U^T`` the GIM.

    Raises
    ------
    InputError
        Wrong shapes or non-finite entries (naming the entry and its joint), an unknown level.
    SingularInertiaError
        A singular articulated inertia (naming the joint).
    """
    if type(model) is Model and data is None:  # fast path: a float64 C vector, as in tree_mass_matrix
        A, B = _empty((model.nv, model.nv)), _empty((model.nv, model.nv))
        try:
            if _block_factors_state(model._kt, model._local.work, q, A, B, level == "module", False) == 0 and (
                level == "module" or level == "link"
            ):
                return A, B
        except (TypeError, AttributeError):  # another type, no work yet
            pass
    return _block_factors(model, q, level, False, data)


def inverse_udut(
    model: Model, q: npt.ArrayLike, *, level: str = "module", data: Data | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(U^-1, D^-1)``: the inverses of the factors of :func:`udut` (002 eq. A.21).

    ``U^-1`` comes from the recursive block inverse of 002 eqs. A.13-A.18 and
    ``D^-1`` from the inverted articulated inertias ``Ihat_k^-1``; at module
    level ``Ubar^-1 = blockdiag(U_ii) U^-1`` and ``Dbar_i^-1 = U_ii^-T D_i^-1 U_ii^-1``.
    ``I^-1 = U^-T D^-1 U^-1`` (002 eq. A.22).  One compiled call, as :func:`udut` (on small
    trees ``U^-1`` by sparse block back substitution after the LTDL of the GIM and ``D^-1``
    by a Cholesky inverse of each block, ``denoc_bridge/core/gim_ltdl.pxi``).

    Parameters
    ----------
    q : (nq,) array
        Configuration in Pinocchio's layout; quaternions and (cos, sin) pairs are normalised.
    level : {"module", "link"}
        Module-level blocks (002; one block per kinematic module) or link-level ones (001).
    data : Data, optional
        Work buffers (:class:`~denoc_bridge.Data`) for this thread; default: the model's own.

    Returns
    -------
    Uinv, Dinv : (nv, nv) arrays
        ``U^-1`` (unit block upper triangular) and ``D^-1`` (block diagonal);
        ``Uinv.T @ Dinv @ Uinv`` is the inverse GIM.

    Raises
    ------
    InputError
        Wrong shapes or non-finite entries (naming the entry and its joint), an unknown level.
    SingularInertiaError
        A singular articulated inertia (naming the joint).
    """
    if type(model) is Model and data is None:  # fast path, as in udut
        A, B = _empty((model.nv, model.nv)), _empty((model.nv, model.nv))
        try:
            if _block_factors_state(model._kt, model._local.work, q, A, B, level == "module", True) == 0 and (
                level == "module" or level == "link"
            ):
                return A, B
        except (TypeError, AttributeError):  # another type, no work yet
            pass
    return _block_factors(model, q, level, True, data)


def out_matrix(model: Model, out: np.ndarray | None, name: str) -> np.ndarray:
    """A new (nv, nv) array, or ``out`` once checked (C-contiguous, writable float64 (nv, nv))."""
    nv = model.nv
    if out is None:
        return np.empty((nv, nv))
    if not (
        isinstance(out, np.ndarray)
        and out.dtype == np.float64
        and out.shape == (nv, nv)
        and out.flags.c_contiguous
        and out.flags.writeable
    ):
        raise InputError(
            f"{name}: out must be a writable C-contiguous float64 array of shape ({nv}, {nv}), got "
            f"{type(out).__name__} {getattr(out, 'dtype', '')} {getattr(out, 'shape', '')}"
        )
    return out


def tree_inverse_mass_matrix(
    model: Model, q: npt.ArrayLike, *, data: Data | None = None, out: np.ndarray | None = None
) -> np.ndarray:
    """The inverse GIM ``I^-1 = U^-T D^-1 U^-1`` (002 eqs. A.13-A.22), full and symmetric.

    One compiled call (``inverse_mass_matrix_state`` of :mod:`denoc_bridge.core`'s ``tree``), which
    takes the cheaper of two ways by a work count.  On small trees (panda, solo12, talos, chains
    up to ~20 DOF) the GIM of the composite masses, its scalar ``U D U^T`` over the tree of
    DOFs (no fill outside the ancestor pairs) and Takahashi's recurrence for the inverse
    (``ltdl_minv`` in ``denoc_bridge/core/gim_ltdl.pxi``).  Otherwise, or when a pivot is not
    clearly positive, the recursion (``denoc_bridge/core/gim.pxi``): the articulated masses
    give ``D`` (one z_k x z_k block per joint), the rows of ``D^-1 U^-1`` over each subtree come
    from the block recursion of 002 (eqs. A.13-A.18), then ``U^-T`` is applied by the forward
    substitution of 000 Table 3; ``I`` itself is never formed nor inverted, nor is ``U^-1``.
    Raises
    :class:`~denoc_bridge.errors.SingularInertiaError` naming the joint whose articulated
    inertia is singular.
    O(n^2); equals ``pin.computeMinverse``.  ``out``: an optional (nv, nv) float64 array to
    write into (returned).
    """
    if type(model) is not Model:
        _check_model(model)
    res = np.empty((model.nv, model.nv)) if out is None else out
    try:  # fast path: a float64 C vector
        if _inverse_mass_matrix_state(model._kt, model._local.work if data is None else data.work, q, res) == 0:
            return res
    except (TypeError, AttributeError):  # another type, no work yet
        pass
    res = out_matrix(model, out, "inverse_mass_matrix")
    q = _inputs.vector(model, q, "q", "q")
    status = compiled.inverse_mass_matrix_state(model._kt, _work(model, data), q, res)
    if status == 0:
        return res
    if status == OVERFLOW:
        raise _inputs.overflow_error(model, "inverse_mass_matrix: ", q=q)
    if status < 0:
        _inputs.configuration(model, q)  # names a zero quaternion or (cos, sin) pair
        raise InputError(f"inverse_mass_matrix: the configuration was refused by the kernel (model '{model.name}')")
    raise singular_error(model, int(status) - 1)
