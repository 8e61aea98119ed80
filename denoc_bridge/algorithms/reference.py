"""The explicit DeNOC matrices and the readable module-level formulation.

Everything here is written with dense matrices in the inertial frame, exactly
as the papers print it, and is meant for small systems (O(n^3) memory and
time).  It is the reference that the recursive kernels are tested against.

Inertial-frame quantities (000 §2): for link k, ``t_k = [omega_k; odot_k]``
with ``odot_k`` the velocity of its origin, both in world coordinates; the
twist-propagation matrix ``A_{k,j} = [[1, 0], [a~_{k,j}, 1]]`` with
``a_{k,j} = o_j - o_k`` (000 eq. 7b), and ``P_k`` the joint-motion matrix in
world coordinates.
"""

from __future__ import annotations

import operator
from typing import NamedTuple, Protocol

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.dynamics import geometry
from denoc_bridge.errors import InputError, InputTypeError
from denoc_bridge.multibody import inputs as _inputs
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.inputs import WrenchesLike
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.model import Model
from denoc_bridge.spatial import skew

__all__ = [
    "denoc_matrices",
    "uncoupled_newton_euler",
    "NewtonEuler",
    "module_factors",
    "module_factors_inverse",
    "reference_mass_matrix",
    "reference_inverse_dynamics",
    "reference_forward_dynamics",
    "reference_inverse_mass_matrix",
]


class _Kinematics(NamedTuple):
    R: np.ndarray  # (L, 3, 3) link orientations
    o: np.ndarray  # (L, 3) link origins
    P: np.ndarray  # (L, 6, 6) world-frame P_k, columns beyond z_k unused
    Pdot: np.ndarray  # (L, 6, 6) its time derivative (needs v)


class _Placed(Protocol):
    """What :func:`link_N` needs of a kinematics: link origins and world-frame P (a
    :class:`_Kinematics`, or the loops' ``LoopKinematics``)."""

    @property
    def o(self) -> np.ndarray: ...
    @property
    def P(self) -> np.ndarray: ...


MAX_LINKS = 400  # 6L x 6L dense matrices: 400 links is 5 GB for the reference GIM products


def _check_size(model: Model, max_links: int, function: str) -> None:
    """Refuse a model that is not a tree :class:`Model` (naming ``function``) or has more than
    ``max_links`` links (checked to be an integer >= 0)."""
    _check_model(model)
    if not isinstance(model, Model):  # a MimicModel
        raise InputTypeError(
            f"{function} takes a tree Model (the explicit matrices of the papers); for a MimicModel "
            "pass model.tree and the expanded state model.expand(q, v, a)"
        )
    try:
        max_links = operator.index(max_links)
    except TypeError:
        raise InputTypeError(f"max_links must be an integer, got {type(max_links).__name__}") from None
    if max_links < 0:
        raise InputError(f"max_links must be >= 0, got {max_links}")
    if model.n_links > max_links:
        raise InputError(
            f"the explicit DeNOC matrices of '{model.name}' would be {6 * model.n_links} x {6 * model.n_links} "
            f"dense matrices ({model.n_links} links > max_links={max_links}); they are meant for small "
            "systems: use the recursive algorithms, or pass a larger max_links"
        )


def world_kinematics(model: Model, q: npt.ArrayLike, v: np.ndarray | None = None) -> _Kinematics:
    geo = geometry(model, q)
    E, r, Pl_all = geo.E, geo.r, geo.P
    L = model.n_links
    R = np.zeros((L, 3, 3))
    o = np.zeros((L, 3))
    omega = np.zeros((L, 3))
    P = np.zeros((L, 6, 6))
    Pdot = np.zeros((L, 6, 6))
    for k in range(L):
        b = model.parent[k]
        Rb, ob = (np.eye(3), np.zeros(3)) if b < 0 else (R[b], o[b])
        R[k] = Rb @ E[k].T
        o[k] = ob + Rb @ r[k]
        v0, z = model.idx_v[k], model.nv_joint[k]
        Pl = Pl_all[v0 : v0 + z].T  # 6 x z, child frame
        P[k, :3, :z] = R[k] @ Pl[:3]
        P[k, 3:, :z] = R[k] @ Pl[3:]
        if v is not None:
            qd = v[v0 : v0 + z]
            omega[k] = (omega[b] if b >= 0 else 0.0) + P[k, :3, :z] @ qd
            # d/dt (R P_local) = Omega_k (R P_local) + R dP_local/dt; dP_local/dt from the universal joint only
            Pdot[k, :3, :z] = skew(omega[k]) @ P[k, :3, :z]
            Pdot[k, 3:, :z] = skew(omega[k]) @ P[k, 3:, :z]
            if model.joint_type[k] == JointType.UNIVERSAL:  # d/dt(Rot(a2, q1)^T a1) = (Rot^T a1) x a2 qd1
                Pdot[k, :3, 0] += R[k] @ (np.cross(Pl[:3, 0], model.joint_axis2[k]) * qd[1])
    return _Kinematics(R, o, P, Pdot)


def _A(o_k: np.ndarray, o_j: np.ndarray) -> np.ndarray:
    """Inertial-frame A_{k,j} = [[1, 0], [a~, 1]] with a = o_j - o_k (000 eq. 7b)."""
    A = np.eye(6)
    A[3:, :3] = skew(o_j - o_k)
    return A


def _Adot(odot_k: np.ndarray, odot_j: np.ndarray) -> np.ndarray:
    Ad = np.zeros((6, 6))
    Ad[3:, :3] = skew(odot_j - odot_k)
    return Ad


def _ancestors(model: Model, k: int) -> list[int]:
    """k and its ancestors, from k to the root."""
    out = []
    while k >= 0:
        out.append(int(k))
        k = model.parent[k]
    return out


def link_N(model: Model, kin: _Placed) -> np.ndarray:
    """Link-level NOC N (6L x nv): block (k, j) = A_{k,j} P_j for j an ancestor of k (003 eq. 8a)."""
    N = np.zeros((6 * model.n_links, model.nv))
    for k in range(model.n_links):
        for j in _ancestors(model, k):
            v0, z = model.idx_v[j], model.nv_joint[j]
            N[6 * k : 6 * k + 6, v0 : v0 + z] = _A(kin.o[k], kin.o[j]) @ kin.P[j, :, :z]
    return N


def denoc_matrices(model: Model, q: npt.ArrayLike, *, max_links: int = MAX_LINKS) -> tuple[np.ndarray, np.ndarray]:
    """The module-level DeNOC matrices ``(N_l, N_d)`` of 000 eqs. (9)-(10), inertial frame.

    ``N_l`` (6L x 6L) is block lower triangular in module blocks: identity
    blocks ``1^i`` on the diagonal and ``A^{j,i}`` (000 eq. 7a: only the column
    block of the last link ``eta^i`` is non-zero) for modules ``M_j`` in
    ``gamma_i``.  ``N_d`` (6L x nv) is block diagonal with the module-joint-rate
    propagation matrices ``N^i`` (000 eq. 7a).  ``t = N_l N_d qdot`` (eq. 9) and
    the GIM is ``N_d^T N_l^T M N_l N_d`` (eq. 13) with ``M`` from
    :func:`uncoupled_newton_euler`.  L is the number of links; models with more
    than ``max_links`` links are refused (dense 6L x 6L matrices).  The test oracle of
    the recursive algorithms; the matrices are of the tree (loop closures are not in them).

    Parameters
    ----------
    model : Model
        A tree (not a MimicModel: take ``model.tree`` and ``model.expand(q)``).
    q : (nq,) array
        One configuration; quaternions and (cos, sin) pairs are normalised.
    max_links : int
        The most links accepted (O(L^2) memory).

    Returns
    -------
    N_l : (6L, 6L) array
    N_d : (6L, nv) array

    Raises
    ------
    InputTypeError
        ``model`` is not a tree Model, ``q`` not real numbers, ``max_links`` not an integer.
    InputError
        More than ``max_links`` links, a negative ``max_links``, a wrong shape or a non-finite
        entry of ``q`` (naming it and its joint), a zero quaternion.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> gripper = db.load_robot("gripper")  # 000's gripper: 4 links in 3 modules
    >>> q, v = db.random_configuration(gripper, 0), np.ones(gripper.nv)
    >>> N_l, N_d = db.denoc_matrices(gripper, q)
    >>> N_l.shape, N_d.shape
    ((24, 24), (24, 4))
    >>> M = db.uncoupled_newton_euler(gripper, q).M
    >>> bool(np.allclose(N_d.T @ N_l.T @ M @ N_l @ N_d, db.mass_matrix(gripper, q)))  # 000 eq. (13)
    True
    >>> bool(np.allclose(N_l @ N_d @ v, db.uncoupled_newton_euler(gripper, q, v).t))  # eq. (9)
    True
    """
    _check_size(model, max_links, "denoc_matrices")
    q = _inputs.configuration(model, q)
    kin = world_kinematics(model, q)
    L = model.n_links
    N_l = np.eye(6 * L)
    N_d = np.zeros((6 * L, model.nv))
    for mod in model.modules:
        for k in mod.links:
            # N^i: intra-modular A_{k,l} P_l for links l of the same module up to k
            for l in mod.links:
                if l > k:
                    break
                v0, z = model.idx_v[l], model.nv_joint[l]
                N_d[6 * k : 6 * k + 6, v0 : v0 + z] = _A(kin.o[k], kin.o[l]) @ kin.P[l, :, :z]
        # A^{i,j} for every ancestor module j: column block of the last link of M_j
        j = mod.parent
        while j >= 0:
            last = model.modules[j].links[-1]
            for k in mod.links:
                N_l[6 * k : 6 * k + 6, 6 * last : 6 * last + 6] = _A(kin.o[k], kin.o[last])
            j = model.modules[j].parent
    return N_l, N_d


class NewtonEuler(NamedTuple):
    """Uncoupled Newton-Euler quantities of all links, inertial frame (000 eqs. 1-4).

    ``M``, ``Omega``, ``E`` are 6L x 6L block diagonal; ``t``, ``tdot``,
    ``w_ext``, ``w`` are 6L vectors with ``w = M tdot + Omega M E t - w_ext``
    (gravity enters through ``tdot``, 000 Table 1 note), so that
    ``tau = N_d^T N_l^T w`` (000 eq. 11) plus the armature term.
    """

    M: np.ndarray
    Omega: np.ndarray
    E: np.ndarray
    t: np.ndarray
    tdot: np.ndarray
    w_ext: np.ndarray
    w: np.ndarray
    N: np.ndarray
    Ndot: np.ndarray


def uncoupled_newton_euler(
    model: Model,
    q: npt.ArrayLike,
    v: npt.ArrayLike | None = None,
    a: npt.ArrayLike | None = None,
    f_ext: WrenchesLike | None = None,
    *,
    max_links: int = MAX_LINKS,
) -> NewtonEuler:
    """Explicit M, Omega, E, twists, twist rates and wrenches of 000 eqs. (1)-(4).

    ``t = N qdot`` and ``tdot = N qddot + Ndot qdot + [0; -g]`` (stacked) with
    ``N = N_l N_d`` and ``Ndot`` built element by element (``A_dot`` from the
    relative velocity of the link origins, ``P_dot = Omega P``).  Then
    ``tau = N_d^T N_l^T w`` (000 eq. 11) plus the armature term ``armature * a``.

    Parameters
    ----------
    model : Model
        A tree (not a MimicModel: take ``model.tree`` and ``model.expand(q, v, a)``).
    q : (nq,) array
        One configuration; quaternions and (cos, sin) pairs are normalised.
    v, a : (nv,) arrays, optional
        Joint velocity and acceleration; default zero.
    f_ext : None, (n_links, 6) array or {link or frame name: (6,)}, optional
        External wrenches as Pinocchio's ``fext`` (in the link frames).
    max_links : int
        The most links accepted (O(L^2) memory).

    Returns
    -------
    NewtonEuler
        The 6L x 6L matrices ``M``, ``Omega``, ``E``; the 6L vectors ``t``, ``tdot``,
        ``w_ext`` (in world coordinates), ``w``; the link-level ``N`` (6L x nv) and ``Ndot``.

    Raises
    ------
    InputTypeError
        ``model`` is not a tree Model, an argument not real numbers, ``max_links`` not an
        integer.
    InputError
        More than ``max_links`` links, a negative ``max_links``, wrong shapes, non-finite
        entries (naming them and their joint), a zero quaternion, an unknown name in
        ``f_ext``.

    Examples
    --------
    >>> import numpy as np
    >>> import denoc_bridge as db
    >>> gripper = db.load_robot("gripper")
    >>> q, v, a = db.random_configuration(gripper, 0), np.ones(gripper.nv), np.zeros(gripper.nv)
    >>> ne = db.uncoupled_newton_euler(gripper, q, v, a)
    >>> N_l, N_d = db.denoc_matrices(gripper, q)
    >>> bool(np.allclose(N_d.T @ N_l.T @ ne.w, db.inverse_dynamics(gripper, q, v, a)))  # 000 eq. (11)
    True
    """
    _check_size(model, max_links, "uncoupled_newton_euler")
    q = _inputs.configuration(model, q)
    v = np.zeros(model.nv) if v is None else _inputs.vector(model, v, "v", "v")
    a = np.zeros(model.nv) if a is None else _inputs.vector(model, a, "a", "v")
    fext_local = _inputs.external_wrenches(model, f_ext)
    kin = world_kinematics(model, q, v)
    L = model.n_links
    N = link_N(model, kin)
    t = N @ v
    odot = t.reshape(L, 6)[:, 3:] if L else np.zeros((0, 3))
    Ndot = np.zeros_like(N)
    for k in range(L):
        for j in _ancestors(model, k):
            v0, z = model.idx_v[j], model.nv_joint[j]
            Ndot[6 * k : 6 * k + 6, v0 : v0 + z] = (
                _Adot(odot[k], odot[j]) @ kin.P[j, :, :z] + _A(kin.o[k], kin.o[j]) @ kin.Pdot[j, :, :z]
            )
    gravity_rate = np.tile(np.concatenate([np.zeros(3), -np.asarray(model.gravity)]), L)
    tdot = N @ a + Ndot @ v + gravity_rate
    M = np.zeros((6 * L, 6 * L))
    Omega = np.zeros((6 * L, 6 * L))
    E = np.zeros((6 * L, 6 * L))
    w_ext = np.zeros(6 * L)
    for k in range(L):
        Rk = np.zeros((6, 6))
        Rk[:3, :3] = Rk[3:, 3:] = kin.R[k]
        s = slice(6 * k, 6 * k + 6)
        M[s, s] = Rk @ model.link_mass_matrix[k] @ Rk.T  # 000 eq. (2b) in world coordinates
        Omega[s, s][:3, :3] = skew(t[6 * k : 6 * k + 3])
        Omega[s, s][3:, 3:] = skew(t[6 * k : 6 * k + 3])
        E[s, s][:3, :3] = np.eye(3)
        w_ext[s] = Rk @ fext_local[k]
    w = M @ tdot + Omega @ M @ E @ t - w_ext
    return NewtonEuler(M, Omega, E, t, tdot, w_ext, w, N, Ndot)


def reference_mass_matrix(model: Model, q: npt.ArrayLike) -> np.ndarray:
    """``I = N_d^T N_l^T M N_l N_d`` (000 eq. 13) plus the armature."""
    _check_model(model)
    N_l, N_d = denoc_matrices(model, q)
    M = uncoupled_newton_euler(model, q).M
    return N_d.T @ N_l.T @ M @ N_l @ N_d + np.diag(model.armature)


def reference_inverse_dynamics(
    model: Model, q: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike, f_ext: WrenchesLike | None = None
) -> np.ndarray:
    """``tau = N_d^T N_l^T w`` (000 eqs. 11-13) plus the armature term."""
    _check_model(model)
    N_l, N_d = denoc_matrices(model, q)
    ne = uncoupled_newton_euler(model, q, v, a, f_ext)
    return N_d.T @ N_l.T @ ne.w + np.asarray(model.armature) * _inputs.vector(model, a, "a", "v")


# ------------------------------------------------------------------ module-level factors
class _ModuleBlocks(NamedTuple):
    M: list[np.ndarray]  # M^i (6 eta x 6 eta), world frame
    N: list[np.ndarray]  # N^i (6 eta x nv^i)
    A: dict[tuple[int, int], np.ndarray]  # A^{j,i} (6 eta_j x 6 eta_i) for i an ancestor module of j
    Psi: list[np.ndarray]  # Psi^i
    Ihat: list[np.ndarray]  # Ihat^i
    Phi: list[np.ndarray]  # Phi^i


def _module_blocks(model: Model, q: npt.ArrayLike) -> _ModuleBlocks:
    """M^i, N^i, A^{j,i} and the articulated-module quantities of 000 eqs. (19)-(21)."""
    q = _inputs.configuration(model, q)
    N_l, N_d = denoc_matrices(model, q)
    Mall = uncoupled_newton_euler(model, q).M
    mods = model.modules

    def rows(i: int) -> slice:
        r = mods[i].links
        return slice(6 * r.start, 6 * r.stop)

    Mi = [Mall[rows(i), rows(i)] for i in range(len(mods))]
    Ni = [N_d[rows(i), mods[i].v_slice] for i in range(len(mods))]
    A: dict[tuple[int, int], np.ndarray] = {}
    for j in range(len(mods)):
        i = mods[j].parent
        while i >= 0:
            A[(j, i)] = N_l[rows(j), rows(i)]
            i = mods[i].parent
    Mhat = [m.copy() for m in Mi]
    # every entry is set below, leaves first
    Psi: list[np.ndarray] = [np.empty(0)] * len(mods)
    Ihat: list[np.ndarray] = [np.empty(0)] * len(mods)
    Phi: list[np.ndarray] = [np.empty(0)] * len(mods)
    for i in reversed(range(len(mods))):  # i = s, ..., 1
        arm = np.diag(np.asarray(model.armature)[mods[i].v_slice])
        PsiHat = Mhat[i] @ Ni[i]  # 000 eq. (19)
        Ihat[i] = Ni[i].T @ PsiHat + arm  # eq. (19)
        Psi[i] = np.linalg.solve(Ihat[i], PsiHat.T).T  # eq. (19)
        Phi[i] = np.eye(Mhat[i].shape[0]) - Psi[i] @ Ni[i].T  # eq. (21)
        b = mods[i].parent
        if b >= 0:
            Mhat[b] = Mhat[b] + A[(i, b)].T @ Phi[i] @ Mhat[i] @ A[(i, b)]  # eq. (20)
    return _ModuleBlocks(Mi, Ni, A, Psi, Ihat, Phi)


def module_factors(model: Model, q: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Module-level ``(Ubar, Dbar)`` with I = Ubar Dbar Ubar^T, from the block formulas.

    ``Ubar_{i,j} = N^{iT} (A^{j,i})^T Psi^j`` for ``M_j`` in ``gamma_i`` and
    ``Dbar_i = Ihat^i = N^{iT} Mhat^i N^i`` (000 eqs. 18-21; 002 eq. A.20).
    """
    _check_model(model)
    blk = _module_blocks(model, q)
    mods = model.modules
    U = np.eye(model.nv)
    D = np.zeros((model.nv, model.nv))
    for i, mi in enumerate(mods):
        D[mi.v_slice, mi.v_slice] = blk.Ihat[i]
    for (j, i), Aji in blk.A.items():
        U[mods[i].v_slice, mods[j].v_slice] = blk.N[i].T @ Aji.T @ blk.Psi[j]
    return U, D


def module_factors_inverse(model: Model, q: npt.ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """``(Ubar^-1, Dbar^-1)`` by the recursive block inverse of 002 eqs. (A.13)-(A.18).

    ``Uhat_{i,j} = -N^{iT} Ahat_{j,i}^T Psi^j`` with
    ``Ahat_{j,i} = A^{j,beta} Phi^{beta T} Ahat_{beta,i}`` (``beta`` the parent of
    ``M_j``; ``Ahat_{j,i} = A^{j,i}`` for a child module).  ``Dbar^-1`` inverts
    each (small) module block.
    """
    _check_model(model)
    blk = _module_blocks(model, q)
    mods = model.modules
    Uinv = np.eye(model.nv)
    Dinv = np.zeros((model.nv, model.nv))
    Ahat: dict[tuple[int, int], np.ndarray] = {}
    for j, mj in enumerate(mods):
        Dinv[mj.v_slice, mj.v_slice] = np.linalg.inv(blk.Ihat[j])
        beta = mj.parent
        i = beta
        while i >= 0:
            if i == beta:
                Ahat[(j, i)] = blk.A[(j, i)]
            else:
                Ahat[(j, i)] = blk.A[(j, beta)] @ blk.Phi[beta].T @ Ahat[(beta, i)]  # 002 eq. (A.18)
            Uinv[mods[i].v_slice, mj.v_slice] = -blk.N[i].T @ Ahat[(j, i)].T @ blk.Psi[j]  # (A.17)
            i = mods[i].parent
    return Uinv, Dinv


def reference_inverse_mass_matrix(model: Model, q: npt.ArrayLike) -> np.ndarray:
    """``I^-1 = Ubar^-T Dbar^-1 Ubar^-1`` from :func:`module_factors_inverse` (002 eq. A.22)."""
    _check_model(model)
    Uinv, Dinv = module_factors_inverse(model, q)
    return Uinv.T @ Dinv @ Uinv


def reference_forward_dynamics(
    model: Model, q: npt.ArrayLike, v: npt.ArrayLike, tau: npt.ArrayLike, f_ext: WrenchesLike | None = None
) -> np.ndarray:
    """Solve ``Ubar Dbar Ubar^T qdd = phi`` by the three block steps of 000 eq. (23)."""
    _check_model(model)
    phi = _inputs.vector(model, tau, "tau", "v") - reference_inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext)
    U, D = module_factors(model, q)
    phihat = np.linalg.solve(U, phi)  # 1) U phihat = phi
    phitilde = np.linalg.solve(D, phihat)  # 2) D phitilde = phihat
    return np.linalg.solve(U.T, phitilde)  # 3) U^T qdd = phitilde
