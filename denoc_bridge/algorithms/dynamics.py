"""Recursive DeNOC dynamics on the module graph (the public, validated API).

Every function takes the model and Pinocchio-layout vectors, validates them
(:mod:`._inputs`), runs the compiled recursions of :mod:`denoc_bridge.kernels`
and returns new arrays.  An optional :class:`~denoc_bridge.data.Data` avoids
re-allocating work buffers between calls.
"""

from __future__ import annotations

import numpy as np

from ..data import Data
from ..errors import InputError, SingularInertiaError
from ..kernels import forward_dynamics as kfd
from ..kernels import inverse_dynamics as kid
from ..kernels import inverse_mass as kim
from ..kernels import joints as kj
from ..kernels import mass_matrix as kmm
from . import _inputs

__all__ = [
    "inverse_dynamics",
    "nonlinear_effects",
    "gravity_torques",
    "mass_matrix",
    "forward_dynamics",
    "udut",
    "inverse_udut",
    "inverse_mass_matrix",
]


def _data(model, data) -> Data:
    return Data(model) if data is None else data.check(model)


def _joint_kinematics(model, q, data: Data) -> None:
    """A_{k,b} (as E_k, r_k) and P_k of every link at configuration q."""
    kj.joint_kinematics_pass(
        model.joint_type, model.joint_axis, model.joint_axis2, model.joint_rotation, model.joint_translation,
        model.idx_q, model.nq_joint, model.idx_v, model.nv_joint, q,
        data.E, data.r, data.P, data.RJ, data.pJ, data.tmpR,
    )


def _newton_euler(model, v, a, fext, data: Data, gravity) -> np.ndarray:
    """The two passes of 000 Table 1 (joint kinematics already in ``data``)."""
    kid.twist_forward_recursion(
        model.module_start, model.module_end, model.parent, model.joint_type, model.joint_axis,
        model.joint_axis2, data.E, data.r, data.P, model.idx_v, model.nv_joint, model.link_mass_matrix,
        v, a, gravity, fext, data.t, data.tdot, data.w,
    )
    tau = np.empty(model.nv)
    kid.wrench_backward_recursion(
        model.module_start, model.module_end, model.parent, data.E, data.r, data.P, model.idx_v,
        model.nv_joint, model.armature, a, data.w, tau,
    )
    return tau


def inverse_dynamics(model, q, v, a, f_ext=None, *, data: Data | None = None) -> np.ndarray:
    """Joint torques/forces ``tau`` that produce the accelerations ``a`` at state (q, v).

    Recursive DeNOC inverse dynamics (000 Table 1, eqs. 5-13): a forward
    recursion of twists, twist rates and link wrenches over the modules
    M_1..M_s and their links, then a backward recursion ``tau = N_d^T N_l^T w``.
    Gravity (``model.gravity``) is included; ``tau`` equals ``pin.rnea``.

    Parameters
    ----------
    q : (nq,) configuration, v : (nv,) velocity, a : (nv,) acceleration
        Pinocchio's layout.  Quaternions and (cos, sin) pairs are normalised.
    f_ext : None, (n_links, 6) array or {link name: (6,)}
        External wrench applied to each link, as Pinocchio's ``fext``:
        [force; moment], in the link frame, moment about the link origin.
    """
    q = _inputs.configuration(model, q)
    v = _inputs.vector(model, v, "v", "v")
    a = _inputs.vector(model, a, "a", "v")
    fext = _inputs.external_wrenches(model, f_ext)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    return _newton_euler(model, v, a, fext, data, np.asarray(model.gravity))


def nonlinear_effects(model, q, v, f_ext=None, *, data: Data | None = None) -> np.ndarray:
    """``C(q, v) v + g(q) - J^T f_ext``: inverse dynamics with zero acceleration (``pin.nonLinearEffects``)."""
    return inverse_dynamics(model, q, v, np.zeros(model.nv), f_ext, data=data)


def gravity_torques(model, q, *, data: Data | None = None) -> np.ndarray:
    """Generalized gravity ``g(q)`` (``pin.computeGeneralizedGravity``)."""
    return inverse_dynamics(model, q, np.zeros(model.nv), np.zeros(model.nv), data=data)


def mass_matrix(model, q, *, data: Data | None = None) -> np.ndarray:
    """The full symmetric generalized inertia matrix (GIM) ``I(q)`` (nv x nv).

    Composite module masses ``Mtilde^i = M^i + sum_j (A^{j,i})^T Mtilde^j A^{j,i}``
    (000 eq. 17) and the GIM blocks ``N^{jT} Mtilde^j A^{j,i} N^i`` (000 eq. 16;
    element-wise 003 eq. 29).  Includes ``model.armature`` on the diagonal, as
    ``pin.crba`` does.
    """
    q = _inputs.configuration(model, q)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    kmm.composite_module_masses(
        model.module_start, model.module_end, model.parent, data.E, data.r, model.link_mass_matrix, data.Mhat
    )
    I = np.zeros((model.nv, model.nv))
    kmm.gim_elements(model.parent, data.E, data.r, data.P, model.idx_v, model.nv_joint, data.Mhat,
                     model.armature, I)
    return I


def _articulated(model, data: Data) -> None:
    """Articulated module masses and the factors Psi, Ihat^-1 (000 eqs. 19-21); raises if singular."""
    k = kfd.articulated_module_masses(
        model.module_start, model.module_end, model.parent, data.E, data.r, data.P, model.idx_v,
        model.nv_joint, model.link_mass_matrix, model.armature, data.Mhat, data.PsiHat, data.Psi, data.Ihat, data.IhatInv,
    )
    if k >= 0:
        raise SingularInertiaError(
            f"the articulated inertia of joint {model.joint_label(k)} is singular: the links it moves "
            f"(link '{model.link_names[k]}' and its subtree) offer no inertia to its motion, e.g. a massless "
            "leaf link, or a massless link whose child joint is a free-flyer; forward dynamics and the "
            "inverse GIM are undefined",
            joint=model.joint_names[k],
            link=model.link_names[k],
        )


def forward_dynamics(model, q, v, tau, f_ext=None, *, data: Data | None = None) -> np.ndarray:
    """Joint accelerations ``a`` produced by ``tau`` at state (q, v): O(n), equals ``pin.aba``.

    ``phi = tau - (C v + g - J^T f_ext)`` comes from inverse dynamics with zero
    acceleration (000 Table 3, note 1); ``I a = phi`` is then solved by block
    reverse Gaussian elimination with the articulated module masses
    (000 eqs. 18-23, Table 3; 001 eqs. A.1-A.8 for multi-DOF joints): the
    backward substitutions ``U phihat = phi``, ``D phitilde = phihat`` and the
    forward substitution ``U^T a = phitilde``.  No matrix is formed.

    Raises :class:`~denoc_bridge.errors.SingularInertiaError` naming the joint
    when an articulated inertia is singular.
    """
    q = _inputs.configuration(model, q)
    v = _inputs.vector(model, v, "v", "v")
    tau = _inputs.vector(model, tau, "tau", "v")
    fext = _inputs.external_wrenches(model, f_ext)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    data.phi[:] = tau - _newton_euler(model, v, data.zeros_nv, fext, data, np.asarray(model.gravity))
    _articulated(model, data)
    ms, me, par = model.module_start, model.module_end, model.parent
    kfd.brge_backward_substitution(ms, me, par, data.E, data.r, data.P, model.idx_v, model.nv_joint,
                                   data.Psi, data.IhatInv, data.phi, data.eta, data.phihat, data.phitilde)
    a = np.empty(model.nv)
    kfd.brge_forward_substitution(ms, me, par, data.E, data.r, data.P, model.idx_v, model.nv_joint,
                                  data.Psi, data.phitilde, data.mu, a)
    return a


def _factorized(model, q, level: str, data: Data | None) -> Data:
    """Validated inputs, joint kinematics and articulated factors, for udut and inverse_udut."""
    if level not in ("module", "link"):
        raise InputError(f"level must be 'module' or 'link', got {level!r}")
    q = _inputs.configuration(model, q)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    _articulated(model, data)
    return data


def _link_factors(model, data: Data):
    """Link-level U (unit upper, 001 eq. A.4) and D = diag(Ihat_k) (001 eq. A.3)."""
    U = np.empty((model.nv, model.nv))
    kim.unit_upper_factor(model.parent, data.E, data.r, data.P, model.idx_v, model.nv_joint, data.Psi, U)
    D = np.zeros((model.nv, model.nv))
    for v0, z in zip(model.idx_v, model.nv_joint):
        D[v0:v0 + z, v0:v0 + z] = data.Ihat[v0:v0 + z, :z]
    return U, D


def _inverse_U(model, data: Data):
    """W = U^-1 by the recursive block inverse (002 eqs. A.13-A.18), and the module accumulators."""
    W = np.empty((model.nv, model.nv))
    acc = np.empty((model.n_modules, 6, model.nv))
    kim.inverse_unit_upper_factor(
        model.module_start, model.module_end, model.module_parent, model.parent, data.E, data.r, data.P,
        model.idx_v, model.nv_joint, model.nv_subtree, data.Psi, W, acc,
    )
    return W, acc


def udut(model, q, *, level: str = "module", data: Data | None = None):
    """Block factors ``(U, D)`` of the GIM, ``I = U D U^T``, as dense arrays.

    ``level="module"`` (default) gives the module-level factors of 002
    (``Ubar`` unit block upper triangular, ``Dbar`` block diagonal with one
    block per kinematic module, as printed in 002 eq. A.20).  ``level="link"``
    gives the link-level factors of 001 eq. (A.3): U_{k,j} = P_k^T A_{j,k}^T Psi_j
    and D = diag(Ihat_k), scalar blocks for one-DOF joints (Pinocchio's
    ``pin.cholesky.decompose`` computes the same U and D for such chains).

    The module-level factors are assembled from the link-level ones without any
    numerical inversion: ``Dbar_i = U_ii D_i U_ii^T`` and ``Ubar = U blockdiag(U_ii^-1)``
    where ``U_ii^-1`` comes from the recursive inverse of 002 eqs. A.13-A.18.
    """
    data = _factorized(model, q, level, data)
    U, D = _link_factors(model, data)
    if level == "link":
        return U, D
    W, _ = _inverse_U(model, data)
    Ubar = U.copy()
    Dbar = np.zeros_like(D)
    for mod in model.modules:
        s = mod.v_slice
        Uii = U[s, s]
        Dbar[s, s] = Uii @ D[s, s] @ Uii.T
        Ubar[:, s] = U[:, s] @ W[s, s]
    return Ubar, 0.5 * (Dbar + Dbar.T)


def inverse_udut(model, q, *, level: str = "module", data: Data | None = None):
    """``(U^-1, D^-1)``: the inverses of the factors of :func:`udut` (002 eq. A.21).

    ``U^-1`` comes from the recursive block inverse of 002 eqs. A.13-A.18 and
    ``D^-1`` from the inverted articulated inertias ``Ihat_k^-1``; at module
    level ``Ubar^-1 = blockdiag(U_ii) U^-1`` and ``Dbar_i^-1 = U_ii^-T D_i^-1 U_ii^-1``.
    ``I^-1 = U^-T D^-1 U^-1`` (002 eq. A.22).
    """
    data = _factorized(model, q, level, data)
    W, _ = _inverse_U(model, data)
    Dinv = np.zeros((model.nv, model.nv))
    for v0, z in zip(model.idx_v, model.nv_joint):
        Dinv[v0:v0 + z, v0:v0 + z] = data.IhatInv[v0:v0 + z, :z]
    if level == "link":
        return W, Dinv
    U, _ = _link_factors(model, data)
    Ubar_inv = W.copy()
    Dbar_inv = np.zeros_like(Dinv)
    for mod in model.modules:
        s = mod.v_slice
        Ubar_inv[s, :] = U[s, s] @ W[s, :]
        Dbar_inv[s, s] = W[s, s].T @ Dinv[s, s] @ W[s, s]
    return Ubar_inv, 0.5 * (Dbar_inv + Dbar_inv.T)


def inverse_mass_matrix(model, q, *, data: Data | None = None) -> np.ndarray:
    """The inverse GIM ``I^-1 = U^-T D^-1 U^-1`` (002 eqs. A.13-A.22), full and symmetric.

    ``U^-1`` is built by the recursive block inverse of 002 (eqs. A.13-A.18)
    and ``D^-1`` from the inverted articulated inertias ``Ihat_k^-1`` (one z_k x z_k
    block per joint); ``I`` itself is never formed nor inverted.  O(n^2);
    equals ``pin.computeMinverse``.
    """
    q = _inputs.configuration(model, q)
    data = _data(model, data)
    _joint_kinematics(model, q, data)
    _articulated(model, data)
    W, acc = _inverse_U(model, data)
    Minv = np.empty((model.nv, model.nv))
    kim.inverse_from_factors(
        model.module_start, model.module_end, model.module_parent, model.parent, data.E, data.r, data.P,
        model.idx_v, model.nv_joint, data.Psi, data.IhatInv, W, acc, Minv,
    )
    return Minv
