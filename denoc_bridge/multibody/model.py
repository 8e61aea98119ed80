"""The model: flat, read-only NumPy arrays describing a tree of links.

A :class:`Model` is what the loaders (:func:`denoc_bridge.load_urdf`,
:func:`denoc_bridge.from_pinocchio`) build and what every algorithm reads.  It
is never modified by the algorithms (its arrays are read-only); per-call work
buffers live in :class:`denoc_bridge.multibody.data.Data`.

Layout
------
* Links (moving bodies after fixed joints were merged) are numbered
  ``0 .. n_links-1`` depth first, so ``parent[k] < k`` (``-1`` is the base)
  and every kinematic module is a contiguous range of links
  (:mod:`denoc_bridge.multibody.modules`).  Link k is moved by joint k; link k of the
  model is joint ``k + 1`` of the equivalent ``pinocchio.Model``.
* ``q``, ``v``, ``a`` and ``tau`` are laid out as in Pinocchio:
  joint k owns ``q[idx_q[k] : idx_q[k] + nq_joint[k]]`` and
  ``v[idx_v[k] : idx_v[k] + nv_joint[k]]``.
* Joint k sits at the fixed placement (``joint_rotation[k]``,
  ``joint_translation[k]``) in the frame of its parent link; the frame of
  link k is the joint frame moved by the joint.
* Inertia of link k, in its own frame: ``mass[k]``, centre of mass ``com[k]``
  and rotational inertia ``inertia[k]`` about the centre of mass (as
  ``pinocchio.Inertia``).
"""

from __future__ import annotations

import inspect
import operator
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, final

import numpy as np
import numpy.typing as npt

from denoc_bridge._text import count, did_you_mean
from denoc_bridge.core import tree as _core
from denoc_bridge.core.layout import build_tables, with_gravity
from denoc_bridge.errors import InputError, InputTypeError, ModelError, NameLookupError, PhysicsWarning
from denoc_bridge.multibody.checks import ModelKind
from denoc_bridge.multibody.constraints import (
    JointCoupling,
    LoopClosure,
    Mimic,
    check_coupling_joints,
    frozen_array,
    make_joint_coupling,
    make_loop_closure,
)
from denoc_bridge.multibody.data import Data
from denoc_bridge.multibody.joints import (
    AXIAL,
    CIRCLE_OFFSET,
    QUATERNION_OFFSET,
    JointType,
    joint_nq,
    joint_nv,
    neutral_q,
)
from denoc_bridge.multibody.modules import Module, decompose_into_modules
from denoc_bridge.spatial import link_mass_matrices

__all__ = ["Model", "Frame", "Mimic", "DEFAULT_GRAVITY", "inertia_problem", "inertia_problems"]

DEFAULT_GRAVITY = (0.0, 0.0, -9.81)


@dataclass(frozen=True)
class Frame:
    """A named frame rigidly attached to a link (URDF links and joints, merged ones included).

    ``link`` is the model link it moves with (-1 for the fixed base) and
    (``rotation``, ``translation``) its placement in that link's frame.
    """

    name: str
    kind: str
    link: int
    rotation: np.ndarray
    translation: np.ndarray

    def __post_init__(self) -> None:
        """The placement copied read-only and checked (shapes, finite numbers)."""
        object.__setattr__(self, "rotation", frozen_array(self.rotation, (3, 3), f"frame '{self.name}': rotation"))
        object.__setattr__(
            self, "translation", frozen_array(self.translation, (3,), f"frame '{self.name}': translation")
        )


def inertia_problem(inertia: npt.ArrayLike) -> str:
    """Why a rotational inertia about the centre of mass is not physical, or "" if it is.

    Checks positive semi-definiteness and the triangle inequality of the
    principal moments (I1 + I2 >= I3), with a tolerance of 1e-10 relative to the
    largest moment plus 1e-18 kg m^2 (round-off in exported URDF files).
    """
    found = inertia_problems(np.asarray(inertia, dtype=float).reshape(1, 3, 3))
    return found[0][1] if found else ""


def inertia_problems(inertias: np.ndarray) -> list[tuple[int, str]]:
    """(index, reason) of each non-physical inertia of an (L, 3, 3) stack (see inertia_problem)."""
    if len(inertias) == 0:
        return []
    ev = np.linalg.eigvalsh(0.5 * (inertias + np.transpose(inertias, (0, 2, 1))))
    tol = 1e-10 * np.abs(ev).max(axis=1) + 1e-18
    out = []
    for k in np.flatnonzero((ev[:, 0] < -tol) | (ev[:, 0] + ev[:, 1] < ev[:, 2] - tol)):
        e = ev[k]
        if e[0] < -tol[k]:
            out.append((int(k), f"inertia tensor is not positive semi-definite (principal moments {e.tolist()})"))
        else:
            out.append((int(k), f"principal moments {e.tolist()} violate the triangle inequality I1 + I2 >= I3"))
    return out


def _offsets_in_q(joint_type: np.ndarray, idx_q: np.ndarray, offsets: dict[JointType, int]) -> np.ndarray:
    """q indices where the blocks of ``offsets`` (joint type -> offset in the joint's q) start."""
    out = [idx_q[joint_type == int(t)] + off for t, off in offsets.items()]
    return np.sort(np.concatenate(out)) if out else np.zeros(0, dtype=np.int64)


def _readonly(a: npt.ArrayLike, dtype: npt.DTypeLike) -> np.ndarray:
    a = np.array(a, dtype=dtype, copy=True)
    a.setflags(write=False)
    return a


class NamedConfigurations(Mapping[str, np.ndarray]):
    """A model's reference configurations: a read-only mapping of names to read-only arrays; a
    name it lacks raises :class:`~denoc_bridge.errors.NameLookupError` (a ``KeyError``) with
    the names it has."""

    __slots__ = ("_items", "_owner")

    def __init__(self, items: dict[str, np.ndarray], owner: str) -> None:
        self._items, self._owner = items, owner

    def __getitem__(self, name: str) -> np.ndarray:
        try:
            return self._items[name]
        except (KeyError, TypeError):
            have = ", ".join(self._items) or "none"
            raise NameLookupError(
                f"model '{self._owner}' has no configuration {name!r} (it has: {have})"
                + (did_you_mean(name, list(self._items)) if isinstance(name, str) else "")
            ) from None

    def __iter__(self) -> Iterator[str]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"NamedConfigurations({', '.join(self._items)})"


@final  # the dynamics dispatch on type(model) is Model / MimicModel: no subclasses
class Model(ModelKind):
    """A tree of links with their joints and inertias, as flat read-only arrays.

    Build one with :func:`denoc_bridge.load_urdf` or
    :func:`denoc_bridge.from_pinocchio`, or directly from arrays (all per link,
    links numbered depth first)::

        Model(name="pendulum", link_names=["rod"], joint_names=["hinge"],
              parent=[-1], joint_type=[JointType.REVOLUTE],
              joint_axis=[[0, 1, 0]], joint_rotation=[np.eye(3)],
              joint_translation=[[0, 0, 0]], mass=[1.0],
              com=[[0, 0, -0.5]], inertia=[np.diag([0.08, 0.08, 0.0])])

    Attributes (read-only arrays, one row per link unless stated)
    ---------------------------------------------------------------
    parent, joint_type, joint_axis, joint_axis2, joint_rotation,
    joint_translation, mass, com, inertia : see the module docstring.
    idx_q, nq_joint, idx_v, nv_joint : Pinocchio's q/v layout per joint.
    quaternion_index, circle_index : first q index of each unit quaternion and of each
        (cos, sin) pair.
    armature, damping, friction : per degree of freedom (``nv``).  The armature
        (rotor inertia) is added to the joint-space inertia as in Pinocchio;
        damping and friction are recorded: the dynamics functions apply neither
        (as Pinocchio's ``rnea``/``aba``), :func:`denoc_bridge.simulate` applies the
        damping unless ``passive=False``, and friction is never applied.
    stiffness, rest_configuration : joint springs, per degree of freedom (``nv``) and
        the configuration where they are relaxed (``nq``, default neutral):
        ``tau_spring = -stiffness * difference(rest_configuration, q)``, applied by
        :func:`denoc_bridge.simulate` and counted in the potential energy.
    lower_limit, upper_limit : per configuration variable (``nq``).
    reference_configurations : named configurations (``nq`` each, read-only mapping), as
        Pinocchio's ``model.referenceConfigurations``: an MJCF file's pose (``"qpos0"``) and
        keyframes, an SRDF's group states (``"half_sitting"``), a Pinocchio model's own.
    module_start, module_end, module_parent, link_module : the module graph.
    gravity : (3,) gravitational acceleration in the base frame, settable.
    """

    def __init__(
        self,
        *,
        name: str,
        link_names: Sequence[str],
        joint_names: Sequence[str],
        parent: npt.ArrayLike,
        joint_type: npt.ArrayLike,
        joint_axis: npt.ArrayLike,
        joint_rotation: npt.ArrayLike,
        joint_translation: npt.ArrayLike,
        mass: npt.ArrayLike,
        com: npt.ArrayLike,
        inertia: npt.ArrayLike,
        joint_axis2: npt.ArrayLike | None = None,
        armature: npt.ArrayLike | None = None,
        damping: npt.ArrayLike | None = None,
        friction: npt.ArrayLike | None = None,
        stiffness: npt.ArrayLike | None = None,
        rest_configuration: npt.ArrayLike | None = None,
        lower_limit: npt.ArrayLike | None = None,
        upper_limit: npt.ArrayLike | None = None,
        reference_configurations: Mapping[str, npt.ArrayLike] | None = None,
        gravity: npt.ArrayLike = DEFAULT_GRAVITY,
        base_name: str = "universe",
        floating_base: bool = False,
        source: str | None = None,
        frames: Sequence[Frame] = (),
        mimic: Sequence[Mimic] = (),
        loops: Sequence[LoopClosure | JointCoupling] = (),
        warnings: Sequence[str] = (),
        inertia_check: str = "raise",
        _warn_inertia: bool = True,
    ) -> None:
        self.name = str(name)
        self.link_names = tuple(str(s) for s in link_names)
        self.joint_names = tuple(str(s) for s in joint_names)
        n = len(self.link_names)
        self.base_name = str(base_name)
        self.floating_base = bool(floating_base)
        self.source = source
        self.frames = tuple(frames)
        self.mimic = tuple(mimic)
        self.loops = tuple(loops)
        self.warnings = tuple(str(w) for w in warnings)
        if inertia_check not in ("raise", "warn"):
            raise ModelError(f"inertia_check must be 'raise' or 'warn', got {inertia_check!r}")

        def per_link(
            value: npt.ArrayLike, shape: tuple[int, ...], what: str, dtype: npt.DTypeLike = float
        ) -> np.ndarray:
            a = np.array(value, dtype=dtype)
            if a.shape != (n,) + shape:
                raise ModelError(f"{what} must have shape {(n,) + shape} (one per link), got {a.shape}")
            return a

        if len(self.joint_names) != n:
            raise ModelError(f"{n} link names but {len(self.joint_names)} joint names")
        self.parent = _readonly(per_link(parent, (), "parent", np.int64), np.int64)
        jt = per_link(joint_type, (), "joint_type", np.int64)
        valid = {int(t) for t in JointType}
        for k, t in enumerate(jt):
            if int(t) not in valid:
                raise ModelError(f"joint '{self.joint_names[k]}': unknown joint type code {int(t)}")
        self.joint_type = _readonly(jt, np.int64)
        axis = per_link(joint_axis, (3,), "joint_axis")
        axis2 = np.zeros((n, 3)) if joint_axis2 is None else per_link(joint_axis2, (3,), "joint_axis2")
        for k, t in enumerate(jt):  # canonical form: no axis where the joint type has none
            if JointType(t) not in AXIAL:
                axis[k] = 0.0
            if JointType(t) != JointType.UNIVERSAL:
                axis2[k] = 0.0
        self.joint_axis = _readonly(axis, float)
        self.joint_axis2 = _readonly(axis2, float)
        self.joint_rotation = _readonly(per_link(joint_rotation, (3, 3), "joint_rotation"), float)
        self.joint_translation = _readonly(per_link(joint_translation, (3,), "joint_translation"), float)
        self.mass = _readonly(per_link(mass, (), "mass"), float)
        self.com = _readonly(per_link(com, (3,), "com"), float)
        self.inertia = _readonly(per_link(inertia, (3, 3), "inertia"), float)

        nq_joint = np.array([joint_nq(t) for t in jt], dtype=np.int64)
        nv_joint = np.array([joint_nv(t) for t in jt], dtype=np.int64)
        self.nq_joint = _readonly(nq_joint, np.int64)
        self.nv_joint = _readonly(nv_joint, np.int64)
        self.idx_q = _readonly(np.concatenate([[0], np.cumsum(nq_joint)[:-1]]) if n else [], np.int64)
        self.idx_v = _readonly(np.concatenate([[0], np.cumsum(nv_joint)[:-1]]) if n else [], np.int64)
        self.nq = int(nq_joint.sum())
        self.nv = int(nv_joint.sum())

        def per_dof(value: npt.ArrayLike | None, what: str, default: float = 0.0) -> np.ndarray:
            a = np.full(self.nv, default) if value is None else np.array(value, dtype=float)
            if a.shape != (self.nv,):
                raise ModelError(f"{what} must have shape ({self.nv},) (one per degree of freedom), got {a.shape}")
            if not np.all(np.isfinite(a)):
                raise ModelError(f"{what} must be finite")
            return _readonly(a, float)

        self.armature = per_dof(armature, "armature")
        self.damping = per_dof(damping, "damping")
        self.friction = per_dof(friction, "friction")
        self.stiffness = per_dof(stiffness, "stiffness")
        for what in ("armature", "damping", "stiffness", "friction"):
            a = getattr(self, what)
            if np.any(a < 0):
                k = int(np.argmax(a < 0))
                link = int(np.searchsorted(self.idx_v, k, side="right") - 1)
                why = (
                    "a friction force cannot drive the joint"
                    if what == "friction"
                    else "it would feed energy into the system"
                )
                raise ModelError(
                    f"{what} of degree of freedom {k} (joint '{self.joint_names[link]}') is negative ({a[k]}): {why}"
                )
        lo = np.full(self.nq, -np.inf) if lower_limit is None else np.array(lower_limit, dtype=float)
        hi = np.full(self.nq, np.inf) if upper_limit is None else np.array(upper_limit, dtype=float)
        if lo.shape != (self.nq,) or hi.shape != (self.nq,):
            raise ModelError(f"position limits must have shape ({self.nq},)")
        self._check_limits(lo, hi)
        self.lower_limit = _readonly(lo, float)
        self.upper_limit = _readonly(hi, float)
        self._gravity = _readonly(self._check_gravity(gravity), float)
        self._rest = rest_configuration

        self._validate_structure()
        self._validate_joints()
        self._validate_inertias(inertia_check, _warn_inertia)

        start, end, mparent, link_module = decompose_into_modules(self.parent)
        self.module_start = _readonly(start, np.int64)
        self.module_end = _readonly(end, np.int64)
        self.module_parent = _readonly(mparent, np.int64)
        self.link_module = _readonly(link_module, np.int64)
        nv_sub = nv_joint.copy()
        for k in range(n - 1, -1, -1):
            if self.parent[k] >= 0:
                nv_sub[self.parent[k]] += nv_sub[k]
        self.nv_subtree = _readonly(nv_sub, np.int64)
        # where the unit quaternions and (cos, sin) pairs sit in q (normalised on input)
        self.quaternion_index = _readonly(_offsets_in_q(jt, self.idx_q, QUATERNION_OFFSET), np.int64)
        self.circle_index = _readonly(_offsets_in_q(jt, self.idx_q, CIRCLE_OFFSET), np.int64)
        self._link_mass_matrix: np.ndarray | None = None  # on first use: 288 bytes per link
        self._modules: tuple[Module, ...] | None = None
        self._kt = build_tables(self)  # the model packed for the compiled kernels
        self._core = _core.CompiledTree(self._kt)  # the table taken once, with its owner thread's work
        for lc in self.loops:
            if isinstance(lc, JointCoupling):
                check_coupling_joints(self, lc)
        self.rest_configuration = self._check_rest(self._rest)
        del self._rest
        self._references = self._check_references(reference_configurations)
        self._local = threading.local()
        self._link_index = {s: k for k, s in enumerate(self.link_names)}
        self._joint_index = {s: k for k, s in enumerate(self.joint_names)}
        self._built = True  # from here on, __setattr__ guards the public attributes

    #: public attributes that may be reassigned: metadata no kernel reads (``gravity`` is a property
    #: that repacks the kernels' tables; loops are added with :meth:`add_loop_closure`)
    _REASSIGNABLE = frozenset({"name", "source", "warnings"})

    def __setattr__(self, name: str, value: Any) -> None:
        """Every public attribute is fixed once the model is built: the compiled kernels packed it
        (``_kt``), so a reassigned ``mass`` or ``armature`` would silently not count."""
        if name.startswith("_") or name in self._REASSIGNABLE or not self.__dict__.get("_built", False):
            object.__setattr__(self, name, value)
            return
        if isinstance(getattr(type(self), name, None), property):
            object.__setattr__(self, name, value)  # a property's setter (gravity) or its error
            return
        if name == "loops":
            how = (
                "model.add_loop_closure(...) or model.add_joint_coupling(...) adds one, "
                "model.replace(loops=...) gives a copy"
            )
        elif name in inspect.signature(Model.__init__).parameters:
            how = f"model.replace({name}=...) gives a copy with it changed"
        else:
            how = "it follows from the constructor's arguments (model.replace(...) gives a changed copy)"
        raise ModelError(
            f"Model.{name} cannot be reassigned: the compiled kernels packed the model when it was built, "
            f"so the change would silently not count; {how}"
        )

    # ------------------------------------------------------------------ checks
    def _check_rest(self, rest: npt.ArrayLike | None) -> np.ndarray:
        if rest is None:
            return _readonly(neutral_q(self.joint_type), float)
        r = np.array(rest, dtype=float)
        if r.shape != (self.nq,) or not np.all(np.isfinite(r)):
            raise ModelError(
                f"rest_configuration must be {self.nq} finite numbers (nq of '{self.name}'), got shape {r.shape}"
            )
        return _readonly(r, float)

    def _check_references(self, refs: Mapping[str, npt.ArrayLike] | None) -> dict[str, np.ndarray]:
        if refs is None:
            refs = {}
        if not isinstance(refs, Mapping):
            raise ModelError(f"reference_configurations must map names to configurations, got {type(refs).__name__}")
        out = {}
        for name, q in refs.items():
            if not isinstance(name, str) or not name.strip():
                raise ModelError(f"a reference configuration needs a name (a non-empty string), got {name!r}")
            try:
                r = np.array(q, dtype=float)
            except (TypeError, ValueError):
                r = np.zeros(0)
            if r.shape != (self.nq,) or not np.all(np.isfinite(r)):
                raise ModelError(
                    f"reference configuration '{name}' must be {self.nq} finite numbers (nq of '{self.name}'), "
                    f"got {np.shape(q) if r.size else repr(q)}"
                )
            out[name] = _readonly(r, float)
        return out

    @staticmethod
    def _check_gravity(g: npt.ArrayLike) -> np.ndarray:
        try:
            g = np.array(g, dtype=float)
        except (TypeError, ValueError):
            raise ModelError(f"gravity must be 3 finite numbers, got {g!r}") from None
        if g.shape != (3,) or not np.all(np.isfinite(g)):
            raise ModelError(f"gravity must be 3 finite numbers, got {g!r}")
        return g

    def _validate_structure(self) -> None:
        n = self.n_links
        for names, what in ((self.link_names, "link"), (self.joint_names, "joint")):
            seen = set()
            for s in names:
                if s in seen:
                    raise ModelError(f"duplicate {what} name '{s}'")
                seen.add(s)
        for k in range(n):
            p = int(self.parent[k])
            if not -1 <= p < k:
                raise ModelError(
                    f"link '{self.link_names[k]}': parent index {p} must be -1 (base) or smaller than {k} "
                    "(links are numbered so that parents come first)"
                )
        # depth first: the parent of link k is link k-1 or one of its ancestors
        for k in range(1, n):
            p, a = int(self.parent[k]), k - 1
            while a != -1 and a != p:
                a = int(self.parent[a])
            if a != p:
                raise ModelError(
                    f"links are not numbered depth first: link '{self.link_names[k]}' follows "
                    f"'{self.link_names[k - 1]}' but its parent is not on that link's path to the base"
                )

    def _validate_joints(self) -> None:
        """Placements finite and rotations orthonormal, axes unit (vectorised over links)."""
        R, t = self.joint_rotation, self.joint_translation
        finite = np.isfinite(R).all(axis=(1, 2)) & np.isfinite(t).all(axis=1)
        self._first_bad(~finite, "joint", "placement is not finite")
        err = np.abs(np.einsum("kji,kjl->kil", R, R) - np.eye(3)).max(axis=(1, 2), initial=0.0)
        self._first_bad((err > 1e-9) | (np.linalg.det(R) < 0), "joint", "placement rotation is not a rotation matrix")
        jt = self.joint_type
        axial = np.isin(jt, [int(j) for j in AXIAL])
        universal = jt == JointType.UNIVERSAL
        for label, a, which in (("axis", self.joint_axis, axial), ("axis2", self.joint_axis2, universal)):
            norm = np.linalg.norm(a, axis=1)
            bad = which & ~(np.abs(norm - 1.0) <= 1e-9)
            if bad.any():
                k = int(np.argmax(bad))
                raise ModelError(f"joint {self.joint_label(k)}: {label} {a[k].tolist()} is not a unit vector")
        parallel = universal & (np.linalg.norm(np.cross(self.joint_axis, self.joint_axis2), axis=1) < 1e-9)
        self._first_bad(parallel, "joint", "(universal): the two axes are parallel")

    def _check_limits(self, lo: np.ndarray, hi: np.ndarray) -> None:
        """ModelError naming the joint for a NaN position limit or a lower limit above the upper one
        (``lower == upper`` is URDF's "no limit" when the attributes are missing; infinities and
        Pinocchio's +-max double are no limit)."""
        bad = np.isnan(lo) | np.isnan(hi) | (lo > hi)
        if np.any(bad):
            i = int(np.argmax(bad))
            k = int(np.searchsorted(self.idx_q, i, side="right") - 1)
            which = "" if self.nq_joint[k] == 1 else f" (coordinate {i - int(self.idx_q[k])} of the joint)"
            problem = "is NaN" if np.isnan(lo[i]) or np.isnan(hi[i]) else "has its lower limit above its upper limit"
            raise ModelError(
                f"joint '{self.joint_names[k]}'{which}: the position limit [{float(lo[i])!r}, {float(hi[i])!r}] {problem} "
                "(no configuration satisfies it; swap the two values, or give lower == upper for no limit)"
            )

    def _first_bad(self, bad: np.ndarray, kind: str, message: str) -> None:
        if np.any(bad):
            k = int(np.argmax(bad))
            name = self.joint_names[k] if kind == "joint" else self.link_names[k]
            raise ModelError(f"{kind} '{name}': {message}")

    def _validate_inertias(self, inertia_check: str, warn: bool = True) -> None:
        m, c, I = self.mass, self.com, self.inertia
        finite = np.isfinite(m) & np.isfinite(c).all(axis=1) & np.isfinite(I).all(axis=(1, 2))
        self._first_bad(~finite, "link", "mass, centre of mass and inertia must be finite")
        self._first_bad(m < 0, "link", "negative mass")
        scale = np.maximum(1.0, np.abs(I).max(axis=(1, 2), initial=0.0))
        asym = np.abs(I - np.transpose(I, (0, 2, 1))).max(axis=(1, 2), initial=0.0) > 1e-9 * scale
        self._first_bad(asym, "link", "inertia tensor is not symmetric")
        notes = [f"link '{self.link_names[k]}': {problem}" for k, problem in inertia_problems(I)]
        if notes and inertia_check == "raise":
            raise ModelError(notes[0])
        if notes:
            self.warnings = self.warnings + tuple(n for n in notes if n not in self.warnings)  # replace() keeps them
        if notes and warn:
            warnings.warn(
                f"model '{self.name}': {count(len(notes), 'non-physical inertia')}, first: {notes[0]} "
                "(listed in model.warnings)",
                PhysicsWarning,
                stacklevel=3,
            )

    @property
    def kernel_table(self) -> np.ndarray:
        """The model packed for the compiled kernels, as a read-only view (:mod:`denoc_bridge.core.layout`)."""
        view = self._kt.view()
        view.setflags(write=False)
        return view

    def add_loop_closure(
        self,
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
        """Close a kinematic loop with a cut joint between two links (004 §2.3).

        The joint frame sits at ``xyz1``/``rpy1`` (or ``rotation1``) in link 1's frame and at
        ``xyz2``/``rpy2`` (or ``rotation2``) in link 2's frame: the two coincide when the loop
        is closed.  The model gains the loop in place (its tree, arrays and kernels are
        unchanged) and :func:`denoc_bridge.forward_dynamics` then returns the constrained
        accelerations (:mod:`denoc_bridge.loops`).

        Parameters
        ----------
        name : str
            The cut joint's name (unique among the model's loop closures).
        type : {"revolute", "prismatic", "spherical", "weld"}
            The cut joint: 5, 5, 3 or 6 constraint rows.
        link1, link2 : str
            Link or frame names (``"world"``, ``"universe"`` or the base's name for the fixed
            base); two different rigid bodies.
        xyz1, xyz2 : (3,) array, optional
            The joint frame's origin in link 1's (link 2's) frame, metres; default zero.
        rpy1, rpy2 : (3,) array, optional
            Its orientation as URDF roll, pitch, yaw (radians); default zero.
        rotation1, rotation2 : (3, 3) array, optional
            Its orientation as a rotation matrix (instead of ``rpy1``, ``rpy2``).
        axis : (3,) array
            The axis of a revolute or prismatic cut joint in the joint frame (normalised).

        Returns
        -------
        LoopClosure
            The loop closure added to ``model.loops``.

        Raises
        ------
        ModelError
            An unknown type, an unknown link or frame name, the same body twice, a frame that
            is not 3 finite numbers or a rotation matrix, a zero axis, a name already used (each
            naming the loop closure or the link).

        Examples
        --------
        The four-bar linkage of 004 (Fig. 4), its cut joint R5 added again: body 4 (the
        rocker, 2 m long) is pinned to body 1 (the ground bar, sqrt(2) m long) at their ends.

        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.load_robot("fourbar").replace(loops=())  # the open chain T1-R2-R3-R4
        >>> loop = model.add_loop_closure("R5", "revolute", "body4", "body1", xyz1=[2, 0, 0],
        ...                               xyz2=[np.sqrt(2), 0, 0], rpy2=[0, 0, -np.pi / 2])
        >>> loop.n_rows, len(model.loops)
        (5, 1)
        >>> a = db.forward_dynamics(model, np.zeros(4), np.zeros(4), [0.0, 1.0, 0.0, 0.0])  # 1 N m on R2
        >>> a.round(4)  # the parallelogram keeps theta_3 = -theta_2 and theta_4 = theta_2
        array([ 0.2403,  0.2403, -0.2403,  0.2403])
        """
        lc = make_loop_closure(
            self,
            name,
            type,
            link1,
            link2,
            xyz1=xyz1,
            rpy1=rpy1,
            xyz2=xyz2,
            rpy2=rpy2,
            rotation1=rotation1,
            rotation2=rotation2,
            axis=axis,
        )
        object.__setattr__(self, "loops", self.loops + (lc,))  # the one way loops change in place
        return lc

    def add_joint_coupling(
        self, name: str, joints: Sequence[str], coefficients: npt.ArrayLike, value: float = 0.0
    ) -> JointCoupling:
        """Hold a linear combination of joint coordinates: ``sum_k coefficients[k] q[joints[k]] = value``.

        The coupling is one more constraint row on the loop layer, solved with the cut joints'
        rows (``model.loops``; :mod:`denoc_bridge.loops`): ``C`` has the coefficients in the
        joints' columns and no bias.  It is what a MuJoCo ``<tendon>`` equality over a fixed
        tendon of three or more joints becomes (:func:`denoc_bridge.load_mjcf`); a coupling of
        two joints can instead be a mimic relation (reduced coordinates).

        Parameters
        ----------
        name : str
            The coupling's name (unique among ``model.loops``).
        joints : list of str
            Revolute or prismatic joints with one coordinate each (not continuous joints).
        coefficients : (len(joints),) array
            Non-zero coefficients.
        value : float
            The value the combination is held at (radians or metres times the coefficients).

        Returns
        -------
        JointCoupling
            The coupling added to ``model.loops``.

        Raises
        ------
        ModelError
            An unknown joint, a joint with more than one coordinate, a zero or non-finite
            coefficient, coefficients of the wrong count, a name already used.

        Examples
        --------
        >>> import numpy as np
        >>> import denoc_bridge as db
        >>> model = db.serial_chain(3)
        >>> c = model.add_joint_coupling("sum", list(model.joint_names), [1.0, 1.0, 1.0])
        >>> a = db.forward_dynamics(model, np.zeros(3), np.zeros(3), np.zeros(3))
        >>> float(abs(a.sum())) < 1e-12  # the three accelerations sum to zero
        True
        """
        lc = make_joint_coupling(self, name, joints, coefficients, value)
        object.__setattr__(self, "loops", self.loops + (lc,))  # the one way loops change in place
        return lc

    def replace(self, **changes: Any) -> Model:
        """A copy of the model with some constructor arguments changed.

        The model's arrays cannot be changed in place (the compiled kernels packed them when it
        was built); ``replace`` builds a new, checked model.  Inertias already reported as
        non-physical are not reported again unless ``mass``, ``com`` or ``inertia`` change.

        Parameters
        ----------
        **changes
            Arguments of :class:`Model`'s constructor (``mass``, ``damping``, ``stiffness``,
            ``rest_configuration``, ``gravity``, ``loops``, ``name``, ...).

        Returns
        -------
        Model
            The new model; this one is unchanged.

        Raises
        ------
        InputTypeError
            An argument that is not one of the constructor's.
        ModelError
            A changed value the constructor refuses (a wrong shape, a negative mass or damping,
            a non-physical inertia, ... naming the link or joint).

        Examples
        --------
        >>> import denoc_bridge as db
        >>> panda = db.load_robot("panda")
        >>> damped = panda.replace(damping=[0.5] * panda.nv, gravity=(0, 0, 0))
        >>> damped.damping[:3], damped.gravity, panda.gravity
        (array([0.5, 0.5, 0.5]), array([0., 0., 0.]), array([ 0.  ,  0.  , -9.81]))
        """
        args: dict[str, Any] = dict(
            name=self.name,
            link_names=self.link_names,
            joint_names=self.joint_names,
            parent=self.parent,
            joint_type=self.joint_type,
            joint_axis=self.joint_axis,
            joint_rotation=self.joint_rotation,
            joint_translation=self.joint_translation,
            mass=self.mass,
            com=self.com,
            inertia=self.inertia,
            joint_axis2=self.joint_axis2,
            armature=self.armature,
            damping=self.damping,
            friction=self.friction,
            stiffness=self.stiffness,
            rest_configuration=self.rest_configuration,
            lower_limit=self.lower_limit,
            upper_limit=self.upper_limit,
            reference_configurations=self.reference_configurations,
            gravity=self.gravity,
            base_name=self.base_name,
            floating_base=self.floating_base,
            source=self.source,
            frames=self.frames,
            mimic=self.mimic,
            loops=self.loops,
            warnings=self.warnings,
            inertia_check="warn",
        )
        unknown = set(changes) - set(args)
        if unknown:
            raise InputTypeError(
                f"Model.replace: unknown argument(s) {sorted(unknown)}{did_you_mean(str(min(unknown)), list(args))}"
            )
        args.update(changes)
        # inertias already reported for this model are not reported again; no warnings.catch_warnings()
        # here: it swaps the process-wide filters and is not thread-safe (concurrent first calls on a
        # model with loops, which builds its gravity-free twin, could leave PhysicsWarning ignored)
        quiet = "inertia" not in changes and "mass" not in changes and "com" not in changes
        return Model(**args, _warn_inertia=not quiet)

    @property
    def link_mass_matrix(self) -> np.ndarray:
        """(n_links, 6, 6) spatial mass matrices ``M_k`` of the links about their origins, in
        their frames (000 eq. 2b), computed on first use (the O(n) kernels do not need them)."""
        if self._link_mass_matrix is None:
            self._link_mass_matrix = _readonly(link_mass_matrices(self.mass, self.com, self.inertia), float)
        return self._link_mass_matrix

    def thread_work(self) -> np.ndarray:
        """This thread's work array for the compiled recursions (see :class:`denoc_bridge.Data`)."""
        work = getattr(self._local, "work", None)
        if work is None:
            work = self._local.work = Data(self).work
        return work

    def __getstate__(self) -> dict[str, Any]:
        """The model without what is rebuilt on use: the per-thread work and packed loops
        (``_local``) and the gravity-free twin of the constrained dynamics (``_gravity_free``,
        :func:`denoc_bridge.constraints.solve.gravity_free`), so that a model sent to Dask
        workers does not carry a second model."""
        state = self.__dict__.copy()
        del state["_local"], state["_core"]
        state.pop("_gravity_free", None)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()
        self._core = _core.CompiledTree(self._kt)

    # -------------------------------------------------------------- accessors
    @property
    def reference_configurations(self) -> NamedConfigurations:
        """Named configurations (``nq`` each, read-only), as Pinocchio's
        ``model.referenceConfigurations``: an MJCF file's pose (``"qpos0"``) and keyframes, an
        SRDF's group states (``"half_sitting"``), a Pinocchio model's own."""
        return NamedConfigurations(self._references, self.name)

    @property
    def n_links(self) -> int:
        """Number of moving links (bodies), i.e. of joints."""
        return len(self.link_names)

    @property
    def n_modules(self) -> int:
        """Number of kinematic modules ``s``."""
        return int(self.module_start.shape[0])

    @property
    def gravity(self) -> np.ndarray:
        """Gravitational acceleration (3,) in the base frame; default (0, 0, -9.81)."""
        return self._gravity

    @gravity.setter
    def gravity(self, value: npt.ArrayLike) -> None:
        self._gravity = _readonly(self._check_gravity(value), float)
        self._kt = with_gravity(self._kt, self._gravity)
        self._core = _core.CompiledTree(self._kt)

    @property
    def modules(self) -> tuple[Module, ...]:
        """The kinematic modules, parents before children (tuple of :class:`Module`)."""
        if self._modules is None:
            mods = []
            children_of: list[list[int]] = [[] for _ in range(self.n_modules)]
            for j, p in enumerate(self.module_parent):
                if p >= 0:
                    children_of[p].append(j)
            for i in range(self.n_modules):
                a, b = int(self.module_start[i]), int(self.module_end[i])
                children = tuple(children_of[i])
                v0 = int(self.idx_v[a])
                nv = int(self.nv_joint[a:b].sum())
                mods.append(
                    Module(
                        index=i,
                        parent=int(self.module_parent[i]),
                        links=range(a, b),
                        link_names=self.link_names[a:b],
                        joint_names=self.joint_names[a:b],
                        children=children,
                        v_start=v0,
                        nv=nv,
                    )
                )
            self._modules = tuple(mods)
        return self._modules

    def link_index(self, name: str) -> int:
        """Index of a link (body) by name.

        Parameters
        ----------
        name : str
            A link name of ``model.link_names`` (a URDF link merged by a fixed joint is a frame
            of ``model.frames``, not a link).

        Returns
        -------
        int
            k with ``model.link_names[k] == name``; link k is moved by joint k and is joint
            ``k + 1`` of the equivalent ``pinocchio.Model``.

        Raises
        ------
        NameLookupError
            No link of that name (with the closest names); also a :class:`KeyError`.

        Examples
        --------
        >>> import denoc_bridge as db
        >>> panda = db.load_robot("panda")
        >>> panda.link_index("panda_link3")
        2
        >>> panda.link_index("panda_lnk3")
        Traceback (most recent call last):
            ...
        denoc_bridge.errors.NameLookupError: no link named 'panda_lnk3' in model 'panda'; did you mean panda_link3, panda_link7 or panda_link6?
        """
        try:
            return self._link_index[name]
        except (KeyError, TypeError):
            raise NameLookupError(
                f"no link named {name!r} in model '{self.name}'{did_you_mean(str(name), self.link_names)}"
            ) from None

    def joint_index(self, name: str) -> int:
        """Index of a joint by name (joint k moves link k).

        Parameters
        ----------
        name : str
            A moving joint's name of ``model.joint_names`` (fixed joints are merged away).

        Returns
        -------
        int
            k with ``model.joint_names[k] == name``; its coordinates are
            ``q[idx_q[k] : idx_q[k] + nq_joint[k]]`` and ``v[idx_v[k] : idx_v[k] + nv_joint[k]]``.

        Raises
        ------
        NameLookupError
            No joint of that name (with the closest names); also a :class:`KeyError`.

        Examples
        --------
        >>> import denoc_bridge as db
        >>> panda = db.load_robot("panda")
        >>> k = panda.joint_index("panda_joint4")
        >>> k, int(panda.idx_v[k])  # joint 4's velocity is v[3]
        (3, 3)
        """
        try:
            return self._joint_index[name]
        except (KeyError, TypeError):
            raise NameLookupError(
                f"no joint named {name!r} in model '{self.name}'{did_you_mean(str(name), self.joint_names)}"
            ) from None

    def joint_label(self, k: int) -> str:
        """The name and type of joint ``k``, as error messages name a joint.

        Parameters
        ----------
        k : int
            A joint (link) index, ``0 <= k < n_links``.

        Returns
        -------
        str
            ``"'NAME' (TYPE)"``.

        Raises
        ------
        InputTypeError
            ``k`` is not an integer.
        InputError
            ``k`` is out of range (negative indices do not count from the end: ``-1`` is the
            base in ``parent``).

        Examples
        --------
        >>> import denoc_bridge as db
        >>> db.load_robot("panda").joint_label(3)
        "'panda_joint4' (revolute)"
        """
        try:
            i = operator.index(k)
        except TypeError:
            raise InputTypeError(f"joint index must be an integer, got {type(k).__name__}") from None
        if not 0 <= i < len(self.joint_names):
            raise InputError(f"joint index {i} is out of range for model '{self.name}' ({self.n_links} joints)")
        return f"'{self.joint_names[i]}' ({JointType(self.joint_type[i]).label})"

    @property
    def total_mass(self) -> float:
        return float(self.mass.sum())

    def __repr__(self) -> str:
        base = "free-flyer base" if self.floating_base else "fixed base"
        return (
            f"Model('{self.name}', nq={self.nq}, nv={self.nv}, links={self.n_links}, modules={self.n_modules}, {base})"
        )
