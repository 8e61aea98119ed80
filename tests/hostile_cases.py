"""Hostile inputs shared by the tests that check them and by the reliability table
(tests/test_hostile.py writes docs/reliability_table.md from the outcomes of a run).

Each case is a document (URDF text or bytes) with what denoc_bridge must do and what
Pinocchio 4.1 does on the same input; the tests check both columns, so the table records
behaviour measured in the run, not a belief.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
import warnings
from dataclasses import dataclass

import pinocchio as pin

import denoc_bridge as db


def two_joints(
    lim='<limit lower="-1" upper="1" effort="1" velocity="1"/>', dyn="", mimic="", extra="", jtype="revolute"
):
    """A two-link arm (joints j1, j2) with ``lim``/``dyn`` in j1, ``mimic`` in j2, ``extra`` elements."""
    inertial = '<inertial><mass value="1"/><inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial>'
    return (
        f'<robot name="r"><link name="w"/><link name="a">{inertial}</link><link name="b">{inertial}</link>'
        f'<joint name="j1" type="{jtype}"><parent link="w"/><child link="a"/><axis xyz="0 0 1"/>{lim}{dyn}</joint>'
        '<joint name="j2" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
        f'<limit lower="-1" upper="1" effort="1" velocity="1"/>{mimic}</joint>{extra}</robot>'
    )


@dataclass(frozen=True)
class Case:
    """``ours``: "loads", "warns" (loads with a PhysicsWarning) or a regex of the refusal (a
    DenocError); ``pin``: "loads" or "refuses"; ``mimic``: load with ``mimic=True``; ``strict``:
    load with ``strict=True`` (Pinocchio has no such option: its column is its only load)."""

    name: str
    doc: str | bytes
    ours: str
    pin: str
    mimic: bool = False
    exc: type = db.DenocError
    strict: bool = False


def _limit(**kw: str) -> str:
    attrs = dict(lower="-1", upper="1", effort="1", velocity="1") | kw
    return "<limit " + " ".join(f'{k}="{v}"' for k, v in attrs.items()) + "/>"


FIXED = '<link name="c"/><joint name="jf" type="fixed"><parent link="b"/><child link="c"/></joint>'

#: Joint data that contradicts itself (issue 25, item 3).
CONTRADICTIONS = (
    Case("limit lower > upper", two_joints(_limit(lower="1", upper="-1")), "warns", "loads"),
    Case(
        "prismatic joint, limit lower > upper",
        two_joints(_limit(lower="1", upper="-1"), jtype="prismatic"),
        "warns",
        "loads",
    ),
    Case(
        "limit lower NaN",
        two_joints(_limit(lower="nan")),
        r"joint 'j1' <limit>.*lower.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "effort NaN",
        two_joints(_limit(effort="nan")),
        r"joint 'j1' <limit>.*effort.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "effort negative",
        two_joints(_limit(effort="-1")),
        r"joint 'j1' <limit>: effort=.*negative",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "velocity negative",
        two_joints(_limit(velocity="-2")),
        r"joint 'j1' <limit>: velocity=.*negative",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "velocity NaN",
        two_joints(_limit(velocity="nan")),
        r"joint 'j1' <limit>.*velocity.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
    Case("damping negative", two_joints(dyn='<dynamics damping="-1"/>'), "warns", "loads"),
    Case(
        "friction negative on a planar joint",
        two_joints(dyn='<dynamics friction="-1"/>', jtype="planar"),
        "warns",
        "loads",
    ),
    Case("mass NaN", two_joints().replace('<mass value="1"/>', '<mass value="nan"/>', 1), "warns", "loads"),
    Case("inertia ixx inf", two_joints().replace('ixx="1"', 'ixx="inf"', 1), "warns", "loads"),
    Case(
        "mass NaN, strict=True",
        two_joints().replace('<mass value="1"/>', '<mass value="nan"/>', 1),
        r"link 'a' <inertial> <mass>: attribute value=\"nan\" is not finite",
        "loads",
        exc=db.ModelError,
        strict=True,
    ),
    Case(
        "mimic on a planar joint, mimic=True",
        two_joints(_limit() + '<mimic joint="j2"/>', jtype="planar"),
        "warns",
        "loads",
        True,
    ),
    Case(
        "damping NaN",
        two_joints(dyn='<dynamics damping="nan"/>'),
        r"joint 'j1' <dynamics>.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "friction negative",
        two_joints(dyn='<dynamics friction="-1"/>'),
        r"joint 'j1' <dynamics>: friction=.*negative",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "continuous joint, effort negative",
        two_joints(_limit(effort="-1"), jtype="continuous"),
        r"joint 'j1' <limit>: effort",
        "refuses",
        exc=db.ModelError,
    ),
    Case("lower == upper (no limit, URDF default)", two_joints(_limit(lower="0", upper="0")), "loads", "loads"),
    Case("mimic of a missing joint", two_joints(mimic='<mimic joint="nope"/>'), "warns", "loads"),
    Case(
        "mimic of a missing joint, mimic=True",
        two_joints(mimic='<mimic joint="nope"/>'),
        r"mimic joint 'j2': the mimicked joint 'nope' is not a joint",
        "refuses",
        True,
        db.ModelError,
    ),
    Case("mimic of a fixed joint", two_joints(mimic='<mimic joint="jf"/>', extra=FIXED), "warns", "loads"),
    Case(
        "mimic of a fixed joint, mimic=True",
        two_joints(mimic='<mimic joint="jf"/>', extra=FIXED),
        r"mimic joint 'j2': the mimicked joint 'jf' is a fixed joint",
        "refuses",
        True,
        db.ModelError,
    ),
    Case("mimic of itself", two_joints(mimic='<mimic joint="j2"/>'), "warns", "loads"),
    Case(
        "mimic of itself, mimic=True",
        two_joints(mimic='<mimic joint="j2"/>'),
        r"mimic joint 'j2': mimics itself",
        "refuses",
        True,
        db.ModelError,
    ),
    Case("mimic cycle", two_joints(_limit() + '<mimic joint="j2"/>', mimic='<mimic joint="j1"/>'), "warns", "loads"),
    Case(
        "mimic cycle, mimic=True",
        two_joints(_limit() + '<mimic joint="j2"/>', mimic='<mimic joint="j1"/>'),
        r"form a cycle \('j1' -> 'j2' -> 'j1'\)",
        "refuses",
        True,
        db.ModelError,
    ),
    Case(
        "mimic multiplier inf",
        two_joints(mimic='<mimic joint="j1" multiplier="inf"/>'),
        r"joint 'j2' <mimic>.*multiplier.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
    Case(
        "mimic offset NaN",
        two_joints(mimic='<mimic joint="j1" offset="nan"/>'),
        r"joint 'j2' <mimic>.*offset.*not finite",
        "refuses",
        exc=db.ModelError,
    ),
)


@contextlib.contextmanager
def quiet_fd2():
    """Silence urdfdom, which prints its errors on file descriptor 2."""
    saved, null = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 2)
    try:
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(null)


def pin_outcome(doc: str | bytes, mimic: bool = False) -> tuple[str, object]:
    """("loads", model) or ("refuses", message) of ``pin.buildModelFromUrdf`` on the document
    written to a file (byte for byte, as a user's file)."""
    fd, path = tempfile.mkstemp(suffix=".urdf")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(doc if isinstance(doc, bytes) else doc.encode("utf-8"))
        with quiet_fd2():
            return "loads", pin.buildModelFromUrdf(path, mimic=mimic)
    except Exception as exc:  # Pinocchio's refusals: ValueError, RuntimeError, UnicodeDecodeError
        return "refuses", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    finally:
        os.unlink(path)


def our_outcome(doc: str | bytes, mimic: bool = False, strict: bool = False) -> tuple[str, object, list]:
    """("loads" | "warns", model, warnings) or ("refuses", exception, warnings) of load_urdf."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = db.load_urdf(doc, mimic=mimic, strict=strict)
        except db.DenocError as exc:
            return "refuses", exc, list(caught)
    physics = [w for w in caught if issubclass(w.category, db.PhysicsWarning)]
    return ("warns" if physics else "loads"), model, list(caught)
