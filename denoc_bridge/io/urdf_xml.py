"""A URDF file as XML, before it becomes a model: safe parsing (no external entities, no entity
expansion), the checks of its numbers that name the element, the repairs that lose no dynamics
(materials, textures, transmissions urdf-parser-py refuses), and the ``<loop_joint>`` elements."""

from __future__ import annotations

import codecs
import contextlib
import difflib
import os
import re
import threading
from pathlib import Path
from xml.etree import ElementTree as ET
from xml.parsers import expat

import numpy as np

from denoc_bridge.errors import URDFError, URDFFileNotFoundError, URDFModelError
from denoc_bridge.multibody.joints import JointType

JOINT_TYPES = {
    "revolute": JointType.REVOLUTE,
    "continuous": JointType.CONTINUOUS,
    "prismatic": JointType.PRISMATIC,
    "floating": JointType.FREEFLYER,
    "planar": JointType.PLANAR,
    "fixed": None,
}


_KEEP_TOP_LEVEL = ("link", "joint", "material")


_PARSER_LOCK = threading.Lock()


#: The element that wraps the document for expat, so that the document level takes what
#: TinyXML2 (urdfdom's parser) takes there: several elements, text, comments (urdfdom then reads
#: the first <robot> element).
_WRAPPER = "denoc_bridge_document"

#: C0 control characters other than tab, newline and carriage return: XML forbids them, TinyXML2
#: keeps them; they are carried through expat in the private-use area and put back after.
_CONTROL = re.compile("[\x01-\x08\x0b\x0c\x0e-\x1f]")
_CONTROL_CARRIER = 0xF700

#: "&" that does not start one of XML's predefined entities or a character reference: TinyXML2
#: keeps it (and any "&name;") as literal text, and so does this parser (no entity is expanded).
_LONE_AMPERSAND = re.compile(r"&(?!(?:amp|lt|gt|quot|apos);|#[0-9]+;|#x[0-9a-fA-F]+;)")

_DECLARED_ENCODING = re.compile(rb"""^[ \t\r\n]*<\?xml[^>]*?encoding[ \t\r\n]*=[ \t\r\n]*["']([A-Za-z0-9._-]+)["']""")


def decode(data: bytes, origin: str) -> tuple[str, str]:
    """(text, note) of a URDF file's bytes, as urdfdom reads them: UTF-8 (with or without a
    byte-order mark) whatever the declaration says (TinyXML2 ignores it), or UTF-16/32 with a
    byte-order mark, or, when the bytes are not UTF-8, the encoding the declaration names, or
    else UTF-8 with the bytes that are not replaced by U+FFFD (TinyXML2 keeps them as they
    are), which ``note`` says ("" otherwise)."""
    for bom, codec in (
        (codecs.BOM_UTF32_LE, "utf-32"),
        (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"),
    ):
        if data.startswith(bom):
            try:
                return data.decode(codec), ""
            except UnicodeDecodeError as exc:
                raise URDFError(
                    f"{origin}: the byte-order mark says {codec.upper()}, but byte {exc.start} is not"
                ) from None
    try:
        return data.decode("utf-8"), ""
    except UnicodeDecodeError as exc:
        bad = exc.start
    m = _DECLARED_ENCODING.match(data[:1024])
    declared = m.group(1).decode("ascii") if m else None
    try:
        info = codecs.lookup(declared) if declared else None
    except LookupError:
        info = None
    if info is not None and getattr(info, "_is_text_encoding", True) and info.name != "utf-8":
        try:
            return data.decode(info.name), ""
        except UnicodeDecodeError:
            pass
    why = f'declares encoding="{declared}"' if declared else "declares no other encoding"
    return data.decode("utf-8", errors="replace"), (
        f"byte {bad} (0x{data[bad]:02x}) and maybe others are not UTF-8 and the document {why}: "
        "replaced by U+FFFD (urdfdom keeps the bytes)"
    )


def _skip_doctype(text: str, i: int, origin: str) -> int:
    """The index after the ``<!DOCTYPE ...>`` at ``i`` (internal subset, quotes and comments
    included)."""
    depth, quote, k, n = 0, "", i + 9, len(text)
    while k < n:
        c = text[k]
        if quote:
            if c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif text.startswith("<!--", k):
            end = text.find("-->", k + 4)
            k = n if end < 0 else end + 2
        elif c == "[":
            depth += 1
        elif c == "]":
            depth -= 1
        elif c == ">" and depth <= 0:
            return k + 1
        k += 1
    raise URDFError(f"{origin}: malformed XML (the <!DOCTYPE ...> declaration is not closed)")


def _prolog_end(text: str, origin: str) -> int:
    """Where the first element starts, past what TinyXML2 takes before it: whitespace, XML
    declarations and processing instructions, comments, a DOCTYPE (never read: no entity is
    declared, expanded or fetched) and stray text."""
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t\r\n":
            i += 1
        elif text.startswith("<?", i) or text.startswith("<!--", i):
            close = "?>" if text[i + 1] == "?" else "-->"
            end = text.find(close, i + 2)
            if end < 0:
                raise URDFError(
                    f"{origin}: malformed XML (a '{text[i : i + 4]}' before the root element is not closed)"
                )
            i = end + len(close)
        elif text.startswith("<!DOCTYPE", i):
            i = _skip_doctype(text, i, origin)
        elif text.startswith("<!", i):
            end = text.find(">", i)
            i = n if end < 0 else end + 1
        elif text[i] == "<":
            return i
        else:  # text before the root element: TinyXML2 keeps it as a text node, urdfdom ignores it
            end = text.find("<", i)
            i = n if end < 0 else end
    return n


def _restore_controls(elem: ET.Element) -> None:
    def back(s: str) -> str:
        return "".join(
            chr(ord(c) - _CONTROL_CARRIER) if _CONTROL_CARRIER < ord(c) < _CONTROL_CARRIER + 32 else c for c in s
        )

    for e in elem.iter():
        e.tag = back(e.tag)
        e.attrib = {back(k): back(v) for k, v in e.attrib.items()}
        e.text = back(e.text) if e.text else e.text
        e.tail = back(e.tail) if e.tail else e.tail


def parse_xml(text: str | bytes, origin: str = "<string>") -> ET.Element:
    """The ``<robot>`` element of a URDF document, read as urdfdom (TinyXML2) reads it, with no
    entity ever expanded and nothing ever fetched.

    What urdfdom takes, this takes: a byte-order mark, whitespace or text before the XML
    declaration's first markup, declarations, processing instructions, comments and a DOCTYPE
    before the root (the DOCTYPE is skipped unread: its entities are neither declared nor
    expanded, and ``&name;`` stays literal text, as in TinyXML2), a lone ``&``, control
    characters, several elements at the document level (the first ``<robot>`` is the robot),
    comments after the root.  Without a ``<robot>`` element the first element is returned (the
    caller names it).
    """
    if isinstance(text, bytes):
        text = decode(text, origin)[0]
    text = text.removeprefix("\ufeff")
    start = _prolog_end(text, origin)
    if start >= len(text):
        raise URDFError(f"{origin}: the document holds no XML element")
    body = _LONE_AMPERSAND.sub("&amp;", text[start:])
    controls = _CONTROL.search(body) is not None
    if controls:
        if any(_CONTROL_CARRIER < ord(c) < _CONTROL_CARRIER + 32 for c in body):
            raise URDFError(
                f"{origin}: malformed XML (control characters next to private-use characters U+F701-U+F71F)"
            )
        body = _CONTROL.sub(lambda m: chr(_CONTROL_CARRIER + ord(m.group())), body)
    prolog = re.sub(r"[^\n]", " ", text[:start])  # keeps the lines and columns of the errors
    wrapped = f"<{_WRAPPER}>\n{prolog}{body}</{_WRAPPER}>"
    builder = ET.TreeBuilder()
    parser = expat.ParserCreate()

    def refuse_entities(name, *args):
        raise URDFError(f"{origin}: DTD entity declarations are not allowed in URDF (entity '{name}')")

    def refuse_external(*args):
        raise URDFError(f"{origin}: external DTD or entity references are not allowed in URDF")

    # defence in depth: no DTD reaches expat (the prolog is skipped and one inside an element is
    # malformed), and none would be read if it did
    parser.EntityDeclHandler = refuse_entities
    parser.UnparsedEntityDeclHandler = refuse_entities
    parser.ExternalEntityRefHandler = refuse_external
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartElementHandler = builder.start
    parser.EndElementHandler = builder.end
    parser.CharacterDataHandler = builder.data
    parser.buffer_text = True
    try:
        parser.Parse(wrapped, True)
        document = builder.close()
    except expat.ExpatError as exc:
        close_line = wrapped.count("\n") + 1
        close_column = len(wrapped) - wrapped.rfind("\n") - 1 - len(f"</{_WRAPPER}>")
        if (exc.lineno, exc.offset) >= (close_line, close_column):
            raise URDFError(
                f"{origin}: malformed XML (the document ends inside an element: a tag is not closed)"
            ) from None
        raise URDFError(
            f"{origin}: malformed XML ({expat.ErrorString(exc.code)}: line {exc.lineno - 1}, column {exc.offset})"
        ) from None
    if controls:
        _restore_controls(document)
    elements = list(document)
    if not elements:
        raise URDFError(f"{origin}: the document holds no XML element")
    return next((e for e in elements if e.tag == "robot"), elements[0])


def missing_file_message(path: Path) -> str:
    """The message for a URDF path that names no file: the path and a suggestion."""
    text = f"URDF file not found: {path}"
    if path.suffix.lower() != ".urdf" and path.parent == Path("."):
        return f"{text}; for an example-robot-data robot use denoc_bridge.load_robot({str(path)!r})"
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        return f"{text} (the folder {folder} does not exist)"
    try:
        names = sorted(p.name for p in folder.iterdir() if p.is_file())
    except OSError:
        return text
    close = difflib.get_close_matches(path.name, names, n=1, cutoff=0.6)
    if close:
        return f"{text}; did you mean {folder / close[0]}?"
    return text


def read_source(source):
    """(text, origin, path or None) from a path, an XML string or bytes."""
    if isinstance(source, bytes):
        return source, "<bytes>", None
    if isinstance(source, str) and not source.strip():
        raise URDFError("the URDF source is an empty string")
    if isinstance(source, str) and source.lstrip(" \t\r\n\ufeff").startswith("<"):
        return source, "<string>", None
    if isinstance(source, str) and "<" in source and not os.path.exists(source):
        return source, "<string>", None  # text before the root element (urdfdom ignores it)
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if path.exists() and not path.is_file():  # a folder, a device (/dev/zero never ends), a pipe
            raise URDFError(f"{path} is not a regular file (a folder, a device or a pipe); give a .urdf file")
        if not path.is_file():
            raise URDFFileNotFoundError(missing_file_message(path))
        return path.read_bytes(), str(path), str(path.resolve())
    raise URDFError(f"load_urdf expects a file path or URDF XML text, got {type(source).__name__}")


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
    values = _any_floats(elem, attr, n, where, default)
    if not np.all(np.isfinite(values)):
        raise URDFModelError(f'{where}: attribute {attr}="{elem.get(attr)}" is not finite')
    if bounded and np.abs(values).max() > LARGEST_NUMBER:
        raise URDFError(
            f'{where}: attribute {attr}="{elem.get(attr)}" is out of range (magnitude above '
            f"{LARGEST_NUMBER:g}: the dynamics would overflow)"
        )
    return values


def _any_floats(elem, attr: str, n: int, where: str, default=None):
    """Attribute ``attr`` of ``elem`` as ``n`` floats, finite or not (``default`` when absent)."""
    raw = elem.get(attr) if elem is not None else None
    if raw is None:
        if default is None:
            raise URDFError(f"{where}: missing attribute '{attr}'")
        return np.array(default, dtype=float)
    parts = [p for p in re.split(r"[ \t\r\n]+", raw) if p]  # XML whitespace only, as urdfdom
    if not all(_NUMBER.fullmatch(p) for p in parts):
        hint = " (entity references are not expanded, as in urdfdom)" if "&" in raw else ""
        raise URDFError(f'{where}: attribute {attr}="{raw}" is not {n} number(s){hint}')
    values = np.array([float(p) for p in parts], dtype=float)
    if values.shape != (n,):
        raise URDFError(f'{where}: attribute {attr}="{raw}" must hold {n} number(s)')
    return values


INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def check_dynamics_elements(robot: ET.Element, strict: bool = False) -> list[str]:
    """Clear errors, naming the element, for everything that carries dynamics.  What Pinocchio
    loads although it contradicts itself is ignored as Pinocchio or the simulators that write it
    read it (see :func:`_ignore_as_pinocchio`): the document is edited accordingly and the
    returned notes (one per value, naming the joint or link) say what was ignored."""
    ignored: list[str] = []
    links = robot.findall("link")
    if not links:
        raise URDFError("the URDF has no <link> element")
    for i, link in enumerate(links):
        name = link.get("name")
        if not name:
            raise URDFError(f"<link> number {i + 1} has no name")
        inertial = link.find("inertial")
        if inertial is not None:
            _check_inertial(link, inertial, f"link '{name}' <inertial>", strict, ignored)
    for i, joint in enumerate(robot.findall("joint")):
        name = joint.get("name")
        if not name:
            raise URDFError(f"<joint> number {i + 1} has no name")
        where = f"joint '{name}'"
        jtype = joint.get("type")
        if jtype not in JOINT_TYPES:
            raise URDFError(f"{where}: unknown joint type '{jtype}' (expected one of {', '.join(sorted(JOINT_TYPES))})")
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
        values: dict[str, float] = {}
        for tag, attrs in (
            ("limit", ("lower", "upper", "effort", "velocity")),
            ("dynamics", ("damping", "friction")),
            ("mimic", ("multiplier", "offset")),
        ):
            e = joint.find(tag)
            if e is not None:
                for attr in attrs:
                    if e.get(attr) is not None:  # limits may be +-max double ("no limit")
                        values[attr] = float(_floats(e, attr, 1, f"{where} <{tag}>", bounded=tag != "limit")[0])
        _check_contradictions(values, jtype, where)
        ignored += _ignore_as_pinocchio(joint, values, jtype, where)
    return ignored


def _check_inertial(link: ET.Element, inertial: ET.Element, where: str, strict: bool, ignored: list[str]) -> None:
    """The numbers of an ``<inertial>``.  A NaN or infinite one is a :class:`URDFModelError`
    with ``strict``; otherwise it is ignored as ``pin.buildModelFromUrdf`` does (urdfdom reads
    the origin, the mass, then the inertia, and stops at the first bad number): in the origin or
    the mass, the ``<inertial>`` is dropped (zero mass and inertia); in the inertia, the rotational
    inertia is dropped (the mass at its centre of mass kept)."""
    mass = inertial.find("mass")
    if mass is None:
        raise URDFError(f"{where}: missing <mass>")
    _any_floats(mass, "value", 1, f"{where} <mass>")  # junk (not a number) first, as before
    inertia = inertial.find("inertia")
    if inertia is None:
        raise URDFError(f"{where}: missing <inertia>")
    origin = inertial.find("origin")
    fields: list[tuple[ET.Element, str, int, str, tuple | None]] = [
        (origin, attr, 3, f"{where} <origin>", (0, 0, 0)) for attr in ("xyz", "rpy") if origin is not None
    ]
    fields += [(mass, "value", 1, f"{where} <mass>", None)]
    fields += [(inertia, key, 1, f"{where} <inertia>", None) for key in INERTIA_KEYS]
    for elem, attr, n, at, default in fields:
        if np.all(np.isfinite(_any_floats(elem, attr, n, at, default))):
            continue
        if strict:
            _floats(elem, attr, n, at, default)  # the URDFModelError naming it
        problem = f'{at}: attribute {attr}="{elem.get(attr)}" is not finite'
        if elem is inertia:
            for key in INERTIA_KEYS:
                inertia.set(key, "0")
            ignored.append(f"{problem}: the rotational inertia is ignored (a point mass), as Pinocchio loads it")
        else:
            link.remove(inertial)
            ignored.append(f"{problem}: the <inertial> is ignored (zero mass and inertia), as Pinocchio loads it")
            return
        break
    for elem, attr, n, at, default in fields:
        _floats(elem, attr, n, at, default)
    m = _floats(mass, "value", 1, f"{where} <mass>")[0]
    if m < 0:
        raise URDFError(f"{where}: negative mass {m}")


def _ignore_as_pinocchio(joint: ET.Element, values: dict[str, float], jtype: str, where: str) -> list[str]:
    """The joint data that contradicts itself but that ``pin.buildModelFromUrdf`` loads, ignored
    (the document edited) with a note each: a ``<limit>`` with lower > upper on a revolute or
    prismatic joint is no limit (robot collections write it on purpose: their simulator reads
    lower > upper as "unlimited"); a ``<mimic>`` on a planar or floating joint is no relation
    (Pinocchio's ``mimic=True`` leaves that joint free); a negative damping (on any moving joint)
    and a negative friction on a floating or planar joint are 0 (they would feed energy into the
    joint; Pinocchio keeps them, and its dynamics use neither)."""
    notes = []
    lo, hi = values.get("lower", 0.0), values.get("upper", 0.0)
    if jtype in ("revolute", "prismatic") and lo > hi:
        limit = joint.find("limit")
        assert limit is not None
        limit.set("lower", "-inf")
        limit.set("upper", "inf")
        notes.append(
            f'{where} <limit>: lower="{lo!r}" is above upper="{hi!r}": the limit is ignored (no position limit '
            "for this joint: in simulation, lower_limit/upper_limit and random_configuration), as the "
            "simulators that write lower > upper for no limit read it; Pinocchio loads it too"
        )
    relation = joint.find("mimic")
    if jtype in ("planar", "floating") and relation is not None:
        joint.remove(relation)
        notes.append(
            f"{where} ({jtype}): its <mimic> is ignored (the joint moves freely; mimic relations are "
            "between one-DOF joints), as Pinocchio loads it"
        )
    dynamics = joint.find("dynamics")
    for attr, why in (("damping", "it would feed energy into the joint"), ("friction", "it cannot drive the joint")):
        if jtype == "fixed" or values.get(attr, 0.0) >= 0:
            continue
        assert dynamics is not None
        dynamics.set(attr, "0")
        notes.append(
            f'{where} <dynamics>: {attr}="{values[attr]!r}" is negative ({why}): ignored (0), as Pinocchio loads it'
        )
    return notes


def _check_contradictions(values: dict[str, float], jtype: str, where: str) -> None:
    """:class:`URDFModelError` naming the joint for joint data no robot can have and no loader
    accepts, on the joints whose data the model uses (revolute, continuous, prismatic; urdfdom
    and this loader ignore the ``<limit>`` of the others): Pinocchio 4.1 refuses a negative
    effort, velocity or friction ("Some components of min_effort are greater than max_effort").
    What it loads is ignored instead, with a note (:func:`_ignore_as_pinocchio`)."""
    if jtype not in ("revolute", "continuous", "prismatic"):
        return
    for attr, tag, why in (
        ("effort", "limit", "the largest joint force or torque"),
        ("velocity", "limit", "the largest joint speed"),
        ("friction", "dynamics", "a friction force cannot drive the joint"),
    ):
        if values.get(attr, 0.0) < 0:
            raise URDFModelError(
                f'{where} <{tag}>: {attr}="{values[attr]!r}" is negative ({why}; Pinocchio refuses it too)'
            )


def urdf_module():
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


def repair(robot: ET.Element, path, notes: list) -> None:
    """Remove, in place, what urdf-parser-py rejects but carries no dynamics."""
    urdf, core = urdf_module()
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
                elem_mat = elem.find("material")
                if elem_mat is not None and not _repair_material(elem_mat, core, urdf, where, notes):
                    elem.remove(elem_mat)
                    notes.append(f"{where}: dropped an unusable <material>")
                if not _parses(cls, elem, core):
                    link.remove(elem)
                    notes.append(f"{where}: dropped (it does not parse and carries no dynamics)")


@contextlib.contextmanager
def captured_parser_messages(messages: list):
    """urdf-parser-py prints its messages to stderr; collect them instead.

    Its ``on_error`` hook is bound both in ``xml_reflection.core`` and in the
    ``xml_reflection`` package (``from .core import *``); both are replaced.
    """
    import urdf_parser_py.xml_reflection as xmlr

    _, core = urdf_module()
    with _PARSER_LOCK:
        saved = core.on_error, xmlr.on_error
        core.on_error = xmlr.on_error = messages.append
        try:
            yield
        finally:
            core.on_error, xmlr.on_error = saved


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


def take_loop_joints(robot_elem, origin) -> list:
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
