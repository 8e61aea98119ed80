"""MuJoCo's equality constraints as denoc_bridge constraints (used by :mod:`denoc_bridge.io.mjcf`).

* ``<connect>`` (bodies or sites) -> a ``"spherical"`` :class:`~denoc_bridge.multibody.constraints.LoopClosure`
  at the anchor: MuJoCo's compiled ``eq_data[0:3]`` is the point in body 1's frame,
  ``eq_data[3:6]`` the same point in body 2's frame;
* ``<weld>`` -> a ``"weld"`` loop closure: ``eq_data[0:3]`` is the anchor in body 2's frame,
  ``eq_data[3:6]`` the same point in body 1's frame and ``eq_data[6:10]`` (w, x, y, z) the
  orientation of body 2 in body 1's frame when the weld holds (``torquescale`` has no meaning
  for a hard weld);
* ``<joint>`` with ``polycoef = (c0, c1, 0, 0, 0)`` -> a :class:`~denoc_bridge.Mimic`
  ``q1 = c1 q2 + (q1_ref + c0 - c1 q2_ref)`` (MuJoCo measures both joints from ``qpos0``);
  equalities that chain (joint a held to b, b to c) are composed into one relation to the
  root by :class:`~denoc_bridge.MimicModel`;
* ``<tendon>`` of one fixed tendon over two hinge or slide joints a, b (the coupling of the
  dm_control grippers): MuJoCo holds ``L - L0 = c0`` with ``L = ca qa + cb qb`` and ``L0`` its
  value at ``qpos0``, that is the :class:`~denoc_bridge.Mimic`
  ``qa = -(cb / ca) qb + qa0 + (cb qb0 + c0) / ca``;
* ``<tendon>`` of one fixed tendon over one or three or more hinge or slide joints (dm_control's
  quadruped holds the sum of each leg's three joints): the
  :class:`~denoc_bridge.multibody.constraints.JointCoupling` ``sum c_k q_k = L0 + c0``, one row
  on the loop layer.

MuJoCo's constraints are soft (``solref``, ``solimp``); these are exact.  A ``<joint>``
equality that fixes a joint (no ``joint2``) or is nonlinear, a ``<tendon>`` equality between
two tendons or over a tendon that is not a fixed tendon of hinge or slide joints, and
``<flex>`` equalities are refused by name; an equality inactive at the start
(``active="false"``) or not applied (``constraints=False``) is skipped with a note.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from denoc_bridge.errors import ModelError
from denoc_bridge.io.mujoco_layout import wxyz_to_matrix
from denoc_bridge.multibody.constraints import JointCoupling, LoopClosure, Mimic

__all__ = ["equalities"]

_CONNECT, _WELD, _JOINT, _TENDON = 0, 1, 2, 3
_KIND = {0: "connect", 1: "weld", 2: "joint", 3: "tendon", 4: "flex"}
Pose = tuple[np.ndarray, np.ndarray]


def _on_link(where: Pose, R: np.ndarray, p: np.ndarray) -> Pose:
    """A frame given in a body's frame, in the frame of the body's link."""
    return where[0] @ R, where[0] @ p + where[1]


def equalities(
    m: Any,
    mj: Any,
    joint_names: list[str],
    owner: list[int],
    where: list[Pose],
    constraints: bool,
    notes: list[str],
) -> tuple[list[LoopClosure | JointCoupling], list[Mimic]]:
    """Loop closures, joint couplings and mimic couplings of the compiled model's equalities (see
    the module docstring); ``owner[b]``/``where[b]``: the link carrying body b and the body's
    frame in it (a MuJoCo joint j is the joint of link j)."""
    loops: list[LoopClosure | JointCoupling] = []
    mimic: list[Mimic] = []
    for e in range(m.neq):
        kind = _KIND.get(int(m.eq_type[e]), f"type {int(m.eq_type[e])}")
        name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_EQUALITY, e) or f"{kind}{e}"
        label = f"<{kind}> equality '{name}'"
        if not m.eq_active0[e]:
            notes.append(f"{label} is inactive at the start (active='false') and is not modelled")
            continue
        if not constraints:
            notes.append(f"{label} is not applied (constraints=False)")
            continue
        if int(m.eq_type[e]) not in (_CONNECT, _WELD, _JOINT, _TENDON):
            raise ModelError(f"{label}: {kind} equalities are not supported (connect, weld, joint and tendon are)")
        data = np.array(m.eq_data[e], dtype=float)
        i1, i2 = int(m.eq_obj1id[e]), int(m.eq_obj2id[e])
        if int(m.eq_type[e]) == _JOINT:
            mimic.append(_mimic(m, data, i1, i2, joint_names, label))
            continue
        if int(m.eq_type[e]) == _TENDON:
            held = _tendon(m, mj, name, data, i1, i2, joint_names, label)
            if isinstance(held, Mimic):
                mimic.append(held)
            else:
                loops.append(held)
            continue
        if int(m.eq_objtype[e]) == int(mj.mjtObj.mjOBJ_SITE):  # the two sites' frames (origins) coincide
            b1, b2 = int(m.site_bodyid[i1]), int(m.site_bodyid[i2])
            f1 = _on_link(where[b1], wxyz_to_matrix(m.site_quat[i1]), m.site_pos[i1])
            f2 = _on_link(where[b2], wxyz_to_matrix(m.site_quat[i2]), m.site_pos[i2])
        elif int(m.eq_type[e]) == _CONNECT:
            b1, b2 = i1, i2
            f1 = _on_link(where[b1], np.eye(3), data[0:3])
            f2 = _on_link(where[b2], np.eye(3), data[3:6])
        else:
            b1, b2 = i1, i2
            f1 = _on_link(where[b1], wxyz_to_matrix(data[6:10]), data[3:6])
            f2 = _on_link(where[b2], np.eye(3), data[0:3])
        if owner[b1] == owner[b2]:
            raise ModelError(f"{label}: both bodies move with the same link (nothing to constrain)")
        kind_loop = "spherical" if int(m.eq_type[e]) == _CONNECT else "weld"
        loops.append(LoopClosure(name, kind_loop, owner[b1], owner[b2], f1[0], f1[1], f2[0], f2[1]))
    return loops, mimic


def _mimic(m: Any, data: np.ndarray, j1: int, j2: int, joint_names: list[str], label: str) -> Mimic:
    """``q1 - q1_0 = c0 + c1 (q2 - q2_0)`` as ``q1 = c1 q2 + offset``."""
    if j2 < 0:
        raise ModelError(f"{label}: fixes joint '{joint_names[j1]}' (no joint2), which is not supported")
    if np.any(data[2:5]):
        raise ModelError(
            f"{label}: a nonlinear polycoef {data[:5].tolist()} is not supported (only c0 + c1 q2 couplings are)"
        )
    for j in (j1, j2):
        if int(m.jnt_type[j]) not in (2, 3):  # slide, hinge
            raise ModelError(f"{label}: joint '{joint_names[j]}' is not a hinge or slide joint")
    q10, q20 = float(m.qpos0[m.jnt_qposadr[j1]]), float(m.qpos0[m.jnt_qposadr[j2]])
    c0, c1 = float(data[0]), float(data[1])
    return Mimic(joint_names[j1], joint_names[j2], c1, q10 + c0 - c1 * q20)


_WRAP_JOINT = 1  # mjtWrap: a fixed tendon's term ``coef * q[joint]``


def _tendon(
    m: Any, mj: Any, name: str, data: np.ndarray, t1: int, t2: int, joint_names: list[str], label: str
) -> Mimic | JointCoupling:
    """A fixed tendon's length held, ``sum c_k (q_k - q_k0) = c0``: the mimic relation of its
    two joints, or the joint coupling of its one or three or more (module docstring)."""
    if t2 >= 0:
        raise ModelError(f"{label}: a coupling of two tendons is not supported (one fixed tendon held is)")
    tendon = mj.mj_id2name(m, mj.mjtObj.mjOBJ_TENDON, t1) or f"tendon{t1}"
    adr, num = int(m.tendon_adr[t1]), int(m.tendon_num[t1])
    terms = [(int(m.wrap_objid[w]), float(m.wrap_prm[w])) for w in range(adr, adr + num)]
    if any(int(m.wrap_type[w]) != _WRAP_JOINT for w in range(adr, adr + num)):
        raise ModelError(
            f"{label}: tendon '{tendon}' is not a fixed tendon (it wraps sites or geoms); only a fixed "
            "tendon of hinge or slide joints is supported"
        )
    for j, _ in terms:
        if int(m.jnt_type[j]) not in (2, 3):  # slide, hinge
            raise ModelError(f"{label}: joint '{joint_names[j]}' of tendon '{tendon}' is not a hinge or slide joint")
    if len(terms) != 2:  # the joints are the links of the same index (module docstring of mjcf)
        value = float(m.tendon_length0[t1]) + float(data[0])
        return JointCoupling(name, tuple(j for j, _ in terms), np.array([c for _, c in terms]), value)
    (ja, ca), (jb, cb) = terms
    if ca == 0.0 or ja == jb:
        raise ModelError(f"{label}: tendon '{tendon}' does not hold joint '{joint_names[ja]}' to another joint")
    qa0, qb0 = float(m.qpos0[m.jnt_qposadr[ja]]), float(m.qpos0[m.jnt_qposadr[jb]])
    return Mimic(joint_names[ja], joint_names[jb], -cb / ca, qa0 + (cb * qb0 + float(data[0])) / ca)
