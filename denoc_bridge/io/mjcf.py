"""MJCF (MuJoCo's XML) through MuJoCo's own compiler.

:func:`load_mjcf` compiles the file with ``mujoco.MjModel.from_xml_path`` and reads the
compiled model, so defaults classes, includes, ``fromto``, frames, inertias from geoms and
densities, ``settotalmass`` and armature mean exactly what they mean to MuJoCo:

=============================  ===============================================================
MuJoCo (compiled model)        denoc_bridge :class:`~denoc_bridge.Model`
=============================  ===============================================================
hinge / slide / ball / free    REVOLUTE / PRISMATIC / SPHERICAL / FREEFLYER joint, one link each
several joints in one body     a serial run of joints; the links between them are massless, the
                               last one carries the body (its link is named after the body)
a body without joints          merged into its parent's link (inertia lumped), as a frame
``body_pos``, ``body_quat``,   joint placements (``jnt_pos`` is the anchor: hinge and ball
``jnt_pos``, ``jnt_axis``      rotate about it); a joint's ``ref`` (``qpos0``) folded into the
                               placement, so that ``q`` is MuJoCo's ``qpos``
``body_mass``, ``body_ipos``,  mass, centre of mass and inertia of the body's link
``body_iquat``,
``body_inertia``
``dof_armature``               ``armature`` (added to the GIM's diagonal, as ``mj_fullM``)
``dof_damping``                ``damping`` (applied by :func:`~denoc_bridge.simulate`)
``jnt_stiffness``,             ``stiffness`` and ``rest_configuration`` (applied by
``qpos_spring``                :func:`~denoc_bridge.simulate`)
``dof_frictionloss``           ``friction`` (recorded; no denoc_bridge function applies it)
``jnt_limited``, ``jnt_range`` ``lower_limit`` / ``upper_limit`` of hinge and slide joints
``opt.gravity``                ``gravity`` (zero when ``<flag gravity="disable"/>``)
``qpos0``, ``<key>``            ``reference_configurations``: ``"qpos0"`` (the file's pose) and
                               each keyframe's ``qpos`` by its name (``key<i>`` if unnamed)
``<flag>`` disable bits        ``spring`` / ``damper`` disabled: no stiffness / damping;
                               ``constraint`` / ``equality`` disabled: the equalities are
                               listed in ``model.warnings``, not applied (as in MuJoCo)
bodies and sites               ``model.frames`` (kinds ``"link"`` and ``"site"``)
``<connect>``, ``<weld>``      loop closures (``"spherical"``, ``"weld"``)
``<joint>`` (linear polycoef)  mimic couplings: a :class:`~denoc_bridge.MimicModel` (a chain,
                               joint a held to b held to c, is one relation of a to c)
``<tendon>`` (a fixed tendon)  a mimic coupling (two joints) or a joint coupling (one, three
                               or more: one row beside the loop closures')
=============================  ===============================================================

q and tau follow MuJoCo's joint order; the layouts differ only at free and ball joints
(quaternion order, a free joint's linear velocity): :mod:`denoc_bridge.io.mujoco_layout`
converts.  What has no counterpart is refused with the element's name (a free joint below
another body, flex objects, nonlinear springs and dampers, nonlinear or fixed ``<joint>``
equalities, ``<tendon>`` equalities over two tendons or a tendon that is not fixed) or listed in ``model.warnings`` with a
:class:`~denoc_bridge.errors.PhysicsWarning` (tendons, ball joint limits, gravity
compensation, fluid forces, inactive equalities): nothing is dropped silently.  Contacts,
actuators and MuJoCo's soft-constraint parameters (``solref``, ``solimp``) are not part of
the model.
"""

from __future__ import annotations

import functools
import os
import warnings
from typing import Any

import numpy as np

from denoc_bridge.errors import ModelError, PhysicsWarning, RobotNotFoundError
from denoc_bridge.io.mjcf_equality import equalities
from denoc_bridge.io.mujoco_layout import mujoco_qpos_to_q, wxyz_to_matrix
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Frame, Model
from denoc_bridge.spatial import axis_angle_to_matrix

__all__ = [
    "load_mjcf",
    "loads_mjcf",
    "from_mujoco",
    "import_mujoco",
    "is_mjcf",
    "compiled_mjcf",
    "geom_on_link",
    "mesh_arrays",
]

# MuJoCo's joint types (mjtJoint) and equality types (mjtEq), as in its headers
_FREE, _BALL, _SLIDE, _HINGE = 0, 1, 2, 3
_CONNECT, _WELD, _EQ_JOINT, _EQ_TENDON = 0, 1, 2, 3
_JOINT_TYPES = {_FREE: JointType.FREEFLYER, _BALL: JointType.SPHERICAL, _SLIDE: JointType.PRISMATIC}
_JOINT_WORDS = {_FREE: "free", _BALL: "ball", _SLIDE: "slide", _HINGE: "hinge"}
#: what MuJoCo calls a model whose <mujoco> element has no model attribute
_MUJOCO_DEFAULT_NAME = "MuJoCo Model"
# MuJoCo's disable bits (mjtDisableBit) that change what the model means
_DSBL_CONSTRAINT, _DSBL_EQUALITY, _DSBL_SPRING, _DSBL_DAMPER, _DSBL_GRAVITY = 1, 2, 32, 64, 128


def import_mujoco() -> Any:
    """The ``mujoco`` module, or a ModelError naming the extra that installs it."""
    try:
        import mujoco
    except ImportError:
        raise ModelError(
            "reading MJCF needs MuJoCo's compiler: pip install 'denoc-bridge[mujoco]' (or pip install mujoco)"
        ) from None
    return mujoco


def is_mjcf(path: str | os.PathLike[str]) -> bool:
    """Is ``path`` an MJCF file (``.xml`` whose root element is ``<mujoco>``)?"""
    p = os.fspath(path)
    if not p.lower().endswith(".xml") or not os.path.isfile(p):
        return False
    with open(p, "rb") as f:
        head = f.read(4096).decode("utf-8", "replace")
    return "<mujoco" in head


@functools.lru_cache(maxsize=8)
def _compiled(path: str, mtime: float) -> Any:
    return import_mujoco().MjModel.from_xml_path(path)


def compiled_mjcf(path: str | os.PathLike[str]) -> Any:
    """MuJoCo's compiled model of the MJCF file at ``path``, compiled once per path and
    modification time and shared: read it, do not change it."""
    return _compiled(os.path.abspath(path), os.path.getmtime(path))


Pose = tuple[np.ndarray, np.ndarray]  # (R, p): a frame's axes and origin in another frame

#: MuJoCo's geom types (mjtGeom)
GEOM_PLANE, GEOM_HFIELD, GEOM_SPHERE, GEOM_CAPSULE, GEOM_ELLIPSOID, GEOM_CYLINDER, GEOM_BOX, GEOM_MESH = range(8)


def geom_on_link(model: Any, m: Any, g: int) -> tuple[str, int, np.ndarray, np.ndarray]:
    """``(body name, link, R, p)``: geom g of the compiled ``mujoco.MjModel`` m that ``model`` was
    loaded from, placed in the frame of the link that carries its body (link -1: the fixed
    base), through the body's frame in ``model.frames``.  ModelError naming the geom and the
    body when the model has no such body."""
    mj = import_mujoco()
    b = int(m.geom_bodyid[g])
    body = mj.mj_id2name(m, mj.mjtObj.mjOBJ_BODY, b) or f"body{b}"
    frame = next((f for f in model.frames if f.kind == "link" and f.name == body), None)
    if frame is None:
        name = mj.mj_id2name(m, mj.mjtObj.mjOBJ_GEOM, g) or f"geom{g}"
        raise ModelError(f"geom '{name}': body '{body}' is not a link or frame of model '{model.name}'")
    R0, p0 = np.asarray(frame.rotation), np.asarray(frame.translation)
    return body, frame.link, R0 @ wxyz_to_matrix(m.geom_quat[g]), R0 @ np.asarray(m.geom_pos[g], dtype=float) + p0


def mesh_arrays(m: Any, g: int) -> tuple[np.ndarray, np.ndarray]:
    """``(vertices (V, 3), faces (F, 3))`` of mesh geom g as MuJoCo compiled them (in the geom's frame)."""
    k = int(m.geom_dataid[g])
    first, count = int(m.mesh_vertadr[k]), int(m.mesh_vertnum[k])
    face, faces = int(m.mesh_faceadr[k]), int(m.mesh_facenum[k])
    return np.array(m.mesh_vert[first : first + count], dtype=float), np.array(m.mesh_face[face : face + faces])


def _compose(a: Pose, b: Pose) -> Pose:
    return a[0] @ b[0], a[0] @ b[1] + a[1]


def _names(mj: Any, m: Any, kind: Any, count: int, prefix: str) -> list[str]:
    out = []
    for i in range(count):
        s = mj.mj_id2name(m, kind, i)
        out.append(s if s else f"{prefix}{i}")
    return out


def _refuse_unsupported(m: Any, joint_names: list[str], body_names: list[str]) -> None:
    """ModelError naming what the compiled model holds that a Model cannot mean."""
    if getattr(m, "nflex", 0):
        raise ModelError(f"the model has {m.nflex} flex object(s) (deformables), which denoc_bridge does not support")
    for j in range(m.njnt):
        name = joint_names[j]
        if np.any(np.asarray(getattr(m, "jnt_stiffnesspoly", np.zeros((m.njnt, 1))))[j]):
            raise ModelError(f"joint '{name}': a nonlinear spring (stiffnesspoly) is not supported")
        if int(m.jnt_type[j]) == _FREE and int(m.body_parentid[m.jnt_bodyid[j]]) != 0:
            body = body_names[int(m.jnt_bodyid[j])]
            raise ModelError(f"joint '{name}': a free joint of body '{body}', which is not a child of the world")
    poly = np.asarray(getattr(m, "dof_dampingpoly", np.zeros((m.nv, 1))))
    for i in range(m.nv):
        if np.any(poly[i]):
            raise ModelError(
                f"joint '{joint_names[int(m.dof_jntid[i])]}': a nonlinear damper (dampingpoly) is not supported"
            )


def _inertia_of(m: Any, b: int, X: Pose) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, m * com, inertia about the link origin) of body b placed at X in its link."""
    mass = float(m.body_mass[b])
    R, p = X
    Ri = R @ wxyz_to_matrix(m.body_iquat[b])
    c = R @ m.body_ipos[b] + p
    I_com = Ri @ np.diag(m.body_inertia[b]) @ Ri.T
    return mass, mass * c, I_com + mass * (float(c @ c) * np.eye(3) - np.outer(c, c))


def from_mujoco(
    m: Any, *, name: str | None = None, constraints: bool = True, source: str | None = None
) -> Model | MimicModel:
    """Build a :class:`Model` from a compiled ``mujoco.MjModel`` (see the module docstring).

    What MuJoCo applies and a Model does not (tendons, ball joint limits, ...) is listed in
    ``model.warnings`` and announced by one :class:`~denoc_bridge.errors.PhysicsWarning`.

    Parameters
    ----------
    m : mujoco.MjModel
    name : str, optional
        The model's name; default the MJCF's ``<mujoco model=...>``.
    constraints : bool
        Turn ``<connect>``/``<weld>`` into loop closures and ``<joint>`` equalities into mimic
        couplings (default); False gives the tree alone (the equalities listed in
        ``model.warnings``).

    Returns
    -------
    Model or MimicModel
        A :class:`~denoc_bridge.MimicModel` when the model has ``<joint>`` equalities.
    """
    mj = import_mujoco()
    if not isinstance(m, mj.MjModel):
        raise ModelError(f"from_mujoco expects a mujoco.MjModel, got {type(m).__name__}")
    body_names = _names(mj, m, mj.mjtObj.mjOBJ_BODY, m.nbody, "body")
    joint_names = _names(mj, m, mj.mjtObj.mjOBJ_JOINT, m.njnt, "joint")
    _refuse_unsupported(m, joint_names, body_names)
    notes: list[str] = []
    ident: Pose = (np.eye(3), np.zeros(3))
    owner = [-1] * m.nbody  # the link that carries each body (-1: the world)
    where: list[Pose] = [ident] * m.nbody  # each body's frame in its link's frame
    link_names: list[str] = []
    parent: list[int] = []
    jtype: list[int] = []
    axes: list[np.ndarray] = []
    R0: list[np.ndarray] = []
    r0: list[np.ndarray] = []
    lumped: list[list[Any]] = []  # per link: [mass, mass * com, inertia about the origin]
    used_link_names = set(body_names)
    for b in range(1, m.nbody):
        p = int(m.body_parentid[b])
        cur = _compose(where[p], (wxyz_to_matrix(m.body_quat[b]), np.array(m.body_pos[b], dtype=float)))
        link = owner[p]
        first, nj = int(m.body_jntadr[b]), int(m.body_jntnum[b])
        for j in range(first, first + nj):
            t = int(m.jnt_type[j])
            axis = np.array(m.jnt_axis[j], dtype=float)
            anchor = np.array(m.jnt_pos[j], dtype=float)
            ref = float(m.qpos0[m.jnt_qposadr[j]])
            if t == _FREE:
                if j != first or link != -1:
                    raise ModelError(f"joint '{joint_names[j]}': a free joint must be the only joint of its body")
                placement, after = ident, ident  # MuJoCo's free joint sets the body's world pose
            elif t == _SLIDE:  # B' = B T(axis (q - ref))
                placement, after = _compose(cur, (np.eye(3), -ref * axis)), ident
            else:  # hinge, ball: B' = B T(anchor) Rot(q - ref) T(-anchor)
                turn = axis_angle_to_matrix(axis, -ref) if t == _HINGE else np.eye(3)
                placement, after = _compose(cur, (turn, anchor)), (np.eye(3), -anchor)
            last = j == first + nj - 1
            lname = body_names[b] if last else f"{body_names[b]}:{joint_names[j]}"
            if not last and lname in used_link_names:
                lname = f"{lname}:{j}"
            used_link_names.add(lname)
            link_names.append(lname)
            parent.append(link)
            jtype.append(int(_JOINT_TYPES.get(t, JointType.REVOLUTE)))
            axes.append(axis / np.linalg.norm(axis) if t in (_SLIDE, _HINGE) else np.zeros(3))
            R0.append(placement[0])
            r0.append(placement[1])
            lumped.append([0.0, np.zeros(3), np.zeros((3, 3))])
            link, cur = len(link_names) - 1, after
        owner[b], where[b] = link, cur
        if link >= 0:
            mb, mc, I_o = _inertia_of(m, b, cur)
            acc = lumped[link]
            acc[0] += mb
            acc[1] = acc[1] + mc
            acc[2] = acc[2] + I_o
    n = len(link_names)
    mass = np.array([a[0] for a in lumped]).reshape(n)
    com = np.zeros((n, 3))
    inertia = np.zeros((n, 3, 3))
    for k, (mk, mc, I_o) in enumerate(lumped):
        c = mc / mk if mk > 0 else np.zeros(3)
        com[k] = c
        inertia[k] = I_o - mk * (float(c @ c) * np.eye(3) - np.outer(c, c))
        inertia[k] = 0.5 * (inertia[k] + inertia[k].T)

    types = np.array(jtype, dtype=np.int64).reshape(n)
    lower, upper, stiffness = _limits_and_springs(m, joint_names, notes)
    frames = [Frame(body_names[0], "link", -1, np.eye(3), np.zeros(3))]
    frames += [Frame(body_names[b], "link", owner[b], *where[b]) for b in range(1, m.nbody)]
    site_names = _names(mj, m, mj.mjtObj.mjOBJ_SITE, m.nsite, "site")
    for s in range(m.nsite):
        b = int(m.site_bodyid[s])
        X = _compose(where[b], (wxyz_to_matrix(m.site_quat[s]), np.array(m.site_pos[s], dtype=float)))
        frames.append(Frame(site_names[s], "site", owner[b], *X))
    disabled = int(m.opt.disableflags)
    if disabled & (_DSBL_CONSTRAINT | _DSBL_EQUALITY) and m.neq:
        notes.append("the equalities are disabled by <flag constraint/equality='disable'> and not applied")
        constraints = False
    _warn_unmodelled(m, mj, body_names, constraints, notes)
    loops, mimic = equalities(m, mj, joint_names, owner, where, constraints, notes)
    if notes:
        warnings.warn(
            f"MJCF '{body_names[0] if source is None else source}': {notes[0]}"
            + (f" (and {len(notes) - 1} more, in model.warnings)" if notes[1:] else ""),
            PhysicsWarning,
            stacklevel=3,
        )
    model = Model(
        name=name or _model_name(m, source),
        link_names=link_names,
        joint_names=joint_names,
        parent=np.array(parent, dtype=np.int64).reshape(n),
        joint_type=types,
        joint_axis=np.array(axes, dtype=float).reshape(n, 3),
        joint_rotation=np.array(R0, dtype=float).reshape(n, 3, 3),
        joint_translation=np.array(r0, dtype=float).reshape(n, 3),
        mass=mass,
        com=com,
        inertia=inertia,
        armature=np.array(m.dof_armature, dtype=float),
        damping=np.zeros(m.nv) if disabled & _DSBL_DAMPER else np.array(m.dof_damping, dtype=float),
        friction=np.array(m.dof_frictionloss, dtype=float),
        stiffness=np.zeros(m.nv) if disabled & _DSBL_SPRING else stiffness,
        rest_configuration=mujoco_qpos_to_q(types, np.array(m.qpos_spring, dtype=float)),
        lower_limit=lower,
        upper_limit=upper,
        reference_configurations=_reference_configurations(m, mj, types),
        gravity=np.zeros(3) if disabled & _DSBL_GRAVITY else np.array(m.opt.gravity, dtype=float),
        base_name=body_names[0],
        floating_base=n > 0 and types[0] == JointType.FREEFLYER,
        source=source,
        frames=frames,
        mimic=mimic,
        loops=loops,
        warnings=notes,
        inertia_check="warn",
    )
    if mimic:
        return MimicModel(model)
    return model


def _reference_configurations(m: Any, mj: Any, types: Any) -> dict[str, np.ndarray]:
    """The file's pose (``"qpos0"``: free bodies where the file puts them, hinges and slides at
    their ``ref``) and each ``<key>``'s ``qpos`` under its name (an unnamed one: ``key<i>``), as
    q, as Pinocchio's MJCF parser names them."""
    refs = {"qpos0": mujoco_qpos_to_q(types, np.array(m.qpos0, dtype=float))}
    for k, name in enumerate(_names(mj, m, mj.mjtObj.mjOBJ_KEY, m.nkey, "key")):
        refs[name] = mujoco_qpos_to_q(types, np.array(m.key_qpos[k], dtype=float))
    return refs


def _model_name(m: Any, source: str | None) -> str:
    """``<mujoco model=...>`` (the first of the compiled names), else the file's name (MuJoCo
    names a model without one "MuJoCo Model")."""
    own = bytes(m.names).split(b"\0", 1)[0].decode()
    if own and own != _MUJOCO_DEFAULT_NAME:
        return own
    if source:
        return os.path.splitext(os.path.basename(source))[0]
    return "mjcf"


def _limits_and_springs(m: Any, joint_names: list[str], notes: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position limits (per q, hinge and slide only) and stiffness (per v) in our layout."""
    lower = np.full(m.nq, -np.inf)
    upper = np.full(m.nq, np.inf)
    stiffness = np.zeros(m.nv)
    for j in range(m.njnt):
        t, qa, va = int(m.jnt_type[j]), int(m.jnt_qposadr[j]), int(m.jnt_dofadr[j])
        if m.jnt_limited[j]:
            if t in (_HINGE, _SLIDE):
                lower[qa], upper[qa] = (float(x) for x in m.jnt_range[j])
            else:
                notes.append(
                    f"joint '{joint_names[j]}': the limit of a {_JOINT_WORDS[t]} joint (a cone) is not modelled"
                )
        k = float(m.jnt_stiffness[j])
        if k:
            if t == _FREE:
                notes.append(f"joint '{joint_names[j]}': the stiffness of a free joint is not modelled")
            else:
                stiffness[va : va + (3 if t == _BALL else 1)] = k
    return lower, upper, stiffness


def _warn_unmodelled(m: Any, mj: Any, body_names: list[str], constraints: bool, notes: list[str]) -> None:
    """Notes for what MuJoCo applies and a Model does not (a tendon held by an applied
    ``<tendon>`` equality is a mimic coupling, not a note)."""
    held = {int(m.eq_obj1id[e]) for e in range(m.neq) if int(m.eq_type[e]) == _EQ_TENDON and m.eq_active0[e]}
    names = _names(mj, m, mj.mjtObj.mjOBJ_TENDON, m.ntendon, "tendon")
    tendons = [names[t] for t in range(m.ntendon) if not (constraints and t in held)]
    if tendons:
        notes.append(f"tendons are not modelled: {', '.join(repr(t) for t in tendons)}")
    for b in range(1, m.nbody):
        if m.body_gravcomp[b]:
            notes.append(f"body '{body_names[b]}': gravity compensation (gravcomp) is not modelled")
    if m.opt.density or m.opt.viscosity or np.any(m.opt.wind):
        notes.append("fluid forces (density, viscosity, wind of <option>) are not modelled")


def load_mjcf(path: str | os.PathLike[str], *, name: str | None = None, constraints: bool = True) -> Model | MimicModel:
    """Load an MJCF file through MuJoCo's compiler (see the module docstring).

    Parameters
    ----------
    path : str or path
        An MJCF ``.xml`` file (its includes and meshes are resolved by MuJoCo).
    name : str, optional
        The model's name; default the file's ``<mujoco model=...>``, else the file name.
    constraints : bool
        Equality constraints as loop closures and mimic couplings (default), or the tree alone.

    Returns
    -------
    Model or MimicModel
        A :class:`~denoc_bridge.MimicModel` when the file has ``<joint>`` equalities; ``q``
        and ``tau`` follow MuJoCo's joint order (:mod:`denoc_bridge.io.mujoco_layout`
        converts free and ball joints' coordinates).

    Raises
    ------
    RobotNotFoundError
        No such file.
    ModelError
        ``mujoco`` is not installed (naming the extra), MuJoCo refuses the file (its message),
        or the model holds what denoc_bridge cannot represent (naming the element).
    """
    mj = import_mujoco()
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise RobotNotFoundError(f"no such MJCF file: {p}")
    try:
        m = mj.MjModel.from_xml_path(p)
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot compile '{p}': {str(exc).strip()}") from None
    return from_mujoco(m, name=name, constraints=constraints, source=p)


def loads_mjcf(xml: str, *, name: str | None = None, constraints: bool = True) -> Model | MimicModel:
    """:func:`load_mjcf` of MJCF text (``mujoco.MjModel.from_xml_string``)."""
    mj = import_mujoco()
    try:
        m = mj.MjModel.from_xml_string(xml)
    except ValueError as exc:
        raise ModelError(f"MuJoCo cannot compile the MJCF text: {str(exc).strip()}") from None
    return from_mujoco(m, name=name, constraints=constraints)
