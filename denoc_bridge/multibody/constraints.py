"""Descriptions of the holonomic constraints a model carries: URDF ``<mimic>`` relations
(:class:`Mimic`), loop closures by cut joints (:class:`LoopClosure`, 004 §2.3) and linear
couplings of several joints (:class:`JointCoupling`, MuJoCo's fixed tendon held at its length).

These are data: :mod:`denoc_bridge.constraints` builds their Jacobians and solves them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from denoc_bridge._text import count, did_you_mean
from denoc_bridge.errors import ModelError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.spatial import rpy_to_matrix

__all__ = [
    "Mimic",
    "LoopClosure",
    "JointCoupling",
    "LOOP_TYPES",
    "make_loop_closure",
    "make_joint_coupling",
    "body_name",
    "frozen_array",
    "describe_loops",
]


@dataclass(frozen=True)
class Mimic:
    """A URDF ``<mimic>`` relation ``q[joint] = multiplier * q[mimicked] + offset``.

    Recorded in ``model.mimic``; like ``pin.buildModelFromUrdf(path)`` without
    ``mimic=True``, the dynamics of a :class:`Model` treat mimic joints as independent
    joints.  ``load_urdf(path, mimic=True)`` (or ``MimicModel(model)``) turns the relations
    into joint-space constraints (:mod:`denoc_bridge.constraints.mimic`).
    """

    joint: str
    mimicked: str
    multiplier: float
    offset: float


LOOP_TYPES = {"revolute": 5, "prismatic": 5, "spherical": 3, "weld": 6}


def frozen_array(value: npt.ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """A read-only float64 copy of ``value`` of the given shape, finite; else a ModelError naming ``what``."""
    try:
        a = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ModelError(f"{what} must be {shape} finite numbers, got {value!r}") from None
    if a.shape != shape or not np.all(np.isfinite(a)):
        raise ModelError(f"{what} must be {shape} finite numbers, got {a.tolist() if a.size < 20 else a.shape}")
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class LoopClosure:
    """A cut joint closing a loop between ``link1`` and ``link2`` (model link indices, -1 for
    the fixed base).  (``rotation1``, ``translation1``) is the joint frame in link 1's frame,
    (``rotation2``, ``translation2``) the same joint frame as seen from link 2; ``axis`` (unit,
    in the joint frame) is the axis of a revolute or prismatic cut joint."""

    name: str
    type: str
    link1: int
    link2: int
    rotation1: np.ndarray
    translation1: np.ndarray
    rotation2: np.ndarray
    translation2: np.ndarray
    axis: np.ndarray = field(default_factory=lambda: np.array([0.0, 0.0, 1.0]))

    def __post_init__(self) -> None:
        """Checked on construction, the arrays copied read-only: the compiled loops pack them once
        per model, so an array changed in place later would silently not count."""
        if self.type not in LOOP_TYPES:
            raise ModelError(f"loop closure '{self.name}': unknown type {self.type!r} (one of {sorted(LOOP_TYPES)})")
        for what, shape in (
            ("rotation1", (3, 3)),
            ("translation1", (3,)),
            ("rotation2", (3, 3)),
            ("translation2", (3,)),
        ):
            object.__setattr__(
                self, what, frozen_array(getattr(self, what), shape, f"loop closure '{self.name}': {what}")
            )
        for what in ("rotation1", "rotation2"):
            R = getattr(self, what)
            if not np.allclose(R @ R.T, np.eye(3), atol=1e-9) or np.linalg.det(R) < 0:
                raise ModelError(f"loop closure '{self.name}': {what} is not a rotation matrix")
        axis = frozen_array(self.axis, (3,), f"loop closure '{self.name}': axis")
        if abs(np.linalg.norm(axis) - 1.0) > 1e-9:
            raise ModelError(f"loop closure '{self.name}': axis must be a unit vector, got {axis.tolist()}")
        object.__setattr__(self, "axis", axis)

    @property
    def n_rows(self) -> int:
        """Constraint rows before redundant ones are removed."""
        return LOOP_TYPES[self.type]

    @property
    def label(self) -> str:
        """``"loop 'name'"``, for messages."""
        return f"loop '{self.name}'"

    def normals(self) -> np.ndarray:
        """Two unit vectors normal to ``axis`` (joint frame), (2, 3)."""
        a = self.axis
        t = np.array([1.0, 0.0, 0.0]) if abs(a[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
        b1 = np.cross(a, t)
        b1 /= np.linalg.norm(b1)
        return np.array([b1, np.cross(a, b1)])


@dataclass(frozen=True, eq=False)
class JointCoupling:
    """A linear equality among one-DOF joints, ``sum_k coefficients[k] q[joints[k]] = value``
    (``joints``: model link indices, whose revolute or prismatic joints each have one
    coordinate; MuJoCo's ``<tendon>`` equality over a fixed tendon).  One constraint row of
    the loop layer beside the cut joints' (``model.loops``): ``phi = sum c_k q_k - value``,
    ``C = sum c_k e_k`` (constant), ``Cdot qdot = 0``.  A coupling of two joints can also be
    a :class:`Mimic` relation (reduced coordinates, Pinocchio's layout); a coupling of three
    or more cannot."""

    name: str
    joints: tuple[int, ...]
    coefficients: np.ndarray
    value: float = 0.0

    def __post_init__(self) -> None:
        """Checked on construction, the coefficients copied read-only (see :class:`LoopClosure`)."""
        joints = tuple(int(k) for k in self.joints)
        if not joints or len(set(joints)) != len(joints) or min(joints) < 0:
            raise ModelError(f"joint coupling '{self.name}': joints must be distinct link indices, got {joints}")
        object.__setattr__(self, "joints", joints)
        c = frozen_array(self.coefficients, (len(joints),), f"joint coupling '{self.name}': coefficients")
        if not np.all(c != 0.0):
            raise ModelError(f"joint coupling '{self.name}': a coefficient is zero ({c.tolist()})")
        object.__setattr__(self, "coefficients", c)
        value = float(frozen_array(self.value, (), f"joint coupling '{self.name}': value"))
        object.__setattr__(self, "value", value)

    @property
    def type(self) -> str:
        """``"coupling"`` (the cut joints' types are those of :data:`LOOP_TYPES`)."""
        return "coupling"

    @property
    def n_rows(self) -> int:
        """One constraint row."""
        return 1

    @property
    def label(self) -> str:
        """``"joint coupling 'name'"``, for messages."""
        return f"joint coupling '{self.name}'"


class _Links(Protocol):
    """What a loop closure is placed on (a :class:`~denoc_bridge.Model`; ``multibody.model``
    imports this module)."""

    @property
    def name(self) -> str: ...
    @property
    def base_name(self) -> str: ...
    @property
    def link_names(self) -> Sequence[str]: ...
    @property
    def frames(self) -> Sequence[Any]: ...
    @property
    def loops(self) -> Sequence[LoopClosure | JointCoupling]: ...


def body_name(model: _Links, link: int) -> str:
    """The name of model link ``link``, or of the base for -1."""
    _check_model(model)
    return model.base_name if link < 0 else model.link_names[link]


def _numbers(value: npt.ArrayLike, shape: tuple[int, ...], what: str) -> np.ndarray:
    """``value`` as a float64 array of ``shape`` with finite entries, or a ModelError naming ``what``."""
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        a = np.full(1, np.nan)  # strings, None, ragged lists: refused below
    if a.shape != shape or not np.all(np.isfinite(a)):
        expected = f"{'x'.join(map(str, shape))} finite numbers" if shape else "a finite number"
        raise ModelError(f"{what} must be {expected}, got {value!r}")
    return a


def _placement(
    model: _Links,
    where: str,
    xyz: npt.ArrayLike | None,
    rpy: npt.ArrayLike | None,
    rotation: npt.ArrayLike | None,
    label: str = "loop closure",
) -> tuple[int, np.ndarray, np.ndarray]:
    """(link index, R, p) of a frame given on a link or frame named ``where`` (errors start with
    ``label``)."""
    if where in ("world", "universe", model.base_name):
        link, R0, p0 = -1, np.eye(3), np.zeros(3)
    elif where in model.link_names:
        link, R0, p0 = model.link_names.index(where), np.eye(3), np.zeros(3)
    else:
        frame = next((f for f in model.frames if f.name == where), None)
        if frame is None:
            names = [*model.link_names, *(f.name for f in model.frames)]
            raise ModelError(
                f"{label}: no link or frame named '{where}' in '{model.name}'{did_you_mean(str(where), names)}"
            )
        link, R0, p0 = frame.link, np.asarray(frame.rotation, float), np.asarray(frame.translation, float)
    on = f"{label}: the frame on '{where}'"
    p = np.zeros(3) if xyz is None else _numbers(xyz, (3,), f"{on}: xyz")
    if rotation is not None:
        R = _numbers(rotation, (3, 3), f"{on}: rotation")
    else:
        R = rpy_to_matrix(np.zeros(3) if rpy is None else _numbers(rpy, (3,), f"{on}: rpy"))
    if not np.allclose(R @ R.T, np.eye(3), atol=1e-9):
        raise ModelError(f"{label}: the rotation given on '{where}' is not a rotation matrix")
    return link, R0 @ R, p0 + R0 @ p


def make_loop_closure(
    model: _Links,
    name: str,
    type: str,
    link1: str,
    link2: str,
    *,
    xyz1: npt.ArrayLike | None = None,
    rpy1: npt.ArrayLike | None = None,
    xyz2: npt.ArrayLike | None = None,
    rpy2: npt.ArrayLike | None = None,
    rotation1: npt.ArrayLike | None = None,
    rotation2: npt.ArrayLike | None = None,
    axis: npt.ArrayLike = (0.0, 0.0, 1.0),
) -> LoopClosure:
    """Validate and build a :class:`LoopClosure` (see :meth:`Model.add_loop_closure`)."""
    _check_model(model)
    if not isinstance(name, str) or not name:
        raise ModelError(f"a loop closure's name must be a non-empty string, got {name!r}")
    if type not in LOOP_TYPES:
        raise ModelError(f"loop closure '{name}': unknown type {type!r} (one of {sorted(LOOP_TYPES)})")
    l1, R1, p1 = _placement(model, link1, xyz1, rpy1, rotation1, f"loop closure '{name}'")
    l2, R2, p2 = _placement(model, link2, xyz2, rpy2, rotation2, f"loop closure '{name}'")
    if l1 == l2:
        raise ModelError(
            f"loop closure '{name}': '{link1}' and '{link2}' are the same rigid body; a cut joint "
            "must join two different bodies"
        )
    try:
        a = np.asarray(axis, dtype=float)
    except (TypeError, ValueError):
        a = np.zeros(0)  # refused below
    n = np.linalg.norm(a) if a.shape == (3,) and np.all(np.isfinite(a)) else 0.0
    if not n > 1e-12:
        raise ModelError(f"loop closure '{name}': the axis must be 3 finite numbers of non-zero length, got {axis!r}")
    if any(lc.name == name for lc in model.loops):
        raise ModelError(f"loop closure '{name}' is declared twice")
    return LoopClosure(str(name), type, int(l1), int(l2), R1, p1, R2, p2, a / n)


def make_joint_coupling(
    model: Any, name: str, joints: Sequence[str], coefficients: npt.ArrayLike, value: float = 0.0
) -> JointCoupling:
    """Validate and build a :class:`JointCoupling` (see :meth:`Model.add_joint_coupling`)."""
    _check_model(model)
    if not isinstance(name, str) or not name:
        raise ModelError(f"a joint coupling's name must be a non-empty string, got {name!r}")
    if isinstance(joints, str) or not isinstance(joints, Sequence) or not joints:
        raise ModelError(f"joint coupling '{name}': joints must be a non-empty list of joint names, got {joints!r}")
    names = list(model.joint_names)
    links = []
    for j in joints:
        if j not in names:
            raise ModelError(
                f"joint coupling '{name}': no joint named {j!r} in '{model.name}'{did_you_mean(str(j), names)}"
            )
        links.append(names.index(j))
    if any(lc.name == name for lc in model.loops):
        raise ModelError(f"joint coupling '{name}': the name is already used by a loop closure or coupling")
    c = _numbers(coefficients, (len(links),), f"joint coupling '{name}': coefficients (one per joint)")
    v = _numbers(value, (), f"joint coupling '{name}': value")
    lc = JointCoupling(str(name), tuple(links), c, float(v))
    check_coupling_joints(model, lc)
    return lc


def check_coupling_joints(model: Any, lc: JointCoupling) -> None:
    """A ModelError unless every joint of ``lc`` is a revolute or prismatic joint with one
    coordinate (nq = nv = 1) of ``model``."""
    for k in lc.joints:
        if k >= model.n_links:
            raise ModelError(f"joint coupling '{lc.name}': link index {k} is not a link of '{model.name}'")
        if int(model.nq_joint[k]) != 1 or int(model.nv_joint[k]) != 1:
            raise ModelError(
                f"joint coupling '{lc.name}': joint '{model.joint_names[k]}' has nq={int(model.nq_joint[k])}, "
                f"nv={int(model.nv_joint[k])}; a coupling holds revolute or prismatic joints (one coordinate each)"
            )


def describe_loops(loops: Sequence[LoopClosure | JointCoupling]) -> str:
    """``"1 loop closure"``, ``"4 joint couplings"``, ``"1 loop closure and 2 joint couplings"``."""
    n_cuts = sum(1 for lc in loops if isinstance(lc, LoopClosure))
    n_couplings = len(loops) - n_cuts
    parts = [count(n, noun) for n, noun in ((n_cuts, "loop closure"), (n_couplings, "joint coupling")) if n]
    return " and ".join(parts)
