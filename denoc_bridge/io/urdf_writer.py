"""URDF text for the generated robots: the ``<link>`` and ``<joint>`` elements that
:mod:`denoc_bridge.io.generators`, :mod:`denoc_bridge.io.cartpole` and
:mod:`denoc_bridge.io.robots` write, with numbers written as Python's ``repr`` (they load
back to the same doubles)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

__all__ = ["NO_LIMIT", "number", "link_xml", "joint_xml", "rpy"]

#: the position limits of joints that have none (the papers' chains and ropes, the cart's rail):
#: beyond the 1e6 that counts as "no limit" (:func:`denoc_bridge.random_configuration`, the
#: simulation's joint limits; Pinocchio marks none with the largest double), written into their
#: URDFs because URDF's revolute and prismatic joints need a ``<limit>``
NO_LIMIT = 1e9


def number(x: float) -> str:
    """``x`` as URDF text that reads back to the same double."""
    return repr(float(x))


def _triple(x: Sequence[float] | npt.ArrayLike) -> str:
    a = np.asarray(x, dtype=float)
    return f"{number(a[0])} {number(a[1])} {number(a[2])}"


def link_xml(
    name: str,
    mass: float = 0.0,
    com: Sequence[float] | npt.ArrayLike = (0.0, 0.0, 0.0),
    inertia: npt.ArrayLike | None = None,
    visual: str = "",
) -> str:
    """A ``<link>`` element: ``mass`` at ``com`` with the 3 x 3 ``inertia`` about the com (in the
    link frame), then ``visual`` (ready-made ``<visual>`` text); an empty link when massless and
    without inertia."""
    if mass == 0.0 and inertia is None:
        return f'  <link name="{name}"/>\n'
    I = np.zeros((3, 3)) if inertia is None else np.asarray(inertia)
    return (
        f'  <link name="{name}">\n'
        f"    <inertial>\n"
        f'      <origin xyz="{_triple(com)}" rpy="0 0 0"/>\n'
        f'      <mass value="{number(mass)}"/>\n'
        f'      <inertia ixx="{number(I[0, 0])}" ixy="{number(I[0, 1])}" ixz="{number(I[0, 2])}" '
        f'iyy="{number(I[1, 1])}" iyz="{number(I[1, 2])}" izz="{number(I[2, 2])}"/>\n'
        f"    </inertial>\n{visual}"
        f"  </link>\n"
    )


def joint_xml(
    name: str,
    parent: str,
    child: str,
    *,
    kind: str = "revolute",
    xyz: Sequence[float] | npt.ArrayLike = (0.0, 0.0, 0.0),
    rpy: Sequence[float] | npt.ArrayLike = (0.0, 0.0, 0.0),
    axis: Sequence[float] | npt.ArrayLike = (0.0, 0.0, 1.0),
    lower: float = -NO_LIMIT,
    upper: float = NO_LIMIT,
    effort: float = 100.0,
    velocity: float = 100.0,
    damping: float = 0.0,
    mimic: str | None = None,
) -> str:
    """A ``<joint>`` element of type ``kind`` (``revolute``, ``prismatic``, ...) from ``parent``
    to ``child`` at ``xyz``, ``rpy`` about ``axis``, with its ``<limit>``, a ``<dynamics damping>``
    when ``damping`` is not zero, and a ``<mimic>`` of joint ``mimic`` (multiplier 1, offset 0)."""
    dyn = f'    <dynamics damping="{number(damping)}"/>\n' if damping else ""
    mim = f'    <mimic joint="{mimic}" multiplier="1" offset="0"/>\n' if mimic else ""
    return (
        f'  <joint name="{name}" type="{kind}">\n'
        f'    <parent link="{parent}"/>\n'
        f'    <child link="{child}"/>\n'
        f'    <origin xyz="{_triple(xyz)}" rpy="{_triple(rpy)}"/>\n'
        f'    <axis xyz="{_triple(axis)}"/>\n'
        f'    <limit lower="{number(lower)}" upper="{number(upper)}" effort="{effort:g}" velocity="{velocity:g}"/>\n'
        f"{dyn}{mim}"
        f"  </joint>\n"
    )


def rpy(R: npt.ArrayLike) -> tuple[float, float, float]:
    """URDF roll-pitch-yaw (R = Rz(yaw) Ry(pitch) Rx(roll)) of a rotation matrix."""
    from scipy.spatial.transform import Rotation  # scipy.spatial only when a URDF is written

    r, p, y = Rotation.from_matrix(R).as_euler("xyz")
    return float(r), float(p), float(y)
