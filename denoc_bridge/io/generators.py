"""Model generators for the papers' examples: chains of cylinders, the rope, the PUMA 560.

Each generator builds the :class:`~denoc_bridge.multibody.model.Model` directly from arrays
(so that chains of 100,000 links take a second), and has a ``*_urdf`` twin that
writes the same robot as URDF text; ``urdf/rope.urdf`` and ``urdf/puma560.urdf``
are those texts (the tests check that they are up to date and load to the same
dynamics).

* :func:`chain`: ``n`` cylinders along x joined end to end; ``kind="planar"``
  with revolute joints about y (n DOF, motion in the x-z plane), ``kind="spatial"``
  with universal joints (about y, then z, with a massless link between the two
  revolute joints: 2n DOF), as rope models are built (001; 000 §4).
* :func:`rope`: the 2.5 m rope of 000 §4: 50 cylinders of 50 mm, radius 5 mm,
  4 g, universal joints, 100 DOF.
* :func:`puma560`: the 6-DOF PUMA of 003 Table 2 (DH parameters, slender rods,
  hub inertias of the massless wrist links).
* :func:`fourbar`: the closed loop of 004 Fig. 4; :func:`geared_fivebar`: a five-bar whose
  cranks are geared (a mimic joint) carrying a two-finger gripper (a mimic joint), closed at
  its tip (a loop closure).
* :func:`cartpole`: a cart on a rail with one or more poles (the cart-pole, the double
  pendulum on a cart; :mod:`denoc_bridge.io.cartpole`), for control examples.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from denoc_bridge.errors import InputError, PhysicsWarning
from denoc_bridge.io.cartpole import cartpole, cartpole_urdf
from denoc_bridge.io.urdf import load_urdf
from denoc_bridge.io.urdf_writer import NO_LIMIT, joint_xml, link_xml, number, rpy
from denoc_bridge.multibody.constraints import LoopClosure
from denoc_bridge.multibody.joints import JointType
from denoc_bridge.multibody.mimic import MimicModel
from denoc_bridge.multibody.model import Model

__all__ = [
    "chain",
    "chain_urdf",
    "rope",
    "rope_urdf",
    "puma560",
    "puma560_urdf",
    "PUMA560_DH",
    "fourbar",
    "fourbar_urdf",
    "geared_fivebar",
    "geared_fivebar_urdf",
    "GEARED_FIVEBAR_Q",
    "cartpole",
    "cartpole_urdf",
]


def cylinder_inertia(mass: float, length: float, radius: float) -> np.ndarray:
    """Inertia about the centre of a solid cylinder whose axis is x."""
    axial = 0.5 * mass * radius**2
    transverse = mass * (3.0 * radius**2 + length**2) / 12.0
    return np.diag([axial, transverse, transverse])


def _check_chain(n: int, kind: str, length: float, mass: float, radius: float) -> int:
    n = int(n)
    if n < 1:
        raise InputError(f"chain: n must be at least 1, got {n}")
    if kind not in ("planar", "spatial"):
        raise InputError(f"chain: kind must be 'planar' or 'spatial', got {kind!r}")
    for what, x in (("length", length), ("mass", mass), ("radius", radius)):
        if not (np.isfinite(x) and x > 0):
            raise InputError(f"chain: {what} must be a positive number, got {x}")
    return n


def _chain_layout(n: int, kind: str) -> list[tuple[str, str, tuple[float, float, float], bool, bool]]:
    """Per link: (name, joint name, joint type, axis, translation along x, is the cylinder)."""
    width = len(str(n - 1))
    rows: list[tuple[str, str, tuple[float, float, float], bool, bool]] = []
    for k in range(n):
        tag = f"{k:0{width}d}"
        if kind == "planar":
            rows.append((f"link{tag}", f"joint{tag}", (0.0, 1.0, 0.0), k > 0, True))
        else:
            rows.append((f"cross{tag}", f"joint{tag}_y", (0.0, 1.0, 0.0), k > 0, False))
            rows.append((f"link{tag}", f"joint{tag}_z", (0.0, 0.0, 1.0), False, True))
    return rows


def chain(
    n: int,
    kind: str = "planar",
    *,
    length: float = 0.05,
    mass: float = 0.004,
    radius: float = 0.005,
    damping: float = 0.0,
    stiffness: float = 0.0,
    name: str | None = None,
) -> Model:
    """A chain of ``n`` cylinders (see the module docstring), fixed at the base.

    At q = 0 the chain lies along +x (horizontal under the default gravity -z), joint 0
    at the base origin, each next joint at the end of the previous cylinder.  ``damping``
    and ``stiffness`` set every joint's damper and spring (relaxed at q = 0).
    DOF: n (planar) or 2n (spatial).
    """
    n = _check_chain(n, kind, length, mass, radius)
    layout = _chain_layout(n, kind)
    L = len(layout)
    is_body = np.array([row[4] for row in layout])
    moves = np.array([row[3] for row in layout])
    translation = np.zeros((L, 3))
    translation[moves, 0] = length
    com = np.zeros((L, 3))
    com[is_body, 0] = length / 2
    inertia = np.zeros((L, 3, 3))
    inertia[is_body] = cylinder_inertia(mass, length, radius)
    nv = L
    return Model(
        name=name or f"{kind}_chain{n}",
        link_names=[row[0] for row in layout],
        joint_names=[row[1] for row in layout],
        parent=np.arange(L) - 1,
        joint_type=np.full(L, int(JointType.REVOLUTE)),
        joint_axis=np.array([row[2] for row in layout]),
        joint_rotation=np.broadcast_to(np.eye(3), (L, 3, 3)),
        joint_translation=translation,
        mass=np.where(is_body, mass, 0.0),
        com=com,
        inertia=inertia,
        damping=np.full(nv, float(damping)),
        stiffness=np.full(nv, float(stiffness)),
        lower_limit=np.full(nv, -NO_LIMIT),
        upper_limit=np.full(nv, NO_LIMIT),
        base_name="base",
        source="denoc_bridge.generators.chain",
    )


def chain_urdf(
    n: int,
    kind: str = "planar",
    *,
    length: float = 0.05,
    mass: float = 0.004,
    radius: float = 0.005,
    damping: float = 0.0,
    name: str | None = None,
    comment: str = "",
) -> str:
    """URDF text of :func:`chain` (joint springs have no URDF element: use ``Model.replace``)."""
    n = _check_chain(n, kind, length, mass, radius)
    name = name or f"{kind}_chain{n}"
    visual = (
        f"    <visual>\n"
        f'      <origin xyz="{number(length / 2)} 0 0" rpy="0 1.5707963267948966 0"/>\n'
        f'      <geometry><cylinder radius="{number(radius)}" length="{number(length)}"/></geometry>\n'
        f"    </visual>\n"
    )
    parts = ['<?xml version="1.0"?>\n']
    if comment:
        parts.append(f"<!-- {comment}\n     Generated by denoc_bridge.generators; do not edit by hand. -->\n")
    parts += [f'<robot name="{name}">\n', '  <link name="base"/>\n']
    parent = "base"
    for link, joint, axis, moves, body in _chain_layout(n, kind):
        if body:
            parts.append(link_xml(link, mass, (length / 2, 0.0, 0.0), cylinder_inertia(mass, length, radius), visual))
        else:
            parts.append(link_xml(link))
        parts.append(
            joint_xml(joint, parent, link, xyz=(length if moves else 0.0, 0.0, 0.0), axis=axis, damping=damping)
        )
        parent = link
    parts.append("</robot>\n")
    return "".join(parts)


_ROPE: dict[str, Any] = dict(n=50, kind="spatial", length=0.05, mass=0.004, radius=0.005)


def rope(**changes: Any) -> Model:
    """The rope of 000 §4: 50 cylinders, 50 mm long, 5 mm radius, 4 g each, joined by universal
    joints (two revolute joints with a massless link between them): 100 DOF, 2.5 m.  At q = 0 it
    lies horizontally along +x, pinned at the base end.  Keyword arguments change
    :func:`chain`'s parameters (e.g. ``damping``)."""
    args = {**_ROPE, "name": "rope", **changes}
    return chain(args.pop("n"), args.pop("kind"), **args)


def rope_urdf() -> str:
    """URDF text of :func:`rope` (``urdf/rope.urdf``)."""
    return chain_urdf(
        **_ROPE,
        name="rope",
        comment="The 100-DOF rope of Shah, Saha, Dutt (000 §4): 50 cylinders "
        "of 50 mm, radius 5 mm, 4 g,\n     joined by universal joints (revolute y, massless link, "
        "revolute z).",
    )


#: 003 Table 2: (a_i, b_i, alpha_i, m_i, I_zz of the hub) for i = 1..6 (theta_i variable)
PUMA560_DH = (
    (0.0, 0.20, -np.pi / 2, 10.521, 0.0),
    (0.432, 0.149, 0.0, 15.7612, 0.0),
    (0.02, 0.0, np.pi / 2, 8.767, 0.0),
    (0.0, 0.432, -np.pi / 2, 0.0, 0.181),
    (0.0, 0.0, np.pi / 2, 0.0, 0.0735),
    (0.0, 0.056, 0.0, 0.0, 0.0141),
)


def _rod_link(a: float, b: float, m: float, hub: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(mass, com, inertia about the com) of link i in its frame F_i (z = joint axis i, x along
    the common normal X_{i+1}): slender rods from the origin along b (z) then along a (x),
    mass per length m / (a + b) (003 §4.1), plus the hub inertia diag(0, 0, I_zz) about z."""
    if m > 0:
        rho = m / (a + b)
        mb, ma = rho * b, rho * a
        cb, ca = np.array([0.0, 0.0, b / 2]), np.array([a / 2, 0.0, b])
        com = (mb * cb + ma * ca) / m
        Ib = np.diag([mb * b**2 / 12, mb * b**2 / 12, 0.0])
        Ia = np.diag([0.0, ma * a**2 / 12, ma * a**2 / 12])
        inertia = np.zeros((3, 3))
        for mi, ci, Ii in ((mb, cb, Ib), (ma, ca, Ia)):
            d = ci - com
            inertia += Ii + mi * (np.dot(d, d) * np.eye(3) - np.outer(d, d))
    else:
        com, inertia = np.zeros(3), np.zeros((3, 3))
    inertia = inertia + np.diag([0.0, 0.0, hub])
    return m, com, inertia


def _rx(alpha: float) -> np.ndarray:
    c, s = np.cos(alpha), np.sin(alpha)
    return np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])


def puma560(**changes: Any) -> Model:
    """The 6R PUMA 560 of 003 Table 2 (with the hub inertias of its massless wrist links).

    Link i's frame has z along joint i and x along the common normal to joint i + 1 (DH);
    joint i + 1 sits at (a_i, 0, b_i) in it, turned by alpha_i about x.  Joint 1's axis is
    the base z axis.  The wrist links have only a hub inertia about their joint axis, which
    no rigid body has (it breaks the triangle inequality): the model records that in
    ``model.warnings`` instead of warning.  Keyword arguments go to ``Model.replace``.
    """
    names = [f"joint{i + 1}" for i in range(6)]
    mass, com, inertia, rot, trans = [], [], [], [np.eye(3)], [np.zeros(3)]
    for a, b, alpha, m, hub in PUMA560_DH:
        mi, ci, Ii = _rod_link(a, b, m, hub)
        mass.append(mi)
        com.append(ci)
        inertia.append(Ii)
        rot.append(_rx(alpha))
        trans.append(np.array([a, 0.0, b]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhysicsWarning)
        model = Model(
            name="puma560",
            link_names=[f"link{i + 1}" for i in range(6)],
            joint_names=names,
            parent=np.arange(6) - 1,
            joint_type=np.full(6, int(JointType.REVOLUTE)),
            joint_axis=np.tile([0.0, 0.0, 1.0], (6, 1)),
            joint_rotation=rot[:6],
            joint_translation=trans[:6],
            mass=mass,
            com=com,
            inertia=inertia,
            base_name="base",
            inertia_check="warn",
            lower_limit=np.full(6, -2 * np.pi),
            upper_limit=np.full(6, 2 * np.pi),
            source="denoc_bridge.generators.puma560 (003 Table 2)",
        )
        return model.replace(**changes) if changes else model


def puma560_urdf() -> str:
    """URDF text of :func:`puma560` (``urdf/puma560.urdf``)."""
    parts = [
        '<?xml version="1.0"?>\n',
        "<!-- 6R PUMA 560 of Mohan and Saha (003 Table 2): DH parameters, slender-rod links with mass per\n"
        "     length m / (a + b), massless wrist links with hub inertias about their joint axes.\n"
        "     Generated by denoc_bridge.generators.puma560_urdf(); do not edit by hand. -->\n",
        '<robot name="puma560">\n',
        '  <link name="base"/>\n',
    ]
    parent, xyz, rpy = "base", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)
    for i, (a, b, alpha, m, hub) in enumerate(PUMA560_DH):
        mi, ci, Ii = _rod_link(a, b, m, hub)
        parts.append(link_xml(f"link{i + 1}", mi, ci, Ii))
        parts.append(
            joint_xml(f"joint{i + 1}", parent, f"link{i + 1}", xyz=xyz, rpy=rpy, lower=-2 * np.pi, upper=2 * np.pi)
        )
        parent, xyz, rpy = f"link{i + 1}", (a, 0.0, b), (alpha, 0.0, 0.0)
    parts.append("</robot>\n")
    return "".join(parts)


def _rz(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


#: 004 Fig. 4 reconstructed from its numbers (eq. (a)): joint axes along (1, -1, 0)/sqrt(2),
#: the loop's plane spanned by e1 = (1, 1, 0)/sqrt(2) and e2 = z; ground bar sqrt(2), crank and
#: rocker 2, coupler sqrt(2) (a parallelogram), the crank along e2 at q = 0.
FOURBAR_PLANE = np.array([[1.0, 0.0, 1.0], [1.0, 0.0, -1.0], [0.0, np.sqrt(2.0), 0.0]]) / np.sqrt(2.0)


def fourbar(
    *,
    ground: float = np.sqrt(2.0),
    crank: float = 2.0,
    density: float = 1.0,
    radius: float = 0.02,
    damping: float = 0.0,
) -> Model:
    """The closed-loop example of 004 (Fig. 4): body 1 slides on the ground (prismatic joint
    T1 along e1), bodies 2, 3, 4 close a four-bar with body 1 through the parallel revolute
    joints R2, R3, R4 and the cut joint R5 (between bodies 4 and 1).

    The paper's figure is missing from its text; its numbers fix the geometry: with the
    joint axes along u = (1, -1, 0)/sqrt(2) and the mechanism in the plane of e1 = (1, 1,
    0)/sqrt(2) and e2 = z, the columns of D*B at q = 0 are exactly eq. (a) when the ground
    bar (R2 to R5) is sqrt(2) long along e1, the crank (R2 to R3) 2 long along e2, the
    coupler sqrt(2) and the rocker 2: a parallelogram, so that the loop keeps theta_3 =
    -theta_2 and theta_4 = theta_2 (E of 004, with theta_2 independent).  Bars are solid
    cylinders of ``density`` kg per metre and ``radius``; gravity -z lies in the plane.
    """
    a, b = float(ground), float(crank)
    if not (a > 0 and b > 0 and density > 0 and radius > 0):
        raise InputError("fourbar: lengths, density and radius must be positive")
    lengths = [a, b, a, b]
    names = ["body1", "body2", "body3", "body4"]
    rot = [FOURBAR_PLANE, _rz(np.pi / 2), _rz(-np.pi / 2), _rz(-np.pi / 2)]
    trans = [np.zeros(3), np.zeros(3), np.array([b, 0.0, 0.0]), np.array([a, 0.0, 0.0])]
    mass = [density * length for length in lengths]
    model = Model(
        name="fourbar",
        link_names=names,
        joint_names=["T1", "R2", "R3", "R4"],
        parent=[-1, 0, 1, 2],
        joint_type=[int(JointType.PRISMATIC)] + [int(JointType.REVOLUTE)] * 3,
        joint_axis=[[1.0, 0.0, 0.0]] + [[0.0, 0.0, 1.0]] * 3,
        joint_rotation=rot,
        joint_translation=trans,
        mass=mass,
        com=[[length / 2, 0.0, 0.0] for length in lengths],
        inertia=[cylinder_inertia(m, length, radius) for m, length in zip(mass, lengths)],
        damping=np.full(4, float(damping)),
        base_name="ground",
        source="denoc_bridge.generators.fourbar",
    )
    model.add_loop_closure(
        "R5", "revolute", "body4", "body1", xyz1=(b, 0.0, 0.0), xyz2=(a, 0.0, 0.0), rotation2=_rz(-np.pi / 2)
    )
    return model


def fourbar_urdf() -> str:
    """URDF text of :func:`fourbar` (``urdf/fourbar.urdf``), with its cut joint R5 as a
    ``<loop_joint>`` element."""
    model = fourbar()
    parts = [
        '<?xml version="1.0"?>\n',
        "<!-- The closed-loop example of Nikravesh et al. (004 Fig. 4): a prismatic base T1 and a\n"
        "     parallelogram four-bar R2-R3-R4, cut at the revolute joint R5 (<loop_joint>, a\n"
        "     denoc_bridge extension that other URDF readers ignore).\n"
        "     Generated by denoc_bridge.generators; do not edit by hand. -->\n",
        '<robot name="fourbar">\n',
        '  <link name="ground"/>\n',
    ]
    for k in range(model.n_links):
        parts.append(link_xml(model.link_names[k], model.mass[k], model.com[k], model.inertia[k]))
        parent = "ground" if model.parent[k] < 0 else model.link_names[model.parent[k]]
        kind = "prismatic" if model.joint_type[k] == int(JointType.PRISMATIC) else "revolute"
        parts.append(
            joint_xml(
                model.joint_names[k],
                parent,
                model.link_names[k],
                kind=kind,
                xyz=model.joint_translation[k],
                rpy=rpy(model.joint_rotation[k]),
                axis=model.joint_axis[k],
                lower=-10.0,
                upper=10.0,
                velocity=10.0,
            )
        )
    for lc in model.loops:
        assert isinstance(lc, LoopClosure)  # the four-bar's one cut joint
        sides = []
        for i, (link, R, p) in enumerate(
            ((lc.link1, lc.rotation1, lc.translation1), (lc.link2, lc.rotation2, lc.translation2)), start=1
        ):
            r = rpy(R)
            sides.append(
                f'    <link{i} link="{model.link_names[link]}" xyz="{number(p[0])} {number(p[1])} {number(p[2])}" '
                f'rpy="{number(r[0])} {number(r[1])} {number(r[2])}"/>\n'
            )
        a = lc.axis
        parts.append(
            f'  <loop_joint name="{lc.name}" type="{lc.type}">\n'
            + "".join(sides)
            + f'    <axis xyz="{number(a[0])} {number(a[1])} {number(a[2])}"/>\n  </loop_joint>\n'
        )
    parts.append("</robot>\n")
    return "".join(parts)


def geared_fivebar_urdf(
    *,
    half_base: float = 0.2,
    crank: float = 0.3,
    distal: float = 0.35,
    density: float = 2.0,
    radius: float = 0.015,
    finger_mass: float = 0.05,
) -> str:
    """URDF text of a geared five-bar with a parallel gripper: a closed loop and mimic joints together.

    Two cranks pivot on the ground at x = -/+ ``half_base`` (joints ``crank_left``,
    ``crank_right`` about y; the mechanism moves in the x-z plane, gravity -z); a distal link on
    each (``elbow_left``, ``elbow_right``); the distal links meet at the tip, the cut joint
    ``tip`` (a revolute ``<loop_joint>``).  The cranks are geared together: ``crank_right``
    mimics ``crank_left`` (multiplier 1; the right side's frames are the mirror image of the
    left's, so the mechanism stays symmetric in its cranks).  On the left distal link, at the
    tip, a two-finger gripper: ``finger_left`` slides along the link's z, ``finger_right``
    mimics it (multiplier 1, opposite axis: the jaws open and close together).

    Reduced coordinates: crank_left, elbow_left, finger_left, elbow_right (nv = 4); the loop
    removes 2 (planar revolute cut: 5 rows, rank 2), leaving 2 degrees of freedom.  A closed,
    non-singular configuration: ``q = (-0.3, 1.269, 0, 1.269)`` closed by
    ``db.loops.project_configuration`` (distal links 111 degrees apart; :func:`geared_fivebar`).
    """
    d, a, b = float(half_base), float(crank), float(distal)
    if not all(x > 0 for x in (d, a, b, density, radius, finger_mass)):
        raise InputError("geared_fivebar: lengths, density, radius and finger mass must be positive")
    ma, mb = density * a, density * b
    f = 0.02  # finger: a 2 x 2 x 4 cm block
    If = finger_mass * np.diag([2 * f * f + 4 * f * f, 2 * f * f + 4 * f * f, 2 * f * f]) / 12.0

    up = (0.0, -np.pi / 2, 0.0)  # the crank's x along +z at q = 0
    arm: dict[str, Any] = dict(kind="revolute", lower=-3.0, upper=3.0, velocity=10.0)
    jaw: dict[str, Any] = dict(kind="prismatic", lower=-0.05, upper=0.05, velocity=10.0)
    parts = [
        '<?xml version="1.0"?>\n',
        "<!-- A geared five-bar with a parallel gripper: a loop closure (<loop_joint>, a denoc_bridge\n"
        "     extension) and mimic joints together. Generated by denoc_bridge.generators. -->\n",
        '<robot name="geared_fivebar">\n',
        '  <link name="base"/>\n',
        link_xml("crank_left_link", ma, (a / 2, 0, 0), cylinder_inertia(ma, a, radius)),
        link_xml("distal_left_link", mb, (b / 2, 0, 0), cylinder_inertia(mb, b, radius)),
        link_xml("finger_left_link", finger_mass, (0, 0, 0), If),
        link_xml("finger_right_link", finger_mass, (0, 0, 0), If),
        link_xml("crank_right_link", ma, (a / 2, 0, 0), cylinder_inertia(ma, a, radius)),
        link_xml("distal_right_link", mb, (b / 2, 0, 0), cylinder_inertia(mb, b, radius)),
        joint_xml("crank_left", "base", "crank_left_link", xyz=(-d, 0, 0), rpy=up, axis=(0, 1, 0), **arm),
        joint_xml("elbow_left", "crank_left_link", "distal_left_link", xyz=(a, 0, 0), axis=(0, 1, 0), **arm),
        joint_xml("finger_left", "distal_left_link", "finger_left_link", xyz=(b, f, 0), axis=(0, 0, 1), **jaw),
        joint_xml(
            "finger_right",
            "distal_left_link",
            "finger_right_link",
            xyz=(b, -f, 0),
            axis=(0, 0, -1),
            mimic="finger_left",
            **jaw,
        ),
        joint_xml(
            "crank_right", "base", "crank_right_link", xyz=(d, 0, 0), rpy=up, axis=(0, -1, 0), mimic="crank_left", **arm
        ),
        joint_xml("elbow_right", "crank_right_link", "distal_right_link", xyz=(a, 0, 0), axis=(0, -1, 0), **arm),
        '  <loop_joint name="tip" type="revolute">\n'
        f'    <link1 link="distal_left_link" xyz="{number(b)} 0 0" rpy="0 0 0"/>\n'
        f'    <link2 link="distal_right_link" xyz="{number(b)} 0 0" rpy="0 0 0"/>\n'
        '    <axis xyz="0 1 0"/>\n  </loop_joint>\n',
        "</robot>\n",
    ]
    return "".join(parts)


#: a configuration near which :func:`geared_fivebar` closes (reduced layout, see its URDF's docstring)
GEARED_FIVEBAR_Q = np.array([-0.3, 1.269, 0.0, 1.269])


def geared_fivebar(**changes: float) -> MimicModel:
    """The :func:`geared_fivebar_urdf` robot as a :class:`~denoc_bridge.MimicModel` (mimic joints as
    constraints, the tip as a loop closure): ``load_urdf(geared_fivebar_urdf(...), mimic=True)``."""
    return load_urdf(geared_fivebar_urdf(**changes), mimic=True)
