"""Conversion between :class:`~denoc_bridge.multibody.model.Model` and ``pinocchio.Model``.

Link k of a denoc_bridge model is joint ``k + 1`` of the Pinocchio model (joint
0 is Pinocchio's ``universe``); q, v, a and tau share Pinocchio's layout, so
vectors pass unchanged between the two libraries.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from denoc_bridge.errors import InputTypeError, ModelError
from denoc_bridge.multibody.checks import check_model as _check_model
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Frame, Model

__all__ = ["from_pinocchio", "to_pinocchio"]

# Pinocchio ships no type stubs: its objects (pinocchio.Model, joint models) are typed Any here

_AXES = {"X": (1.0, 0.0, 0.0), "Y": (0.0, 1.0, 0.0), "Z": (0.0, 0.0, 1.0)}
_SUPPORTED = (
    "JointModelRX/RY/RZ, JointModelRevoluteUnaligned, JointModelRUBX/RUBY/RUBZ, "
    "JointModelRevoluteUnboundedUnaligned, JointModelPX/PY/PZ, JointModelPrismaticUnaligned, "
    "JointModelSpherical, JointModelFreeFlyer, JointModelUniversal, JointModelPlanar, JointModelTranslation, "
    "JointModelComposite of these"
)


def _joint_from_pin(jmodel: Any, name: str) -> tuple[JointType, tuple[float, ...], tuple[float, ...]]:
    """(JointType, axis, axis2) of a Pinocchio joint model."""
    sn = jmodel.shortname()
    zero = (0.0, 0.0, 0.0)
    for prefix, jt in (
        ("JointModelRUB", JointType.CONTINUOUS),
        ("JointModelR", JointType.REVOLUTE),
        ("JointModelP", JointType.PRISMATIC),
    ):
        suffix = sn[len(prefix) :]
        if sn.startswith(prefix) and suffix in _AXES:
            return jt, _AXES[suffix], zero
    unaligned = {
        "JointModelRevoluteUnaligned": JointType.REVOLUTE,
        "JointModelRevoluteUnboundedUnaligned": JointType.CONTINUOUS,
        "JointModelPrismaticUnaligned": JointType.PRISMATIC,
    }
    if sn in unaligned:
        # the axis is read from the motion subspace: Pinocchio's Python API does not expose
        # the axis of JointModelRevoluteUnboundedUnaligned
        jdata = jmodel.createData()
        q0 = np.zeros(jmodel.nq)
        q0[0] = 1.0 if sn == "JointModelRevoluteUnboundedUnaligned" else 0.0
        jmodel.calc(jdata, q0)
        S = np.asarray(jdata.S, dtype=float).reshape(6)
        jt = unaligned[sn]
        return jt, tuple(S[:3] if jt == JointType.PRISMATIC else S[3:]), zero
    if sn == "JointModelUniversal":
        u = jmodel.extract()
        return JointType.UNIVERSAL, tuple(np.asarray(u.axis1, float)), tuple(np.asarray(u.axis2, float))
    simple = {
        "JointModelSpherical": JointType.SPHERICAL,
        "JointModelFreeFlyer": JointType.FREEFLYER,
        "JointModelPlanar": JointType.PLANAR,
        "JointModelTranslation": JointType.TRANSLATION,
    }
    if sn in simple:
        return simple[sn], zero, zero
    if sn == "JointModelMimic":
        raise ModelError(
            f"joint '{name}' is a mimic joint (JointModelMimic): convert the model built without "
            "mimic=True, then MimicModel(model), or load the URDF with load_urdf(path, mimic=True)"
        )
    raise ModelError(f"joint '{name}' is a {sn}, which denoc_bridge does not support (supported: {_SUPPORTED})")


def from_pinocchio(pin_model: Any, *, name: str | None = None) -> Model:
    """Build a :class:`Model` (the same module graph) from a ``pinocchio.Model``.

    Joint order, q/v layout, placements, inertias, armature, damping,
    friction, position limits and gravity are taken over unchanged; the body
    frame attached to each joint gives the link name.  The Pinocchio model must
    number its joints depth first (as every Pinocchio parser does).

    A ``JointModelComposite`` (what ``pin.buildModelFromMJCF`` makes of a MuJoCo body with
    several joints) becomes a serial run of its joints, one link each: the links between them
    are massless (named ``body:joint:i``), the last one carries the body and keeps the
    composite's name; q and v still pass unchanged.

    Every frame of ``pin_model.frames`` is kept in ``model.frames`` (names for ``f_ext`` and
    loop closures).  Non-physical inertias are accepted, each listed in ``model.warnings``
    with a :class:`~denoc_bridge.errors.PhysicsWarning`, as Pinocchio accepts them.

    Parameters
    ----------
    pin_model : pinocchio.Model
        Revolute, prismatic, continuous (unbounded), spherical, free-flyer, universal, planar
        and translation joints, aligned with an axis or not.
    name : str, optional
        The model's name; default ``pin_model.name`` (``"robot"`` if empty).

    Returns
    -------
    Model
        Link k is Pinocchio's joint ``k + 1``; q, v, a and tau pass unchanged.

    Raises
    ------
    InputTypeError
        ``pin_model`` is not a ``pinocchio.Model`` (a denoc_bridge model is named as such).
    ModelError
        An unsupported joint type (naming the joint; a ``JointModelMimic`` with how to load
        mimic joints), joints not numbered depth first, or values a :class:`Model` refuses.

    Examples
    --------
    >>> import pinocchio as pin
    >>> import denoc_bridge as db
    >>> pin_model = pin.buildSampleModelManipulator()
    >>> model = db.from_pinocchio(pin_model)
    >>> model.nq == pin_model.nq, model.joint_names[0] == pin_model.names[1]
    (True, True)
    """
    import pinocchio as pin

    if not isinstance(pin_model, pin.Model):
        hint = ": it is already a denoc_bridge model" if isinstance(pin_model, (Model, MimicModel)) else ""
        raise InputTypeError(f"from_pinocchio expects a pinocchio.Model, got {type(pin_model).__name__}{hint}")
    nj = pin_model.njoints
    body_names: dict[int, str] = {}
    frames: list[Frame] = []
    for f in pin_model.frames:
        if f.type == pin.FrameType.BODY and f.parentJoint not in body_names:
            body_names[f.parentJoint] = f.name
        kind = {pin.FrameType.BODY: "link", pin.FrameType.JOINT: "joint", pin.FrameType.FIXED_JOINT: "fixed_joint"}.get(
            f.type, "frame"
        )
        frames.append(
            Frame(
                f.name, kind, int(f.parentJoint) - 1, np.array(f.placement.rotation), np.array(f.placement.translation)
            )
        )
    link_names: list[str] = []
    joint_names: list[str] = []
    parent: list[int] = []
    jtypes: list[int] = []
    axes: list[tuple[float, ...]] = []
    axes2: list[tuple[float, ...]] = []
    R0: list[np.ndarray] = []
    r0: list[np.ndarray] = []
    mass: list[float] = []
    com: list[np.ndarray] = []
    inertia: list[np.ndarray] = []
    last = {0: -1}  # Pinocchio joint -> our link that carries its body (a composite's last part)
    for i in range(1, nj):
        jname = pin_model.names[i]
        parts = _parts(pin_model.joints[i], pin_model.jointPlacements[i], jname)
        for j, (jm, M, pname) in enumerate(parts):
            jt, a1, a2 = _joint_from_pin(jm, pname)
            final = j == len(parts) - 1
            joint_names.append(pname)
            link_names.append(body_names.get(i, jname) if final else f"{body_names.get(i, jname)}:{pname}")
            parent.append(last[int(pin_model.parents[i])] if j == 0 else len(parent) - 1)
            jtypes.append(int(jt))
            axes.append(a1)
            axes2.append(a2)
            R0.append(np.array(M.rotation))
            r0.append(np.array(M.translation))
            Y = pin_model.inertias[i] if final else pin.Inertia.Zero()
            mass.append(float(Y.mass))
            com.append(np.array(Y.lever))
            inertia.append(np.array(Y.inertia))
        last[i] = len(parent) - 1
    n = len(parent)
    for f in frames:  # frames on a composite joint move with its last part
        object.__setattr__(f, "link", last[f.link + 1])
    model = Model(
        name=name or pin_model.name or "robot",
        link_names=link_names,
        joint_names=joint_names,
        parent=np.array(parent, dtype=np.int64).reshape(n),
        joint_type=np.array(jtypes, dtype=np.int64).reshape(n),
        joint_axis=np.array(axes, dtype=float).reshape(n, 3),
        joint_axis2=np.array(axes2, dtype=float).reshape(n, 3),
        joint_rotation=np.array(R0, dtype=float).reshape(n, 3, 3),
        joint_translation=np.array(r0, dtype=float).reshape(n, 3),
        mass=np.array(mass, dtype=float).reshape(n),
        com=np.array(com, dtype=float).reshape(n, 3),
        inertia=np.array(inertia, dtype=float).reshape(n, 3, 3),
        armature=np.array(pin_model.armature, dtype=float),
        damping=np.array(pin_model.damping, dtype=float),
        friction=np.array(pin_model.friction, dtype=float),
        lower_limit=np.array(pin_model.lowerPositionLimit, dtype=float),
        upper_limit=np.array(pin_model.upperPositionLimit, dtype=float),
        reference_configurations={
            str(e.key()): np.array(e.data(), dtype=float) for e in pin_model.referenceConfigurations
        },
        gravity=np.array(pin_model.gravity.linear, dtype=float),
        base_name=body_names.get(0, "universe"),
        floating_base=n > 0 and jtypes[0] == JointType.FREEFLYER and parent[0] == -1,
        frames=frames,
        inertia_check="warn",
    )
    _check_layout(model, pin_model)
    return model


def _parts(jmodel: Any, placement: Any, name: str) -> list[tuple[Any, Any, str]]:
    """(joint model, placement, name) of each joint of a ``JointModelComposite`` (a serial run:
    Pinocchio's composite moves by ``prod_i jointPlacements[i] * M_i(q_i)``), or of the joint."""
    if jmodel.shortname() != "JointModelComposite":
        return [(jmodel, placement, name)]
    c = jmodel.extract()
    out = []
    for i, (jm, M) in enumerate(zip(c.joints, c.jointPlacements)):
        if jm.shortname() == "JointModelComposite":
            raise ModelError(f"joint '{name}': a composite joint inside a composite joint is not supported")
        out.append((jm, placement * M if i == 0 else M, name if i == len(c.joints) - 1 else f"{name}:{i}"))
    return out


def _check_layout(model: Model, pin_model: Any) -> None:
    expected = []  # (idx_q, idx_v) of each of our links, Pinocchio's joints (composites) in order
    for i in range(1, pin_model.njoints):
        j = pin_model.joints[i]
        iq, iv = int(j.idx_q), int(j.idx_v)
        for jm, _, _ in _parts(j, pin_model.jointPlacements[i], pin_model.names[i]):
            expected.append((iq, iv))
            iq, iv = iq + int(jm.nq), iv + int(jm.nv)
    for k in range(model.n_links):
        if expected[k] != (int(model.idx_q[k]), int(model.idx_v[k])):
            raise ModelError(
                f"joint '{model.joint_names[k]}': Pinocchio's q/v indices {expected[k]} do not follow "
                "the joint order; only depth-first numbered Pinocchio models are supported"
            )


def _unbounded_unaligned(axis: np.ndarray) -> Any:
    """A ``JointModelRevoluteUnboundedUnaligned`` about ``axis``.

    Its Python constructor takes no axis in Pinocchio 4.1, so the joint model is
    taken from a one-joint URDF parsed by Pinocchio itself.
    """
    import pinocchio as pin

    ax = " ".join(repr(float(x)) for x in axis)
    xml = (
        '<robot name="axis"><link name="a"/><link name="b"><inertial><mass value="1"/>'
        '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
        f'<joint name="j" type="continuous"><parent link="a"/><child link="b"/><axis xyz="{ax}"/></joint></robot>'
    )
    return pin.buildModelFromXML(xml).joints[1].extract()


def _pin_joint_model(jt: JointType, axis: npt.ArrayLike, axis2: npt.ArrayLike) -> Any:
    import pinocchio as pin

    axis = np.asarray(axis, dtype=float)
    letter = {(1.0, 0.0, 0.0): "X", (0.0, 1.0, 0.0): "Y", (0.0, 0.0, 1.0): "Z"}.get(tuple(axis))
    if jt == JointType.REVOLUTE:
        return getattr(pin, f"JointModelR{letter}")() if letter else pin.JointModelRevoluteUnaligned(axis)
    if jt == JointType.CONTINUOUS:
        return getattr(pin, f"JointModelRUB{letter}")() if letter else _unbounded_unaligned(axis)
    if jt == JointType.PRISMATIC:
        return getattr(pin, f"JointModelP{letter}")() if letter else pin.JointModelPrismaticUnaligned(axis)
    if jt == JointType.UNIVERSAL:
        return pin.JointModelUniversal(axis, np.asarray(axis2, dtype=float))
    return {
        JointType.SPHERICAL: pin.JointModelSpherical,
        JointType.FREEFLYER: pin.JointModelFreeFlyer,
        JointType.PLANAR: pin.JointModelPlanar,
        JointType.TRANSLATION: pin.JointModelTranslation,
    }[jt]()


def to_pinocchio(model: Model | MimicModel) -> Any:
    """The equivalent ``pinocchio.Model`` (same joint order, q/v layout and parameters).

    Pinocchio 4.1 allocates O(nv^3) memory per ``Data`` (see the README), so
    models beyond a few hundred DOF cannot be evaluated by Pinocchio here.

    A :class:`~denoc_bridge.constraints.mimic.MimicModel` gives Pinocchio's mimic model (as
    ``pin.buildModelFromUrdf(path, mimic=True)``: ``JointModelMimic`` joints made by
    ``pin.transformJointIntoMimic``), which Pinocchio builds only when each mimicked joint
    comes before its mimic joint and the mimic joints have no armature.

    Loop closures are not converted (a ``pinocchio.Model`` is a tree): the result is the
    model's tree.  Each link gets a body frame of its name; other frames are not added.

    Parameters
    ----------
    model : Model or MimicModel

    Returns
    -------
    pinocchio.Model
        Joint ``k + 1`` is link k; q, v, a and tau pass unchanged (reduced ones for a
        MimicModel).

    Raises
    ------
    InputTypeError
        ``model`` is not a denoc_bridge model.
    ModelError
        A MimicModel whose mimic joint comes before its mimicked joint, or has an armature
        (naming the joint).

    Examples
    --------
    >>> import numpy as np
    >>> import pinocchio as pin
    >>> import denoc_bridge as db
    >>> panda = db.load_robot("panda")
    >>> pin_model = db.to_pinocchio(panda)
    >>> q = db.random_configuration(panda, 0)
    >>> M = pin.crba(pin_model, pin_model.createData(), q)
    >>> bool(np.allclose(np.triu(M), np.triu(db.mass_matrix(panda, q)), atol=1e-12))
    True
    """
    _check_model(model)
    import pinocchio as pin

    if isinstance(model, MimicModel):
        pm = to_pinocchio(model.tree)
        for r in model.mimic:
            master, slave = pm.getJointId(r.mimicked), pm.getJointId(r.joint)
            if master > slave:
                raise ModelError(
                    f"mimic joint '{r.joint}' comes before its mimicked joint '{r.mimicked}' in the "
                    "joint order: Pinocchio cannot build this mimic model"
                )
            if np.any(model.tree.armature[pm.joints[slave].idx_v]):
                raise ModelError(f"mimic joint '{r.joint}' has an armature, which Pinocchio's mimic joints drop")
            pm = pin.transformJointIntoMimic(pm, master, slave, float(r.multiplier), float(r.offset))
        return pm

    pm = pin.Model()
    pm.name = model.name
    for k in range(model.n_links):
        jm = _pin_joint_model(JointType(model.joint_type[k]), model.joint_axis[k], model.joint_axis2[k])
        placement = pin.SE3(np.array(model.joint_rotation[k]), np.array(model.joint_translation[k]))
        jid = pm.addJoint(int(model.parent[k]) + 1, jm, placement, model.joint_names[k])
        # set field by field: pin.Inertia(m, c, I) refuses an inertia that is not positive, which
        # load_urdf accepts with a PhysicsWarning, as pin.buildModelFromUrdf does
        Y = pin.Inertia.Zero()
        Y.mass = float(model.mass[k])
        Y.lever = np.array(model.com[k])
        Y.inertia = np.array(model.inertia[k])
        pm.appendBodyToJoint(jid, Y, pin.SE3.Identity())
        pm.addFrame(pin.Frame(model.link_names[k], jid, pin.SE3.Identity(), pin.FrameType.BODY), False)
    pm.armature = np.array(model.armature)
    pm.damping = np.array(model.damping)
    pm.friction = np.array(model.friction)
    pm.lowerPositionLimit = np.array(model.lower_limit)
    pm.upperPositionLimit = np.array(model.upper_limit)
    pm.gravity = pin.Motion(np.array(model.gravity), np.zeros(3))
    for key, q in model.reference_configurations.items():
        pm.referenceConfigurations[key] = np.array(q)
    return pm
