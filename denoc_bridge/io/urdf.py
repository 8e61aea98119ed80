"""Loading URDF robots into a :class:`~denoc_bridge.multibody.model.Model`.

The document is read with a hardened XML parser (no DTD entities, nothing is
fetched), repaired where it carries no dynamics (see :func:`load_urdf`),
parsed with urdf-parser-py, and turned into a tree of moving links exactly as
``pin.buildModelFromUrdf`` does:

* the tree is walked depth first from the root link, siblings in the order of
  their joint names (urdfdom keeps joints in a sorted map), so q and v have
  Pinocchio's layout;
* fixed joints are merged into the nearest moving parent (inertia lumped);
  links fixed to the root of a fixed-base robot belong to the base and their
  inertia drops out of the dynamics;
* revolute/continuous/prismatic axes are normalised; continuous joints take
  (cos, sin); ``floating`` joints and the optional root joint are free-flyers;
  ``planar`` joints move in the xy-plane of the joint frame (as in Pinocchio,
  the URDF axis of a planar joint is ignored, with a warning)."""

from __future__ import annotations

import os
import warnings
from typing import Any, Literal, overload

import numpy as np

from denoc_bridge.errors import InputTypeError, ModelError, PhysicsWarning, URDFError, URDFModelError
from denoc_bridge.io.urdf_xml import (
    JOINT_TYPES,
    captured_parser_messages,
    check_dynamics_elements,
    decode,
    parse_xml,
    read_source,
    repair,
    take_loop_joints,
    urdf_module,
)
from denoc_bridge.multibody.joints import JointType, joint_nq, joint_nv
from denoc_bridge.multibody.mimic import MimicModel, mimic_problems
from denoc_bridge.multibody.model import Frame, Mimic, Model
from denoc_bridge.spatial import rpy_to_matrix

__all__ = ["load_urdf", "parse_xml"]


class _Body:
    __slots__ = (
        "name",
        "joint",
        "parent",
        "jtype",
        "axis",
        "R0",
        "r0",
        "mass",
        "first_moment",
        "inertia_origin",
        "lower",
        "upper",
        "damping",
        "friction",
    )

    def __init__(
        self,
        name: str,
        joint: str,
        parent: int,
        jtype: JointType,
        axis: np.ndarray,
        R0: np.ndarray,
        r0: np.ndarray,
    ) -> None:
        self.name, self.joint, self.parent, self.jtype = name, joint, parent, jtype
        self.axis, self.R0, self.r0 = axis, R0, r0
        self.mass = 0.0
        self.first_moment = np.zeros(3)
        self.inertia_origin = np.zeros((3, 3))
        self.lower, self.upper, self.damping, self.friction = -np.inf, np.inf, 0.0, 0.0

    def add_inertia(self, mass: float, com: np.ndarray, inertia_com: np.ndarray, R: np.ndarray, p: np.ndarray) -> None:
        """Lump a link inertia given in a frame placed at (R, p) in this body's frame."""
        c = R @ com + p
        Ic = R @ inertia_com @ R.T
        self.mass += mass
        self.first_moment += mass * c
        self.inertia_origin += Ic + mass * (c @ c * np.eye(3) - np.outer(c, c))

    def com_inertia(self) -> tuple[np.ndarray, np.ndarray]:
        if self.mass > 0:
            c = self.first_moment / self.mass
            return c, self.inertia_origin - self.mass * (c @ c * np.eye(3) - np.outer(c, c))
        return np.zeros(3), self.inertia_origin.copy()


def _pose(origin: Any) -> tuple[np.ndarray, np.ndarray]:
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = origin.xyz if origin.xyz is not None else (0, 0, 0)
    rpy = origin.rpy if origin.rpy is not None else (0, 0, 0)
    return rpy_to_matrix(rpy), np.array(xyz, dtype=float)


def _link_inertia(link: Any) -> tuple[float, np.ndarray, np.ndarray]:
    inertial = link.inertial
    if inertial is None or inertial.inertia is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    R, p = _pose(inertial.origin)
    I = np.array(inertial.inertia.to_matrix(), dtype=float)
    return float(inertial.mass or 0.0), p, R @ I @ R.T


def _tree(robot: Any) -> tuple[str, dict[str, list[Any]]]:
    """Children (sorted by joint name) of each link, and the root link; checks the graph."""
    link_names: set[str] = set()
    for link in robot.links:
        if link.name in link_names:
            raise URDFError(f"duplicate link name '{link.name}'")
        link_names.add(link.name)
    joint_names: set[str] = set()
    parent_joint: dict[str, Any] = {}
    children: dict[str, list[Any]] = {name: [] for name in link_names}
    for joint in robot.joints:
        if joint.name in joint_names:
            raise URDFError(f"duplicate joint name '{joint.name}'")
        joint_names.add(joint.name)
        for role, link in (("parent", joint.parent), ("child", joint.child)):
            if link not in link_names:
                raise URDFError(f"joint '{joint.name}': {role} link '{link}' does not exist")
        if joint.child in parent_joint:
            raise URDFError(
                f"link '{joint.child}' has two parents (joints '{parent_joint[joint.child].name}' and "
                f"'{joint.name}'): URDF describes trees; declare loops as loop closures instead"
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    roots = sorted(name for name in link_names if name not in parent_joint)
    if len(roots) > 1:
        raise URDFError(f"the URDF has {len(roots)} root links ({', '.join(roots[:5])}); it must have exactly one")
    if not roots:
        cycle = sorted(link_names)
        raise URDFError(
            f"the URDF has no root link: every link ({', '.join(repr(c) for c in cycle[:6])}"
            f"{', ...' if len(cycle) > 6 else ''}) has a parent joint, so its joints form a cycle"
        )
    for joints in children.values():
        joints.sort(key=lambda j: j.name)
    return roots[0], children


def _build(robot: Any, floating_base: bool, notes: list[str], source: str | None, inertia_check: str) -> Model:
    root, children = _tree(robot)
    links = {link.name: link for link in robot.links}
    bodies: list[_Body] = []
    frames: list[Frame] = []
    mimic: list[Mimic] = []
    I3, z3 = np.eye(3), np.zeros(3)
    if floating_base:
        bodies.append(_Body(root, "root_joint", -1, JointType.FREEFLYER, z3, I3, z3))
    base_body = 0 if floating_base else -1
    # depth-first walk; entries are ("link", name, body, R, p) with the link placed at (R, p)
    # in the body frame, or ("joint", joint, parent body, R, p) with the joint frame at (R, p)
    stack: list[tuple[str, Any, int, np.ndarray, np.ndarray]] = [("link", root, base_body, I3, z3)]
    visited: set[str] = set()
    no_inertial = []  # links of moving bodies without <inertial>: zero inertia, as in Pinocchio
    while stack:
        kind, item, body, R, p = stack.pop()
        if kind == "joint":
            stack.append(_visit_joint(item, body, R, p, bodies, frames, mimic, notes))
            continue
        visited.add(item)
        frames.append(Frame(item, "link", body, R, p))
        if body >= 0:
            if links[item].inertial is None:
                no_inertial.append(item)
            m, c, Ic = _link_inertia(links[item])
            bodies[body].add_inertia(m, c, Ic, R, p)
        for joint in reversed(children[item]):  # popped in joint-name order
            Rj, pj = _pose(joint.origin)
            stack.append(("joint", joint, body, R @ Rj, R @ pj + p))
    if len(visited) != len(links):
        cycle = sorted(set(links) - visited)
        raise URDFError(
            f"links {', '.join(repr(c) for c in cycle[:6])} are not reachable from the root link "
            f"'{root}': their joints form a cycle"
        )
    if no_inertial:
        more = f" and {len(no_inertial) - 5} more" if len(no_inertial) > 5 else ""
        notes.append(
            f"{len(no_inertial)} moving link(s) without <inertial> ({', '.join(repr(n) for n in no_inertial[:5])}"
            f"{more}): zero mass and inertia, as in Pinocchio"
        )
    return _model_from_bodies(robot, root, bodies, frames, mimic, notes, floating_base, source, inertia_check)


def _visit_joint(
    joint: Any,
    parent_body: int,
    Rj: np.ndarray,
    pj: np.ndarray,
    bodies: list[_Body],
    frames: list[Frame],
    mimic: list[Mimic],
    notes: list[str],
) -> tuple[str, Any, int, np.ndarray, np.ndarray]:
    """Enter a joint during the depth-first walk; returns the stack entry of its child link."""
    jtype = JOINT_TYPES[joint.type]
    if jtype is None:  # fixed: the child link is merged into the parent body
        frames.append(Frame(joint.name, "fixed_joint", parent_body, Rj, pj))
        return ("link", joint.child, parent_body, Rj, pj)
    axis = np.array(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0), dtype=float)
    if jtype == JointType.PLANAR:
        if not np.allclose(axis / max(np.linalg.norm(axis), 1e-300), (0, 0, 1)):
            notes.append(
                f"joint '{joint.name}' (planar): axis {axis.tolist()} ignored, the joint moves in the "
                "xy-plane of its frame (as in Pinocchio)"
            )
        axis = np.zeros(3)
    elif jtype != JointType.FREEFLYER:
        axis = axis / np.linalg.norm(axis)
    else:
        axis = np.zeros(3)
    body = _Body(joint.child, joint.name, parent_body, jtype, axis, Rj, pj)
    if joint.limit is not None and jtype in (JointType.REVOLUTE, JointType.PRISMATIC):
        body.lower = float(joint.limit.lower if joint.limit.lower is not None else 0.0)
        body.upper = float(joint.limit.upper if joint.limit.upper is not None else 0.0)
    if joint.dynamics is not None:
        body.damping = float(joint.dynamics.damping or 0.0)
        body.friction = float(joint.dynamics.friction or 0.0)
    if joint.mimic is not None:
        mult, off = joint.mimic.multiplier, joint.mimic.offset  # urdfdom's defaults: 1 and 0 (0 stays 0)
        mimic.append(
            Mimic(
                joint.name, joint.mimic.joint, 1.0 if mult is None else float(mult), 0.0 if off is None else float(off)
            )
        )
    bodies.append(body)
    frames.append(Frame(joint.name, "joint", len(bodies) - 1, np.eye(3), np.zeros(3)))
    return ("link", joint.child, len(bodies) - 1, np.eye(3), np.zeros(3))


def _model_from_bodies(
    robot: Any,
    root: str,
    bodies: list[_Body],
    frames: list[Frame],
    mimic: list[Mimic],
    notes: list[str],
    floating_base: bool,
    source: str | None,
    inertia_check: str,
) -> Model:

    n = len(bodies)
    com: list[np.ndarray] = []
    inertia: list[np.ndarray] = []
    for b in bodies:
        c, Ic = b.com_inertia()
        com.append(c)
        inertia.append(0.5 * (Ic + Ic.T))
    lower: list[float] = []
    upper: list[float] = []
    damping: list[float] = []
    friction: list[float] = []
    for b in bodies:
        nq, nv = joint_nq(b.jtype), joint_nv(b.jtype)
        lower += [b.lower] if nq == 1 else [-np.inf] * nq
        upper += [b.upper] if nq == 1 else [np.inf] * nq
        damping += [b.damping] * nv
        friction += [b.friction] * nv
    return Model(
        name=robot.name,
        link_names=[b.name for b in bodies],
        joint_names=[b.joint for b in bodies],
        parent=np.array([b.parent for b in bodies], dtype=np.int64).reshape(n),
        joint_type=np.array([int(b.jtype) for b in bodies], dtype=np.int64).reshape(n),
        joint_axis=np.array([b.axis for b in bodies], dtype=float).reshape(n, 3),
        joint_rotation=np.array([b.R0 for b in bodies], dtype=float).reshape(n, 3, 3),
        joint_translation=np.array([b.r0 for b in bodies], dtype=float).reshape(n, 3),
        mass=np.array([b.mass for b in bodies], dtype=float).reshape(n),
        com=np.array(com, dtype=float).reshape(n, 3),
        inertia=np.array(inertia, dtype=float).reshape(n, 3, 3),
        damping=damping,
        friction=friction,
        lower_limit=lower,
        upper_limit=upper,
        base_name="universe" if floating_base else root,
        floating_base=floating_base,
        source=source,
        frames=frames,
        mimic=mimic,
        warnings=notes,
        inertia_check=inertia_check,
    )


@overload
def load_urdf(
    source: str | os.PathLike[str] | bytes,
    floating_base: bool = False,
    *,
    strict: bool = False,
    mimic: Literal[False] = False,
) -> Model: ...
@overload
def load_urdf(
    source: str | os.PathLike[str] | bytes, floating_base: bool = False, *, strict: bool = False, mimic: Literal[True]
) -> MimicModel: ...
@overload
def load_urdf(
    source: str | os.PathLike[str] | bytes, floating_base: bool = False, *, strict: bool = False, mimic: bool
) -> Model | MimicModel: ...
def load_urdf(
    source: str | os.PathLike[str] | bytes, floating_base: bool = False, *, strict: bool = False, mimic: bool = False
) -> Model | MimicModel:
    """Load a URDF robot (a file path or the XML text) as a :class:`Model`.

    Parameters
    ----------
    source : str, os.PathLike or bytes
        Path of a ``.urdf`` file, or the URDF XML itself (a string starting
        with ``<``, or bytes).
    floating_base : bool
        Attach the root link to the world with a free-flyer joint named
        ``root_joint`` (like ``pin.buildModelFromUrdf(path, pin.JointModelFreeFlyer())``).
    strict : bool
        Refuse non-physical inertias (:class:`~denoc_bridge.errors.URDFError`) instead of
        loading them with a :class:`~denoc_bridge.errors.PhysicsWarning`.
    mimic : bool
        Like ``pin.buildModelFromUrdf(path, mimic=True)``: return a
        :class:`~denoc_bridge.constraints.mimic.MimicModel` in which each ``<mimic>`` joint follows its
        mimicked joint (``q_s = multiplier q_m + offset``, a joint-space constraint), with q and v
        of the independent joints only.  Without it (default), ``<mimic>`` joints are
        independent joints, as in ``pin.buildModelFromUrdf(path)``, and the relations are
        only recorded in ``model.mimic``.  A mimic of an unknown, fixed or multi-DOF joint, of
        itself or in a cycle raises :class:`~denoc_bridge.errors.URDFModelError` naming it
        (Pinocchio refuses these too), as does a ``<mimic>`` on a planar or floating joint
        (which Pinocchio ignores); a mimicked joint may come after its mimic joint in the joint
        order, and a mimic of another mimic joint (a chain) follows the root of its chain with
        the composed multiplier and offset (both of which Pinocchio refuses).
        Without ``mimic=True`` such relations load (real robots carry them, and Pinocchio loads
        them) with a :class:`~denoc_bridge.errors.PhysicsWarning` and one line each in
        ``model.warnings``.  See :mod:`denoc_bridge.constraints.mimic`.

    Notes
    -----
    Everything that ``pin.buildModelFromUrdf`` accepts loads.  Parts that
    urdf-parser-py rejects but that carry no dynamics are repaired or dropped
    and listed in ``model.warnings``: top-level elements other than links,
    joints and materials (transmissions, gazebo, ...), a missing robot name,
    textures without a file name, visuals and collisions that do not parse.
    Anything that does carry dynamics and is wrong raises
    :class:`~denoc_bridge.errors.URDFError` naming the joint or link; its numbers must be
    decimal numbers as urdfdom reads them (no "1_0" or non-ASCII digits), finite, and, except
    joint limits, at most :data:`LARGEST_NUMBER` (1e50) in magnitude.  Joint data that
    contradicts itself and that Pinocchio refuses too raises
    :class:`~denoc_bridge.errors.URDFModelError` (a ``URDFError`` and a ``ModelError``) naming
    the joint: a NaN or infinite number of a joint, a negative effort, velocity or friction.
    What contradicts itself but Pinocchio loads, loads, with a
    :class:`~denoc_bridge.errors.PhysicsWarning` naming the joint or link and one line each in
    ``model.warnings``, read as its source means it: a ``<limit>`` with lower > upper is no
    limit (robot collections write it on purpose; no limit in simulation, ``lower_limit`` /
    ``upper_limit`` and ``random_configuration``); a NaN or infinite number in an
    ``<inertial>`` drops it as Pinocchio does (in the origin or the mass: the whole
    ``<inertial>``; in the inertia: the rotational inertia; ``strict=True`` refuses it); a
    negative damping, or a negative friction of a planar or floating joint, is 0; a
    ``<mimic>`` on a planar or floating joint is ignored.
    """
    for name, flag in (("floating_base", floating_base), ("strict", strict), ("mimic", mimic)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {flag!r}")
    text, origin, path = read_source(source)
    if not text.strip():
        raise URDFError(f"{origin}: the document is empty")
    decoded = ""
    if isinstance(text, bytes):
        text, decoded = decode(text, origin)
    robot_elem = parse_xml(text, origin)
    if robot_elem.tag != "robot":
        raise URDFError(f"{origin}: the root element is <{robot_elem.tag}>, expected <robot>")
    ignored = check_dynamics_elements(robot_elem, bool(strict))
    loop_specs = take_loop_joints(robot_elem, origin)
    notes: list[str] = [f"{origin}: {decoded}"] if decoded else []
    notes += ignored
    urdf, core = urdf_module()
    messages: list[str] = []
    with captured_parser_messages(messages):
        repair(robot_elem, path, notes)
        messages.clear()  # the trial parses of the repair are not the document's messages
        try:
            robot = urdf.URDF.from_xml(robot_elem, core.Path("robot"))
        except Exception as exc:
            raise URDFError(f"{origin}: {exc}") from None
    if messages:
        notes.append(f"urdf-parser-py: {len(messages)} message(s), first: {messages[0].strip()}")
    model = _build(robot, bool(floating_base), notes, path, "raise" if strict else "warn")
    if ignored:  # what Pinocchio loads although it contradicts itself, named (also in model.warnings)
        more = f"; and {len(ignored) - 3} more (model.warnings lists them)" if len(ignored) > 3 else ""
        warnings.warn(f"model '{model.name}': " + "; ".join(ignored[:3]) + more, PhysicsWarning, stacklevel=2)
    for spec in loop_specs:
        try:
            model.add_loop_closure(**spec)
        except ModelError as exc:
            raise URDFError(f'{origin}: <loop_joint name="{spec["name"]}">: {exc}') from None
    if mimic:
        try:
            return MimicModel(model)
        except ModelError as exc:
            raise URDFModelError(f"{origin}: {exc}") from None
    problems = mimic_problems(model)
    if problems:  # kept as records, as pin.buildModelFromUrdf(path) does (real robots carry them)
        model.warnings = model.warnings + tuple(problems)
        warnings.warn(
            f"model '{model.name}': {len(problems)} <mimic> relation(s) that load_urdf(..., mimic=True) and "
            f"Pinocchio's mimic=True refuse, first: {problems[0]} (listed in model.warnings)",
            PhysicsWarning,
            stacklevel=2,
        )
    return model
