"""Closed kinematic loops: cut joints, their constraints, and the constrained dynamics.

A loop is cut at one joint (004 §2.3, Fig. 3): the model stays a tree (the *reduced
system*) and each cut joint becomes a :class:`LoopClosure` between two links, with the
joint's frame given on each side (they coincide when the loop is closed).  Cut-joint types
and the constraint rows they contribute, all in world coordinates (x_i = origin of the
joint frame on link i, n = joint axis, b_1, b_2 = two unit vectors normal to it, all
carried by link 1):

==============  ====  ==============================================================
type            rows  constraint (position level; the velocity rows are its derivative)
==============  ====  ==============================================================
``weld``        6     x_2 - x_1 = 0,  rotation of frame 2 relative to frame 1 = 0
``spherical``   3     x_2 - x_1 = 0
``revolute``    5     x_2 - x_1 = 0,  b_j . (relative rotation) = 0 (axes stay parallel)
``prismatic``   5     b_j . (x_2 - x_1) = 0,  relative rotation = 0
==============  ====  ==============================================================

The velocity rows are ``C qdot = D* N qdot = 0`` (004 eqs. 12 and 15, with the DeNOC ``N`` as
004's ``B``: :func:`cut_joint_jacobian` gives ``D*``, :func:`loop_jacobian` ``C``), and the
acceleration rows ``C qddot + Cdot qdot = 0`` (004 eq. 13, :func:`loop_bias` gives
``Cdot qdot``).  As 004 notes, ``D* N`` may carry redundant rows (a planar loop closed by a
revolute joint: 5 rows, rank 2); :func:`independent_rows` finds them by a QR factorisation
with column pivoting.

Dynamics (004 eq. 14): ``M qddot - C^T lambda = f`` with ``f = tau - C(q, v) v - g(q)``.
:func:`constrained_forward_dynamics` solves it two ways:

* ``method="lagrange"``: ``qddot = a0 + M^-1 C^T lambda`` with ``a0`` the open-tree forward
  dynamics (O(n)) and ``M^-1 C^T`` from the same O(n) block reverse Gaussian elimination, one
  right-hand side per constraint row (no dense M); ``lambda`` from the small system
  ``(C M^-1 C^T) lambda = -Cdot qdot - C a0``.
* ``method="partitioning"``: independent coordinates ``q_i`` (pivoted QR of C), the
  velocity transformation ``E = [1; -C_d^-1 C_i]`` (004 eq. 23), ``Edot qdot_i`` without
  differentiating E (eq. 25), the minimal equations ``E^T M E qddot_i = E^T (f - M Edot
  qdot_i)`` (eqs. 19-21).
"""

from __future__ import annotations

import numpy as np
import scipy.linalg

from denoc_bridge.algorithms.configuration import integrate
from denoc_bridge.algorithms.dynamics import (
    singular_error,
    tree_forward_dynamics,
    tree_inverse_dynamics,
    tree_mass_matrix,
    tree_nonlinear_effects,
)
from denoc_bridge.algorithms.reference import link_N, world_kinematics
from denoc_bridge.errors import InputError
from denoc_bridge.kernels import loops as _kl
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import LOOP_TYPES, LoopClosure, body_name, make_loop_closure
from denoc_bridge.spatial import skew

__all__ = [
    "LoopClosure",
    "LOOP_TYPES",
    "body_name",
    "make_loop_closure",
    "loop_kinematics",
    "loop_residual",
    "loop_jacobian",
    "loop_bias",
    "cut_joint_jacobian",
    "independent_rows",
    "constraint_report",
    "constrained_forward_dynamics",
    "constraint_forces",
    "partition",
    "velocity_transformation",
    "project_configuration",
    "project_velocity",
    "closed_chain_inverse_dynamics",
]

RANK_RTOL = 1e-9  # relative to the largest singular value


# ----------------------------------------------------------------------------- kinematics


class LoopKinematics:
    """World-frame kinematics of every link at (q, v), computed once (O(n)) and shared by the
    residual, the Jacobian and the bias: orientation R, origin o, joint-motion P (6 x z,
    [omega; v] at o), and with v: omega, odot, and the rates at qddot = 0 without gravity
    (omegadot0, oddot0) -- the classical accelerations of 000's twist rates."""

    def __init__(self, model, q, v=None):

        kin = world_kinematics(model, q, v)
        self.model, self.R, self.o, self.P, self.Pdot = model, kin.R, kin.o, kin.P, kin.Pdot
        L = model.n_links
        self.omega = np.zeros((L, 3))
        self.odot = np.zeros((L, 3))
        self.omegadot0 = np.zeros((L, 3))
        self.oddot0 = np.zeros((L, 3))
        if v is None:
            return
        for k in range(L):
            b = model.parent[k]
            v0, z = model.idx_v[k], model.nv_joint[k]
            qd = v[v0 : v0 + z]
            wb, ob, odb, wdb, oddb = (
                (np.zeros(3),) * 5
                if b < 0
                else (self.omega[b], self.o[b], self.odot[b], self.omegadot0[b], self.oddot0[b])
            )
            d = self.o[k] - ob
            self.omega[k] = wb + self.P[k, :3, :z] @ qd
            self.odot[k] = odb + np.cross(wb, d) + self.P[k, 3:, :z] @ qd
            self.omegadot0[k] = wdb + self.Pdot[k, :3, :z] @ qd
            self.oddot0[k] = oddb + np.cross(wdb, d) + np.cross(wb, self.odot[k] - odb) + self.Pdot[k, 3:, :z] @ qd

    def frame(self, link, R, p):
        """World orientation and origin of a frame (R, p) on ``link``."""
        if link < 0:
            return R, p
        return self.R[link] @ R, self.o[link] + self.R[link] @ p

    def point_jacobian(self, link, x):
        """(J_omega, J_x): 3 x nv each, angular velocity of ``link`` and velocity of the world
        point x moving with it; the columns of N = N_l N_d (000 eq. 9) for that body."""
        nv = self.model.nv
        Jw, Jx = np.zeros((3, nv)), np.zeros((3, nv))
        k = link
        while k >= 0:
            v0, z = self.model.idx_v[k], self.model.nv_joint[k]
            Pw, Pv = self.P[k, :3, :z], self.P[k, 3:, :z]
            Jw[:, v0 : v0 + z] = Pw
            Jx[:, v0 : v0 + z] = Pv + skew(self.o[k] - x) @ Pw  # A_{x,k} P_k (000 eq. 7b)
            k = self.model.parent[k]
        return Jw, Jx

    def point_motion(self, link, x):
        """(omega, xdot, omegadot0, xddot0) of the point x on ``link`` (zeros for the base)."""
        if link < 0:
            return (np.zeros(3),) * 4
        s = x - self.o[link]
        w, wd = self.omega[link], self.omegadot0[link]
        return (
            w,
            self.odot[link] + np.cross(w, s),
            wd,
            self.oddot0[link] + np.cross(wd, s) + np.cross(w, np.cross(w, s)),
        )


def _log3(R) -> np.ndarray:
    """The rotation vector of R (so(3) logarithm), robust near 0 and pi."""
    c = np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0)
    th = np.arccos(c)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if th < 1e-6:
        return 0.5 * w * (1.0 + th * th / 6.0)
    if np.pi - th < 1e-6:
        B = 0.5 * (R + np.eye(3))
        k = int(np.argmax(np.diag(B)))
        u = B[:, k] / np.sqrt(max(B[k, k], 1e-300))
        return th * u
    return th / (2.0 * np.sin(th)) * w


def _loop_rows(lc: LoopClosure, kin: LoopKinematics, with_bias: bool):
    """(phi, C, gamma) of one cut joint: position error, Jacobian rows, Cdot qdot."""
    RF1, x1 = kin.frame(lc.link1, lc.rotation1, lc.translation1)
    RF2, x2 = kin.frame(lc.link2, lc.rotation2, lc.translation2)
    nv = kin.model.nv
    Jw1, Jx1 = kin.point_jacobian(lc.link1, x1) if lc.link1 >= 0 else (np.zeros((3, nv)),) * 2
    Jw2, Jx2 = kin.point_jacobian(lc.link2, x2) if lc.link2 >= 0 else (np.zeros((3, nv)),) * 2
    rot = RF1 @ _log3(RF1.T @ RF2)  # rotation of frame 2 from frame 1, world
    d = x2 - x1
    Jd, Jw = Jx2 - Jx1, Jw2 - Jw1
    if with_bias:
        w1, xd1, wd1, xdd1 = kin.point_motion(lc.link1, x1)
        w2, xd2, wd2, xdd2 = kin.point_motion(lc.link2, x2)
        dd0, wrel, wdrel0, ddot = xdd2 - xdd1, w2 - w1, wd2 - wd1, xd2 - xd1
    phi, C, gamma = [], [], []
    if lc.type in ("weld", "spherical", "revolute"):  # x_2 - x_1 = 0
        phi.append(d)
        C.append(Jd)
        if with_bias:
            gamma.append(dd0)
    if lc.type in ("weld", "prismatic"):  # no relative rotation
        phi.append(rot)
        C.append(Jw)
        if with_bias:
            gamma.append(wdrel0)
    if lc.type in ("revolute", "prismatic"):  # b_j . (...) with b_j on link 1
        B = (RF1 @ lc.normals().T).T  # (2, 3), world
        if lc.type == "revolute":
            phi.append(lc.normals() @ _log3(RF1.T @ RF2))
            C.append(B @ Jw)
            if with_bias:  # d/dt (b . wrel), bdot = w1 x b
                gamma.append(np.array([np.dot(np.cross(w1, b), wrel) + np.dot(b, wdrel0) for b in B]))
        else:
            phi.append(B @ d)
            C.append(B @ Jd + np.array([np.cross(b, d) for b in B]) @ Jw1)  # + (w1 x b) . d
            if with_bias:
                bdd = [np.cross(wd1, b) + np.cross(w1, np.cross(w1, b)) for b in B]
                gamma.append(
                    np.array(
                        [2.0 * np.dot(np.cross(w1, b), ddot) + np.dot(b, dd0) + np.dot(bb, d) for b, bb in zip(B, bdd)]
                    )
                )
    return (np.concatenate(phi), np.vstack(C), np.concatenate(gamma) if with_bias else None)


def _all_rows(model, q, v=None, with_bias=False):

    if not model.loops:
        raise InputError(f"'{model.name}' has no loop closures (declare one with model.add_loop_closure)")
    q = inp.configuration(model, q)
    if v is not None:
        v = inp.vector(model, v, "v", "v")
    kin = LoopKinematics(model, q, v)
    rows = [_loop_rows(lc, kin, with_bias) for lc in model.loops]
    phi = np.concatenate([r[0] for r in rows])
    C = np.vstack([r[1] for r in rows])
    gamma = np.concatenate([r[2] for r in rows]) if with_bias else None
    return phi, C, gamma


def loop_kinematics(model, q, v):
    """``(phi, C, Cdot qdot)`` of all cut joints, stacked in declaration order (all rows,
    redundant ones included): position errors (m,), Jacobian ``C = D* N`` (m x nv; 004 eq.
    15) and the bias of the acceleration constraint ``C qddot + Cdot qdot = 0`` (004 eq. 13)."""
    _check_model(model)
    return _all_rows(model, q, v, True)


def loop_residual(model, q) -> np.ndarray:
    """The position errors of the cut joints (m,): metres for the point rows, radians for the
    rotation rows (see the module docstring for the rows of each type)."""
    _check_model(model)
    return _all_rows(model, q)[0]


def loop_jacobian(model, q) -> np.ndarray:
    """``C = D* N`` (004 eq. 15), all rows (m x nv)."""
    _check_model(model)
    return _all_rows(model, q)[1]


def loop_bias(model, q, v) -> np.ndarray:
    """``Cdot qdot`` (004 eq. 13), all rows (m,)."""
    _check_model(model)
    return _all_rows(model, q, v, True)[2]


def cut_joint_jacobian(model, q) -> tuple:
    """``(D*, N)`` of 004 eq. 15: ``D*`` (m x 6L) acts on the stacked world twists
    ``t = [omega_k; odot_k]`` of the links (000 eq. 9) and ``N`` is the DeNOC matrix
    (6L x nv, :func:`denoc_bridge.denoc_matrices`: ``N = N_l N_d``), so that
    ``D* N = C`` (:func:`loop_jacobian`).  Dense: for small systems."""
    _check_model(model)

    kin = LoopKinematics(model, q)
    L = model.n_links
    blocks = []
    for lc in model.loops:
        RF1, x1 = kin.frame(lc.link1, lc.rotation1, lc.translation1)
        RF2, x2 = kin.frame(lc.link2, lc.rotation2, lc.translation2)
        D = np.zeros((lc.n_rows, 6 * L))
        B = (RF1 @ lc.normals().T).T
        for link, x, sign in ((lc.link1, x1, -1.0), (lc.link2, x2, 1.0)):
            if link < 0:
                continue
            s = slice(6 * link, 6 * link + 6)
            Tx = np.hstack([skew(kin.o[link] - x), np.eye(3)])  # xdot = odot + omega x (x - o)
            Tw = np.hstack([np.eye(3), np.zeros((3, 3))])
            rows = []
            if lc.type in ("weld", "spherical", "revolute"):
                rows.append(Tx)
            if lc.type in ("weld", "prismatic"):
                rows.append(Tw)
            if lc.type == "revolute":
                rows.append(B @ Tw)
            if lc.type == "prismatic":
                extra = np.array([np.cross(b, x2 - x1) for b in B]) @ Tw if link == lc.link1 else 0.0
                rows.append(B @ Tx - sign * extra)
            D[:, s] += sign * np.vstack(rows)
        blocks.append(D)
    return np.vstack(blocks), link_N(model, kin)


def independent_rows(C, rtol: float = RANK_RTOL) -> np.ndarray:
    """Indices of a maximal set of independent rows of C (QR with column pivoting of C^T),
    in increasing order; the others are redundant (004 §2.3)."""
    C = np.asarray(C, dtype=float)
    if C.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    _, Rf, piv = scipy.linalg.qr(C.T, mode="economic", pivoting=True)
    d = np.abs(np.diag(Rf))
    scale = d[0] if d.size and d[0] > 0 else 1.0
    rank = int(np.sum(d > rtol * max(scale, 1e-300))) if d[0] > 0 else 0
    return np.sort(piv[:rank])


def constraint_report(model, q) -> list:
    """One dict per cut joint: name, type, the two links, rows, rank, redundant rows (their
    positions within the joint's rows) and the position error at q."""
    _check_model(model)
    phi, C, _ = _all_rows(model, q)
    keep = set(independent_rows(C).tolist())
    out, r0 = [], 0
    for lc in model.loops:
        rows = range(r0, r0 + lc.n_rows)
        out.append(
            dict(
                name=lc.name,
                type=lc.type,
                link1=body_name(model, lc.link1),
                link2=body_name(model, lc.link2),
                rows=lc.n_rows,
                rank=int(independent_rows(C[rows.start : rows.stop]).size),
                redundant=[k - r0 for k in rows if k not in keep],
                error=float(np.abs(phi[rows.start : rows.stop]).max()),
            )
        )
        r0 += lc.n_rows
    return out


# ----------------------------------------------------------------------------- dynamics


def _gravity_free(model):
    """The model without gravity (cached on it; the tree and inertias of a model never change,
    its gravity does not matter here): forward dynamics at v = 0 is then M^-1 tau."""
    twin = model.__dict__.get("_gravity_free")
    if twin is None:
        twin = model.replace(gravity=(0.0, 0.0, 0.0))
        model._gravity_free = twin
    return twin


def _minv_columns(model, q, X) -> np.ndarray:
    """M^-1 X (nv x m) by the O(n) forward dynamics, one right-hand side per column: forward
    dynamics at v = 0 without gravity is M^-1 tau (000 Table 3)."""

    m = X.shape[1]
    if m == 0:
        return np.zeros((model.nv, 0))
    Q = np.broadcast_to(q, (m, model.nq))
    return tree_forward_dynamics(
        _gravity_free(model), np.ascontiguousarray(Q), np.zeros((m, model.nv)), np.ascontiguousarray(X.T)
    ).T


def partition(C, rtol: float = RANK_RTOL, independent=None):
    """(rows, dependent, independent): independent constraint rows, and a split of the
    coordinates with C[rows][:, dependent] invertible.  The dependent coordinates are chosen
    by a pivoted QR of C, preferring the joints listed last (those nearest the cut) on ties;
    ``independent`` (indices into v) imposes the independent ones."""
    C = np.asarray(C, dtype=float)
    rows = independent_rows(C, rtol)
    Cr = C[rows]
    nv = C.shape[1]
    if independent is not None:
        ind = np.sort(np.asarray(independent, dtype=np.int64))
        dep = np.setdiff1d(np.arange(nv), ind)
        if dep.size != rows.size or (
            dep.size and abs(np.linalg.det(Cr[:, dep])) <= rtol * np.abs(Cr).max() ** dep.size
        ):
            raise InputError(
                f"the coordinates {ind.tolist()} cannot be the independent ones: the constraint "
                f"Jacobian has rank {rows.size}, and the other {dep.size} columns must be invertible"
            )
        return rows, dep, ind
    if rows.size == 0:
        return rows, np.zeros(0, dtype=np.int64), np.arange(nv)
    _, _, piv = scipy.linalg.qr(Cr[:, ::-1], mode="economic", pivoting=True)
    dep = np.sort(nv - 1 - piv[: rows.size])
    return rows, dep, np.setdiff1d(np.arange(nv), dep)


def _check_method(method):
    if method not in ("lagrange", "partitioning"):
        raise InputError(f"method must be 'lagrange' or 'partitioning', got {method!r}")


def _transformation(C, nv, independent=None, rhs=None):
    """(rows, dependent, independent, E, Edot qdot_i) of 004 eqs. 23 and 25 for the independent
    rows of C; ``rhs`` is the right-hand side of ``C qddot = rhs`` (None: no Edot qdot_i)."""
    rows, dep, ind = partition(C, independent=independent)
    Cr = C[rows]
    E = np.zeros((nv, ind.size))
    E[ind, np.arange(ind.size)] = 1.0
    Edqd = np.zeros(nv)
    if dep.size:
        # one LU solve (LAPACK gesv) for both; numpy's: scipy 1.17's lu_solve with several
        # right-hand sides takes ~8 ms on a 2 x 2 system with its multithreaded OpenBLAS (measured)
        b = Cr[:, ind] if rhs is None else np.column_stack([Cr[:, ind], rhs[rows]])
        x = np.linalg.solve(Cr[:, dep], b)
        E[dep] = -x[:, : ind.size]  # E = [1; -C_d^-1 C_i]    (23)
        if rhs is not None:
            Edqd[dep] = x[:, ind.size]  # Edot qdot_i             (25)
    return rows, dep, ind, E, Edqd


_TYPE_CODES = {"weld": 0, "spherical": 1, "revolute": 2, "prismatic": 3}


class _Compiled:
    """The model and its cut joints packed for :mod:`denoc_bridge.kernels.loops` (``pi``,
    ``pf``) with scratch ``sb`` and work array of the calling thread (kept in the model's
    thread-local storage, rebuilt when loops are added)."""

    def __init__(self, model):

        L, nv, nl = model.n_links, model.nv, len(model.loops)
        self.loops = model.loops
        self.m = m = sum(lc.n_rows for lc in model.loops)
        pi = np.zeros((1 + L + nl, 6), dtype=np.int64)
        pf = np.zeros((1 + L + nl, 30))
        pi[0] = (L, nl, m, nv, model.nq, 0)
        pi[1 : L + 1] = np.column_stack(
            [model.parent, model.joint_type, model.idx_q, model.nq_joint, model.idx_v, model.nv_joint]
        )
        pf[1 : L + 1, :18] = np.column_stack(
            [model.joint_axis, model.joint_axis2, model.joint_rotation.reshape(L, 9), model.joint_translation]
        )
        r = 0
        for l, lc in enumerate(model.loops):
            pi[1 + L + l, :4] = (_TYPE_CODES[lc.type], lc.link1, lc.link2, r)
            pf[1 + L + l] = np.concatenate(
                [lc.rotation1.ravel(), lc.translation1, lc.rotation2.ravel(), lc.translation2, lc.normals().ravel()]
            )
            r += lc.n_rows
        self.pi, self.pf = pi, pf
        self.sb = np.zeros(_kl.scratch_size(L, nv, m))
        self.C, self.lam = _kl.result_views(self.sb, L, nv, m)
        self.phi = self.sb[_kl.ds_start(L, nv) : _kl.ds_start(L, nv) + m]  # the last evaluation's phi
        self.kt0 = _gravity_free(model)._kt
        self.work = model.thread_work()


def compiled(model) -> _Compiled:
    """This thread's packed model, rebuilt when loops were added since."""
    cp = getattr(model._local, "loops", None)
    if cp is None or cp.loops is not model.loops:
        cp = model._local.loops = _Compiled(model)
    return cp


def _loop_status(model, status, q):
    """Raise the error that a kernel status stands for (see kernels.loops)."""

    if status > 0:
        raise singular_error(model, status - 1)
    if status == -3:
        raise InputError(
            "the loop constraints are singular at this configuration (C M^-1 C^T is not positive "
            "definite): the mechanism is at a singular position, or the loops are not closed"
        )
    if status == -4:
        names = ", ".join(lc.name for lc in model.loops)
        raise InputError(f"cannot close the loops ({names}) near this configuration by Newton-Raphson")
    raise InputError("the constrained accelerations are not finite at this state")


def fast_lagrange(model, q, v, tau, f_ext, baumgarte, checked=False, fext=None):
    """(qddot, rank, packed model) by the compiled kernel (lambda and the rows of C are then
    in ``cp.lam[:rank]``, ``cp.C[:rank]``); inputs that are not float64 C vectors, or that
    the kernel finds wrong, go through the checks of inp.  ``fext``: the wrenches already
    in the internal (n_links, 6) form, instead of ``f_ext``."""
    cp = model._local.__dict__.get("loops")
    if cp is None or cp.loops is not model.loops:
        cp = compiled(model)
    a = np.empty(model.nv)
    if fext is None:
        fext = NO_FEXT if f_ext is None else np.ascontiguousarray(inp.external_wrenches(model, f_ext))
    try:
        status, r = _kl.constrained_accelerations(
            model._kt, cp.kt0, cp.work, cp.pi, cp.pf, cp.sb, q, v, tau, fext, baumgarte[0], baumgarte[1], RANK_RTOL, a
        )
    except (TypeError, IndexError):
        status, r = -2, 0
    if status in (-1, -2) and not checked:
        q = np.ascontiguousarray(inp.configuration(model, q))
        v = np.ascontiguousarray(inp.vector(model, v, "v", "v"))
        tau = np.ascontiguousarray(inp.vector(model, tau, "tau", "v"))
        alpha, beta = (float(x) for x in baumgarte)
        return fast_lagrange(model, q, v, tau, f_ext, (alpha, beta), True, fext)
    if status:
        _loop_status(model, status, q)
    return a, r, cp


NO_FEXT = np.zeros((0, 6))


def _constrained(model, q, v, tau, f_ext, method, baumgarte, independent, forces):
    """(qddot, lambda, C rows of lambda) of 004 eq. 14 (see constrained_forward_dynamics)."""
    _check_method(method)
    if method == "lagrange":
        a, r, cp = fast_lagrange(model, q, v, tau, f_ext, baumgarte)
        return a, cp.lam[:r].copy(), cp.C[:r].copy()
    return reference_constrained(model, q, v, tau, f_ext, method, baumgarte, independent, forces)


def reference_constrained(
    model, q, v, tau, f_ext=None, method="lagrange", baumgarte=(0.0, 0.0), independent=None, forces=True
):
    """The readable version of the constrained dynamics (dense C, NumPy/SciPy), which the
    compiled kernel is tested against: (qddot, lambda, C rows of lambda); with the
    partitioning method lambda is computed only when ``forces`` (else None)."""
    _check_model(model)

    _check_method(method)
    q = inp.configuration(model, q)
    v = inp.vector(model, v, "v", "v")
    tau = inp.vector(model, tau, "tau", "v")
    phi, C, cdqd = loop_kinematics(model, q, v)
    alpha, beta = (float(x) for x in baumgarte)
    rhs = -cdqd - 2.0 * alpha * (C @ v) - beta * beta * phi
    if method == "lagrange":
        rows = independent_rows(C)
        Cr, rr = C[rows], rhs[rows]
        a0 = tree_forward_dynamics(model, q, v, tau, f_ext)
        Y = _minv_columns(model, q, Cr.T)  # M^-1 C^T, O(n) per row
        K = Cr @ Y
        lam = np.linalg.solve(K, rr - Cr @ a0)  # (C M^-1 C^T) lambda = ...   (13-14)
        return a0 + Y @ lam, lam, Cr
    rows, dep, ind, E, Edqd = _transformation(C, model.nv, independent, rhs)
    M = tree_mass_matrix(model, q)
    f = tau - tree_nonlinear_effects(model, q, v, f_ext)
    Mp = E.T @ M @ E  # M' = E^T M E            (20)
    fp = E.T @ (f - M @ Edqd)  # f' = E^T (f - M Edot qdot_i) (21)
    qdd_i = scipy.linalg.solve(Mp, fp, assume_a="pos")  # M' qdd_i = f'           (19)
    a = E @ qdd_i + Edqd  # (18), (24)
    Cr = C[rows]
    lam = np.linalg.lstsq(Cr.T, M @ a - f, rcond=None)[0] if forces else None  # C^T lambda = M qdd - f (14)
    return a, lam, Cr


def constrained_forward_dynamics(
    model,
    q,
    v,
    tau,
    f_ext=None,
    *,
    method: str = "lagrange",
    baumgarte=(0.0, 0.0),
    independent=None,
    return_forces: bool = False,
):
    """Accelerations of a model with loop closures (004 eqs. 13-14, or 19-25).

    ``baumgarte = (alpha, beta)`` stabilises drift (Baumgarte): the acceleration constraint
    becomes ``C qddot = -Cdot qdot - 2 alpha C qdot - beta^2 phi``; (0, 0) is the exact
    constraint.  With ``return_forces`` returns ``(qddot, lambda)``, ``lambda`` for the
    independent constraint rows (``C^T lambda`` are the generalized constraint forces;
    :func:`constraint_forces`).
    """
    _check_model(model)
    if method == "lagrange" and not return_forces:
        return fast_lagrange(model, q, v, tau, f_ext, baumgarte)[0]
    a, lam, _ = _constrained(model, q, v, tau, f_ext, method, baumgarte, independent, return_forces)
    return (a, lam) if return_forces else a


def constraint_forces(model, q, v, tau, f_ext=None, *, baumgarte=(0.0, 0.0)):
    """``(lambda, C)``: the Lagrange multipliers of 004 eq. 14 for the independent constraint
    rows and those rows of C, so that ``C^T lambda`` is the generalized force the cut joints
    exert (``M qddot = tau - h + C^T lambda``)."""
    _check_model(model)
    _, lam, Cr = _constrained(model, q, v, tau, f_ext, "lagrange", baumgarte, None, True)
    return lam, Cr


def velocity_transformation(model, q, independent=None):
    """``(E, dependent, independent)``: qdot = E qdot_i (004 eqs. 16, 23), C E = 0 (eq. 17).
    ``independent`` (indices into v) imposes the independent coordinates; by default they are
    chosen by a pivoted QR of C (see :func:`partition`)."""
    _check_model(model)
    _, dep, ind, E, _ = _transformation(loop_jacobian(model, q), model.nv, independent)
    return E, dep, ind


def project_configuration(model, q, *, independent=None, tol: float = 1e-12, max_iter: int = 30):
    """Close the loops: Newton-Raphson on the dependent coordinates, ``C_d dq_d = -phi``
    (004 eq. 26), the independent ones kept.  Returns the corrected q; raises
    :class:`~denoc_bridge.errors.InputError` naming the cut joint when it does not converge
    (the loops cannot be closed near q)."""
    _check_model(model)

    q = inp.configuration(model, q).copy()
    for _ in range(max_iter):
        phi, C, _ = _all_rows(model, q)
        if np.abs(phi).max() <= tol:
            return q
        rows, dep, _ = partition(C, independent=independent)
        dv = np.zeros(model.nv)
        dv[dep] = np.linalg.lstsq(C[rows][:, dep], -phi[rows], rcond=None)[0]
        q = integrate(model, q, dv)
    phi = _all_rows(model, q)[0]
    worst, r0 = None, 0
    for lc in model.loops:
        e = np.abs(phi[r0 : r0 + lc.n_rows]).max()
        if worst is None or e > worst[1]:
            worst = (lc.name, e)
        r0 += lc.n_rows
    if worst[1] <= 1e3 * tol:
        return q
    raise InputError(
        f"cannot close loop '{worst[0]}' near this configuration: error {worst[1]:.2e} after "
        f"{max_iter} Newton-Raphson steps (004 eq. 26)"
    )


def project_velocity(model, q, v, *, independent=None):
    """The velocity satisfying C v = 0 with the same independent components (004 eq. 16)."""
    _check_model(model)

    v = inp.vector(model, v, "v", "v")
    E, dep, ind = velocity_transformation(model, q, independent)
    return E @ v[ind]


# ----------------------------------------------------------------------------- inverse dynamics


def _actuated_dofs(model, actuated) -> np.ndarray:
    """The velocity indices of the actuated joints (names, or indices into v)."""
    if actuated is None:
        return np.arange(model.nv)
    dofs = []
    for item in np.atleast_1d(np.asarray(actuated, dtype=object)):
        if isinstance(item, str):
            if item not in model.joint_names:
                raise InputError(f"actuated: no joint named '{item}' in '{model.name}'")
            k = model.joint_names.index(item)
            dofs.extend(range(model.idx_v[k], model.idx_v[k] + model.nv_joint[k]))
        elif isinstance(item, (int, np.integer)) and 0 <= int(item) < model.nv:
            dofs.append(int(item))
        else:
            raise InputError(f"actuated: {item!r} is neither a joint name nor an index into v (0..{model.nv - 1})")
    out = np.unique(np.array(dofs, dtype=np.int64))
    if out.size != len(dofs):
        raise InputError("actuated: a joint or index is listed twice")
    return out


def _check_consistent(model, phi, C, gamma, v, a, tol):
    """Raise InputError naming the cut joint whose position, velocity or acceleration
    constraint (q, v, a) violates by more than tol (relative to the terms' scale)."""
    levels = (
        ("position", phi, 1.0),
        ("velocity", C @ v, 1.0 + np.abs(C).max() * np.abs(v).max()),
        ("acceleration", C @ a + gamma, 1.0 + np.abs(C).max() * np.abs(a).max() + np.abs(gamma).max()),
    )
    for level, err, scale in levels:
        r0 = 0
        for lc in model.loops:
            e = np.abs(err[r0 : r0 + lc.n_rows]).max()
            if e > tol * scale:
                raise InputError(
                    f"the motion does not satisfy loop '{lc.name}' at the {level} level (error {e:.2e}): "
                    "closed-chain inverse dynamics needs q, v, a consistent with the loops "
                    "(project_configuration, project_velocity, or accelerations from forward dynamics)"
                )
            r0 += lc.n_rows


def closed_chain_inverse_dynamics(
    model, q, v, a, f_ext=None, *, actuated=None, return_forces: bool = False, tol: float = 1e-8
):
    """Actuator torques of a closed chain that realise the motion (q, v, a), the other joints
    passive (zero torque).

    004 eq. 14 read backwards: the tree's inverse dynamics ``tau_tree = M a + h`` must equal
    ``S tau_a + C^T lambda`` (S selects the actuated coordinates).  Multiplying by the velocity
    transformation E (C E = 0, 004 eqs. 17, 23) removes the constraint forces:
    ``E^T S tau_a = E^T tau_tree`` (the minimal equations 19-21), solved for tau_a (least
    squares of minimum norm when the chain is redundantly actuated); then
    ``C^T lambda = tau_tree - S tau_a``.

    ``actuated``: joint names or indices into v (default: every joint, giving the smallest
    torques in the 2-norm).  Raises :class:`~denoc_bridge.errors.InputError` when (q, v, a)
    violates a loop (beyond ``tol``, relative) or when the actuated joints cannot produce the
    motion (fewer independent actuators than degrees of freedom of the closed chain, or
    actuators placed where they cannot move it).  Returns tau (nv,), with ``return_forces``
    ``(tau, lambda)`` (lambda for the independent rows of C, as :func:`constraint_forces`).
    """
    _check_model(model)

    q = inp.configuration(model, q)
    v = inp.vector(model, v, "v", "v")
    a = inp.vector(model, a, "a", "v")
    act = _actuated_dofs(model, actuated)
    phi, C, gamma = loop_kinematics(model, q, v)
    _check_consistent(model, phi, C, gamma, v, a, tol)
    tau_tree = tree_inverse_dynamics(model, q, v, a, f_ext)
    rows, dep, ind, E, _ = _transformation(C, model.nv)
    A, b = E.T[:, act], E.T @ tau_tree  # E^T S tau_a = E^T tau_tree  (19-21)
    tau_a, _, rank, _ = np.linalg.lstsq(A, b, rcond=None)
    scale = np.abs(b).max() + np.abs(E.T).max() * np.abs(tau_tree).max() + 1e-300
    if rank < ind.size and np.abs(A @ tau_a - b).max() > 1e-9 * scale:
        names = sorted({model.joint_names[int(np.searchsorted(model.idx_v, i, side="right") - 1)] for i in act})
        raise InputError(
            f"the actuated joints ({', '.join(names) or 'none'}) cannot produce this motion: the closed "
            f"chain has {ind.size} degree(s) of freedom and they act on {rank} of them"
        )
    tau = np.zeros(model.nv)
    tau[act] = tau_a
    if not return_forces:
        return tau
    Cr = C[rows]
    lam = np.linalg.lstsq(Cr.T, tau_tree - tau, rcond=None)[0]  # C^T lambda = tau_tree - S tau_a  (14)
    return tau, lam
