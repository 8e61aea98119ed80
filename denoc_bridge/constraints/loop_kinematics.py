"""The rows of the loop closures: world kinematics of the links, the residual, Jacobian and bias of
every cut joint (004 eqs. 12-15) and of every joint coupling (one constant row), and the
redundant rows among them."""

from __future__ import annotations

import numpy as np

from denoc_bridge.algorithms.reference import link_N, world_kinematics
from denoc_bridge.constraints import mimic_loops as _mimic_loops
from denoc_bridge.constraints.solve import independent_rows
from denoc_bridge.errors import InputError, ModelError
from denoc_bridge.multibody import inputs as inp
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.constraints import JointCoupling, LoopClosure, body_name
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.spatial import skew


class LoopKinematics:
    """World-frame kinematics of every link at (q, v), computed once (O(n)) and shared by the
    residual, the Jacobian and the bias: orientation R, origin o, joint-motion P (6 x z,
    [omega; v] at o), and with v: omega, odot, and the rates at qddot = 0 without gravity
    (omegadot0, oddot0) -- the classical accelerations of 000's twist rates."""

    def __init__(self, model, q, v=None):

        kin = world_kinematics(model, q, v)
        self.model, self.q, self.R, self.o, self.P, self.Pdot = model, q, kin.R, kin.o, kin.P, kin.Pdot
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
    """The rotation vector theta n of R (so(3) logarithm), accurate at every angle: theta =
    atan2(|w| / 2, (tr R - 1) / 2) with w = vee(R - R^T) = 2 sin(theta) n; below pi / 2,
    theta / (2 sin theta) w; from pi / 2 on, n from the symmetric part (R + R^T) / 2 - cos(theta) 1
    = (1 - cos(theta)) n n^T, its sign from w (theta / (2 sin theta) would multiply the rounding of
    w by up to 1 / sin(theta) there: 1e6 at 1e-6 from pi)."""
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    c = 0.5 * (np.trace(R) - 1.0)
    s = 0.5 * np.sqrt(w @ w)
    th = np.arctan2(s, c)
    if c > 0.0:
        return (0.5 * (1.0 + th * th / 6.0) if th < 1e-6 else th / (2.0 * s)) * w
    B = 0.5 * (R + R.T) - c * np.eye(3)  # (1 - cos) n n^T
    k = int(np.argmax(np.diag(B)))
    n = B[:, k] / np.sqrt(max(B[k, k], 1e-300) * (1.0 - c))
    return th * (-n if w[k] < 0.0 else n)


def _coupling_row(lc: JointCoupling, model, q: np.ndarray, with_bias: bool):
    """(phi, C, gamma) of a joint coupling: ``sum c_k q_k - value``, ``sum c_k e_k``, 0."""
    iq, iv = model.idx_q[list(lc.joints)], model.idx_v[list(lc.joints)]
    C = np.zeros((1, model.nv))
    C[0, iv] = lc.coefficients
    phi = np.array([lc.coefficients @ q[iq] - lc.value])
    return phi, C, np.zeros(1) if with_bias else None


def _loop_rows(lc: LoopClosure | JointCoupling, kin: LoopKinematics, with_bias: bool):
    """(phi, C, gamma) of one cut joint or coupling: position error, Jacobian rows, Cdot qdot."""
    if isinstance(lc, JointCoupling):
        return _coupling_row(lc, kin.model, kin.q, with_bias)
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


def all_rows(model, q, v=None, with_bias=False):

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
    return all_rows(model, q, v, True)


def loop_residual(model, q) -> np.ndarray:
    """The position errors of the cut joints (m,): metres for the point rows, radians for the
    rotation rows (see the module docstring for the rows of each type); of a MimicModel at its
    reduced q (:func:`denoc_bridge.constraints.mimic_loops.loop_residual`)."""
    _check_model(model)
    if isinstance(model, MimicModel):
        return _mimic_loops.loop_residual(model, q)
    return all_rows(model, q)[0]


def loop_jacobian(model, q) -> np.ndarray:
    """``C = D* N`` (004 eq. 15), all rows (m x nv); of a MimicModel ``C G`` (m x its reduced nv)."""
    _check_model(model)
    if isinstance(model, MimicModel):
        return _mimic_loops.loop_jacobian(model, q)
    return all_rows(model, q)[1]


def loop_bias(model, q, v) -> np.ndarray:
    """``Cdot qdot`` (004 eq. 13), all rows (m,)."""
    _check_model(model)
    return all_rows(model, q, v, True)[2]


def cut_joint_jacobian(model, q) -> tuple:
    """``(D*, N)`` of 004 eq. 15: ``D*`` (m x 6L) acts on the stacked world twists
    ``t = [omega_k; odot_k]`` of the links (000 eq. 9) and ``N`` is the DeNOC matrix
    (6L x nv, :func:`denoc_bridge.denoc_matrices`: ``N = N_l N_d``), so that
    ``D* N = C`` (:func:`loop_jacobian`).  Dense: for small systems.  A joint coupling's row
    acts on joint rates, not on twists: a model with one is refused."""
    _check_model(model)
    for lc in model.loops:
        if isinstance(lc, JointCoupling):
            raise ModelError(
                f"joint coupling '{lc.name}' is a row on the joint rates (C = its coefficients), not a cut "
                "joint on the links' twists: cut_joint_jacobian covers models whose loops are all cut joints"
            )
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


def constraint_report(model, q) -> list:
    """One dict per cut joint: name, type, the two links, rows, rank, redundant rows (their
    positions within the joint's rows) and the position error at q; a joint coupling has its
    joints' names instead of the two links."""
    _check_model(model)
    phi, C, _ = all_rows(model, q)
    keep = set(independent_rows(C).tolist())
    out, r0 = [], 0
    for lc in model.loops:
        rows = range(r0, r0 + lc.n_rows)
        where = (
            dict(joints=[model.joint_names[k] for k in lc.joints])
            if isinstance(lc, JointCoupling)
            else dict(link1=body_name(model, lc.link1), link2=body_name(model, lc.link2))
        )
        out.append(
            dict(
                name=lc.name,
                type=lc.type,
                **where,
                rows=lc.n_rows,
                rank=int(independent_rows(C[rows.start : rows.stop]).size),
                redundant=[k - r0 for k in rows if k not in keep],
                error=float(np.abs(phi[rows.start : rows.stop]).max()),
            )
        )
        r0 += lc.n_rows
    return out
