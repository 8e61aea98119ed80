"""The layout constants the compiled core hard-codes in its .pxd and .pxi files (``cdef enum``
members: table columns, rotation and offset codes, joint types, work-array rows, the rows of a
run's scratch that the Python layer reads back, the actuation codes of a run; the per-joint-type
nq and nv of arrays.pxd) against the Python modules
they mirror (core/layout.py, core/systems.py,
multibody/joints.py, the hooks of tests/core/test_gim.py).  Neither side imports the other: the
enums are not visible from Python, so the Cython text is parsed here, and an edit made on one
side only fails the test named after the constant.  Every enum name has a Python twin or is
listed in NO_TWIN."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import denoc_bridge
from denoc_bridge.constraints import packed
from denoc_bridge.core import layout as kt
from denoc_bridge.core import systems as ks
from denoc_bridge.multibody.joints import JointType, joint_nq, joint_nv
from tests.core import test_gim

CORE = Path(denoc_bridge.__file__).parent / "core"
#: where the Python twins live: a .pxd name is compared with the int of that name in each
MIRRORS = {
    "core.layout": kt,
    "core.systems": ks,
}
#: twins of another name, or an expression of Python constants
_SCRATCH = {"S_QS": "QS", "S_XI": "XI", "S_VS": "VS", "S_TAU": "TAU", "S_D": "D", "S_KX": "KX", "S_KV": "KV"}
_SCRATCH |= {"S_Q1": "Q1", "S_V1": "V1", "S_VACC": "VACC", "S_ZEROS": "ZEROS", "S_ROWS": "RUN_ROWS"}
_WAYS = {"WAY_CHOSEN": "CHOSEN", "WAY_LTDL": "LTDL", "WAY_RECURSION": "RECURSION", "LTDL_REFUSED": "LTDL_REFUSED"}
DERIVED = {
    "NI": ("2 * core.layout.NT (ki = kt.view(int32))", 2 * kt.NT),
    **{c: (f"core.systems.{p} (a run's scratch rows)", getattr(ks, p)) for c, p in _SCRATCH.items()},
    **{c: (f"tests/core/test_gim.py {p} (the entries' way hook)", getattr(test_gim, p)) for c, p in _WAYS.items()},
    "LI": ("constraints.packed.PI_COLUMNS (the int64 columns of a cut joint's row)", packed.PI_COLUMNS),
    "LF": ("constraints.packed.PF_COLUMNS (its float64 columns)", packed.PF_COLUMNS),
}
#: enum names without a Python twin, each with the reason
NO_TWIN = {
    "CRBA_STACK": "the doubles of crba's stack scratch (gim.pxi), a C-only size",
    "OUT_OF_MEMORY": "a pass's status inside the core, raised as MemoryError by its entry",
    "FLAT_CHECK_NV": "the nv up to which finite_upper (gim_entry.pxi) reads every entry, C-only",
    # the contact run's statuses and its correction's sweeps: core/contact.pyx exports them itself
    # (DONE, PYTHON_STEP, PGS_STALLED, CORRECTION), assigned from these members
    "STEP_DONE": "exported as core.contact.DONE",
    "STEP_PYTHON": "exported as core.contact.PYTHON_STEP",
    "STEP_STALLED": "exported as core.contact.PGS_STALLED",
    "CORRECTION_SWEEPS": "exported as core.contact.CORRECTION[1]",
    # the buffer of the matrix-free derivatives: core/directional.pyx exports its sizes
    "BUF_PER_LINK": "exported as core.directional.PER_LINK (buffer_size)",
    "BUF_PER_DOF": "exported as core.directional.PER_DOF (buffer_size)",
    "CHECK_AHEAD": "rows ahead of the directional entries' checks (prefetch), a C-only distance",
    # the rows of the derivatives' column array (derivative_passes.pxi), scratch of one call
    **{c: "a row of the derivatives' scratch Cols, C-only" for c in ("C_Y", "C_Z", "C_GA", "C_RH", "C_ROWS")},
    "NARROW": "the narrower tile of the forward derivatives' products (forward_derivatives.pxi), C-only",
    # the columns of the GIM's base-frame rows (gim.pxi): C-only since numba's kernels/gim.py,
    # their twin, went with the numba derivatives that called it
    **{c: "a column of the GIM's base-frame rows X (gim.pxi), C-only" for c in ("X_P", "X_M", "X_H", "X_I", "XW")},
    # the cut joints' type codes: core/loops.pyx exports them (CUT_CODES), packed.py packs with them
    **{f"CUT_{k.upper()}": "exported as core.loops.CUT_CODES" for k in ("weld", "spherical", "revolute")},
    **{f"CUT_{k.upper()}": "exported as core.loops.CUT_CODES" for k in ("prismatic", "coupling", "term")},
    # the lane work array of the batches' forward dynamics (lanes.pxi), scratch of one chunk
    "LANES": "states per group of the lanes (lanes.pxi), C-only",
    "LANES_RTOL_FACTOR": "the lanes' pivot bound over SINGULAR_RTOL (lanes.pxi), C-only",
    "LANES_MAX_LINKS": "the largest model whose batches run in lanes (lanes.pxi), C-only",
    **{
        c: "a field or mass offset of the lane work array (lanes.pxi), C-only"
        for c in (
            "L_E",
            "L_R",
            "L_T",
            "L_TD",
            "L_XI",
            "L_M",
            "L_U",
            "L_DINV",
            "L_PHIT",
            "L_MU",
            "L_SCALE",
            "L_FIELDS",
            "L_WW",
            "L_WV",
            "L_VV",
        )
    },
}

_BLOCK = re.compile(r"^c(?:p|type)?def\s+enum\b[^:]*:")
_MEMBER = re.compile(r"^([A-Za-z_]\w*)\s*=\s*(.+)$")
_SAFE = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.operator, ast.unaryop)


def _value(expr: str, known: dict[str, int]) -> int:
    """An int literal or an arithmetic expression of ints and the enum names defined before it."""
    tree = ast.parse(expr, mode="eval")
    for node in ast.walk(tree):
        if not isinstance(node, _SAFE) or (isinstance(node, ast.Constant) and type(node.value) is not int):
            raise ValueError(f"not an integer expression: {expr!r}")
        if isinstance(node, ast.Name) and node.id not in known:
            raise ValueError(f"{node.id} is not an enum name defined before {expr!r}")
    return int(eval(compile(tree, "<pxd>", "eval"), {"__builtins__": {}}, dict(known)))


def parse_enums(text: str, where: str = "<text>") -> dict[str, int]:
    """``NAME = value`` of every ``cdef enum:`` block (comments ignored); ValueError on a line that
    is not one, or on a name defined twice."""
    found: dict[str, int] = {}
    inside = False
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if _BLOCK.match(line):
            inside = True
        elif inside and line and not line[0].isspace():
            inside = False
        elif inside and line.strip():
            m = _MEMBER.match(line.strip())
            if m is None or m[1] in found:
                raise ValueError(f"{where}:{n}: cannot read enum member {raw.strip()!r}")
            found[m[1]] = _value(m[2], found)
    return found


def parse_joint_sizes(text: str) -> dict[str, list[int]]:
    """The ``DB_JOINT_NQ`` and ``DB_JOINT_NV`` arrays (one entry per joint type code)."""
    arrays = re.findall(r"DB_JOINT_(NQ|NV)\[(\d+)\]\s*=\s*\{([^}]*)\}", text)
    return {kind: [int(x) for x in body.split(",")] for kind, _, body in arrays}


def _read_core() -> tuple[dict[str, int], str]:
    enums: dict[str, int] = {}
    for path in sorted([*CORE.glob("*.pxd"), *CORE.glob("*.pxi")]):
        for name, value in parse_enums(path.read_text(), path.name).items():
            assert name not in enums, f"{name} defined in two files of the core"
            enums[name] = value
    return enums, (CORE / "arrays.pxd").read_text()


ENUMS, ARRAYS = _read_core()
SIZES = parse_joint_sizes(ARRAYS)


def twins(name: str) -> dict[str, int]:
    """The Python values a .pxd enum name mirrors, by where they live."""
    out = {f"{where}.{name}": getattr(mod, name) for where, mod in MIRRORS.items() if hasattr(mod, name)}
    if name in JointType.__members__:
        out[f"JointType.{name}"] = int(JointType[name])
    if name in DERIVED:
        out[DERIVED[name][0]] = DERIVED[name][1]
    return out


def test_the_parser_found_the_enums():
    """An empty or truncated parse cannot pass: 59 names in tables.pxd's five blocks, 27 in the
    .pxi files' six."""
    assert len(ENUMS) >= 80
    assert {"NT", "GRAV", "ROT_GENERAL", "R_GENERAL", "TRANSLATION", "PREFETCH_LINKS"} <= ENUMS.keys()
    assert {"S_ROWS", "TAU_TABLE", "XW", "M_FRAME", "LTDL_REFUSED"} <= ENUMS.keys()
    assert sorted(SIZES) == ["NQ", "NV"]
    assert len(SIZES["NQ"]) == len(SIZES["NV"]) == len(JointType), "one nq and nv per joint type"


def test_the_parser_reads_expressions_and_refuses_what_it_cannot_read():
    text = "cdef enum:  # c\n    # a comment\n    A = 3  # x\n    B = 2 * A + 1\n\ncdef int f():\n    C = 1\n"
    assert parse_enums(text) == {"A": 3, "B": 7}
    for bad in ("    D\n", "    D = 1.5\n", "    D = E + 1\n", "    D = f(1)\n", "    D = 1\n    D = 2\n"):
        with pytest.raises(ValueError):
            parse_enums("cdef enum:\n" + bad)


@pytest.mark.parametrize("name", sorted(ENUMS))
def test_enum_matches_its_python_twin(name):
    found = twins(name)
    if name in NO_TWIN:
        assert not found, f"{name} is listed in NO_TWIN but has Python twins {found}: compare them"
        return
    assert found, f"{name} = {ENUMS[name]} (Cython) has no Python twin: add one or list it in NO_TWIN with a reason"
    for where, value in found.items():
        assert isinstance(value, int), f"{where} = {value!r} is not an int"
        assert value == ENUMS[name], f"{name} = {ENUMS[name]} in the Cython core, {where} = {value}"


def test_no_twin_lists_only_enum_names():
    assert NO_TWIN.keys() <= ENUMS.keys(), f"stale NO_TWIN entries: {sorted(NO_TWIN.keys() - ENUMS.keys())}"


@pytest.mark.parametrize("jtype", list(JointType), ids=lambda t: t.name)
def test_joint_sizes_match_multibody_joints(jtype):
    """arrays.pxd's nq and nv per joint type code: the joint type's in multibody/joints.py."""
    assert (SIZES["NQ"][jtype], SIZES["NV"][jtype]) == (joint_nq(jtype), joint_nv(jtype))


def test_singular_tolerance_matches_its_python_twin():
    """``DB_SINGULAR_RTOL`` of forward_dynamics.pxi (a C macro, not an enum) and core.layout's."""
    text = (CORE / "forward_dynamics.pxi").read_text()
    found = re.findall(r"#define DB_SINGULAR_RTOL \(([^)]+)\)", text)
    assert found and float(found[0]) == kt.SINGULAR_RTOL, (found, kt.SINGULAR_RTOL)
