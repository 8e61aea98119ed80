"""MuJoCo's vector layouts and ours: the one place where they are converted.

A model loaded by :func:`~denoc_bridge.load_mjcf` has one joint per MuJoCo joint, in MuJoCo's
order, so ``q``, ``v``, ``a`` and ``tau`` line up joint by joint.  Hinge and slide joints
agree entry for entry (a joint's ``ref`` is folded into its placement, so ``q`` is
``qpos``).  Two joint types differ:

==========  ======================================  ======================================
joint       MuJoCo                                  denoc_bridge (= Pinocchio)
==========  ======================================  ======================================
ball        qpos: quaternion (w, x, y, z)           q: quaternion (x, y, z, w)
            qvel: angular velocity, body frame      v: the same
free        qpos: [x y z qw qx qy qz]               q: [x y z qx qy qz qw]
            qvel: [linear velocity of the body      v: [linear velocity of the body origin
            origin in the WORLD frame; angular      in the BODY frame; angular velocity
            velocity in the body frame]             in the body frame]
==========  ======================================  ======================================

With ``R`` the body's orientation and ``w`` its angular velocity (body frame), a free joint's
linear entries convert as

* velocity: ``v_lin = R^T qvel_lin``;
* acceleration (``qacc`` is the time derivative of ``qvel``, ``a`` that of ``v``):
  ``a_lin = R^T qacc_lin - w x v_lin``;
* generalised force (power ``tau . v = qfrc . qvel``): ``tau_lin = R^T qfrc_lin``;
* mass matrix: ``v = T qvel`` with ``T = diag(..., R^T, I, ...)`` gives
  ``M_mujoco = T^T M T`` (:func:`mass_matrix_to_mujoco`).

Every function takes the joint types (``model.joint_type``, or a model) and converts in the
direction of its name; each pair is a round trip.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge.errors import InputError, ModelError
from denoc_bridge.multibody.joints import JointType, joint_nq, joint_nv
from denoc_bridge.spatial import quaternion_to_matrix

__all__ = [
    "mujoco_qpos_to_q",
    "q_to_mujoco_qpos",
    "mujoco_qvel_to_v",
    "v_to_mujoco_qvel",
    "mujoco_qacc_to_a",
    "a_to_mujoco_qacc",
    "mujoco_force_to_tau",
    "tau_to_mujoco_force",
    "mass_matrix_to_mujoco",
    "wxyz_to_matrix",
]

_SAME = (JointType.REVOLUTE, JointType.PRISMATIC)


def _types(model_or_types: Any) -> np.ndarray:
    t = getattr(model_or_types, "joint_type", model_or_types)
    t = np.asarray(t, dtype=np.int64)
    for k, jt in enumerate(t):
        if JointType(int(jt)) not in (*_SAME, JointType.SPHERICAL, JointType.FREEFLYER):
            raise ModelError(
                f"joint {k} is {JointType(int(jt)).label}, which has no MuJoCo counterpart "
                "(MuJoCo has hinge, slide, ball and free joints)"
            )
    return t


def _blocks(types: np.ndarray) -> list[tuple[int, int, int]]:
    """(joint type, q index, v index) of each joint."""
    out, iq, iv = [], 0, 0
    for jt in types:
        out.append((int(jt), iq, iv))
        iq += joint_nq(int(jt))
        iv += joint_nv(int(jt))
    return out


def _vector(x: npt.ArrayLike, n: int, what: str) -> np.ndarray:
    a = np.array(x, dtype=float)
    if a.shape != (n,):
        raise InputError(f"{what} must have shape ({n},), got {a.shape}")
    return a


def _nq(types: np.ndarray) -> int:
    return sum(joint_nq(int(t)) for t in types)


def _nv(types: np.ndarray) -> int:
    return sum(joint_nv(int(t)) for t in types)


def _free_rotations(types: np.ndarray, q: npt.ArrayLike) -> list[tuple[int, np.ndarray]]:
    """(v index, R) of each free joint; ``q`` in our layout."""
    qa = _vector(q, _nq(types), "q")
    out = []
    for jt, iq, iv in _blocks(types):
        if jt == JointType.FREEFLYER:
            quat = qa[iq + 3 : iq + 7]
            out.append((iv, quaternion_to_matrix(quat / np.linalg.norm(quat))))
    return out


def mujoco_qpos_to_q(model: Any, qpos: npt.ArrayLike) -> np.ndarray:
    """Our ``q`` from MuJoCo's ``qpos`` (quaternions w-first -> w-last)."""
    types = _types(model)
    q = _vector(qpos, _nq(types), "qpos")
    for jt, iq, _ in _blocks(types):
        s = iq + (3 if jt == JointType.FREEFLYER else 0)
        if jt in (JointType.FREEFLYER, JointType.SPHERICAL):
            q[s : s + 4] = np.roll(q[s : s + 4], -1)
    return q


def q_to_mujoco_qpos(model: Any, q: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's ``qpos`` from our ``q`` (quaternions w-last -> w-first)."""
    types = _types(model)
    qpos = _vector(q, _nq(types), "q")
    for jt, iq, _ in _blocks(types):
        s = iq + (3 if jt == JointType.FREEFLYER else 0)
        if jt in (JointType.FREEFLYER, JointType.SPHERICAL):
            qpos[s : s + 4] = np.roll(qpos[s : s + 4], 1)
    return qpos


def mujoco_qvel_to_v(model: Any, q: npt.ArrayLike, qvel: npt.ArrayLike) -> np.ndarray:
    """Our ``v`` from MuJoCo's ``qvel`` at our configuration ``q`` (free joints' linear part to
    the body frame)."""
    types = _types(model)
    v = _vector(qvel, _nv(types), "qvel")
    for iv, R in _free_rotations(types, q):
        v[iv : iv + 3] = R.T @ v[iv : iv + 3]
    return v


def v_to_mujoco_qvel(model: Any, q: npt.ArrayLike, v: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's ``qvel`` from our ``v`` (free joints' linear part to the world frame)."""
    types = _types(model)
    qvel = _vector(v, _nv(types), "v")
    for iv, R in _free_rotations(types, q):
        qvel[iv : iv + 3] = R @ qvel[iv : iv + 3]
    return qvel


def mujoco_qacc_to_a(model: Any, q: npt.ArrayLike, v: npt.ArrayLike, qacc: npt.ArrayLike) -> np.ndarray:
    """Our ``a`` from MuJoCo's ``qacc`` at our ``q`` and ``v``: ``a_lin = R^T qacc_lin - w x v_lin``."""
    types = _types(model)
    va = _vector(v, _nv(types), "v")
    a = _vector(qacc, _nv(types), "qacc")
    for iv, R in _free_rotations(types, q):
        a[iv : iv + 3] = R.T @ a[iv : iv + 3] - np.cross(va[iv + 3 : iv + 6], va[iv : iv + 3])
    return a


def a_to_mujoco_qacc(model: Any, q: npt.ArrayLike, v: npt.ArrayLike, a: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's ``qacc`` from our ``a`` at our ``q`` and ``v``: ``qacc_lin = R (a_lin + w x v_lin)``."""
    types = _types(model)
    va = _vector(v, _nv(types), "v")
    qacc = _vector(a, _nv(types), "a")
    for iv, R in _free_rotations(types, q):
        qacc[iv : iv + 3] = R @ (qacc[iv : iv + 3] + np.cross(va[iv + 3 : iv + 6], va[iv : iv + 3]))
    return qacc


def mujoco_force_to_tau(model: Any, q: npt.ArrayLike, qfrc: npt.ArrayLike) -> np.ndarray:
    """Our generalised force from MuJoCo's (``qfrc_*``): ``tau_lin = R^T qfrc_lin``."""
    types = _types(model)
    tau = _vector(qfrc, _nv(types), "qfrc")
    for iv, R in _free_rotations(types, q):
        tau[iv : iv + 3] = R.T @ tau[iv : iv + 3]
    return tau


def tau_to_mujoco_force(model: Any, q: npt.ArrayLike, tau: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's generalised force from ours: ``qfrc_lin = R tau_lin``."""
    types = _types(model)
    qfrc = _vector(tau, _nv(types), "tau")
    for iv, R in _free_rotations(types, q):
        qfrc[iv : iv + 3] = R @ qfrc[iv : iv + 3]
    return qfrc


def mass_matrix_to_mujoco(model: Any, q: npt.ArrayLike, M: npt.ArrayLike) -> np.ndarray:
    """MuJoCo's joint-space inertia ``T^T M T`` from ours (``v = T qvel``)."""
    types = _types(model)
    nv = _nv(types)
    out = np.array(M, dtype=float)
    if out.shape != (nv, nv):
        raise InputError(f"M must have shape ({nv}, {nv}), got {out.shape}")
    for iv, R in _free_rotations(types, q):
        out[:, iv : iv + 3] = out[:, iv : iv + 3] @ R.T
        out[iv : iv + 3, :] = R @ out[iv : iv + 3, :]
    return out


def wxyz_to_matrix(quat: npt.ArrayLike) -> np.ndarray:
    """Rotation matrix of a quaternion in MuJoCo's order (w, x, y, z), normalised first."""
    w, x, y, z = (float(a) for a in np.asarray(quat, dtype=float))
    return quaternion_to_matrix(np.array([x, y, z, w]) / np.linalg.norm([x, y, z, w]))
