"""Analytical derivatives of the constrained dynamics of loop closures (Lagrange form, 004
eqs. 13-14), and of their multipliers; Pinocchio has none.

The accelerations ``a`` and multipliers ``lam`` of the independent rows ``C`` solve

    ID(q, v, a, f_ext) - C(q)^T lam = tau          (M a = tau - h + C^T lam)
    g(q, v, a) = C(q) a + Cdot(q, v) v = 0         (the cut joints' relative accelerations)

and the implicit-function theorem gives, for x = q (tangent space), v or tau,

    [ M  -C^T ] [ da/dx   ]   [ dtau/dx - dID/dx + d(C^T lam)/dq ]
    [ C   0   ] [ dlam/dx ] = [ -dg/dx                           ]

with ``dID/dq``, ``dID/dv`` and ``M`` from the tree's recursive derivatives
(:mod:`denoc_bridge.algorithms.derivatives`) at the constrained accelerations.  The
kinematic terms are exact too, by second-order kinematics in the world frame: every column c
of v has a world twist ``s_c = [w_c; v_c]`` (about the world origin) fixed in the body that
carries its axis (the parent link for a 1-DOF, translation or first universal axis; the
intermediate body for the second universal axis; the child link for the Lie-group joints,
free-flyer, spherical and planar, whose velocity is in the child frame), and a tangent step of
column i moves the links below its joint rigidly by the twist ``s_i``, so that

    ds_c/dq_i = s_i x s_c  if column i moves the carrier of c, else 0

(``x`` the motion cross product).  The link twists ``V_k = sum s_c v_c``, the twist rates
``A_k = sum s_c a_c + (V_carrier(c) x s_c) v_c``, the points of the cut joints and the normals
fixed on link 1, and so every row of ``g`` (004 eq. 13) and its derivatives with respect to q
and v, follow by the product rule; ``d(C^T lam)/dq`` is ``lam^T dC/dq``, ``dC/dq_i`` the
derivative of ``g`` along ``q_i`` for unit accelerations at v = 0.  Cost O(n^2 (n + m)) in
NumPy: for the small closed chains of robots (and their tests), not for long chains.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from denoc_bridge.algorithms.derivatives import tree_inverse_dynamics_derivatives
from denoc_bridge.constraints.loop_kinematics import LoopKinematics
from denoc_bridge.constraints.mimic_loops import stacked_rows
from denoc_bridge.constraints.packed import tree_rows
from denoc_bridge.constraints.solve import lagrange_accelerations
from denoc_bridge.errors import InputError
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import JointCoupling, LoopClosure
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = ["ConstrainedDerivatives", "constrained_dynamics_derivatives"]

_LIE = (JointType.SPHERICAL, JointType.FREEFLYER, JointType.PLANAR)


class ConstrainedDerivatives(NamedTuple):
    """The derivatives of the constrained accelerations and of the Lagrange multipliers of
    the independent constraint rows ``rows`` (indices into the stacked rows of the cut
    joints, :func:`denoc_bridge.loops.loop_jacobian`)."""

    dqdd_dq: np.ndarray
    dqdd_dv: np.ndarray
    dqdd_dtau: np.ndarray
    dlam_dq: np.ndarray
    dlam_dv: np.ndarray
    dlam_dtau: np.ndarray
    qdd: np.ndarray
    lam: np.ndarray
    rows: np.ndarray


def _c3(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a x b along the last axis, broadcast (np.cross without its axis bookkeeping)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a1 * b2 - a2 * b1
    out[..., 1] = a2 * b0 - a0 * b2
    out[..., 2] = a0 * b1 - a1 * b0
    return out


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Motion cross product [w; v] x [w'; v'] = [w x w'; w x v' + v x w'] along the last axis."""
    w, u = a[..., :3], a[..., 3:]
    w2, u2 = b[..., :3], b[..., 3:]
    return np.concatenate([_c3(w, w2), _c3(w, u2) + _c3(u, w2)], axis=-1)


class _Columns:
    """World twists s_c of the columns of v, which columns move each link (``moves[i, k]``) and
    which move the carrier of each column's axis (``carrier[i, c]``)."""

    def __init__(self, model: Model, kin: LoopKinematics) -> None:
        nv, L = model.nv, model.n_links
        self.s = np.zeros((nv, 6))
        self.moves = np.zeros((nv, L), dtype=bool)
        self.carrier = np.zeros((nv, nv), dtype=bool)
        self.link_cols: list[np.ndarray] = []  # the columns that move link k (its support)
        for k in range(L):
            v0, z = int(model.idx_v[k]), int(model.nv_joint[k])
            P = kin.P[k, :, :z]
            self.s[v0 : v0 + z, :3] = P[:3].T
            self.s[v0 : v0 + z, 3:] = (P[3:] - np.cross(P[:3].T, kin.o[k]).T).T  # v at the world origin
            b = int(model.parent[k])
            above = self.link_cols[b] if b >= 0 else np.zeros(0, dtype=np.int64)
            own = np.arange(v0, v0 + z)
            self.link_cols.append(np.concatenate([above, own]))
            jt = JointType(int(model.joint_type[k]))
            for m, c in enumerate(own):
                self.carrier[above, c] = True
                if jt in _LIE:
                    self.carrier[own, c] = True
                elif jt == JointType.UNIVERSAL and m == 1:
                    self.carrier[own[0], c] = True
        for k in range(L):
            self.moves[self.link_cols[k], k] = True


class _Motion:
    """At one point fixed on a link: the world twist V and twist rate A of the link, the point x,
    its velocity and acceleration, with their derivatives along q (tangent) and v: arrays with
    a leading axis over the accelerations of a batch ``acc`` (K, nv); derivatives (..., nv, 3)."""

    def __init__(self, cols: _Columns, link: int, x: np.ndarray, v: np.ndarray, acc: np.ndarray) -> None:
        nv, K = len(v), len(acc)
        s = cols.s
        self.x = x
        self.dx_dq = np.zeros((nv, 3))
        self.V = np.zeros(6)
        self.dV_dq = np.zeros((nv, 6))
        self.dV_dv = np.zeros((nv, 6))
        self.A = np.zeros((K, 6))
        self.dA_dq = np.zeros((K, nv, 6))
        self.dA_dv = np.zeros((nv, 6))
        if link >= 0:
            support = cols.link_cols[link]
            ds = {c: cols.carrier[:, c][:, None] * _cross(s, s[c]) for c in support}  # ds_c/dq_i, (nv, 6)
            self.V = s[support].T @ v[support]
            self.dV_dv[support] = s[support]
            for c in support:
                mb = cols.carrier[:, c]
                Vc = s[mb].T @ v[mb]  # twist of the carrier of c's axis
                dVc = np.zeros((nv, 6))  # its derivative along q
                for c2 in np.flatnonzero(mb):
                    dVc += v[c2] * (cols.carrier[:, c2][:, None] * _cross(s, s[c2]))
                sdot = _cross(Vc, s[c])
                dsdot = _cross(dVc, s[c]) + _cross(Vc, ds[c])
                self.dV_dq += v[c] * ds[c]
                self.A += np.outer(acc[:, c], s[c]) + v[c] * sdot
                self.dA_dq += acc[:, c, None, None] * ds[c] + v[c] * dsdot
                self.dA_dv[c] += sdot
                self.dA_dv[mb] += v[c] * _cross(s[mb], s[c])  # d sdot_c / dv_i = s_i x s_c
            m = cols.moves[:, link]
            self.dx_dq[m] = s[m, 3:] + _c3(s[m, :3], x)
        w, dw_dq = self.V[:3], self.dV_dq[:, :3]
        self.w, self.dw_dq, self.dw_dv = w, dw_dq, self.dV_dv[:, :3]
        self.xd = self.V[3:] + _c3(w, x)
        self.dxd_dq = self.dV_dq[:, 3:] + _c3(dw_dq, x) + _c3(w, self.dx_dq)
        self.dxd_dv = self.dV_dv[:, 3:] + _c3(self.dV_dv[:, :3], x)
        Aw, Av = self.A[:, :3], self.A[:, 3:]
        self.wd, self.dwd_dq, self.dwd_dv = Aw, self.dA_dq[..., :3], self.dA_dv[:, :3]
        self.xdd = Av + _c3(Aw, x) + _c3(w, self.xd)
        self.dxdd_dq = (
            self.dA_dq[..., 3:]
            + _c3(self.dA_dq[..., :3], x)
            + _c3(Aw[:, None, :], self.dx_dq)
            + _c3(dw_dq, self.xd)
            + _c3(w, self.dxd_dq)
        )
        self.dxdd_dv = (
            self.dA_dv[:, 3:] + _c3(self.dA_dv[:, :3], x) + _c3(self.dV_dv[:, :3], self.xd) + _c3(w, self.dxd_dv)
        )


def _rows(lc: LoopClosure | JointCoupling, kin: LoopKinematics, cols: _Columns, v: np.ndarray, acc: np.ndarray):
    """(g, dg/dq, dg/dv) of one cut joint for each acceleration of ``acc``: (K, r), (K, r, nv), (K, r, nv)."""
    if isinstance(lc, JointCoupling):  # g = sum c_k a_k: no q or v in it
        g1 = acc[:, kin.model.idx_v[list(lc.joints)]] @ lc.coefficients
        zero = np.zeros((len(acc), 1, kin.model.nv))
        return g1[:, None], zero, zero
    RF1, x1 = kin.frame(lc.link1, lc.rotation1, lc.translation1)
    _, x2 = kin.frame(lc.link2, lc.rotation2, lc.translation2)
    p1, p2 = _Motion(cols, lc.link1, x1, v, acc), _Motion(cols, lc.link2, x2, v, acc)
    T = lambda X: np.swapaxes(X, -1, -2)  # noqa: E731  (..., nv, 3) -> (..., 3, nv)
    g, gq, gv = [], [], []
    if lc.type in ("weld", "spherical", "revolute"):
        g.append(p2.xdd - p1.xdd)
        gq.append(T(p2.dxdd_dq - p1.dxdd_dq))
        gv.append(np.broadcast_to(T(p2.dxdd_dv - p1.dxdd_dv), gq[-1].shape))
    if lc.type in ("weld", "prismatic"):
        g.append(p2.wd - p1.wd)
        gq.append(T(p2.dwd_dq - p1.dwd_dq))
        gv.append(np.broadcast_to(T(p2.dwd_dv - p1.dwd_dv), gq[-1].shape))
    if lc.type in ("revolute", "prismatic"):
        K = len(acc)
        for n in lc.normals():
            b = RF1 @ n
            db = np.zeros((len(v), 3))  # d b / dq_i = w_i x b for the columns that move link 1
            if lc.link1 >= 0:
                db = _c3(cols.s[:, :3], b) * cols.moves[:, lc.link1, None]
            wb = _c3(p1.w, b)
            dwb_dq = _c3(p1.dw_dq, b) + _c3(p1.w, db)
            dwb_dv = _c3(p1.dw_dv, b)
            if lc.type == "revolute":  # b . wdot_rel + (w1 x b) . w_rel
                wrel, wdrel = p2.w - p1.w, p2.wd - p1.wd
                g.append((wdrel @ b + wb @ wrel)[:, None])
                dq = (p2.dwd_dq - p1.dwd_dq) @ b + wdrel @ db.T + dwb_dq @ wrel + (p2.dw_dq - p1.dw_dq) @ wb
                dv = (p2.dwd_dv - p1.dwd_dv) @ b + dwb_dv @ wrel + (p2.dw_dv - p1.dw_dv) @ wb
            else:  # b . xddot_rel + 2 (w1 x b) . xdot_rel + (wdot1 x b + w1 x (w1 x b)) . d
                d, dd_dq = p2.x - p1.x, p2.dx_dq - p1.dx_dq
                xdrel, xddrel = p2.xd - p1.xd, p2.xdd - p1.xdd
                bdd = _c3(p1.wd, b) + _c3(p1.w, wb)  # (K, 3)
                g.append((xddrel @ b + 2.0 * wb @ xdrel + bdd @ d)[:, None])
                dbdd_dq = _c3(p1.dwd_dq, b) + _c3(p1.wd[:, None, :], db) + _c3(p1.dw_dq, wb) + _c3(p1.w, dwb_dq)
                dbdd_dv = _c3(p1.dwd_dv, b) + _c3(p1.dw_dv, wb) + _c3(p1.w, dwb_dv)
                dq = (
                    (p2.dxdd_dq - p1.dxdd_dq) @ b
                    + xddrel @ db.T
                    + 2.0 * (dwb_dq @ xdrel + (p2.dxd_dq - p1.dxd_dq) @ wb)
                    + dbdd_dq @ d
                    + bdd @ dd_dq.T
                )
                dv = (p2.dxdd_dv - p1.dxdd_dv) @ b + 2.0 * (dwb_dv @ xdrel + (p2.dxd_dv - p1.dxd_dv) @ wb) + dbdd_dv @ d
            gq.append(np.broadcast_to(dq, (K, len(v)))[:, None, :])
            gv.append(np.broadcast_to(dv, (K, len(v)))[:, None, :])
    return np.concatenate(g, axis=-1), np.concatenate(gq, axis=1), np.concatenate(gv, axis=1)


def constraint_acceleration_derivatives(
    model: Model, q: np.ndarray, v: np.ndarray, acc: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(g, dg/dq, dg/dv)`` of all cut joints' rows (stacked as
    :func:`~denoc_bridge.loops.loop_jacobian`) at each acceleration of ``acc`` (K, nv):
    (K, m), (K, m, nv), (K, m, nv); ``g = C a + Cdot v`` (module docstring)."""
    kin = LoopKinematics(model, q)
    cols = _Columns(model, kin)
    parts = [_rows(lc, kin, cols, v, acc) for lc in model.loops]
    return tuple(np.concatenate([p[i] for p in parts], axis=1) for i in range(3))  # type: ignore[return-value]


def _tree_derivatives(
    tree: Model, q: np.ndarray, v: np.ndarray, tau: np.ndarray, f_ext: inp.WrenchesLike | None, K: np.ndarray
) -> tuple[np.ndarray, ...]:
    """The KKT derivatives on the tree's coordinates for the stacked rows ``[K; C(q)]`` (K
    constant, with zero bias: mimic couplings; C the loop rows): (xq, xv, xt, a, lam, rows), the
    x's of shape (nv + r, nv) = [d a; d lam] along q, v, tau."""
    nv, nk = tree.nv, len(K)
    _, C_loops, cdqd = tree_rows(tree, q, v)  # the compiled rows, as the constrained dynamics
    J = np.vstack([K, C_loops])
    a, lam, rows = lagrange_accelerations(tree, q, v, tau, J, np.concatenate([np.zeros(nk), -cdqd]), f_ext)
    C, r = J[rows], len(rows)
    acc = np.vstack([np.zeros(nv), a, np.eye(nv)])  # g is affine in a: its q-derivative at e_j gives dC/dq
    _, gq, gv = constraint_acceleration_derivatives(tree, q, v, acc)
    zeros = np.zeros((len(acc), nk, nv))  # the constant rows K a: no q or v dependence
    dg_dq, dg_dv = np.concatenate([zeros, gq], axis=1)[:, rows], np.concatenate([zeros, gv], axis=1)[:, rows]
    dC_dq = dg_dq[2:] - dg_dq[0]  # [j, row, i] = dC[row, j] / dq_i
    dCt_lam = np.einsum("jri,r->ji", dC_dq, lam)  # d(C^T lam)/dq
    dID_dq, dID_dv, M = tree_inverse_dynamics_derivatives(tree, q, v, a, f_ext)
    rhs = np.block(
        [[dCt_lam - dID_dq, -dID_dv, np.eye(nv)], [-dg_dq[1], -dg_dv[1], np.zeros((r, nv))]]
    )  # the three right-hand sides of one KKT matrix, one solve
    x = np.linalg.solve(np.block([[M, -C.T], [C, np.zeros((r, r))]]), rhs)
    return x[:, :nv], x[:, nv : 2 * nv], x[:, 2 * nv :], a, lam, rows


def constrained_dynamics_derivatives(
    model: Model | MimicModel,
    q: npt.ArrayLike,
    v: npt.ArrayLike,
    tau: npt.ArrayLike,
    f_ext: inp.WrenchesLike | None = None,
) -> ConstrainedDerivatives:
    """Derivatives of the constrained accelerations (:func:`denoc_bridge.loops.constrained_forward_dynamics`,
    exact constraint, no Baumgarte terms) and of the Lagrange multipliers
    (:func:`denoc_bridge.loops.constraint_forces`) with respect to q (tangent space, as
    ``pin.integrate``), v and tau, by the implicit-function theorem on the Lagrange equations
    (module docstring).  One state.

    ``dqdd_dtau`` is ``P = M^-1 - M^-1 C^T (C M^-1 C^T)^-1 C M^-1``, the constrained inverse
    inertia (symmetric, ``P C^T = 0``, ``P M P = P``).

    On a :class:`~denoc_bridge.MimicModel` whose tree has loop closures, the reduced
    accelerations of :mod:`denoc_bridge.constraints.mimic_loops` (the mimic rows K, constant,
    stacked on the loop rows: ``J = [K; C]``) with respect to the reduced q, v and tau (chain rule
    through ``q_full(q_r)``, ``v_full = G v_r``, ``tau_full`` = tau on the independent joints);
    the multipliers are those of the independent rows ``rows`` of J.
    """
    _check_model(model)
    if isinstance(model, MimicModel):
        if not model.tree.loops:
            raise InputError(f"'{model.tree.name}' has no loop closures: use forward_dynamics_derivatives")
        tau_r = model._reduced(tau, "tau", model.nv)
        qf, vf, _, _, _ = stacked_rows(model, q, v)
        G = model.coupling_matrix()
        F = model.full_forces(np.eye(model.nv)).T  # d tau_full / d tau_r
        xq, xv, xt, a, lam, rows = _tree_derivatives(
            model.tree, qf, vf, model.full_forces(tau_r), f_ext, model.constraint_matrix()
        )
        keep, nvf = model._v_keep, model.tree.nv
        xq, xv, xt = xq @ G, xv @ G, xt @ F
        P = xt[:nvf][keep]
        return ConstrainedDerivatives(
            xq[:nvf][keep], xv[:nvf][keep], 0.5 * (P + P.T), xq[nvf:], xv[nvf:], xt[nvf:], a[keep], lam, rows
        )
    if not model.loops:
        raise InputError(f"'{model.name}' has no loop closures: use forward_dynamics_derivatives of the tree")
    q = inp.configuration(model, q)
    v = inp.vector(model, v, "v", "v")
    tau = inp.vector(model, tau, "tau", "v")
    nv = model.nv
    xq, xv, xt, a, lam, rows = _tree_derivatives(model, q, v, tau, f_ext, np.zeros((0, nv)))
    P = 0.5 * (xt[:nv] + xt[:nv].T)
    return ConstrainedDerivatives(xq[:nv], xv[:nv], P, xq[nv:], xv[nv:], xt[nv:], a, lam, rows)
