"""Fuzzing the URDF loader (issue "Reliability and security"): random trees and random
mutations of real URDF files either load, with dynamics that match Pinocchio, or raise one of
the documented exceptions (:class:`denoc_bridge.DenocError` subclasses, with a message).

What is generated
-----------------
* Documents: our own files (``urdf/*.urdf``: a closed loop, mimic joints, a 100-link rope,
  ...), a few example-robot-data robots (meshes kept: neither loader opens them), and random
  trees written by :func:`urdf_samples.random_urdf`.
* Mutations of the XML tree (1 to 4 per document, any order): drop an element or an
  attribute, replace a number by junk (text, "nan", "inf", "-1e400", "", too many or too few
  numbers, ...) or by other valid numbers, shuffle the children of the robot or of an element
  (joints and links reordered), point a link or joint reference at a missing or at another
  existing name, rename a link or joint, duplicate an element, move an element elsewhere,
  change a joint type (valid or not), and sometimes cut the serialised text short.  Each
  document is loaded fixed-base or floating-base, sometimes with ``mimic=True``, as text or
  bytes.

What is checked (:func:`check_document`)
----------------------------------------
* ``load_urdf`` raises a :class:`~denoc_bridge.DenocError` with a non-empty message, or
  returns a model with finite parameters.  Any other exception (KeyError, IndexError,
  ZeroDivisionError, a bare ValueError, a LinAlgError that is not ours, ...) fails, and so does
  any warning other than :class:`~denoc_bridge.PhysicsWarning`.
* A loaded model is compared on one random state (fixed seed) with ``to_pinocchio(model)``:
  ``inverse_dynamics`` vs ``pin.rnea`` and ``mass_matrix`` vs ``pin.crba`` to 1e-9 relative to
  the largest entry (or to the round-off of the terms summed, :func:`term_scale`, when fuzzed
  lever arms of 1e6 m make the results cancellations of much larger terms);
  ``forward_dynamics`` vs ``pin.aba`` with :func:`denoc_bridge.validation.solve_agreement`,
  and where kappa(M) > 1e6 its perturbation bound and a residual no worse than Pinocchio's.
  Outputs must be finite.  :class:`~denoc_bridge.SingularInertiaError` (documented) must name
  the joint, and is accepted only where Pinocchio's ``aba`` is not finite or the GIM is not
  positive definite (singular, or indefinite for non-physical inertias).  A ``mimic=True``
  model is compared with ``to_pinocchio`` and ``pin.buildModelFromXML(..., mimic=True)`` (rnea,
  crba) and its forward dynamics must undo its inverse dynamics; the constrained accelerations
  of a model with ``<loop_joint>`` must be finite or a DenocError.
* Where ``pin.buildModelFromXML`` accepts the same text, the two models must have the same
  joints in the same order and the same dynamics (except where numbers are separated by tabs
  or newlines, which urdfdom cannot split).  Where Pinocchio accepts a document that we refuse,
  our message must be one of :data:`LAX_IN_PINOCCHIO` (urdfdom prints an error and silently
  drops the element, or keeps a NaN/negative/zero value).  Where we accept a document that
  Pinocchio refuses (e.g. a revolute joint without ``<limit>``), only ``to_pinocchio`` is the
  reference.

Running
-------
The bounded run (CI, part of ``python -m pytest``) draws ``DENOC_FUZZ_CI_EXAMPLES`` examples
per test (default 300), derandomized, so the same examples run every time::

    python -m pytest -q tests/io/test_fuzz.py

A longer run on demand draws fresh random examples (not derandomized) and reports a failing
document with ``@reproduce_failure``::

    DENOC_FUZZ_EXAMPLES=20000 python -m pytest -q tests/io/test_fuzz.py

(``--hypothesis-seed=N`` repeats a long run, ``--hypothesis-show-statistics`` shows how often
each outcome occurred.)
"""

from __future__ import annotations

import codecs
import contextlib
import copy
import io
import os
import re
import warnings
from functools import cache
from pathlib import Path
from xml.etree import ElementTree as ET

import numpy as np
import pinocchio as pin
import pytest
from conftest import assert_close, erd_robot_dir
from hostile_cases import pin_outcome
from hypothesis import HealthCheck, given, settings
from hypothesis import event as _event
from hypothesis import note as _note
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from urdf_samples import random_urdf

import denoc_bridge as db
from denoc_bridge.core.layout import SINGULAR_RTOL
from denoc_bridge.validation import solve_agreement

# ---------------------------------------------------------------------------- settings
_LONG = int(os.environ.get("DENOC_FUZZ_EXAMPLES", "0") or 0)
FUZZ = settings(
    max_examples=_LONG or int(os.environ.get("DENOC_FUZZ_CI_EXAMPLES", "300")),
    deadline=None,
    derandomize=not _LONG,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

TOL = 1e-9
STATE_SEED = 20260521


def note(message: str) -> None:
    """hypothesis.note, a no-op outside a Hypothesis test (the plain tests share the checks)."""
    with contextlib.suppress(InvalidArgument):
        _note(message)


def event(value: str) -> None:
    with contextlib.suppress(InvalidArgument):
        _event(value)


# ------------------------------------------------------------------------ the documents
OWN_FILES = ("fourbar", "gripper4", "mimic_gripper", "puma560", "rope")
ERD_FILES = (
    "ur_description/urdf/ur5_robot.urdf",
    "panda_description/urdf/panda.urdf",
    "solo_description/robots/solo12.urdf",
    "double_pendulum_description/urdf/double_pendulum.urdf",
    "a1_description/urdf/a1.urdf",
)


@cache
def seed_documents() -> tuple:
    """(name, text) of the real URDF files that are mutated."""
    own = Path(__file__).resolve().parents[2] / "urdf"
    docs = [(f"urdf/{name}.urdf", (own / f"{name}.urdf").read_text()) for name in OWN_FILES]
    docs += [(rel.split("/")[-1], Path(erd_robot_dir(), rel).read_text()) for rel in ERD_FILES]
    return tuple(docs)


# ------------------------------------------------------------------------ the mutations
NUMERIC = {  # numeric attributes and how many numbers each holds
    "xyz": 3,
    "rpy": 3,
    "value": 1,
    "ixx": 1,
    "ixy": 1,
    "ixz": 1,
    "iyy": 1,
    "iyz": 1,
    "izz": 1,
    "lower": 1,
    "upper": 1,
    "effort": 1,
    "velocity": 1,
    "damping": 1,
    "friction": 1,
    "multiplier": 1,
    "offset": 1,
    "radius": 1,
    "length": 1,
    "size": 3,
    "scale": 3,
    "rgba": 4,
}
DYNAMIC_TAGS = (
    "link",
    "joint",
    "inertial",
    "origin",
    "axis",
    "limit",
    "mass",
    "inertia",
    "parent",
    "child",
    "mimic",
    "dynamics",
    "loop_joint",
    "link1",
    "link2",
)
REFERENCES = {"parent": "link", "child": "link", "mimic": "joint", "link1": "link", "link2": "link"}
JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

JUNK_WORDS = (
    "",
    " ",
    "nan",
    "NaN",
    "-nan",
    "inf",
    "-inf",
    "+inf",
    "Infinity",
    "1e400",
    "-1e400",
    "1e308",
    "-1e308",
    "1e-320",
    "0",
    "-0",
    "-1",
    "-1e3",
    "1e30",
    "abc",
    "1,2,3",
    "1 2",
    "1 2 3 4",
    "0 0 0",
    "1e",
    ".",
    "--1",
    "0x10",
    "1_0",
    "1.5.5",
    "1 nan 2",
    "\t1\n2\t3 ",
    "true",
    "\u0661",
    "1e5x",
)
_small_floats = st.floats(-1e3, 1e3, allow_nan=False, allow_infinity=False)
_any_float = st.floats(allow_nan=True, allow_infinity=True)
junk_values = st.one_of(
    st.sampled_from(JUNK_WORDS),
    _any_float.map(repr),
    st.lists(st.one_of(_small_floats, _any_float), max_size=5).map(lambda xs: " ".join(map(repr, xs))),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=6),
)


def valid_numbers(n: int):
    """``n`` finite numbers: small, signed, zero, or extreme."""
    one = st.one_of(st.floats(-10, 10), st.sampled_from([0.0, -0.0, 1.0, -1.0, 1e-300, 1e-12, 1e6, 1e30, -1e30]))
    return st.lists(one, min_size=n, max_size=n).map(lambda xs: " ".join(map(repr, xs)))


new_names = st.one_of(
    st.sampled_from(["nope", "", " ", "world", "universe", "root_joint", "base_link"]),
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=6),
)


def _elements(root, tags=None):
    return [e for e in root.iter() if e is not root and (tags is None or e.tag in tags)]


def _parents(root):
    return {c: p for p in root.iter() for c in p}


def _pick(draw, items, label):
    return items[draw(st.integers(0, len(items) - 1), label=label)]


def _label(e):
    return f"<{e.tag}{' name=' + repr(e.get('name')) if e.get('name') is not None else ''}>"


def m_drop(draw, root):
    tags = sorted({e.tag for e in _elements(root)})
    dyn = [t for t in tags if t in DYNAMIC_TAGS]
    tag = draw(st.sampled_from(dyn or tags))
    e = _pick(draw, _elements(root, {tag}), "element")
    _parents(root)[e].remove(e)
    return f"drop {_label(e)}"


def m_drop_attribute(draw, root):
    e = _pick(draw, [e for e in root.iter() if e.attrib], "element")
    attr = draw(st.sampled_from(sorted(e.attrib)))
    del e.attrib[attr]
    return f"drop {attr}= of {_label(e)}"


def _numeric_sites(root):
    return [(e, a) for e in root.iter() for a in sorted(e.attrib) if a in NUMERIC]


def m_junk_number(draw, root):
    e, attr = _pick(draw, _numeric_sites(root), "attribute")
    e.set(attr, draw(junk_values))
    return f"{_label(e)} {attr}={e.get(attr)!r}"


def m_other_number(draw, root):
    e, attr = _pick(draw, _numeric_sites(root), "attribute")
    e.set(attr, draw(valid_numbers(NUMERIC[attr])))
    return f"{_label(e)} {attr}={e.get(attr)!r}"


def m_shuffle(draw, root):
    parent = draw(st.sampled_from([root] + [e for e in _elements(root) if len(e) > 1])) if draw(st.booleans()) else root
    kids = list(parent)
    if len(kids) <= 12:
        order = draw(st.permutations(range(len(kids))))
    else:  # a few swaps: a whole permutation of the rope's 200 elements overruns Hypothesis' buffer
        order = list(range(len(kids)))
        for _ in range(draw(st.integers(1, 6))):
            i, j = draw(st.integers(0, len(kids) - 1)), draw(st.integers(0, len(kids) - 1))
            order[i], order[j] = order[j], order[i]
    for c in kids:
        parent.remove(c)
    for i in order:
        parent.append(kids[i])
    return f"shuffle the children of {_label(parent)}"


def _reference_sites(root):
    return [
        e for e in root.iter() if e.tag in REFERENCES and e.get("joint" if e.tag == "mimic" else "link") is not None
    ]


def m_reference(draw, root):
    e = _pick(draw, _reference_sites(root), "reference")
    attr = "joint" if e.tag == "mimic" else "link"
    existing = sorted({x.get("name") or "" for x in root.findall(REFERENCES[e.tag])}) or [""]
    e.set(attr, draw(st.one_of(st.sampled_from(existing), new_names)))
    return f"{_label(e)} {attr}={e.get(attr)!r}"


def m_rename(draw, root):
    e = _pick(draw, [e for e in root if e.tag in ("link", "joint", "loop_joint")], "element")
    old = _label(e)
    others = sorted({x.get("name") or "" for x in root if x.tag in ("link", "joint")})
    e.set("name", draw(st.one_of(st.sampled_from(others), new_names)))
    return f"rename {old} to {e.get('name')!r}"


def m_duplicate(draw, root):
    tags = sorted({e.tag for e in _elements(root)})
    tag = draw(st.sampled_from([t for t in tags if t in DYNAMIC_TAGS] or tags))
    e = _pick(draw, _elements(root, {tag}), "element")
    parent = _parents(root)[e]
    twin = copy.deepcopy(e)
    parent.insert(draw(st.integers(0, len(parent))), twin)
    return f"duplicate {_label(e)}"


def m_move(draw, root):
    e = _pick(draw, _elements(root, set(DYNAMIC_TAGS) - {"link", "joint"}), "element")
    parents = _parents(root)
    targets = [
        x for x in root.iter() if x is not e and x not in e.iter() and x.tag in ("robot", "link", "joint", "inertial")
    ]
    target = _pick(draw, targets, "target")
    parents[e].remove(e)
    target.append(e)
    return f"move {_label(e)} into {_label(target)}"


def m_joint_type(draw, root):
    e = _pick(draw, [e for e in root if e.tag in ("joint", "loop_joint")], "joint")
    kind = draw(st.integers(0, 3), label="valid type?")
    e.set(
        "type",
        draw(
            st.sampled_from(JOINT_TYPES)
            if kind < 2
            else st.sampled_from(("spherical", "weld", "", "Revolute", " fixed", "revolute "))
            if kind == 2
            else st.text(max_size=5)
        ),
    )
    return f"{_label(e)} type={e.get('type')!r}"


MUTATIONS = {
    "drop": (m_drop, lambda r: bool(_elements(r))),
    "drop_attribute": (m_drop_attribute, lambda r: any(e.attrib for e in r.iter())),
    "junk_number": (m_junk_number, lambda r: bool(_numeric_sites(r))),
    "other_number": (m_other_number, lambda r: bool(_numeric_sites(r))),
    "shuffle": (m_shuffle, lambda r: len(r) > 1),
    "reference": (m_reference, lambda r: bool(_reference_sites(r))),
    "rename": (m_rename, lambda r: any(e.tag in ("link", "joint", "loop_joint") for e in r)),
    "duplicate": (m_duplicate, lambda r: bool(_elements(r))),
    "move": (m_move, lambda r: bool(_elements(r, set(DYNAMIC_TAGS) - {"link", "joint"}))),
    "joint_type": (m_joint_type, lambda r: any(e.tag in ("joint", "loop_joint") for e in r)),
}


#: how often each mutation is drawn, relative to the others (the ones that keep a document
#: loadable more often, so that the dynamics are compared often)
WEIGHT = {"other_number": 3, "shuffle": 2, "joint_type": 2}


@st.composite
def mutated(draw, text: str, max_mutations: int = 4, min_mutations: int = 1):
    """(document, descriptions): ``text`` after up to ``max_mutations`` random mutations."""
    root = ET.fromstring(text)
    done = []
    counts = [n for n in (0, 1, 1, 1, 2, 2, 3, 4) if min_mutations <= n <= max_mutations]
    for _ in range(draw(st.sampled_from(counts), label="number of mutations")):
        names = [k for k, (_, applies) in MUTATIONS.items() for _ in range(WEIGHT.get(k, 1)) if applies(root)]
        if not names:
            break
        kind = draw(st.sampled_from(names), label="mutation")
        done.append(MUTATIONS[kind][0](draw, root))
        event(f"mutation: {kind}")
    out = ET.tostring(root, encoding="unicode")
    if draw(st.integers(0, 19), label="truncate?") == 0:  # 1 in 20: cut the text short
        cut = draw(st.integers(1, max(1, len(out) - 1)))
        out = out[:cut]
        done.append(f"truncated to {cut} characters")
    return out, done


# ---------------------------------------------------------------------------- the checks
#: Messages of our refusals of documents that ``pin.buildModelFromXML`` loads anyway, each for a
#: reason: the file is broken and urdfdom only prints an error (e.g. "mass [1_0] is not a float")
#: and drops the whole <inertial> (mass 0), or keeps a value that makes no sense.
LAX_IN_PINOCCHIO = (
    r"is not \d number",  # junk: urdfdom drops the <inertial> it is in, or reads a prefix
    r"must hold \d number",  # too few or too many numbers: same
    r"is not finite",  # NaN, inf, 1e400: urdfdom drops the <inertial> or keeps NaN
    r"is out of range",  # |x| > 1e50: the dynamics overflow to NaN, in Pinocchio too
    r"negative mass",  # urdfdom keeps it
    r"has zero length",  # zero axis: urdfdom keeps it (NaN dynamics)
    r"<inertial>: missing <(mass|inertia)>|missing attribute",  # urdfdom drops the element or uses 0
    r"has no name",  # urdfdom accepts name="" (the URDF spec requires a name)
    r"is negative \(.*\): it would feed energy",  # negative damping: Pinocchio keeps it
    r"friction of degree of freedom .* is negative",  # on a floating or planar joint: Pinocchio keeps it
    r"<limit>: lower=.* is above upper=",  # lower > upper: Pinocchio keeps it (no position fits)
    # urdfdom keeps only the links reachable from the root: a cycle elsewhere is dropped unseen
    r"not reachable from the root link .*their joints form a cycle",
    # the floating base is the joint 'root_joint', as in Pinocchio, which then has two joints
    # of that name
    r"duplicate joint name 'root_joint'",
    r"<loop_joint",  # denoc_bridge's extension, which urdfdom ignores
    r"malformed XML",  # e.g. a control character, which TinyXML lets through
    r"has two parents",  # Pinocchio then builds a model with one joint twice
)


@contextlib.contextmanager
def _quiet_stderr():
    """Silence urdfdom, which prints its errors on file descriptor 2."""
    saved = os.dup(2)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), 2)
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


#: Refusals with ``mimic=True`` of documents that ``pin.buildModelFromXML(..., mimic=True)`` loads
#: (documented in denoc_bridge.constraints.mimic): Pinocchio ignores a <mimic> on a planar or floating
#: joint, and the <loop_joint> extension.
LAX_MIMIC = (
    r"is not revolute, continuous or prismatic",
    r"mimic joints and loop closures together are not supported",
)


def _pin_from_xml(text: str, floating: bool, mimic: bool):
    """``pin.buildModelFromXML`` of the text, or None when Pinocchio refuses it."""
    args = (pin.JointModelFreeFlyer(),) if floating else ()
    try:
        with _quiet_stderr():
            return pin.buildModelFromXML(text, *args, mimic=mimic)
    except Exception as exc:  # Pinocchio's own refusals are not under test
        note(f"pin.buildModelFromXML refuses the document: {str(exc)[:200]}")
        return None


def _tab_separated_numbers(text: str) -> bool:
    return any(
        re.search(r"[\t\n\r]", value.strip())
        for e in ET.fromstring(text).iter()
        for attr, value in e.attrib.items()
        if attr in NUMERIC
    )


def _reserved_names(text: str, floating: bool) -> bool:
    reserved = {"universe", "root_joint"} if floating else {"universe"}
    return any(e.get("name") in reserved for e in ET.fromstring(text) if e.tag in ("link", "joint"))


def load(source, **kwargs):
    """(model or None, exception or None): the contract of load_urdf on any document."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            model = db.load_urdf(source, **kwargs)
        except db.DenocError as exc:
            assert str(exc).strip(), f"{type(exc).__name__} raised with an empty message"
            model, error = None, exc
        else:
            error = None
    unexpected = [w for w in caught if not issubclass(w.category, db.PhysicsWarning)]
    assert not unexpected, f"unexpected warning(s) while loading: {[str(w.message) for w in unexpected]}"
    return model, error


def _finite(name, x):
    x = np.asarray(x)
    assert np.all(np.isfinite(x)), f"{name} is not finite: {x}"


def term_scale(model, v=None, a=None) -> float:
    """Rough size of the terms that the GIM (``v``, ``a`` None) or inverse dynamics add up:
    the masses and inertias at the robot's length scale L, times the accelerations.

    Fuzzed numbers put centres of mass or joints 1e6 m away next to 0.1 m links: the results
    then come out of cancellations of terms ~ m L^2, and no float64 computation (ours or
    Pinocchio's) gets them closer than ~ eps m L^2.  For ordinary documents (L ~ 1) this
    scale is that of the results, and the check stays at TOL; a wrong term would show there.
    """
    length = 1.0 + np.abs(model.joint_translation).sum() + np.abs(model.com).max(initial=0.0)
    inertia = (
        model.mass.sum() + np.abs(model.inertia).max(axis=(1, 2), initial=0.0).sum() + np.abs(model.armature).sum()
    )
    scale = inertia * length**2
    if v is not None:
        scale *= np.linalg.norm(model.gravity) + np.abs(a).max(initial=0.0) + np.abs(v).max(initial=0.0) ** 2
    return float(scale)


def assert_close_scaled(name: str, ours, ref, scale: float, n: int) -> None:
    """assert_close at TOL, or within round-off of the terms summed (``10 n eps scale``)."""
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    if 10 * n * np.finfo(float).eps * scale <= TOL * np.abs(ref).max(initial=0.0):
        assert_close(name, ours, ref, TOL)
        return
    event("compared at the round-off of badly scaled terms")
    assert ours.shape == ref.shape, f"{name}: shape {ours.shape} != {ref.shape}"
    err = np.abs(ours - ref).max(initial=0.0)
    allowed = TOL * np.abs(ref).max(initial=0.0) + 10 * n * np.finfo(float).eps * scale
    assert err <= allowed, f"{name}: error {err:.3g} > {allowed:.3g} (term scale {scale:.3g})"


def check_tree_dynamics(model, pm, q, v, a, who: str) -> None:
    """rnea, crba and aba of ``model`` (a tree, loops ignored) against the Pinocchio model ``pm``."""
    pd = pm.createData()
    tau_pin = pin.rnea(pm, pd, q, v, a).copy()
    M_pin = pin.crba(pm, pd, q).copy()
    tau = db.tree_inverse_dynamics(model, q, v, a)
    M = db.mass_matrix(model, q)
    _finite("inverse_dynamics", tau)
    _finite("mass_matrix", M)
    n = max(1, model.n_links)
    assert_close_scaled(f"inverse_dynamics vs pin.rnea ({who})", tau, tau_pin, term_scale(model, v, a), n)
    assert_close_scaled(f"mass_matrix vs pin.crba ({who})", M, M_pin, term_scale(model), n)
    a_pin = pin.aba(pm, pd, q, v, tau_pin).copy()
    try:
        acc = db.tree_forward_dynamics(model, q, v, tau_pin)
    except db.SingularInertiaError as exc:
        assert exc.joint in model.joint_names and f"'{exc.joint}'" in str(exc), str(exc)
        # raised when an articulated inertia is singular or indefinite (non-physical inertias
        # loaded with a PhysicsWarning): then the GIM is singular or not positive definite
        # (its LDL^T pivots are those articulated inertias), or Pinocchio's aba is not finite.
        # Documented too: a pivot at most SINGULAR_RTOL of the inertias it is computed from
        # counts as zero (a needle spinning about its axis, izz = 1e-13 next to ixx = 1); as
        # every LDL^T pivot bounds the GIM's smallest eigenvalue from above, that eigenvalue is
        # then at most SINGULAR_RTOL times the largest link inertia or GIM entry.
        eig = np.linalg.eigvalsh(M_pin) if np.all(np.isfinite(M_pin)) else np.array([np.nan])
        inertia = max(
            np.abs(np.diagonal(M_pin)).max(initial=0.0),
            model.mass.max(initial=0.0),
            np.abs(model.inertia).max(initial=0.0),
            np.abs(model.armature).max(initial=0.0),
            (model.mass * (model.com**2).sum(axis=1)).max(initial=0.0),
        )
        assert (
            not np.all(np.isfinite(a_pin))
            or not eig.min() > 1e-9 * np.abs(eig).max()
            or not eig.min() > 10 * SINGULAR_RTOL * inertia
        ), (
            f"SingularInertiaError at joint '{exc.joint}' but Pinocchio's aba is finite and the GIM is positive "
            f"definite (eigenvalues {eig.min():.3g} .. {eig.max():.3g}; largest inertia {inertia:.3g}) ({who})"
        )
        event("forward dynamics: SingularInertiaError")
        return
    _finite("forward_dynamics", acc)
    bias = db.nonlinear_effects(model.replace(loops=()) if model.loops else model, q, v)
    bias_pin = pin.nonLinearEffects(pm, pd, q, v).copy()
    rhs, rhs_pin = tau_pin - bias, tau_pin - bias_pin
    passed, info = solve_agreement(acc, a_pin, M, rhs, M_pin, rhs_pin, TOL)
    if passed:
        return
    # A disagreement beyond TOL is excused only by the conditioning, and then only within the
    # perturbation bound of solve_agreement -- or, where M is singular to working precision (no
    # exact solution to measure against), by the residual check below:
    singular = info.get("kappa") == np.inf
    assert singular or info["error"] <= info["allowed"], f"forward_dynamics vs pin.aba ({who}): {info}"
    if info["kappa"] <= 1e6:
        # both problems are solved to kappa * eps ~ 2e-10: the two problems differ (M and h
        # agree only to the round-off of badly scaled terms, checked above), ours is solved
        assert info["error_M"] > TOL or info["error_rhs"] > TOL, f"forward_dynamics vs pin.aba ({who}): {info}"
        assert info["ours_vs_exact"] <= TOL, f"forward_dynamics ({who}) does not solve M a = tau - h: {info}"
        event("forward dynamics: problems differ by round-off of badly scaled terms")
        return
    # Beyond, both carry errors ~ kappa * eps (fuzzed lever arms of 1e6 m next to 0.1 m give
    # kappa ~ 1e14), so which one is closer to the exact solution is noise; the residual of
    # M a = tau - h (ABA is not normwise backward stable) must be no worse than Pinocchio's own.
    event("forward dynamics: kappa(M) > 1e6, checked against the perturbation bound")
    res, res_pin = np.abs(M @ acc - rhs).max(), np.abs(M_pin @ a_pin - rhs_pin).max()
    scale = max(np.abs(M).max() * np.abs(acc).max(), np.abs(rhs).max())
    assert res <= max(TOL * scale, 10 * res_pin), (
        f"forward_dynamics ({who}): residual of M a = tau - h {res:.3g}, Pinocchio's {res_pin:.3g} (scale {scale:.3g})"
    )


def check_mimic_dynamics(mm, q, v, a, pm_xml=None) -> None:
    """A MimicModel: rnea and crba against to_pinocchio(mm) when Pinocchio can build it and
    against ``pm_xml`` (``pin.buildModelFromXML(..., mimic=True)``), forward dynamics against
    inverse dynamics (Pinocchio's aba refuses mimic joints).  With loop closures on the tree
    (which Pinocchio ignores) the open-chain torques ``G^T ID`` are compared, and the
    constrained accelerations are finite or a documented refusal."""
    tau = db.mimic.inverse_dynamics(mm, q, v, a) if mm.loops else db.inverse_dynamics(mm, q, v, a)
    M = db.mass_matrix(mm, q)
    # the multipliers scale the reduced quantities (M_r = G^T M G)
    gain = max(1.0, max((abs(r.multiplier) for r in mm.mimic), default=1.0)) ** 2
    _, v_full, a_full = mm.expand(q, v, a)
    n = max(1, mm.n_links)
    tau_scale, M_scale = gain * term_scale(mm.tree, v_full, a_full), gain * term_scale(mm.tree)
    _finite("inverse_dynamics (mimic)", tau)
    _finite("mass_matrix (mimic)", M)
    try:
        refs = [("to_pinocchio", db.to_pinocchio(mm))]
    except db.ModelError as exc:  # documented: mimicked joint after its mimic joint, armature
        event("mimic: to_pinocchio refuses")
        note(f"to_pinocchio(MimicModel) refuses: {exc}")
        refs = []
    if pm_xml is not None:
        event("mimic: compared with pin.buildModelFromXML(mimic=True)")
        assert mm.joint_names == tuple(pm_xml.names[1:]) and (mm.nq, mm.nv) == (pm_xml.nq, pm_xml.nv)
        refs.append(("pin.buildModelFromXML", pm_xml))
    for who, pm in refs:
        pd = pm.createData()
        assert_close_scaled(
            f"inverse_dynamics vs pin.rnea (mimic, {who})", tau, pin.rnea(pm, pd, q, v, a), tau_scale, n
        )
        assert_close_scaled(f"mass_matrix vs pin.crba (mimic, {who})", M, pin.crba(pm, pd, q), M_scale, n)
    if mm.loops:  # the stacked mimic and loop rows at a state that need not close the loops
        try:
            _finite("forward_dynamics (mimic and loops)", db.forward_dynamics(mm, q, v, tau))
        except db.DenocError as exc:
            assert str(exc)
            event(f"mimic and loops: {type(exc).__name__}")
        return
    try:
        acc = db.forward_dynamics(mm, q, v, tau)
    except db.SingularInertiaError as exc:
        assert str(exc)
        event("forward dynamics: SingularInertiaError")
        return
    _finite("forward_dynamics (mimic)", acc)
    # tau = ID(a): forward dynamics gives a back, to TOL where M_r is well conditioned; beyond
    # kappa = 1e6 to a multiple of the kappa * eps that any solver loses (the default Lagrange
    # method works through the tree's M^-1, and ABA's articulated inertias can be worse
    # conditioned than M_r): there only gross errors are caught, a wrong formula shows at TOL
    kappa = np.linalg.cond(M) if M.size else 1.0
    err = np.abs(acc - a).max(initial=0.0)
    allowed = (TOL if kappa <= 1e6 else max(TOL, 1e3 * n * kappa * np.finfo(float).eps)) * max(
        1.0, np.abs(a).max(initial=0.0)
    )
    assert err <= allowed, f"forward_dynamics (mimic) does not undo inverse_dynamics: error {err:.3g} > {allowed:.3g}"


def check_document(text: str, floating: bool = False, mimic: bool = False, as_bytes: bool = False):
    """The fuzzing contract for one document; returns the model (or None) for the callers' tallies."""
    note(
        f"load_urdf(doc, floating_base={floating}, mimic={mimic}) with doc ({'bytes' if as_bytes else 'str'}) =\n{text}"
    )
    model, error = load(text.encode() if as_bytes else text, floating_base=floating, mimic=mimic)
    pm_xml = _pin_from_xml(text, floating, False)
    pm_mimic_xml = _pin_from_xml(text, floating, True) if mimic else None
    if error is not None:
        event(f"refused: {type(error).__name__}")
        note(f"load_urdf raised {type(error).__name__}: {error}")
        if (pm_mimic_xml if mimic else pm_xml) is not None:
            assert any(re.search(p, str(error)) for p in LAX_IN_PINOCCHIO + (LAX_MIMIC if mimic else ())), (
                f"Pinocchio loads this document but load_urdf raised {type(error).__name__}: {error}"
            )
        return None
    event("loaded")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check_model(model, text, floating, pm_xml, pm_mimic_xml)
    ours = [w for w in caught if "denoc_bridge" in w.filename and not issubclass(w.category, db.PhysicsWarning)]
    assert not ours, f"warning(s) from denoc_bridge: {[f'{w.category.__name__}: {w.message}' for w in ours]}"
    return model


def check_model(model, text: str, floating: bool, pm_xml, pm_mimic_xml) -> None:
    """The dynamics of a loaded model against Pinocchio (see check_document)."""
    assert isinstance(model, (db.Model, db.MimicModel))
    tree = model.tree if isinstance(model, db.MimicModel) else model
    for name in ("mass", "com", "inertia", "joint_rotation", "joint_translation", "joint_axis", "gravity"):
        _finite(name, getattr(tree, name))
    assert all(isinstance(w, str) and w for w in model.warnings)
    rng = np.random.default_rng(STATE_SEED)
    q = db.random_configuration(tree, rng)
    v, a = rng.standard_normal(tree.nv), rng.standard_normal(tree.nv)
    _finite("random_configuration", q)
    check_tree_dynamics(tree, db.to_pinocchio(tree.replace(loops=()) if tree.loops else tree), q, v, a, "to_pinocchio")
    tabbed = _tab_separated_numbers(text)
    reserved = _reserved_names(text, floating)
    if pm_xml is not None and tabbed:
        # numbers separated by tabs or newlines (XML whitespace, kept as such when written as
        # &#9; or &#10;): urdfdom splits on spaces only, fails, and drops the whole <inertial>
        # (mass 0); denoc_bridge reads the numbers, so only to_pinocchio is the reference
        event("loaded by both, not compared: urdfdom does not split numbers on tabs or newlines")
    elif pm_xml is not None and reserved:
        # a URDF link or joint named like Pinocchio's own frames ('universe', the free-flyer's
        # 'root_joint'): Pinocchio's parser then finds its own frame by that name and, e.g.,
        # drops the inertia of the links behind a fixed joint named 'universe'
        event("loaded by both, not compared: a name Pinocchio reserves")
    elif pm_xml is not None:
        event("loaded by both: compared with pin.buildModelFromXML")
        assert tree.joint_names == tuple(pm_xml.names[1:]), (
            f"joint order {tree.joint_names} differs from Pinocchio's {tuple(pm_xml.names[1:])}"
        )
        assert (tree.nq, tree.nv) == (pm_xml.nq, pm_xml.nv)
        check_tree_dynamics(tree, pm_xml, q, v, a, "pin.buildModelFromXML")
    elif pm_xml is None:
        event("loaded here, refused by Pinocchio")
    if isinstance(model, db.MimicModel):
        rng = np.random.default_rng(STATE_SEED)
        check_mimic_dynamics(
            model,
            db.random_configuration(model, rng),
            rng.standard_normal(model.nv),
            rng.standard_normal(model.nv),
            None if tabbed or reserved else pm_mimic_xml,
        )
    if tree.loops:
        # the constrained accelerations: finite, or a documented refusal (singular constraints)
        try:
            _finite(
                "forward_dynamics with loops", db.forward_dynamics(tree, q, v, db.tree_inverse_dynamics(tree, q, v, a))
            )
        except db.DenocError as exc:
            assert str(exc)
            event(f"loops: {type(exc).__name__}")


# ---------------------------------------------------------------------------- the tests
load_flags = dict(floating=st.booleans(), mimic=st.integers(0, 4).map(lambda i: i == 0), as_bytes=st.booleans())


@pytest.mark.parametrize("name", [name for name, _ in seed_documents()])
def test_unmutated_documents_load_and_match_pinocchio(name):
    text = dict(seed_documents())[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        for floating in (False, True):
            for mimic in (False, True) if "<mimic" in text else (False,):
                assert _pin_from_xml(text, floating, mimic) is not None, "Pinocchio refuses the unmutated file"
                model = check_document(text, floating, mimic)
                assert model is not None and model.n_links > 0


def test_the_checks_can_fail(monkeypatch):
    """The oracle is not vacuous: one mass off by 1e-6 is caught, an arbitrary refusal is not
    excused as one of Pinocchio's lax spots, and an undocumented exception escapes."""
    text = dict(seed_documents())["panda.urdf"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", db.PhysicsWarning)
        model = db.load_urdf(text)
    pm = pin.buildModelFromXML(text)
    mass = model.mass.copy()
    mass[3] *= 1.0 + 1e-6
    wrong = model.replace(mass=mass)
    rng = np.random.default_rng(0)
    q = db.random_configuration(model, rng)
    with pytest.raises(AssertionError, match="vs pin"):
        check_tree_dynamics(wrong, pm, q, rng.standard_normal(model.nv), rng.standard_normal(model.nv), "test")
    assert not any(re.search(p, "duplicate joint name 'j'") for p in LAX_IN_PINOCCHIO)
    monkeypatch.setattr(db, "load_urdf", lambda *args, **kwargs: {}["link"])
    with pytest.raises(KeyError):
        check_document(text)


def test_a_needle_is_refused_as_documented_and_a_false_refusal_is_caught(monkeypatch):
    """A joint whose inertia is 1e-13 of its link's (a needle spinning about its axis) is
    refused by forward dynamics (documented; Pinocchio returns tau / 1e-13) and the oracle
    accepts that refusal; the same refusal on an ordinary link fails the oracle."""
    needle = _one_joint(inertia='ixx="1" iyy="1" izz="1e-13"')
    with pytest.raises(db.SingularInertiaError, match=r"joint 'j'.*at most 1e-12 of the inertias"):
        model = db.load_urdf(needle)
        db.forward_dynamics(model, db.random_configuration(model, 0), np.zeros(1), np.ones(1))
    check_document(needle)
    thicker = _one_joint(inertia='ixx="1" iyy="1" izz="1e-9"')
    check_document(thicker)  # solved: 1e-9 is a pivot

    def refuse(model, *args, **kwargs):
        raise db.SingularInertiaError("refused at joint 'j'", joint=model.joint_names[0], link=model.link_names[0])

    monkeypatch.setattr(db, "tree_forward_dynamics", refuse)
    with pytest.raises(AssertionError, match="SingularInertiaError at joint 'j' but Pinocchio's aba is finite"):
        check_document(thicker)


def _one_joint(inertia='ixx="1" iyy="1" izz="1"', mass="1", origin="", axis='<axis xyz="0 0 1"/>'):
    return (
        '<robot name="r"><link name="w"/><link name="a"><inertial>' + origin + f'<mass value="{mass}"/>'
        f'<inertia {inertia} ixy="0" ixz="0" iyz="0"/></inertial></link><joint name="j" type="continuous">'
        f'<parent link="w"/><child link="a"/>{axis}</joint></robot>'
    )


@pytest.mark.parametrize(
    "xml,match",
    [
        # urdf-parser-py failed with "'NoneType' object has no attribute 'split'" (urdfdom: zero axis)
        pytest.param(_one_joint(axis="<axis/>"), r"joint 'j' <axis>: missing attribute 'xyz'", id="axis-without-xyz"),
        # Python's float() reads these; urdfdom drops the <inertial> ("is not a float"): the two
        # libraries built different models from one file
        pytest.param(_one_joint(mass="1_0"), r"link 'a' <inertial> <mass>.*not 1 number", id="underscore"),
        pytest.param(_one_joint(mass="\u0661"), r"link 'a' <inertial> <mass>.*not 1 number", id="arabic-digit"),
        pytest.param(
            _one_joint(origin='<origin xyz="0\u20030 1"/>'),
            r"link 'a' <inertial> <origin>.*not 3 number",
            id="unicode-space",
        ),
        # finite but huge: the dynamics overflowed to NaN without an error, or the loader's lumping
        # emitted numpy overflow warnings
        pytest.param(
            _one_joint(inertia='ixx="1" iyy="1" izz="1e308"'),
            r"link 'a' <inertial> <inertia>.*out of range",
            id="inertia-1e308",
        ),
        pytest.param(
            _one_joint(origin='<origin xyz="3e253 0 0"/>'),
            r"link 'a' <inertial> <origin>.*out of range",
            id="com-3e253",
        ),
    ],
)
def test_documents_the_fuzzer_found_are_refused_by_name(xml, match):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(db.URDFError, match=match):
            db.load_urdf(xml)


def test_limits_may_stay_huge():
    """Position limits do not enter the dynamics; +-max double means "no limit" (Pinocchio)."""
    xml = (
        _one_joint()
        .replace('type="continuous"', 'type="revolute"')
        .replace("</joint>", '<limit lower="-1.7976931348623157e308" upper="1e300" effort="1" velocity="1"/></joint>')
    )
    model = db.load_urdf(xml)
    assert model.lower_limit[0] == -np.finfo(float).max and model.upper_limit[0] == 1e300


@pytest.mark.slow
@FUZZ
@given(doc=st.sampled_from(seed_documents()).flatmap(lambda nd: mutated(nd[1])), **load_flags)
def test_mutated_real_urdfs_load_or_raise_documented_errors(doc, floating, mimic, as_bytes):
    text, mutations = doc
    note(f"mutations: {mutations}")
    check_document(text, floating, mimic, as_bytes)


@st.composite
def random_documents(draw):
    return random_urdf(
        draw(st.integers(0, 2**32 - 1), label="seed"),
        draw(st.integers(1, 10), label="links"),
        fixed=draw(st.sampled_from([0.0, 0.3, 0.6])),
        no_inertial=draw(st.sampled_from([0.0, 0.3])),
        branching=draw(st.floats(0.0, 0.8)),
    )


@FUZZ
@given(doc=random_documents().flatmap(lambda t: mutated(t, max_mutations=3, min_mutations=0)), **load_flags)
def test_random_trees_and_their_mutations_load_or_raise_documented_errors(doc, floating, mimic, as_bytes):
    text, mutations = doc
    note(f"mutations: {mutations}")
    model = check_document(text, floating, mimic, as_bytes)
    if not mutations:
        assert model is not None, "an unmutated random tree was refused"


# ------------------------------------------------------------------ the XML layer (issue 25)
#: Mutations of the document's text and bytes (not of its elements), each as urdfdom's TinyXML2
#: meets them in real files: what comes before the root, BOMs, encodings declared and actual,
#: comments, processing instructions and CDATA anywhere, namespaces, DOCTYPEs and entities,
#: character references, quoting and line ends.  Where ``pin.buildModelFromUrdf`` loads the
#: file, load_urdf must load the same model (joints, layout, dynamics); where it refuses, ours
#: may load or raise a DenocError.
_GAPS = re.compile(r">(?=\s*<)")  # between two tags
_WS = st.text(st.sampled_from(" \t\r\n"), min_size=1, max_size=6)
_SAFE_TEXT = st.text(st.sampled_from("abc xyz<>&;'\"=/!?-"), max_size=12).map(
    lambda t: t.replace("--", "-").rstrip("-")
)
_DECLS = (
    '<?xml version="1.0"?>',
    '<?xml version="1.0" encoding="UTF-8"?>',
    "<?xml version='1.0' encoding='utf-8' standalone='yes'?>",
    '<?xml version="1.0" encoding="ISO-8859-1"?>',
    '<?xml version="1.0" encoding="US-ASCII"?>',
    '<?xml version="1.0" encoding="UTF-16"?>',  # a lie: TinyXML2 reads UTF-8 anyway
    '<?xml version="1.1"?>',
)
_DOCTYPES = (
    "<!DOCTYPE robot>",
    '<!DOCTYPE robot SYSTEM "http://127.0.0.1:9/urdf.dtd">',
    '<!DOCTYPE robot PUBLIC "-//X//DTD URDF//EN" "file:///etc/passwd">',
    '<!DOCTYPE robot [<!ENTITY unused "1"><!-- a ] in a comment --><!ELEMENT robot ANY>]>',
    '<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd"><!ENTITY % p SYSTEM "http://127.0.0.1:9/x"> %p;]>',
    '<!DOCTYPE r [<!ENTITY a "aaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;">]>',
)


def _strip_decl(text: str) -> tuple[str, str]:
    m = re.match(r"\s*<\?xml[^>]*\?>", text)
    return (m.group(), text[m.end() :]) if m else ("", text)


def _insert_at_gap(draw, text: str, piece: str, label: str) -> str:
    gaps = [m.end() for m in _GAPS.finditer(text)]
    if not gaps:
        return text
    at = draw(st.sampled_from(gaps), label=label)
    return text[:at] + piece + text[at:]


def x_prefix_whitespace(draw, text):
    return draw(_WS, label="whitespace") + text, "whitespace before the declaration"


def x_declaration(draw, text):
    decl = draw(st.sampled_from(_DECLS), label="declaration")
    return decl + "\n" + _strip_decl(text)[1].lstrip(), f"declaration {decl}"


def x_comment(draw, text):
    piece = f"<!--{draw(_SAFE_TEXT, label='comment')}-->"
    where = draw(st.sampled_from(["inside", "after the declaration", "after the root"]), label="comment where")
    if where == "inside":
        return _insert_at_gap(draw, text, piece, "comment at"), "a comment between two tags"
    if where == "after the root":
        return text.rstrip() + piece + "\n", "a comment after the root element"
    decl, rest = _strip_decl(text)
    return decl + piece + rest, "a comment before the root element"


def x_processing_instruction(draw, text):
    decl, rest = _strip_decl(text)
    pi = '<?xml-stylesheet type="text/xsl" href="robot.xsl"?>'
    if draw(st.booleans(), label="PI inside"):  # TinyXML2 refuses it there; expat takes it
        return _insert_at_gap(draw, text, "<?denoc hello?>", "PI at"), "a processing instruction between two tags"
    return decl + pi + rest, "a processing instruction before the root element"


def x_cdata(draw, text):
    piece = f"<![CDATA[{draw(_SAFE_TEXT, label='cdata').replace(']]>', '')}]]>"
    return _insert_at_gap(draw, text, piece, "CDATA at"), "a CDATA section between two tags"


def x_namespaces(draw, text):
    ns = ' xmlns="http://www.ros.org" xmlns:xacro="http://www.ros.org/wiki/xacro"'
    text = re.sub(r"<robot\b", "<robot" + ns, text, count=1)
    tag = draw(st.sampled_from(["link", "joint", "origin", "inertial", "mass"]), label="prefixed on")
    text = re.sub(rf"<{tag}\b", f'<{tag} xacro:note="1"', text, count=1)
    if draw(st.booleans(), label="prefixed element"):
        text = _insert_at_gap(draw, text, '<xacro:property name="p" value="1"/>', "prefixed element at")
    return text, "namespace declarations, a prefixed attribute and element"


def x_doctype(draw, text):
    decl, rest = _strip_decl(text)
    doctype = draw(st.sampled_from(_DOCTYPES), label="doctype")
    return decl + doctype + rest, f"DOCTYPE {doctype}"


def x_char_reference(draw, text):
    """A character of a name or of a number written as a character reference (&#NN; or &#xNN;)."""
    sites = [m for m in re.finditer(r'(name|value|xyz)="([^"&]+)"', text)]
    if not sites:
        return text, "no attribute to encode"
    m = draw(st.sampled_from(sites), label="char ref site")
    k = draw(st.integers(0, len(m.group(2)) - 1), label="char ref at")
    c = m.group(2)[k]
    ref = f"&#{ord(c)};" if draw(st.booleans(), label="decimal") else f"&#x{ord(c):x};"
    value = m.group(2)[:k] + ref + m.group(2)[k + 1 :]
    return text[: m.start(2)] + value + text[m.end(2) :], f"character reference {ref}"


def x_predefined_entity(draw, text):
    """A name with &amp; &lt; &gt; &quot; &apos; in it (renamed everywhere it is referenced)."""
    names = re.findall(r'<link name="([^"&<]+)"', text)
    if not names:
        return text, "no link to rename"
    old = draw(st.sampled_from(names), label="renamed link")
    ent = draw(st.sampled_from(["&amp;", "&lt;", "&gt;", "&quot;", "&apos;"]), label="entity")
    return re.sub(rf'(name|link)="{re.escape(old)}"', rf'\1="{old}{ent}x"', text), f"link name with {ent}"


def x_single_quotes(draw, text):
    return re.sub(r'="([^"\']*)"', r"='\1'", text), "single-quoted attributes"


def x_line_ends(draw, text):
    return text.replace("\r\n", "\n").replace("\n", "\r\n").replace("><", ">\r\n  <"), "CRLF line ends, indentation"


def x_second_element(draw, text):
    return text.rstrip() + '\n<extra name="after the robot"/>\n', "a second element after the root"


XML_MUTATIONS = {
    f.__name__[2:]: f
    for f in (
        x_prefix_whitespace,
        x_declaration,
        x_comment,
        x_processing_instruction,
        x_cdata,
        x_namespaces,
        x_doctype,
        x_char_reference,
        x_predefined_entity,
        x_single_quotes,
        x_line_ends,
        x_second_element,
    )
}
#: What becomes of the text: UTF-8 bytes (with a BOM or not), a str (with a BOM or not), UTF-16
#: with a BOM (Pinocchio refuses it), Latin-1 bytes under a Latin-1 declaration.
ENCODINGS = ("utf-8", "utf-8 BOM", "str", "str BOM", "utf-16 BOM", "latin-1 declared")


@st.composite
def xml_mutated(draw, text: str, max_mutations: int = 4):
    """(document as str or bytes, descriptions): ``text`` after 1..max XML-layer mutations."""
    done = []
    for _ in range(draw(st.integers(1, max_mutations), label="number of XML mutations")):
        kind = draw(st.sampled_from(sorted(XML_MUTATIONS)), label="XML mutation")
        text, what = XML_MUTATIONS[kind](draw, text)
        done.append(what)
        event(f"XML mutation: {kind}")
    enc = draw(st.sampled_from(ENCODINGS), label="encoding")
    done.append(f"as {enc}")
    if enc == "utf-8":
        doc = text.encode("utf-8")
    elif enc == "utf-8 BOM":
        doc = codecs.BOM_UTF8 + text.encode("utf-8")
    elif enc == "str":
        doc = text
    elif enc == "str BOM":
        doc = "\ufeff" + text
    elif enc == "utf-16 BOM":
        doc = text.encode("utf-16")
    else:
        decl, rest = _strip_decl(text)
        doc = ('<?xml version="1.0" encoding="ISO-8859-1"?>' + rest).encode("latin-1", errors="replace")
    return doc, done


def check_xml_document(doc: str | bytes, mimic: bool = False):
    """The XML-layer contract: where Pinocchio loads the file, we load the same model."""
    shown = doc if isinstance(doc, str) else doc[:4000]
    note(f"load_urdf(doc, mimic={mimic}) with doc = {shown!r}")
    model, error = load(doc, mimic=mimic)
    pin_said, pm = pin_outcome(doc)
    note(f"pin.buildModelFromUrdf: {pin_said} {pm if pin_said == 'refuses' else ''}")
    if pin_said == "refuses":
        event("XML layer: Pinocchio refuses")
        if error is not None:
            event(f"XML layer: both refuse ({type(error).__name__})")
        return model
    assert error is None or any(re.search(p, str(error)) for p in LAX_IN_PINOCCHIO + LAX_MIMIC * mimic), (
        f"Pinocchio loads this file but load_urdf raised {type(error).__name__}: {error}"
    )
    if error is not None:
        event("XML layer: Pinocchio loads, refused as documented")
        return None
    event("XML layer: both load, compared")
    tree = model.tree if isinstance(model, db.MimicModel) else model
    assert tree.joint_names == tuple(pm.names[1:]), (
        f"joint names {tree.joint_names} vs Pinocchio's {tuple(pm.names[1:])}"
    )
    assert (tree.nq, tree.nv) == (pm.nq, pm.nv)
    rng = np.random.default_rng(STATE_SEED)
    q = db.random_configuration(tree, rng)
    v, a = rng.standard_normal(tree.nv), rng.standard_normal(tree.nv)
    check_tree_dynamics(tree, pm, q, v, a, "pin.buildModelFromUrdf of the mutated file")
    return model


def test_xml_layer_cases_load_as_in_pinocchio():
    """Each XML-layer mutation once, on a small robot, with its outcome in Pinocchio."""
    text = dict(seed_documents())["urdf/gripper4.urdf"]
    for enc_doc in (
        "\n  " + text,
        codecs.BOM_UTF8 + text.encode(),
        "\ufeff" + text,
        text.replace('<?xml version="1.0"?>', '<?xml version="1.0" encoding="UTF-16"?>').encode(),
        re.sub(r"<robot\b", '<!DOCTYPE robot [<!ENTITY x SYSTEM "file:///etc/passwd">]><robot', text, count=1),
        re.sub(r"<robot\b", "<!-- c --><?pi x?><robot", text, count=1) + "<!-- end --><extra/>",
    ):
        assert check_xml_document(enc_doc) is not None, "Pinocchio loads it, we must too"


def test_the_xml_layer_check_can_fail(monkeypatch):
    """A file Pinocchio loads and we refuse, or load differently, fails the check."""
    text = dict(seed_documents())["urdf/gripper4.urdf"]
    real = db.load_urdf

    def refuse(source, **kwargs):
        raise db.URDFError("made up")

    monkeypatch.setattr(db, "load_urdf", refuse)
    with pytest.raises(AssertionError, match="Pinocchio loads this file but load_urdf raised"):
        check_xml_document(text)

    def heavier(source, **kwargs):
        m = real(source, **kwargs)
        return m.replace(mass=m.mass * (1 + 1e-6))

    monkeypatch.setattr(db, "load_urdf", heavier)
    with pytest.raises(AssertionError, match="vs pin"):
        check_xml_document(text)


XML_FUZZ = settings(FUZZ, max_examples=_LONG or int(os.environ.get("DENOC_FUZZ_CI_EXAMPLES", "300")) // 3)


@XML_FUZZ
@given(doc=random_documents().flatmap(xml_mutated), mimic=st.integers(0, 4).map(lambda i: i == 0))
def test_xml_layer_mutations_of_random_trees_load_as_in_pinocchio(doc, mimic):
    text, mutations = doc
    note(f"XML mutations: {mutations}")
    check_xml_document(text, mimic)


@pytest.mark.slow
@FUZZ
@given(doc=st.sampled_from(seed_documents()).flatmap(lambda nd: xml_mutated(nd[1])))
def test_xml_layer_mutations_of_real_urdfs_load_as_in_pinocchio(doc):
    text, mutations = doc
    note(f"XML mutations: {mutations}")
    check_xml_document(text)
