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
  the URDF axis of a planar joint is ignored, with a warning).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from pathlib import Path
from xml.etree import ElementTree as ET
from xml.parsers import expat

import numpy as np

from denoc_bridge.errors import InputTypeError, ModelError, URDFError
from denoc_bridge.multibody.joints import JointType, joint_nq, joint_nv
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Frame, Mimic, Model
from denoc_bridge.spatial import rpy_to_matrix

__all__ = ["load_urdf", "parse_xml"]

_JOINT_TYPES = {
    "revolute": JointType.REVOLUTE,
    "continuous": JointType.CONTINUOUS,
    "prismatic": JointType.PRISMATIC,
    "floating": JointType.FREEFLYER,
    "planar": JointType.PLANAR,
    "fixed": None,
}
_KEEP_TOP_LEVEL = ("link", "joint", "material")
_PARSER_LOCK = threading.Lock()


# ----------------------------------------------------------------------------- XML
def parse_xml(text, origin: str = "<string>") -> ET.Element:
    """Parse XML text into an ElementTree element, refusing DTD entity declarations.

    Entity declarations (internal or external) are rejected before any
    expansion, so entity bombs fail at once and no file or URL is ever read.
    """
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()

    def refuse_entities(name, *args):
        raise URDFError(f"{origin}: DTD entity declarations are not allowed in URDF (entity '{name}')")

    def refuse_external(*args):
        raise URDFError(f"{origin}: external DTD or entity references are not allowed in URDF")

    parser.EntityDeclHandler = refuse_entities
    parser.UnparsedEntityDeclHandler = refuse_entities
    parser.ExternalEntityRefHandler = refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(text, True)
        root = builder.close()
    except expat.ExpatError as exc:
        raise URDFError(f"{origin}: malformed XML ({exc})") from None
    except AssertionError:  # TreeBuilder.close() with no element
        raise URDFError(f"{origin}: the document holds no XML element") from None
    return root


def _read_source(source):
    """(text, origin, path or None) from a path, an XML string or bytes."""
    if isinstance(source, bytes):
        return source, "<bytes>", None
    if isinstance(source, str) and not source.strip():
        raise URDFError("the URDF source is an empty string")
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source, "<string>", None
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.is_file():
            raise FileNotFoundError(f"URDF file not found: {path}")
        return path.read_bytes(), str(path), str(path.resolve())
    raise URDFError(f"load_urdf expects a file path or URDF XML text, got {type(source).__name__}")


# ------------------------------------------------------------ checks of the raw XML
#: A decimal number as urdfdom reads it (ASCII digits only: Python's float() also takes "1_0"
#: and non-ASCII digits, which urdfdom refuses), or inf/nan (refused below as not finite).
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?(inf|infinity|nan)", re.ASCII | re.IGNORECASE)
#: Largest magnitude of a number that enters the dynamics: products such as m r^2 of the
#: composite inertias stay far from float64 overflow (1.8e308), which would turn the
#: results into NaN without an error.
LARGEST_NUMBER = 1e50


def _floats(elem, attr: str, n: int, where: str, default=None, bounded: bool = True):
    """Attribute ``attr`` of ``elem`` as ``n`` finite floats (``default`` when absent), of
    magnitude at most :data:`LARGEST_NUMBER` when ``bounded``."""
    raw = elem.get(attr) if elem is not None else None
    if raw is None:
        if default is None:
            raise URDFError(f"{where}: missing attribute '{attr}'")
        return np.array(default, dtype=float)
    parts = [p for p in re.split(r"[ \t\r\n]+", raw) if p]  # XML whitespace only, as urdfdom
    if not all(_NUMBER.fullmatch(p) for p in parts):
        raise URDFError(f'{where}: attribute {attr}="{raw}" is not {n} number(s)')
    values = np.array([float(p) for p in parts], dtype=float)
    if values.shape != (n,):
        raise URDFError(f'{where}: attribute {attr}="{raw}" must hold {n} number(s)')
    if not np.all(np.isfinite(values)):
        raise URDFError(f'{where}: attribute {attr}="{raw}" is not finite')
    if bounded and np.abs(values).max() > LARGEST_NUMBER:
        raise URDFError(
            f'{where}: attribute {attr}="{raw}" is out of range (magnitude above '
            f"{LARGEST_NUMBER:g}: the dynamics would overflow)"
        )
    return values


def _check_dynamics_elements(robot: ET.Element) -> None:
    """Clear errors, naming the element, for everything that carries dynamics."""
    links = robot.findall("link")
    if not links:
        raise URDFError("the URDF has no <link> element")
    for i, link in enumerate(links):
        name = link.get("name")
        if not name:
            raise URDFError(f"<link> number {i + 1} has no name")
        inertial = link.find("inertial")
        if inertial is not None:
            where = f"link '{name}' <inertial>"
            mass = inertial.find("mass")
            if mass is None:
                raise URDFError(f"{where}: missing <mass>")
            m = _floats(mass, "value", 1, f"{where} <mass>")[0]
            if m < 0:
                raise URDFError(f"{where}: negative mass {m}")
            inertia = inertial.find("inertia")
            if inertia is None:
                raise URDFError(f"{where}: missing <inertia>")
            for key in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz"):
                _floats(inertia, key, 1, f"{where} <inertia>")
            origin = inertial.find("origin")
            if origin is not None:
                _floats(origin, "xyz", 3, f"{where} <origin>", (0, 0, 0))
                _floats(origin, "rpy", 3, f"{where} <origin>", (0, 0, 0))
    for i, joint in enumerate(robot.findall("joint")):
        name = joint.get("name")
        if not name:
            raise URDFError(f"<joint> number {i + 1} has no name")
        where = f"joint '{name}'"
        jtype = joint.get("type")
        if jtype not in _JOINT_TYPES:
            raise URDFError(
                f"{where}: unknown joint type '{jtype}' (expected one of {', '.join(sorted(_JOINT_TYPES))})"
            )
        for tag in ("parent", "child"):
            e = joint.find(tag)
            if e is None or not e.get("link"):
                raise URDFError(f'{where}: missing <{tag} link="..."/>')
        origin = joint.find("origin")
        if origin is not None:
            _floats(origin, "xyz", 3, f"{where} <origin>", (0, 0, 0))
            _floats(origin, "rpy", 3, f"{where} <origin>", (0, 0, 0))
        axis = joint.find("axis")
        if axis is not None:  # xyz is required (urdf-parser-py fails on it, urdfdom takes a zero axis)
            a = _floats(axis, "xyz", 3, f"{where} <axis>")
            if jtype in ("revolute", "continuous", "prismatic") and not np.linalg.norm(a) > 1e-12:
                raise URDFError(f'{where}: <axis xyz="{axis.get("xyz")}"> has zero length')
        for tag, attrs in (
            ("limit", ("lower", "upper")),
            ("dynamics", ("damping", "friction")),
            ("mimic", ("multiplier", "offset")),
        ):
            e = joint.find(tag)
            if e is not None:
                for attr in attrs:
                    if e.get(attr) is not None:  # limits may be +-max double ("no limit")
                        _floats(e, attr, 1, f"{where} <{tag}>", bounded=tag != "limit")


# --------------------------------------------------------- repairs (no dynamics lost)
def _urdf_module():
    from urdf_parser_py import urdf
    from urdf_parser_py.xml_reflection import core

    return urdf, core


def _parses(cls, elem, core) -> bool:
    try:
        cls.from_xml(elem, core.Path(elem.tag))
        return True
    except Exception:
        return False


def _repair_material(mat: ET.Element, core, urdf, where: str, notes: list) -> bool:
    """Drop the parts of a <material> that urdf-parser-py rejects; False if nothing is left."""
    if _parses(urdf.Material, mat, core):
        return True
    for child in list(mat):
        if child.tag == "texture" and not child.get("filename"):
            mat.remove(child)
            notes.append(f"{where}: dropped a <texture> without filename")
        elif child.tag == "color" and child.get("rgba") is None:
            mat.remove(child)
            notes.append(f"{where}: dropped a <color> without rgba")
    return _parses(urdf.Material, mat, core)


def _repair(robot: ET.Element, path, notes: list) -> None:
    """Remove, in place, what urdf-parser-py rejects but carries no dynamics."""
    urdf, core = _urdf_module()
    for child in list(robot):
        if child.tag not in _KEEP_TOP_LEVEL:
            robot.remove(child)
    if not robot.get("name"):
        robot.set("name", Path(path).stem if path else "robot")
        notes.append(f"<robot> has no name; using '{robot.get('name')}'")
    if robot.get("version") not in (None, "1.0"):
        notes.append(f'<robot version="{robot.get("version")}"> treated as version 1.0')
        del robot.attrib["version"]
    for mat in robot.findall("material"):
        if not _repair_material(mat, core, urdf, f"material '{mat.get('name')}'", notes):
            robot.remove(mat)
            notes.append(f"dropped unusable material '{mat.get('name')}'")
    for link in robot.findall("link"):
        name = link.get("name")
        for tag, cls in (("visual", urdf.Visual), ("collision", urdf.Collision)):
            for i, elem in enumerate(link.findall(tag)):
                where = f"link '{name}' <{tag}> {i + 1}"
                mat = elem.find("material")
                if mat is not None and not _repair_material(mat, core, urdf, where, notes):
                    elem.remove(mat)
                    notes.append(f"{where}: dropped an unusable <material>")
                if not _parses(cls, elem, core):
                    link.remove(elem)
                    notes.append(f"{where}: dropped (it does not parse and carries no dynamics)")


@contextlib.contextmanager
def _captured_parser_messages(messages: list):
    """urdf-parser-py prints its messages to stderr; collect them instead.

    Its ``on_error`` hook is bound both in ``xml_reflection.core`` and in the
    ``xml_reflection`` package (``from .core import *``); both are replaced.
    """
    import urdf_parser_py.xml_reflection as xmlr

    _, core = _urdf_module()
    with _PARSER_LOCK:
        saved = core.on_error, xmlr.on_error
        core.on_error = xmlr.on_error = messages.append
        try:
            yield
        finally:
            core.on_error, xmlr.on_error = saved


# ------------------------------------------------------------------- tree building
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

    def __init__(self, name, joint, parent, jtype, axis, R0, r0):
        self.name, self.joint, self.parent, self.jtype = name, joint, parent, jtype
        self.axis, self.R0, self.r0 = axis, R0, r0
        self.mass = 0.0
        self.first_moment = np.zeros(3)
        self.inertia_origin = np.zeros((3, 3))
        self.lower, self.upper, self.damping, self.friction = -np.inf, np.inf, 0.0, 0.0

    def add_inertia(self, mass, com, inertia_com, R, p):
        """Lump a link inertia given in a frame placed at (R, p) in this body's frame."""
        c = R @ com + p
        Ic = R @ inertia_com @ R.T
        self.mass += mass
        self.first_moment += mass * c
        self.inertia_origin += Ic + mass * (c @ c * np.eye(3) - np.outer(c, c))

    def com_inertia(self):
        if self.mass > 0:
            c = self.first_moment / self.mass
            return c, self.inertia_origin - self.mass * (c @ c * np.eye(3) - np.outer(c, c))
        return np.zeros(3), self.inertia_origin.copy()


def _pose(origin):
    if origin is None:
        return np.eye(3), np.zeros(3)
    xyz = origin.xyz if origin.xyz is not None else (0, 0, 0)
    rpy = origin.rpy if origin.rpy is not None else (0, 0, 0)
    return rpy_to_matrix(rpy), np.array(xyz, dtype=float)


def _link_inertia(link):
    inertial = link.inertial
    if inertial is None or inertial.inertia is None:
        return 0.0, np.zeros(3), np.zeros((3, 3))
    R, p = _pose(inertial.origin)
    I = np.array(inertial.inertia.to_matrix(), dtype=float)
    return float(inertial.mass or 0.0), p, R @ I @ R.T


def _tree(robot):
    """Children (sorted by joint name) of each link, and the root link; checks the graph."""
    link_names = set()
    for link in robot.links:
        if link.name in link_names:
            raise URDFError(f"duplicate link name '{link.name}'")
        link_names.add(link.name)
    joint_names, parent_joint, children = set(), {}, {name: [] for name in link_names}
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


def _build(robot, floating_base: bool, notes: list, source, inertia_check: str) -> Model:
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
    stack = [("link", root, base_body, I3, z3)]
    visited = set()
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


def _visit_joint(joint, parent_body, Rj, pj, bodies, frames, mimic, notes):
    """Enter a joint during the depth-first walk; returns the stack entry of its child link."""
    jtype = _JOINT_TYPES[joint.type]
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


def _model_from_bodies(robot, root, bodies, frames, mimic, notes, floating_base, source, inertia_check) -> Model:

    n = len(bodies)
    com, inertia = [], []
    for b in bodies:
        c, Ic = b.com_inertia()
        com.append(c)
        inertia.append(0.5 * (Ic + Ic.T))
    lower, upper, damping, friction = [], [], [], []
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


def load_urdf(source, floating_base: bool = False, *, strict: bool = False, mimic: bool = False):
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
        itself or of another mimic joint raises :class:`~denoc_bridge.errors.URDFError` naming it
        (Pinocchio refuses these too), as does a ``<mimic>`` on a planar or floating joint (which
        Pinocchio ignores); a mimicked joint may come after its mimic joint in the joint order
        (which Pinocchio refuses).  See :mod:`denoc_bridge.constraints.mimic`.

    Everything that ``pin.buildModelFromUrdf`` accepts loads.  Parts that
    urdf-parser-py rejects but that carry no dynamics are repaired or dropped
    and listed in ``model.warnings``: top-level elements other than links,
    joints and materials (transmissions, gazebo, ...), a missing robot name,
    textures without a file name, visuals and collisions that do not parse.
    Anything that does carry dynamics and is wrong raises
    :class:`~denoc_bridge.errors.URDFError` naming the joint or link; its numbers must be
    decimal numbers as urdfdom reads them (no "1_0" or non-ASCII digits), finite, and, except
    joint limits, at most :data:`LARGEST_NUMBER` (1e50) in magnitude.
    """
    for name, flag in (("floating_base", floating_base), ("strict", strict), ("mimic", mimic)):
        if not isinstance(flag, (bool, np.bool_)):
            raise InputTypeError(f"{name} must be True or False, got {flag!r}")
    text, origin, path = _read_source(source)
    if not text.strip():
        raise URDFError(f"{origin}: the document is empty")
    robot_elem = parse_xml(text, origin)
    if robot_elem.tag != "robot":
        raise URDFError(f"{origin}: the root element is <{robot_elem.tag}>, expected <robot>")
    _check_dynamics_elements(robot_elem)
    loop_specs = _take_loop_joints(robot_elem, origin)
    notes: list[str] = []
    urdf, core = _urdf_module()
    messages: list[str] = []
    with _captured_parser_messages(messages):
        _repair(robot_elem, path, notes)
        messages.clear()  # the trial parses of the repair are not the document's messages
        try:
            robot = urdf.URDF.from_xml(robot_elem, core.Path("robot"))
        except Exception as exc:
            raise URDFError(f"{origin}: {exc}") from None
    if messages:
        notes.append(f"urdf-parser-py: {len(messages)} message(s), first: {messages[0].strip()}")
    model = _build(robot, bool(floating_base), notes, path, "raise" if strict else "warn")
    for spec in loop_specs:
        try:
            model.add_loop_closure(**spec)
        except ModelError as exc:
            raise URDFError(f'{origin}: <loop_joint name="{spec["name"]}">: {exc}') from None
    if mimic:
        try:
            return MimicModel(model)
        except ModelError as exc:
            raise URDFError(f"{origin}: {exc}") from None
    return model


def _numbers(elem, attr, default, where):
    text = elem.get(attr)
    if text is None:
        return default
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        values = []
    if len(values) != 3 or not all(np.isfinite(values)):
        raise URDFError(f'{where}: {attr}="{text}" must be 3 finite numbers')
    return values


def _take_loop_joints(robot_elem, origin) -> list:
    """Remove the ``<loop_joint>`` elements (denoc_bridge's extension, see README "Closed
    loops") from the tree and return them as keyword arguments of ``Model.add_loop_closure``::

        <loop_joint name="R5" type="revolute">
          <link1 link="body4" xyz="2 0 0" rpy="0 0 0"/>
          <link2 link="body1" xyz="1.4142 0 0" rpy="0 0 -1.5708"/>
          <axis xyz="0 0 1"/>
        </loop_joint>
    """
    specs = []
    for elem in list(robot_elem.findall("loop_joint")):
        name = elem.get("name")
        where = f'{origin}: <loop_joint name="{name}">'
        if not name:
            raise URDFError(f"{origin}: a <loop_joint> has no name")
        spec = dict(name=name, type=elem.get("type") or "")
        for side in ("link1", "link2"):
            e = elem.find(side)
            if e is None or not e.get("link"):
                raise URDFError(f'{where}: needs <{side} link="..."/>')
            spec[side] = e.get("link")
            spec["xyz" + side[-1]] = _numbers(e, "xyz", None, f"{where} <{side}>")
            spec["rpy" + side[-1]] = _numbers(e, "rpy", None, f"{where} <{side}>")
        axis = elem.find("axis")
        if axis is not None:
            spec["axis"] = _numbers(axis, "xyz", [0.0, 0.0, 1.0], f"{where} <axis>")
        specs.append(spec)
        robot_elem.remove(elem)
    return specs
